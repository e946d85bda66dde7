// Browser benchmark of the job overview's rank matrix (not a test): job summaries of 256, 1,201
// and 4,096 ranks (made here from the sample summary's two ranks, each copy its own role, rank and
// peak) are opened on the page (the file input, as "Open files…" does); reports the time from the
// input's change event to the first drawn overview, the latency of selecting a rank by a click on
// its matrix cell and on its row of the rank table and of hovering a cell (input event to the
// frame after it, p50/p95/max), the longest main-thread task during a hover sweep, the frame
// interval while panning the matrix sideways, the page's DOM node count, and the goals: select
// work p95 under 16 ms, and at 256 ranks hover work p95 under 16 ms and a pan that keeps up with
// the frames (interval p95 within 10 % of the 16.7 ms of 60 Hz). On a loaded machine the wall-clock
// "work" includes the time the page's thread waited for a core; the main-thread CPU per select
// (thread time of its tasks in a Chrome trace) does not.
//
//   node scripts/bench-matrix-page.mjs [--ranks 256,1201,4096] [--moves 200] [--clicks 20] [--single]
//                                      [--job DIR] [--baseline OTHER_WWW] [--runs N] [--trace] [--profile]
//
// Main-thread CPU (thread time from a Chrome trace, which holds under load) is given per select
// (the 120 ms after the press, and from the press to the click's first frame: what "paints in one
// frame" asks) and per hover move (from the move to the task after its frame).
// --trace records the main thread's tasks too and prints, per measure, what the slowest inputs'
// time went to (self time by kind: scripts by file and line, style, layout with its object
// counts, paint, layerisation, commit, GC), the slowest input step by step, and the tasks over
// 16.7 ms of CPU; --profile adds the JavaScript functions with the most self time (sampled).
// Both slow the page: take figures from runs without them.
//
// Select is what the user waits for after pressing: the pointer is brought over the cell or row
// first (as a hand does before it clicks; that hover is measured on its own, below), rests there
// REST ms, and the measure spans the press, the release, the click and what they cause.
//
// --baseline serves a second built page (a copy of www/ from an earlier commit) and measures it
// in turn with this one, --runs times each (alternating), so that the two compare in one run.
//
// --job DIR measures a real job instead (e.g. one written by `memlens generate profiler`): its
// folder is picked as "Open folder…" does, the page reads every rank, and the same measures run on
// its overview; the pan and hover goals apply whatever its size. A click there also opens the rank
// (its files are read again in the page's worker), so select costs more than on a summary; the
// bench also gives the time from the press until every view of the rank is drawn, and waits for
// it before the next click (outside the measured time).
//
// The file goes in by path, not through the tests' base64 drop: decoding tens of MB of base64 in
// the page took longer than the page's own work at 4,096 ranks.
//
// Needs a built page (npm run build). Real mouse input (playwright's mouse), 1440×900, threaded
// unless --single.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { machine, machineLine } from './machine.mjs';
import path from 'node:path';
import { root, openBrowser, startServer, engineThreads } from '../tests/browser/harness.mjs';
import { serve } from './serve.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SIZES = arg('ranks', '256,1201,4096').split(',').map(Number);
const MOVES = Number(arg('moves', 200));
// --single: the page without cross-origin isolation (the single-threaded engine).
const ISOLATE = !process.argv.includes('--single');
const CLICKS = Number(arg('clicks', 20));
const FIXTURE = path.join(root, 'fixtures', 'summary', 'msinsight-level0.memlens.json');
const JOB = arg('job', null);
const BASELINE = arg('baseline', null);
const RUNS = Number(arg('runs', 1));
/** How long the pointer rests over a cell or row before it presses (ms). */
const REST = 100;
// The view that holds the overview: the job summary's, or the profiler's for a job folder.
const SCOPE = JOB ? '[data-testid="ascend"]' : '[data-testid="jobsummary"]';

