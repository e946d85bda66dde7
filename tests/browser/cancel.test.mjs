// Stopping a load: while a job is being read the page shows bytes read, throughput and time left;
// Cancel, or a new drop, stops the work at once — the worker that was reading sees its stop flag,
// leaves its wasm call, says so and is terminated (its memory goes with it), and a fresh one serves
// what comes next.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { rmSync, readdirSync, statSync, renameSync, mkdirSync, mkdtempSync } from 'node:fs';
import { root, CLI, openBrowser, startServer, settled, engineThreads, watchWorkers, stopVerdict } from './harness.mjs';

const TEXT = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
// The generated inputs live in a folder of this run's own (a name by process id could meet the
// leftover of an earlier run that was killed before its clean-up: `mkdirSync` then fails). The
// folders keep their names: the pages see them, and a test checks that none of them is read.
const TMP = mkdtempSync(path.join(tmpdir(), 'memlens-cancel-'));
// Large enough that reading it takes well over the moment the test needs to act while it runs.
const BIG = path.join(TMP, 'memlens-cancel');
// A job of two ranks: rank 0 of 500,000 operator rows, whose memory_record.csv (~160 MB) is one
// read with `?readSize=256` and whose rows take seconds to parse — without a stop check inside the
// parse, a Cancel right after that read is learnt only when the parse is done and the next file's
// read is refused (`endings()` tells which) —, and rank 1 of 20,000 rows, which a second reader
// of the pool has read long before (so that only the parse is under way then).
const ROWS = path.join(TMP, 'memlens-cancel-rows');
const SMALL = path.join(TMP, 'memlens-cancel-small');
// A SOMAS plan of 200,000 nodes (~110 MB, with its ~55 MB task-info file) and a snapshot pickle
// of ~180 MB: each parses and analyses for seconds in the page's engine after its last read, so
// a Cancel then is learnt by the parse's stop question or, without one, not at all.
const PLAN = path.join(TMP, 'memlens-cancel-somas');
// A job of six ranks read by two readers, each rank by a reader of its own (`?readerBytes=1`,
// www/worker-pool.js): three runs per reader, the next run's reader started when a run starts.
const RUNS = path.join(TMP, 'memlens-cancel-runs');
const SNAP = path.join(TMP, 'memlens-cancel-snapshot');
// A pool reader's worker, known by the engine its URL asks for (www/worker-pool.js `readerParams`).
const READER_URL = /\/worker\.js\?.*(engine=single|threads=)/;
let server;

before(async () => {
  execFileSync(CLI, ['generate', 'profiler', '--out', BIG, '--roles', '1', '--ranks', '2', '--trace-mb', '400', '--rows', '2000', '--seed', '7'], { stdio: 'ignore' });
  const gen = (dir, rows) => execFileSync(CLI, ['generate', 'profiler', '--out', dir, '--roles', '1', '--ranks', '2', '--trace-mb', '1', '--rows', rows, '--seed', '9'], { stdio: 'ignore' });
  gen(ROWS, '500000');
  gen(SMALL, '20000');
  // The small job's rank 1 in place of the large one's (the same run folder name).
  const big1 = runFolder(ROWS, 1);
  rmSync(big1, { recursive: true });
  renameSync(runFolder(SMALL, 1), big1);
  execFileSync(CLI, ['generate', 'profiler', '--out', RUNS, '--roles', '1', '--ranks', '6', '--trace-mb', '100', '--rows', '2000', '--seed', '11'], { stdio: 'ignore' });
  mkdirSync(PLAN);
  execFileSync(CLI, ['generate', 'somas', '--flavor', 'v2.4', '--nodes', '200000', '--seed', '7', '--out', path.join(PLAN, 'big_somas_tensor_offset_1.ir'), '--task-info-out', path.join(PLAN, 'task_info_graph_1.ir')], { stdio: 'ignore' });
  mkdirSync(SNAP);
  execFileSync(CLI, ['generate', 'snapshot', '--size-mb', '150', '--out', path.join(SNAP, 'big.pickle')], { stdio: 'ignore' });
  server = await startServer({ isolate: true });
});
after(async () => {
  rmSync(TMP, { recursive: true, force: true });
  if (server) await server.close();
});

