// Benchmark of the wasm engine's parse speed per byte against the native CLI (a measurement, not a
// test): the same rank's files, from memory, in one run, the builds alternated run by run.
//   node scripts/bench-wasm-engine.mjs [--job DIR] [--runs 3] [--www NAME=DIR ...] [--no-native]
//                                     [--cli PATH] [--profile OUT.json] [--top 40]
// The job is the issue's 2 roles × 2 ranks (100 MiB trace_view.json, 50,000 operator_memory rows per
// rank; ~109 MB of files per rank), generated once with the CLI into --job (default
// /tmp/memlens-wasm-bench/job-2x2). Every file is read into memory first; the engine (the
// single-threaded build `DIR/pkg/`, loaded in Node's V8, the engine of Chromium) then reads each
// rank as a pool reader of the page does (`Session`, `classify`, `ProfilerView.keepRanks`,
// `analyze`), its `File`s being in-memory objects read through a stand-in `FileReaderSync` that
// copies each slice, as the browser's does. Reported per rank: the time inside `analyze` less the
// time inside those reads (the page's "parsing" split), the CPU time of the process over the same
// span, and MB/s of each. The native side: `memlens -q profiler RUN_DIR… --json` on the same rank
// with RAYON_NUM_THREADS=1, its wall and CPU time (GNU time), so both sides run on one thread.
// `--www NAME=DIR` (repeatable; default `this=www`) measures several builds of the page's engine,
// alternated; the first is the reference of the ratios. `--profile OUT.json` records a V8 CPU
// profile of the first build's analyses (`node:inspector`) and prints the functions with the most
// self time; build that engine with its name section kept to see Rust names (see `docs/benchmarks.md`).
// `--fresh N --warm-up engine --warm-up-for NAMES [--warm-up-size TRACE_BYTES,ROWS]
// [--warm-up-wait MS]`: the fresh engines of the builds NAMES first read the page's warm-up job
// (the engine's `warmUpJob`, www/warm-up.js) and wait MS ms; `--warm-up DIR` reads a job folder.
// `--snapshot FILE` (repeatable) measures memory snapshots instead of the job: each file, in memory,
// opened as the page's snapshot worker opens it (`Session.addFile`, `SnapshotSession.open`), the
// pickle parse being the engine's own `parse_ms` less the time inside the reads, and the CPU time
// of the whole open (parse, model, analysis) less the reads; against `memlens -q snapshot FILE
// --json` on one thread, whose output each build's `summaryJson()` must equal byte for byte.
// `--fresh` and the warm-up options are for the job only.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root, opt } from './util.mjs';

const args = process.argv.slice(2);
const runs = Number(opt('--runs', '3'));
const job = opt('--job', '/tmp/memlens-wasm-bench/job-2x2');
const CLI = opt('--cli', path.join(root, 'target', 'release', 'memlens'));
const native = !args.includes('--no-native');
const profileOut = opt('--profile', null);
const top = Number(opt('--top', '40'));
const builds = args
  .map((a, i) => (args[i - 1] === '--www' ? a.split('=') : null))
  .filter(Boolean)
  .map(([name, ...p]) => ({ name, dir: path.resolve(p.join('=')) }));
if (!builds.length) builds.push({ name: 'this', dir: path.join(root, 'www') });
const snapshots = args.filter((a, i) => args[i - 1] === '--snapshot').map((a) => path.resolve(a));
if (snapshots.length && (opt('--fresh', null) || opt('--warm-up', null))) throw new Error('--fresh and --warm-up measure the job, not --snapshot files');

if (!snapshots.length && !existsSync(job)) {
  if (!existsSync(CLI)) throw new Error(`no job at ${job} and no CLI to generate it: cargo build --release --bin memlens`);
  mkdirSync(path.dirname(job), { recursive: true });
  execFileSync(CLI, ['-q', 'generate', 'profiler', '--out', job, '--roles', '2', '--ranks', '2', '--trace-mb', '100',
    '--rows', '50000', '--steps', '2', '--seed', '3'], { stdio: 'inherit' });
}

/** Every file under `dir`, as `{ rel, bytes }` with `rel` starting at the folder's own name. */
function filesUnder(dir) {
  const out = [];
  const walk = (d, rel) => {
    for (const n of readdirSync(d).sort()) {
      const p = path.join(d, n);
      if (statSync(p).isDirectory()) walk(p, `${rel}/${n}`);
      else out.push({ rel: `${rel}/${n}`, bytes: new Uint8Array(readFileSync(p)) });
    }
  };
  walk(dir, path.basename(dir));
  return out;
}

