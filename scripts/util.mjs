// Small helpers shared by the set-up, build, serve and test scripts. No npm dependencies here:
// these run before `npm ci` has installed anything.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Runs a command with inherited stdio; throws with the command line if it fails. */
export function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (res.error) throw new Error(`${cmd} ${args.join(' ')}: ${res.error.message}`);
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${res.status}`);
}

/** Runs a command and returns its stdout (or null if it cannot run or fails). */
export function capture(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', ...opts });
  if (res.error || res.status !== 0) return null;
  return res.stdout;
}

/** Modification time in ms, or 0 when the file does not exist. */
export function mtime(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Prints a step header and times it. */
export async function step(name, fn) {
  const t0 = performance.now();
  process.stdout.write(`\n▶ ${name}\n`);
  const out = await fn();
  process.stdout.write(`✔ ${name} (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
  return out;
}

/** The exact wasm-bindgen version Cargo.lock resolved. */
export function lockedWasmBindgen() {
  const lock = readFileSync(path.join(root, 'Cargo.lock'), 'utf8');
  const m = lock.match(/name = "wasm-bindgen"\nversion = "([^"]+)"/);
  if (!m) throw new Error('Cargo.lock has no wasm-bindgen entry');
  return m[1];
}

export { existsSync };

/** Runs an async entry point; on failure prints the message (no stack) and exits with 1. */
export function main(fn) {
  fn().catch((err) => {
    console.error(`\n✖ ${err && err.message ? err.message : err}`);
    process.exit(1);
  });
}

/** The value after the option `name` on this script's command line (`--dir X` → `X`), or `fallback`. */
export function opt(name, fallback) {
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
}
