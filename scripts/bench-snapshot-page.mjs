// Browser benchmark of the memory-snapshot tab (not a test): a generated snapshot of about 1 GB
// (two devices, OOMs, expandable segments) is picked through the file input, threaded (isolated
// page) and single-threaded; reports the time from the pick to the first drawn timeline, the
// wasm memory after the load (it only grows, so this is the load's peak) and the tab's peak resident
// memory to the first drawn timeline (scripts/tab-memory.mjs), and the repaint time of
// pan/zoom on the timeline (performance measures set by the page). The pick's time is split into
// the worker's steps (the page's `data-timings`): reading the File (time inside the read hook,
// www/file-reads.js), the pickle parse less those reads, the model build, the analysis and the
// overview's indexes (src/snapshot/view.rs); then the answer's way to the page, and from there to
// the first drawn timeline (its first viewport asked of the worker and painted).
//
//   node scripts/bench-snapshot-page.mjs [--mb 1100] [--frames 240] [--runs 1] [--only threaded|single]
//                                        [--baseline OTHER_WWW] [--query readAhead=1]
//
// --baseline serves a second built page (a copy of www/ built from an earlier commit) beside this
// one and alternates the two run by run, so that their ratio is taken in the same minutes.
// --query adds a query to this page's address only (e.g. `readAhead=1`, www/read-ahead.js): with
// `--baseline www` the same build is measured with and without it.
//
// Needs a built page (npm run build) and the CLI (cargo build --bin memlens, for the generator).
import { mkdirSync, existsSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir, loadavg } from 'node:os';
import { machine, machineLine } from './machine.mjs';
import path from 'node:path';
import { openBrowser, startServer, engineThreads, CLI } from '../tests/browser/harness.mjs';
import { watchTabMemory } from './tab-memory.mjs';
import { serve } from './serve.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const MB = Number(arg('mb', 1100));
const FRAMES = Number(arg('frames', 240));
const RUNS = Number(arg('runs', 1));
const ONLY = arg('only', null);
const BASELINE = arg('baseline', null);
const QUERY = arg('query', null);

const dir = path.join(tmpdir(), `memlens-bench-snapshot-${MB}`);
const file = path.join(dir, 'snapshot.pickle');
if (!existsSync(file)) {
  mkdirSync(dir, { recursive: true });
  console.log(`generating a ${MB} MiB snapshot in ${dir} …`);
  execFileSync(CLI, ['generate', 'snapshot', '--size-mb', String(MB), '--devices', '2', '--ooms', '2', '--expandable', '--seed', '7', '--out', file], { stdio: 'inherit' });
}
const size = statSync(file).size;

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, median: q(0.5), p95: q(0.95), max: s[s.length - 1] };
};
const ms = (v) => (v === undefined ? '–' : `${v.toFixed(1)} ms`);

async function once(url, label) {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  const tab = watchTabMemory(b.dir, 100);
  try {
    const page = await b.page();
    await page.goto(url);
    const threads = await engineThreads(page);
    const before = tab.peak().renderer;
    await page.evaluate(() => document.addEventListener('change', () => performance.mark('bench-pick'), { capture: true, once: true }));
    await page.setInputFiles('input[data-testid="file-input"]', [file]);
    await page.waitForFunction(() => performance.getEntriesByName('snapshot-timeline-first-draw').length > 0 || document.querySelector('[data-testid="snapshot"]')?.dataset.state === 'error', null, { timeout: 1800000 });
    const t = await page.evaluate(() => {
      const root = document.querySelector('[data-testid="snapshot"]');
      return {
        pick: (performance.getEntriesByName('bench-pick')[0] || {}).startTime,
        first: (performance.getEntriesByName('snapshot-timeline-first-draw')[0] || {}).startTime,
        openStart: (performance.getEntriesByName('snapshot-open-start')[0] || {}).startTime,
        opened: (performance.getEntriesByName('snapshot-opened')[0] || {}).startTime,
        state: root.dataset.state,
        loadMs: Number(root.dataset.loadMs),
        readMs: Number(root.dataset.readMs),
        timings: JSON.parse(root.dataset.timings || 'null'),
        memory: Number(root.dataset.memoryBytes),
        status: document.querySelector('[data-testid="snapshot-timeline-status"]')?.textContent,
      };
    });
    t.tabBefore = before;
    t.tabPeak = tab.stop().renderer;
    if (t.state === 'error') throw new Error(await page.textContent('[data-testid="snapshot-error"]'));
    // Pan and zoom the timeline: one input event per animation frame (wheel zoom in, pan right,
    // zoom out, pan left); each repaint is measured by the page, the frame interval here.
    await page.locator('[data-testid="snapshot-timeline"]').scrollIntoViewIfNeeded();
    const frames = await page.evaluate(async (n) => {
      const c = document.querySelector('[data-testid="snapshot-timeline"]');
      c.focus();
      performance.clearMeasures('snapshot-timeline-frame');
      performance.clearMeasures('snapshot-timeline-engine');
      const r = c.getBoundingClientRect();
      const intervals = [];
      let last = performance.now();
      for (let i = 0; i < n; i++) {
        await new Promise((res) => requestAnimationFrame(res));
        const now = performance.now();
        intervals.push(now - last);
        last = now;
        const phase = Math.floor(i / 20) % 4;
        if (phase === 0 || phase === 2) {
          c.dispatchEvent(new WheelEvent('wheel', { deltaY: phase === 0 ? -60 : 60, clientX: r.left + r.width * 0.45, clientY: r.top + r.height * 0.6, bubbles: true, cancelable: true }));
        } else {
          c.dispatchEvent(new KeyboardEvent('keydown', { key: phase === 1 ? 'ArrowRight' : 'ArrowLeft', bubbles: true, cancelable: true }));
        }
      }
      await new Promise((res) => setTimeout(res, 1500));
      return {
        draws: performance.getEntriesByName('snapshot-timeline-frame').map((e) => e.duration),
        engine: performance.getEntriesByName('snapshot-timeline-engine').map((e) => e.duration),
        intervals: intervals.slice(1),
      };
    }, FRAMES);
    return { label, threads, t, draws: stats(frames.draws), engine: stats(frames.engine), intervals: stats(frames.intervals) };
  } finally {
    tab.stop();
    await b.close();
  }
}