/** A job summary of `n` ranks in two roles (a third critics), peaks 1.00–1.05 GB, one outlier. */
function summary(n) {
  const base = JSON.parse(readFileSync(FIXTURE, 'utf8')).ranks;
  const ranks = [];
  for (let k = 0; k < n; k++) {
    const r = structuredClone(base[k % base.length]);
    const role = k % 3 === 0 ? 'critic' : 'actor';
    const peak = k === Math.floor(n / 2) + 1 ? 3_000_000_000 : 1_000_000_000 + ((k * 7919) % 50_000_000);
    Object.assign(r, { role, rank: k, peak_allocated_bytes: peak });
    Object.assign(r.report, { role, rank: k, peak_allocated_bytes: peak, unreleased_bytes: k * 1000, rows: k + 5 });
    ranks.push(r);
  }
  return JSON.stringify({ format: 'memlens-job-summary', version: 1, totals: {}, matrix: [], outliers: [], ranks });
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, p50: q(0.5), p95: q(0.95), max: s[s.length - 1] };
};
const ms = (v) => (v === undefined ? '–' : `${v.toFixed(1)} ms`);
const line = (s) => `p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, max ${ms(s.max)} (n ${s.n})`;

/**
 * After a click in a job (--job), waits until every view of the selected rank is drawn (each
 * view's hook names that rank, the tables and groups are ready) and returns the wall-clock ms from
 * the press (`window.__press`), or null after 60 s. The page before these hooks (a --baseline
 * without `data-views` or the canvases' `data-rank`) is waited for on the hooks it has: its
 * allocations table and its groups. Outside the measured time: the next click then begins on a
 * page at rest, not under the previous rank's drawing.
 */
async function viewsDrawn(page) {
  return page.evaluate((scope) => new Promise((resolve) => {
    const q = (s) => document.querySelector(`${scope} ${s}`);
    const i = q('[data-testid="ascend-matrix"]').dataset.selectedRankIndex;
    const hook = (node, value) => !node || node.dataset.rank === undefined || node.dataset.rank === value;
    const done = () => {
      const root = document.querySelector(scope);
      const table = q('[data-testid="ascend-table"]');
      return (root.dataset.views === undefined || (root.dataset.views === 'current' && root.dataset.rank === i))
        && hook(q('[data-testid="memory-canvas"]'), i) && hook(q('[data-testid="timeline-canvas"]'), i)
        && table.dataset.rank === i && table.dataset.state === 'ready'
        && ['live-groups', 'unreleased-groups'].every((t) => q(`[data-testid="${t}"]`).dataset.state === 'ready');
    };
    const t0 = window.__press;
    const poll = () => {
      if (done()) resolve(performance.now() - t0);
      else if (performance.now() - t0 > 60000) resolve(null);
      else requestAnimationFrame(() => setTimeout(poll, 0));
    };
    poll();
  }), SCOPE);
}

/**
 * The visible part of the matrix in viewport pixels, below its header row. The page first comes
 * to rest (a click in a job's overview scrolls smoothly to the rank's memory chart: a click
 * before that scroll ended landed on whatever it brought under the pointer).
 */
async function matrixBox(page) {
  await page.evaluate(async () => {
    let same = 0;
    let y = scrollY;
    for (let k = 0; k < 180 && same < 4; k++) {
      await new Promise((r) => requestAnimationFrame(r));
      same = scrollY === y ? same + 1 : 0;
      y = scrollY;
    }
  });
  return page.evaluate((scope) => {
    const m = document.querySelector(`${scope} [data-testid="ascend-matrix"]`);
    m.scrollIntoView({ block: 'center' });
    const r = m.getBoundingClientRect();
    const clip = m.closest('.scroll-x, .matrix-scroll')?.getBoundingClientRect() || r;
    const left = Math.max(r.left, clip.left) + 170;
    const right = Math.min(r.right, clip.right, innerWidth) - 10;
    return { left, right, top: Math.max(r.top, 0) + 30, bottom: Math.min(r.bottom, innerHeight) - 6 };
  }, SCOPE);
}

