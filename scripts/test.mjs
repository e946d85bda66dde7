// npm test: set-up (incl. chromium and the Python virtualenv), formatting (the fuzz crate too),
// lints, Rust tests, the Python wheel and its tests, both wasm builds, the offline file, and the
// browser tests. Stops at the first failure.
//   npm test -- --browser-only   skip the Rust and Python checks (fast loop on the page)
//   npm test -- --python-only    set-up, the wheel and the Python tests only
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { setup, VENV_PYTHON } from './setup.mjs';
import { build } from './build.mjs';
import { run, step, root, main } from './util.mjs';

const browserOnly = process.argv.includes('--browser-only');
const pythonOnly = process.argv.includes('--python-only');
const t0 = performance.now();

/**
 * The most one browser test file may take before it fails: 45 minutes. A hung test (a wait with
 * no limit, a browser that stops answering) then fails the run with its file's name, after the
 * spec reporter has printed the file's tests that passed (the hung one is the next), instead of
 * hanging CI; the file's browser is closed with its process. Node 20's runner applies
 * `--test-timeout` to each file as a whole (each runs in a process of its own), its `before`
 * hooks included, not to each test. The longest file measured, cancel.test.mjs, took 741 s at
 * load 9.7–18.4 (2026-12-05, beside a clean-clone `npm test`, another engineer's browser tests
 * and CPU hogs), most of it making its inputs with the debug CLI: the limit is 3.6× that.
 */
const BROWSER_FILE_TIMEOUT_MS = 45 * 60 * 1000;

/** Builds the wheel (cargo's dev profile, sharing the test build's dependencies) into .venv/. */
async function pythonTests() {
  const wheels = path.join(root, 'target', 'wheels');
  await step('Python wheel (maturin), installed into .venv/', () => {
    run(VENV_PYTHON, ['-m', 'maturin', 'build', '--profile', 'dev', '--interpreter', VENV_PYTHON, '--out', wheels, '--quiet']);
    const built = readdirSync(wheels).filter((f) => /^memlens-.*\.whl$/.test(f)).sort();
    run(VENV_PYTHON, [
      '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--no-deps', '--force-reinstall', '--quiet',
      path.join(wheels, built[built.length - 1]),
    ]);
  });
  await step('native CLI for the Python and browser tests', () => run('cargo', ['build', '--bin', 'memlens']));
  await step('Python tests (pytest)', () =>
    run(VENV_PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/python']),
  );
}

main(async () => {
  await setup({ browser: true });
  if (pythonOnly) {
    await pythonTests();
    console.log(`\nnpm test (Python only) passed in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    return;
  }
  if (!browserOnly) {
    // The fuzz crate is a workspace of its own (fuzz/Cargo.toml), which `--all` does not reach.
    await step('cargo fmt --check (the crate and fuzz/)', () => {
      run('cargo', ['fmt', '--all', '--check']);
      run('cargo', ['fmt', '--all', '--check', '--manifest-path', path.join(root, 'fuzz', 'Cargo.toml')]);
    });
    await step('cargo clippy -D warnings', () => run('cargo', ['clippy', '--all-targets', '--', '-D', 'warnings']));
    await step('cargo clippy -D warnings (Python module)', () =>
      run('cargo', ['clippy', '--lib', '--features', 'python', '--', '-D', 'warnings']),
    );
    // All targets, not the library alone: a test or bench that would not build for wasm32 shows
    // here (native-only ones are cfg'd out there). ~26 s warm against ~7 s for `--lib` alone.
    await step('cargo clippy -D warnings (wasm layer)', () =>
      run('cargo', ['clippy', '--all-targets', '--target', 'wasm32-unknown-unknown', '--', '-D', 'warnings']),
    );
    // The fuzz targets are built by nobody else: checking them here keeps them from rotting when
    // the core's API changes (a few seconds once the fuzz crate's own target/ is warm).
    await step('fuzz targets compile (cargo +nightly check, fuzz/)', () =>
      run('cargo', ['+nightly', 'check', '--quiet', '--manifest-path', path.join(root, 'fuzz', 'Cargo.toml')]),
    );
    await step('cargo test', () => run('cargo', ['test', '--all-targets']));
    await pythonTests();
  }
  await build();
  await step('native CLI for the browser tests', () => run('cargo', ['build', '--bin', 'memlens']));
  const dir = path.join(root, 'tests', 'browser');
  const files = readdirSync(dir).filter((f) => f.endsWith('.test.mjs')).sort().map((f) => path.join(dir, f));
  await step('browser tests (headless chromium)', () =>
    run(process.execPath, ['--test', '--test-concurrency=1', `--test-timeout=${BROWSER_FILE_TIMEOUT_MS}`, '--test-reporter=spec', ...files]),
  );
  console.log(`\nnpm test passed in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
});
