// npm test: set-up (incl. chromium), formatting, lints, Rust tests, both wasm builds, the offline
// file, and the browser tests. Stops at the first failure.
//   npm test -- --browser-only   skip the Rust checks (fast loop on the page)
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { setup } from './setup.mjs';
import { build } from './build.mjs';
import { run, step, root, main } from './util.mjs';

const browserOnly = process.argv.includes('--browser-only');
const t0 = performance.now();

main(async () => {
  await setup({ browser: true });
  if (!browserOnly) {
    await step('cargo fmt --check', () => run('cargo', ['fmt', '--all', '--check']));
    await step('cargo clippy -D warnings', () => run('cargo', ['clippy', '--all-targets', '--', '-D', 'warnings']));
    await step('cargo clippy -D warnings (wasm layer)', () =>
      run('cargo', ['clippy', '--lib', '--target', 'wasm32-unknown-unknown', '--', '-D', 'warnings']),
    );
    await step('cargo test', () => run('cargo', ['test', '--all-targets']));
  }
  await build();
  await step('native CLI for the browser tests', () => run('cargo', ['build', '--bin', 'memlens']));
  const dir = path.join(root, 'tests', 'browser');
  const files = readdirSync(dir).filter((f) => f.endsWith('.test.mjs')).sort().map((f) => path.join(dir, f));
  await step('browser tests (headless chromium)', () =>
    run(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', ...files]),
  );
  console.log(`\nnpm test passed in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
});
