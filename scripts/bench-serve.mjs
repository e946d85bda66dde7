// Benchmark of `memlens serve` (a measurement, not a test): the job of 2 roles × 2 ranks with
// 100 MiB trace_view.json and 50,000 operator_memory rows per rank, picked in the page's list of
// served folders, timed from the click to the job overview (rank rows shown) with the native
// engine answering; against `memlens profiler --json` on the same files just before, so the
// machine's load moves both alike. Goal: the overview within 1.3× of the CLI.
// Needs the release CLI (cargo build --release --bin memlens); the page is served from www/.
//   node scripts/bench-serve.mjs [--dir /tmp/memlens-bench-serve] [--runs 3] [--cli PATH] [--keep]
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, rmSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { machine, machineLine } from './machine.mjs';
import path from 'node:path';
import { openBrowser } from '../tests/browser/harness.mjs';
import { root, opt } from './util.mjs';
import { cliJson, rankTableModel, tableCheck } from './bench-job.mjs';

const args = process.argv.slice(2);
const base = opt('--dir', '/tmp/memlens-bench-serve');
const runs = Number(opt('--runs', '3'));
const CLI = opt('--cli', path.join(root, 'target', 'release', 'memlens'));
if (!existsSync(CLI)) throw new Error(`build the release CLI first: cargo build --release --bin memlens (${CLI})`);

const s = (ms) => `${(ms / 1000).toFixed(2)} s`;

mkdirSync(base, { recursive: true });
const job = path.join(base, 'job-2x2');
if (!existsSync(job)) {
  execFileSync(CLI, ['generate', 'profiler', '--out', job, '--roles', '2', '--ranks', '2', '--trace-mb', '100', '--rows', '50000', '--steps', '2', '--seed', '3'], {
    stdio: 'inherit',
  });
}
console.log(`${machineLine(machine())}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);

const server = spawn(CLI, ['serve', job, '--port', '0', '--json', '--www', path.join(root, 'www')], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = JSON.parse(await new Promise((resolve) => createInterface({ input: server.stdout }).once('line', resolve))).url;

async function measure() {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(url);
    await page.waitForFunction(() => document.querySelector('[data-testid="served"]')?.dataset.state === 'ready', null, { timeout: 30000 });
    await page.evaluate(() => {
      window.__bench = {};
      const open = document.querySelector('[data-testid="served-open"]');
      open.addEventListener('click', () => (window.__bench.pick = performance.now()), { capture: true });
      new MutationObserver(() => {
        const x = window.__bench;
        if (!x.overview && document.querySelector('[data-testid="rank-row"]')) x.overview = performance.now();
      }).observe(document.body, { subtree: true, childList: true });
    });
    await page.click('[data-testid="served-open"]');
    await page.waitForFunction(() => window.__bench.overview || document.querySelector('[data-testid="status"]').dataset.state === 'error', null, {
      timeout: 600000,
      polling: 100,
    });
    const r = await page.evaluate(() => window.__bench);
    return { ms: r.overview - r.pick, table: await rankTableModel(page), errors: await page.textContent('#error-list') };
  } finally {
    await b.close();
  }
}

try {
  for (let run = 1; run <= runs; run++) {
    const load = loadavg()[0].toFixed(1);
    const { ms: native, ranks } = cliJson(CLI, job);
    const m = await measure();
    console.log(
      `run ${run} (load ${load}): CLI --json ${s(native)}, serve → overview ${s(m.ms)}, ratio ${(m.ms / native).toFixed(2)}×, ${tableCheck(m.table, ranks)}${m.errors ? `, errors: ${m.errors}` : ''}`,
    );
  }
} finally {
  server.kill();
  if (!args.includes('--keep')) rmSync(base, { recursive: true, force: true });
}
