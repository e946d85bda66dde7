// Browser benchmark of the torch_npu page (a measurement, not a test):
//   1. a job of 2 roles × 2 ranks with 100 MiB trace_view.json and 50,000 operator_memory rows per
//      rank: time from picking the folder to the job overview and to all views ready, with the
//      threaded engine (isolated page) and the single-threaded one;
//   2. one rank with a 2 GiB trace_view.json: load time and the wasm memory after the load (memory
//      only grows, so that is the peak).
// Needs a built page (npm run build) and the release CLI (cargo build --release --bin memlens).
//   node scripts/bench-profiler-page.mjs [--dir /tmp/memlens-bench] [--runs 2] [--skip-2g] [--keep]
//                                        [--baseline OTHER_WWW] [--pools Q1,Q2] [--job64]
//                                        [--wide ROLESxRANKSxMB,…] [--open N|all] [--engines threaded,single]
//                                        [--skip-2x2] [--drop-caches] [--www DIR]
//                                        [--file-limit ROWS,… [--db-rows ROWS,…]] [--idle-memory]
//                                        [--drop-early]
// Beside each wall time it gives the browser's CPU time over the same span (every process of the
// browser, from /proc: scripts/tab-memory.mjs `browserCpu`) and the CLI's CPU time: on 2 cores
// shared with other work the wall time of one page load moves by up to 1.6×, its CPU much less.
// After the 2 × 2 runs it prints each variant's medians over the runs and its ratio to the default
// page of its engine (use --runs 4 or more to judge a page change).
// The page reads a job of several ranks with a pool of readers by default (www/worker-pool.js);
// --pools 'workers=1,workers=2&poolEngine=threads' also measures the page with each query string
// (`workers=1`: the page's one worker) beside the default, in the same runs.
// `--pools readSize=1` reads Files in the sizes before each File stated its read size (the trace in
// 4 MiB batches per thread, the CSV files in 1 MiB chunks); `readSize=MiB` in general sets the size
// a File asks the readers for (src/wasm/file_source.rs FILE_READ is the default).
// --wide '2x128x16' measures jobs of ROLES × RANKS ranks with MB MiB traces each (5,000 rows per
// rank), generated into --dir and deleted afterwards, --runs times, with the default and each --pools variant:
// time to the overview, the page worker's wasm memory with one rank opened, the readers'.
// --open N (or all) then opens N ranks of each --wide job one after another in the rank bar (spread
// over the job: the first, the last and evenly between) and checks that each draws: its allocation
// table holds the rows `memlens profiler --json` counts for that rank and its memory chart has ink.
// --engines picks the builds measured (both by default).
// --file-limit measures (with the default and each --pools variant) what the page's worker holds for one large file, the measure behind the
// per-file limit (FILE_LIMIT in www/profiler/file-limit.js): a rank of ROWS operator rows is generated,
// and the page reads it with only its operator_memory.csv, then with only its memory_record.csv
// (the other files left out through hard links, so no copy is written); --db-rows does the same
// with the database export. Per file: its size, the worker's wasm memory after the load and with
// every view drawn (linear memory only grows: the peak), and that peak over the file's size.
// Every measure also reports the tab's peak resident memory (renderer processes, sampled from
// /proc; see tab-memory.mjs), what the tab holds once the load is over (`settledMemory`), and
// checks the rank table's model (its `data-total` ranks and `data-total-rows` rows, the whole
// table, not only the rows in view) against the CLI's --json.
// --baseline serves a second built page (e.g. a copy of www/ built from an earlier commit) and
// measures it in turn with this one, run by run, so that the two compare as ratios in one run;
// with --baseline-pools also with each --pools query (e.g. the read-ahead of both builds).
// --idle-memory measures an idle tab's resident memory with the pool's readers started ahead (the
// default) and without them (`?workers=1`), and with each --pools query, alternated.
// Generated files are deleted at the end unless --keep.
// --drop-early drops the files as soon as the page's engine is ready, before the pool's readers
// started ahead are (the default waits for them and their warm-up, www/worker-pool.js, up to 5 s).
// --drop-caches empties the kernel's page cache (sync, then 3 into /proc/sys/vm/drop_caches: needs
// root) before each CLI run and each page load, so that both read the job from disk: a job larger
// than the free page cache otherwise favours whichever reads second. --www serves that built www/
// (e.g. a frozen copy) instead of the checkout's, so the checkout can change during a long run.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, mkdirSync, statSync, readdirSync, linkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { machine, machineLine } from './machine.mjs';
import path from 'node:path';
import { openBrowser, startServer, engineThreads } from '../tests/browser/harness.mjs';
import { watchTabMemory, tabMemory, browserCpu } from './tab-memory.mjs';
import { cliJson, rankTableModel, tableCheck } from './bench-job.mjs';
import { serve } from './serve.mjs';
import { root, opt } from './util.mjs';