/** What the engine does with a `File`: its size and slices (a `Blob` over the same bytes). */
class MemoryFile {
  constructor(bytes) {
    this.bytes = bytes;
    this.size = bytes.length;
  }
  slice(start, end) {
    return new MemoryFile(this.bytes.subarray(start, end));
  }
}

/** Time and count of the engine's reads, the browser's "reading the `File`s" part. */
const reads = { ms: 0, cpu: 0, n: 0, bytes: 0 };
// The browser's FileReaderSync hands back a new ArrayBuffer per read: so does this one (a copy).
globalThis.FileReaderSync = class FileReaderSync {
  readAsArrayBuffer(blob) {
    const t = performance.now();
    const c = process.cpuUsage();
    const copy = blob.bytes.slice();
    const used = process.cpuUsage(c);
    reads.ms += performance.now() - t;
    reads.cpu += (used.user + used.system) / 1000;
    reads.n += 1;
    reads.bytes += copy.length;
    return copy.buffer;
  }
};

// The page's read hook (www/file-reads.js), through which the engine reads every `File`
// (src/wasm/file_source.rs). Without it every read failed, and the analyses read nothing: this
// bench measured empty ranks from the round that brought the hook until this was added.
globalThis.memlensReadSlice = (file, start, end) => new Uint8Array(new FileReaderSync().readAsArrayBuffer(file.slice(start, end)));
// The page's stop question (www/file-reads.js), never stopped here: the engine asks it every MiB
// it parses, as on the page (an engine before that question never calls it).
globalThis.memlensStopped = () => false;

const files = snapshots.length
  ? snapshots.map((p) => ({ rel: path.basename(p), dir: path.dirname(p), bytes: new Uint8Array(readFileSync(p)) }))
  : filesUnder(job);
const total = files.reduce((n, f) => n + f.bytes.length, 0);
console.log(`${snapshots.length ? 'snapshots' : `job ${job}`}: ${files.length} files, ${(total / 1e6).toFixed(1)} MB, all in memory`);

for (const b of builds) {
  const glue = path.join(b.dir, 'pkg', 'memlens.js');
  const wasm = path.join(b.dir, 'pkg', 'memlens_bg.wasm');
  // One glue module per build, even for one folder given twice (its instance lives in the glue).
  b.mod = await import(`${pathToFileURL(glue).href}?build=${encodeURIComponent(b.name)}`);
  b.warm = (opt('--warm-up-for', '') || '').split(',').includes(b.name);
  const t = performance.now();
  b.mod.initSync({ module: new WebAssembly.Module(readFileSync(wasm)) });
  console.log(`${b.name}: ${wasm} (${statSync(wasm).size} B), compiled and instantiated in ${(performance.now() - t).toFixed(0)} ms, ${b.mod.engineInfo()}`);
}

/** A session of the whole job in build `b`, classified, and its ranks (`parts`). */
function session(b) {
  const s = new b.mod.Session();
  for (const f of files) s.addFile(f.rel, new MemoryFile(f.bytes));
  s.classify(() => {});
  const v = new b.mod.ProfilerView(s);
  const parts = JSON.parse(v.parts(s));
  v.free();
  return { s, parts };
}

/** One rank read by the engine as a pool reader does; times in ms. */
function analyzeRank(b, s, part) {
  const v = new b.mod.ProfilerView(s);
  let progress = 0;
  const r0 = { ...reads };
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  v.keepRanks(s, JSON.stringify(part.run_dirs));
  v.analyze(s, () => {
    progress += 1;
  });
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  const summary = v.request(JSON.stringify({ method: 'rankSummaries', params: {} }));
  v.free();
  const read = reads.ms - r0.ms;
  if (reads.bytes === r0.bytes) throw new Error(`${b.name}: the engine read none of the rank's files`);
  return {
    wall,
    read,
    parse: wall - read,
    cpu: (cpu.user + cpu.system) / 1000 - (reads.cpu - r0.cpu),
    reads: reads.n - r0.n,
    readBytes: reads.bytes - r0.bytes,
    progress,
    summary,
  };
}

