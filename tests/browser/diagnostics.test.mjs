// A profiler job's problems on the page as what they are, the same as the CLI says them: a rank's
// file error listed as an error with its file (whether a pool of readers or one worker read the
// job, and in a job summary file's rank), errors counted apart from warnings, a drop whose every
// file was refused settling as an error in the core's words, and a file another tab analyses not
// listed as "not analysed". The expectations are the CLI's for the same folders. The broken
// inputs are made here from the real two-rank sample.
//
// On main (2d25458) the pooled overview gave the emptied CSV's error as a WARNING row with an
// empty place, the card read "Warnings 1", the truncated db alone settled as "ready", and the
// snapshot beside a run folder was listed among the files not analysed.
//
// Also: a job read by a pool of readers says what discovery said (its warnings, the files not
// analysed) as one worker does, both as the CLI lists them, a task-info file read with its SOMAS
// dump not among them (`fixtures/classify/job`); and a job summary whose every rank failed
// settles as an error in the core's verdict. On main (546d10e) the pooled overview had none of
// the discovery warnings and no file not analysed, one worker listed the task-info file as
// "task-info file: not torch_npu profiler output", and the summary settled as "ready".
//
// Also: a rank whose only file was refused is one file rejected, not also a rank failed, read by
// a pool or by one worker, and a summary whose every rank failed names no highest peak. On main
// (d675c5a) the pool's card read "1 rank failed, 1 file rejected, …" where one worker's read "1
// file rejected, …", and the failed summary's verdict said "1 rank failed, 1 file could not be
// used" where the CLI said "1 file could not be used", with a "Highest peak allocated 0 B" card.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, cpSync, writeFileSync, readFileSync, truncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, openBrowser, startServer, engineThreads, settled, filesUnder, dropFiles, foreignRequests } from './harness.mjs';

const SAMPLE = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0');

let server;
let tmp;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-diagnostics-'));
  // The two-rank job, rank 1's operator_memory.csv emptied.
  cpSync(path.join(SAMPLE, 'text'), path.join(tmp, 'job'), { recursive: true });
  writeFileSync(path.join(tmp, 'job', 'rank1_ascend_pt', 'ASCEND_PROFILER_OUTPUT', 'operator_memory.csv'), '');
  // The db export alone, truncated to a hundredth.
  cpSync(path.join(SAMPLE, 'db'), path.join(tmp, 'db'), { recursive: true });
  const db = path.join(tmp, 'db', 'rank0_ascend_pt', 'ASCEND_PROFILER_OUTPUT', 'ascend_pytorch_profiler_0.db');
  truncateSync(db, Math.floor(statSync(db).size / 100));
  // A job with discovery warnings and files not analysed, a SOMAS dump and its task-info file.
  cpSync(path.join(root, 'fixtures', 'classify', 'job'), path.join(tmp, 'mixed', 'job'), { recursive: true });
  // One run folder with a memory snapshot and a notes file beside it.
  cpSync(path.join(SAMPLE, 'text', 'rank0_ascend_pt'), path.join(tmp, 'drop', 'rank0_ascend_pt'), { recursive: true });
  cpSync(path.join(root, 'fixtures', 'snapshots', 'cs336_tiny_mem_snapshot.pickle'), path.join(tmp, 'drop', 'snap.pickle'));
  writeFileSync(path.join(tmp, 'drop', 'notes.txt'), 'what we ran\n');
});

after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** `memlens ARGS` in the temporary folder: its status, its JSON (when asked for) and its stderr. */
function cli(...args) {
  return cliIn(tmp, ...args);
}

/** `memlens ARGS` in `cwd`. */
function cliIn(cwd, ...args) {
  const r = spawnSync(CLI, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: r.status, json: args.includes('--json') ? JSON.parse(r.stdout) : null, stderr: r.stderr };
}

/** A diagnostic as the overview's list shows it: level, place, message (the test's own wording of the place). */
const row = (w) => [w.severity, [w.file, w.line ? `line ${w.line}` : null, w.byte !== undefined ? `byte ${w.byte}` : null, w.field ? `field ${w.field}` : null].filter(Boolean).join(', '), w.message];

async function shownRows(page, scope) {
  return page.$$eval(`${scope} [data-testid="ascend-warnings"] li`, (lis) => lis.map((li) => [li.querySelector('.sev').textContent, li.querySelector('.where').textContent, li.querySelector('.msg').textContent]));
}

async function open(search, files) {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  const page = await b.page();
  await page.goto(server.url + search);
  await engineThreads(page);
  await dropFiles(page, files);
  return { b, page, state: await settled(page, 120000) };
}

