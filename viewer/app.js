/* app.js - the prof dashboard: renders the analyze report (and, with two
 * profiles, both reports and their difference) as tabs of SVG charts and
 * tables. Plain JavaScript with no outside code. Every string that comes from
 * a profile is put into the page as a text node (textContent, createTextNode,
 * SVG <text> content), never parsed as HTML. */
'use strict';
(function () {
  const SVGNS = 'http://www.w3.org/2000/svg';
  /* Okabe-Ito: distinguishable with the common colour-vision deficiencies. */
  const KIND_COLOR = {
    compute: '#0072B2', data: '#E69F00', sync: '#D55E00', comm: '#009E73', io: '#CC79A7',
    gpu: '#56B4E9', memcpy: '#F0E442', memset: '#999999', 'gpu comm': '#009E73', thread: '#7f8a9c',
    other: '#999999'
  };
  const SERIES_COLORS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#D55E00', '#56B4E9', '#F0E442', '#000000'];
  const SEVERITIES = ['high', 'medium', 'low'];
  const SEV_COLOR = { high: '#b2182b', medium: '#E69F00', low: '#56B4E9' };

  /* ---------- DOM helpers: text always goes in as text nodes ---------- */
  function h(tag, attrs) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    for (let i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }
  function s(tag, attrs) {
    const e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    for (let i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }
  function setAttrs(e, attrs) {
    if (!attrs) return;
    for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.setAttribute('class', v);
      else if (k === 'text') e.textContent = String(v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, String(v));
    }
  }
  function append(e, c) {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) { c.forEach((x) => append(e, x)); return; }
    e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }

  /* ---------- number formatting (fixed, locale-independent) ---------- */
  function group(n) {
    const neg = n < 0;
    let str = String(Math.round(Math.abs(n)));
    let out = '';
    while (str.length > 3) { out = ',' + str.slice(-3) + out; str = str.slice(0, -3); }
    return (neg ? '-' : '') + str + out;
  }
  function sig(v) {
    const a = Math.abs(v);
    if (a === 0) return '0';
    return v.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2);
  }
  const NS_UNITS = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];
  const BYTE_UNITS = [[1099511627776, 'TiB'], [1073741824, 'GiB'], [1048576, 'MiB'], [1024, 'KiB'], [1, 'B']];
  function unitFor(v, units) {
    const a = Math.abs(v);
    for (const u of units) if (a >= u[0]) return u;
    return units[units.length - 1];
  }
  function fmtNs(ns) {
    if (ns === null || ns === undefined || !isFinite(ns)) return '–';
    const u = unitFor(ns, NS_UNITS);
    return sig(ns / u[0]) + ' ' + u[1];
  }
  function fmtBytes(b) {
    if (b === null || b === undefined || !isFinite(b)) return '–';
    const u = unitFor(b, BYTE_UNITS);
    return u[1] === 'B' ? group(b) + ' B' : sig(b / u[0]) + ' ' + u[1];
  }
  function fmtPct(share) {
    if (share === null || share === undefined || !isFinite(share)) return '–';
    return (share * 100).toFixed(1) + '%';
  }
  function fmtNum(v) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    if (Number.isInteger(v)) return group(v);
    const a = Math.abs(v);
    if (a !== 0 && (a < 0.001 || a >= 1e9)) return v.toExponential(2);
    return String(Number(v.toPrecision(4)));
  }
  /* A field's value by its name's suffix: *_ns, *_bytes, *_share. */
  /* an evidence value as a person reads it: an object (a gap: start_ns, dur_ns) as its fields
     each formatted by its own key, never as JSON */
  /* A band of durations with its count ({min_ns, max_ns, count}, max_ns
   * null for no upper bound), as the sync waits are given. */
  function isBand(v) { return v && typeof v === 'object' && 'min_ns' in v && 'max_ns' in v && 'count' in v; }
  function fmtBand(b) {
    const range = b.max_ns === null ? fmtNs(b.min_ns) + ' or more' : fmtNs(b.min_ns) + ' to ' + fmtNs(b.max_ns);
    return range + ': ' + fmtNum(b.count);
  }
  function fmtField(key, v) {
    if (isBand(v)) return fmtBand(v);
    if (typeof v !== 'number') return Array.isArray(v) ? v.map((x) => fmtField(key, x)).join(v.some((x) => x && typeof x === 'object') ? '; ' : ', ')
      : (v && typeof v === 'object') ? Object.keys(v).map((k) => pretty(k) + ' ' + fmtField(k, v[k])).join(', ') : String(v);
    if (/_ns$/.test(key)) return fmtNs(v);
    if (/bytes_per_step$/.test(key)) return fmtBytes(v) + '/step';
    if (/_bytes$/.test(key)) return fmtBytes(v);
    if (/(_share|^share)$/.test(key)) return fmtPct(v);
    return fmtNum(v);
  }
  function plural(n, word) { return fmtNum(n) + ' ' + word + (n === 1 ? '' : 's'); }
  function pretty(key) { return String(key).replace(/^dur_ns$/, 'duration').replace(/_ns$/, '_time').replace(/_/g, ' '); }

  /* ---------- tooltip ---------- */
  const tooltip = document.getElementById('tooltip');
  function showTip(ev, title, lines) {
    clear(tooltip);
    tooltip.appendChild(h('div', { class: 'tt-title', text: title }));
    for (const l of lines) tooltip.appendChild(h('div', { text: l }));
    tooltip.hidden = false;
    const pad = 14;
    let x = ev.clientX + pad, y = ev.clientY + pad;
    const r = tooltip.getBoundingClientRect();
    if (x + r.width > window.innerWidth - 4) x = Math.max(4, ev.clientX - r.width - pad);
    if (y + r.height > window.innerHeight - 4) y = Math.max(4, ev.clientY - r.height - pad);
    tooltip.style.left = x + 'px';
    tooltip.style.top = y + 'px';
  }
  function hideTip() { tooltip.hidden = true; }
  function hover(node, fn) {
    node.addEventListener('mousemove', (ev) => { const t = fn(ev); if (t) showTip(ev, t[0], t[1]); else hideTip(); });
    node.addEventListener('mouseleave', hideTip);
    return node;
  }

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

  /* ---------- Call graph: icicle and sunburst of the call tree ---------- */
  function inclOf(n) { return n.incl_ns || 0; }
  function childSum(n, value) { return (n.children || []).reduce((a, c) => a + (value || inclOf)(c), 0); }
  /* rows of frames that get a width: a child of no weight draws nothing */
  function treeDepth(n, value) {
    let d = 0;
    for (const c of n.children || []) if (!value || value(c) > 0) d = Math.max(d, treeDepth(c, value));
    return d + 1;
  }
  /* Each node's GPU time launched in it or below (rules.md §3.2): its gpu_ns,
     or, where it has none (the tree's root), the sum of its children's. */
  function gpuWeights(root) {
    const w = new Map();
    (function walk(n) {
      let sum = 0;
      for (const c of n.children || []) sum += walk(c);
      const v = typeof n.gpu_ns === 'number' ? n.gpu_ns : sum;
      w.set(n, v);
      return v;
    })(root);
    return (n) => w.get(n) || 0;
  }
  const CG_WEIGHTS = { incl_ns: 'inclusive time', gpu_ns: 'GPU time launched' };
  function renderCallGraph(panel) {
    const gpu = doc.reports.some((rep) => rep.call_tree && hasGpuTimes(rep));
    let weight = gpu && doc.reports[0].operations_order === 'gpu' ? 'gpu_ns' : 'incl_ns';
    const buttons = [];
    if (gpu) {
      const ctl = h('div', { class: 'controls', role: 'group', 'aria-label': 'Frame width' });
      ctl.appendChild(h('span', { class: 'hint', text: 'Width is' }));
      for (const m of [['incl_ns', 'CPU time'], ['gpu_ns', 'GPU time']]) {
        const b = h('button', { type: 'button', 'aria-pressed': String(weight === m[0]), 'data-weight': m[0], text: m[1] });
        b.addEventListener('click', () => {
          weight = m[0];
          buttons.forEach((x) => x.setAttribute('aria-pressed', String(x.getAttribute('data-weight') === weight)));
          draw();
        });
        buttons.push(b);
        ctl.appendChild(b);
      }
      panel.appendChild(ctl);
    }
    const body = h('div');
    panel.appendChild(body);
    function draw() {
      clear(body);
      perProfile(body, (col, rep) => callGraphFor(col, rep, weight));
    }
    draw();
    panel._redraw = draw;
  }
  function callGraphFor(col, rep, weight) {
    if (!rep.call_tree) { col.appendChild(h('p', { class: 'empty', text: 'No call tree in the report.' })); return; }
    const tree = rep.call_tree;
    const gpuHere = hasGpuTimes(rep);
    const gpuOf = gpuHere ? gpuWeights(tree) : null;
    const byGpu = weight === 'gpu_ns';
    const card = h('div', { class: 'card', 'data-weight': weight });
    col.appendChild(card);
    card.appendChild(h('h2', { text: 'Call tree (icicle: callers above callees, width = ' + CG_WEIGHTS[weight] + ')' }));
    if (byGpu && !(gpuHere && gpuOf(tree) > 0)) {
      card.appendChild(h('p', { class: 'empty', text: gpuHere ? 'No GPU time was launched in this profile\u2019s call tree.'
        : 'No GPU activity in this profile.' }));
      return;
    }
    const value = byGpu ? gpuOf : inclOf;
    const cpuTotal = tree.incl_ns || 0, gpuTotal = gpuHere ? gpuOf(tree) : 0;
    const tip = (n) => {
      const lines = ['kind: ' + (n.kind || 'thread'), 'calls: ' + fmtNum(n.calls), 'inclusive: ' + fmtNs(n.incl_ns) +
        ' (' + fmtPct(cpuTotal ? n.incl_ns / cpuTotal : 0) + ')', 'self: ' + fmtNs(n.self_ns)];
      if (gpuHere) {
        const g = gpuOf(n);
        lines.push('GPU launched: ' + fmtNs(g) + ' (' + fmtPct(gpuTotal ? g / gpuTotal : 0) + ')');
        if (typeof n.gpu_self_ns === 'number') lines.push('GPU self: ' + fmtNs(n.gpu_self_ns));
        if (typeof n.gpu_kernels === 'number') lines.push('kernels: ' + fmtNum(n.gpu_kernels));
      }
      return [n.name, lines];
    };
    const sun = h('div', { class: 'card' });
    const state = { focus: null };
    const flame = icicle(card, tree, {
      color: (n) => KIND_COLOR[n.kind] || KIND_COLOR.thread, value: value, tip: tip,
      onFocus: (n) => { state.focus = n; drawSun(); }
    });
    card.appendChild(h('p', { class: 'chart-caption', text: (byGpu ? 'Width is the GPU time (kernels, copies, memsets) launched in a ' +
      'call path or below it; frames that launched none are not drawn. ' : '') +
      'Click a frame to zoom into it; click the top bar (or an ancestor) to zoom back out. Hover for exact figures.' }));
    col.appendChild(sun);
    sun.appendChild(h('h2', { text: 'Sunburst of the same tree' }));
    const sunHost = h('div');
    sun.appendChild(sunHost);
    function drawSun() {
      clear(sunHost);
      sunburst(sunHost, state.focus || tree, (n) => flame.zoom(n), { value: value, tip: tip });
    }
    drawSun();
  }
  /* opts: color(node), value(node) (the width; inclusive time unless given),
     tip(node, total), onFocus(node). Returns {zoom(node)}. */
  function icicle(container, rootNode, opts) {
    const host = h('div', { class: 'chart flame' });
    container.appendChild(host);
    const rowH = 20;
    const value = opts.value || inclOf;
    let focus = rootNode;
    const parentOf = new Map();
    (function link(n) { for (const c of n.children || []) { parentOf.set(c, n); link(c); } })(rootNode);
    function draw() {
      clear(host);
      const box = chartBox(host);
      const W = box.w;
      const chain = [];
      for (let p = parentOf.get(focus); p; p = parentOf.get(p)) chain.unshift(p);
      const depth = chain.length + treeDepth(focus, value);
      const H = depth * rowH + 2;
      const svgRoot = s('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'Call tree icicle' });
      const total = value(rootNode);
      const frame = (n, x, w, d, isChain) => {
        const g = s('g', { class: 'frame', 'data-name': n.name, 'data-value': value(n) });
        const r = s('rect', { x: x + 0.5, y: d * rowH + 0.5, width: Math.max(0.5, w - 1), height: rowH - 1, rx: 2,
          fill: opts.color(n), 'fill-opacity': isChain ? 0.55 : 1, class: 'hoverable' });
        g.appendChild(r);
        if (w > 30) g.appendChild(s('text', { x: x + 4, y: d * rowH + 14, class: 'cell-label' + (lightText(opts.color(n)) ? ' light' : '') },
          clip(n.name, w - 8)));
        hover(g, () => opts.tip(n, total));
        g.addEventListener('click', () => zoom(n === focus && parentOf.get(n) ? parentOf.get(n) : n));
        svgRoot.appendChild(g);
      };
      chain.forEach((n, i) => frame(n, 0, W, i, true));
      const lay = (n, x, w, d) => {
        frame(n, x, w, d, false);
        const kids = n.children || [];
        const sum = Math.max(value(n), childSum(n, value));
        let cx = x;
        for (const c of kids) {
          const cw = sum > 0 ? w * value(c) / sum : 0;
          if (cw >= 0.5) lay(c, cx, cw, d + 1);
          cx += cw;
        }
      };
      lay(focus, 0, W, chain.length);
      host.appendChild(svgRoot);
    }
    function zoom(n) { focus = n; draw(); if (opts.onFocus) opts.onFocus(n); }
    draw();
    host._redraw = draw;
    return { zoom: zoom };
  }
  function lightText(color) {
    const c = String(color);
    if (!/^#[0-9a-fA-F]{6}$/.test(c)) return false;
    const r = parseInt(c.slice(1, 3), 16), g = parseInt(c.slice(3, 5), 16), b = parseInt(c.slice(5, 7), 16);
    return 0.299 * r + 0.587 * g + 0.114 * b < 140;
  }
  /* opts: value(node) (the angle), tip(node) */
  function sunburst(container, focus, onClick, opts) {
    const box = chartBox(container);
    const size = Math.min(box.w, 520);
    const R = size / 2 - 4;
    const maxRings = 7;
    const depth = Math.min(maxRings, treeDepth(focus, opts.value));
    const ring = R / depth;
    const svgRoot = s('svg', { viewBox: '0 0 ' + size + ' ' + size, width: size, height: size, role: 'img', 'aria-label': 'Call tree sunburst' });
    const cx = size / 2, cy = size / 2;
    const arc = (a0, a1, r0, r1) => {
      if (a1 - a0 >= Math.PI * 2 - 1e-6) a1 = a0 + Math.PI * 2 - 1e-4;
      const p = (a, r) => (cx + r * Math.sin(a)).toFixed(2) + ' ' + (cy - r * Math.cos(a)).toFixed(2);
      const large = a1 - a0 > Math.PI ? 1 : 0;
      return 'M' + p(a0, r1) + 'A' + r1 + ' ' + r1 + ' 0 ' + large + ' 1 ' + p(a1, r1) + 'L' + p(a1, r0) +
        'A' + r0 + ' ' + r0 + ' 0 ' + large + ' 0 ' + p(a0, r0) + 'Z';
    };
    const lay = (n, a0, a1, d) => {
      if (d >= depth) return;
      const path = s('path', { d: d === 0 ? circlePath(cx, cy, ring) : arc(a0, a1, d * ring, (d + 1) * ring),
        fill: KIND_COLOR[n.kind] || KIND_COLOR.thread, stroke: '#fff', 'stroke-width': 1, class: 'hoverable', 'data-name': n.name,
        'data-value': opts.value(n) });
      hover(path, () => opts.tip(n));
      path.addEventListener('click', () => onClick(n));
      svgRoot.appendChild(path);
      const arcLen = (a1 - a0) * (d + 0.5) * ring;
      if (d > 0 && arcLen > 50) {
        const mid = (a0 + a1) / 2, rr = (d + 0.5) * ring;
        labels.push(s('text', { x: cx + rr * Math.sin(mid), y: cy - rr * Math.cos(mid) + 4, 'text-anchor': 'middle',
          class: 'cell-label' + (lightText(KIND_COLOR[n.kind] || KIND_COLOR.thread) ? ' light' : '') }, clip(n.name, Math.min(arcLen, ring * 1.6) - 4)));
      }
      const sum = Math.max(opts.value(n), childSum(n, opts.value));
      let a = a0;
      for (const c of n.children || []) {
        const da = sum > 0 ? (a1 - a0) * opts.value(c) / sum : 0;
        if (da > 0.002) lay(c, a, a + da, d + 1);
        a += da;
      }
    };
    const labels = [];
    lay(focus, 0, Math.PI * 2, 0);
    for (const l of labels) svgRoot.appendChild(l);
    svgRoot.appendChild(s('text', { x: cx, y: cy + 4, 'text-anchor': 'middle', class: 'cell-label light' }, clip(focus.name, ring * 1.8)));
    svgRoot.style.maxWidth = size + 'px';
    svgRoot.style.margin = '0 auto';
    container.appendChild(h('div', { class: 'chart' }, svgRoot));
    container.appendChild(h('p', { class: 'chart-caption', text: 'Centre: ' + focus.name + '. Rings outwards are callees (up to ' + maxRings +
      ' levels); click a ring to zoom both views.' }));
  }
  function circlePath(cx, cy, r) {
    return 'M' + (cx - r) + ' ' + cy + 'a' + r + ' ' + r + ' 0 1 0 ' + 2 * r + ' 0a' + r + ' ' + r + ' 0 1 0 ' + -2 * r + ' 0Z';
  }

  /* ---------- Timeline ---------- */
  /* the timeline's event kinds (src/output/timeline.h): 8 is a communication (NCCL) kernel */
  const EV_KINDS = ['compute', 'data', 'sync', 'comm', 'io', 'gpu', 'memcpy', 'memset', 'gpu comm'];
  function renderTimeline(panel) {
    perProfile(panel, (col, rep, idx) => timelineFor(col, rep, idx));
  }
  /* The time span of count steps from step number n0. A decimated report
     (prof analyze --points) lacks most steps: their bounds are interpolated
     between the listed steps around them, and the server's events show the
     real steps. */
  function stepWindow(rep, n0, count) {
    const steps = rep.steps || [];
    if (!steps.length) return null;
    const first = steps[0], last = steps[steps.length - 1];
    const n1 = Math.max(first.number, Math.min(n0 + count, last.number + 1));
    n0 = Math.max(first.number, Math.min(n0, last.number));
    return [stepStart(steps, n0), Math.max(stepStart(steps, n1), stepStart(steps, n0) + 1)];
  }
  function stepStart(steps, n) {
    let lo = 0, hi = steps.length - 1;
    const last = steps[hi];
    if (n > last.number) return last.start_ns + last.dur_ns;
    while (lo < hi) { /* the first listed step numbered n or more */
      const mid = (lo + hi) >> 1;
      if (steps[mid].number < n) lo = mid + 1; else hi = mid;
    }
    const b = steps[lo];
    if (b.number === n || lo === 0) return b.start_ns;
    const a = steps[lo - 1], aEnd = a.start_ns + a.dur_ns;
    return aEnd + (b.start_ns - aEnd) * (n - a.number - 1) / Math.max(1, b.number - a.number - 1);
  }
  function timelineFor(col, rep, idx) {
    const card = h('div', { class: 'card' });
    col.appendChild(card);
    card.appendChild(h('h2', { text: 'Timeline' }));
    if (!serverMode) {
      card.appendChild(h('p', { class: 'banner info', text: 'The event timeline needs the server: run `prof view ' +
        profileLabel(rep, idx) + '` to browse threads and GPU streams. This file shows the steps only.' }));
      const host = h('div');
      card.appendChild(host);
      drawLanes(host, { lanes: [], events: [], steps: (rep.steps || []).map((st) => [st.number, st.start_ns, st.dur_ns]), marks: [],
        names: [], t0_ns: rep.steps && rep.steps.length ? rep.steps[0].start_ns : 0,
        t1_ns: rep.steps && rep.steps.length ? rep.steps[rep.steps.length - 1].start_ns + rep.steps[rep.steps.length - 1].dur_ns : 1 }, null);
      return;
    }
    const steps = rep.steps || [];
    let win = stepWindow(rep, steps.length ? steps[0].number : 0, 3) || [0, Math.max(1, Math.floor(((rep.summary || {}).wall_ns || 1e9) / 20))];
    const ctl = h('div', { class: 'controls' });
    const first = h('input', { type: 'number', min: 0, value: steps.length ? steps[0].number : 0, 'aria-label': 'first step' });
    const count = h('input', { type: 'number', min: 1, value: 3, 'aria-label': 'number of steps' });
    const show = h('button', { type: 'button', text: 'Show steps' });
    const zin = h('button', { type: 'button', text: 'Zoom in' });
    const zout = h('button', { type: 'button', text: 'Zoom out' });
    const left = h('button', { type: 'button', text: '◀' , 'aria-label': 'earlier' });
    const right = h('button', { type: 'button', text: '▶', 'aria-label': 'later' });
    ctl.appendChild(h('span', { class: 'hint', text: 'From step' }));
    ctl.appendChild(first);
    ctl.appendChild(h('span', { class: 'hint', text: 'count' }));
    ctl.appendChild(count);
    [show, zin, zout, left, right].forEach((b) => ctl.appendChild(b));
    ctl.appendChild(h('span', { class: 'hint', text: 'Wheel zooms at the cursor; drag to pan.' }));
    if (steps.length) card.appendChild(ctl); else card.appendChild(h('div', { class: 'controls' }, zin, zout, left, right));
    const status = h('p', { class: 'chart-caption', 'aria-live': 'polite' });
    const host = h('div');
    card.appendChild(host);
    card.appendChild(status);
    let seq = 0, timer = null, last = null;
    function load() {
      const my = ++seq;
      const t0 = Math.max(0, Math.floor(win[0])), t1 = Math.ceil(win[1]);
      status.textContent = 'Loading events…';
      fetch('/api/events?profile=' + idx + rankQuery() + '&t0=' + t0 + '&t1=' + t1).then((r) => {
        if (!r.ok) throw new Error('HTTP ' + r.status);
        return r.json();
      }).then((data) => {
        if (my !== seq) return;
        last = data;
        clear(host);
        drawLanes(host, data, { pan: pan, zoomAt: zoomAt });
        status.textContent = fmtNum(data.count) + ' events from ' + fmtNs(data.t0_ns) + ' to ' + fmtNs(data.t1_ns) +
          (data.hidden ? ' · ' + fmtNum(data.hidden) + ' shorter events hidden (zoom in to see them)' : '');
      }).catch((e) => { if (my === seq) status.textContent = 'Could not load events: ' + e.message; });
    }
    function later() { clearTimeout(timer); timer = setTimeout(load, 120); }
    function zoomAt(frac, factor) {
      const span = win[1] - win[0];
      const at = win[0] + span * frac;
      const ns = Math.max(1000, span * factor);
      win = [Math.max(0, at - ns * frac), Math.max(0, at - ns * frac) + ns];
      if (last) { clear(host); drawLanes(host, Object.assign({}, last, { t0_ns: win[0], t1_ns: win[1] }), { pan: pan, zoomAt: zoomAt }); }
      later();
    }
    function pan(frac) {
      const span = win[1] - win[0];
      let a = win[0] + span * frac;
      if (a < 0) a = 0;
      win = [a, a + span];
      if (last) { clear(host); drawLanes(host, Object.assign({}, last, { t0_ns: win[0], t1_ns: win[1] }), { pan: pan, zoomAt: zoomAt }); }
      later();
    }
    show.addEventListener('click', () => {
      const n0 = Number(first.value), n = Math.max(1, Number(count.value) || 1);
      const w = stepWindow(rep, n0, n);
      if (w) { win = w; load(); }
    });
    zin.addEventListener('click', () => zoomAt(0.5, 0.5));
    zout.addEventListener('click', () => zoomAt(0.5, 2));
    left.addEventListener('click', () => pan(-0.5));
    right.addEventListener('click', () => pan(0.5));
    load();
  }
  /* data: {t0_ns, t1_ns, lanes:[{name, kind}], events:[[lane, depth, start, dur, name, kind]], names, steps:[[n, start, dur]], marks} */
  function drawLanes(host, data, nav) {
    const box = chartBox(host);
    const W = box.w, L = 140, R = 10, top = 26;
    const t0 = data.t0_ns, t1 = Math.max(data.t1_ns, data.t0_ns + 1);
    const x = linear(t0, t1, L, W - R);
    const rowH = 16;
    const lanes = data.lanes.map((ln) => ({ name: ln.name, kind: ln.kind, depth: 1 }));
    for (const e of data.events) if (lanes[e[0]]) lanes[e[0]].depth = Math.max(lanes[e[0]].depth, e[1] + 1);
    let y = top + 22;
    for (const ln of lanes) { ln.y = y; y += ln.depth * rowH + 10; }
    const H = y + 30;
    const root = s('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'Timeline' });
    const unit = axisUnit('ns', t1 - t0);
    const tk = ticks(0, t1 - t0, Math.max(2, Math.floor((W - L) / 100)), unit[0]);
    const ax = s('g', { class: 'axis' });
    for (const v of tk) {
      ax.appendChild(s('line', { x1: x(t0 + v), x2: x(t0 + v), y1: top - 4, y2: H - 26, stroke: '#e6e9ef' }));
      ax.appendChild(s('text', { x: x(t0 + v), y: H - 12, 'text-anchor': 'middle' }, tickLabel(v, unit)));
    }
    ax.appendChild(s('text', { class: 'axis-label', x: L, y: 12 }, 'time from ' + fmtNs(t0) + ' (' + unit[1] + ')'));
    root.appendChild(ax);
    const clipId = 'clip' + Math.random().toString(36).slice(2);
    root.appendChild(s('clipPath', { id: clipId }, s('rect', { x: L, y: 0, width: W - L - R, height: H })));
    const body = s('g', { 'clip-path': 'url(#' + clipId + ')' });
    root.appendChild(body);
    root.appendChild(s('text', { x: 4, y: top + 12, class: 'axis-label' }, 'steps'));
    for (const st of data.steps) {
      const a = x(st[1]), b = x(st[1] + st[2]);
      if (b < L || a > W - R) continue;
      const r = s('rect', { x: a, y: top, width: Math.max(1, b - a - 1), height: 16, fill: st[0] % 2 ? '#d9dde5' : '#c3c9d4', class: 'hoverable step' });
      hover(r, () => ['step ' + fmtNum(st[0]), ['start ' + fmtNs(st[1]), 'duration ' + fmtNs(st[2])]]);
      body.appendChild(r);
      if (b - a > 40) body.appendChild(s('text', { x: Math.max(a, L) + 3, y: top + 12, class: 'cell-label' }, clip('step ' + st[0], b - Math.max(a, L) - 6)));
    }
    lanes.forEach((ln) => {
      root.appendChild(s('text', { x: 4, y: ln.y + 12 }, clip(ln.name, L - 10)));
      root.appendChild(s('line', { x1: 0, x2: W, y1: ln.y - 5, y2: ln.y - 5, stroke: '#e6e9ef' }));
    });
    for (const e of data.events) {
      const ln = lanes[e[0]];
      if (!ln) continue;
      const a = x(e[2]), b = x(e[2] + e[3]);
      if (b < L || a > W - R) continue;
      const kind = EV_KINDS[e[5]] || 'other';
      const name = data.names[e[4]];
      const yy = ln.y + e[1] * rowH;
      const r = s('rect', { x: a, y: yy, width: Math.max(0.8, b - a), height: rowH - 2, fill: KIND_COLOR[kind] || KIND_COLOR.other,
        class: 'hoverable event' });
      hover(r, () => [name, ['kind: ' + kind, 'start: ' + fmtNs(e[2]), 'duration: ' + fmtNs(e[3])]]);
      body.appendChild(r);
      const vis = Math.min(b, W - R) - Math.max(a, L);
      if (vis > 36) body.appendChild(s('text', { x: Math.max(a, L) + 3, y: yy + 11, class: 'cell-label' + (lightText(KIND_COLOR[kind]) ? ' light' : '') },
        clip(name, vis - 6)));
    }
    for (const m of data.marks || []) {
      const a = x(m[1]);
      if (a < L || a > W - R) continue;
      const p = s('path', { d: 'M' + a + ' ' + (top - 2) + 'l-5 -8h10z', fill: '#D55E00', class: 'hoverable' });
      hover(p, () => [data.names[m[0]], ['mark at ' + fmtNs(m[1])]]);
      body.appendChild(p);
    }
    if (!data.lanes.length && nav) root.appendChild(s('text', { x: L, y: top + 50 }, 'No events in this window.'));
    const wrap = h('div', { class: 'chart timeline' }, root);
    host.appendChild(wrap);
    const kinds = new Set(data.events.map((e) => EV_KINDS[e[5]] || 'other'));
    if (kinds.size) { host.appendChild(legend(Array.from(kinds).map((k) => ({ color: KIND_COLOR[k] || KIND_COLOR.other, label: k })))); paintSwatches(host); }
    if (!nav) return;
    root.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const rect = root.getBoundingClientRect();
      const px = (ev.clientX - rect.left) * W / rect.width;
      nav.zoomAt(Math.min(1, Math.max(0, (px - L) / (W - L - R))), ev.deltaY < 0 ? 0.8 : 1.25);
    }, { passive: false });
    let dragX = null;
    root.addEventListener('mousedown', (ev) => { dragX = ev.clientX; });
    window.addEventListener('mouseup', (ev) => {
      if (dragX === null) return;
      const rect = root.getBoundingClientRect();
      const dx = (ev.clientX - dragX) * W / rect.width;
      dragX = null;
      if (Math.abs(dx) > 3) nav.pan(-dx / (W - L - R));
    }, { once: true });
  }

  /* ---------- Bottlenecks ---------- */
  function renderBottlenecks(panel) {
    perProfile(panel, (col, rep) => {
      const list = rep.bottlenecks || [];
      if (!list.length) { col.appendChild(h('p', { class: 'empty', text: 'No bottlenecks found at the thresholds used.' })); }
      else {
        const card = h('div', { class: 'card' });
        col.appendChild(card);
        card.appendChild(h('h2', { text: 'Impact (share of time or memory involved)' }));
        barChart(card, list.map((b) => ({ label: b.title, value: b.impact_share || 0, color: SEV_COLOR[b.severity] || '#999',
          tip: [b.title, ['severity: ' + b.severity, 'rule: ' + b.rule, 'impact: ' + fmtPct(b.impact_share)]] })),
        { kind: 'share', xLabel: 'impact', fmt: fmtPct, title: 'Bottleneck impact' });
      }
      list.forEach((b, i) => {
        const c = h('div', { class: 'card finding', 'data-rule': b.rule, 'data-index': i });
        c.appendChild(h('h3', null, h('span', { class: 'sev ' + b.severity, text: b.severity }), ' ', b.title));
        c.appendChild(h('div', { class: 'meta', text: 'rule ' + b.rule + ' · subject ' + b.subject + ' · impact ' + fmtPct(b.impact_share) }));
        if (b.evidence && typeof b.evidence === 'object') {
          const dl = h('dl');
          for (const k of Object.keys(b.evidence)) { dl.appendChild(h('dt', { text: pretty(k) })); dl.appendChild(h('dd', { text: fmtField(k, b.evidence[k]) })); }
          c.appendChild(dl);
        }
        if (b.recommendation) c.appendChild(h('p', { class: 'rec' }, h('strong', { text: 'What to do: ' }), b.recommendation));
        col.appendChild(c);
      });
    });
  }

  /* ---------- Compare (two profiles) ---------- */
  function renderCompare(panel) {
    const A = doc.reports[0], B = doc.reports[1], C = doc.compare;
    const na = (A.summary || {}).steps || 0, nb = (B.summary || {}).steps || 0;
    const perStep = na > 0 && nb > 0;
    /* why the runs should not be compared at all (rules.md 6.1), before anything else */
    for (const w of (C && C.warnings) || [])
      panel.appendChild(h('div', { class: 'banner truncated', role: 'alert', 'data-warning': 'compare', text: 'Warning: ' + w }));
    panel.appendChild(h('p', { class: 'banner info', text: 'A (before) = ' + profileLabel(A, 0) + ', B (after) = ' + profileLabel(B, 1) + '. ' +
      (C ? 'Figures from the compare report (prof compare); the flame graph difference is computed in the page from the two call trees.'
        : 'Differences computed in the page from the two analyze reports.') }));
    panel.appendChild(h('h2', { text: 'Headline figures' }));
    panel.appendChild(C && Array.isArray(C.summary) ? compareSummary(C) : localSummary(A, B));
    if (C && C.speedup && isFinite(C.speedup.value))
      panel.appendChild(h('p', { class: 'chart-caption', text: 'Speed-up of B over A: ' + fmtNum(C.speedup.value) + '× (by ' + pretty(C.speedup.basis || '') + ')' +
        (C.step_time_test ? '; step-time change ' + ({ slower: 'significant (slower)', faster: 'significant (faster)',
          no_change: 'within the noise floor', inconclusive: 'inconclusive', untested: 'not tested' }[C.step_time_test.verdict] ||
          (C.step_time_test.significant ? 'significant' : 'not significant')) +
          ' (p ' + fmtP(C.step_time_test.p_value) + ', ' + pretty(C.step_time_test.method || '') + ')' : '') }));
    for (const n of (C && C.notes) || []) panel.appendChild(h('p', { class: 'banner info', text: n }));

    const scaleA = perStep ? nb / na : 1;
    panel.appendChild(h('h2', { text: 'Differential flame graph (B, coloured by change from A)' }));
    const card = h('div', { class: 'card' });
    panel.appendChild(card);
    const merged = mergeTrees(A.call_tree, B.call_tree, scaleA);
    if (!merged) card.appendChild(h('p', { class: 'empty', text: 'A call tree is missing.' }));
    else {
      icicle(card, merged, {
        color: (n) => diffColor(n),
        tip: (n) => [n.name, ['A: ' + fmtNs(n.a_ns) + (perStep ? ' (scaled to B\'s steps)' : ''), 'B: ' + fmtNs(n.incl_ns),
          'change: ' + (n.incl_ns - n.a_ns >= 0 ? '+' : '−') + fmtNs(Math.abs(n.incl_ns - n.a_ns)) + ' (' + change(n.a_ns, n.incl_ns) + ')',
          n.a_ns === 0 ? 'only in B' : '']]
      });
      card.appendChild(legend([{ color: '#b2182b', label: 'slower in B' }, { color: '#f7f7f7', label: 'unchanged' },
        { color: '#2166ac', label: 'faster in B' }, { color: '#7f8a9c', label: 'only in B' }]));
      paintSwatches(card);
      card.appendChild(h('p', { class: 'chart-caption', text: 'Width is B\'s inclusive time; colour is the change of inclusive time from A' +
        (perStep ? ' scaled to B\'s number of steps (A ' + na + ', B ' + nb + ')' : '') + ', full colour at ±50%. Click to zoom.' }));
    }
    panel.appendChild(h('h2', { text: 'Operations' }));
    panel.appendChild(C && Array.isArray(C.operations) ? compareOps(C.operations) : localOps(A, B, scaleA));
    if (C && C.operation_tests && C.options)
      panel.appendChild(h('p', { class: 'chart-caption ops-level', text: opsLevel(C.options, C.operation_tests) }));
    if (C && Array.isArray(C.memory) && C.memory.length) {
      panel.appendChild(h('h2', { text: 'Memory' }));
      panel.appendChild(sortableTable(C.memory, [['series', 'Series', String], ['before_peak_bytes', 'A peak', fmtBytes],
        ['after_peak_bytes', 'B peak', fmtBytes], ['change_bytes', 'Change', fmtBytes], ['leak', 'Leak', String]], 'series'));
    }
    if (C && C.bottlenecks) {
      panel.appendChild(h('h2', { text: 'Bottlenecks' }));
      for (const k of ['new', 'persisting', 'fixed']) {
        const list = C.bottlenecks[k] || [];
        const c = h('div', { class: 'card finding', 'data-status': k });
        c.appendChild(h('h3', { text: k[0].toUpperCase() + k.slice(1) + ' (' + list.length + ')' }));
        if (!list.length) c.appendChild(h('p', { class: 'empty', text: 'none' }));
        for (const f of list) c.appendChild(h('p', null, h('span', { class: 'sev ' + f.severity, text: f.severity }), ' ', f.title));
        panel.appendChild(c);
      }
    }
    if (C && C.regression && C.regression.regressed)
      panel.appendChild(h('p', { class: 'banner', text: 'B regressed past ' + C.regression.threshold_pct + '%: ' +
        (C.regression.reasons || []).map((r) => r.name + ' ' + fmtPct(r.relative)).join(', ') }));
  }
  function fmtP(p) { return p === null || p === undefined ? '–' : p < 1e-4 ? '< 0.0001' : fmtNum(p); }
  function fmtUnit(unit) { return unit === 'ns' ? fmtNs : unit === 'bytes' ? fmtBytes : fmtNum; }
  function fmtRel(v) { return v === null || v === undefined || !isFinite(v) ? '–' : (v >= 0 ? '+' : '') + (v * 100).toFixed(1) + '%'; }
  function compareTable(rows) {
    const t = h('table', { class: 'data compare-summary' }, h('thead', null, h('tr', null,
      ['Metric', 'A', 'B', 'Change', 'Relative'].map((c) => h('th', { text: c })))));
    const tb = h('tbody');
    for (const r of rows) tb.appendChild(h('tr', null, h('td', { text: r.label }), h('td', { text: r.f(r.a) }), h('td', { text: r.f(r.b) }),
      h('td', { text: r.d === null || r.d === undefined ? '–' : (r.d >= 0 ? '+' : '−') + r.f(Math.abs(r.d)) }), h('td', { text: fmtRel(r.rel) })));
    t.appendChild(tb);
    return h('div', { class: 'table-wrap' }, t);
  }
  function compareSummary(C) {
    return compareTable(C.summary.map((m) => ({ label: pretty(m.metric), a: m.before, b: m.after, d: m.change, rel: m.relative, f: fmtUnit(m.unit) })));
  }
  function localSummary(A, B) {
    const rows = [];
    const st = (r) => (r.summary && r.summary.step_time) || {};
    const add = (label, a, b, f) => rows.push({ label: label, a: a, b: b, f: f, d: isFinite(a) && isFinite(b) ? b - a : null,
      rel: isFinite(a) && isFinite(b) && a ? (b - a) / a : null });
    const sa = A.summary || {}, sb = B.summary || {};
    add('steps', sa.steps, sb.steps, fmtNum);
    add('step mean', st(A).mean_ns, st(B).mean_ns, fmtNs);
    add('step p50', st(A).p50_ns, st(B).p50_ns, fmtNs);
    add('step p95', st(A).p95_ns, st(B).p95_ns, fmtNs);
    add('profiled', sa.profiled_ns, sb.profiled_ns, fmtNs);
    add('events', sa.events, sb.events, fmtNum);
    return compareTable(rows);
  }
  /* What slower / faster means in the table: the operations are held
     together (rules.md §6.3), so a p below alpha may still be unchanged. */
  function opsLevel(o, t) {
    return 'Slower / faster: mean per call' + (t.speed_adjusted > 0 ? ' against the runs\' speed (vs run)' : '') +
      ' beyond the ' + fmtNum(o.noise_pct) + '% noise floor' +
      (t.tested > 1 ? ', a false discovery rate of ' + fmtNum(100 * o.alpha) + '% over ' + fmtNum(t.tested) +
        ' operations tested, weighted by their share of the time' : ' at p < ' + fmtNum(t.alpha_each)) +
      '; p is each operation\'s own.';
  }
  function compareOps(list) {
    const rows = list.map((o) => ({ name: o.name, kind: o.kind, status: o.status, a_self_ns: o.before ? o.before.self_ns : null,
      b_self_ns: o.after ? o.after.self_ns : null, mean_change_ns: o.mean_change_ns, relative: o.relative,
      relative_to_run: o.method === 'speed_adjusted' ? o.relative_to_run : null, p_value: o.p_value }));
    return sortableTable(rows, [['name', 'Operation', String], ['kind', 'Kind', String], ['status', 'Status', String],
      ['a_self_ns', 'A self', fmtNs], ['b_self_ns', 'B self', fmtNs],
      ['mean_change_ns', 'Mean change', (v) => (v === null || v === undefined ? '–' : (v >= 0 ? '+' : '−') + fmtNs(Math.abs(v)))],
      ['relative', 'Relative', fmtRel], ['relative_to_run', 'vs run', fmtRel], ['p_value', 'p', fmtP]], 'b_self_ns');
  }
  function localOps(A, B, scaleA) {
    const ops = new Map();
    for (const o of A.operations || []) ops.set(o.name, { name: o.name, a: o.self_ns * scaleA, b: null });
    for (const o of B.operations || []) { const e = ops.get(o.name) || { name: o.name, a: null, b: null }; e.b = o.self_ns; ops.set(o.name, e); }
    const rows = Array.from(ops.values()).map((e) => ({ name: e.name, a_self_ns: e.a, b_self_ns: e.b,
      delta_ns: e.a !== null && e.b !== null ? e.b - e.a : null, relative: e.a && e.b !== null ? (e.b - e.a) / e.a : null }));
    return sortableTable(rows, [['name', 'Operation', String], ['a_self_ns', 'A self (per B step)', fmtNs], ['b_self_ns', 'B self', fmtNs],
      ['delta_ns', 'Δ self', (v) => (v === null ? '–' : (v >= 0 ? '+' : '−') + fmtNs(Math.abs(v)))], ['relative', 'Relative', fmtRel]], 'b_self_ns');
  }
  function change(a, b) {
    if (a === null || a === undefined || b === null || b === undefined) return '–';
    if (a === 0) return b === 0 ? '0%' : 'new';
    const c = (b - a) / a * 100;
    return (c >= 0 ? '+' : '') + c.toFixed(1) + '%';
  }
  /* B's tree with each node's A inclusive time (matched by call path) as a_ns. */
  function mergeTrees(a, b, scaleA) {
    if (!a || !b) return null;
    const walk = (na, nb) => {
      const kids = new Map();
      for (const c of (na && na.children) || []) kids.set(c.name, c);
      return { name: nb.name, kind: nb.kind, calls: nb.calls, incl_ns: nb.incl_ns || 0, self_ns: nb.self_ns || 0,
        a_ns: na ? (na.incl_ns || 0) * scaleA : 0, children: (nb.children || []).map((c) => walk(kids.get(c.name) || null, c)) };
    };
    return walk(a, b);
  }
  function diffColor(n) {
    if (!n.a_ns) return '#7f8a9c';
    const r = Math.max(-1, Math.min(1, (n.incl_ns - n.a_ns) / n.a_ns / 0.5));
    const mix = (c0, c1, t) => '#' + [0, 1, 2].map((i) => Math.round(c0[i] + (c1[i] - c0[i]) * t).toString(16).padStart(2, '0')).join('');
    const white = [247, 247, 247];
    return r >= 0 ? mix(white, [178, 24, 43], r) : mix(white, [33, 102, 172], -r);
  }

  /* ---------- tabs ---------- */
  const TABS = [
    ['summary', 'Summary', renderSummary], ['operations', 'Operations', renderOperations], ['memory', 'Memory', renderMemory],
    ['steps', 'Steps', renderSteps], ['callgraph', 'Call graph', renderCallGraph], ['timeline', 'Timeline', renderTimeline],
    ['bottlenecks', 'Bottlenecks', renderBottlenecks]];
  const COMPARE_TAB = ['compare', 'Compare', renderCompare];

  function tabList() { return doc.reports.length > 1 ? [COMPARE_TAB].concat(TABS) : TABS; }
  function select(id) {
    currentTab = id;
    hideTip();
    for (const b of document.querySelectorAll('#tabs button')) b.setAttribute('aria-selected', String(b.getAttribute('data-tab') === id));
    for (const p of document.querySelectorAll('.panel')) p.hidden = p.id !== 'panel-' + id;
    const panel = document.getElementById('panel-' + id);
    if (!rendered[id]) {
      rendered[id] = true;
      const t = tabList().find((x) => x[0] === id);
      try { t[2](panel); } catch (e) { panel.appendChild(h('p', { class: 'banner', text: 'This view failed to draw: ' + e.message })); }
      panel.setAttribute('data-rendered', 'true');
    }
    if (location.hash !== '#' + id) history.replaceState(null, '', '#' + id);
  }
  function redrawCurrent() {
    if (!currentTab) return;
    const panel = document.getElementById('panel-' + currentTab);
    clear(panel);
    rendered[currentTab] = false;
    select(currentTab);
  }

  function start(data) {
    doc = data;
    if (!doc || !Array.isArray(doc.reports) || !doc.reports.length) throw new Error('no report in the page data');
    const loading = document.getElementById('loading');
    if (loading) loading.remove();
    const labels = doc.reports.map(profileLabel);
    document.getElementById('title').textContent = labels.join('  vs  ');
    document.title = 'prof · ' + labels.join(' vs ');
    const sub = [];
    doc.reports.forEach((rep) => {
      const sm = rep.summary || {};
      sub.push(plural(sm.steps || 0, 'step') + ', ' + fmtNs(sm.wall_ns) + ' wall, ' + plural(sm.events || 0, 'event'));
    });
    document.getElementById('subtitle').textContent = sub.join('  |  ') + (serverMode ? '' : '  ·  static report');
    const banners = document.getElementById('banners');
    doc.reports.forEach((rep, i) => {
      for (const p of rep.profiles || []) {
        if (p.truncated || p.clean === false) {
          banners.appendChild(h('div', { class: 'banner truncated', role: 'alert', text: 'Warning: ' + (p.path || profileLabel(rep, i)) +
            (p.truncated ? ' was cut short' : ' was not closed cleanly') + (p.bytes_lost ? ' (' + fmtBytes(p.bytes_lost) + ' unreadable)' : '') +
            (p.detail ? ': ' + p.detail : '') + '. The figures cover the intact part only.' }));
        }
        if (p.source_damaged) {
          banners.appendChild(h('div', { class: 'banner truncated', role: 'alert', text: 'Warning: ' + (p.path || profileLabel(rep, i)) +
            ' was imported from a trace cut short or damaged (' + p.source_damaged + '). The figures cover what came before; ' +
            'GPU work of the steps read may be missing.' }));
        }
      }
      if ((rep.summary || {}).dropped_events > 0)
        banners.appendChild(h('div', { class: 'banner', text: fmtNum(rep.summary.dropped_events) + ' events were dropped while recording ' +
          profileLabel(rep, i) + '; totals are lower bounds.' }));
    });
    const tabs = document.getElementById('tabs');
    const panels = document.getElementById('panels');
    for (const t of tabList()) {
      const b = h('button', { type: 'button', role: 'tab', id: 'tab-' + t[0], 'data-tab': t[0], 'aria-controls': 'panel-' + t[0],
        'aria-selected': 'false', text: t[1] });
      b.addEventListener('click', () => select(t[0]));
      tabs.appendChild(b);
      panels.appendChild(h('section', { class: 'panel', id: 'panel-' + t[0], role: 'tabpanel', 'aria-labelledby': 'tab-' + t[0], hidden: 'hidden' }));
    }
    const want = location.hash.slice(1);
    select(tabList().some((t) => t[0] === want) ? want : tabList()[0][0]);
    let resizeTimer = null, lastW = window.innerWidth;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => { if (window.innerWidth !== lastW) { lastW = window.innerWidth; redrawCurrent(); } }, 200);
    });
    document.body.setAttribute('data-ready', 'true');
  }
  function fail(msg) {
    const loading = document.getElementById('loading');
    if (loading) loading.textContent = 'Cannot show the report: ' + msg;
    document.body.setAttribute('data-ready', 'error');
  }

  const inline = document.getElementById('prof-data');
  if (inline) {
    try { start(JSON.parse(inline.textContent)); } catch (e) { fail(e.message); }
  } else {
    serverMode = true;
    fetch('/api/view' + (pageRank !== null ? '?rank=' + pageRank : ''))
      .then((r) => {
        if (r.ok) return r.json();
        return r.text().then((t) => { throw new Error((t || '').trim() || 'HTTP ' + r.status); });
      })
      .then((d) => { try { start(d); } catch (e) { fail(e.message); } }, (e) => fail(e.message));
  }
})();