/** A snapshot opened by build `b` as the page's snapshot worker opens it; times in ms. */
function openSnapshot(b, f) {
  const s = new b.mod.Session();
  s.addFile(f.rel, new MemoryFile(f.bytes));
  let progress = 0;
  const r0 = { ...reads };
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const snap = b.mod.SnapshotSession.open(s, f.rel, () => {
    progress += 1;
  });
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  const { timings } = JSON.parse(snap.overview());
  const summary = snap.summaryJson();
  snap.free();
  s.free();
  const read = reads.ms - r0.ms;
  if (reads.bytes === r0.bytes) throw new Error(`${b.name}: the engine read none of ${f.rel}`);
  return {
    wall,
    read,
    // The engine's parse includes its reads (by the engine's clock, whole ms).
    parse: timings.parse_ms - read,
    cpu: (cpu.user + cpu.system) / 1000 - (reads.cpu - r0.cpu),
    reads: reads.n - r0.n,
    readBytes: reads.bytes - r0.bytes,
    progress,
    summary,
  };
}

/** The native CLI on one thread, `args` after `-q`, in `cwd`: wall and CPU (ms), stdout. */
function cli(args, cwd) {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', CLI, '-q', ...args, '--json'], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RAYON_NUM_THREADS: '1' },
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(`${CLI} failed: ${r.stderr}`);
  const wall = performance.now() - t;
  const [u, sys, kb] = r.stderr.toString().trim().split('\n').pop().split(/\s+/).map(Number);
  return { wall, cpu: (u + sys) * 1000, rss: kb / 1024, out: r.stdout.toString() };
}

/** The native CLI on the rank's run folders, on one thread: wall and CPU (ms). */
function cliRank(part) {
  return cli(['profiler', ...part.run_dirs.map((d) => path.join(path.dirname(job), d))]);
}

const mbps = (bytes, ms) => (bytes / 1e6 / (ms / 1000)).toFixed(0);
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// The copy of the bytes into wasm memory, alone: 100 MiB in 8 MiB slices (the engine's batch).
if (!args.includes('--child')) {
  const mem = new WebAssembly.Memory({ initial: 160 });
  const src = new Uint8Array(8 << 20).fill(7);
  const dst = new Uint8Array(mem.buffer);
  const t = performance.now();
  for (let i = 0; i < 12; i++) dst.set(src, 1 << 20);
  console.log(`copy into wasm memory alone: 96 MiB in 8 MiB slices in ${(performance.now() - t).toFixed(1)} ms`);
}

const sessions = snapshots.length ? builds.map((b) => ({ b })) : builds.map((b) => ({ b, ...session(b) }));
// What each run measures: the job's ranks, or the snapshot files.
const ranks = snapshots.length
  ? files.map((f) => ({ label: f.rel, bytes: f.bytes.length, file: f }))
  : sessions[0].parts.map((p) => ({ ...p, label: p.run_dirs.join('+') }));
console.log(`${snapshots.length ? 'snapshots' : 'ranks'}: ${ranks.map((p) => `${p.label} (${(p.bytes / 1e6).toFixed(1)} MB)`).join(', ')}`);
/** The native side of one item, and the build's side (the `s` of `session` for the job). */
const nativeRun = (part) => (part.file ? cli(['snapshot', part.file.rel], part.file.dir) : cliRank(part));
const wasmRun = (b, s, part) => (part.file ? openSnapshot(b, part.file) : analyzeRank(b, s, part));
let inspector = null;
if (profileOut) {
  const { Session } = await import('node:inspector');
  inspector = new Session();
  inspector.connect();
  const post = (m, p = {}) => new Promise((res, rej) => inspector.post(m, p, (e, r) => (e ? rej(e) : res(r))));
  inspector.call = post;
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
}

// --child: one analysis of the first rank with a fresh engine (the parent's --fresh runs).
if (args.includes('--child')) {
  const { b, s: sess, parts } = sessions[0];
  const warmJob = opt('--warm-up', null);
  if (warmJob) {
    // A small job read first, so that V8 compiles the hot code with its optimising tier before
    // the rank measured (the experiment behind the note on tiering up in `docs/benchmarks.md`).
    const t = performance.now();
    const ws = new b.mod.Session();
    if (warmJob === 'engine') {
      // The page's warm-up job (www/warm-up.js), made by the engine itself.
      const [traceBytes, rows] = opt('--warm-up-size', `${2 << 20},4000`).split(',').map(Number);
      for (const [rel, bytes] of b.mod.warmUpJob(traceBytes, rows)) ws.addFile(rel, new MemoryFile(bytes));
    } else for (const f of filesUnder(warmJob)) ws.addFile(f.rel, new MemoryFile(f.bytes));
    ws.classify(() => {});
    const wv = new b.mod.ProfilerView(ws);
    wv.analyze(ws, () => {});
    wv.free();
    ws.free();
    const pause = Number(opt('--warm-up-wait', '0'));
    if (pause) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
    console.error(`warm-up ${(performance.now() - t).toFixed(0)} ms`);
  }
  const m = analyzeRank(b, sess, parts[0]);
  console.log(`RESULT ${JSON.stringify({ parse: m.parse, cpu: m.cpu, bytes: parts[0].bytes, summary: m.summary.length })}`);
  process.exit(0);
}

