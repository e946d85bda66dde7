// Installs what building and testing need, skipping every part that is already in place:
// npm packages from the lock file, rustup toolchains, targets and components, the exact
// wasm-bindgen CLI, and (for tests) Debian's chromium and the project-local Python virtualenv
// `.venv/` with the exact versions of python/requirements-test.txt.
//
// One line per piece: what it is, how it is installed, and whether it was in place or how long
// installing it took. The package managers' own output goes to a log file (its path is printed
// first); when an install fails, the tail of that log and the exact command to run by hand are
// printed.
import { appendFileSync, mkdirSync, openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { capture, root, mtime, step, lockedWasmBindgen, existsSync } from './util.mjs';

const WASM = 'wasm32-unknown-unknown';

/** Where the package managers' output goes (`target/` is ignored by git and by `cargo fmt`). */
export const SETUP_LOG = path.join(root, 'target', 'setup.log');

/** Lines of the log shown when an install fails. */
const TAIL_LINES = 40;

/** The command as a user would type it (arguments with spaces quoted). */
function shellLine(cmd, args) {
  return [cmd, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(' ');
}

/** The last `n` lines of the set-up log. */
function logTail(n) {
  try {
    const lines = readFileSync(SETUP_LOG, 'utf8').trimEnd().split('\n');
    return lines.slice(-n).join('\n');
  } catch {
    return '(the log could not be read)';
  }
}

/**
 * Runs one install command with its output appended to the set-up log. On failure throws an
 * error carrying the log's tail and the command to run by hand.
 */
function runLogged(cmd, args) {
  appendFileSync(SETUP_LOG, `\n$ ${shellLine(cmd, args)}   # ${new Date().toISOString()}\n`);
  const fd = openSync(SETUP_LOG, 'a');
  let res;
  try {
    res = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  if (res.error || res.status !== 0) {
    const why = res.error ? res.error.message : `exit status ${res.status ?? `signal ${res.signal}`}`;
    throw new Error(
      `${shellLine(cmd, args)} failed (${why}).\n` +
        `Last ${TAIL_LINES} lines of ${SETUP_LOG}:\n${logTail(TAIL_LINES).replace(/^/gm, '  | ')}\n` +
        `Run it by hand to see or fix the problem:\n  cd ${shellLine(root, [])} && ${shellLine(cmd, args)}`,
    );
  }
}

/**
 * One piece of the set-up. `needed()` says whether it must be installed; `commands()` lists the
 * commands that install it. Prints one line: in place, or installed and how long it took.
 */
function piece(what, how, needed, commands) {
  const label = `  ${what} (${how})`;
  if (!needed()) {
    console.log(`${label}: in place`);
    return false;
  }
  process.stdout.write(`${label}: installing… `);
  const t0 = performance.now();
  try {
    for (const [cmd, args] of commands()) runLogged(cmd, args);
  } catch (err) {
    process.stdout.write('failed\n');
    throw err;
  }
  process.stdout.write(`installed in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  return true;
}

function installedLines(args) {
  return (capture('rustup', args) ?? '').split('\n').map((l) => l.trim());
}

export const CHROMIUM = '/usr/bin/chromium';

/** The project-local virtualenv the Python package is built and tested in (ignored by git). */
export const VENV = path.join(root, '.venv');
/** Its interpreter. */
export const VENV_PYTHON = path.join(VENV, 'bin', 'python');
/** The exact versions of what the Python tests need. */
const PY_REQUIREMENTS = path.join(root, 'python', 'requirements-test.txt');
/** A copy of the requirements the virtualenv was last filled from: differs → install again. */
const PY_STAMP = path.join(VENV, 'memlens-requirements.txt');

/** The system Python that makes the virtualenv: `python3`, 3.9 or newer, with `venv`. */
function systemPython() {
  const v = capture('python3', ['-c', 'import sys, venv, ensurepip; print("%d.%d" % sys.version_info[:2])']);
  const [major, minor] = (v ?? '').trim().split('.').map(Number);
  if (!(major === 3 && minor >= 9)) {
    throw new Error(
      'The Python tests need python3 (3.9 or newer) with the venv module. On Debian install them with:\n' +
        '  sudo apt-get update && sudo apt-get install -y python3 python3-venv\n' +
        'and run npm test again.',
    );
  }
  return 'python3';
}

/** True when the virtualenv was filled from the current requirements file. */
function venvCurrent() {
  try {
    return existsSync(VENV_PYTHON) && readFileSync(PY_STAMP, 'utf8') === readFileSync(PY_REQUIREMENTS, 'utf8');
  } catch {
    return false;
  }
}

/** The pieces, in install order: `[what, how, needed, commands]`. */
function pieces({ browser }) {
  const lock = path.join(root, 'package-lock.json');
  const stamp = path.join(root, 'node_modules', '.package-lock.json');
  const bindgen = lockedWasmBindgen();
  const list = [
    ['npm packages', 'npm ci', () => !(existsSync(stamp) && mtime(stamp) >= mtime(lock)), () => [['npm', ['ci', '--no-audit', '--no-fund']]]],
    [
      'nightly toolchain',
      'rustup',
      () => !installedLines(['toolchain', 'list']).some((l) => l.startsWith('nightly-')),
      () => [['rustup', ['toolchain', 'install', 'nightly', '--profile', 'minimal']]],
    ],
    [
      `${WASM} target, stable`,
      'rustup',
      () => !installedLines(['target', 'list', '--installed']).includes(WASM),
      () => [['rustup', ['target', 'add', WASM]]],
    ],
    [
      'rustfmt and clippy, stable',
      'rustup',
      () => {
        const have = installedLines(['component', 'list', '--installed']);
        return !['rustfmt', 'clippy'].every((c) => have.some((l) => l.startsWith(c)));
      },
      () => [['rustup', ['component', 'add', 'rustfmt', 'clippy']]],
    ],
    [
      `${WASM} target, nightly`,
      'rustup',
      () => !installedLines(['target', 'list', '--installed', '--toolchain', 'nightly']).includes(WASM),
      () => [['rustup', ['target', 'add', WASM, '--toolchain', 'nightly']]],
    ],
    [
      'rust-src, nightly',
      'rustup',
      () => !installedLines(['component', 'list', '--installed', '--toolchain', 'nightly']).some((l) => l.startsWith('rust-src')),
      () => [['rustup', ['component', 'add', 'rust-src', '--toolchain', 'nightly']]],
    ],
    [
      `wasm-bindgen-cli ${bindgen}`,
      'cargo install, about 4 minutes',
      () => (capture('wasm-bindgen', ['--version']) ?? '').trim().split(' ')[1] !== bindgen,
      // Without --locked: the registry mirror here lacks one locked transitive version.
      () => [['cargo', ['install', 'wasm-bindgen-cli', '--version', bindgen, '--force']]],
    ],
  ];
  if (browser) {
    list.push([
      `chromium at ${CHROMIUM}`,
      'apt-get, about 1 minute',
      () => {
        if (existsSync(CHROMIUM)) return false;
        const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
        if (!isRoot) {
          throw new Error(
            `The browser tests need Debian's chromium at ${CHROMIUM}. Install it with:\n` +
              '  sudo apt-get update && sudo apt-get install -y chromium\n' +
              'and run npm test again.',
          );
        }
        return true;
      },
      () => [
        ['apt-get', ['update']],
        ['apt-get', ['install', '-y', 'chromium']],
      ],
    ]);
  }
  if (browser) {
    list.push([
      'Python test packages in .venv/ (maturin, pytest, pandas, pyarrow, ray; exact versions)',
      'venv + pip, about 3 minutes and 650 MB',
      () => !venvCurrent(),
      () => [
        [systemPython(), ['-m', 'venv', VENV]],
        [VENV_PYTHON, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '-r', PY_REQUIREMENTS]],
        [process.execPath, ['-e', `require('fs').copyFileSync(${JSON.stringify(PY_REQUIREMENTS)}, ${JSON.stringify(PY_STAMP)})`]],
      ],
    ]);
  }
  return list;
}

/** What set-up cannot install: rustup with a stable toolchain (cargo comes with it). */
function prerequisites() {
  for (const [tool, args] of [
    ['rustup', ['--version']],
    ['cargo', ['--version']],
  ]) {
    if (capture(tool, args) === null) {
      throw new Error(
        `${tool} was not found. memlens needs rustup with a stable toolchain beforehand ` +
          '(https://rustup.rs; then `rustup default stable`), and Node.js 20 or newer with npm.',
      );
    }
  }
}

/** Ensures everything `npm start` (and, with `browser`, `npm test`) needs is installed. */
export async function setup({ browser = false } = {}) {
  await step('set-up (skips what is installed)', () => {
    prerequisites();
    mkdirSync(path.dirname(SETUP_LOG), { recursive: true });
    writeFileSync(SETUP_LOG, `memlens set-up, ${new Date().toISOString()}\n`);
    console.log(`  log of the package managers: ${SETUP_LOG}`);
    let installed = 0;
    for (const [what, how, needed, commands] of pieces({ browser })) {
      if (piece(what, how, needed, commands)) installed++;
    }
    if (!installed) console.log('  nothing to install');
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { main } = await import('./util.mjs');
  main(() => setup({ browser: process.argv.includes('--browser') }));
}
