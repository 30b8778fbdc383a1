/* summary.js - a part of the dashboard's script: the document shown
 * (profiles, ranks, the server's rank) and the Summary tab: figures, GPU
 * and launch tables, the ranks' heat map and table. tools/viewer_js.sh
 * joins the parts, in the Makefile's order (VIEWER_JS), into one app.js
 * inside one function scope, so that each uses the others' names. */
  /* ---------- the document being shown ---------- */
  let doc = null;          /* {reports:[...], compare, server} */
  let serverMode = false;
  /* A job's rank other than the one the job's view describes (?rank=N):
   * served by prof view DIR, whose server builds its view when asked. */
  const pageRank = (() => {
    const r = new URLSearchParams(location.search).get('rank');
    return r !== null && /^[0-9]{1,10}$/.test(r) ? r : null;
  })();
  function rankQuery() { return serverMode && pageRank !== null ? '&rank=' + pageRank : ''; }
  /* Where a click on rank r goes: the page with that rank in full. */
  function rankHref(r) { return '?rank=' + encodeURIComponent(String(r)); }
  const rendered = {};
  let currentTab = null;

  /* The profile a report describes: of several ranks, the one marked so. */
  function describedProfile(rep) {
    const d = (rep.ranks || []).find((k) => k.described);
    return rep.profiles && ((d && rep.profiles.find((q) => q.rank === d.rank)) || rep.profiles[0]);
  }
  function profileLabel(rep, i) {
    const p = describedProfile(rep);
    const path = p && p.path ? p.path : 'profile ' + (i + 1);
    return rep.profiles && rep.profiles.length > 1 ? path + ' (+' + (rep.profiles.length - 1) + ' ranks)' : path;
  }

  /* Runs fn(column, report, index) once per profile, side by side when two. */
  function perProfile(panel, fn) {
    if (doc.reports.length === 1) { fn(panel, doc.reports[0], 0); return; }
    const row = h('div', { class: 'cols' });
    panel.appendChild(row);
    doc.reports.forEach((rep, i) => {
      const col = h('div', { class: 'col', 'data-profile': i });
      col.appendChild(h('h2', { class: 'col-head', text: (i === 0 ? 'A: ' : 'B: ') + profileLabel(rep, i) }));
      row.appendChild(col);
      fn(col, rep, i);
    });
  }

  function figure(label, value, raw, field, cls) {
    return h('div', { class: 'figure' + (cls ? ' ' + cls : ''), 'data-field': field, 'data-raw': raw },
      h('div', { class: 'label', text: label }), h('div', { class: 'value', text: value }));
  }

  /* ---------- Summary ---------- */
  function renderSummary(panel) {
    perProfile(panel, (col, rep) => {
      const sm = rep.summary || {};
      const st = sm.step_time || {};
      col.appendChild(h('div', { class: 'figures' },
        figure('Steps', fmtNum(sm.steps), sm.steps, 'summary.steps'),
        figure('Wall time', fmtNs(sm.wall_ns), sm.wall_ns, 'summary.wall_ns'),
        figure('Profiled (all threads)', fmtNs(sm.profiled_ns), sm.profiled_ns, 'summary.profiled_ns'),
        figure('Mean step', fmtNs(st.mean_ns), st.mean_ns, 'summary.step_time.mean_ns'),
        figure('Median step', fmtNs(st.p50_ns), st.p50_ns, 'summary.step_time.p50_ns'),
        figure('p95 step', fmtNs(st.p95_ns), st.p95_ns, 'summary.step_time.p95_ns'),
        figure('Events', fmtNum(sm.events), sm.events, 'summary.events'),
        figure('Threads', fmtNum(sm.threads), sm.threads, 'summary.threads'),
        figure('Dropped events', fmtNum(sm.dropped_events), sm.dropped_events, 'summary.dropped_events'),
        figure('GPU data', sm.has_gpu ? 'yes' : 'none', sm.has_gpu ? 1 : 0, 'summary.has_gpu')));
      const counts = { high: 0, medium: 0, low: 0 };
      for (const b of rep.bottlenecks || []) if (b.severity in counts) counts[b.severity]++;
      col.appendChild(h('h2', { text: 'Bottlenecks by severity' }));
      col.appendChild(h('div', { class: 'figures' }, SEVERITIES.map((sv) =>
        figure(sv[0].toUpperCase() + sv.slice(1), String(counts[sv]), counts[sv], 'bottlenecks.' + sv, 'sev-' + sv))));
      const sevCard = h('div', { class: 'card' });
      col.appendChild(sevCard);
      barChart(sevCard, SEVERITIES.map((sv) => ({ label: sv, value: counts[sv], color: SEV_COLOR[sv],
        tip: [sv, [counts[sv] + ' finding' + (counts[sv] === 1 ? '' : 's')]] })),
      { kind: 'num', xLabel: 'findings', fmt: (v) => String(v), title: 'Bottlenecks by severity', integer: true });
      col.appendChild(h('h2', { text: 'Self time by kind' }));
      kindBar(col, sm);
      if ((sm.memory || []).length) {
        col.appendChild(h('h2', { text: 'Memory' }));
        const t = h('table', { class: 'data' }, h('thead', null, h('tr', null,
          h('th', { text: 'Series' }), h('th', { text: 'Peak' }), h('th', { text: 'Final' }), h('th', { text: 'Peak at' }))));
        const tb = h('tbody');
        for (const m of sm.memory) tb.appendChild(h('tr', null, h('td', { text: m.series }),
          h('td', { text: fmtBytes(m.peak_bytes), 'data-raw': m.peak_bytes }), h('td', { text: fmtBytes(m.final_bytes) }),
          h('td', { text: fmtNs(m.peak_t_ns) })));
        t.appendChild(tb);
        col.appendChild(h('div', { class: 'table-wrap' }, t));
      }
      if ((sm.gpu || []).length) {
        col.appendChild(h('h2', { text: 'GPUs' }));
        col.appendChild(objectTable(sm.gpu));
        const hta = sm.gpu.filter((g) => g.hta && g.hta.window_ns > 0);
        if (hta.length) {
          col.appendChild(h('h2', { text: 'GPU time as HTA counts it' }));
          col.appendChild(htaTable(hta));
        }
      }
      if (sm.launches) {
        col.appendChild(h('h2', { text: 'Kernel launches' }));
        launchSummary(col, sm.launches);
      }
      if (sm.sync) {
        col.appendChild(h('h2', { text: 'CPU waiting on the GPU' }));
        col.appendChild(kvList(sm.sync));
      }
      if ((rep.ranks || []).length) {
        col.appendChild(h('h2', { text: 'Ranks' }));
        if (serverMode) {
          const d = rep.ranks.find((k) => k.described);
          col.appendChild(h('p', { class: 'chart-caption', 'data-section': 'rank-nav' },
            'Showing rank ' + (d ? d.rank : '?') + ' in full. Click a rank to show it instead' +
            (pageRank !== null ? '; ' : '.'),
            pageRank !== null ? h('a', { href: '/', text: 'back to the rank that holds the job back' }) : null));
        }
        col.appendChild(ranksTable(rep.ranks));
      }
      if (rep.rank_steps && (rep.rank_steps.ranks || []).length) {
        col.appendChild(h('h2', { text: 'Step time by rank' }));
        rankHeatMap(col, rep.rank_steps, 'mean_ns');
        if (rep.rank_steps.ranks.some((r) => Array.isArray(r.gpu_idle_share))) {
          col.appendChild(h('h2', { text: 'GPU idle time by rank' }));
          rankHeatMap(col, rep.rank_steps, 'gpu_idle_share');
        }
      }
      if ((rep.notes || []).length) {
        col.appendChild(h('h2', { text: 'Notes' }));
        col.appendChild(h('ul', { class: 'notes' }, rep.notes.map((n) => h('li', { text: n }))));
      }
      const p = describedProfile(rep);
      if (p && p.metadata) {
        col.appendChild(h('h2', { text: 'Recording' }));
        const md = p.metadata;
        const items = { path: p.path, host: md.host, pid: md.pid === undefined ? undefined : String(md.pid), command: Array.isArray(md.argv) ? md.argv.join(' ') : md.argv,
          rank: p.rank, world_size: p.world_size, format_version: p.format_version,
          closed_cleanly: p.clean ? 'yes' : 'no', libprof_version: md.libprof_version };
        if (md.tags && typeof md.tags === 'object') for (const k of Object.keys(md.tags)) items['tag ' + k] = md.tags[k];
        col.appendChild(kvList(items));
      }
    });
  }
  function kvList(obj) {
    const dl = h('dl', { class: 'kv card' });
    for (const k of Object.keys(obj)) {
      if (obj[k] === undefined || obj[k] === null) continue;
      dl.appendChild(h('dt', { text: pretty(k) }));
      dl.appendChild(h('dd', { text: fmtField(k, obj[k]) }));
    }
    return dl;
  }
  /* Each device's breakdowns as Holistic Trace Analysis defines them
   * (formats/rules.md 3.1): the temporal breakdown, the overlap of
   * communication and the kernel types, with each cell's raw value. */
  const HTA_COLUMNS = [['window_ns', 'Window'], ['idle_share', 'Idle'], ['compute_share', 'Compute'],
    ['non_compute_share', 'Non-compute'], ['comm_overlap_share', 'Comm. overlapped'], ['left_out', 'Final step left out']];
  function htaTable(gpus) {
    const types = gpus[0].hta.kernel_types.map((k) => k.type);
    const t = h('table', { class: 'data', 'data-table': 'hta' }, h('thead', null, h('tr', null,
      h('th', { text: 'Device' }), HTA_COLUMNS.map((c) => h('th', { text: c[1] })),
      types.map((k) => h('th', { text: k.replace(/ overlapping /g, ' & ') })))));
    const tb = h('tbody');
    for (const g of gpus) {
      const x = g.hta;
      const cell = (field, v, text) => h('td', { 'data-field': field, 'data-raw': v, text });
      tb.appendChild(h('tr', null, h('td', { text: String(g.device) }),
        HTA_COLUMNS.map((c) => cell(c[0], x[c[0]], c[0] !== 'left_out' ? fmtField(c[0], x[c[0]])
          : x.final_step_left_out ? plural(x.left_out, 'record')
            : x.final_step_unknown ? 'no (which records it launched is not known)' : 'no (under two steps)')),
        x.kernel_types.map((k) => cell('kernel_types.' + k.type, k.share, fmtPct(k.share)))));
    }
    t.appendChild(tb);
    return h('div', { class: 'table-wrap' }, t);
  }
  /* How the GPU records were joined to the code that launched them, and the
     kernel launch statistics as HTA's get_cuda_kernel_launch_stats defines
     them (formats/rules.md 3.2), overall and per stream. */
  const LAUNCH_COLUMNS = [['count', 'Launches', fmtNum], ['cpu.mean_ns', 'Launch call mean', fmtNs],
    ['cpu.p95_ns', 'Launch call p95', fmtNs], ['delay.p50_ns', 'Launch delay median', fmtNs], ['delay.p95_ns', 'Launch delay p95', fmtNs],
    ['gpu_time.p50_ns', 'GPU time median', fmtNs], ['cpu_over_cutoff', 'Calls over 50 µs', fmtNum],
    ['delay_over_cutoff', 'Delays over 100 µs', fmtNum]];
  function launchSummary(col, L) {
    const all = L.all || {};
    const cpu = all.cpu || {}, delay = all.delay || {};
    const f = 'summary.launches.';
    col.appendChild(h('div', { class: 'figures', 'data-section': 'launches' },
      figure('Records joined', fmtNum(L.joined) + ' of ' + fmtNum(L.records), L.joined, f + 'joined'),
      figure('GPU time joined', fmtNs(L.joined_ns) + ' of ' + fmtNs(L.ns), L.joined_ns, f + 'joined_ns'),
      figure('Launched outside regions', fmtNs(L.outside_ns), L.outside_ns, f + 'outside_ns'),
      figure('Joined late', L.late ? plural(L.late, 'record') + ', ' + fmtNs(L.late_ns) : 'none', L.late, f + 'late'),
      figure('Short kernels (< 10 µs)', fmtNum(L.short_kernels) + ', ' + fmtNs(L.short_kernel_ns), L.short_kernels, f + 'short_kernels'),
      figure('Kernel launches', fmtNum(all.count), all.count, f + 'all.count'),
      figure('Launch call mean', fmtNs(cpu.mean_ns), cpu.mean_ns, f + 'all.cpu.mean_ns'),
      figure('Launch call p95', fmtNs(cpu.p95_ns), cpu.p95_ns, f + 'all.cpu.p95_ns'),
      figure('Launch delay median', fmtNs(delay.p50_ns), delay.p50_ns, f + 'all.delay.p50_ns'),
      figure('Launch delay p95', fmtNs(delay.p95_ns), delay.p95_ns, f + 'all.delay.p95_ns')));
    const rows = [['all streams', all]].concat((L.streams || []).map((st) => ['GPU ' + st.device + ' stream ' + st.stream, st]));
    const t = h('table', { class: 'data', 'data-table': 'launches' }, h('thead', null, h('tr', null,
      h('th', { text: 'Stream' }), LAUNCH_COLUMNS.map((c) => h('th', { text: c[1] })))));
    const tb = h('tbody');
    for (const r of rows) {
      tb.appendChild(h('tr', null, h('td', { text: r[0] }), LAUNCH_COLUMNS.map((c) => {
        const v = c[0].split('.').reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), r[1]);
        return h('td', { 'data-field': c[0], 'data-raw': typeof v === 'number' ? v : null, text: c[2](v) });
      })));
    }
    t.appendChild(tb);
    col.appendChild(h('div', { class: 'table-wrap' }, t));
    col.appendChild(h('p', { class: 'chart-caption', text: 'Over the records launched by cudaLaunchKernel, cudaLaunchKernelExC, ' +
      'cudaMemcpyAsync or cudaMemsetAsync, as HTA counts them: the launch call\u2019s CPU time, the launch delay (the record\u2019s start ' +
      'minus its call\u2019s end) and the record\u2019s GPU time. Records joined: kernels, copies and memsets matched to the runtime call ' +
      'that launched them; short kernels count every kernel under 10 µs, joined or not.' }));
  }
  /* A rank x step heat map (report rank_steps) of field, mean_ns (step
   * time) or gpu_idle_share (of the devices' time): a row per rank, a
   * column per steps_per_column steps, darker where the value is larger;
   * at most HEAT_CELLS cells, neighbouring columns averaged beyond that. */
  const HEAT_CELLS = 40000;
  function rankHeatMap(container, rs, field) {
    const rows = rs.ranks, ncols = rs.columns;
    const idle = field === 'gpu_idle_share';
    const fmt = idle ? fmtPct : fmtNs;
    const merge = Math.max(1, Math.ceil(rows.length * ncols / HEAT_CELLS));
    const cols = Math.ceil(ncols / merge);
    const cells = rows.map((r) => {
      const out = [];
      for (let c = 0; c < cols; c++) {
        let sum = 0, n = 0;
        const v = r[field] || [];
        for (let k = c * merge; k < Math.min(ncols, (c + 1) * merge); k++)
          if (typeof v[k] === 'number') { sum += v[k]; n++; }
        out.push(n ? sum / n : null);
      }
      return out;
    });
    let lo = Infinity, hi = -Infinity;
    for (const row of cells) for (const v of row) if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    const box = chartBox(container, 0);
    const cellH = Math.max(2, Math.min(18, Math.floor(420 / rows.length)));
    box.h = box.t + box.b + cellH * rows.length;
    const cw = (box.w - box.l - box.r) / cols;
    const root = s('svg', { viewBox: '0 0 ' + box.w + ' ' + box.h, width: box.w, height: box.h, role: 'img',
      'aria-label': idle ? 'GPU idle time by rank' : 'Step time by rank', class: 'heatmap', 'data-field': field });
    const per = rs.steps_per_column * merge;
    const shade = (v) => { /* light yellow to dark red */
      const t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
      const mix = (a, b) => Math.round(a + (b - a) * t);
      return 'rgb(' + mix(255, 165) + ',' + mix(237, 15) + ',' + mix(160, 21) + ')';
    };
    rows.forEach((r, i) => {
      const y = box.t + i * cellH;
      if (rows.length <= 64 || i % Math.ceil(rows.length / 32) === 0)
        root.appendChild(s('text', { x: box.l - 6, y: y + cellH / 2 + 4, 'text-anchor': 'end', class: 'axis' }, 'rank ' + r.rank));
      cells[i].forEach((v, c) => {
        const first = rs.first_step + c * per;
        root.appendChild(s('rect', { x: (box.l + c * cw).toFixed(2), y: y, width: Math.max(0.5, cw).toFixed(2), height: cellH,
          fill: v === null ? '#eee' : shade(v), class: 'heat' + (serverMode ? ' heat-link' : ''), 'data-rank': r.rank, 'data-col': c,
          'data-raw': v === null ? '' : v, onclick: serverMode ? () => { location.search = rankHref(r.rank); } : null },
          s('title', null, 'rank ' + r.rank + ', steps ' + first + '\u2013' + (first + per - 1) + ': ' +
            (v === null ? (idle ? 'no GPU time' : 'no step') : (idle ? 'GPU idle ' + fmt(v) : 'mean ' + fmt(v))) +
            (serverMode ? ' (click: show rank ' + r.rank + ')' : ''))));
      });
    });
    const ax = s('g', { class: 'axis' });
    const yb = box.t + cellH * rows.length;
    for (const c of [0, Math.floor(cols / 2), cols - 1]) {
      ax.appendChild(s('text', { x: box.l + (c + 0.5) * cw, y: yb + 17, 'text-anchor': 'middle' }, String(rs.first_step + c * per)));
    }
    ax.appendChild(s('text', { class: 'axis-label', x: (box.l + box.w - box.r) / 2, y: box.h - 8, 'text-anchor': 'middle' }, 'step'));
    root.appendChild(ax);
    container.appendChild(h('div', { class: 'chart' }, root));
    container.appendChild(h('p', { class: 'chart-caption', text: (idle
      ? 'The share of each rank\u2019s GPU time its devices were idle in its steps, ' : 'Each rank\u2019s mean step time, ') +
      per + ' step' + (per > 1 ? 's' : '') + ' a column; darker is ' + (idle ? 'idler' : 'slower') + ' (' +
      fmt(lo === Infinity ? 0 : lo) + ' to ' + fmt(hi === -Infinity ? 0 : hi) +
      '). ' + (serverMode ? 'Click a rank\u2019s row to show it in full.' : 'prof view DIR --rank N shows rank N in full.') }));
  }

  /* The ranks table; served, each rank a link to its own view. */
  function ranksTable(rows) {
    const wrap = objectTable(rows);
    wrap.querySelector('table').setAttribute('data-table', 'ranks');
    if (!serverMode) return wrap;
    const trs = wrap.querySelectorAll('tbody tr');
    rows.forEach((r, i) => {
      const td = trs[i] && trs[i].firstChild;
      if (!td || typeof r.rank !== 'number') return;
      trs[i].setAttribute('data-rank', r.rank);
      if (r.described) { trs[i].setAttribute('aria-current', 'true'); return; }
      const text = td.textContent;
      td.textContent = '';
      td.appendChild(h('a', { href: rankHref(r.rank), class: 'rank-link', text }));
    });
    return wrap;
  }
  function objectTable(rows) {
    const keys = [];
    for (const r of rows) for (const k of Object.keys(r)) if (keys.indexOf(k) < 0 && typeof r[k] !== 'object') keys.push(k);
    const t = h('table', { class: 'data' }, h('thead', null, h('tr', null, keys.map((k) => h('th', { text: pretty(k) })))));
    const tb = h('tbody');
    for (const r of rows) tb.appendChild(h('tr', null, keys.map((k) => h('td', { text: r[k] === undefined ? '' : fmtField(k, r[k]) }))));
    t.appendChild(tb);
    return h('div', { class: 'table-wrap' }, t);
  }
  function kindBar(col, sm) {
    const kinds = sm.time_by_kind || {};
    const names = Object.keys(kinds);
    const wrap = h('div', { class: 'chart card' });
    col.appendChild(wrap);
    const box = chartBox(wrap);
    const W = box.w - 28, H = 34;
    const root = s('svg', { viewBox: '0 0 ' + W + ' ' + (H + 4), width: W, height: H + 4, role: 'img', 'aria-label': 'Self time by kind' });
    const total = names.reduce((a, k) => a + (kinds[k].self_ns || 0), 0);
    let x0 = 0;
    for (const k of names) {
      const v = kinds[k].self_ns || 0;
      if (!v) continue;
      const w = total ? v / total * W : 0;
      const r = s('rect', { x: x0, y: 2, width: Math.max(1, w), height: H, fill: KIND_COLOR[k] || KIND_COLOR.other, class: 'hoverable',
        'data-kind': k });
      hover(r, () => [k, ['self time: ' + fmtNs(v), 'share: ' + fmtPct(kinds[k].share)]]);
      root.appendChild(r);
      if (w > 60) root.appendChild(s('text', { x: x0 + 6, y: H / 2 + 6, class: 'cell-label light' }, k + ' ' + fmtPct(kinds[k].share)));
      x0 += w;
    }
    if (!total) root.appendChild(s('text', { x: 4, y: H / 2 + 6 }, 'no region time recorded'));
    wrap.appendChild(root);
    wrap.appendChild(legend(names.map((k) => ({ color: KIND_COLOR[k] || KIND_COLOR.other, label: k + ' ' + fmtPct(kinds[k].share) + ' (' + fmtNs(kinds[k].self_ns) + ')' }))));
    paintSwatches(wrap);
  }