/** The files named `name` under `dir`, with their sizes (one per rank of a generated job). */
function filesNamed(dir, name) {
  const out = [];
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    const s = statSync(p);
    if (s.isDirectory()) out.push(...filesNamed(p, name));
    else if (e === name) out.push({ path: p, size: s.size });
  }
  return out;
}

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

/**
 * How the page's workers were ended so far (see www/worker-life.js): on their word (`stopped`) or
 * by force (`forced`); and of those that stopped on their word, how many had an engine call under
 * way that learnt of the stop by its parse's stop question (`asked`) or by a refused read
 * (`refused`). A call that ignored the flag would have run to its end instead, and told nothing.
 */
function endings(page) {
  return page.evaluate(() => {
    const stopped = performance.getEntriesByName('memlens:worker-stopped');
    const told = (how) => stopped.filter((m) => m.detail?.told === how).length;
    return {
      stopped: stopped.length,
      forced: performance.getEntriesByName('memlens:worker-forced').length,
      asked: told('asked'),
      refused: told('refused'),
    };
  });
}

/**
 * The pages of these tests wait this long (`?stopWait=MS`, www/worker-life.js) for a stopped
 * worker's word before they end it by force, not the product's 300 ms: on a busy machine (load
 * 6.5–10) a worker was once ended by force for a word that came later than that. Whether it stops
 * on its word is what these tests check, and is told by `endings()`; how soon is the benchmark's
 * to measure (scripts/bench-cancel.mjs). Well under STOP_MS, so that a worker that never says
 * `stopped` shows as ended by force, not as a worker that did not close.
 */
const STOP_WAIT = 'stopWait=10000';

/**
 * How long the workers of a stopped load may take to close, counted from the Cancel (or the new
 * drop) that stops it. The page's goal is a second; the rest is slack for a loaded machine. Never
 * counted from the drop: the read before the Cancel may take any time (a 30 s watch started at
 * the drop failed a clean-clone run whose read was slow, though the worker then stopped on its
 * word).
 */
const STOP_MS = 30000;

/**
 * How long the browser's list may keep a worker whose end the page cannot confirm, once the page
 * has ended and terminated each of its own, counted from the same moment: one the page did not
 * start (a thread of the threaded engine, the read-ahead helper: they end with their parents), or
 * any, if a worker of the page was terminated before it took its lock. The list is then the only
 * witness. A chosen limit, four times `STOP_MS`, not a measured bound.
 */
const LISTED_MS = 4 * STOP_MS;

/**
 * The page's record of each worker's life (www/worker-life.js): per worker number, the page time
 * of the first mark of each step (`end`, `terminate`, `locked`, `gone`, …).
 */
function lives(page) {
  return page.evaluate(() => {
    const out = {};
    for (const m of performance.getEntriesByType('mark')) {
      if (!m.name.startsWith('memlens:worker-')) continue;
      out[m.detail.id] ??= {};
      out[m.detail.id][m.name.slice('memlens:worker-'.length)] ??= m.startTime;
    }
    return out;
  });
}

/**
 * Watches every worker the page has now (the engine's, and any threads it started; as the browser
 * lists them, see the harness's `watchWorkers`): call before the drop, so that none closes unseen.
 * `closedWithin(what)`, called at the Cancel (or the new drop), resolves with the time the last of
 * them left the browser's list, and rejects, naming those left and saying what the page and the
 * browser knew of them, if one is still listed `STOP_MS` after that call and the page had not
 * ended and terminated each of its own workers that ran at the watch's start, or the browser had
 * not ended one's context (they would run on if nothing stopped them). Once all are ended, a
 * worker of the page still listed counts as closed if the browser ended the context of every one
 * of them (the harness's `stopVerdict`); any other still listed `LISTED_MS` after the call fails
 * the test. The times count from the action, not from the watch.
 */
