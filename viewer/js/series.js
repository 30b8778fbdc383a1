/* series.js - a part of the dashboard's script: the Operations, Memory and
 * Steps tabs: sortable tables, bar charts, memory series with their leak
 * fits, counters, step times. tools/viewer_js.sh joins the parts, in the
 * Makefile's order (VIEWER_JS), into one app.js inside one function scope,
 * so that each uses the others' names. */
  /* ---------- Operations ---------- */
  const BAR_ROWS = 25;
  const OP_COLUMNS = [
    ['name', 'Operation', String], ['kind', 'Kind', String], ['calls', 'Calls', fmtNum], ['self_ns', 'Self', fmtNs],
    ['incl_ns', 'Inclusive', fmtNs], ['mean_ns', 'Mean', fmtNs], ['p50_ns', 'p50', fmtNs], ['p95_ns', 'p95', fmtNs],
    ['p99_ns', 'p99', fmtNs], ['max_ns', 'Max', fmtNs], ['self_share', 'Self share', fmtPct]];
  /* In profiles with GPU activity each CPU operation carries the GPU time
     launched in it (rules.md §3.2); the kernels' own rows do not. */
  const GPU_COLUMNS = [['gpu_ns', 'GPU total', fmtNs], ['gpu_self_ns', 'GPU self', fmtNs], ['gpu_kernels', 'Kernels', fmtNum]];
  const OP_METRICS = { self_ns: 'self time', incl_ns: 'inclusive time', gpu_ns: 'GPU time launched' };
  function hasGpuTimes(rep) {
    return (rep.operations || []).some((o) => typeof o.gpu_ns === 'number') ||
      (!!rep.call_tree && (rep.call_tree.children || []).some((c) => typeof c.gpu_ns === 'number'));
  }
  function gpuTipLines(o) {
    if (typeof o.gpu_ns !== 'number') return [];
    return ['GPU launched: ' + fmtNs(o.gpu_ns) + ' (self ' + fmtNs(o.gpu_self_ns) + ', ' + plural(o.gpu_kernels || 0, 'kernel') + ')'];
  }
  function renderOperations(panel) {
    const gpu = doc.reports.some(hasGpuTimes);
    let metric = gpu && doc.reports[0].operations_order === 'gpu' ? 'gpu_ns' : 'self_ns';
    const ctl = h('div', { class: 'controls', role: 'group', 'aria-label': 'Bar length' });
    const buttons = [['self_ns', 'Self time'], ['incl_ns', 'Inclusive time']].concat(gpu ? [['gpu_ns', 'GPU time']] : [])
      .map((m) => h('button', { type: 'button', 'aria-pressed': String(metric === m[0]), 'data-metric': m[0], text: m[1] }));
    ctl.appendChild(h('span', { class: 'hint', text: 'Bars show' }));
    buttons.forEach((b) => ctl.appendChild(b));
    panel.appendChild(ctl);
    const body = h('div');
    panel.appendChild(body);
    function draw() {
      clear(body);
      perProfile(body, (col, rep) => {
        const gpuHere = hasGpuTimes(rep);
        const all = (rep.operations || []).slice().sort((a, b) => (b[metric] || 0) - (a[metric] || 0));
        /* by GPU time, only what launched some */
        const ops = (metric === 'gpu_ns' ? all.filter((o) => o.gpu_ns > 0) : all).slice(0, BAR_ROWS);
        col.appendChild(h('h2', { text: 'Top operations by ' + OP_METRICS[metric] }));
        if (!ops.length) {
          col.appendChild(h('p', { class: 'empty', text: metric !== 'gpu_ns' || !(rep.operations || []).length ? 'No operations recorded.'
            : gpuHere ? 'No GPU time was launched in this profile\u2019s operations.' : 'No GPU activity in this profile.' }));
          if (!(rep.operations || []).length) return;
        } else {
          const card = h('div', { class: 'card' });
          col.appendChild(card);
          barChart(card, ops.map((o) => ({ label: o.name, value: o[metric] || 0, color: KIND_COLOR[o.kind] || KIND_COLOR.other,
            tip: [o.name, ['kind: ' + o.kind, 'calls: ' + fmtNum(o.calls), 'self: ' + fmtNs(o.self_ns) + ' (' + fmtPct(o.self_share) + ')',
              'inclusive: ' + fmtNs(o.incl_ns) + ' (' + fmtPct(o.incl_share) + ')', 'mean: ' + fmtNs(o.mean_ns) + ' ± ' + fmtNs(o.stddev_ns),
              'p50 / p95 / p99: ' + fmtNs(o.p50_ns) + ' / ' + fmtNs(o.p95_ns) + ' / ' + fmtNs(o.p99_ns)].concat(gpuTipLines(o))] })),
          { kind: 'ns', xLabel: OP_METRICS[metric], fmt: fmtNs, title: 'Top operations' });
          const kinds = Array.from(new Set(ops.map((o) => o.kind)));
          card.appendChild(legend(kinds.map((k) => ({ color: KIND_COLOR[k] || KIND_COLOR.other, label: k }))));
          paintSwatches(card);
          if (metric === 'gpu_ns')
            card.appendChild(h('p', { class: 'chart-caption', text: 'GPU time (kernels, copies, memsets) launched in each operation\u2019s ' +
              'calls or below them, a call inside a call of itself counted once; the kernels\u2019 own rows are left out.' }));
          if (rep.operations_total > ops.length)
            card.appendChild(h('p', { class: 'chart-caption', text: 'The chart shows the top ' + ops.length + ' of ' +
              rep.operations_total + ' operations; the table below has ' + all.length + '.' }));
        }
        col.appendChild(h('h2', { text: 'Operations' }));
        /* sorted as the bars are; any column's header sorts on it */
        col.appendChild(sortableTable(rep.operations || [], gpuHere ? OP_COLUMNS.concat(GPU_COLUMNS) : OP_COLUMNS,
          metric === 'gpu_ns' && !gpuHere ? 'self_ns' : metric));
        const rest = rep.others && rep.others.operations;
        if (rest) /* the page lists a page's worth; what it leaves out, summed up */
          col.appendChild(h('p', { class: 'chart-caption others', text: 'Not listed: ' + fmtNum(rest.count) +
            ' more operations, with ' + fmtNum(rest.calls) + ' calls and ' + fmtNs(rest.self_ns) +
            ' of self time in all (prof analyze --top 0 --format json lists every one).' }));
      });
    }
    for (const b of buttons) b.addEventListener('click', () => {
      metric = b.getAttribute('data-metric');
      buttons.forEach((x) => x.setAttribute('aria-pressed', String(x.getAttribute('data-metric') === metric)));
      draw();
    });
    draw();
    panel._redraw = draw;
  }
  function sortableTable(rows, columns, initial) {
    let key = initial, dir = rows.length && typeof rows[0][initial] === 'string' ? 1 : -1;
    const t = h('table', { class: 'data sortable' });
    const tr = h('tr');
    const ths = columns.map((c) => {
      const th = h('th', { scope: 'col', 'data-key': c[0], tabindex: 0, text: c[1] });
      const go = () => { if (key === c[0]) dir = -dir; else { key = c[0]; dir = typeof rows[0][c[0]] === 'string' ? 1 : -1; } fill(); };
      th.addEventListener('click', go);
      th.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); go(); } });
      tr.appendChild(th);
      return th;
    });
    t.appendChild(h('thead', null, tr));
    const tb = h('tbody');
    t.appendChild(tb);
    function fill() {
      const sorted = rows.slice().sort((a, b) => {
        const x = a[key], y = b[key];
        if (typeof x === 'string' || typeof y === 'string') return dir * String(x).localeCompare(String(y));
        return dir * ((x || 0) - (y || 0));
      });
      clear(tb);
      for (const r of sorted) tb.appendChild(h('tr', null, columns.map((c) =>
        h('td', { 'data-key': c[0], 'data-raw': typeof r[c[0]] === 'number' ? r[c[0]] : null, text: c[2](r[c[0]]) }))));
      ths.forEach((th) => th.setAttribute('aria-sort', th.getAttribute('data-key') === key ? (dir > 0 ? 'ascending' : 'descending') : 'none'));
    }
    fill();
    return h('div', { class: 'table-wrap' }, t);
  }

  /* ---------- Memory ---------- */
  function renderMemory(panel) {
    /* without a point at a step anywhere (no steps recorded) only time makes an axis */
    const anyStep = doc.reports.some((rep) => (rep.memory || []).some((m) => (m.points || []).some((p) => isFinite(p.step))));
    let byTime = !anyStep;
    const ctl = h('div', { class: 'controls' });
    const bStep = h('button', { type: 'button', 'aria-pressed': String(!byTime), text: 'Over steps' });
    const bTime = h('button', { type: 'button', 'aria-pressed': String(byTime), text: 'Over time' });
    ctl.appendChild(bStep);
    ctl.appendChild(bTime);
    panel.appendChild(ctl);
    const body = h('div');
    panel.appendChild(body);
    function draw() {
      clear(body);
      perProfile(body, (col, rep) => {
        const series = rep.memory || [];
        if (!series.length) col.appendChild(h('p', { class: 'empty', text: 'No memory samples in this profile.' }));
        series.forEach((m, i) => memoryChart(col, m, i, byTime));
        for (const c of rep.counters || []) counterChart(col, c);
      });
    }
    bStep.addEventListener('click', () => { byTime = false; bStep.setAttribute('aria-pressed', 'true'); bTime.setAttribute('aria-pressed', 'false'); draw(); });
    bTime.addEventListener('click', () => { byTime = true; bTime.setAttribute('aria-pressed', 'true'); bStep.setAttribute('aria-pressed', 'false'); draw(); });
    draw();
    panel._redraw = draw;
  }
  /* How far past its last point a memory chart reaches: to the projected out-of-memory point
     when that is near, else a quarter of the data's span, so that the measured curve keeps its
     scale and the projection shows as a marked extension (rules.md §4.2). */
  const PROJECTION_REACH = 0.25;
  function chartEnd(first, last, oom) {
    const reach = last + PROJECTION_REACH * Math.max(last - first, 0);
    return oom !== null && oom !== undefined && oom > last ? Math.min(oom, reach) : last;
  }
  /* The memory_leak fit as a line on the chart's axis (rules.md §4.2): from the onset of
     growth to the chart's end (chartEnd); none when the fit is on the other axis (a per-step
     line has no exact place in time). */
  function fitLine(m, fit, overTime, pts) {
    const n = 40, line = [];
    if (fit.axis === 'time' && overTime) {
      const t0 = fit.onset_t_ns, t1 = chartEnd(pts[0].t_ns, pts[pts.length - 1].t_ns, m.projected_oom_t_ns);
      for (let k = 0; k <= n; k++) { const t = t0 + (t1 - t0) * k / n; line.push([t, fit.intercept_bytes + fit.slope_bytes_per_s * t / 1e9]); }
      return line;
    }
    if (fit.axis === 'time' || overTime) return null;
    const s0 = fit.onset_step !== null && fit.onset_step !== undefined ? fit.onset_step : (fit.warmup_steps || 0);
    const s1 = chartEnd(pts[0].step, pts[pts.length - 1].step, m.projected_oom_step);
    for (let k = 0; k <= n; k++) { const st = s0 + (s1 - s0) * k / n; line.push([st, fit.intercept_bytes + fit.slope_bytes_per_step * st]); }
    return line;
  }
  function fitLabel(fit) {
    const late = fit.axis === 'step' ? fit.onset_step > fit.first_step : fit.onset_t_ns > fit.first_t_ns;
    const from = fit.axis === 'step' ? 'step ' + fmtNum(fit.onset_step) : fmtNs(fit.onset_t_ns);
    return 'least-squares fit from ' + from + (late ? ', where growth starts' : ', after the warm-up');
  }
  function fitCaption(fit) {
    const perS = fit.axis === 'time';
    const slope = perS ? fit.slope_bytes_per_s : fit.slope_bytes_per_step, ci = perS ? fit.ci95_bytes_per_s : fit.ci95_bytes_per_step;
    return 'slope ' + fmtBytes(slope) + (perS ? '/s' : '/step') + ' ± ' + fmtBytes(ci) + ' (95% CI), r² ' + fmtNum(fit.r2) +
      ', p ' + fmtP(fit.p_value) + (fit.axis === 'step' && fit.onset_step > fit.first_step ? ', growing from step ' + fmtNum(fit.onset_step) : '');
  }
  function memoryChart(col, m, idx, byTime) {
    const card = h('div', { class: 'card', 'data-series': m.series });
    col.appendChild(card);
    card.appendChild(h('h2', { text: m.series }));
    /* a point carries a step when it is the series' value at that step; with none (no steps),
       the chart is over time whatever the toggle says */
    const all = m.points || [];
    const overTime = byTime || !all.some((p) => isFinite(p.step));
    const pts = all.filter((p) => overTime ? isFinite(p.t_ns) : isFinite(p.step));
    card.setAttribute('data-axis', overTime ? 'time' : 'step');
    card.setAttribute('data-points', String(pts.length));
    const xOf = (p) => (overTime ? p.t_ns : p.step);
    const data = pts.map((p) => [xOf(p), p.bytes]);
    const series = [{ name: m.series, color: SERIES_COLORS[idx % SERIES_COLORS.length], pts: data, width: 2.5 }];
    const hlines = [], marks = [];
    const fit = m.fit;
    const line = fit && pts.length > 1 ? fitLine(m, fit, overTime, pts) : null;
    if (line) series.push({ name: 'fit', color: '#D55E00', pts: line, dash: '5 4', width: 1.5, noTip: true });
    const hasOom = m.projected_oom_step !== null && m.projected_oom_step !== undefined;
    const hasOomT = m.projected_oom_t_ns !== null && m.projected_oom_t_ns !== undefined;
    const oom = overTime ? (hasOomT ? m.projected_oom_t_ns : null) : (hasOom ? m.projected_oom_step : null);
    const oomText = 'out of memory ≈ ' + (overTime ? fmtNs(oom) : 'step ' + fmtNum(Math.round(oom)));
    /* the projection's end is in the chart when out of memory is near; else the line stops at
       the chart's end with an arrow naming where it leads, and the capacity, far above the
       data, would flatten the series: it goes in the caption only */
    const end = line ? line[line.length - 1] : null;
    const oomInside = oom !== null && end && end[0] >= oom;
    const showCap = m.capacity_bytes && (oomInside || (oom === null && m.capacity_bytes <= 2.5 * (m.peak_bytes || 0)));
    if (showCap) hlines.push({ y: m.capacity_bytes, label: 'capacity ' + fmtBytes(m.capacity_bytes), color: '#b2182b' });
    if (oom !== null && m.capacity_bytes && oomInside)
      marks.push({ x: oom, y: m.capacity_bytes, label: oomText, color: '#b2182b' });
    else if (oom !== null && end)
      marks.push({ x: end[0], y: end[1], label: 'projection → ' + oomText, color: '#b2182b' });
    card.setAttribute('data-projection', oom === null ? 'none' : oomInside ? 'inside' : 'beyond');
    lineChart(card, { series: series, hlines: hlines, marks: marks, xKind: overTime ? 'ns' : 'num', xInteger: !overTime, yKind: 'bytes',
      xLabel: overTime ? 'time since start' : 'step', yLabel: 'memory', yZero: false,
      fmtX: overTime ? (v) => fmtNs(v) : (v) => 'step ' + fmtNum(v), fmtY: fmtBytes, title: m.series,
      extraTip: (i) => (overTime ? (isFinite(pts[i].step) ? ['step ' + pts[i].step] : []) : ['at ' + fmtNs(pts[i].t_ns)]) });
    const items = [{ color: series[0].color, label: m.series }];
    if (line) items.push({ color: '#D55E00', label: fitLabel(fit) });
    if (showCap) items.push({ color: '#b2182b', label: 'capacity' });
    card.appendChild(legend(items));
    paintSwatches(card);
    const cap = ['peak ' + fmtBytes(m.peak_bytes), 'final ' + fmtBytes(m.final_bytes)];
    if (m.capacity_bytes) cap.push('capacity ' + fmtBytes(m.capacity_bytes));
    if (fit) cap.push(fitCaption(fit));
    if (hasOom)
      cap.push('reaches capacity near step ' + fmtNum(Math.round(m.projected_oom_step)) +
        (hasOomT ? ' (' + fmtNs(m.projected_oom_t_ns) + ' after start)' : ''));
    else if (hasOomT)
      cap.push('reaches capacity ' + fmtNs(m.projected_oom_t_ns) + ' after start');
    const slope = fit ? (fit.axis === 'time' ? fit.slope_bytes_per_s : fit.slope_bytes_per_step) : null;
    card.appendChild(h('p', { class: 'chart-caption', 'data-slope': slope, text: cap.join(' · ') }));
    if (m.points_total > all.length)
      card.appendChild(h('p', { class: 'chart-caption thinned', text: thinned(all.length, m.points_total, 'point') +
        ' The fit used all of ' + (fit && fit.axis === 'step' ? 'the steps\u2019 values' : 'them') + '.' }));
  }
  /* the caption of a series the report decimated (prof analyze --points) */
  function thinned(shown, total, what) {
    return 'Showing ' + fmtNum(shown) + ' of ' + plural(total, what) + ': the first, the last, and the lowest and the highest of each run of about ' +
      fmtNum(Math.round(2 * total / Math.max(2, shown))) + '.';
  }
  function counterChart(col, c) {
    const card = h('div', { class: 'card', 'data-counter': c.name });
    col.appendChild(card);
    card.appendChild(h('h2', { text: 'Counter: ' + c.name }));
    lineChart(card, { series: [{ name: c.name, color: '#009E73', pts: (c.points || []).map((p) => [p.t_ns, p.value]) }],
      xKind: 'ns', yKind: 'num', xLabel: 'time since start', yLabel: c.name, yZero: false,
      fmtX: fmtNs, fmtY: fmtNum, title: c.name });
    card.appendChild(h('p', { class: 'chart-caption', text: 'min ' + fmtNum(c.min) + ' · max ' + fmtNum(c.max) + ' · final ' + fmtNum(c.final) }));
    if (c.samples > (c.points || []).length)
      card.appendChild(h('p', { class: 'chart-caption thinned', text: thinned((c.points || []).length, c.samples, 'sample') }));
  }

  /* ---------- Steps ---------- */
  function renderSteps(panel) {
    perProfile(panel, (col, rep) => {
      // The part after the last prof_step is no step (rules.md §1): not drawn.
      const steps = (rep.steps || []).filter((st) => isFinite(st.dur_ns) && !st.incomplete);
      const card = h('div', { class: 'card' });
      col.appendChild(card);
      card.appendChild(h('h2', { text: 'Step time' }));
      if (!steps.length) { card.appendChild(h('p', { class: 'empty', text: 'No steps recorded (the program did not call prof_step).' })); return; }
      const pts = steps.map((st) => [st.number, st.dur_ns]);
      const outl = steps.filter((st) => st.outlier).map((st) => [st.number, st.dur_ns]);
      const tr = trend(pts);
      const series = [{ name: 'step time', color: '#0072B2', pts: pts, markers: outl, r: 5 }];
      series[0].color = '#0072B2';
      const outSeries = { name: 'outlier', color: '#D55E00', pts: outl, hideLine: true, markers: outl, r: 5, noTip: true };
      series.push(outSeries);
      if (tr) series.push({ name: 'trend', color: '#009E73', dash: '6 4', width: 2, noTip: true,
        pts: [[pts[0][0], tr.a + tr.b * pts[0][0]], [pts[pts.length - 1][0], tr.a + tr.b * pts[pts.length - 1][0]]] });
      series[0].markers = null;
      const st = (rep.summary && rep.summary.step_time) || {};
      const hl = [];
      if (st.p95_ns) hl.push({ y: st.p95_ns, label: 'p95 ' + fmtNs(st.p95_ns), color: '#8a93a3' });
      lineChart(card, { series: series, hlines: hl, xKind: 'num', xInteger: true, yKind: 'ns', xLabel: 'step', yLabel: 'step time',
        fmtX: (v) => 'step ' + fmtNum(v), fmtY: fmtNs, title: 'Step time', yZero: true,
        extraTip: (i) => [steps[i].outlier ? 'outlier' : '', steps[i].sampled === false ? 'not sampled' : ''].filter(Boolean) });
      card.appendChild(legend([{ color: '#0072B2', label: 'step time' }, { color: '#D55E00', label: 'outlier (' + outl.length + ')' },
        { color: '#009E73', label: 'least-squares trend' }, { color: '#8a93a3', label: 'p95' }]));
      paintSwatches(card);
      const total = (rep.summary || {}).steps || steps.length;
      if (tr) card.appendChild(h('p', { class: 'chart-caption', 'data-trend': tr.b,
        text: 'trend ' + (tr.b >= 0 ? '+' : '−') + fmtNs(Math.abs(tr.b)) + ' per step over ' + fmtNum(pts.length) +
          (total > steps.length ? ' plotted' : '') + ' steps' }));
      if (total > steps.length)
        card.appendChild(h('p', { class: 'chart-caption thinned', text: thinned(steps.length, total, 'step') }));
      const outFinding = (rep.bottlenecks || []).find((b) => b.rule === 'step_outliers');
      const nOut = total > steps.length ? (outFinding && outFinding.evidence ? outFinding.evidence.count : 0) : outl.length;
      col.appendChild(h('div', { class: 'figures' },
        figure('Mean', fmtNs(st.mean_ns), st.mean_ns, 'summary.step_time.mean_ns'),
        figure('Min', fmtNs(st.min_ns), st.min_ns, 'summary.step_time.min_ns'),
        figure('Max', fmtNs(st.max_ns), st.max_ns, 'summary.step_time.max_ns'),
        figure('Std. dev.', fmtNs(st.stddev_ns), st.stddev_ns, 'summary.step_time.stddev_ns'),
        figure('Outliers', fmtNum(nOut), nOut, 'steps.outliers')));
    });
  }
  function trend(pts) {
    const n = pts.length;
    if (n < 2) return null;
    let sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const p of pts) { sx += p[0]; sy += p[1]; sxx += p[0] * p[0]; sxy += p[0] * p[1]; }
    const d = n * sxx - sx * sx;
    if (!d) return null;
    const b = (n * sxy - sx * sy) / d;
    return { a: (sy - b * sx) / n, b: b };
  }