const results = {};
/** Each rank's summary from the first build, which the others must give byte for byte. */
const summaries = [];
/** Snapshots of different sizes run at different speeds: their medians are kept apart. */
const groups = snapshots.length ? ranks.map((p) => ` ${p.label}`) : [''];
for (let run = 1; run <= runs; run++) {
  for (const [i, part] of ranks.entries()) {
    const add = (k, x) => (results[`${k}${groups[i] ?? ''}`] ||= []).push(x);
    const load = loadavg()[0].toFixed(1);
    const line = [`run ${run} ${part.file ? part.label : `rank ${i}`} (${(part.bytes / 1e6).toFixed(1)} MB, load ${load})`];
    let nat = null;
    if (native) {
      nat = nativeRun(part);
      // The snapshot's summary.json, which every build must give byte for byte.
      if (part.file) summaries[i] ??= nat.out;
      add('native wall', nat.wall / part.bytes);
      // GNU time counts CPU in 10 ms steps: a small file's may read 0, which says nothing.
      if (nat.cpu > 0) add('native cpu', nat.cpu / part.bytes);
      else nat = { ...nat, cpu: NaN };
      line.push(`native 1 thread ${nat.wall.toFixed(0)} ms wall, ${nat.cpu > 0 ? `${nat.cpu.toFixed(0)} ms CPU = ${mbps(part.bytes, nat.cpu)} MB/s per CPU second` : 'CPU below GNU time\'s 10 ms'}`);
    }
    for (const { b, s } of sessions) {
      const profiling = inspector && b === builds[0];
      if (profiling) await inspector.call('Profiler.start');
      const m = wasmRun(b, s, part);
      if (profiling) {
        const { profile } = await inspector.call('Profiler.stop');
        (results.profiles ||= []).push(profile);
      }
      // The first analysis of a build runs while V8 still tiers its code up (as each page load
      // does); the later ones show the engine's steady speed.
      const phase = run === 1 && i === 0 ? 'first' : 'warm';
      add(`${b.name} ${phase} parse`, m.parse / part.bytes);
      add(`${b.name} ${phase} cpu`, m.cpu / part.bytes);
      const vs = nat && nat.cpu > 0 ? ` (CPU ${(m.cpu / nat.cpu).toFixed(2)}× native's)` : '';
      const same = m.summary === (summaries[i] ??= m.summary) ? 'same summary' : `SUMMARY DIFFERS from the ${part.file && native ? "CLI's" : 'first build\'s'}`;
      line.push(`${b.name}: parse ${m.parse.toFixed(0)} ms = ${mbps(part.bytes, m.parse)} MB/s, CPU less reads ${m.cpu.toFixed(0)} ms = ${mbps(part.bytes, m.cpu)} MB/s${vs}, reads ${m.read.toFixed(0)} ms (${m.reads} of ${(m.readBytes / m.reads / 1048576).toFixed(2)} MiB avg), ${m.progress} progress calls, ${same}`);
    }
    console.log(line.join('\n  '));
  }
}

