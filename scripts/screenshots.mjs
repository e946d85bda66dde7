// Screenshots of every view of the page for a human to look at (not a test): the landing page, the
// inputs tab, every torch_npu view on the real two-rank sample (the call stack of a picked row),
// every SOMAS view on a generated dump with injected conflicts and its task-info file (and the
// first conflict shown), a PyTorch memory snapshot, a job summary, and the Compare mode (two
// generated jobs, one with a 48 MiB block injected at rank 1's peak; two SOMAS dumps, one tensor
// grown; the "compare these" offer after a drop of two runs), at 1440×900 and 1024×700, light and
// dark. Each view is shot where the page puts it (the viewport after its number key), plus the
// whole page.
//
//   node scripts/screenshots.mjs [--out DIR] [--only light|dark] [--size 1440|1024] [--docs]
//
// `--docs` also copies the shots the README and docs/ show into docs/screenshots/ (see DOCS).
// Needs a built page (npm run build) and the CLI (cargo build --bin memlens, for the generator).
import { mkdirSync, existsSync, copyFileSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
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

// The shots docs/screenshots/ holds: its file name ← the shot (scheme-width/name).
const DOCS = {
  'landing-light-1024.png': 'light-1024/00-landing',
  'profiler-overview-light-1440.png': 'light-1440/profiler-0-top',
  'profiler-table-light-1440.png': 'light-1440/profiler-4-table',
  'profiler-table-dark-1024.png': 'dark-1024/profiler-4-table',
  'profiler-stack-dark-1440.png': 'dark-1440/profiler-5-stack',
  'somas-layout-dark-1024.png': 'dark-1024/somas-3-layout',
  'somas-conflict-light-1440.png': 'light-1440/somas-conflict',
  'snapshot-light-1440.png': 'light-1440/snapshot-top',
  'jobsummary-dark-1440.png': 'dark-1440/jobsummary-top',
  'compare-profiler-light-1440.png': 'light-1440/compare-profiler',
  'compare-profiler-dark-1024.png': 'dark-1024/compare-profiler',
  'compare-somas-dark-1440.png': 'dark-1440/compare-somas',
  'compare-offer-light-1440.png': 'light-1440/compare-offer',
};

const SAMPLE = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
const SNAPSHOT = path.join(root, 'fixtures', 'snapshots', 'cs336_medium_128_training_memory_snapshot.pickle');
const SUMMARY = path.join(root, 'fixtures', 'summary', 'msinsight-level0.memlens.json');
const gen = path.join(tmpdir(), 'memlens-screenshots');
const somasDir = path.join(gen, 'somas');
const cli = (...args) => execFileSync(CLI, args, { stdio: 'ignore' });
const one = (file) => [{ path: path.basename(file), base64: readFileSync(file).toString('base64') }];
if (!existsSync(path.join(gen, 'done'))) {
  rmSync(gen, { recursive: true, force: true });
  mkdirSync(somasDir, { recursive: true });
  cli('generate', 'somas', '--flavor', 'v2.4', '--nodes', '3000', '--seed', '3', '--inject-conflicts', '4',
    '--out', path.join(somasDir, 'Ascend_somas_tensor_offset_1.ir'), '--task-info-out', path.join(somasDir, 'task_info_graph_1.ir'));
  // The Compare mode's inputs, as tests/browser/compare.test.mjs makes them.
  const job = ['generate', 'profiler', '--ranks', '2', '--rows', '600', '--trace-mb', '0.2', '--steps', '2', '--seed', '4'];
  cli(...job, '--out', path.join(gen, 'job-a'));
  cli(...job, '--out', path.join(gen, 'job-b'), '--inject-peak-bytes', String(48 << 20));
  cli('generate', 'somas', '--out', path.join(gen, 'a_somas_tensor_offset_1.ir'), '--nodes', '3000', '--flavor', 'v2.4');
  cli('generate', 'somas', '--out', path.join(gen, 'c_somas_tensor_offset_1.ir'), '--nodes', '3000', '--flavor', 'v2.4', '--grow-tensor', '300000000');
  const pair = ['generate', 'profiler', '--ranks', '1', '--rows', '400', '--trace-mb', '0.1', '--steps', '2', '--seed', '9'];
  cli(...pair, '--out', path.join(gen, 'two-runs', 'before'));
  cli(...pair, '--out', path.join(gen, 'two-runs', 'after'), '--inject-peak-bytes', String(16 << 20));
  writeFileSync(path.join(gen, 'done'), '');
}

const PROFILER_VIEWS = ['overview', 'memory', 'timeline', 'table', 'stack', 'live', 'unreleased', 'export'];
const SOMAS_VIEWS = ['overview', 'curves', 'layout', 'frame', 'query', 'tables', 'export'];

async function shoot(page, dir, name, fullPage = false) {
  await page.waitForTimeout(150);
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage });
}