const args = process.argv.slice(2);
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

const DROP = args.includes('--drop-caches');
/** With --drop-caches: writes the dirty pages out and empties the page cache. */
function dropCaches() {
  if (!DROP) return;
  execFileSync('sync');
  writeFileSync('/proc/sys/vm/drop_caches', '3');
}

const DROP_EARLY = args.includes('--drop-early');

/** The most a measure waits after the page's engine started for the readers started ahead. */
const IDLE_WAIT_MS = 5000;

/**
 * The idle tab's resident memory (renderer processes) once its engines are ready, for `query` on
 * `server`: what the readers started ahead cost a tab that is not used.
 */
async function idleMemory(server, query) {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(query ? `${server.url}?${query}` : server.url);
    await engineThreads(page);
    await page.waitForFunction(() => document.documentElement.dataset.warmReaders, null, { timeout: IDLE_WAIT_MS, polling: 100 }).catch(() => {});
    // Settled: the largest of the samples.
    const peak = (await tabSamples(b.dir)).at(-1);
    const warm = await page.evaluate(() => document.documentElement.dataset.warmReaders || '0');
    return { renderer: peak, warm: Number(warm), workers: page.workers().length };
  } finally {
    await b.close();
  }
}

/**
 * The tab's resident memory (renderer processes, `tabMemory`) in 5 samples a second apart, the
 * first a second from now; sorted, smallest first.
 */
async function tabSamples(dir) {
  const xs = [];
  for (let k = 0; k < 5; k++) {
    await new Promise((r) => setTimeout(r, 1000));
    xs.push(tabMemory(dir).renderer);
  }
  return xs.sort((a, b) => a - b);
}

/**
 * The tab's resident memory once a load is over: what the tab holds while the user looks at the
 * job (the page's worker, the reader that kept the first rank, the readers started ahead for the
 * next drop, which start `REFILL_MS` after the load). The median of `tabSamples`, taken from 6 s
 * after the views are ready.
 */
async function settledMemory(dir) {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  return (await tabSamples(dir))[2];
}

/** How long after a load `settledMemory` waits before its samples (the first comes 1 s later). */
const SETTLE_MS = 5000;

