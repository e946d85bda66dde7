// Runs every cargo-fuzz target (or the ones named) for a given time each, seeded from the fixtures
// (the real torch_npu export, the toy SOMAS dumps and the small hand-made files), and prints executions and findings per target. Not part of npm test.
//
//   node scripts/fuzz.mjs --seconds 600            all targets, 10 minutes each
//   node scripts/fuzz.mjs --seconds 60 classify    one target
//   node scripts/fuzz.mjs --seconds 60 --prebuilt classify
//                                                  the binary `cargo fuzz build` left in fuzz/target,
//                                                  run as it is (no rebuild: the sanitizer build takes
//                                                  15-40 min on a busy machine, and any change to src/
//                                                  since, a merge included, makes `cargo fuzz run`
//                                                  rebuild it; the runs then test the source it was
//                                                  built from)
//
// Needs `cargo install cargo-fuzz` and the nightly toolchain. Crashes land in
// fuzz/artifacts/<target>/; keep each one as a regression test under tests/. The full output of
// each target goes to fuzz/logs/<target>.log, the table to fuzz/logs/summary.json. On a shared
// machine run it niced: `nice -n 10 node scripts/fuzz.mjs --seconds 600` (one fuzzer at a time).
import { readFileSync, readdirSync, mkdirSync, writeFileSync, existsSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { root, main } from './util.mjs';

const FIX = path.join(root, 'fixtures');
const NPU = path.join(FIX, 'torch_npu');
const SOMAS = path.join(FIX, 'somas');

/**
 * Seed files per target: [folder, file-name suffix, options]. Options: `prefix` (bytes put before
 * each seed: the control byte of the trace and archive targets), `pair` (a second suffix: seeds are
 * `<file>\xFF<sibling with that suffix>`, for the profiler JSON target), `join` (siblings appended
 * after 0xFF bytes, each cut to a share of the cap), `max` (seed size cap).
 */
const SEEDS = {
  classify: [[path.join(FIX, 'classify'), ''], [SOMAS, '.ir']],
  job_summary: [[path.join(FIX, 'summary'), '.json']],
  profiler_json: [
    [NPU, '.json', { pair: 'profiler_metadata.json' }],
    [path.join(FIX, 'classify'), '.json', { pair: 'profiler_metadata.json' }],
    [path.join(FIX, 'examples'), '.json', { pair: 'profiler_metadata.json' }],
  ],
  // Control byte: chunk = (b & 31) + 1 bytes (1 MiB when b & 32), a 64-byte row limit when b & 64.
  csv_rows: [
    [NPU, 'operator_memory.csv', { prefix: [0x03], max: 16 << 10 }],
    [NPU, 'memory_record.csv', { prefix: [0x20], max: 16 << 10 }],
    [FIX, '.csv', { prefix: [0x45], max: 16 << 10 }],
  ],
  operator_memory: [[NPU, 'operator_memory.csv', { max: 16 << 10 }], [FIX, '.csv', { max: 16 << 10 }]],
  memory_record: [[NPU, 'memory_record.csv', { max: 16 << 10 }], [FIX, '.csv', { max: 16 << 10 }]],
  npu_module_mem: [[NPU, 'npu_module_mem.csv', { max: 16 << 10 }], [FIX, '.csv', { max: 16 << 10 }]],
  // Control byte: batch = (b & 63) + 1 bytes, pieces = 2 × (b >> 6) + 1.
  trace: [
    [NPU, 'trace_view.json', { prefix: [0x07], max: 16 << 10 }],
    [NPU, 'trace_view.json', { prefix: [0xd3], max: 16 << 10 }],
    [FIX, '.json', { prefix: [0x4f], max: 16 << 10 }],
  ],
  // The four files of a run folder joined by 0xFF bytes (operator_memory, trace, memory_record,
  // npu_module_mem), small heads of the real ones.
  ascend_job: [
    [NPU, 'operator_memory.csv', { join: ['trace_view.json', 'memory_record.csv', 'npu_module_mem.csv'], max: 48 << 10 }],
    [path.join(FIX, 'examples'), 'operator_memory.csv', { join: ['trace_view.json', 'memory_record.csv', 'npu_module_mem.csv'], max: 48 << 10 }],
  ],
  // Control byte: 0 .zip, 1 .tar, 2 .tar.gz, 3 by magic bytes only.
  archive: [
    [path.join(FIX, 'ascend', 'archives'), '.zip', { prefix: [0] }],
    [path.join(FIX, 'ascend', 'archives'), '.tar', { prefix: [1] }],
    [path.join(FIX, 'ascend', 'archives'), '.tar.gz', { prefix: [2] }],
    [path.join(FIX, 'ascend', 'archives'), '.tar.gz', { prefix: [3] }],
  ],
  somas: [[SOMAS, ''], [FIX, '.ir']],
  somas_info: [[SOMAS, '.ir'], [FIX, '.ir']],
  somas_r1: [[SOMAS, '.ir']],
  somas_mem_info: [[SOMAS, '.ir']],
  somas_offline: [[SOMAS, '.ir']],
  somas_task_info: [[SOMAS, 'task_info_graph_1.ir'], [FIX, '.ir']],
  somas_cache_json: [[SOMAS, '.json']],
  // The real snapshots' heads, the small generated ones and the hand-made shapes.
  snapshot: [
    [path.join(FIX, 'snapshots'), '.pickle', { max: 96 << 10 }],
    [path.join(FIX, 'snapshots'), '.json', { max: 96 << 10 }],
    // Each torch version's shape, as a pickle and in the JSON form.
    [path.join(FIX, 'snapshot-shapes'), '.pickle', { max: 96 << 10 }],
    [path.join(FIX, 'snapshot-shapes'), '.json', { max: 96 << 10 }],
  ],
  // Small database exports written for the run by `memlens generate profiler --export db` (see
  // generatedDbs).
  profiler_db: [[path.join(root, 'fuzz', 'seeds-db'), '.db', { max: 128 << 10 }]],
  // The hand-made dbs in msprof's layout (fixtures/msprof_db/make.py), the damaged ones too.
  msprof_db: [[path.join(FIX, 'msprof_db'), '.db', { max: 128 << 10 }]],
};

/** Writes tiny generated db exports (a few dozen rows, one step) under fuzz/seeds-db. */
function generatedDbs() {
  const out = path.join(root, 'fuzz', 'seeds-db');
  for (const [rows, seed] of [[12, 1], [40, 2]]) {
    const res = spawnSync('cargo', ['run', '-q', '--', 'generate', 'profiler', '--export', 'db', '--out', path.join(out, `job-${seed}`),
      '--roles', '1', '--ranks', '1', '--trace-mb', '0.005', '--rows', String(rows), '--steps', '1', '--seed', String(seed)], { cwd: root, encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`generating the db seeds failed:\n${res.stderr}`);
  }
}

/** Extra libFuzzer flags per target. The trace target reads every input twice, once in tiny
 * batches (each cut event is scanned again from its start), so its inputs stay small; the CSV
 * readers gain nothing from rows past the first few hundred but time. */
const SMALL = ['-max_len=16384'];
const FLAGS = { csv_rows: SMALL, trace: SMALL, operator_memory: SMALL, memory_record: SMALL, npu_module_mem: SMALL, ascend_job: ['-max_len=65536'], profiler_db: ['-max_len=131072'], msprof_db: ['-max_len=131072'], snapshot: ['-max_len=131072'] };

/** Seeds above this size are cut to it: large seeds slow libFuzzer down more than they help. */
const MAX_SEED = 256 << 10;

function listFiles(dir, suffix) {
  if (!existsSync(dir)) return [];
  const out = [];
  const walk = (d) => {
    for (const n of readdirSync(d)) {
      const p = path.join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith(suffix)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

function writeSeeds(target, corpus) {
  let n = 0;
  for (const [dir, suffix, opts = {}] of SEEDS[target] || []) {
    for (const f of listFiles(dir, suffix)) {
      if (opts.pair && path.basename(f) === opts.pair) continue;
      let bytes = readFileSync(f);
      if (opts.pair) {
        const sib = path.join(path.dirname(f), opts.pair);
        bytes = Buffer.concat([bytes, Buffer.from([0xff]), existsSync(sib) ? readFileSync(sib) : Buffer.alloc(0)]);
      }
      if (opts.join) {
        // Each file cut to a share of the size cap, joined by 0xFF.
        const share = Math.floor((opts.max ?? MAX_SEED) / (opts.join.length + 1)) - 1;
        const parts = [bytes, ...opts.join.map((n) => {
          const sib = path.join(path.dirname(f), n);
          return existsSync(sib) ? readFileSync(sib) : Buffer.alloc(0);
        })].map((b) => b.subarray(0, share));
        bytes = Buffer.concat(parts.flatMap((b, i) => (i ? [Buffer.from([0xff]), b] : [b])));
      }
      if (opts.prefix) bytes = Buffer.concat([Buffer.from(opts.prefix), bytes]);
      const max = opts.max ?? MAX_SEED;
      if (bytes.length > max) bytes = bytes.subarray(0, max);
      const rel = path.relative(root, f).replace(/[^A-Za-z0-9._-]+/g, '_');
      const tag = opts.prefix ? `-${opts.prefix.join('_')}` : '';
      writeFileSync(path.join(corpus, `seed-${rel}${tag}`), bytes);
      n++;
    }
  }
  return n;
}

function targets() {
  const toml = readFileSync(path.join(root, 'fuzz', 'Cargo.toml'), 'utf8');
  return [...toml.matchAll(/\[\[bin\]\]\s*\nname = "([^"]+)"/g)].map((m) => m[1]);
}

main(async () => {
  const args = process.argv.slice(2);
  const si = args.indexOf('--seconds');
  const seconds = si >= 0 ? Number(args[si + 1]) : 60;
  const prebuilt = args.includes('--prebuilt');
  const named = args.filter((a, i) => !a.startsWith('--') && (si < 0 || i !== si + 1));
  const all = targets();
  const chosen = named.length ? named : all;
  for (const t of chosen) if (!all.includes(t)) throw new Error(`no fuzz target ${t} (have: ${all.join(', ')})`);
  const results = [];
  const logs = path.join(root, 'fuzz', 'logs');
  mkdirSync(logs, { recursive: true });
  for (const t of chosen) {
    const corpus = path.join(root, 'fuzz', 'corpus', t);
    mkdirSync(corpus, { recursive: true });
    if (t === 'profiler_db') generatedDbs();
    const seeds = writeSeeds(t, corpus);
    const artifacts = path.join(root, 'fuzz', 'artifacts', t);
    const findings = () => (existsSync(artifacts) ? readdirSync(artifacts).filter((f) => /^(crash|oom|timeout|leak|slow-unit)-/.test(f)) : []);
    const before = new Set(findings());
    console.log(`\n▶ fuzzing ${t} for ${seconds} s (${seeds} seeds)`);
    const t0 = performance.now();
    const flags = [`-max_total_time=${seconds}`, '-rss_limit_mb=2048', '-timeout=10', '-print_final_stats=1', ...(FLAGS[t] || [])];
    // `cargo fuzz run` gives the binary the corpus and where findings go; --prebuilt does the same.
    mkdirSync(artifacts, { recursive: true });
    const bin = path.join(root, 'fuzz', 'target', 'x86_64-unknown-linux-gnu', 'release', t);
    if (prebuilt && !existsSync(bin)) throw new Error(`--prebuilt: no ${bin} (run \`cargo +nightly fuzz build\` first)`);
    const [cmd, cmdArgs] = prebuilt
      ? [bin, [`-artifact_prefix=${artifacts}/`, ...flags, corpus]]
      : ['cargo', ['+nightly', 'fuzz', 'run', t, corpus, '--', ...flags]];
    const res = spawnSync(cmd, cmdArgs, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
    const minutes = (performance.now() - t0) / 60000;
    const out = `${res.stdout}\n${res.stderr}`;
    writeFileSync(path.join(logs, `${t}.log`), out);
    const execs = Number((out.match(/stat::number_of_executed_units:\s*(\d+)/) || [])[1] || 0);
    // Time spent fuzzing (libFuzzer's own count), without the build.
    const fuzzed = Number((out.match(/Done \d+ runs in (\d+) second/) || [])[1] || 0);
    const cov = (out.match(/#\d+\s+DONE\s+cov: (\d+) ft: (\d+) corp: (\d+)/) || []).slice(1).map(Number);
    const crashes = findings().filter((f) => !before.has(f));
    results.push({ target: t, seconds, fuzzed, minutes, execs, cov, status: res.status, crashes });
    console.log(`  ${execs} executions in ${(fuzzed / 60).toFixed(1)} min of fuzzing (${minutes.toFixed(1)} min with the build), exit ${res.status}, ${crashes.length} findings${crashes.length ? `: ${crashes.join(', ')}` : ''}`);
    if (res.status !== 0) console.log(out.split('\n').filter((l) => !/^#\d+/.test(l)).slice(-40).join('\n'));
  }
  console.log('\ntarget\tfuzzed (min)\texecutions\tcoverage\tcorpus\tfindings');
  for (const r of results) console.log(`${r.target}\t${(r.fuzzed / 60).toFixed(1)}\t${r.execs}\t${r.cov[0] ?? '?'}\t${r.cov[2] ?? '?'}\t${r.crashes.length}`);
  // Runs of other targets (an earlier or a concurrent invocation) stay in the summary.
  const summary = path.join(logs, 'summary.json');
  const kept = existsSync(summary) ? JSON.parse(readFileSync(summary, 'utf8')).filter((r) => !chosen.includes(r.target)) : [];
  writeFileSync(summary, JSON.stringify([...kept, ...results].sort((a, b) => all.indexOf(a.target) - all.indexOf(b.target)), null, 2));
  if (results.some((r) => r.crashes.length || r.status !== 0)) process.exitCode = 1;
});