for (const [how, search] of [['a pool of readers', ''], ['one worker', '?workers=1']]) {
  test(`a rank's file error is an error with its place, read by ${how}, as the CLI lists it`, async () => {
    const want = cli('profiler', 'job', '--json', '-q');
    assert.equal(want.status, 2);
    const errors = want.json.warnings.filter((w) => w.severity === 'error').length;
    const warnings = want.json.warnings.length - errors;
    assert.ok(errors >= 1);
    const { b, page, state } = await open(search, filesUnder(path.join(tmp, 'job')));
    try {
      // The other files were read: the job opens, and its problems are listed.
      assert.equal(state, 'ready');
      await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 60000 });
      if (!search) assert.ok(await page.getAttribute('[data-testid="ascend"]', 'data-workers'), 'read by a pool');
      assert.deepEqual((await shownRows(page, '#panel-ascend')).sort(), want.json.warnings.map(row).sort());
      const card = '#panel-ascend [data-metric="ascend-warnings"]';
      assert.equal(await page.getAttribute(card, 'data-errors'), String(errors));
      assert.equal(await page.getAttribute(card, 'data-warnings'), String(warnings));
      const said = [errors ? `${errors} error${errors === 1 ? '' : 's'}` : '', warnings ? `${warnings} warning${warnings === 1 ? '' : 's'}` : ''].filter(Boolean).join(', ');
      assert.equal(await page.textContent(`${card} .value`), said);
      // The files not analysed are counted only when there are some.
      const notAnalysed = want.json.ignored.length ? `, ${want.json.ignored.length} files? not analysed` : '';
      assert.match(await page.textContent('#panel-ascend [data-testid="ascend-warnings-title"]'), new RegExp(`^${said}${notAnalysed}$`));
      assert.deepEqual(foreignRequests(b.requests, server.origin), []);
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  });
}

test('the job summary file keeps the error with its place: its overview and its rank show it as the CLI does', async () => {
  const want = cli('profiler', 'job', '--json', '-q', '--summary', 'job.memlens.json');
  assert.equal(want.status, 2);
  const file = readFileSync(path.join(tmp, 'job.memlens.json'));
  const { b, page, state } = await open('', [{ path: 'job.memlens.json', base64: file.toString('base64') }]);
  try {
    assert.equal(state, 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="jobsummary"]')?.dataset.state === 'ready', null, { timeout: 60000 });
    assert.deepEqual((await shownRows(page, '[data-testid="jobsummary"]')).sort(), want.json.warnings.map(row).sort());
    // The rank whose file failed: its own list.
    const bad = want.json.warnings.find((w) => w.severity === 'error');
    const idx = want.json.ranks.findIndex((r) => bad.file.startsWith(`${r.run_dirs[0]}/`));
    await page.click(`[data-testid="jobsummary"] [data-testid="rank-row"][data-rank-index="${idx}"]`);
    await page.waitForSelector(`[data-testid="jobsummary-rank"][data-rank-index="${idx}"][data-state="ready"]`);
    const items = await page.$$eval('[data-testid="jobsummary-rank"] .warning-list li', (lis) => lis.map((li) => [li.querySelector('.sev').textContent, li.querySelector('.where').textContent, li.querySelector('.msg').textContent]));
    assert.deepEqual(items, [row(bad)]);
  } finally {
    await b.close();
  }
});

test('a drop whose every file was refused settles as an error, in the words of the CLI', async () => {
  const want = cli('profiler', 'db');
  assert.equal(want.status, 2);
  const problem = want.stderr.trim().split('\n').at(-1).replace(/^memlens: /, '');
  assert.match(problem, /^no rank could be read/);
  const { b, page, state } = await open('', filesUnder(path.join(tmp, 'db')));
  try {
    assert.equal(state, 'error');
    assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-state'), 'error');
    const problems = await page.$$eval('#error-list li', (li) => li.map((x) => x.textContent));
    assert.deepEqual(problems, [problem]);
    // The tab still lists the file's error, counted as an error.
    assert.equal(await page.getAttribute('#panel-ascend [data-metric="ascend-warnings"]', 'data-errors'), '1');
  } finally {
    await b.close();
  }
});

