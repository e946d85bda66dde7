// Screenshots of every view of the page for a human to look at (not a test): the landing page, the
// inputs tab, every torch_npu view on the real two-rank sample and every SOMAS view on a generated
// dump with injected conflicts and its task-info file, at 1440×900 and 1024×700, light and dark.
// Each view is shot where the page puts it (the viewport after its number key), plus the whole page.
//
//   node scripts/screenshots.mjs [--out DIR] [--only light|dark] [--size 1440|1024]
//
// Needs a built page (npm run build) and the CLI (cargo build --bin memlens, for the generator).
import { mkdirSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openBrowser, startServer, engineThreads, settled, filesUnder, dropFiles, root, CLI } from '../tests/browser/harness.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const OUT = path.resolve(arg('out', path.join(root, 'test-results', 'screenshots', 'views')));
const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 700 },
].filter((s) => !arg('size') || String(s.width) === arg('size'));
const SCHEMES = ['light', 'dark'].filter((s) => !arg('only') || s === arg('only'));

const SAMPLE = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
const somasDir = path.join(tmpdir(), 'memlens-screenshots-somas');
if (!existsSync(path.join(somasDir, 'Ascend_somas_tensor_offset_1.ir'))) {
  mkdirSync(somasDir, { recursive: true });
  execFileSync(CLI, ['generate', 'somas', '--flavor', 'v2.4', '--nodes', '3000', '--seed', '3', '--inject-conflicts', '4',
    '--out', path.join(somasDir, 'Ascend_somas_tensor_offset_1.ir'), '--task-info-out', path.join(somasDir, 'task_info_graph_1.ir')], { stdio: 'ignore' });
}

const PROFILER_VIEWS = ['overview', 'memory', 'timeline', 'table', 'stack', 'live', 'unreleased', 'export'];
const SOMAS_VIEWS = ['overview', 'curves', 'layout', 'frame', 'query', 'tables', 'export'];

async function shoot(page, dir, name, fullPage = false) {
  await page.waitForTimeout(150);
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage });
}

const server = await startServer({ isolate: true });
try {
  for (const scheme of SCHEMES) {
    for (const size of SIZES) {
      const dir = path.join(OUT, `${scheme}-${size.width}`);
      mkdirSync(dir, { recursive: true });
      const b = await openBrowser({ colorScheme: scheme, viewport: size });
      try {
        const page = await b.page();
        await page.goto(server.url);
        await engineThreads(page);
        await shoot(page, dir, '00-landing');

        await dropFiles(page, filesUnder(SAMPLE));
        await settled(page);
        await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state !== 'loading');
        await shoot(page, dir, 'profiler-0-top');
        for (const [i, v] of PROFILER_VIEWS.entries()) {
          await page.keyboard.press(String(i + 1));
          await shoot(page, dir, `profiler-${i + 1}-${v}`);
        }
        await page.evaluate(() => window.scrollTo(0, 0));
        await shoot(page, dir, 'profiler-all', true);
        await page.click('[data-tab="inputs"]');
        await shoot(page, dir, 'inputs');

        await page.goto(`${server.url}#`);
        await engineThreads(page);
        await dropFiles(page, filesUnder(somasDir));
        await settled(page);
        await page.waitForFunction(() => document.querySelector('[data-testid="somas"]')?.dataset.state === 'ready');
        await page.waitForTimeout(500);
        await shoot(page, dir, 'somas-0-top');
        for (const [i, v] of SOMAS_VIEWS.entries()) {
          await page.keyboard.press(String(i + 1));
          await shoot(page, dir, `somas-${i + 1}-${v}`);
        }
        await page.evaluate(() => window.scrollTo(0, 0));
        await shoot(page, dir, 'somas-all', true);
        console.log(`${dir}: done`);
      } finally {
        await b.close();
      }
    }
  }
} finally {
  await server.close();
}
