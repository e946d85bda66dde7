// Installs what building and testing need, skipping every part that is already in place:
// npm packages from the lock file, rustup targets and components, the exact wasm-bindgen CLI,
// and (for tests) Debian's chromium.
import { capture, run, root, mtime, step, lockedWasmBindgen, existsSync } from './util.mjs';
import path from 'node:path';

const WASM = 'wasm32-unknown-unknown';

function npmDeps() {
  const lock = path.join(root, 'package-lock.json');
  const stamp = path.join(root, 'node_modules', '.package-lock.json');
  if (existsSync(stamp) && mtime(stamp) >= mtime(lock)) return false;
  run('npm', ['ci', '--no-audit', '--no-fund']);
  return true;
}

function rustup() {
  let changed = false;
  const toolchains = capture('rustup', ['toolchain', 'list']) ?? '';
  if (!/^nightly-/m.test(toolchains)) {
    run('rustup', ['toolchain', 'install', 'nightly', '--profile', 'minimal']);
    changed = true;
  }
  const stableTargets = capture('rustup', ['target', 'list', '--installed']) ?? '';
  if (!stableTargets.includes(WASM)) {
    run('rustup', ['target', 'add', WASM]);
    changed = true;
  }
  const comps = capture('rustup', ['component', 'list', '--installed']) ?? '';
  for (const c of ['rustfmt', 'clippy']) {
    if (!comps.split('\n').some((l) => l.startsWith(c))) {
      run('rustup', ['component', 'add', c]);
      changed = true;
    }
  }
  const nightlyTargets = capture('rustup', ['target', 'list', '--installed', '--toolchain', 'nightly']) ?? '';
  if (!nightlyTargets.includes(WASM)) {
    run('rustup', ['target', 'add', WASM, '--toolchain', 'nightly']);
    changed = true;
  }
  const nightlyComps = capture('rustup', ['component', 'list', '--installed', '--toolchain', 'nightly']) ?? '';
  if (!nightlyComps.split('\n').some((l) => l.startsWith('rust-src'))) {
    run('rustup', ['component', 'add', 'rust-src', '--toolchain', 'nightly']);
    changed = true;
  }
  return changed;
}

function wasmBindgenCli() {
  const want = lockedWasmBindgen();
  const have = (capture('wasm-bindgen', ['--version']) ?? '').trim().split(' ')[1];
  if (have === want) return false;
  console.log(`wasm-bindgen-cli ${have ?? 'missing'}, need ${want}: installing (takes about 4 minutes once)`);
  // Without --locked: the registry mirror here lacks one locked transitive version.
  run('cargo', ['install', 'wasm-bindgen-cli', '--version', want, '--force']);
  return true;
}

export const CHROMIUM = '/usr/bin/chromium';

function chromium() {
  if (existsSync(CHROMIUM)) return false;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    throw new Error(
      `The browser tests need Debian's chromium at ${CHROMIUM}. Install it with:\n` +
        '  sudo apt-get update && sudo apt-get install -y chromium\n' +
        'and run npm test again.',
    );
  }
  run('apt-get', ['update']);
  run('apt-get', ['install', '-y', 'chromium']);
  return true;
}

/** Ensures everything `npm start` (and, with `browser`, `npm test`) needs is installed. */
export async function setup({ browser = false } = {}) {
  await step('set-up (skips what is installed)', () => {
    const did = [];
    if (npmDeps()) did.push('npm packages');
    if (rustup()) did.push('rustup targets/components');
    if (wasmBindgenCli()) did.push('wasm-bindgen-cli');
    if (browser && chromium()) did.push('chromium');
    console.log(did.length ? `installed: ${did.join(', ')}` : 'nothing to install');
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { main } = await import('./util.mjs');
  main(() => setup({ browser: process.argv.includes('--browser') }));
}
