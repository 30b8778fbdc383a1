/* main.js - a part of the dashboard's script: the tabs, and the start: the
 * page's data inline (a static report) or from /api/view.
 * tools/viewer_js.sh joins the parts, in the Makefile's order (VIEWER_JS),
 * into one app.js inside one function scope, so that each uses the others'
 * names. */
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
