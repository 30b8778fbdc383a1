/* compare.js - a part of the dashboard's script: the Bottlenecks tab, and
 * the Compare tab of two profiles. tools/viewer_js.sh joins the parts, in
 * the Makefile's order (VIEWER_JS), into one app.js inside one function
 * scope, so that each uses the others' names. */
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
