// Which wasm code runs after the pool readers' warm-up (a measurement, not a test): Chromium started
// with V8's `--trace-wasm-compilation-times`, which prints a line per function V8 compiles with its
// optimising compiler (TurboFan), the page loaded, the folder dropped once the readers started
// ahead are ready (www/worker-pool.js `warmReaders`, their warm-up: www/warm-up.js) and a further
// --wait ms have passed; counts the TurboFan compilations before the drop and between the drop and
// the drawn overview, and the time to the overview, for the page with its warm-up and with
// `?warmUp=0`, alternated. Few compilations after the drop mean the ranks ran code optimised before.
//   node scripts/bench-tier-up.mjs [--job DIR] [--runs 2] [--wait 1500] [--single] [--www DIR]
// The job defaults to a 2 × 2 one of 16 MiB traces, generated with the release CLI into a
// temporary folder. Needs a built page (npm run build).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM } from '../tests/browser/harness.mjs';
import { serve } from './serve.mjs';
import { root, opt } from './util.mjs';

const args = process.argv.slice(2);
const runs = Number(opt('--runs', '2'));
const wait = Number(opt('--wait', '1500'));
const isolate = !args.includes('--single');
const tmp = mkdtempSync(path.join(tmpdir(), 'memlens-tier-up-'));
let job = opt('--job', null);
if (!job) {
  const cli = path.join(root, 'target', 'release', 'memlens');
  if (!existsSync(cli)) throw new Error(`build the release CLI first: cargo build --release --bin memlens (${cli})`);
  job = path.join(tmp, 'job');
  execFileSync(cli, ['-q', 'generate', 'profiler', '--out', job, '--roles', '2', '--ranks', '2', '--trace-mb', '16', '--rows', '20000', '--steps', '2', '--seed', '3']);
}

/** Chromium with V8's compilation trace, its stderr lines timed as they arrive. */
async function launch() {
  const dir = mkdtempSync(path.join(tmp, 'profile-'));
  const proc = spawn(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--remote-debugging-port=0', `--user-data-dir=${dir}`,
    '--js-flags=--trace-wasm-compilation-times', 'about:blank'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  let rest = '';
  const take = (chunk) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop();
    const now = performance.now();
    for (const l of parts) lines.push({ t: now, l });
  };
  proc.stdout.on('data', take);
  proc.stderr.on('data', take);
  const ws = await new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const hit = lines.find((x) => x.l.includes('DevTools listening on '));
      if (hit) {
        clearInterval(timer);
        resolve(hit.l.slice(hit.l.indexOf('ws://')).trim());
      }
    }, 50);
    proc.on('exit', () => reject(new Error('chromium ended before it listened')));
  });
  const browser = await chromium.connectOverCDP(ws);
  return {
    browser,
    lines,
    async close() {
      await browser.close().catch(() => {});
      proc.kill();
      await new Promise((r) => (proc.exitCode === null ? proc.once('exit', r) : r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const turbofan = (lines, from, to) => lines.filter((x) => x.t >= from && x.t < to && /TurboFan/i.test(x.l)).length;

async function once(url) {
  const c = await launch();
  try {
    const context = c.browser.contexts()[0];
    const page = context.pages()[0] || (await context.newPage());
    const t0 = performance.now();
    await page.goto(url);
    await page.waitForFunction(() => document.documentElement.dataset.warmReaders, null, { timeout: 60000, polling: 100 });
    await page.waitForTimeout(wait);
    const drop = performance.now();
    await page.evaluate(() => {
      window.__bench = {};
      document.querySelector('[data-testid="folder-input"]').addEventListener('change', () => (window.__bench.pick = performance.now()), { capture: true });
      new MutationObserver(() => {
        if (!window.__bench.overview && document.querySelector('[data-testid="rank-row"]')) window.__bench.overview = performance.now();
      }).observe(document.body, { subtree: true, childList: true });
    });
    await page.setInputFiles('input[data-testid="folder-input"]', job);
    await page.waitForFunction(() => window.__bench.overview, null, { timeout: 600000, polling: 100 });
    const done = performance.now();
    const b = await page.evaluate(() => window.__bench);
    const timings = JSON.parse((await page.getAttribute('[data-testid="ascend"]', 'data-timings')) || '{}');
    const parse = (timings.readers || []).flatMap((r) => r.ranks.map((x) => x.parse));
    // Lines still in the pipe.
    await page.waitForTimeout(300);
    return { before: turbofan(c.lines, t0, drop), after: turbofan(c.lines, drop, done), overview: b.overview - b.pick, parse, warmUps: (timings.readers || []).map((r) => r.warmUp) };
  } finally {
    await c.close();
  }
}

const www = opt('--www', null);
const { server, url } = await serve({ dir: www ? path.resolve(www) : undefined, port: 0, host: '127.0.0.1', isolate });
console.log(`tier-up: ${job}, ${isolate ? 'threaded' : 'single-threaded'} page, drop ${wait} ms after the readers are ready; load ${loadavg().map((x) => x.toFixed(1)).join(' ')}; ${new Date().toISOString()}`);
try {
  for (let run = 1; run <= runs; run++) {
    for (const query of ['', 'warmUp=0']) {
      const load = loadavg()[0].toFixed(1);
      const r = await once(query ? `${url}?${query}` : url);
      const w = r.warmUps.map((x) => (x ? `${Math.round(x.end - x.start)} ms${x.done ? '' : ' (gave way)'}` : 'none')).join(', ');
      console.log(`${query || 'warm-up'} run ${run} (load ${load}): TurboFan compilations ${r.before} before the drop, ${r.after} from the drop to the overview; overview ${(r.overview / 1000).toFixed(2)} s; parse per rank ${r.parse.join(', ')} ms; warm-ups ${w}`);
    }
  }
} finally {
  await new Promise((r) => server.close(r));
  rmSync(tmp, { recursive: true, force: true });
}