async function watchStop(page) {
  const watch = await watchWorkers(page);
  assert.ok(watch.size > 0, 'the page runs its engine in a worker');
  // The page's own workers that run now (started and not terminated): the stop must end them all.
  const running = Object.entries(await lives(page))
    .filter(([, l]) => l.terminate === undefined)
    .map(([id]) => Number(id));
  return {
    closedWithin(what) {
      const from = performance.now();
      const fail = async (each, open, ms, why) => {
        // What the page did to each worker and what the browser says of those left.
        const report = await watch.report(open.map((w) => w.id));
        throw new Error(`the workers of the stopped load are still listed ${ms / 1000} s after ${what}${why}: ${open.length} of ${each.length} (${open.map((w) => w.url).join(', ')})\n${report}`);
      };
      const closed = (async () => {
        let each = await watch.closes(STOP_MS);
        let open = each.filter((w) => w.closed === null);
        if (open.length) {
          const { unended, lagging, listed } = stopVerdict(open, running, await lives(page));
          if (unended.length) await fail(each, open, STOP_MS, `, and the page did not end, or the browser did not end the context of, ${JSON.stringify(unended)}`);
          if (lagging.length) {
            console.log(`${lagging.length} worker(s) of the page, terminated and their contexts ended, are still listed ${STOP_MS / 1000} s after ${what}: ${lagging.map((w) => w.url).join(', ')}; counted closed\n${await watch.report(lagging.map((w) => w.id))}`);
          }
          each = each.filter((w) => !lagging.includes(w));
          open = listed;
          if (open.length) {
            // Workers the page did not start (threads, the read-ahead helper) end with their
            // parents, and those whose end the browser did not confirm: a longer limit.
            console.log(`${open.length} worker(s) still listed ${STOP_MS / 1000} s after ${what}: ${open.map((w) => w.url).join(', ')}`);
            const later = await watch.closes(Math.max(0, LISTED_MS - (performance.now() - from)));
            each = each.map((w) => (w.closed === null ? later.find((x) => x.id === w.id) : w));
            open = each.filter((w) => w.closed === null);
            if (open.length) await fail(each, open, LISTED_MS, ' (the page ended and terminated its workers)');
          }
        }
        const last = Math.max(from, ...each.map((w) => w.closed));
        console.log(`the workers had closed ${Math.round(last - from)} ms after the test heard of ${what}`);
        return last;
      })();
      // Awaited by the caller after a few checks: a late rejection must not count as unhandled meanwhile.
      closed.catch(() => {});
      return closed;
    },
  };
}

