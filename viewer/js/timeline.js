/* timeline.js - a part of the dashboard's script: the Timeline tab: a
 * window of steps read from the server, lanes of threads and GPU streams,
 * zoom and pan. tools/viewer_js.sh joins the parts, in the Makefile's
 * order (VIEWER_JS), into one app.js inside one function scope, so that
 * each uses the others' names. */
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
