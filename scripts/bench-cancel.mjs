// Browser benchmark of stopping a load (a measurement, not a test): while the torch_npu page reads
// a job, Cancel is pressed (or a new drop arrives), and the script measures how long until every
// worker of the stopped load has closed (and when each one did, as the browser lists its workers,
// to within 10 ms: the harness's watchWorkers), the resident memory of the tab's
// renderer processes and of the browser in all (as tab-memory.mjs counts it: anonymous and shared
// pages) before the drop, at the stop and 1 s / 2 s / 5 s after it, and how the page ended its workers
// (on their word after the stop flag, or by force).
//   node scripts/bench-cancel.mjs [--dir /tmp/memlens-cancel-bench] [--runs 2] [--job64] [--keep]
//                                 [--pools Q1,Q2] [--baseline OTHER_WWW] [--skip-2x2]
// Jobs: 2 roles × 2 ranks with 100 MiB traces (as bench-profiler-page.mjs; --skip-2x2 leaves it
// out), and with --job64 the 64-rank job. --pools 'workers=1' also measures the page with each query string beside the
// default. --baseline serves a second built page (a copy of www/ built from an earlier commit) and
// measures it in turn with this one, stop by stop, so that the two compare in one run. Needs a
// built page (npm run build) and the release CLI.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { machine, machineLine } from './machine.mjs';
import path from 'node:path';
import { openBrowser, startServer, watchWorkers } from '../tests/browser/harness.mjs';
import { serve } from './serve.mjs';
import { root, opt } from './util.mjs';
import { tabMemory } from './tab-memory.mjs';

const args = process.argv.slice(2);
const base = opt('--dir', '/tmp/memlens-cancel-bench');
const runs = Number(opt('--runs', '2'));
const pools = (opt('--pools', '') || '').split(',').filter(Boolean);
const CLI = path.join(root, 'target', 'release', 'memlens');
if (!existsSync(CLI)) throw new Error(`build the release CLI first: cargo build --release --bin memlens (${CLI})`);

function generate(dir, extra) {
  if (existsSync(dir)) return;
  execFileSync(CLI, ['generate', 'profiler', '--out', dir, ...extra], { stdio: 'inherit' });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Picks `dir`, waits until `fraction` of it is read (the progress line's bytes), then stops the
 * load by Cancel (`how: 'cancel'`) or by a new drop of a small fixture (`how: 'drop'`); measures
 * the time from the stop to the last worker of the load closing, and the browser's memory.
 */
async function stopOnce(server, dir, total, how, query) {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(query ? `${server.url}?${query}` : server.url);
    await page.waitForFunction(() => document.querySelector('[data-testid="status"]'));
    const idle = tabMemory(b.dir);
    await page.setInputFiles('input[data-testid="folder-input"]', dir);
    await page.waitForFunction((want) => Number(document.querySelector('[data-testid="ascend-phase"]')?.dataset.done || 0) >= want, total * 0.3, { timeout: 600000, polling: 20 });
    const watch = await watchWorkers(page);
    const reading = tabMemory(b.dir);
    let t0;
    if (how === 'cancel') {
      t0 = performance.now();
      await page.click('[data-testid="cancel"]');
    } else {
      t0 = performance.now();
      await page.setInputFiles('input[data-testid="folder-input"]', path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text'));
    }
    // Each worker's close, ms after the stop (null: still open after 30 s).
    const each = (await watch.closes(30000)).map((w) => (w.closed === null ? null : w.closed - t0));
    const closed = each.includes(null) ? null : Math.max(...each);
    const after = [];
    for (const at of [1000, 2000, 5000]) {
      await sleep(Math.max(0, t0 + at - performance.now()));
      after.push(tabMemory(b.dir));
    }
    // How the page ended its workers (www/worker-life.js): on their word after the stop flag, or
    // by force when one did not answer in time.
    const ends = await page.evaluate(() => ({
      stopped: performance.getEntriesByName('memlens:worker-stopped').length,
      forced: performance.getEntriesByName('memlens:worker-forced').length,
    }));
    return { workers: watch.size, closed, each, idle, reading, after, ends };
  } finally {
    await b.close();
  }
}

const mib = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
/** The tab's renderer processes and, in brackets, the browser's processes in all. */
const mem = (m) => `${mib(m.renderer)} (${mib(m.all)})`;
const sizeOf = (dir) => Number(execFileSync('du', ['-sb', dir]).toString().split('\t')[0]);

mkdirSync(base, { recursive: true });
console.log(`${machineLine(machine())}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);
const server = await startServer({ isolate: true });
const baselineDir = opt('--baseline', null);
const baseline = baselineDir ? await serve({ dir: path.resolve(baselineDir), port: 0, isolate: true }) : null;
const pages = [['', server], ...(baseline ? [['baseline ', { url: baseline.url }]] : [])];
try {
  const jobs = args.includes('--skip-2x2') ? [] : [['2 × 2', path.join(base, 'job-2x2'), ['--roles', '2', '--ranks', '2', '--trace-mb', '100', '--rows', '50000', '--steps', '2', '--seed', '3']]];
  if (args.includes('--job64')) jobs.push(['64 ranks', path.join(base, 'job-64'), ['--roles', '2', '--ranks', '32', '--trace-mb', '16', '--rows', '20000', '--steps', '2', '--seed', '11']]);
  for (const [label, dir, gen] of jobs) {
    generate(dir, gen);
    const total = sizeOf(dir);
    for (let run = 1; run <= runs; run++) {
      for (const query of ['', ...pools]) {
        for (const how of ['cancel', 'drop']) for (const [which, srv] of pages) {
          const load = loadavg()[0].toFixed(1);
          const m = await stopOnce(srv, dir, total, how, query);
          const closed = m.closed === null ? 'not within 30 s' : `${Math.round(m.closed)} ms`;
          const each = m.each.map((t) => (t === null ? 'open' : Math.round(t))).join(', ');
          console.log(`${which}${label}${query ? ` ${query}` : ''}, ${how === 'cancel' ? 'Cancel' : 'new drop'}, run ${run} (load ${load}): ${m.workers} worker(s) of the load closed after ${closed} (each, ms: ${each}; ${m.ends.stopped} ended on their word, ${m.ends.forced} by force); tab's memory (browser in all) ${mem(m.idle)} before the drop, ${mem(m.reading)} while reading, ${m.after.map(mem).join(' / ')} 1 s / 2 s / 5 s after the stop`);
        }
      }
    }
  }
} finally {
  await server.close();
  if (baseline) await new Promise((r) => baseline.server.close(r));
  if (!args.includes('--keep')) rmSync(base, { recursive: true, force: true });
}