test('with one worker (?workers=1) the progress line gives bytes read, throughput and time left; Cancel stops the read and its worker', async () => {
  const total = bytesUnder(BIG);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${server.url}?workers=1&${STOP_WAIT}`);
    assert.ok((await engineThreads(page)) > 1, 'the isolated page runs the threaded engine');
    const watch = await watchStop(page);
    const seen = await whileReading(page, true);
    const closed = watch.closedWithin('the Cancel');
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
    console.log(`cancelled after ${seen.done} bytes`);
    await closed;
    // The busy worker saw its stop flag: it left its wasm call (the read or the parse of what it
    // read learnt of the stop), stopped its threads and said so, and was not left to the page's
    // forced end.
    const ends = await endings(page);
    assert.deepEqual({ stopped: ends.stopped, forced: ends.forced, told: ends.asked + ends.refused }, { stopped: 1, forced: 0, told: 1 });
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
    const watch = await watchStop(page);
    // The second pick follows as soon as the first job is being read.
    await whileReading(page, false);
    const closed = watch.closedWithin('the new drop');
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
    await page.goto(`${server.url}?${STOP_WAIT}`);
    await engineThreads(page);
    // As many readers as cores, at most one per rank (the big job has two).
    const readers = Math.min(2, await page.evaluate(() => navigator.hardwareConcurrency));
    await whileReading(page, false);
    // The readers are running now (started for the drop, or before it while the page was idle:
    // www/worker-pool.js), beside the page's worker and its threads. A reader is known by the
    // engine its URL asks for.
    const workers = page.workers();
    const reading = workers.filter((w) => READER_URL.test(w.url()));
    assert.ok(reading.length >= readers, `${reading.length} readers while the pool reads: ${workers.map((w) => w.url()).join(', ')}`);
    const watch = await watchStop(page);
    const seen = await page.evaluate(() => {
      const phase = document.querySelector('[data-testid="ascend-phase"]');
      const info = { text: phase.textContent, done: Number(phase.dataset.done) };
      document.querySelector('[data-testid="cancel"]').click();
      return info;
    });
    assert.ok(seen.done > 0 && seen.done < total, `part of the job read: ${seen.done} of ${total}`);
    const closed = watch.closedWithin('the Cancel');
    assert.match(seen.text, new RegExp(`^Reading: [\\d.]+ [KMG]iB of [\\d.]+ [KMG]iB \\(2 ranks, ${readers} workers?\\) — `));
    assert.equal(await page.getAttribute('[data-testid="status"]', 'data-state'), 'cancelled');
    await closed;
    // Every reader and the page's worker saw the stop flag and said so before they were ended;
    // a reader was reading then, and left its call on the flag (the page's worker, idle, and a
    // reader that had not started may have had no call under way).
    const ends = await endings(page);
    assert.equal(ends.forced, 0);
    assert.ok(ends.stopped >= readers + 1, `${ends.stopped} workers stopped`);
    assert.ok(ends.asked + ends.refused >= 1, `a reader's call learnt of the stop: ${JSON.stringify(ends)}`);
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

test('a Cancel while each reader’s share is read by one reader after another ends the readers reading and those started for the next ranks', async () => {
  const ranks = [0, 1, 2, 3, 4, 5].map((r) => rankBytes(RUNS, r));
  const total = ranks.reduce((a, b) => a + b, 0);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${server.url}?workers=2&readerBytes=1&${STOP_WAIT}`);
    await engineThreads(page);
    await page.setInputFiles('input[data-testid="folder-input"]', RUNS);
    // More read than the two largest ranks: a reader is past its first run, and the readers of
    // its next run, and of the other reader's, have started.
    const [first, second] = [...ranks].sort((a, b) => b - a);
    await page.waitForFunction(
      (bytes) => Number(document.querySelector('[data-testid="ascend-phase"]')?.dataset.done || 0) > bytes,
      first + second,
      { timeout: 120000, polling: 5 },
    );
    const readers = page.workers().filter((w) => READER_URL.test(w.url()));
    assert.ok(readers.length >= 3, `readers of the second runs and of the next: ${readers.length} (${page.workers().map((w) => w.url()).join(', ')})`);
    const watch = await watchStop(page);
    // Workers the browser starts from here on (the page's fresh worker after the Cancel, readers).
    const spawned = [];
    const onWorker = (w) => spawned.push({ url: w.url(), at: Date.now() });
    page.on('worker', onWorker);
    const at = Date.now();
    const done = await page.evaluate(() => {
      const done = Number(document.querySelector('[data-testid="ascend-phase"]').dataset.done);
      document.querySelector('[data-testid="cancel"]').click();
      return done;
    });
    assert.ok(done < total, `part of the job read: ${done} of ${total}`);
    const closed = watch.closedWithin('the Cancel');
    assert.equal(await page.getAttribute('[data-testid="status"]', 'data-state'), 'cancelled');
    await closed;
    assert.equal((await endings(page)).forced, 0);
    // No reader started for the cancelled job's later runs: none in the second after the Cancel
    // (the readers for the next drop start 1.5 s after it, www/worker-pool.js `REFILL_MS`).
    await page.waitForTimeout(Math.max(0, at + 1000 - Date.now()));
    page.off('worker', onWorker);
    const readersAfter = spawned.filter((w) => w.at < at + 1000 && READER_URL.test(w.url));
    assert.deepEqual(readersAfter, [], 'readers started in the second after the Cancel');
    assert.equal(await page.textContent('#error-list'), '');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

/** The run folder of rank `rank` of a generated job (the one with `profiler_info_RANK.json`). */
function runFolder(dir, rank) {
  const info = filesNamed(dir, `profiler_info_${rank}.json`);
  assert.equal(info.length, 1, `one run folder of rank ${rank} under ${dir}`);
  return path.dirname(info[0].path);
}

/**
 * Rank `rank`'s bytes up to the end of its memory_record.csv, in reading order (trace_view.json,
 * operator_memory.csv, memory_record.csv: src/profiler/plan.rs).
 */
function upToRecords(dir, rank) {
  const [record] = filesNamed(runFolder(dir, rank), 'memory_record.csv');
  const folder = path.dirname(record.path);
  const size = (name) => statSync(path.join(folder, name)).size;
  return size('trace_view.json') + size('operator_memory.csv') + record.size;
}

/** All the bytes the analysis reads of rank `rank` (the four files of its plan). */
function rankBytes(dir, rank) {
  const [module] = filesNamed(runFolder(dir, rank), 'npu_module_mem.csv');
  return upToRecords(dir, rank) + module.size;
}

/**
 * Picks `dir` and presses Cancel in the same turn of the page's event loop in which the progress
 * line first reports at least `bytes` read. The progress comes right after a read returns, so with
 * `bytes` at the end of a file read whole the engine has just started to parse it.
 */
async function cancelAt(page, dir, bytes) {
  await page.setInputFiles('input[data-testid="folder-input"]', dir);
  const seen = await page.waitForFunction(
    (bytes) => {
      const done = Number(document.querySelector('[data-testid="ascend-phase"]')?.dataset.done || 0);
      if (done < bytes) return false;
      document.querySelector('[data-testid="cancel"]').click();
      return done;
    },
    bytes,
    { timeout: 240000, polling: 5 },
  );
  return seen.jsonValue();
}

test('with ?workers=1&readSize=256, a Cancel while a file read whole is parsed stops its worker on its word', async () => {
  const total = bytesUnder(ROWS);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${server.url}?workers=1&readSize=256&${STOP_WAIT}`);
    assert.ok((await engineThreads(page)) > 1, 'the isolated page runs the threaded engine');
    const watch = await watchStop(page);
    // The one worker reads the ranks one after the other: stop as rank 0's memory_record.csv
    // (one read) has been read and its rows are being parsed.
    const first = upToRecords(ROWS, 0);
    const done = await cancelAt(page, ROWS, first);
    const closed = watch.closedWithin('the Cancel');
    assert.ok(done >= first && done < total, `stopped after ${done} of ${total} bytes`);
    assert.equal(await page.getAttribute('[data-testid="status"]', 'data-state'), 'cancelled');
    await closed;
    // Mid-parse, the worker saw its stop flag within a MiB of rows (its parse asked: had it read
    // on to the rank's next file first, a refused read would have told it) and said so; it was
    // not left to the page's forced end.
    assert.deepEqual(await endings(page), { stopped: 1, forced: 0, asked: 1, refused: 0 });
    assert.ok((await engineThreads(page)) > 1, 'a fresh engine');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('with the pool and ?readSize=256, a Cancel while the readers parse files read whole stops every reader on its word', async () => {
  const total = bytesUnder(ROWS);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${server.url}?readSize=256&${STOP_WAIT}`);
    await engineThreads(page);
    const readers = Math.min(2, await page.evaluate(() => navigator.hardwareConcurrency));
    // Each reader reads one rank, the two at once; the page's count is the sum of what each
    // reader last reported. Stop once rank 0's memory_record.csv is read (its rows are then being
    // parsed), rank 1 long read whole by the other reader.
    const both = upToRecords(ROWS, 0) + rankBytes(ROWS, 1);
    const done = await cancelAt(page, ROWS, both);
    assert.ok(done >= both && done < total, `stopped after ${done} of ${total} bytes`);
    assert.equal(await page.getAttribute('[data-testid="status"]', 'data-state'), 'cancelled');
    // Every reader and the page's worker ended, on its word or by force (the page's marks).
    await page.waitForFunction(
      (n) => performance.getEntriesByName('memlens:worker-stopped').length + performance.getEntriesByName('memlens:worker-forced').length >= n,
      readers + 1,
      { timeout: 60000 },
    );
    const ends = await endings(page);
    assert.equal(ends.forced, 0, `${ends.forced} workers ended by force`);
    assert.ok(ends.stopped >= readers + 1, `${ends.stopped} workers stopped`);
    // Rank 0's reader was parsing: its parse's question told it (rank 1's reader may be idle).
    assert.ok(ends.asked >= 1, `a parse asked: ${JSON.stringify(ends)}`);
    // The next drop is read by a fresh pool.
    await page.setInputFiles('input[data-testid="folder-input"]', TEXT);
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
    assert.equal(await page.textContent('#error-list'), '');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

/**
 * Picks `dir` on a page at `url`, waits until `cancelled()` (run in the page: it presses Cancel
 * in the same turn of the page's event loop in which what it waits for holds, and returns it)
 * returns a value, and checks that the page's worker, busy in the engine then, saw its stop flag
 * and said so (not ended by force), and that a fresh engine serves the next drop. Returns that
 * value.
 */
async function cancelWhen(url, dir, cancelled) {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(url);
    assert.ok((await engineThreads(page)) > 1, 'the isolated page runs the threaded engine');
    // Every worker of the page now (the engine's, and its threads) is watched from before the
    // drop, and must have closed STOP_MS after the Cancel (not after the drop: the read and the
    // parse before the Cancel take their time).
    const watch = await watchStop(page);
    await page.setInputFiles('input[data-testid="folder-input"]', dir);
    const seen = await page.waitForFunction(cancelled, null, { timeout: 240000, polling: 5 });
    const closed = watch.closedWithin('the Cancel');
    const info = await seen.jsonValue();
    assert.equal(await page.getAttribute('[data-testid="status"]', 'data-state'), 'cancelled');
    await closed;
    // Its files all read, the worker learnt of the stop by its parse's question, not by a read.
    assert.deepEqual(await endings(page), { stopped: 1, forced: 0, asked: 1, refused: 0 });
    assert.ok((await engineThreads(page)) > 1, 'a fresh engine');
    await page.setInputFiles('input[data-testid="folder-input"]', TEXT);
    assert.equal(await settled(page, 120000), 'ready');
    assert.deepEqual(b.consoleErrors, []);
    return info;
  } finally {
    await b.close();
  }
}

// `?workers=1`: the SOMAS and snapshot tabs are read by the page's worker alone, and no idle pool
// reader waits beside it (Cancel ends the workers of the load, which the test watches close).
test('a Cancel while a large SOMAS plan is parsed (both files read) stops the worker on its word', async () => {
  const label = await cancelWhen(`${server.url}?workers=1&${STOP_WAIT}`, PLAN, () => {
    const l = document.querySelector('[data-testid="somas"] .progress-label');
    if (!l || l.textContent !== 'parsing') return false;
    document.querySelector('[data-testid="cancel"]').click();
    return l.textContent;
  });
  assert.equal(label, 'parsing');
});

test('with ?workers=1&readSize=256, a Cancel while a large snapshot read whole is parsed stops the worker on its word', async () => {
  const label = await cancelWhen(`${server.url}?workers=1&readSize=256&${STOP_WAIT}`, SNAP, () => {
    const snap = document.querySelector('[data-testid="snapshot"]');
    const bar = document.getElementById('progress-bar');
    const text = document.getElementById('progress-label').textContent;
    // One read covers the file: the snapshot's own progress line is full as soon as it returned,
    // while the pickle is parsed (the line names the file: not the drop's earlier steps).
    if (!snap || snap.dataset.state !== 'loading' || !/^Reading \S*big\.pickle: /.test(text) || parseFloat(bar.style.width) < 100) return false;
    document.querySelector('[data-testid="cancel"]').click();
    return text;
  });
  assert.match(label, /^Reading \S*big\.pickle: ([\d.]+ [KMG]iB) of \1$/, 'the pickle was read whole before the Cancel');
});
