/* charts.js - a part of the dashboard's script: scales, axes, line and bar
 * charts, legends. tools/viewer_js.sh joins the parts, in the Makefile's
 * order (VIEWER_JS), into one app.js inside one function scope, so that
 * each uses the others' names. */
  /* ---------- scales and axes ---------- */
  function linear(d0, d1, r0, r1) {
    const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
    const f = (v) => r0 + (v - d0) * k;
    f.invert = (p) => (k === 0 ? d0 : d0 + (p - r0) / k);
    return f;
  }
  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const m = raw / p;
    return (m >= 5 ? 10 : m >= 2 ? 5 : m >= 1 ? 2 : 1) * p;
  }
  /* Ticks in a unit chosen from the domain (ms, MiB, ...), so labels are short. */
  function axisUnit(kind, max) {
    if (kind === 'ns') return unitFor(max, NS_UNITS);
    if (kind === 'bytes') return unitFor(max, BYTE_UNITS);
    if (kind === 'share') return [0.01, '%'];
    return [1, ''];
  }
  /* minStep 1: whole numbers only (steps, counts), so the step is 1, 2 or 5 times a power of
     ten, never 2.5 (a tick at step 1,009.5 names no step) */
  function ticks(lo, hi, count, unit, minStep) {
    if (!(hi > lo)) { hi = lo + 1; }
    let step = Math.max(minStep || 0, niceStep((hi - lo) / unit, count) * unit);
    if (minStep === 1 && !Number.isInteger(step)) {
      const p = Math.pow(10, Math.floor(Math.log10(step)));
      step = [1, 2, 5, 10].map((k) => k * p).find((v) => v >= step && Number.isInteger(v)) || Math.ceil(step);
    }
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
    return out;
  }
  function tickLabel(v, unit) {
    const x = v / unit[0];
    const a = Math.abs(x);
    return a === 0 ? '0' : a >= 1e6 || a < 1e-3 ? x.toExponential(1) : String(Number(x.toPrecision(6)));
  }
  function niceDomain(lo, hi, includeZero) {
    if (includeZero) lo = Math.min(0, lo);
    if (hi === lo) { hi = lo === 0 ? 1 : lo * 1.1 + (lo < 0 ? 0 : 0); if (hi === lo) hi = lo + 1; }
    const pad = (hi - lo) * 0.04;
    return [includeZero && lo >= 0 ? lo : lo - pad, hi + pad];
  }
  function chartBox(container, height) {
    const w = Math.max(320, Math.floor(container.clientWidth || 600));
    return { w: w, h: height || 280, l: 72, r: 24, t: 16, b: 46 };
  }
  function axes(g, box, x, y, xt, yt, xunit, yunit, xlabel, ylabel) {
    const grid = s('g', { class: 'grid' });
    const ax = s('g', { class: 'axis' });
    for (const v of yt) {
      const py = y(v);
      grid.appendChild(s('line', { x1: box.l, x2: box.w - box.r, y1: py, y2: py }));
      ax.appendChild(s('text', { x: box.l - 6, y: py + 4, 'text-anchor': 'end' }, tickLabel(v, yunit)));
    }
    for (const v of xt) {
      const px = x(v);
      ax.appendChild(s('line', { x1: px, x2: px, y1: box.h - box.b, y2: box.h - box.b + 5 }));
      ax.appendChild(s('text', { x: px, y: box.h - box.b + 17, 'text-anchor': 'middle' }, tickLabel(v, xunit)));
    }
    ax.appendChild(s('line', { x1: box.l, x2: box.w - box.r, y1: box.h - box.b, y2: box.h - box.b }));
    ax.appendChild(s('line', { x1: box.l, x2: box.l, y1: box.t, y2: box.h - box.b }));
    ax.appendChild(s('text', { class: 'axis-label', x: (box.l + box.w - box.r) / 2, y: box.h - 8, 'text-anchor': 'middle' }, xlabel));
    ax.appendChild(s('text', { class: 'axis-label', x: 14, y: (box.t + box.h - box.b) / 2, 'text-anchor': 'middle',
      transform: 'rotate(-90 14 ' + (box.t + box.h - box.b) / 2 + ')' }, ylabel));
    g.appendChild(grid);
    g.appendChild(ax);
  }
  function unitLabel(base, unit) { return unit[1] ? base + ' (' + unit[1] + ')' : base; }

  /* A line chart: opts.series [{name, color, pts:[[x,y]], dash, markers, hidePoints}],
   * opts.hlines [{y, label, color}], opts.marks [{x, y, label, color}],
   * opts.xKind/yKind 'ns'|'bytes'|'num', opts.xLabel/yLabel, opts.fmtX/fmtY. */
  function lineChart(container, opts) {
    const box = chartBox(container, opts.height);
    let xs = [], ys = [];
    for (const se of opts.series) for (const p of se.pts) { xs.push(p[0]); ys.push(p[1]); }
    for (const l of opts.hlines || []) ys.push(l.y);
    for (const m of opts.marks || []) { xs.push(m.x); ys.push(m.y); }
    if (!xs.length) { container.appendChild(h('p', { class: 'empty', text: 'No data points.' })); return null; }
    const xd = [Math.min.apply(null, xs), Math.max.apply(null, xs)];
    if (xd[0] === xd[1]) xd[1] = xd[0] + 1;
    const yd = niceDomain(Math.min.apply(null, ys), Math.max.apply(null, ys), opts.yZero !== false);
    const x = linear(xd[0], xd[1], box.l, box.w - box.r);
    const y = linear(yd[0], yd[1], box.h - box.b, box.t);
    const xunit = axisUnit(opts.xKind, Math.max(Math.abs(xd[0]), Math.abs(xd[1])));
    const yunit = axisUnit(opts.yKind, Math.max(Math.abs(yd[0]), Math.abs(yd[1])));
    const root = s('svg', { viewBox: '0 0 ' + box.w + ' ' + box.h, width: box.w, height: box.h, role: 'img',
      'aria-label': opts.title || opts.yLabel });
    axes(root, box, x, y, ticks(xd[0], xd[1], Math.max(2, Math.floor(box.w / 90)), xunit[0], opts.xInteger ? 1 : 0),
      ticks(yd[0], yd[1], 6, yunit[0]), xunit, yunit, unitLabel(opts.xLabel, xunit), unitLabel(opts.yLabel, yunit));
    for (const l of opts.hlines || []) {
      const py = y(l.y);
      root.appendChild(s('line', { x1: box.l, x2: box.w - box.r, y1: py, y2: py, stroke: l.color, 'stroke-width': 1.5,
        'stroke-dasharray': '6 4' }));
      root.appendChild(s('text', { x: box.w - box.r - 4, y: py - 5, 'text-anchor': 'end' }, l.label));
    }
    for (const se of opts.series.slice().reverse()) { /* the first series on top */
      if (!se.pts.length) continue;
      if (!se.hideLine) {
        const d = se.pts.map((p, i) => (i ? 'L' : 'M') + x(p[0]).toFixed(1) + ' ' + y(p[1]).toFixed(1)).join('');
        root.appendChild(s('path', { d: d, fill: 'none', stroke: se.color, 'stroke-width': se.width || 1.6,
          'stroke-dasharray': se.dash || null, class: 'series' }));
      }
      if (se.markers) for (const p of se.markers)
        root.appendChild(s('circle', { cx: x(p[0]), cy: y(p[1]), r: se.r || 4, fill: se.color, stroke: '#fff', 'stroke-width': 1 }));
    }
    for (const m of opts.marks || []) {
      root.appendChild(s('path', { d: 'M' + (x(m.x) - 7) + ' ' + (y(m.y) - 7) + 'l14 14m0 -14l-14 14', stroke: m.color,
        'stroke-width': 3 }));
      root.appendChild(s('text', { x: x(m.x) - 10, y: y(m.y) + 18, 'text-anchor': 'end' }, m.label));
    }
    /* hover: the nearest x of the first series, every series' value there */
    const guide = s('line', { y1: box.t, y2: box.h - box.b, stroke: '#8a93a3', 'stroke-dasharray': '3 3', visibility: 'hidden' });
    const dot = s('circle', { r: 5, fill: 'none', stroke: '#1d2330', 'stroke-width': 2, visibility: 'hidden' });
    root.appendChild(guide);
    root.appendChild(dot);
    const overlay = s('rect', { x: box.l, y: box.t, width: box.w - box.l - box.r, height: box.h - box.t - box.b,
      fill: 'transparent' });
    root.appendChild(overlay);
    const main = opts.series[0].pts;
    hover(overlay, (ev) => {
      const rect = root.getBoundingClientRect();
      const px = (ev.clientX - rect.left) * box.w / rect.width;
      const xv = x.invert(px);
      const i = nearest(main, xv);
      if (i < 0) return null;
      const p = main[i];
      guide.setAttribute('x1', x(p[0])); guide.setAttribute('x2', x(p[0])); guide.setAttribute('visibility', 'visible');
      dot.setAttribute('cx', x(p[0])); dot.setAttribute('cy', y(p[1])); dot.setAttribute('visibility', 'visible');
      const lines = [];
      for (const se of opts.series) {
        const j = nearest(se.pts, p[0]);
        if (j >= 0 && !se.noTip) lines.push(se.name + ': ' + opts.fmtY(se.pts[j][1]));
      }
      if (opts.extraTip) lines.push.apply(lines, opts.extraTip(i));
      return [opts.fmtX(p[0]), lines];
    });
    overlay.addEventListener('mouseleave', () => { guide.setAttribute('visibility', 'hidden'); dot.setAttribute('visibility', 'hidden'); });
    const wrap = h('div', { class: 'chart' }, root);
    container.appendChild(wrap);
    return wrap;
  }
  function nearest(pts, xv) {
    if (!pts.length) return -1;
    let lo = 0, hi = pts.length - 1;
    while (hi - lo > 1) { const m = (lo + hi) >> 1; if (pts[m][0] < xv) lo = m; else hi = m; }
    return Math.abs(pts[lo][0] - xv) <= Math.abs(pts[hi][0] - xv) ? lo : hi;
  }
  function legend(items) {
    return h('div', { class: 'legend' }, items.map((it) =>
      h('span', null, h('span', { class: 'swatch', 'data-color': it.color }), it.label)));
  }
  function paintSwatches(root) {
    root.querySelectorAll('.swatch[data-color]').forEach((e) => { e.style.background = e.getAttribute('data-color'); });
  }

  /* A horizontal bar chart: rows [{label, value, color, tip:[title, lines]}]. */
  function barChart(container, rows, opts) {
    const box = chartBox(container);
    const labelW = Math.min(260, Math.max(110, Math.floor(box.w * 0.3)));
    const rowH = 22;
    box.l = labelW + 8; box.t = 6; box.b = 40;
    box.h = box.t + box.b + rows.length * rowH;
    const max = Math.max.apply(null, rows.map((r) => r.value).concat([0]));
    const x = linear(0, max > 0 ? max * 1.05 : 1, box.l, box.w - box.r - 60);
    const unit = axisUnit(opts.kind, max);
    const root = s('svg', { viewBox: '0 0 ' + box.w + ' ' + box.h, width: box.w, height: box.h, role: 'img',
      'aria-label': opts.title });
    const tk = ticks(0, max > 0 ? max * 1.05 : 1, Math.max(2, Math.floor((box.w - box.l) / 90)), unit[0], opts.integer ? 1 : 0);
    const ax = s('g', { class: 'axis' }), grid = s('g', { class: 'grid' });
    for (const v of tk) {
      grid.appendChild(s('line', { x1: x(v), x2: x(v), y1: box.t, y2: box.h - box.b }));
      ax.appendChild(s('text', { x: x(v), y: box.h - box.b + 15, 'text-anchor': 'middle' }, tickLabel(v, unit)));
    }
    ax.appendChild(s('text', { class: 'axis-label', x: (box.l + box.w - box.r) / 2, y: box.h - 6, 'text-anchor': 'middle' },
      unitLabel(opts.xLabel, unit)));
    root.appendChild(grid);
    root.appendChild(ax);
    rows.forEach((r, i) => {
      const y0 = box.t + i * rowH;
      const g = s('g', { class: 'bar' });
      g.appendChild(s('text', { x: box.l - 8, y: y0 + 15, 'text-anchor': 'end' }, clip(r.label, labelW)));
      const bar = s('rect', { x: box.l, y: y0 + 3, width: Math.max(1, x(r.value) - box.l), height: rowH - 6, fill: r.color,
        class: 'hoverable', 'data-value': r.value });
      g.appendChild(bar);
      g.appendChild(s('text', { x: x(r.value) + 5, y: y0 + 15 }, opts.fmt(r.value)));
      hover(bar, () => r.tip);
      root.appendChild(g);
    });
    const wrap = h('div', { class: 'chart' }, root);
    container.appendChild(wrap);
    return wrap;
  }
  /* Shortens a label to fit px at about 6.5 px a character. */
  function clip(text, px) {
    const t = String(text);
    const n = Math.floor(px / 6.5);
    return t.length <= n ? t : n <= 1 ? '' : t.slice(0, n - 1) + '…';
  }