/** Picks `dir` in the page and times the overview and the ready state (ms from the pick). */
async function measure(server, dir, { timeout = 600000, query = '', after = null } = {}) {
  const b = await openBrowser();
  const tab = watchTabMemory(b.dir);
  try {
    const page = await b.page();
    await page.goto(query ? `${server.url}?${query}` : server.url);
    const threads = await engineThreads(page);
    // The pool's readers start while the page is idle (www/worker-pool.js): drop once they are
    // ready, as a user who takes a few seconds to pick the folder finds them (a page without them
    // waits as long, to the timeout), or with --drop-early at once.
    if (!DROP_EARLY) await page.waitForFunction(() => document.documentElement.dataset.warmReaders, null, { timeout: IDLE_WAIT_MS, polling: 100 }).catch(() => {});
    dropCaches();
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
    // The browser's CPU time from the pick to the overview drawn (polled every 50 ms: the sample
    // follows the overview by at most that), and to all views ready.
    const cpu0 = browserCpu(b.dir);
    await page.setInputFiles('input[data-testid="folder-input"]', dir);
    await page.waitForFunction(() => window.__bench.overview || document.querySelector('[data-testid="status"]').dataset.state === 'error', null, { timeout, polling: 50 });
    const cpu1 = browserCpu(b.dir);
    await page.waitForFunction(() => window.__bench.ready || document.querySelector('[data-testid="status"]').dataset.state === 'error', null, { timeout, polling: 50 });
    const cpu2 = browserCpu(b.dir);
    const cpu = { overview: cpu1.all - cpu0.all, overviewRenderer: cpu1.renderer - cpu0.renderer, ready: cpu2.all - cpu0.all };
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.memoryReadyBytes, null, { timeout: 60000 }).catch(() => {});
    const r = await page.evaluate(() => {
      const a = document.querySelector('[data-testid="ascend"]');
      const marks = Object.fromEntries(performance.getEntriesByType('mark').filter((m) => m.name.startsWith('ascend:')).map((m) => [m.name.slice(7), m.startTime]));
      return { ...window.__bench, marks, timings: a?.dataset.timings, memoryBytes: Number(a?.dataset.memoryBytes || 0), memoryReadyBytes: Number(a?.dataset.memoryReadyBytes || 0), readerMemory: JSON.parse(a?.dataset.readerMemoryBytes || '[]') };
    });
    const table = await rankTableModel(page, '[data-testid="ascend"]');
    const tabLoad = tab.peak();
    const settled = await settledMemory(b.dir);
    const opened = after ? await after(page) : null;
    const errors = await page.textContent('#error-list');
    return { timings: split(r), threads, cpu, overviewMs: r.overview - r.pick, readyMs: r.ready - r.pick, memoryBytes: r.memoryBytes, memoryReadyBytes: r.memoryReadyBytes, readerMemory: r.readerMemory, table, tabLoad, settled, opened, tab: tab.stop(), errors };
  } finally {
    tab.stop();
    await b.close();
  }
}

/**
 * Opens the ranks at `which` (indices in the job's order) one after another in the rank bar and
 * checks that each draws: the allocation table answers for that rank with the CLI's row count, the
 * memory chart has ink. Returns per rank { i, ms, ok, why }.
 */
async function openEach(page, which, ranks, timeout = 600000) {
  const out = [];
  for (const i of which) {
    const t = performance.now();
    await page.selectOption('[data-testid="rank-select"]', String(i));
    const want = ranks[i];
    let ok = true;
    let why = '';
    try {
      await page.waitForFunction(({ i, rows }) => {
        const box = document.querySelector('[data-testid="ascend-table"]');
        return box && box.dataset.rank === String(i) && box.dataset.state === 'ready' && box.dataset.total === String(rows);
      }, { i, rows: want.rows }, { timeout, polling: 100 });
    } catch {
      ok = false;
      why = await page.evaluate(() => {
        const box = document.querySelector('[data-testid="ascend-table"]');
        return `table rank ${box?.dataset.rank}, state ${box?.dataset.state}, rows ${box?.dataset.total}`;
      });
    }
    const ms = performance.now() - t;
    const label = await page.$eval(`[data-testid="rank-select"] option[value="${i}"]`, (o) => o.textContent);
    if (!label.startsWith(`${want.role} · rank ${want.rank} `)) {
      ok = false;
      why += ` rank bar says "${label}", the CLI's rank ${i} is ${want.role} ${want.rank}`;
    }
    // Ink: pixels of the memory chart's plot area unlike its most common colour (the background).
    const ink = await page.evaluate(async () => {
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const c = document.querySelector('[data-testid="memory-canvas"]');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const count = new Map();
      for (let k = 0; k < d.length; k += 4) {
        const key = (d[k] << 24) | (d[k + 1] << 16) | (d[k + 2] << 8) | d[k + 3];
        count.set(key, (count.get(key) || 0) + 1);
      }
      const bg = Math.max(...count.values());
      return (d.length / 4 - bg) / (d.length / 4);
    });
    if (ink < 0.005) {
      ok = false;
      why += ` memory chart ink ${(ink * 100).toFixed(2)} %`;
    }
    out.push({ i, ms, ok, why: why.trim() });
  }
  return out;
}

/** `n` rank indices spread over `count` ranks (the first and the last among them), or all. */
function spread(n, count) {
  if (n === 'all' || Number(n) >= count) return [...Array(count).keys()];
  const k = Math.max(2, Number(n));
  return [...new Set([...Array(k).keys()].map((j) => Math.round((j * (count - 1)) / (k - 1))))];
}

