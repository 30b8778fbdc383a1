/* calls.js - a part of the dashboard's script: the Call graph tab: icicle
 * and sunburst of the call tree, GPU weights, the comparison's merged
 * tree. tools/viewer_js.sh joins the parts, in the Makefile's order
 * (VIEWER_JS), into one app.js inside one function scope, so that each
 * uses the others' names. */
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
