// The pool's readers started ahead of any drop, and their warm-up (www/worker-pool.js,
// www/warm-up.js): importing the pool's module starts no worker (the page's start-up does); each
// reader the page starts reads the warm-up job the engine makes in memory — the same job the CLI
// generates, so its rows and peak are checked against the CLI's `--json` — before a drop, and a
// drop's first request makes a warm-up still running give way. On this cross-origin isolated page
// the readers read their files ahead (www/read-ahead.js) unless the page says `?readAhead=0`, and
// both ways give the CLI's ranks and rows.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { CLI, openBrowser, startServer, engineThreads, settled } from './harness.mjs';
import { cliJson, rankTableModel } from '../../scripts/bench-job.mjs';

// The warm-up job's size (WARM_UP in www/worker-pool.js) and the generator's other settings
// (src/wasm/warm_up.rs): one role, one rank, two steps, seed 9.
const TRACE_MB = 2;
const ROWS = 4000;
let server;
let tmp;
let warmJob;
let job;
let jobRanks;
let cli;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-warm-up-'));
  warmJob = path.join(tmp, 'warm');
  execFileSync(CLI, ['generate', 'profiler', '--out', warmJob, '--roles', '1', '--ranks', '1', '--trace-mb', String(TRACE_MB), '--rows', String(ROWS), '--steps', '2', '--seed', '9'], { stdio: 'ignore' });
  const [rank] = JSON.parse(execFileSync(CLI, ['profiler', '--json', warmJob], { encoding: 'utf8', maxBuffer: 1 << 28 })).ranks;
  cli = rank;
  job = path.join(tmp, 'job');
  execFileSync(CLI, ['generate', 'profiler', '--out', job, '--roles', '1', '--ranks', '2', '--trace-mb', '0.5', '--rows', '2000', '--seed', '23'], { stdio: 'ignore' });
  jobRanks = cliJson(CLI, job).ranks;
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('importing the pool module starts no worker; the page start-up does', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    // A page of the same origin without the page's script: the module alone.
    await page.route(`${server.url}bare.html`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>bare</title>' }));
    await page.goto(`${server.url}bare.html`);
    await page.evaluate(() => import('./worker-pool.js'));
    // The readers used to start 1.5 s after the import, when the page was next idle.
    await page.waitForTimeout(4000);
    assert.deepEqual(page.workers().map((w) => w.url()), []);
    // The page itself starts its worker and, once its engine is ready, the pool's readers.
    await page.goto(server.url);
    await engineThreads(page);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    await page.waitForFunction(() => document.documentElement.dataset.warmReaders, null, { timeout: 60000 });
    assert.equal(await page.evaluate(() => document.documentElement.dataset.warmReaders), String(cores));
  } finally {
    await b.close();
  }
});

test('the readers started ahead read the warm-up job (the CLI’s figures) and then the drop', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${server.url}?workers=2`);
    await engineThreads(page);
    await page.waitForFunction(() => document.documentElement.dataset.warmReaders, null, { timeout: 60000 });
    await page.setInputFiles('input[data-testid="folder-input"]', job);
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
    const { readers } = JSON.parse(await page.getAttribute('[data-testid="ascend"]', 'data-timings'));
    assert.equal(readers.length, 2);
    for (const r of readers) {
      assert.equal(r.warm, true, 'a reader started ahead');
      assert.equal(r.warmUp?.done, true, JSON.stringify(r.warmUp));
      assert.deepEqual({ rows: r.warmUp.rows, peak: r.warmUp.peak }, { rows: cli.rows, peak: cli.peak_allocated_bytes });
      assert.ok(r.warmUp.end <= r.taken, `warm-up ended ${r.warmUp.end} before the reader was taken ${r.taken}`);
      // On a cross-origin isolated page a reader reads its files ahead (www/read-ahead.js).
      assert.equal(r.readAhead, true, 'the reader read its files ahead');
    }
    assert.equal(await page.textContent('#error-list'), '');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('with ?warmUp=0 the readers start ahead without a warm-up', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${server.url}?workers=2&warmUp=0`);
    await engineThreads(page);
    await page.waitForFunction(() => document.documentElement.dataset.warmReaders, null, { timeout: 60000 });
    await page.setInputFiles('input[data-testid="folder-input"]', job);
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
    const { readers } = JSON.parse(await page.getAttribute('[data-testid="ascend"]', 'data-timings'));
    assert.deepEqual(readers.map((r) => [r.warm, r.warmUp ?? null]), [[true, null], [true, null]]);
  } finally {
    await b.close();
  }
});

test('with ?readAhead=0 the readers read their files themselves, to the same rank table', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    const tables = [];
    for (const query of ['', '&readAhead=0']) {
      await page.goto(`${server.url}?workers=2${query}`);
      await engineThreads(page);
      await page.setInputFiles('input[data-testid="folder-input"]', job);
      await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
      const { readers } = JSON.parse(await page.getAttribute('[data-testid="ascend"]', 'data-timings'));
      assert.deepEqual(readers.map((r) => r.readAhead), query ? [false, false] : [true, true], query || 'the default');
      tables.push(await rankTableModel(page));
    }
    assert.deepEqual(tables[1], tables[0]);
    assert.deepEqual(tables[0], { ranks: jobRanks.length, rows: jobRanks.reduce((n, r) => n + r.rows, 0) }, 'the CLI\'s ranks and rows');
  } finally {
    await b.close();
  }
});

test('a request sent during the warm-up makes it give way before it analyses', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    const got = await page.evaluate(async ({ traceBytes, rows }) => {
      const { EngineClient } = await import('./engine-client.js');
      const c = new EngineClient({ engine: 'single' });
      try {
        await c.engine;
        // Sent together: the warm-up sees the drop's request at its first pause.
        const warm = c.call('warmUp', { traceBytes, rows });
        const load = c.call('load', { files: [], unreadable: [] });
        const [w, l] = await Promise.all([warm, load]);
        // The same reader warms up in full when nothing else is asked.
        const full = await c.call('warmUp', { traceBytes, rows });
        return { w, units: l.units.length, full };
      } finally {
        c.terminate();
      }
    }, { traceBytes: TRACE_MB << 20, rows: ROWS });
    assert.equal(got.w.done, false, JSON.stringify(got.w));
    assert.equal(got.w.ms.analyze, undefined, 'it stopped before the analysis');
    assert.equal(got.units, 0);
    assert.equal(got.full.done, true);
    assert.deepEqual({ rows: got.full.rows, peak: got.full.peak }, { rows: cli.rows, peak: cli.peak_allocated_bytes });
  } finally {
    await b.close();
  }
});
