/* dom.js - a part of the dashboard's script: the constants, the DOM
 * helpers (every string from a profile goes in as text), number formatting
 * and the tooltip. tools/viewer_js.sh joins the parts, in the Makefile's
 * order (VIEWER_JS), into one app.js inside one function scope, so that
 * each uses the others' names. */
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