/** Loads the page afresh and drops `files`; resolves when the page and `view` are settled. */
async function load(page, url, files, view) {
  await page.goto('about:blank');
  await page.goto(url);
  await engineThreads(page);
  await dropFiles(page, files);
  await settled(page, 120000);
  await page.waitForFunction((id) => !['loading', ''].includes(document.querySelector(`[data-testid="${id}"]`)?.dataset.state ?? ''), view, { timeout: 120000 });
  await page.waitForTimeout(400);
}

/** Opens the Compare mode, gives it `base` and `candidate` (folders or files) and runs it. */
async function compare(page, url, kind, base, candidate) {
  await page.goto('about:blank');
  await page.goto(url);
  await engineThreads(page);
  await page.click('[data-testid="compare-button"]');
  await page.waitForSelector('[data-testid="compare"][data-state="empty"]');
  await page.setInputFiles(`input[data-testid="compare-base-${kind}"]`, base);
  await page.setInputFiles(`input[data-testid="compare-candidate-${kind}"]`, candidate);
  await page.click('[data-testid="compare-run"]');
  await page.waitForFunction(() => ['ready', 'error'].includes(document.querySelector('[data-testid="compare"]').dataset.state), null, { timeout: 120000 });
  await page.evaluate(() => document.getElementById('compare-root').scrollIntoView({ block: 'start' }));
  await page.waitForTimeout(300);
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

        await load(page, server.url, filesUnder(SAMPLE), 'ascend');
        await shoot(page, dir, 'profiler-0-top');
        for (const [i, v] of PROFILER_VIEWS.entries()) {
          // The call stack of the table's first row: what a click on a row shows.
          if (v === 'stack') await page.locator('[data-testid="alloc-row"]').first().click();
          await page.keyboard.press(String(i + 1));
          await shoot(page, dir, `profiler-${i + 1}-${v}`);
        }
        await page.evaluate(() => window.scrollTo(0, 0));
        await shoot(page, dir, 'profiler-all', true);
        await page.click('[data-tab="inputs"]');
        await shoot(page, dir, 'inputs');

        await load(page, `${server.url}#`, filesUnder(somasDir), 'somas');
        await shoot(page, dir, 'somas-0-top');
        for (const [i, v] of SOMAS_VIEWS.entries()) {
          await page.keyboard.press(String(i + 1));
          await shoot(page, dir, `somas-${i + 1}-${v}`);
        }
        await page.evaluate(() => window.scrollTo(0, 0));
        await shoot(page, dir, 'somas-all', true);
        await page.getByRole('button', { name: /show the first/ }).click();
        await page.waitForFunction(() => document.querySelector('[data-testid="somas-layout"]')?.dataset.selection);
        await shoot(page, dir, 'somas-conflict');

        await load(page, `${server.url}#`, one(SNAPSHOT), 'snapshot');
        await shoot(page, dir, 'snapshot-top');
        await shoot(page, dir, 'snapshot-all', true);

        await load(page, `${server.url}#`, one(SUMMARY), 'jobsummary');
        await shoot(page, dir, 'jobsummary-top');
        await shoot(page, dir, 'jobsummary-all', true);

        await compare(page, `${server.url}#`, 'folder', path.join(gen, 'job-a'), path.join(gen, 'job-b'));
        await shoot(page, dir, 'compare-profiler');
        await compare(page, `${server.url}#`, 'files', path.join(gen, 'a_somas_tensor_offset_1.ir'), path.join(gen, 'c_somas_tensor_offset_1.ir'));
        await shoot(page, dir, 'compare-somas');

        // Two runs of one rank in one drop: the "compare these" offer, the run before first.
        await page.goto('about:blank');
        await page.goto(`${server.url}#`);
        await engineThreads(page);
        await page.setInputFiles('input[data-testid="folder-input"]', path.join(gen, 'two-runs'));
        await page.waitForSelector('[data-testid="compare-offer"]:not([hidden])', { timeout: 120000 });
        await settled(page, 120000);
        if (!/\/before\//.test(`${await page.textContent('[data-testid="offer-base"]')}/`)) await page.click('[data-testid="offer-swap"]');
        await page.evaluate(() => window.scrollTo(0, 0));
        await shoot(page, dir, 'compare-offer');
        console.log(`${dir}: done`);
      } finally {
        await b.close();
      }
    }
  }
  if (process.argv.includes('--docs')) {
    const docs = path.join(root, 'docs', 'screenshots');
    for (const [name, shot] of Object.entries(DOCS)) {
      const from = path.join(OUT, `${shot}.png`);
      if (existsSync(from)) copyFileSync(from, path.join(docs, name));
      else console.log(`${name}: not shot in this run (${shot})`);
    }
  }
} finally {
  await server.close();
}
