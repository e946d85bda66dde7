// Benchmark of `memlens compare` (a measurement, not a test): two generated jobs of 2 roles × 2
// ranks (the second with one block injected at a rank's peak), `memlens compare --json` on them
// against `memlens profiler --json` on each job, alternated in one run so the machine's load moves
// both alike. Reading both jobs is the bulk of a comparison, so the goal is a ratio near 1: the
// comparison itself should cost little beyond the two analyses.
// Needs a CLI (default the release build: cargo build --release --bin memlens).
//   node scripts/bench-compare.mjs [--dir /tmp/memlens-bench-compare] [--runs 3] [--trace-mb 20]
//                                  [--rows 20000] [--cli PATH] [--keep]
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { machine, machineLine } from './machine.mjs';
import path from 'node:path';
import { root, opt } from './util.mjs';

const args = process.argv.slice(2);
const base = opt('--dir', '/tmp/memlens-bench-compare');
const runs = Number(opt('--runs', '3'));
const traceMb = opt('--trace-mb', '20');
const rows = opt('--rows', '20000');
const CLI = opt('--cli', path.join(root, 'target', 'release', 'memlens'));
if (!existsSync(CLI)) throw new Error(`build the CLI first: cargo build --release --bin memlens (${CLI})`);

const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
const gen = (dir, extra = []) =>
  execFileSync(CLI, ['generate', 'profiler', '--out', dir, '--roles', '2', '--ranks', '2', '--trace-mb', traceMb, '--rows', rows, '--steps', '2', '--seed', '3', ...extra], {
    stdio: 'ignore',
  });
const time = (argv) => {
  const t = performance.now();
  execFileSync(CLI, argv, { stdio: 'ignore', maxBuffer: 1 << 30 });
  return performance.now() - t;
};

mkdirSync(base, { recursive: true });
const a = path.join(base, 'job-a');
const b = path.join(base, 'job-b');
if (!existsSync(a)) gen(a);
if (!existsSync(b)) gen(b, ['--inject-peak-bytes', String(64 << 20)]);
console.log(
  `${machineLine(machine())}; ${new Date().toISOString()}; jobs 2 roles × 2 ranks, ${traceMb} MiB traces, ${rows} rows per rank`,
);
try {
  for (let run = 1; run <= runs; run++) {
    const load = loadavg()[0].toFixed(1);
    const single = time(['profiler', '--json', a]) + time(['profiler', '--json', b]);
    const compare = time(['compare', a, b, '--json']);
    console.log(`run ${run} (load ${load}): two profiler --json ${s(single)}, compare --json ${s(compare)}, ratio ${(compare / single).toFixed(2)}×`);
  }
} finally {
  if (!args.includes('--keep')) rmSync(base, { recursive: true, force: true });
}