const isolated = await startServer({ isolate: true });
const plain = await startServer({ isolate: false });
/** A server of the baseline page (`--baseline`), isolated or not; null without one. */
async function baselineServer(isolate) {
  if (!BASELINE) return null;
  const { server, url } = await serve({ dir: path.resolve(BASELINE), port: 0, isolate });
  return { url, close: () => new Promise((r) => server.close(r)) };
}
const baseIsolated = await baselineServer(true);
const basePlain = await baselineServer(false);
console.log(`${machineLine(machine())}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);
console.log(`input: ${(size / 1e6).toFixed(1)} MB snapshot`);
try {
  const modes = [[isolated.url, baseIsolated?.url, 'threaded'], [plain.url, basePlain?.url, 'single-threaded']].filter(([, , l]) => !ONLY || l.startsWith(ONLY));
  for (const [url, baseUrl, label] of modes) {
    const picks = { this: [], baseline: [] };
    for (let run = 1; run <= RUNS; run++) {
      for (const [which, u] of [['this', url], ['baseline', baseUrl]]) {
        if (!u) continue;
        const r = await once(QUERY && which === 'this' ? `${u}?${QUERY}` : u, label);
        const { t } = r;
        picks[which].push(t.first - t.pick);
        console.log(`\n${label} (${r.threads} threads), ${BASELINE ? `${which} page, ` : ''}run ${run}, load ${loadavg()[0].toFixed(2)}`);
        console.log(`  pick → first drawn timeline: ${ms(t.first - t.pick)} (open: ${ms(t.loadMs)}, of which reading + parsing + analysing ${ms(t.readMs)}) = ${(size / 1e3 / t.readMs).toFixed(0)} MB/s`);
        const tm = t.timings;
        if (tm) {
          const mbs = (v) => `${ms(v)} (${(size / 1e3 / v).toFixed(0)} MB/s)`;
          console.log(`  split: reading the File ${mbs(tm.file_read_ms)}, parse less reads ${mbs(tm.parse_ms - tm.file_read_ms)}, model ${ms(tm.model_ms)}, analysis ${ms(tm.analyse_ms)}, overview ${ms(tm.overview_ms)}; the worker ${ms(tm.worker_ms)}, to the page ${ms(t.loadMs - tm.worker_ms)}; pick → open ${ms(t.openStart - t.pick)}, opened → first drawn timeline ${ms(t.first - t.opened)}`);
        }
        console.log(`  wasm memory after the load: ${(t.memory / 2 ** 20).toFixed(0)} MiB (${(t.memory / size).toFixed(2)} × the file); the tab's renderers at most ${(t.tabBefore / 2 ** 20).toFixed(0)} MiB before the pick, ${(t.tabPeak / 2 ** 20).toFixed(0)} MiB at their peak to the first drawn timeline`);
        console.log(`  ${t.status}`);
        console.log(`  pan/zoom repaint: median ${ms(r.draws.median)}, p95 ${ms(r.draws.p95)}, max ${ms(r.draws.max)} over ${r.draws.n} repaints`);
        console.log(`  frame interval: median ${ms(r.intervals.median)}, p95 ${ms(r.intervals.p95)}, max ${ms(r.intervals.max)}`);
        console.log(`  engine, timeline per viewport: median ${ms(r.engine.median)}, p95 ${ms(r.engine.p95)}, max ${ms(r.engine.max)} over ${r.engine.n} requests`);
      }
    }
    if (BASELINE) {
      const med = (xs) => {
        const v = [...xs].sort((a, b) => a - b);
        return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
      };
      console.log(`\n${label}: pick → first drawn timeline, median of ${RUNS}: this ${ms(med(picks.this))}, baseline ${ms(med(picks.baseline))} = ${(med(picks.this) / med(picks.baseline)).toFixed(3)}× the baseline's`);
    }
  }
} finally {
  await isolated.close();
  await plain.close();
  await baseIsolated?.close();
  await basePlain?.close();
}
