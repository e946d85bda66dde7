// Benchmark of builds of the CLI against each other (a measurement, not a test): `memlens profiler
// JOB --json` and `--out DIR` on the issue's job of 2 roles × 2 ranks (100 MiB trace_view.json and
// 50,000 operator_memory rows per rank), each build run in turn, round after round, so the
// machine's load moves them alike. Prints per build and mode the median wall time, CPU time (user
// + system, all threads) and peak RSS (GNU time), and each build's ratio to the first.
// Used to weigh one change (e.g. a build before and after it, or with another allocator).
// `--scan` adds a third mode, the trace scan through the CLI: the job's run folders with only
// their trace_view.json (and the small JSON files that name the rank; 4 × 100 MiB by default, so
// the CPU time is long enough for GNU time's 10 ms resolution), read with RAYON_NUM_THREADS=1,
// reported as MB of trace per CPU second (process start and discovery included, a few ms).
//   node scripts/bench-cli.mjs --cli NAME=PATH [--cli NAME=PATH ...] [--runs 5] [--job DIR]
//                              [--trace-mb 100] [--rows 50000] [--scan] [--dir DIR] [--report FILE]
// The job is generated with the first build once (`memlens generate profiler … --seed 3`) and
// kept in --job (default memlens-bench-cli/job in the system's temporary folder).
// The header names the machine (CPU model, family/model/stepping, logical CPUs, load) and the block
// classifier the trace scan takes on it, since the same build runs 1.4–1.5× slower on one of the
// project's VM kinds than on the other: no figure without its machine. `--report FILE` writes the
// machine and every run's figures as JSON.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { main, opt } from './util.mjs';
import { machine, machineLine } from './machine.mjs';

/**
 * The trace scan's block classifier on this machine, by the rule of `with_best_classifier!` in
 * src/jsonscan/blocks.rs (x86_64: AVX2 when the processor has it with POPCNT, BMI1 and PCLMULQDQ,
 * which the AVX2 copies of the scan loops also use, else SSE2), read from the flags the kernel
 * reports (`m` from machine.mjs). Every AVX2 processor has the other three, so the answer holds
 * for older builds too.
 */
function classifier(m) {
  if (m.arch !== 'x64') return `none known for ${m.arch}`;
  if (!m.flags.size) return 'unknown (no /proc/cpuinfo flags)';
  return ['avx2', 'popcnt', 'bmi1', 'pclmulqdq'].every((f) => m.flags.has(f)) ? 'AVX2' : 'SSE2';
}