/**
 * Where the time to the overview went, from the page's marks (`ascend:*`, page times) and the
 * pooled tab's reader timings: drop → tab mounted, the ranks listed, each reader's engine start
 * (started ahead of the drop or at it — www/worker-pool.js `warmReaders` — and the steps of its
 * start: scripts loaded, engine glue imported, wasm compiled and instantiated, threads started,
 * ready; whether it reads its files ahead: www/read-ahead.js), drop loaded, per rank reading the
 * files / parsing / summary, its idle time until the last reader answered, then the overview made,
 * the ranks set up, the views built up to the overview drawn. One-worker pages give their worker's
 * own split (classify, analyze, summary).
 */
function split(r) {
  if (!r.marks || !r.marks.summarized) return r.timings;
  const m = r.marks;
  const d = (a, b) => Math.round(b - a);
  const readers = JSON.parse(r.timings || '{}').readers || [];
  const last = Math.max(...readers.map((x) => x.answered));
  const steps = (x) => {
    if (!x.marks) return x.handed === undefined ? '' : ` (${x.handed ? 'handed' : 'compiled'})`;
    let at = x.spawn;
    const parts = ['script', 'glue', 'instance', 'threads', 'ready'].filter((k) => x.marks[k] !== undefined).map((k) => {
      const t = `${k} +${d(at, x.marks[k])}`;
      at = x.marks[k];
      return t;
    });
    return ` [${parts.join(', ')}]`;
  };
  const start = (x) => {
    const ahead = x.warm ? `started ${d(x.spawn, x.taken)} ms before it was taken, ready ${x.engine <= x.taken ? 'then' : `${d(x.taken, x.engine)} ms after`}` : `started at the drop, ready after ${d(x.spawn, x.engine)} ms`;
    const w = x.warmUp;
    const warmUp = !w ? '' : w.error ? `, warm-up failed: ${w.error}` : `, warm-up ${d(w.start, w.end)} ms${w.done ? '' : ' (gave way)'} ${w.end <= x.taken ? 'before' : `ending ${d(x.taken, w.end)} ms after`} it was taken (${Object.entries(w.ms || {}).map(([k, v]) => `${k} ${v}`).join(', ')})`;
    return `engine ${d(x.spawn, x.engine)} ms: ${ahead}${steps(x)}${x.readAhead ? ', read ahead' : ''}${warmUp}`;
  };
  const from = (x) => Math.max(x.engine, x.taken ?? x.spawn);
  const each = readers.map((x, k) => `reader ${k + 1}: ${start(x)}, loaded +${d(from(x), x.loaded)}, ranks ${x.ranks.map((t) => `${t.read}/${t.parse}/${t.summary}${t.bytes ? ` (${Math.round(t.bytes / 1e3 / Math.max(1, t.read))} MB/s read)` : ''}`).join(' ')}, idle ${d(x.answered, last)}`);
  return `drop→mount ${d(r.pick, m.mount)}, parts ${d(m.mount, m.parts)}, readers taken ${d(r.pick, Math.min(...readers.map((x) => x.taken ?? x.spawn)))} after the drop [${each.join('; ')}] (ranks: read/parse/summary ms), summarized ${d(m.parts, m.summarized)} after parts, overviewOf ${d(m.summarized, m.overviewOf)}, openRanks ${d(m.overviewOf, m.openRanks)}, build→overview ${d(m.build, r.overview)}`;
}

const mib = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
const int = (n) => n.toLocaleString('en-US');
const tabText = (m) => `tab's peak resident memory ${mib(m.tab.renderer)} (renderer processes; ${mib(m.tabLoad.renderer)} by the overview; browser in all ${mib(m.tab.all)}), ${mib(m.settled)} settled after the load`;
const ENGINES = (opt('--engines', 'threaded,single') || '').split(',');
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;

