// Browser benchmark of the torch_npu page (a measurement, not a test):
//   1. a job of 2 roles × 2 ranks with 100 MiB trace_view.json and 50,000 operator_memory rows per
//      rank: time from picking the folder to the job overview and to all views ready, with the
//      threaded engine (isolated page) and the single-threaded one;
//   2. one rank with a 2 GiB trace_view.json: load time and the wasm memory after the load (memory
//      only grows, so that is the peak).
// Needs a built page (npm run build) and the release CLI (cargo build --release --bin memlens).
//   node scripts/bench-profiler-page.mjs [--dir /tmp/memlens-bench] [--runs 2] [--skip-2g] [--keep]
//                                        [--baseline OTHER_WWW] [--pools Q1,Q2] [--job64]
//                                        [--wide ROLESxRANKSxMB,…]
// The page reads a job of several ranks with a pool of readers by default (www/worker-pool.js);
// --pools 'workers=1,workers=2&poolEngine=threads' also measures the page with each query string
// (`workers=1`: the page's one worker) beside the default, in the same runs.
// --wide '2x128x16' measures jobs of ROLES × RANKS ranks with MB MiB traces each (5,000 rows per
// rank), generated into --dir and deleted afterwards, with the default and each --pools variant:
// time to the overview, the page worker's wasm memory with one rank opened, the readers'.
// --baseline serves a second built page (e.g. a copy of www/ built from an earlier commit) and
// measures it in turn with this one, run by run, so that the two compare as ratios in one run.
// Generated files are deleted at the end unless --keep.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, mkdirSync, statSync, readdirSync } from 'node:fs';
import { cpus, totalmem, loadavg } from 'node:os';
import path from 'node:path';
import { openBrowser, startServer, engineThreads } from '../tests/browser/harness.mjs';
import { serve } from './serve.mjs';
import { root } from './util.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const base = opt('--dir', '/tmp/memlens-bench');
const runs = Number(opt('--runs', '2'));
const CLI = path.join(root, 'target', 'release', 'memlens');
if (!existsSync(CLI)) throw new Error(`build the release CLI first: cargo build --release --bin memlens (${CLI})`);