// Per input event, two figures: the latency (from the event's time stamp to a task queued after
// the next frame, so it includes the wait for that frame: up to one frame interval even when
// nothing is done) and the main-thread work it caused (its handlers, from the first listener on
// the window to the last, plus the frame after it: animation-frame callbacks, style, layout,
// paint), which is what has to stay under a frame for the page to keep up with the pointer.
const LISTEN = () => {
  window.__lat = { click: [], mousemove: [] };
  window.__work = { click: [], mousemove: [] };
  for (const type of ['click', 'mousemove']) {
    let start = 0;
    let end = 0;
    window.addEventListener(type, (ev) => {
      start = performance.now();
      requestAnimationFrame(() => {
        const f0 = performance.now();
        setTimeout(() => {
          const now = performance.now();
          window.__lat[type].push(now - ev.timeStamp);
          window.__work[type].push(end - start + (now - f0));
        }, 0);
      });
    }, { capture: true });
    window.addEventListener(type, () => { end = performance.now(); });
  }
  // The frame that shows a click's selection: marked `frame-K` (K: the input the bench set in
  // window.__k), the first task after the frame that follows the click.
  window.addEventListener('click', () => {
    const k = window.__k;
    requestAnimationFrame(() => setTimeout(() => performance.mark(`frame-${k}`), 0));
  }, { capture: true });
  window.__worst = 0;
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__worst = Math.max(window.__worst, e.duration); }).observe({ type: 'longtask' });
};

// Trace categories: the user-timing marks alone (light: the figures), or with --trace also the
// main thread's tasks and what runs in them (scripts, style, layout, paint, GC), for the breakdown
// of the slowest inputs.
const TRACE = process.argv.includes('--trace');
const CATEGORIES = TRACE
  ? 'blink.user_timing,toplevel,devtools.timeline,disabled-by-default-devtools.timeline,disabled-by-default-devtools.timeline.stack,v8.execute,v8'
  : 'blink.user_timing';

/**
 * Main-thread CPU time per input, from a Chrome trace: the difference of the main thread's clock
 * (`tts`: thread time, which stops while the thread waits for a core, so it holds under load)
 * between the marks `in-K` and `out-K` that `act(k)` sets around input K. Returns the times, and
 * with --trace, per input, what its time went to (see `breakdown`).
 */
async function tracedCpu(page, count, act) {
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
  const done = new Promise((res) => cdp.once('Tracing.tracingComplete', res));
  await cdp.send('Tracing.start', { categories: CATEGORIES, transferMode: 'ReportEvents' });
  if (PROFILE) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  for (let k = 0; k < count; k++) await act(k);
  const profile = PROFILE ? (await cdp.send('Profiler.stop')).profile : null;
  await cdp.send('Tracing.end');
  await done;
  await cdp.detach();
  const mark = (name) => events.find((e) => e.name === name && e.tts !== undefined);
  const out = [];
  const spans = [];
  // From the input to the first frame after it (a click's own frame), where marked.
  out.frame = [];
  for (let k = 0; k < count; k++) {
    const [a, b, f] = [mark(`in-${k}`), mark(`out-${k}`), mark(`frame-${k}`)];
    if (a && f) out.frame.push((f.tts - a.tts) / 1000);
    if (a && b) {
      out.push((b.tts - a.tts) / 1000);
      spans.push({ cpu: (b.tts - a.tts) / 1000, from: a.ts, to: b.ts, pid: a.pid, tid: a.tid });
    }
  }
  if (TRACE) out.breakdown = breakdown(events, spans);
  if (profile) out.profile = selfTimes(profile);
  return out;
}

// --profile: the page's JavaScript sampled (every 0.2 ms) while the inputs of each measure run.
const PROFILE = process.argv.includes('--profile');

/** The functions with the most self time in a CPU profile: [[name, ms]], the top 15. */
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, k) => {
    const f = byId.get(id).callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}` : ''}`;
    self.set(name, (self.get(name) || 0) + (profile.timeDeltas[k] || 0) / 1000);
  });
  return [...self].filter(([n]) => !/^\((idle|program)\)/.test(n)).sort((a, b) => b[1] - a[1]).slice(0, 15);
}

/** A trace event's name with what tells its kind apart: the event type, the script and line. */
function label(e) {
  const d = (e.args && (e.args.data || e.args.beginData)) || {};
  if (e.name === 'EventDispatch' && d.type) return `EventDispatch ${d.type}`;
  if ((e.name === 'FunctionCall' || e.name === 'v8.callFunction') && (d.functionName || d.url)) {
    return `FunctionCall ${d.functionName || '(anonymous)'} ${(d.url || '').split('/').slice(-2).join('/')}:${d.lineNumber ?? ''}`;
  }
  return e.name;
}

