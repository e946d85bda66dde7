// Browser benchmark of the memory-snapshot tab (not a test): a generated snapshot of about 1 GB
// (two devices, OOMs, expandable segments) is picked through the file input, threaded (isolated
// page) and single-threaded; reports the time from the pick to the first drawn timeline, the
// wasm memory after the load (it only grows, so this is the load's peak), and the repaint time of
// pan/zoom on the timeline (performance measures set by the page).
//
//   node scripts/bench-snapshot-page.mjs [--mb 1100] [--frames 240] [--runs 1] [--only threaded|single]
//
// Needs a built page (npm run build) and the CLI (cargo build --bin memlens, for the generator).
import { mkdirSync, existsSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir, loadavg } from 'node:os';
import { machine, machineLine } from './machine.mjs';
import path from 'node:path';
import { openBrowser, startServer, engineThreads, CLI } from '../tests/browser/harness.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const MB = Number(arg('mb', 1100));
const FRAMES = Number(arg('frames', 240));
const RUNS = Number(arg('runs', 1));
const ONLY = arg('only', null);

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
  try {
    const page = await b.page();
    await page.goto(url);
    const threads = await engineThreads(page);
    await page.evaluate(() => document.addEventListener('change', () => performance.mark('bench-pick'), { capture: true, once: true }));
    await page.setInputFiles('input[data-testid="file-input"]', [file]);
    await page.waitForFunction(() => performance.getEntriesByName('snapshot-timeline-first-draw').length > 0 || document.querySelector('[data-testid="snapshot"]')?.dataset.state === 'error', null, { timeout: 1800000 });
    const t = await page.evaluate(() => {
      const root = document.querySelector('[data-testid="snapshot"]');
      return {
        pick: (performance.getEntriesByName('bench-pick')[0] || {}).startTime,
        first: (performance.getEntriesByName('snapshot-timeline-first-draw')[0] || {}).startTime,
        state: root.dataset.state,
        loadMs: Number(root.dataset.loadMs),
        readMs: Number(root.dataset.readMs),
        memory: Number(root.dataset.memoryBytes),
        status: document.querySelector('[data-testid="snapshot-timeline-status"]')?.textContent,
      };
    });
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
    await b.close();
  }
}

const isolated = await startServer({ isolate: true });
const plain = await startServer({ isolate: false });
console.log(`${machineLine(machine())}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);
console.log(`input: ${(size / 1e6).toFixed(1)} MB snapshot`);
try {
  const modes = [[isolated.url, 'threaded'], [plain.url, 'single-threaded']].filter(([, l]) => !ONLY || l.startsWith(ONLY));
  for (const [url, label] of modes) {
    for (let run = 1; run <= RUNS; run++) {
      const r = await once(url, label);
      const { t } = r;
      console.log(`\n${label} (${r.threads} threads), run ${run}`);
      console.log(`  pick → first drawn timeline: ${ms(t.first - t.pick)} (open: ${ms(t.loadMs)}, of which reading + parsing + analysing ${ms(t.readMs)}) = ${(size / 1e3 / t.readMs).toFixed(0)} MB/s`);
      console.log(`  wasm memory after the load: ${(t.memory / 2 ** 20).toFixed(0)} MiB (${(t.memory / size).toFixed(2)} × the file)`);
      console.log(`  ${t.status}`);
      console.log(`  pan/zoom repaint: median ${ms(r.draws.median)}, p95 ${ms(r.draws.p95)}, max ${ms(r.draws.max)} over ${r.draws.n} repaints`);
      console.log(`  frame interval: median ${ms(r.intervals.median)}, p95 ${ms(r.intervals.p95)}, max ${ms(r.intervals.max)}`);
      console.log(`  engine, timeline per viewport: median ${ms(r.engine.median)}, p95 ${ms(r.engine.p95)}, max ${ms(r.engine.max)} over ${r.engine.n} requests`);
    }
  }
} finally {
  await isolated.close();
  await plain.close();
}