function generate(dir, extra) {
  if (existsSync(dir)) return;
  const t = performance.now();
  execFileSync(CLI, ['generate', 'profiler', '--out', dir, ...extra], { stdio: 'inherit' });
  console.log(`generated ${dir} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

function sizeOf(dir) {
  let n = 0;
  const walk = (d) => {
    for (const e of readdirSync(d)) {
      const p = path.join(d, e);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else n += s.size;
    }
  };
  walk(dir);
  return n;
}

/** Picks `dir` in the page and times the overview and the ready state (ms from the pick). */
async function measure(server, dir, { timeout = 600000, query = '' } = {}) {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(query ? `${server.url}?${query}` : server.url);
    const threads = await engineThreads(page);
    // Timestamps taken in the page, so that polling does not add to them.
    await page.evaluate(() => {
      window.__bench = {};
      const input = document.querySelector('[data-testid="folder-input"]');
      input.addEventListener('change', () => (window.__bench.pick = performance.now()), { capture: true });
      new MutationObserver(() => {
        const b = window.__bench;
        if (!b.overview && document.querySelector('[data-testid="rank-row"]')) b.overview = performance.now();
        const a = document.querySelector('[data-testid="ascend"]');
        if (!b.ready && a && a.dataset.state === 'ready') b.ready = performance.now();
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] });
    });
    await page.setInputFiles('input[data-testid="folder-input"]', dir);
    await page.waitForFunction(() => window.__bench.ready || document.querySelector('[data-testid="status"]').dataset.state === 'error', null, { timeout, polling: 200 });
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.memoryReadyBytes, null, { timeout: 60000 }).catch(() => {});
    const r = await page.evaluate(() => {
      const a = document.querySelector('[data-testid="ascend"]');
      const marks = Object.fromEntries(performance.getEntriesByType('mark').filter((m) => m.name.startsWith('ascend:')).map((m) => [m.name.slice(7), m.startTime]));
      return { ...window.__bench, marks, timings: a?.dataset.timings, memoryBytes: Number(a?.dataset.memoryBytes || 0), memoryReadyBytes: Number(a?.dataset.memoryReadyBytes || 0), readerMemory: JSON.parse(a?.dataset.readerMemoryBytes || '[]'), rows: [...document.querySelectorAll('[data-testid="rank-row"]')].map((t) => t.dataset.rows) };
    });
    const errors = await page.textContent('#error-list');
    return { timings: split(r), threads, overviewMs: r.overview - r.pick, readyMs: r.ready - r.pick, memoryBytes: r.memoryBytes, memoryReadyBytes: r.memoryReadyBytes, readerMemory: r.readerMemory, rows: r.rows, errors };
  } finally {
    await b.close();
  }
}

/**
 * Where the time to the overview went, from the page's marks (`ascend:*`, page times) and the
 * pooled tab's reader timings: drop → tab mounted, the ranks listed, each reader's engine start,
 * drop loaded, per rank reading the files / parsing / summary, its idle time until the last reader
 * answered, then the overview made, the ranks set up, the views built up to the overview drawn.
 * One-worker pages give their worker's own split (classify, analyze, summary).
 */
function split(r) {
  if (!r.marks || !r.marks.summarized) return r.timings;
  const m = r.marks;
  const d = (a, b) => Math.round(b - a);
  const readers = JSON.parse(r.timings || '{}').readers || [];
  const last = Math.max(...readers.map((x) => x.answered));
  const each = readers.map((x, k) => `reader ${k + 1}: engine ${d(x.spawn, x.engine)}, loaded +${d(x.engine, x.loaded)}, ranks ${x.ranks.map((t) => `${t.read}/${t.parse}/${t.summary}`).join(' ')}, idle ${d(x.answered, last)}`);
  return `drop→mount ${d(r.pick, m.mount)}, parts ${d(m.mount, m.parts)}, readers started ${d(r.pick, Math.min(...readers.map((x) => x.spawn)))} after the drop [${each.join('; ')}] (ranks: read/parse/summary ms), summarized ${d(m.parts, m.summarized)} after parts, overviewOf ${d(m.summarized, m.overviewOf)}, openRanks ${d(m.overviewOf, m.openRanks)}, build→overview ${d(m.build, r.overview)}`;
}

const mib = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;

mkdirSync(base, { recursive: true });
console.log(`machine: ${cpus().length} × ${cpus()[0].model}, ${mib(totalmem())} RAM, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);
const isolated = await startServer({ isolate: true });
const plain = await startServer({ isolate: false });
const baselineDir = opt('--baseline', null);
/** A server of the baseline page, or null without --baseline. */
async function baselineServer(isolate) {
  if (!baselineDir) return null;
  const { server, url } = await serve({ dir: path.resolve(baselineDir), port: 0, isolate });
  return { url, close: () => new Promise((r) => server.close(r)) };
}
const baseIsolated = await baselineServer(true);
const basePlain = await baselineServer(false);
/** The pages to measure for one engine: this build, and the baseline when given. */
const pools = (opt('--pools', '') || '').split(',').filter(Boolean);
const variants = (server, base) => [['', server, ''], ...pools.map((q) => [`${q} `, server, q]), ...(base ? [['baseline ', base, '']] : [])];
try {
  const job = path.join(base, 'job-2x2');
  generate(job, ['--roles', '2', '--ranks', '2', '--trace-mb', '100', '--rows', '50000', '--steps', '2', '--seed', '3']);
  console.log(`job: ${mib(sizeOf(job))} on disk`);
  for (const [name, server, base] of [['threaded', isolated, baseIsolated], ['single-threaded', plain, basePlain]]) {
    for (let run = 1; run <= runs; run++) {
      for (const [which, srv, query] of variants(server, base)) {
        const load = loadavg()[0].toFixed(1);
        // The native CLI on the same files at the same moment: the machine's load moves both alike.
        const t = performance.now();
        execFileSync(CLI, ['profiler', '--json', job], { stdio: 'ignore' });
        const native = performance.now() - t;
        const m = await measure(srv, job, { query });
        const readers = m.readerMemory.length ? `, readers' wasm memory ${m.readerMemory.map(mib).join(' + ')}` : '';
        console.log(`${which}${name} (${m.threads} thread(s)) run ${run} (load ${load}, native CLI just before: ${s(native)}): overview ${s(m.overviewMs)} (${(m.overviewMs / native).toFixed(2)}× the CLI), all views ready ${s(m.readyMs)}, wasm memory ${mib(m.memoryBytes)} after the load / ${mib(m.memoryReadyBytes)} with all views${readers}, rows ${m.rows.join('/')}, split: ${m.timings}${m.errors ? `, errors: ${m.errors}` : ''}`);
      }
    }
  }
  // One job of many ranks, generated into --dir, measured with the default and each --pools
  // variant on both builds: time to the overview against the CLI's --json just before it, the page
  // worker's wasm memory, the readers'.
  async function manyRanks(label, dir, genArgs, timeout) {
    generate(dir, genArgs);
    console.log(`${label} job: ${mib(sizeOf(dir))} on disk`);
    for (const [name, server] of [['threaded', isolated], ['single-threaded', plain]]) {
      for (const [which, srv, query] of variants(server, null)) {
        const load = loadavg()[0].toFixed(1);
        const t = performance.now();
        execFileSync(CLI, ['profiler', '--json', dir], { stdio: 'ignore' });
        const native = performance.now() - t;
        const m = await measure(srv, dir, { query, timeout });
        const readers = m.readerMemory.length ? `, readers' wasm memory ${m.readerMemory.map(mib).join(' + ')}` : '';
        console.log(`${label}, ${which}${name} (${m.threads} thread(s), load ${load}, native CLI just before: ${s(native)}): overview ${s(m.overviewMs)} (${(m.overviewMs / native).toFixed(2)}× the CLI), one rank's views ready ${s(m.readyMs)}, page worker's wasm memory ${mib(m.memoryBytes)} after the load / ${mib(m.memoryReadyBytes)} with all views${readers}, split: ${m.timings}${m.errors ? `, errors: ${m.errors}` : ''}`);
      }
    }
  }
  if (args.includes('--job64')) {
    // Bounded memory per job: 64 ranks (2 roles × 32, 16 MiB traces) read by the page's one
    // worker, which holds every rank's analysis, and by each pool, which holds the rank
    // summaries and one opened rank.
    await manyRanks('64 ranks', path.join(base, 'job-64'), ['--roles', '2', '--ranks', '32', '--trace-mb', '16', '--rows', '20000', '--steps', '2', '--seed', '11']);
  }
  for (const shape of (opt('--wide', '') || '').split(',').filter(Boolean)) {
    const [roles, ranks, mb] = shape.split('x');
    const wide = path.join(base, `job-${shape}`);
    await manyRanks(`${shape} (${Number(roles) * Number(ranks)} ranks)`, wide, ['--roles', roles, '--ranks', ranks, '--trace-mb', mb, '--rows', '5000', '--steps', '2', '--seed', '13'], 3600000);
    if (!args.includes('--keep')) rmSync(wide, { recursive: true, force: true });
  }
  if (!args.includes('--skip-2g')) {
    const big = path.join(base, 'rank-2g');
    generate(big, ['--roles', '1', '--ranks', '1', '--trace-mb', '2048', '--rows', '50000', '--steps', '2', '--seed', '5']);
    console.log(`2 GiB rank: ${mib(sizeOf(big))} on disk`);
    for (const [name, server] of [['threaded', isolated], ['single-threaded', plain]]) {
      const load = loadavg()[0].toFixed(1);
      const m = await measure(server, big);
      console.log(`2 GiB rank, ${name} (${m.threads} thread(s), load ${load}): overview ${s(m.overviewMs)}, all views ready ${s(m.readyMs)}, wasm memory ${mib(m.memoryBytes)} after the load / ${mib(m.memoryReadyBytes)} with all views${m.errors ? `, errors: ${m.errors}` : ''}`);
    }
  }
} finally {
  await isolated.close();
  await plain.close();
  if (baseIsolated) await baseIsolated.close();
  if (basePlain) await basePlain.close();
  if (!args.includes('--keep')) rmSync(base, { recursive: true, force: true });
}