/**
 * What the main thread's time went to within each span (an input, from its marks): the self
 * thread time of each kind of event (an event's own time less that of the events inside it), and
 * the main thread's tasks that took longer than a frame (16.7 ms of thread time). Returns
 * { spans: [{ cpu, self: Map(label → ms), long: [ms] }] }.
 */
function breakdown(events, spans) {
  if (!spans.length) return { spans: [] };
  const { pid, tid } = spans[0];
  // Complete events (X), and begin/end pairs (B/E) joined, on the thread of the marks.
  const mine = events.filter((e) => e.pid === pid && e.tid === tid && e.ts !== undefined);
  mine.sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
  const done = [];
  const open = [];
  for (const e of mine) {
    if (e.ph === 'X' && e.dur !== undefined) done.push({ e, ts: e.ts, end: e.ts + e.dur, cpu: e.tdur ?? e.dur });
    else if (e.ph === 'B') open.push(e);
    else if (e.ph === 'E') {
      const k = open.findLastIndex((b) => b.name === e.name);
      if (k >= 0) {
        const [b] = open.splice(k, 1);
        done.push({ e: b, ts: b.ts, end: e.ts, cpu: e.tts !== undefined && b.tts !== undefined ? e.tts - b.tts : e.ts - b.ts });
      }
    }
  }
  done.sort((a, b) => a.ts - b.ts || b.end - a.end);
  // Nesting: each event's self time is its time less its direct children's.
  const stack = [];
  for (const d of done) {
    d.self = d.cpu;
    while (stack.length && stack[stack.length - 1].end <= d.ts) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent && d.end <= parent.end) {
      parent.self -= d.cpu;
      d.top = false;
    } else d.top = true;
    stack.push(d);
  }
  return {
    spans: spans.map((s) => {
      const self = new Map();
      const long = [];
      for (const d of done) {
        if (d.ts < s.from || d.ts >= s.to) continue;
        const name = label(d.e);
        self.set(name, (self.get(name) || 0) + Math.max(0, d.self) / 1000);
        if (d.top && d.e.name.includes('RunTask') && d.cpu > 16700) long.push(d.cpu / 1000);
      }
      // The slowest input's events, in order: each main-thread task over 1 ms and the events of
      // over 0.5 ms inside it (layouts with the objects they laid out).
      const steps = [];
      for (const d of done) {
        if (d.ts < s.from || d.ts >= s.to || d.cpu < (d.top ? 1000 : 500)) continue;
        const data = (d.e.args && (d.e.args.beginData || d.e.args.data)) || {};
        const objects = d.e.name === 'Layout' && data.dirtyObjects !== undefined ? ` (${data.dirtyObjects} of ${data.totalObjects} objects)` : '';
        const count = d.e.name === 'UpdateLayoutTree' && d.e.args && d.e.args.elementCount !== undefined ? ` (${d.e.args.elementCount} elements)` : '';
        steps.push(`${d.top ? '' : '  '}${(d.cpu / 1000).toFixed(1)} ms ${label(d.e)}${objects}${count}`);
      }
      return { cpu: s.cpu, self, long, steps };
    }),
  };
}

