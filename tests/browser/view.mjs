// view.mjs - drives the prof dashboard in headless Chromium and prints one
// "ok NAME" or "not ok NAME - why" line per check (tests/cli/view.sh runs it).
// usage: node view.mjs CONFIG.json
// CONFIG: { "screenshots": DIR, "report": demo analyze JSON file,
//           "pages": [ { "name", "url", "kind": "demo"|"xss"|"cut"|"compare"|"long"|"nosteps"|"gpu",
//                        "served": bool, "report": the page's analyze JSON (xss, gpu) } ] }
import { readFileSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const expected = JSON.parse(readFileSync(config.report, 'utf8'));
const XSS = '<img src=x onerror=alert(1)>';
let failures = 0;

function ok(name) { console.log('ok ' + name); }
function notOk(name, why) { console.log('not ok ' + name + ' - ' + String(why).replace(/\n/g, ' ').slice(0, 400)); failures++; }
function check(name, cond, why) { if (cond) ok(name); else notOk(name, why); }

function at(obj, path) {
  return path.split('.').reduce((o, k) => (o === null || o === undefined ? undefined : o[k]), obj);
}
function near(a, b) {
  return Math.abs(Number(a) - Number(b)) <= 1e-9 * Math.max(1, Math.abs(Number(b)));
}

const userData = mkdtempSync(join(tmpdir(), 'prof-view-chromium-'));
const context = await chromium.launchPersistentContext(userData, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update',
    '--disable-default-apps', '--disable-sync', '--no-first-run', '--disable-extensions'],
});
mkdirSync(config.screenshots, { recursive: true });

async function openPage(p) {
  const page = await context.newPage();
  const problems = [];
  const dialogs = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('file:') && !u.startsWith('data:') && !(p.served && u.startsWith(new URL(p.url).origin)))
      problems.push('outside request: ' + u);
  });
  await page.goto(p.url);
  await page.waitForSelector('body[data-ready]', { timeout: 15000 });
  return { page, problems, dialogs };
}

async function tabs(page) {
  return page.$$eval('#tabs button', (bs) => bs.map((b) => b.getAttribute('data-tab')));
}

// Visits every tab; checks that its charts drew; saves a screenshot.
async function visitTabs(p, page) {
  const ids = await tabs(page);
  const want = p.kind === 'compare' ? ['compare', 'summary', 'operations', 'memory', 'steps', 'callgraph', 'timeline', 'bottlenecks']
    : ['summary', 'operations', 'memory', 'steps', 'callgraph', 'timeline', 'bottlenecks'];
  check(p.name + ' tabs', JSON.stringify(ids) === JSON.stringify(want), 'tabs ' + JSON.stringify(ids));
  for (const id of ids) {
    await page.click('#tab-' + id);
    await page.waitForSelector('#panel-' + id + '[data-rendered="true"]', { timeout: 10000 });
    if (id === 'timeline' && p.served)
      await page.waitForSelector('#panel-timeline svg rect.event', { timeout: 15000 }).catch(() => {});
    await page.waitForTimeout(150);
    const drawn = await page.$eval('#panel-' + id, (panel) => {
      const svgs = Array.from(panel.querySelectorAll('svg'));
      const marks = panel.querySelectorAll('svg rect, svg path, svg circle, svg line').length;
      const failed = panel.querySelector('.banner') && /failed to draw/.test(panel.textContent);
      return { svgs: svgs.length, marks, failed: !!failed, empty: svgs.filter((s) => s.childNodes.length === 0).length };
    });
    check(p.name + ' ' + id + ' drew', drawn.svgs > 0 && drawn.marks > 3 && !drawn.failed && drawn.empty === 0,
      JSON.stringify(drawn));
    await page.screenshot({ path: join(config.screenshots, p.name + '-' + id + '.png'), fullPage: true });
  }
}