// Each variant's measures of the 2 × 2 job, for the medians at its end: the wall time of one run
// moves by up to 1.6× with the machine's load, its CPU time less.
const measures = new Map();
/**
 * Keeps one run's measure `m` of `variant` ({ wall, cpu, native, nativeCpu, tab, load }), the page
 * of `engine` with a query or the baseline (its default page: the variant named `engine`).
 */
function record(variant, engine, m) {
  if (!measures.has(variant)) measures.set(variant, { engine, ms: [] });
  measures.get(variant).ms.push(m);
}
const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[a.length >> 1] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};
const range = (xs) => `${s(Math.min(...xs))}–${s(Math.max(...xs))}`;
/**
 * Prints each variant's medians over its runs (time to the overview, the browser's CPU time to it,
 * each as a ratio to the CLI's in the same run, the tab's peak memory), and each variant against
 * the default page of its engine as a ratio of medians.
 */
function summary(label) {
  for (const [variant, { engine, ms }] of measures) {
    const first = measures.get(engine)?.ms ?? ms;
    const wall = median(ms.map((m) => m.wall));
    const cpu = median(ms.map((m) => m.cpu));
    const vs = ms === first ? '' : `; against the default: wall ${(wall / median(first.map((m) => m.wall))).toFixed(2)}×, CPU ${(cpu / median(first.map((m) => m.cpu))).toFixed(2)}×`;
    console.log(`${label}, ${variant}, median of ${ms.length} runs (load ${Math.min(...ms.map((m) => m.load))}–${Math.max(...ms.map((m) => m.load))}): overview ${s(wall)} (${range(ms.map((m) => m.wall))}; ${median(ms.map((m) => m.wall / m.native)).toFixed(2)}× the CLI's --json), browser CPU ${s(cpu)} (${range(ms.map((m) => m.cpu))}; ${median(ms.map((m) => m.cpu / m.nativeCpu)).toFixed(2)}× the CLI's CPU), tab peak ${mib(median(ms.map((m) => m.tab)))} (${mib(Math.min(...ms.map((m) => m.tab)))}–${mib(Math.max(...ms.map((m) => m.tab)))})${vs}`);
  }
  measures.clear();
}