main(async () => {
  const args = process.argv.slice(2);
  const clis = args
    .map((a, i) => (args[i - 1] === '--cli' ? a.split('=') : null))
    .filter(Boolean)
    .map(([name, ...p]) => ({ name, exe: p.join('=') }));
  if (!clis.length) throw new Error('give at least one --cli NAME=PATH');
  for (const c of clis) if (!existsSync(c.exe)) throw new Error(`no such CLI: ${c.exe}`);
  const runs = Number(opt('--runs', '5'));
  const base = opt('--dir', path.join(tmpdir(), 'memlens-bench-cli'));
  const report = opt('--report', null);
  // The JSON report takes the description without the flag set, plus what the scan uses of it.
  const m = machine();
  const { flags, ...described } = m;
  const mach = { ...described, avx512: flags.has('avx512bw'), classifier: classifier(m) };
  const line = `${machineLine(mach)}; trace scan classifier ${mach.classifier}`;
  console.log(`${line}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const job = opt('--job', path.join(base, 'job'));
  const out = path.join(base, 'out');
  mkdirSync(base, { recursive: true });
  if (!existsSync(job)) {
    execFileSync(clis[0].exe, ['-q', 'generate', 'profiler', '--out', job, '--roles', '2', '--ranks', '2',
      '--trace-mb', opt('--trace-mb', '100'), '--rows', opt('--rows', '50000'), '--steps', '2', '--seed', '3'], { stdio: 'ignore' });
  }
  const modes = { json: ['--json'], out: ['--out', out] };
  // The scan mode: one rank's trace alone, one thread; the CLI exits 1 there (no memory rows).
  const scanJob = path.join(base, 'scan-job');
  let scanBytes = 0;
  if (process.argv.includes('--scan')) {
    const runDirs = (dir, out = []) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        const p = path.join(dir, e.name);
        if (e.name.endsWith('_ascend_pt')) out.push(p);
        else runDirs(p, out);
      }
      return out;
    };
    const runs = runDirs(job);
    if (!runs.length) throw new Error(`no run folder in ${job}`);
    const prune = (dir) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) prune(p);
        else if (!/^(trace_view|profiler_info_\d+|profiler_metadata)\.json$/.test(e.name)) rmSync(p);
      }
    };
    for (const run of runs) {
      const dst = path.join(scanJob, path.relative(job, run));
      if (!existsSync(dst)) {
        cpSync(run, dst, { recursive: true });
        prune(dst);
      }
      scanBytes += statSync(path.join(dst, 'ASCEND_PROFILER_OUTPUT', 'trace_view.json')).size;
    }
    modes.scan = ['--json'];
  }
  const times = {};
  const one = (exe, extra, mode) => {
    rmSync(out, { recursive: true, force: true });
    const scan = mode === 'scan';
    const t = performance.now();
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', exe, '-q', 'profiler', scan ? scanJob : job, ...extra], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: scan ? { ...process.env, RAYON_NUM_THREADS: '1' } : process.env,
    });
    if (r.status !== 0 && !(scan && r.status === 1)) throw new Error(`${exe} failed: ${r.stderr}`);
    const err = r.stderr.toString();
    const wall = (performance.now() - t) / 1000;
    const [u, s, kb] = err.trim().split('\n').pop().split(/\s+/).map(Number);
    return { wall, cpu: u + s, rss: kb / 1024 };
  };
  const load = [loadavg()[0]];
  // One warm-up each (page cache), then rounds.
  for (const c of clis) for (const [mode, m] of Object.entries(modes)) one(c.exe, m, mode);
  for (let r = 0; r < runs; r++) {
    for (const [mode, extra] of Object.entries(modes)) {
      for (const c of clis) {
        const k = `${c.name} ${mode}`;
        (times[k] ||= []).push(one(c.exe, extra, mode));
      }
    }
    load.push(loadavg()[0]);
  }
  rmSync(out, { recursive: true, force: true });
  const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  const when = new Date().toISOString();
  console.log(`${when}, ${runs} rounds, load average (1 min) ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}`);
  console.log(line);
  const results = [];
  for (const mode of Object.keys(modes)) {
    const first = median(times[`${clis[0].name} ${mode}`].map((x) => x.wall));
    for (const c of clis) {
      const v = times[`${c.name} ${mode}`];
      const wall = median(v.map((x) => x.wall));
      const cpu = median(v.map((x) => x.cpu));
      const firstCpu = median(times[`${clis[0].name} ${mode}`].map((x) => x.cpu));
      const perCpu = mode === 'scan' ? `, ${(scanBytes / 1e6 / cpu).toFixed(0)} MB/s per CPU second` : '';
      results.push({
        mode,
        cli: c.name,
        exe: c.exe,
        medianWallS: wall,
        medianCpuS: cpu,
        medianPeakRssMiB: median(v.map((x) => x.rss)),
        ...(mode === 'scan' ? { scanMBPerCpuS: scanBytes / 1e6 / cpu } : {}),
        runs: v,
      });
      console.log(
        `--${mode.padEnd(4)} ${c.name.padEnd(12)} wall ${wall.toFixed(3)} s (${(wall / first).toFixed(2)}× ${clis[0].name}), ` +
          `CPU ${cpu.toFixed(2)} s (${(cpu / firstCpu).toFixed(2)}×)${perCpu}, peak RSS ${median(v.map((x) => x.rss)).toFixed(0)} MiB`,
      );
    }
  }
  if (report) {
    const loads = { min: Math.min(...load), max: Math.max(...load), samples: load };
    writeFileSync(report, `${JSON.stringify({ when, machine: mach, rounds: runs, loadAverage1m: loads, job, results }, null, 2)}\n`);
    console.log(`report: ${report}`);
  }
});
