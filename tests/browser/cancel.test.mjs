// Stopping a load: while a job is being read the page shows bytes read, throughput and time left;
// Cancel, or a new drop, stops the work at once — the worker that was reading sees its stop flag,
// leaves its wasm call, says so and is terminated (its memory goes with it), and a fresh one serves
// what comes next.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { rmSync, readdirSync, statSync } from 'node:fs';
import { root, CLI, openBrowser, startServer, settled, engineThreads } from './harness.mjs';

const TEXT = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
// Large enough that reading it takes well over the moment the test needs to act while it runs.
const BIG = path.join(tmpdir(), `memlens-cancel-${process.pid}`);
let server;

before(async () => {
  execFileSync(CLI, ['generate', 'profiler', '--out', BIG, '--roles', '1', '--ranks', '2', '--trace-mb', '400', '--rows', '2000', '--seed', '7'], { stdio: 'ignore' });
  server = await startServer({ isolate: true });
});
after(async () => {
  rmSync(BIG, { recursive: true, force: true });
  if (server) await server.close();
});

function bytesUnder(dir) {
  let n = 0;
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    const s = statSync(p);
    n += s.isDirectory() ? bytesUnder(p) : s.size;
  }
  return n;
}

/**
 * Picks the big job and waits until its reading reports a speed; in the same turn of the page's
 * event loop, with `cancel`, presses Cancel, so that the read is certainly still going then.
 * Returns what the progress line said at that moment.
 */
async function whileReading(page, cancel) {
  await page.setInputFiles('input[data-testid="folder-input"]', BIG);
  const seen = await page.waitForFunction(
    (cancel) => {
      const phase = document.querySelector('[data-testid="ascend-phase"]');
      if (!phase || !phase.dataset.rate) return false;
      const info = {
        text: phase.textContent,
        rate: Number(phase.dataset.rate),
        left: Number(phase.dataset.left),
        done: Number(phase.dataset.done),
        status: document.querySelector('[data-testid="status"]').dataset.state,
        progress: document.querySelector('[data-testid="progress-label"]').textContent,
        cancelVisible: document.querySelector('[data-testid="cancel"]').offsetParent !== null,
      };
      if (cancel) document.querySelector('[data-testid="cancel"]').click();
      return info;
    },
    cancel,
    { timeout: 120000, polling: 10 },
  );
  return seen.jsonValue();
}

/** How the page's workers were ended so far (see www/worker-life.js): on their word, or by force. */
function endings(page) {
  return page.evaluate(() => ({
    stopped: performance.getEntriesByName('memlens:worker-stopped').length,
    forced: performance.getEntriesByName('memlens:worker-forced').length,
  }));
}

/**
 * Resolves when every worker the page has now (the engine's, and any threads it started) closed;
 * rejects if they are still running 30 s later (they would be if nothing stopped them).
 */
function allClose(page) {
  const workers = page.workers();
  assert.ok(workers.length > 0, 'the page runs its engine in a worker');
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('the workers of the stopped load still run')), 30000);
  });
  const closes = workers.map((w) => new Promise((r) => w.once('close', () => r(Date.now()))));
  return Promise.race([late, Promise.all(closes).then((t) => Math.max(...t))]).finally(() => clearTimeout(timer));
}