// --fresh N: N more rounds in which each build reads the first rank in a new process, as a page
// load does (a fresh engine whose code V8 has not tiered up yet), alternated with the native CLI.
const fresh = Number(opt('--fresh', '0'));
const add = (k, x) => (results[k] ||= []).push(x);
for (let run = 1; run <= fresh; run++) {
  const part = ranks[0];
  const line = [`fresh run ${run} rank 0 (load ${loadavg()[0].toFixed(1)})`];
  if (native) {
    const nat = cliRank(part);
    add('native fresh cpu', nat.cpu / part.bytes);
    add('native fresh wall', nat.wall / part.bytes);
    line.push(`native ${nat.wall.toFixed(0)} ms wall, ${nat.cpu.toFixed(0)} ms CPU`);
  }
  for (const b of builds) {
    const extra = opt('--warm-up', null) ? ['--warm-up', opt('--warm-up'), '--warm-up-wait', opt('--warm-up-wait', '0'), '--warm-up-size', opt('--warm-up-size', `${2 << 20},4000`)] : [];
    const r = spawnSync(process.execPath, [process.argv[1], '--child', '--job', job, '--www', `${b.name}=${b.dir}`, ...(b.warm ? extra : [])], { encoding: 'utf8' });
    const got = (r.stdout || '').split('\n').find((l) => l.startsWith('RESULT '));
    if (!got) throw new Error(`child failed: ${r.stderr}`);
    const m = JSON.parse(got.slice(7));
    add(`${b.name} fresh parse`, m.parse / part.bytes);
    add(`${b.name} fresh cpu`, m.cpu / part.bytes);
    line.push(`${b.name}: parse ${m.parse.toFixed(0)} ms, CPU less reads ${m.cpu.toFixed(0)} ms = ${mbps(part.bytes, m.cpu)} MB/s`);
  }
  console.log(line.join('\n  '));
}

console.log(`\nmedians over ${runs} run(s) × ${ranks.length} ${snapshots.length ? 'snapshots' : 'ranks'}, MB/s (load now ${loadavg().map((x) => x.toFixed(1)).join(' ')}, ${new Date().toISOString()}):`);
for (const g of groups) {
if (g) console.log(` ${g} (parse: the pickle machine less the reads; CPU: the whole open, less the reads, against the whole CLI):`);
const ref = native && results[`native cpu${g}`] ? med(results[`native cpu${g}`]) : null;
if (ref) {
  console.log(`  native CLI, 1 thread: ${(1e-3 / med(results[`native wall${g}`])).toFixed(0)} MB/s wall, ${(1e-3 / ref).toFixed(0)} MB/s per CPU second`);
}
for (const phase of ['first', 'warm', 'fresh']) {
  if (!results[`${builds[0].name} ${phase} parse${g}`]) continue;
  const first = med(results[`${builds[0].name} ${phase} parse${g}`]);
  const firstCpu = med(results[`${builds[0].name} ${phase} cpu${g}`]);
  const titles = {
    first: '  the first analysis of each build in this process (code still tiering up):',
    warm: '  the later analyses (warm):',
    fresh: `  --fresh: a new process per analysis of the first rank (as a page load), ${fresh} round(s):`,
  };
  console.log(titles[phase]);
  const nativeCpu = phase === 'fresh' ? med(results['native fresh cpu']) : ref;
  const nativeWall = phase === 'fresh' ? med(results['native fresh wall']) : med(results[`native wall${g}`] || [1]);
  for (const b of builds) {
    const p = med(results[`${b.name} ${phase} parse${g}`]);
    const c = med(results[`${b.name} ${phase} cpu${g}`]);
    const factor = native && nativeCpu ? `; CPU ${(c / nativeCpu).toFixed(2)}× native's, wall ${(p / nativeWall).toFixed(2)}× native's` : '';
    console.log(`    ${b.name}: parse ${(1e-3 / p).toFixed(0)} MB/s wall, ${(1e-3 / c).toFixed(0)} MB/s per CPU second${factor}; ${(p / first).toFixed(2)}× ${builds[0].name}'s wall, ${(c / firstCpu).toFixed(2)}× its CPU`);
  }
}
}
console.log('');

if (profileOut) {
  // Self time by function over every profiled analysis.
  const self = new Map();
  let all = 0;
  for (const p of results.profiles) {
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const dt = p.timeDeltas;
    for (let k = 0; k < p.samples.length; k++) {
      const n = byId.get(p.samples[k]);
      const name = n.callFrame.functionName || `(${n.callFrame.url || 'anonymous'})`;
      self.set(name, (self.get(name) || 0) + (dt[k] || 0));
      all += dt[k] || 0;
    }
  }
  writeFileSync(profileOut, JSON.stringify(results.profiles[0]));
  console.log(`\nself time of ${builds[0].name}'s analyses (${(all / 1000).toFixed(0)} ms sampled; first profile in ${profileOut}):`);
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${((100 * us) / all).toFixed(1).padStart(5)} %  ${name.slice(0, 150)}`);
  }
}
