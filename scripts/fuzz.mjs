// Runs every cargo-fuzz target (or the ones named) for a given time each, seeded from the shared
// samples and the fixtures, and prints executions and findings per target. Not part of npm test.
//
//   node scripts/fuzz.mjs --seconds 600            all targets, 10 minutes each
//   node scripts/fuzz.mjs --seconds 60 classify    one target
//
// Needs `cargo install cargo-fuzz` and the nightly toolchain. Crashes land in
// fuzz/artifacts/<target>/; keep each one as a regression test under tests/.
import { readFileSync, readdirSync, mkdirSync, copyFileSync, existsSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { root, main } from './util.mjs';

const SAMPLES = path.resolve(root, '..', 'shared', 'samples');

/** Seed files per target: globs are plain folder + suffix filters over samples and fixtures. */
const SEEDS = {
  classify: [[path.join(root, 'fixtures', 'classify'), ''], [path.join(SAMPLES, 'somas'), '.ir']],
  somas: [[path.join(SAMPLES, 'somas'), '']],
};

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

function targets() {
  const toml = readFileSync(path.join(root, 'fuzz', 'Cargo.toml'), 'utf8');
  return [...toml.matchAll(/\[\[bin\]\]\s*\nname = "([^"]+)"/g)].map((m) => m[1]);
}

main(async () => {
  const args = process.argv.slice(2);
  const si = args.indexOf('--seconds');
  const seconds = si >= 0 ? Number(args[si + 1]) : 60;
  const named = args.filter((a, i) => !a.startsWith('--') && (si < 0 || i !== si + 1));
  const all = targets();
  const chosen = named.length ? named : all;
  for (const t of chosen) if (!all.includes(t)) throw new Error(`no fuzz target ${t} (have: ${all.join(', ')})`);
  const results = [];
  for (const t of chosen) {
    const corpus = path.join(root, 'fuzz', 'corpus', t);
    mkdirSync(corpus, { recursive: true });
    for (const [dir, suffix] of SEEDS[t] || []) {
      for (const f of listFiles(dir, suffix)) {
        // Seeds above 1 MiB slow libFuzzer down more than they help.
        if (statSync(f).size <= 1 << 20) copyFileSync(f, path.join(corpus, `seed-${path.basename(f)}`));
      }
    }
    console.log(`\n▶ fuzzing ${t} for ${seconds} s`);
    const res = spawnSync(
      'cargo',
      ['+nightly', 'fuzz', 'run', t, corpus, '--', `-max_total_time=${seconds}`, '-rss_limit_mb=2048', '-timeout=10', '-print_final_stats=1'],
      { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 },
    );
    const out = `${res.stdout}\n${res.stderr}`;
    const execs = Number((out.match(/stat::number_of_executed_units:\s*(\d+)/) || [])[1] || 0);
    const artifacts = path.join(root, 'fuzz', 'artifacts', t);
    const crashes = existsSync(artifacts) ? readdirSync(artifacts).filter((f) => /^(crash|oom|timeout|leak)-/.test(f)) : [];
    results.push({ target: t, seconds, execs, status: res.status, crashes });
    console.log(`  ${execs} executions, exit ${res.status}, ${crashes.length} findings${crashes.length ? `: ${crashes.join(', ')}` : ''}`);
    if (res.status !== 0 && !crashes.length) console.log(out.split('\n').slice(-30).join('\n'));
  }
  console.log('\ntarget\tseconds\texecutions\tfindings');
  for (const r of results) console.log(`${r.target}\t${r.seconds}\t${r.execs}\t${r.crashes.length}`);
  if (results.some((r) => r.crashes.length || r.status !== 0)) process.exitCode = 1;
});