test('with one worker (?workers=1) the progress line gives bytes read, throughput and time left; Cancel stops the read and its worker', async () => {
  const total = bytesUnder(BIG);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${server.url}?workers=1`);
    assert.ok((await engineThreads(page)) > 1, 'the isolated page runs the threaded engine');
    const closed = allClose(page);
    const seen = await whileReading(page, true);
    const tSeen = Date.now();
    assert.equal(seen.status, 'loading');
    assert.ok(seen.cancelVisible, 'Cancel is offered while the job is read');
    assert.ok(seen.done > 0 && seen.done < total, `part of the job read: ${seen.done} of ${total}`);
    assert.ok(seen.rate > 0, 'a throughput');
    assert.ok(seen.left > 0, 'a time left');
    assert.match(seen.text, /^Reading: [\d.]+ [KMG]iB of [\d.]+ [KMG]iB \(\d+ files?\) — [\d.]+ [KMG]iB\/s, (about [\d ]+(s|min)[\d s]*|less than a second) left$/);
    assert.match(seen.progress, /^torch_npu: Reading: .* left$/);
    // The click ran in the page; the status says so at once and the views of the stopped load went.
    assert.equal(await page.getAttribute('[data-testid="status"]', 'data-state'), 'cancelled');
    assert.equal(await page.$('[data-testid="ascend"]'), null);
    assert.ok(await page.isHidden('#progress'));
    assert.equal(await page.$$eval('#tabs [role="tab"]', (t) => t.length), 0);
    const last = await closed;
    console.log(`# cancelled after ${seen.done} bytes; the workers had closed ${Math.max(0, last - tSeen)} ms after the test heard of the click`);
    // The busy worker saw its stop flag: it left its wasm call, stopped its threads and said so,
    // and was not left to the browser's forced end.
    assert.deepEqual(await endings(page), { stopped: 1, forced: 0 });
    // A fresh engine serves the next drop.
    assert.ok((await engineThreads(page)) > 1);
    await page.setInputFiles('input[data-testid="folder-input"]', TEXT);
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
    assert.equal(await page.textContent('#error-list'), '');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a new drop while a job is read replaces it: the old read stops, the new drop loads', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    const closed = allClose(page);
    // The second pick follows as soon as the first job is being read.
    await whileReading(page, false);
    await page.setInputFiles('input[data-testid="folder-input"]', TEXT);
    await closed;
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
    // The views are the small job's: none of the big job's files is in its plan.
    const files = JSON.parse(await page.getAttribute('[data-testid="ascend"]', 'data-files'));
    assert.ok(files.length > 0);
    assert.ok(files.every((f) => !f.includes('memlens-cancel')), files.join(', '));
    assert.equal(await page.textContent('#error-list'), '');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('with the default pool of readers Cancel terminates every reader and the page’s worker', async () => {
  const total = bytesUnder(BIG);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    // As many readers as cores, at most one per rank (the big job has two).
    const readers = Math.min(2, await page.evaluate(() => navigator.hardwareConcurrency));
    await whileReading(page, false);
    // The readers are running now (started for the drop, or before it while the page was idle:
    // www/worker-pool.js), beside the page's worker and its threads. A reader is known by the
    // engine its URL asks for.
    const workers = page.workers();
    const reading = workers.filter((w) => /\/worker\.js\?.*(engine=single|threads=)/.test(w.url()));
    assert.ok(reading.length >= readers, `${reading.length} readers while the pool reads: ${workers.map((w) => w.url()).join(', ')}`);
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('the readers of the stopped load still run')), 30000);
    });
    const closed = Promise.race([late, Promise.all(workers.map((w) => new Promise((r) => w.once('close', r))))]).finally(() => clearTimeout(timer));
    const seen = await page.evaluate(() => {
      const phase = document.querySelector('[data-testid="ascend-phase"]');
      const info = { text: phase.textContent, done: Number(phase.dataset.done) };
      document.querySelector('[data-testid="cancel"]').click();
      return info;
    });
    assert.ok(seen.done > 0 && seen.done < total, `part of the job read: ${seen.done} of ${total}`);
    assert.match(seen.text, new RegExp(`^Reading: [\\d.]+ [KMG]iB of [\\d.]+ [KMG]iB \\(2 ranks, ${readers} workers?\\) — `));
    assert.equal(await page.getAttribute('[data-testid="status"]', 'data-state'), 'cancelled');
    await closed;
    // Every reader and the page's worker saw the stop flag and said so before they were ended.
    const ends = await endings(page);
    assert.equal(ends.forced, 0);
    assert.ok(ends.stopped >= readers + 1, `${ends.stopped} workers stopped`);
    // The next drop is read by a fresh pool.
    await page.setInputFiles('input[data-testid="folder-input"]', TEXT);
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
    assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-readers'), String(readers));
    assert.equal(await page.textContent('#error-list'), '');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