/** Prints the breakdown of the slowest inputs (those at or over the p90 of their CPU time). */
function printBreakdown(title, times) {
  if (times.profile) {
    console.log(`  ${title}: JavaScript self time over all ${times.length} inputs (sampled):`);
    for (const [n, v] of times.profile) console.log(`      ${v.toFixed(1).padStart(7)} ms  ${n}`);
  }
  const b = times.breakdown;
  if (!b || !b.spans.length) return;
  const cut = stats(b.spans.map((s) => s.cpu)).p50;
  const sorted = [...b.spans].sort((x, y) => y.cpu - x.cpu);
  const slow = sorted.slice(0, Math.max(1, Math.ceil(sorted.length / 10)));
  const sum = (spans) => {
    const m = new Map();
    for (const s of spans) for (const [k, v] of s.self) m.set(k, (m.get(k) || 0) + v / spans.length);
    return [...m].sort((x, y) => y[1] - x[1]).slice(0, 12);
  };
  const fmt = (rows) => rows.map(([k, v]) => `      ${v.toFixed(2).padStart(7)} ms  ${k}`).join('\n');
  const longs = b.spans.flatMap((s) => s.long);
  console.log(`  ${title}: the slowest ${slow.length} of ${b.spans.length} (CPU ${slow.map((s) => s.cpu.toFixed(1)).join(', ')} ms; p50 ${cut.toFixed(1)} ms), mean self time per input:`);
  console.log(fmt(sum(slow)));
  console.log(`    all ${b.spans.length}, mean self time per input:`);
  console.log(fmt(sum(b.spans)));
  console.log(`    the slowest (${sorted[0].cpu.toFixed(1)} ms), step by step:\n${sorted[0].steps.map((x) => `      ${x}`).join('\n')}`);
  console.log(`    main-thread tasks over 16.7 ms of CPU: ${longs.length}${longs.length ? ` (${longs.map((x) => x.toFixed(1)).join(', ')} ms)` : ''}`);
}