mkdirSync(base, { recursive: true });
console.log(`${machineLine(machine())}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);
const WWW = opt('--www', null);
/** A server of this page: the checkout's www/, or --www. */
async function pageServer(isolate) {
  if (!WWW) return startServer({ isolate });
  const { server, url } = await serve({ dir: path.resolve(WWW), port: 0, isolate });
  return { url, close: () => new Promise((r) => server.close(r)) };
}
const isolated = await pageServer(true);
const plain = await pageServer(false);
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
/** The builds asked for with --engines ('threaded', 'single'). */
const engines = (list) => list.filter(([name]) => ENGINES.some((e) => name.startsWith(e)));
const basePools = args.includes('--baseline-pools') ? pools : [];
const variants = (server, base) => [['', server, ''], ...pools.map((q) => [`${q} `, server, q]), ...(base ? [['baseline ', base, ''], ...basePools.map((q) => [`baseline ${q} `, base, q])] : [])];
try {
  if (args.includes('--idle-memory')) {
    // An idle tab with the readers started ahead (default) and without them (`?workers=1`: no
    // pool), and with each --pools query, alternated, --runs times, on the isolated page
    // (threaded engine) and the plain one.
    for (const [name, server] of engines([['threaded', isolated], ['single-threaded', plain]])) {
      for (let run = 1; run <= runs; run++) {
        for (const query of ['', 'workers=1', ...pools]) {
          const load = loadavg()[0].toFixed(1);
          const m = await idleMemory(server, query);
          console.log(`idle tab, ${name}, ${query || 'default'} run ${run} (load ${load}): ${m.warm} reader(s) started ahead, ${m.workers} workers, renderer resident ${mib(m.renderer)}`);
        }
      }
    }
  }
  if (!args.includes('--skip-2x2')) await twoByTwo();
  /** The 2 × 2 job (100 MiB traces, 50,000 rows per rank), each engine and --pools variant, --runs times. */
  async function twoByTwo() {
    const job = path.join(base, 'job-2x2');
    generate(job, ['--roles', '2', '--ranks', '2', '--trace-mb', '100', '--rows', '50000', '--steps', '2', '--seed', '3']);
    console.log(`job: ${mib(sizeOf(job))} on disk`);
    for (const [name, server, base] of engines([['threaded', isolated, baseIsolated], ['single-threaded', plain, basePlain]])) {
      for (let run = 1; run <= runs; run++) {
        for (const [which, srv, query] of variants(server, base)) {
          const load = loadavg()[0].toFixed(1);
          // The native CLI on the same files at the same moment: the machine's load moves both alike.
          const { ms: native, cpuMs: nativeCpu, ranks } = cliJson(CLI, job);
          const m = await measure(srv, job, { query });
          const readers = m.readerMemory.length ? `, readers' wasm memory ${m.readerMemory.map(mib).join(' + ')}` : '';
          record(`${which}${name}`, name, { wall: m.overviewMs, cpu: m.cpu.overview, native, nativeCpu, tab: m.tab.renderer, load: Number(load) });
          console.log(`${which}${name} (${m.threads} thread(s)) run ${run} (load ${load}, native CLI just before: ${s(native)}, CPU ${s(nativeCpu)}): overview ${s(m.overviewMs)} (${(m.overviewMs / native).toFixed(2)}× the CLI), browser CPU to the overview ${s(m.cpu.overview)} (renderers ${s(m.cpu.overviewRenderer)}; ${(m.cpu.overview / nativeCpu).toFixed(2)}× the CLI's CPU), to all views ${s(m.cpu.ready)}, all views ready ${s(m.readyMs)}, wasm memory ${mib(m.memoryBytes)} after the load / ${mib(m.memoryReadyBytes)} with all views${readers}, ${tabText(m)}, ${tableCheck(m.table, ranks)}, split: ${m.timings}${m.errors ? `, errors: ${m.errors}` : ''}`);
        }
      }
    }
    summary('2 × 2 job');
  }
  // One job of many ranks, generated into --dir, measured with the default, each --pools variant
  // and the --baseline page on both builds: time to the overview against the CLI's --json just
  // before it, the page worker's wasm memory, the readers'.
  async function manyRanks(label, dir, genArgs, timeout, open = null) {
    generate(dir, genArgs);
    console.log(`${label} job: ${mib(sizeOf(dir))} on disk`);
    for (let run = 1; run <= runs; run++) for (const [name, server, baseServer] of engines([['threaded', isolated, baseIsolated], ['single-threaded', plain, basePlain]])) {
      for (const [which, srv, query] of variants(server, baseServer)) {
        const load = loadavg()[0].toFixed(1);
        dropCaches();
        const { ms: native, ranks } = cliJson(CLI, dir);
        const after = open ? (page) => openEach(page, spread(open, ranks.length), ranks, timeout) : null;
        const m = await measure(srv, dir, { query, timeout, after });
        const readers = m.readerMemory.length ? `, readers' wasm memory ${m.readerMemory.map(mib).join(' + ')} (${mib(m.readerMemory.reduce((a, x) => a + x, 0))} in all)` : '';
        console.log(`${label}, ${which}${name} run ${run} (${m.threads} thread(s), load ${load}, native CLI just before: ${s(native)}): overview ${s(m.overviewMs)} (${(m.overviewMs / native).toFixed(2)}× the CLI), one rank's views ready ${s(m.readyMs)}, page worker's wasm memory ${mib(m.memoryBytes)} after the load / ${mib(m.memoryReadyBytes)} with all views${readers}, ${tabText(m)}, ${tableCheck(m.table, ranks)}, split: ${m.timings}${m.errors ? `, errors: ${m.errors}` : ''}`);
        if (m.opened) {
          const times = m.opened.map((o) => o.ms).sort((a, b) => a - b);
          const bad = m.opened.filter((o) => !o.ok);
          console.log(`${label}, ${which}${name}: opened ${m.opened.length} of ${ranks.length} ranks (load ${loadavg()[0].toFixed(1)}): each drew ${bad.length ? `— NOT ${bad.length}: ${bad.map((o) => `#${o.i} ${o.why}`).join('; ')}` : 'its CLI row count and a chart'}; time to its table: median ${s(times[times.length >> 1])}, max ${s(times[times.length - 1])}`);
          console.log(`  per rank (index: seconds to its table): ${m.opened.map((o) => `${o.i}: ${(o.ms / 1000).toFixed(2)}${o.ok ? '' : ' FAILED'}`).join(', ')}`);
        }
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
    await manyRanks(`${shape} (${Number(roles) * Number(ranks)} ranks)`, wide, ['--roles', roles, '--ranks', ranks, '--trace-mb', mb, '--rows', '5000', '--steps', '2', '--seed', '13'], 3600000, opt('--open', null));
    if (!args.includes('--keep')) rmSync(wide, { recursive: true, force: true });
  }
  // One large file per rank: the worker's memory for it, against its size.
  async function oneFile(label, dir, file) {
    console.log(`${label}: ${path.basename(file)} ${mib(statSync(file).size)}`);
    for (const [name, server] of engines([['threaded', isolated], ['single-threaded', plain]])) for (const [which, srv, query] of variants(server, null)) {
      const load = loadavg()[0].toFixed(1);
      const { ms: native, ranks } = cliJson(CLI, dir);
      const m = await measure(srv, dir, { query, timeout: 1800000 });
      const size = statSync(file).size;
      const peak = Math.max(m.memoryBytes, m.memoryReadyBytes);
      console.log(`${label}, ${which}${name} (${m.threads} thread(s), load ${load}, native CLI ${s(native)}, ${int(ranks[0]?.rows ?? 0)} rows): overview ${s(m.overviewMs)}, all views ready ${s(m.readyMs)}, wasm memory ${mib(m.memoryBytes)} after the load / ${mib(m.memoryReadyBytes)} with all views = ${(peak / size).toFixed(2)}× the file, ${tabText(m)}${m.errors ? `, errors: ${m.errors}` : ''}`);
    }
  }
  /** A copy of the folder tree `from` at `to` made of hard links, without the files named in `drop`. */
  function linkTree(from, to, drop) {
    mkdirSync(to, { recursive: true });
    for (const e of readdirSync(from, { withFileTypes: true })) {
      const [a, b] = [path.join(from, e.name), path.join(to, e.name)];
      if (e.isDirectory()) linkTree(a, b, drop);
      else if (!drop.includes(e.name)) linkSync(a, b);
    }
  }
  const findFile = (dir, name) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        const f = findFile(p, name);
        if (f) return f;
      } else if (name(e.name)) return p;
    }
    return null;
  };
  for (const rows of (opt('--file-limit', '') || '').split(',').filter(Boolean)) {
    const dir = path.join(base, `limit-${rows}`);
    generate(dir, ['--roles', '1', '--ranks', '1', '--trace-mb', '0.1', '--rows', rows, '--steps', '2', '--seed', '17']);
    for (const keep of ['operator_memory.csv', 'memory_record.csv']) {
      const only = path.join(base, `limit-${rows}-${keep}`);
      linkTree(dir, only, ['trace_view.json', 'operator_memory.csv', 'memory_record.csv'].filter((f) => f !== keep));
      await oneFile(`${rows} rows, only ${keep}`, only, findFile(only, (n) => n === keep));
      rmSync(only, { recursive: true, force: true });
    }
    rmSync(dir, { recursive: true, force: true });
  }
  for (const rows of (opt('--db-rows', '') || '').split(',').filter(Boolean)) {
    const dir = path.join(base, `limit-db-${rows}`);
    generate(dir, ['--roles', '1', '--ranks', '1', '--trace-mb', '0.1', '--rows', rows, '--steps', '2', '--seed', '17', '--export', 'db']);
    await oneFile(`${rows} rows, database export`, dir, findFile(dir, (n) => n.endsWith('.db')));
    rmSync(dir, { recursive: true, force: true });
  }
  if (!args.includes('--skip-2g')) {
    const big = path.join(base, 'rank-2g');
    generate(big, ['--roles', '1', '--ranks', '1', '--trace-mb', '2048', '--rows', '50000', '--steps', '2', '--seed', '5']);
    console.log(`2 GiB rank: ${mib(sizeOf(big))} on disk`);
    for (const [name, server] of engines([['threaded', isolated], ['single-threaded', plain]])) {
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
