// Browser benchmark of the SOMAS tab (not a test): a generated 200,000-node dump (v2.4, with its
// task-info file) is picked through the file input, threaded (isolated page) and single-threaded;
// reports the time from the pick to the first drawn tensor layout, its breakdown, and the frame
// time of pan/zoom on the layout (performance marks and measures set by the page).
//
//   node scripts/bench-somas-page.mjs [--nodes 200000] [--frames 240] [--runs 2] [--no-task] [--only threaded|single]
//                                     [--www THIS_WWW] [--baseline OTHER_WWW]
//
// --www serves that built www/ instead of the checkout's; --baseline serves a second built page
// (e.g. a copy of www/ built from an earlier commit, or with one change undone) and measures it in
// turn with this one, run by run (this, baseline, this, baseline, …), so that the two compare as
// ratios within one run; the load average is printed before each run.
// Needs a built page (npm run build) and the CLI (cargo build --bin memlens, for the generator).
import { mkdirSync, existsSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir, loadavg } from 'node:os';
import { machine, machineLine } from './machine.mjs';
import path from 'node:path';
import { openBrowser, startServer, engineThreads, CLI } from '../tests/browser/harness.mjs';
import { serve } from './serve.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const NODES = Number(arg('nodes', 200000));
const FRAMES = Number(arg('frames', 240));
const RUNS = Number(arg('runs', 2));
const WITH_TASK = !process.argv.includes('--no-task');
const ONLY = arg('only', null);

const dir = path.join(tmpdir(), `memlens-bench-somas-${NODES}`);
const dump = path.join(dir, 'Ascend_somas_tensor_offset_1.ir');
const task = path.join(dir, 'task_info_graph_1.ir');
if (!existsSync(dump) || !existsSync(task)) {
  mkdirSync(dir, { recursive: true });
  console.log(`generating a ${NODES}-node v2.4 dump in ${dir} …`);
  execFileSync(CLI, ['generate', 'somas', '--flavor', 'v2.4', '--nodes', String(NODES), '--seed', '7', '--inject-conflicts', '10', '--out', dump, '--task-info-out', task], { stdio: 'inherit' });
}
const picked = WITH_TASK ? [dump, task] : [dump];
const size = picked.reduce((n, f) => n + statSync(f).size, 0);

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, median: q(0.5), p95: q(0.95), max: s[s.length - 1], mean: s.reduce((a, b) => a + b, 0) / s.length };
};
const ms = (v) => `${v.toFixed(1)} ms`;

async function once(url, label) {
  const b = await openBrowser({ viewport: { width: 1400, height: 900 } });
  try {
    const page = await b.page();
    await page.goto(url);
    const threads = await engineThreads(page);
    await page.evaluate(() => {
      // The pick: the moment the page learns about the files.
      document.addEventListener('change', () => performance.mark('bench-pick'), { capture: true, once: true });
    });
    await page.setInputFiles('input[data-testid="file-input"]', picked);
    await page.waitForFunction(() => performance.getEntriesByName('somas-layout-first-draw').length > 0 || document.querySelector('[data-testid="somas"]')?.dataset.state === 'error', null, { timeout: 300000 });
    const t = await page.evaluate(() => {
      const at = (n) => (performance.getEntriesByName(n)[0] || {}).startTime;
      const first = at('somas-layout-first-draw');
      return {
        pick: at('bench-pick'),
        openStart: at('somas-open-start'),
        opened: at('somas-opened'),
        first,
        state: document.querySelector('[data-testid="somas"]').dataset.state,
        status: document.querySelector('[data-testid="somas-layout-status"]')?.textContent,
        steps: ['read', 'parse', 'task-info', 'analyse'].map((n) => [n, (performance.getEntriesByName(`somas-${n}`)[0] || {}).duration]),
      };
    });
    if (t.state === 'error') throw new Error(await page.textContent('[data-testid="somas-error"]'));

    // Pan and zoom the layout: one input event per animation frame, alternating zoom in, pan and
    // zoom out, as wheel and arrow keys would; each repaint is measured by the page
    // ('somas-layout-frame'), and the frame-to-frame interval by requestAnimationFrame.
    await page.locator('[data-testid="somas-layout"]').scrollIntoViewIfNeeded();
    const frames = await page.evaluate(async (n) => {
      const c = document.querySelector('[data-testid="somas-layout"]');
      c.focus();
      performance.clearMeasures('somas-layout-frame');
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
      // Let the last answers arrive and draw.
      await new Promise((res) => setTimeout(res, 500));
      return { draws: performance.getEntriesByName('somas-layout-frame').map((e) => e.duration), intervals: intervals.slice(1) };
    }, FRAMES);
    const engine = await page.evaluate(() => performance.getEntriesByName('somas-layout-rects').map((e) => e.duration));
    const raster = await page.evaluate(() => performance.getEntriesByName('somas-layout-raster').map((e) => e.duration));
    return { label, threads, t, draws: stats(frames.draws), intervals: stats(frames.intervals), engine: stats(engine), raster: stats(raster) };
  } finally {
    await b.close();
  }
}