async function once(url, n) {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await page.goto(url);
    const threads = await engineThreads(page);
    await page.evaluate(LISTEN);
    await page.evaluate(() => {
      window.addEventListener('change', () => { window.__t0 = performance.now(); }, { capture: true, once: true });
    });
    if (JOB) await page.setInputFiles('[data-testid="folder-input"]', JOB);
    else {
      const file = path.join(TMP, `job-${n}.memlens.json`);
      writeFileSync(file, summary(n));
      await page.setInputFiles('[data-testid="file-input"]', file);
    }
    await page.waitForFunction((scope) => ['ready', 'error', 'empty'].includes(document.querySelector(scope)?.dataset.state), SCOPE, { timeout: 3600000 });
    const first = await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => setTimeout(() => res(performance.now() - window.__t0), 0))));
    const loadMs = Number(await page.getAttribute(SCOPE, 'data-load-ms'));
    const ranks = Number(await page.getAttribute(`${SCOPE} [data-testid="ascend-rank-table"]`, 'data-total'));
    const nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
    // Select: clicks spread over the visible cells; the matrix is brought back into view (outside
    // the measured time) since a click scrolls to the rank's detail.
    // The same marks and waits without an input: what the measure itself and the idle page cost.
    const idleCpu = stats(await tracedCpu(page, CLICKS, async (k) => {
      await matrixBox(page);
      await page.waitForTimeout(50);
      await page.evaluate((k) => performance.mark(`in-${k}`), k);
      await page.waitForTimeout(120);
      await page.evaluate((k) => performance.mark(`out-${k}`), k);
    }));
    await page.evaluate(() => { window.__lat.click = []; window.__work.click = []; });
    // --job: per click, the wall-clock ms from the press until every view of the rank is drawn.
    const cellDrawn = [];
    const rowDrawn = [];
    const selectCpuAll = await tracedCpu(page, CLICKS, async (k) => {
      const box = await matrixBox(page);
      await page.waitForTimeout(50);
      const x = box.left + ((k + 0.5) / CLICKS) * (box.right - box.left);
      const y = box.top + (box.bottom - box.top) * (k % 2 ? 0.3 : 0.75);
      await page.mouse.move(x, y);
      await page.waitForTimeout(REST);
      await page.evaluate((k) => { window.__k = k; window.__press = performance.now(); performance.mark(`in-${k}`); }, k);
      await page.mouse.click(x, y);
      await page.waitForTimeout(120);
      await page.evaluate((k) => performance.mark(`out-${k}`), k);
      if (JOB) cellDrawn.push(await viewsDrawn(page));
    });
    const select = stats(await page.evaluate(() => window.__lat.click));
    const selectWork = stats(await page.evaluate(() => window.__work.click));
    // Select in the rank table: clicks on rows in its view, the table scrolled a little between
    // clicks (outside the measured time) so that each click lands on another rank.
    await page.evaluate(() => { window.__lat.click = []; window.__work.click = []; });
    const rowCpuAll = await tracedCpu(page, CLICKS, async (k) => {
      const at = await page.evaluate(async ({ k, scope }) => {
        const t = document.querySelector(`${scope} [data-testid="ascend-rank-table"]`);
        // A virtual table (only the rows in view exist) is scrolled to other ranks; a table of
        // every row (the one it replaced, measured for the "before") has its row scrolled to.
        const vp = t.querySelector('.vt-viewport');
        if (vp) {
          t.scrollIntoView({ block: 'center' });
          vp.scrollTop = k * 37 * 40;
          await new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
        }
        const rows = [...t.querySelectorAll('[data-testid="rank-row"]')];
        const box = (vp || t).getBoundingClientRect();
        const seen = vp ? rows.filter((row) => { const b = row.getBoundingClientRect(); return b.top >= box.top && b.bottom <= box.bottom; }) : rows;
        const row = seen[vp ? (k * 3) % seen.length : (k * 37 * 7) % seen.length];
        if (!vp) row.scrollIntoView({ block: 'center' });
        const r = row.getBoundingClientRect();
        return { x: r.left + 30, y: r.top + r.height / 2 };
      }, { k, scope: SCOPE });
      await page.mouse.move(at.x, at.y);
      await page.waitForTimeout(REST);
      await page.evaluate((k) => { window.__k = k; window.__press = performance.now(); performance.mark(`in-${k}`); }, k);
      await page.mouse.click(at.x, at.y);
      await page.waitForTimeout(120);
      await page.evaluate((k) => performance.mark(`out-${k}`), k);
      if (JOB) rowDrawn.push(await viewsDrawn(page));
    });
    const row = stats(await page.evaluate(() => window.__lat.click));
    const rowWork = stats(await page.evaluate(() => window.__work.click));
    // Hover sweep: real pointer moves over the visible matrix, one per frame.
    const box = await matrixBox(page);
    await page.waitForTimeout(300);
    await page.evaluate(() => { window.__lat.mousemove = []; window.__work.mousemove = []; window.__worst = 0; });
    for (let k = 0; k < MOVES; k++) {
      const x = box.left + (((k * 37) % MOVES) / MOVES) * (box.right - box.left);
      const y = box.top + (box.bottom - box.top) * (((k * 13) % 10) / 10 + 0.05);
      await page.mouse.move(x, y);
    }
    await page.waitForTimeout(300);
    const hover = stats(await page.evaluate(() => window.__lat.mousemove));
    const hoverWork = stats(await page.evaluate(() => window.__work.mousemove));
    const worst = await page.evaluate(() => window.__worst);
    // Hover again, one move at a time: the main thread's CPU from just before the move to the
    // task after the frame it causes (thread time, so it holds under load).
    const hoverCpu = await tracedCpu(page, Math.min(MOVES, 100), async (k) => {
      const x = box.left + (((k * 53) % MOVES) / MOVES) * (box.right - box.left);
      const y = box.top + (box.bottom - box.top) * (((k * 7) % 10) / 10 + 0.05);
      await page.evaluate((k) => performance.mark(`in-${k}`), k);
      await page.mouse.move(x, y);
      await page.evaluate((k) => new Promise((res) => requestAnimationFrame(() => setTimeout(() => {
        performance.mark(`out-${k}`);
        res();
      }, 0))), k);
    });
    // Pan: the matrix scrolled sideways by 120 px a frame for 60 frames.
    const pan = stats(await page.evaluate(async (scope) => {
      const m = document.querySelector(`${scope} [data-testid="ascend-matrix"]`);
      const sc = m.closest('.scroll-x, .matrix-scroll') || m;
      const out = [];
      let last = performance.now();
      for (let i = 0; i < 60; i++) {
        sc.scrollLeft += 120;
        await new Promise((r) => requestAnimationFrame(r));
        const now = performance.now();
        out.push(now - last);
        last = now;
      }
      return out;
    }, SCOPE));
    const nodesAfter = await page.evaluate(() => document.getElementsByTagName('*').length);
    return { n: ranks, threads, first, loadMs, cellDrawn, rowDrawn, nodes, nodesAfter, idleCpu, select, selectWork, selectCpu: stats(selectCpuAll), selectFrame: stats(selectCpuAll.frame), selectCpuAll, row, rowWork, rowCpu: stats(rowCpuAll), rowFrame: stats(rowCpuAll.frame), rowCpuAll, hover, hoverWork, hoverCpu: stats(hoverCpu), hoverCpuAll: hoverCpu, worst, pan };
  } finally {
    await b.close();
  }
}