// The figures on the page against the analyze JSON of the same profile.
async function checkFigures(p, page) {
  await page.click('#tab-summary');
  const figs = await page.$$eval('#panel-summary .figure[data-field]', (fs) =>
    fs.map((f) => ({ field: f.getAttribute('data-field'), raw: f.getAttribute('data-raw'), text: f.querySelector('.value').textContent })));
  const bad = [];
  for (const f of figs) {
    if (f.field.startsWith('bottlenecks.')) {
      const sev = f.field.split('.')[1];
      const n = (expected.bottlenecks || []).filter((b) => b.severity === sev).length;
      if (Number(f.raw) !== n || f.text !== String(n)) bad.push(f.field + ' ' + f.text + ' vs ' + n);
      continue;
    }
    const v = at(expected, f.field);
    if (typeof v === 'boolean') { if (Number(f.raw) !== (v ? 1 : 0)) bad.push(f.field); continue; }
    if (v === undefined || !near(f.raw, v)) bad.push(f.field + ' raw ' + f.raw + ' vs ' + v);
  }
  check(p.name + ' summary figures equal the report', figs.length >= 10 && bad.length === 0, bad.join('; ') || figs.length + ' figures');
  /* the summary's lists read as text: the syncs' waits as bands with their counts */
  const kv = await page.$$eval('#panel-summary dl.kv dd', (ds) => ds.map((d) => d.textContent));
  const raw = /\bnull\b|\[object|\{"/;
  check(p.name + ' summary lists read as text', kv.every((t) => !raw.test(t)), JSON.stringify(kv.filter((t) => raw.test(t)).slice(0, 2)));
  const sync = expected.summary.sync;
  if (sync && sync.count > 0) {
    const last = sync.waits[sync.waits.length - 1];
    check(p.name + ' syncs by how long they waited', kv.some((t) => t.includes(' or more: ' + last.count) && t.includes(' to ')),
      JSON.stringify(kv.filter((t) => t.includes('more'))));
  }
  const steps = figs.find((f) => f.field === 'summary.steps');
  check(p.name + ' step count shown', steps && steps.text === String(expected.summary.steps).replace(/\B(?=(\d{3})+(?!\d))/g, ','),
    steps && steps.text);

  await page.click('#tab-operations');
  const rows = await page.$$eval('#panel-operations table.sortable tbody tr', (trs) => trs.map((tr) => {
    const cell = (k) => tr.querySelector('td[data-key="' + k + '"]');
    return { name: cell('name').textContent, calls: cell('calls').getAttribute('data-raw'),
      self: cell('self_ns').getAttribute('data-raw'), incl: cell('incl_ns').getAttribute('data-raw') };
  }));
  const ops = expected.operations;
  const opBad = [];
  if (rows.length !== ops.length) opBad.push(rows.length + ' rows for ' + ops.length + ' operations');
  rows.forEach((r, i) => {
    const o = ops[i];
    if (!o || r.name !== o.name || !near(r.calls, o.calls) || !near(r.self, o.self_ns) || !near(r.incl, o.incl_ns))
      opBad.push('row ' + i + ' ' + JSON.stringify(r));
  });
  check(p.name + ' operations table equals the report', opBad.length === 0, opBad.slice(0, 3).join('; '));
  const bars = await page.$$eval('#panel-operations svg rect[data-value]', (rs) => rs.map((r) => Number(r.getAttribute('data-value'))));
  const top = ops.slice().sort((a, b) => b.self_ns - a.self_ns).slice(0, bars.length).map((o) => o.self_ns);
  check(p.name + ' operations bars are self times', bars.length > 0 && bars.every((v, i) => near(v, top[i])), JSON.stringify(bars.slice(0, 3)));
  // sorting by calls: descending on the first click, ascending on the second
  const callsColumn = () => page.$$eval('#panel-operations table.sortable tbody td[data-key="calls"]',
    (tds) => tds.map((t) => Number(t.getAttribute('data-raw'))));
  await page.click('#panel-operations th[data-key="calls"]');
  const down = await callsColumn();
  await page.click('#panel-operations th[data-key="calls"]');
  const up = await callsColumn();
  check(p.name + ' operations table sorts', down.every((v, i) => i === 0 || down[i - 1] >= v) &&
    up.every((v, i) => i === 0 || up[i - 1] <= v) && up.length === ops.length, JSON.stringify(down.slice(0, 5)));
  await page.click('#panel-operations button[data-metric="incl_ns"]');
  const inclBars = await page.$$eval('#panel-operations svg rect[data-value]', (rs) => rs.map((r) => Number(r.getAttribute('data-value'))));
  const topIncl = ops.slice().sort((a, b) => b.incl_ns - a.incl_ns).slice(0, inclBars.length).map((o) => o.incl_ns);
  check(p.name + ' inclusive toggle', inclBars.length > 0 && inclBars.every((v, i) => near(v, topIncl[i])), JSON.stringify(inclBars.slice(0, 3)));

  await page.click('#tab-memory');
  const slopes = await page.$$eval('#panel-memory [data-series]', (cs) => cs.map((c) => ({ series: c.getAttribute('data-series'),
    slope: c.querySelector('[data-slope]') ? c.querySelector('[data-slope]').getAttribute('data-slope') : null })));
  const memBad = [];
  for (const m of expected.memory || []) {
    const s = slopes.find((x) => x.series === m.series);
    if (!s) memBad.push('no chart for ' + m.series);
    else if (m.fit && !near(s.slope, m.fit.axis === 'time' ? m.fit.slope_bytes_per_s : m.fit.slope_bytes_per_step))
      memBad.push(m.series + ' slope ' + s.slope);
  }
  check(p.name + ' memory charts and slopes equal the report', memBad.length === 0 && slopes.length === (expected.memory || []).length, memBad.join('; '));
  // a projected out of memory far past the data: the data keep their scale (the x axis ends
  // a quarter past them) and the projection is a marked extension naming where it leads
  for (const m of (expected.memory || []).filter((x) => isFinite(x.projected_oom_step) && x.projected_oom_step > 2 * x.points[x.points.length - 1].step)) {
    const card = await page.$eval('#panel-memory [data-series="' + m.series + '"]', (c) => ({ projection: c.getAttribute('data-projection'),
      text: c.querySelector('svg').textContent }));
    check(p.name + ' ' + m.series + ' projection drawn as an extension', card.projection === 'beyond' &&
      card.text.includes('projection → out of memory ≈ step ' + Math.round(m.projected_oom_step).toLocaleString('en-US')) &&
      !card.text.includes('capacity '), JSON.stringify(card).slice(0, 300));
  }

  // hover shows exact figures; a click on a frame zooms the icicle into it
  await page.click('#tab-callgraph');
  const frame = page.locator('#panel-callgraph .flame g.frame[data-name="forward"] rect').first();
  await frame.hover();
  const tip = await page.$eval('#tooltip', (t) => (t.hidden ? '' : t.textContent));
  check(p.name + ' hover shows figures', /forward/.test(tip) && /inclusive/.test(tip), tip);
  const before = await page.$$eval('#panel-callgraph .flame g.frame', (gs) => gs.length);
  await frame.click();
  const zoomed = await page.$eval('#panel-callgraph .flame svg', (svg) => {
    const rects = Array.from(svg.querySelectorAll('g.frame')).map((g) => ({ name: g.getAttribute('data-name'),
      w: Number(g.querySelector('rect').getAttribute('width')) }));
    return { n: rects.length, forward: rects.filter((r) => r.name === 'forward').map((r) => r.w),
      width: Number(svg.getAttribute('width')) };
  });
  check(p.name + ' click zooms the icicle', zoomed.n < before && zoomed.forward.some((w) => w >= zoomed.width - 2),
    JSON.stringify(zoomed) + ' of ' + before);
  if (p.served) {
    await page.click('#tab-timeline');
    const status = () => page.$eval('#panel-timeline .chart-caption', (c) => c.textContent);
    const s0 = await status();
    await page.click('#panel-timeline button:has-text("Zoom in")');
    let s1 = s0; /* polled from here: waitForFunction would need eval, which the CSP forbids */
    for (let i = 0; i < 100 && (s1 === s0 || /Loading/.test(s1)); i++) {
      await page.waitForTimeout(100);
      s1 = await status();
    }
    check(p.name + ' timeline zooms and refetches', s1 !== s0 && /events from/.test(s1), s0 + ' -> ' + s1);
  }

  await page.click('#tab-bottlenecks');
  const titles = await page.$$eval('#panel-bottlenecks .finding h3', (hs) => hs.map((x) => x.textContent));
  const want = (expected.bottlenecks || []).map((b) => b.severity + ' ' + b.title);
  check(p.name + ' bottlenecks equal the report', JSON.stringify(titles) === JSON.stringify(want), JSON.stringify(titles.slice(0, 2)));
  await checkEvidenceText(p, page);
}

// every finding's evidence as a person reads it: a list of gaps as their start and
// duration, never the JSON of its objects
async function checkEvidenceText(p, page) {
  await page.click('#tab-bottlenecks');
  const evidence = await page.$$eval('#panel-bottlenecks .finding dd', (ds) => ds.map((d) => d.textContent));
  const json = /\{"[a-z_]+":/;
  check(p.name + ' evidence is read as text, never JSON', evidence.length > 0 && evidence.every((t) => !json.test(t)),
    JSON.stringify(evidence.filter((t) => json.test(t)).slice(0, 2)));
  return evidence;
}

// A report whose series were decimated (more steps than its point limit):
// the charts say so, and the timeline still finds a step the report does
// not list.
async function checkLong(p, page) {
  const rep = await page.evaluate(() => fetch('/api/report').then((r) => r.json()));
  const total = rep.summary.steps, listed = rep.steps.filter((st) => !st.incomplete).map((st) => st.number);
  await page.click('#tab-steps');
  const xTicks = await page.$$eval('#panel-steps svg .axis text[text-anchor="middle"]:not(.axis-label)', (ts) => ts.map((t) => t.textContent));
  check(p.name + ' steps chart ticks name whole steps', xTicks.length > 1 && xTicks.every((t) => /^-?[0-9]+(e\+?[0-9]+)?$/.test(t) &&
    Number.isInteger(Number(t))), JSON.stringify(xTicks));
  const stepsCap = await page.$eval('#panel-steps .thinned', (c) => c.textContent).catch(() => '');
  check(p.name + ' steps chart says it is thinned', listed.length < total &&
    stepsCap.includes('Showing ' + listed.length.toLocaleString('en-US') + ' of ' + total.toLocaleString('en-US') + ' steps'), stepsCap);
  await page.click('#tab-memory');
  const memCaps = await page.$$eval('#panel-memory [data-series] .thinned', (cs) => cs.map((c) => c.textContent));
  check(p.name + ' memory charts say they are thinned', memCaps.length === rep.memory.length && memCaps.every((c) => /fit used all/.test(c)),
    JSON.stringify(memCaps));
  const counterCaps = await page.$$eval('#panel-memory [data-counter] .thinned', (cs) => cs.map((c) => c.textContent));
  check(p.name + ' counter charts say they are thinned', counterCaps.length === rep.counters.length &&
    counterCaps.every((c) => c.includes(' of ' + rep.counters[0].samples.toLocaleString('en-US') + ' samples')), JSON.stringify(counterCaps));
  await page.click('#tab-steps');
  const outliers = (rep.bottlenecks.find((b) => b.rule === 'step_outliers') || { evidence: { count: 0 } }).evidence.count;
  const shown = await page.$eval('#panel-steps .figure[data-field="steps.outliers"]', (f) => Number(f.getAttribute('data-raw')));
  check(p.name + ' outlier count is the whole run\'s', outliers > 0 && shown === outliers, shown + ' shown, ' + outliers + ' found');
  let missing = listed[0] + 1;
  while (listed.includes(missing) || listed.includes(missing + 1)) missing++;
  await page.click('#tab-timeline');
  await page.waitForSelector('#panel-timeline svg rect.event', { timeout: 15000 });
  const status = () => page.$eval('#panel-timeline .chart-caption', (c) => c.textContent);
  const s0 = await status();
  await page.fill('#panel-timeline input[aria-label="first step"]', String(missing));
  await page.fill('#panel-timeline input[aria-label="number of steps"]', '2');
  await page.click('#panel-timeline button:has-text("Show steps")');
  let s1 = s0;
  for (let i = 0; i < 100 && (s1 === s0 || /Loading/.test(s1)); i++) {
    await page.waitForTimeout(100);
    s1 = await status();
  }
  const labels = await page.$$eval('#panel-timeline svg text.cell-label', (ts) => ts.map((t) => t.textContent));
  check(p.name + ' timeline shows a step the report does not list', labels.includes('step ' + missing),
    'step ' + missing + ' not among ' + labels.filter((t) => t.startsWith('step')).join('|') + ' (' + s1 + ')');
}

// nosteps.prof has no step and host.rss on a timer: its memory chart is over
// time, whatever the toggle, with every sample and the fit over time.
async function checkNoSteps(p, page) {
  const rep = await page.evaluate(() => JSON.parse(document.getElementById('prof-data').textContent));
  const m = (rep.reports ? rep.reports[0] : rep).memory[0];
  await page.click('#tab-memory');
  await page.waitForSelector('#panel-memory[data-rendered="true"]');
  const card = await page.$eval('#panel-memory [data-series="host.rss"]', (c) => ({ axis: c.getAttribute('data-axis'),
    points: Number(c.getAttribute('data-points')), paths: c.querySelectorAll('svg path.series').length,
    slope: c.querySelector('[data-slope]') ? c.querySelector('[data-slope]').getAttribute('data-slope') : null }));
  check(p.name + ' memory without steps is drawn over time', card.axis === 'time' && card.points === m.points.length &&
    card.points > 300 && card.paths === 2, JSON.stringify(card));
  check(p.name + ' memory fit over time', m.fit && m.fit.axis === 'time' && near(card.slope, m.fit.slope_bytes_per_s),
    JSON.stringify(card) + ' ' + JSON.stringify(m.fit));
}

// xss.prof ends as prof_stop ends a run, with an incomplete step after its
// 40 steps: no step (rules.md §1), neither counted nor drawn.
async function checkIncomplete(p, page) {
  await page.click('#tab-steps');
  const cap = await page.$eval('#panel-steps .chart-caption[data-trend]', (c) => c.textContent).catch(() => '');
  check(p.name + ' steps chart leaves the incomplete step out', / over 40 steps/.test(cap), cap);
  await page.click('#tab-summary');
  const n = await page.$eval('#panel-summary .figure[data-field="summary.steps"]', (f) => f.getAttribute('data-raw'));
  check(p.name + ' step count leaves the incomplete step out', n === '40', n);
}

async function checkXss(p, page, dialogs) {
  for (const id of await tabs(page)) {
    await page.click('#tab-' + id);
    await page.waitForSelector('#panel-' + id + '[data-rendered="true"]');
  }
  await page.waitForTimeout(500);
  const found = await page.evaluate((xss) => ({
    text: document.body.textContent.includes(xss) || Array.from(document.querySelectorAll('svg text')).some((t) => t.textContent.includes(xss.slice(0, 12))),
    imgs: document.querySelectorAll('img').length,
    scripts: document.querySelectorAll('script:not([type="application/json"])').length,
    svgHandlers: document.querySelectorAll('svg [onload], [onerror]').length,
    lanes: Array.from(document.querySelectorAll('#panel-timeline svg text')).map((t) => t.textContent),
  }), XSS);
  check(p.name + ' hostile names render as text', found.text, 'name not found as text');
  check(p.name + ' no element made from a name', found.imgs === 0 && found.svgHandlers === 0 && found.scripts === 1,
    JSON.stringify(found));
  check(p.name + ' no dialog opened', dialogs.length === 0, dialogs.join(','));
  if (p.report) { /* the HTA table holds the report's figures */
    const rep = JSON.parse(readFileSync(p.report, 'utf8'));
    await page.click('#tab-summary');
    const cells = await page.$$eval('#panel-summary table[data-table="hta"] tbody tr', (rows) =>
      rows.map((r) => Array.from(r.querySelectorAll('td[data-field]')).map((c) => [c.getAttribute('data-field'), c.getAttribute('data-raw')])));
    const gpus = rep.summary.gpu.filter((g) => g.hta.window_ns > 0);
    const bad = [];
    gpus.forEach((g, i) => {
      for (const [field, raw] of cells[i] || []) {
        const want = field.startsWith('kernel_types.')
          ? g.hta.kernel_types.find((k) => 'kernel_types.' + k.type === field).share : g.hta[field];
        if (!near(raw, want)) bad.push(g.device + ' ' + field + ' ' + raw + ' vs ' + want);
      }
    });
    check(p.name + ' HTA table equals the report', gpus.length > 0 && cells.length === gpus.length &&
      cells.every((r) => r.length === 13) && bad.length === 0, bad.join('; ') || JSON.stringify(cells[0]));
  }
  if (p.report) { /* GPU records, none joined to a launch: no GPU time to weigh the flame graph by */
    const rep = JSON.parse(readFileSync(p.report, 'utf8'));
    await page.click('#tab-callgraph');
    await page.click('#panel-callgraph button[data-weight="gpu_ns"]');
    const empty = await page.$eval('#panel-callgraph', (x) => ({ text: (x.querySelector('.empty') || {}).textContent || '',
      frames: x.querySelectorAll('g.frame').length }));
    check(p.name + ' flame graph by GPU time says none was launched', rep.summary.launches.joined === 0 &&
      /No GPU time was launched/.test(empty.text) && empty.frames === 0, JSON.stringify(empty));
    await page.click('#panel-callgraph button[data-weight="incl_ns"]');
  }
  if (p.served)
    check(p.name + ' timeline has GPU stream lanes', found.lanes.some((t) => t.startsWith('GPU 0 stream')) &&
      found.lanes.some((t) => t.includes('<script>')), found.lanes.slice(0, 8).join('|'));
}

// The page's duration format (viewer/js/dom.js fmtNs), for the texts it shows.
function fmtNs(ns) {
  if (ns === null || ns === undefined || !isFinite(ns)) return '–';
  const u = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']].find((x) => Math.abs(ns) >= x[0]) || [1, 'ns'];
  const v = ns / u[0], a = Math.abs(v);
  return (a === 0 ? '0' : v.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2)) + ' ' + u[1];
}
function group(n) { return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
// A node's GPU time launched in it or below (rules.md §3.2): its gpu_ns, or
// (the tree's root, which has none) its children's.
function gpuOf(n) { return typeof n.gpu_ns === 'number' ? n.gpu_ns : (n.children || []).reduce((a, c) => a + gpuOf(c), 0); }
// The icicle's frames, in drawing order, for a weight: each child's width
// its share of its parent's, frames under half a pixel left out.
function icicleFrames(root, value, W) {
  const out = [];
  const lay = (n, x, w, d) => {
    out.push({ name: n.name, value: value(n), x, w, d });
    const sum = Math.max(value(n), (n.children || []).reduce((a, c) => a + value(c), 0));
    let cx = x;
    for (const c of n.children || []) {
      const cw = sum > 0 ? w * value(c) / sum : 0;
      if (cw >= 0.5) lay(c, cx, cw, d + 1);
      cx += cw;
    }
  };
  lay(root, 0, W, 0);
  return out;
}

// A profile with GPU time joined to the operations that launched it
// (rules.md §3.2): the operations table's GPU columns and their sorting, the
// bars by GPU time, the flame graph weighted by GPU time, and the launch
// statistics, all equal to the report's.
async function checkGpu(p, page) {
  const rep = JSON.parse(readFileSync(p.report, 'utf8'));
  const ops = rep.operations;
  const sortedByGpu = rep.operations_order === 'gpu';
  const launched = ops.filter((o) => o.gpu_ns > 0);
  check(p.name + ' fixture has GPU time per operation', launched.length >= 5 && !!rep.summary.launches &&
    ops.some((o) => o.kind === 'gpu' && o.gpu_ns === undefined), launched.length + ' operations launched GPU work');

  await page.click('#tab-operations');
  const heads = await page.$$eval('#panel-operations table.sortable th', (ths) => ths.map((t) => t.getAttribute('data-key')));
  check(p.name + ' operations table has GPU columns', ['gpu_ns', 'gpu_self_ns', 'gpu_kernels'].every((k) => heads.includes(k)),
    JSON.stringify(heads));
  const gpuRows = () => page.$$eval('#panel-operations table.sortable tbody tr', (trs) => trs.map((tr) => {
    const cell = (k) => tr.querySelector('td[data-key="' + k + '"]');
    return { name: cell('name').textContent, gpu: cell('gpu_ns').getAttribute('data-raw'),
      self: cell('gpu_self_ns').getAttribute('data-raw'), kernels: cell('gpu_kernels').getAttribute('data-raw'),
      text: cell('gpu_ns').textContent };
  }));
  const same = (raw, v) => (v === undefined ? raw === null : near(raw, v));
  const rowsEqual = (rows, want) => {
    const bad = [];
    if (rows.length !== want.length) bad.push(rows.length + ' rows for ' + want.length + ' operations');
    rows.forEach((r, i) => {
      const o = want[i];
      if (!o || r.name !== o.name || !same(r.gpu, o.gpu_ns) || !same(r.self, o.gpu_self_ns) || !same(r.kernels, o.gpu_kernels) ||
        r.text !== fmtNs(o.gpu_ns)) bad.push('row ' + i + ' ' + JSON.stringify(r));
    });
    return bad;
  };
  /* first in the report's order: by self time, or by GPU time (analyze --sort gpu) */
  const rows = await gpuRows();
  const bad = rowsEqual(rows, ops);
  check(p.name + ' GPU columns equal the report', bad.length === 0, bad.slice(0, 3).join('; '));
  const pressed = await page.$eval('#panel-operations button[aria-pressed="true"]', (b) => b.getAttribute('data-metric'));
  check(p.name + ' bars start as the report is ordered', pressed === (sortedByGpu ? 'gpu_ns' : 'self_ns'), pressed);
  /* by GPU total, largest first: the header, or the bars' toggle */
  const byGpu = ops.slice().sort((a, b) => (b.gpu_ns || 0) - (a.gpu_ns || 0));
  if (!sortedByGpu) {
    await page.click('#panel-operations th[data-key="gpu_ns"]');
    const sorted = rowsEqual(await gpuRows(), byGpu);
    check(p.name + ' operations table sorts by GPU time', sorted.length === 0, sorted.slice(0, 3).join('; '));
  }
  await page.click('#panel-operations button[data-metric="gpu_ns"]');
  const bars = await page.$$eval('#panel-operations svg rect[data-value]', (rs) => rs.map((r) => Number(r.getAttribute('data-value'))));
  const top = launched.map((o) => o.gpu_ns).sort((a, b) => b - a).slice(0, 25);
  check(p.name + ' bars by GPU time equal the report', bars.length === top.length && bars.every((v, i) => near(v, top[i])),
    JSON.stringify(bars.slice(0, 4)) + ' vs ' + JSON.stringify(top.slice(0, 4)));
  const after = rowsEqual(await gpuRows(), byGpu);
  check(p.name + ' GPU time bars order the table by GPU time', after.length === 0, after.slice(0, 3).join('; '));

  await page.click('#tab-callgraph');
  const tree = rep.call_tree;
  const frames = () => page.$eval('#panel-callgraph .flame svg', (svg) => ({ width: Number(svg.getAttribute('width')),
    weight: svg.closest('.card').getAttribute('data-weight'),
    frames: Array.from(svg.querySelectorAll('g.frame')).map((g) => {
      const r = g.querySelector('rect');
      return { name: g.getAttribute('data-name'), value: Number(g.getAttribute('data-value')), x: Number(r.getAttribute('x')),
        y: Number(r.getAttribute('y')), w: Number(r.getAttribute('width')) };
    }) }));
  const framesEqual = (got, value) => {
    const want = icicleFrames(tree, value, got.width);
    const bad = [];
    if (got.frames.length !== want.length) bad.push(got.frames.length + ' frames for ' + want.length);
    got.frames.forEach((f, i) => {
      const e = want[i];
      if (!e || f.name !== e.name || !near(f.value, e.value) || Math.abs(f.x - (e.x + 0.5)) > 0.01 ||
        Math.abs(f.w - Math.max(0.5, e.w - 1)) > 0.01 || Math.abs(f.y - (e.d * 20 + 0.5)) > 0.01)
        bad.push('frame ' + i + ' ' + JSON.stringify(f) + ' vs ' + JSON.stringify(e));
    });
    return bad;
  };
  /* operations that launched nothing but took CPU time: drawn by CPU time, not by GPU time */
  const names = new Map();
  (function walk(n) { const e = names.get(n.name) || { gpu: 0, incl: 0 }; e.gpu = Math.max(e.gpu, gpuOf(n));
    e.incl = Math.max(e.incl, n.incl_ns || 0); names.set(n.name, e); (n.children || []).forEach(walk); })(tree);
  const cpuOnly = Array.from(names.keys()).filter((k) => names.get(k).gpu === 0 && names.get(k).incl >= 0.01 * tree.incl_ns);
  if (!sortedByGpu) {
    const cpu = await frames();
    const cbad = framesEqual(cpu, (n) => n.incl_ns || 0);
    check(p.name + ' flame graph starts weighted by CPU time', cpu.weight === 'incl_ns' && cbad.length === 0 &&
      cpuOnly.length > 0 && cpuOnly.every((k) => cpu.frames.some((f) => f.name === k)), cbad.slice(0, 2).join('; ') || JSON.stringify(cpuOnly));
    await page.click('#panel-callgraph button[data-weight="gpu_ns"]');
  }
  const gpu = await frames();
  const gbad = framesEqual(gpu, gpuOf);
  check(p.name + ' flame graph weighted by GPU time equals the report', gpu.weight === 'gpu_ns' && gbad.length === 0 &&
    near(gpu.frames[0].value, tree.children.reduce((a, c) => a + (c.gpu_ns || 0), 0)) && gpu.frames.length > 5 &&
    cpuOnly.every((k) => !gpu.frames.some((f) => f.name === k)), gbad.slice(0, 2).join('; ') || gpu.frames.length + ' frames');
  const sun = await page.$eval('#panel-callgraph svg[aria-label="Call tree sunburst"] path[data-name]', (x) => Number(x.getAttribute('data-value')));
  check(p.name + ' sunburst weighted by GPU time', near(sun, gpuOf(tree)), sun + ' vs ' + gpuOf(tree));
  /* hover: the frame that launched the most below the threads shows its GPU figures */
  let best = null;
  for (const th of tree.children || []) for (const c of th.children || []) if (!best || (c.gpu_ns || 0) > best.gpu_ns) best = c;
  const idx = gpu.frames.findIndex((f) => f.name === best.name && f.y > 40);
  await page.locator('#panel-callgraph .flame g.frame').nth(idx).hover();
  const tip = await page.$eval('#tooltip', (t) => (t.hidden ? '' : Array.from(t.children).map((c) => c.textContent)));
  const want = [best.name, 'GPU launched: ' + fmtNs(best.gpu_ns) + ' (' + (best.gpu_ns / gpuOf(tree) * 100).toFixed(1) + '%)',
    'GPU self: ' + fmtNs(best.gpu_self_ns), 'kernels: ' + group(best.gpu_kernels)];
  check(p.name + ' flame graph tooltip shows GPU time', Array.isArray(tip) && tip[0] === want[0] && want.slice(1).every((l) => tip.includes(l)),
    JSON.stringify(tip) + ' wants ' + JSON.stringify(want));
  await page.click('#panel-callgraph button[data-weight="incl_ns"]');
  const back = await frames();
  check(p.name + ' flame graph back to CPU time', back.weight === 'incl_ns' && framesEqual(back, (n) => n.incl_ns || 0).length === 0,
    back.frames.length + ' frames');

  await page.click('#tab-summary');
  const L = rep.summary.launches;
  const figs = await page.$$eval('#panel-summary .figures[data-section="launches"] .figure', (fs) =>
    fs.map((f) => ({ field: f.getAttribute('data-field'), raw: f.getAttribute('data-raw'), label: f.querySelector('.label').textContent,
      text: f.querySelector('.value').textContent })));
  const fbad = figs.filter((f) => !near(f.raw, at(rep, f.field))).map((f) => f.field + ' ' + f.raw);
  const text = (label) => (figs.find((f) => f.label === label) || {}).text;
  const wantText = { 'Records joined': group(L.joined) + ' of ' + group(L.records),
    'Launched outside regions': fmtNs(L.outside_ns), 'Short kernels (< 10 µs)': group(L.short_kernels) + ', ' + fmtNs(L.short_kernel_ns),
    'Kernel launches': group(L.all.count), 'Launch call mean': fmtNs(L.all.cpu.mean_ns), 'Launch call p95': fmtNs(L.all.cpu.p95_ns),
    'Launch delay median': fmtNs(L.all.delay.p50_ns), 'Launch delay p95': fmtNs(L.all.delay.p95_ns) };
  for (const k of Object.keys(wantText)) if (text(k) !== wantText[k]) fbad.push(k + ': ' + text(k) + ' vs ' + wantText[k]);
  check(p.name + ' launch summary equals the report', figs.length === 10 && fbad.length === 0, fbad.join('; ') || figs.length + ' figures');
  const table = await page.$$eval('#panel-summary table[data-table="launches"] tbody tr', (trs) => trs.map((tr) => ({
    label: tr.querySelector('td').textContent,
    cells: Array.from(tr.querySelectorAll('td[data-field]')).map((c) => [c.getAttribute('data-field'), c.getAttribute('data-raw')]) })));
  const want2 = [['all streams', L.all]].concat(L.streams.map((st) => ['GPU ' + st.device + ' stream ' + st.stream, st]));
  const tbad = [];
  if (table.length !== want2.length) tbad.push(table.length + ' rows for ' + want2.length);
  table.forEach((r, i) => {
    const w = want2[i];
    if (!w || r.label !== w[0] || r.cells.length !== 8) tbad.push('row ' + i + ' ' + r.label);
    else for (const [field, raw] of r.cells) if (!near(raw, at(w[1], field))) tbad.push(w[0] + ' ' + field + ' ' + raw);
  });
  check(p.name + ' kernel launch statistics equal the report', tbad.length === 0, tbad.join('; '));
}

/* The cells of the heat map of field: [rank, column, raw value, tooltip]
 * each, and how they differ from the report's rank_steps. */
async function heatCells(page, rs, field) {
  const cells = await page.$$eval('#panel-summary svg.heatmap[data-field="' + field + '"] rect.heat', (rects) => rects.map((r) =>
    [Number(r.getAttribute('data-rank')), Number(r.getAttribute('data-col')), r.getAttribute('data-raw'),
      r.querySelector('title').textContent]));
  const bad = [];
  if (cells.length !== rs.ranks.length * rs.columns) bad.push(cells.length + ' cells for ' + rs.ranks.length + ' x ' + rs.columns);
  for (const [rank, col, raw] of cells) {
    const want = rs.ranks.find((r) => r.rank === rank)[field][col];
    if (want === null ? raw !== '' : !near(raw, want)) bad.push('rank ' + rank + ' column ' + col + ': ' + raw + ' vs ' + want);
  }
  return { cells, bad };
}

/* A job's ranks: the ranks table and the heat maps as the report has them,
 * and the described rank's recording. */
async function checkJob(p, page) {
  const rep = JSON.parse(readFileSync(p.report, 'utf8'));
  const rs = rep.rank_steps;
  await page.click('#tab-summary');
  const { cells, bad } = await heatCells(page, rs, 'mean_ns');
  check(p.name + ' heat map cells equal the report', bad.length === 0, bad.slice(0, 3).join('; '));
  const slow = cells.filter((c) => c[0] === 2).map((c) => Number(c[2]));
  const fast = cells.filter((c) => c[0] === 0).map((c) => Number(c[2]));
  check(p.name + ' heat map shows the slow rank', slow.length > 0 && slow.every((v, i) => v > 1.2 * fast[i]),
    JSON.stringify([slow.slice(0, 2), fast.slice(0, 2)]));
  const fills = await page.$$eval('#panel-summary svg.heatmap[data-field="mean_ns"] rect.heat', (rs) => rs.map((r) => r.getAttribute('data-rank') + ' ' + r.getAttribute('fill')));
  const fill = (rank) => new Set(fills.filter((f) => f.startsWith(rank + ' ')).map((f) => f.split(' ').slice(1).join(' ')));
  check(p.name + ' heat map darker where slower', fill(2).size === 1 && fill(0).size === 1 && [...fill(2)][0] !== [...fill(0)][0],
    JSON.stringify([[...fill(2)], [...fill(0)]]));
  const tip = cells.find((c) => c[0] === 1 && c[1] === 0);
  check(p.name + ' heat map cells say their steps', tip && /^rank 1, steps [0-9]+\u2013[0-9]+: mean /.test(tip[3]), tip && tip[3]);
  const { cells: idle, bad: badIdle } = await heatCells(page, rs, 'gpu_idle_share');
  check(p.name + ' GPU idle heat map cells equal the report', badIdle.length === 0, badIdle.slice(0, 3).join('; '));
  const idleTip = idle.find((c) => c[0] === 2 && c[1] === 0);
  check(p.name + ' GPU idle heat map says the share', idleTip && /: GPU idle 60\.9%/.test(idleTip[3]), idleTip && idleTip[3]);
  const rows = await page.$$eval('#panel-summary table[data-table="ranks"] tbody tr', (trs) => trs.length);
  check(p.name + ' a row per rank', rows === rep.ranks.length, rows + ' rows');
  const rec = await page.$eval('#panel-summary', (x) => x.textContent);
  const described = rep.ranks.find((k) => k.described);
  check(p.name + ' recording of the rank described', described && described.rank === 2 && rec.includes(described.path), rec.slice(-300));
  const links = await page.$$eval('#panel-summary a.rank-link', (as) => as.map((a) => a.getAttribute('href')));
  if (!p.served) {
    check(p.name + ' no rank links without the server', links.length === 0, JSON.stringify(links));
    return;
  }
  check(p.name + ' a link to every other rank', JSON.stringify(links.sort()) ===
    JSON.stringify(rep.ranks.filter((k) => !k.described).map((k) => '?rank=' + k.rank).sort()), JSON.stringify(links));
  await checkRankClick(p, page, rep);
}

/* Served, a click on a rank shows that rank in full: its view from the
 * server (the ranks table marks it, its recording and its own timeline),
 * and a link goes back; a heat map cell does the same. */
async function checkRankClick(p, page, rep) {
  const events = [];
  page.on('request', (r) => { if (r.url().includes('/api/events')) events.push(r.url()); });
  const zero = rep.ranks.find((k) => k.rank === 0);
  await Promise.all([page.waitForNavigation(), page.click('#panel-summary a.rank-link[href="?rank=0"]')]);
  await page.waitForSelector('body[data-ready]', { timeout: 15000 });
  await page.click('#tab-summary');
  const shown = await page.evaluate(() => ({
    ready: document.body.getAttribute('data-ready'),
    search: location.search,
    current: Array.from(document.querySelectorAll('#panel-summary table[data-table="ranks"] tr[aria-current="true"]')).map((t) => t.getAttribute('data-rank')),
    nav: (document.querySelector('#panel-summary [data-section="rank-nav"]') || {}).textContent || '',
    text: document.querySelector('#panel-summary').textContent,
  }));
  check(p.name + ' click shows rank 0 in full', shown.ready === 'true' && shown.search === '?rank=0' &&
    JSON.stringify(shown.current) === '["0"]' && shown.text.includes(zero.path) && /^Showing rank 0 in full/.test(shown.nav),
    JSON.stringify(shown).slice(0, 400));
  await page.click('#tab-operations');
  await page.waitForSelector('#panel-operations[data-rendered="true"]', { timeout: 10000 });
  const opsText = await page.$eval('#panel-operations', (x) => x.textContent);
  check(p.name + ' rank 0 has its own operations', !opsText.includes('rank2_only') && opsText.includes('backward'), opsText.slice(0, 200));
  await page.click('#tab-timeline');
  await page.waitForSelector('#panel-timeline svg rect.event', { timeout: 15000 }).catch(() => {});
  const drawn = await page.$$eval('#panel-timeline svg rect.event', (r) => r.length);
  check(p.name + ' rank 0 timeline from its own profile', drawn > 0 && events.length > 0 && events.every((u) => /[?&]rank=0(&|$)/.test(u)),
    drawn + ' events; ' + events.slice(0, 2).join(' '));
  await page.click('#tab-summary');
  await Promise.all([page.waitForNavigation(), page.click('#panel-summary [data-section="rank-nav"] a')]);
  await page.waitForSelector('body[data-ready]', { timeout: 15000 });
  await page.click('#tab-summary');
  const back = await page.evaluate(() => ({ search: location.search,
    current: Array.from(document.querySelectorAll('#panel-summary table[data-table="ranks"] tr[aria-current="true"]')).map((t) => t.getAttribute('data-rank')) }));
  check(p.name + ' back to the rank that holds the job back', back.search === '' && JSON.stringify(back.current) === '["2"]', JSON.stringify(back));
  await Promise.all([page.waitForNavigation(), page.click('#panel-summary svg.heatmap[data-field="mean_ns"] rect.heat[data-rank="3"][data-col="0"]')]);
  await page.waitForSelector('body[data-ready]', { timeout: 15000 });
  const cell = await page.evaluate(() => location.search);
  check(p.name + ' a heat map cell shows its rank', cell === '?rank=3', cell);
}

for (const p of config.pages) {
  let opened;
  try {
    opened = await openPage(p);
  } catch (e) {
    notOk(p.name + ' opens', e.message);
    continue;
  }
  const { page, problems, dialogs } = opened;
  ok(p.name + ' opens');
  try {
    if (p.kind === 'nosteps') await checkNoSteps(p, page);
    else await visitTabs(p, page);
    if (p.kind === 'demo') await checkFigures(p, page);
    if (p.kind === 'xss') await checkXss(p, page, dialogs);
    if (p.kind === 'xss') await checkIncomplete(p, page);
    if (p.kind === 'long') await checkLong(p, page);
    if (p.kind === 'gpu') await checkGpu(p, page);
    if (p.kind === 'job') await checkJob(p, page);
    if (p.kind === 'gpu') {
      const ev = await checkEvidenceText(p, page);
      check(p.name + ' gaps read as start and duration', ev.some((t) => /^start time [0-9.]+ [mµn]?s, duration [0-9.]+ [mµn]?s/.test(t)),
        JSON.stringify(ev.filter((t) => /start/.test(t)).slice(0, 1)));
    }
    if (p.kind === 'cut') {
      const banner = await page.$eval('#banners', (b) => b.textContent);
      check(p.name + ' warning banner', /not closed cleanly|cut short/.test(banner), banner);
    }
    if (p.kind === 'demo' || p.kind === 'compare') {
      await page.click('#tab-timeline');
      const t = await page.$eval('#panel-timeline', (x) => ({ text: x.textContent, events: x.querySelectorAll('rect.event').length }));
      if (p.served) check(p.name + ' timeline events from the server', t.events > 0, t.text.slice(0, 200));
      else check(p.name + ' timeline says it needs the server', /needs the server/.test(t.text), t.text.slice(0, 200));
    }
    if (p.kind === 'compare') {
      await page.click('#tab-compare');
      const c = await page.$eval('#panel-compare', (x) => ({ rows: x.querySelectorAll('table.compare-summary tbody tr').length,
        frames: x.querySelectorAll('svg g.frame').length, ops: x.querySelectorAll('table.sortable tbody tr').length }));
      check(p.name + ' comparison renders', c.rows > 3 && c.frames > 3 && c.ops > 0, JSON.stringify(c));
      const level = await page.$eval('#panel-compare', (x) => (x.querySelector('p.ops-level') || {}).textContent || '');
      check(p.name + ' comparison says the level the operations were held to',
        /noise floor(, a false discovery rate of [0-9.]+% over [0-9]+ operations tested| at p < [0-9.e-]+)/.test(level), level);
      const cols = await page.$$eval('#panel-summary .col', (cs) => cs.length).catch(() => 0);
      await page.click('#tab-summary');
      const cols2 = await page.$$eval('#panel-summary .col', (cs) => cs.length);
      check(p.name + ' both profiles side by side', cols2 === 2, 'columns ' + Math.max(cols, cols2));
    }
    // a narrow window: charts redraw to fit
    await page.setViewportSize({ width: 700, height: 900 });
    await page.waitForTimeout(400);
    const fits = await page.evaluate(() => Array.from(document.querySelectorAll('.panel:not([hidden]) .chart svg'))
      .every((s) => s.getBoundingClientRect().right <= window.innerWidth + 1));
    check(p.name + ' charts fit a narrow window', fits, 'an SVG is wider than the window');
    await page.screenshot({ path: join(config.screenshots, p.name + '-narrow.png'), fullPage: true });
    check(p.name + ' no errors, outside loads or CSP violations', problems.length === 0, problems.join(' | '));
  } catch (e) {
    notOk(p.name + ' checks ran', e.stack || e.message);
  }
  await page.close();
}

await context.close();
rmSync(userData, { recursive: true, force: true });
process.exit(failures ? 1 : 0);