/** A server of the built page in `dir` (null: the checkout's www/). */
async function pageServer(dir, isolate) {
  if (!dir) return startServer({ isolate });
  const { server, url } = await serve({ dir: path.resolve(dir), port: 0, isolate });
  return { url, close: () => new Promise((r) => server.close(r)) };
}
const WWW = arg('www', null);
const BASELINE = arg('baseline', null);
const isolated = await pageServer(WWW, true);
const plain = await pageServer(WWW, false);
const baseIsolated = BASELINE ? await pageServer(BASELINE, true) : null;
const basePlain = BASELINE ? await pageServer(BASELINE, false) : null;
console.log(`${machineLine(machine())}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);
console.log(`input: ${NODES} nodes, ${WITH_TASK ? 'dump + task-info' : 'dump'} ${(size / 1e6).toFixed(1)} MB`);
try {
  const modes = [[isolated, baseIsolated, 'threaded'], [plain, basePlain, 'single-threaded']].filter(([, , l]) => !ONLY || l.startsWith(ONLY));
  for (const [server, base, label] of modes) {
    for (let run = 1; run <= RUNS; run++) {
      for (const [which, url] of [['', server.url], ...(base ? [['baseline ', base.url]] : [])]) {
        const load = loadavg().map((x) => x.toFixed(2)).join(' ');
        const r = await once(url, label);
        const { t } = r;
        console.log(`\n${which}${label} (${r.threads} threads), run ${run}, load before ${load}`);
        console.log(`  pick → first drawn layout: ${ms(t.first - t.pick)}  (pick → open request ${ms(t.openStart - t.pick)}, open (read + parse + analyse) ${ms(t.opened - t.openStart)}, views → first layout ${ms(t.first - t.opened)})`);
        console.log(`  in the engine: ${t.steps.filter((x) => x[1] !== undefined).map(([n, d]) => `${n} ${ms(d)}`).join(', ')}`);
        console.log(`  ${t.status}`);
        console.log(`  pan/zoom repaint: median ${ms(r.draws.median)}, p95 ${ms(r.draws.p95)}, max ${ms(r.draws.max)} over ${r.draws.n} repaints`);
        console.log(`  frame interval: median ${ms(r.intervals.median)}, p95 ${ms(r.intervals.p95)}, max ${ms(r.intervals.max)}`);
        console.log(`  engine, visible rectangles per viewport: median ${ms(r.engine.median)}, p95 ${ms(r.engine.p95)}, max ${ms(r.engine.max)} over ${r.engine.n} requests`);
        console.log(`  painting an answer (in the worker): median ${ms(r.raster.median)}, p95 ${ms(r.raster.p95)}, max ${ms(r.raster.max)}`);
      }
    }
  }
} finally {
  for (const s of [isolated, plain, baseIsolated, basePlain]) if (s) await s.close();
}