const TMP = mkdtempSync(path.join(tmpdir(), 'memlens-bench-matrix-'));
const server = await startServer({ isolate: ISOLATE });
const base = BASELINE ? await serve({ dir: path.resolve(BASELINE), port: 0, isolate: ISOLATE }) : null;
const pages = [['', server.url], ...(base ? [['baseline ', base.url]] : [])];
console.log(`${machineLine(machine())}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);
try {
  for (const n of JOB ? [0] : SIZES) for (let run = 1; run <= RUNS; run++) for (const [which, url] of pages) {
    const r = await once(url, n);
    console.log(`\n${which}${JOB ? `${JOB}: ` : ''}${r.n} ranks (${r.threads} threads), run ${run}, load ${loadavg()[0].toFixed(1)}`);
    console.log(`  drop → first drawn overview: ${ms(r.first)} (${JOB ? 'job' : 'summary'} read in ${r.loadMs} ms)`);
    console.log(`  DOM nodes: ${r.nodes} after the load, ${r.nodesAfter} after the sweeps`);
    console.log(`  no input (the marks and waits alone), main-thread CPU: ${line(r.idleCpu)}`);
    console.log(`  select a rank (click on its cell), main-thread CPU: ${line(r.selectCpu)}; work: ${line(r.selectWork)}; latency to the next frame: ${line(r.select)}`);
    console.log(`  select a rank (click on its table row), main-thread CPU: ${line(r.rowCpu)}; work: ${line(r.rowWork)}; latency to the next frame: ${line(r.row)}`);
    console.log(`  select, main-thread CPU from the press to the click's first frame: cell ${line(r.selectFrame)}; row ${line(r.rowFrame)}`);
    if (JOB) {
      const drawn = (xs) => {
        const ok = xs.filter((x) => x !== null);
        return `${ok.length ? line(stats(ok)) : 'none'}${ok.length < xs.length ? `, ${xs.length - ok.length} not drawn in 60 s` : ''}`;
      };
      console.log(`  select, wall clock from the press until every view of the rank is drawn: cell ${drawn(r.cellDrawn)}; row ${drawn(r.rowDrawn)}`);
    }
    console.log(`  hover, work: ${line(r.hoverWork)}; latency: ${line(r.hover)}; longest task during the sweep ${ms(r.worst)}`);
    console.log(`  hover, main-thread CPU per move (to the frame after it): ${line(r.hoverCpu)}`);
    console.log(`  pan, frame interval: ${line(r.pan)}`);
    printBreakdown('select by cell', r.selectCpuAll);
    printBreakdown('select by row', r.rowCpuAll);
    printBreakdown('hover', r.hoverCpuAll);
    const met = (ok) => (ok ? 'met' : 'NOT met');
    const goals = [`select work p95 < 16 ms: cell ${met(r.selectWork.p95 < 16)}, row ${met(r.rowWork.p95 < 16)}`,
      `select main-thread CPU p95 < 16 ms: cell ${met(r.selectCpu.p95 < 16)}, row ${met(r.rowCpu.p95 < 16)}`];
    if (n === 256 || JOB) goals.push(`hover work p95 < 16 ms ${met(r.hoverWork.p95 < 16)}`, `hover main-thread CPU p95 < 16 ms ${met(r.hoverCpu.p95 < 16)}`, `pan interval p95 ≤ 18.3 ms ${met(r.pan.p95 <= 18.3)}`);
    console.log(`  goals: ${goals.join('; ')}`);
  }
} finally {
  await server.close();
  if (base) await new Promise((r) => base.server.close(r));
  rmSync(TMP, { recursive: true, force: true });
}