test('a file another tab analyses is not listed among the files not analysed', async () => {
  const want = cli('profiler', 'drop', '--json', '-q');
  assert.deepEqual(want.json.ignored.map((f) => f.path), ['drop/notes.txt']);
  const { b, page, state } = await open('', filesUnder(path.join(tmp, 'drop')));
  try {
    assert.equal(state, 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 60000 });
    const listed = await page.$$eval('#panel-ascend .warning-list.ignored li .where', (xs) => xs.map((x) => x.textContent));
    assert.deepEqual(listed, want.json.ignored.map((f) => f.path));
    // The snapshot has its own tab.
    assert.ok(await page.$('[data-testid="snapshot"]'), 'the snapshot tab');
  } finally {
    await b.close();
  }
});

test('a job read by a pool says what discovery said as one worker does, as the CLI lists it; a task-info file read with its dump is not "not analysed"', async () => {
  const want = cliIn(path.join(tmp, 'mixed'), 'profiler', 'job', '--json', '-q');
  const ignored = want.json.ignored.map((f) => [f.path, f.reason]);
  assert.ok(ignored.length >= 2, JSON.stringify(ignored));
  // The task-info file is read with the dump of its graph (the SOMAS tab's), so not listed.
  assert.ok(!ignored.some(([p]) => p.endsWith('task_info_graph_7.ir')), JSON.stringify(ignored));
  const discovery = want.json.warnings.filter((w) => /names no rank/.test(w.message));
  assert.equal(discovery.length, 1);
  const seen = [];
  for (const search of ['?workers=2', '?workers=1']) {
    const { b, page } = await open(search, filesUnder(path.join(tmp, 'mixed', 'job')));
    try {
      await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 60000 });
      assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-workers'), search === '?workers=2' ? '2' : null, search);
      const rows = (await shownRows(page, '#panel-ascend')).sort();
      assert.deepEqual(rows, want.json.warnings.map(row).sort(), search);
      const listed = await page.$$eval('#panel-ascend .warning-list.ignored li', (lis) => lis.map((li) => [li.querySelector('.where').textContent, li.querySelector('.msg').textContent]));
      assert.deepEqual(listed, ignored, search);
      const title = await page.textContent('#panel-ascend [data-testid="ascend-warnings-title"]');
      assert.equal(title, `${want.json.totals.levels}, ${ignored.length} files not analysed`, search);
      // The rollout rank's only file (its db export) was refused: a file rejected, as the CLI
      // counts it, not also a rank failed.
      const files = await page.textContent('#panel-ascend [data-metric="ascend-warnings"] .sub');
      assert.equal(files, `${want.json.totals.rejected} file rejected, ${ignored.length} files not analysed`, search);
      seen.push({ rows, listed, title, files });
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  }
  assert.deepEqual(seen[0], seen[1]);
});

test('a job summary whose every rank failed settles as an error, in the core\'s verdict', async () => {
  // The truncated db export's job, summarised by the CLI: its one rank failed.
  const want = cli('profiler', 'db', '--json', '-q', '--summary', 'failed.memlens.json');
  assert.equal(want.status, 2);
  const file = readFileSync(path.join(tmp, 'failed.memlens.json'));
  const summary = JSON.parse(file.toString('utf8').split('\n')[0] + ']}');
  assert.equal(summary.totals.ok, 0);
  assert.ok(summary.totals.failed >= 1);
  const { b, page, state } = await open('', [{ path: 'failed.memlens.json', base64: file.toString('base64') }]);
  try {
    assert.equal(state, 'error');
    assert.equal(await page.getAttribute('[data-testid="jobsummary"]', 'data-state'), 'error');
    const problems = await page.$$eval('#error-list li', (li) => li.map((x) => x.textContent));
    assert.equal(problems.length, 1, JSON.stringify(problems));
    // The CLI's words for the same drop: its one file could not be used (not also a rank failed).
    assert.deepEqual(problems, [cli('profiler', 'db').stderr.trim().split('\n').at(-1).replace(/^memlens: /, '')]);
    assert.match(problems[0], /^no rank could be read: 1 file could not be used/);
    // The failed rank is still listed, with its reason; no rank is "the highest peak".
    assert.equal(await page.getAttribute('[data-testid="jobsummary-failed"]', 'data-failed'), String(summary.totals.failed));
    assert.equal(await page.locator('[data-testid="jobsummary"] [data-metric="ascend-peak"]').count(), 0, 'no peak card');
    // Nor a "lowest peak (0 B)" and "highest peak (0 B)" in the matrix's legend (on d675c5a and
    // after the card went, the legend still read so).
    const legend = await page.textContent('[data-testid="jobsummary"] .matrix-wrap .legend');
    assert.doesNotMatch(legend, /lowest peak|highest peak/, legend);
    assert.match(legend, /outlier/);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
