// Determinism across engines: the same drop gives byte-identical CSV and JSON output from the
// native CLI (with 1 and with 2 rayon threads), the threaded wasm engine, the single-threaded wasm
// engine, and the offline file. The page's downloads are compared byte for byte with the files
// `--out` writes and with what `--json` prints:
//
// * SOMAS: a generated v2.4 dump of 25,000 nodes (~14 MB, so it is parsed in several chunks) with
//   its task-info and three injected conflicts, with node, tensor and address-range queries
//   restored from the URL hash — the export zip against `memlens somas --out`, summary.json
//   against `memlens somas --json`;
// * torch_npu: a generated job of 2 roles × 2 ranks (5 MiB traces, read in batches) dropped with
//   the real two-rank sample — every CSV of the export against `memlens profiler --out`, summary.json
//   against `memlens profiler --json` — read by the page's default pool of readers, by one worker,
//   by three readers, and by two at a time with a fresh reader for every rank.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, mkdirSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import {
  root, CLI, openBrowser, startServer, engineThreads, settled, dropFiles, filesUnder, foreignRequests, unzip, readTree,
} from './harness.mjs';

const ASCEND_FILES = ['memory_events.csv', 'rank_summary.csv', 'peak_attribution.csv', 'step_peaks.csv', 'records_aside.csv', 'summary.json'];

let isolated;
let plain;
let tmp;
let somas; // { files, hash, json, out }
let ascend; // { files, out: { name: Buffer } }

/** The CLI in `tmp` (so paths in its output are the page's relative paths) with `threads` threads. */
function run(args, threads) {
  return execFileSync(CLI, args, { cwd: tmp, env: { ...process.env, RAYON_NUM_THREADS: String(threads) }, maxBuffer: 1 << 28 });
}

/** Runs `args` with 1 and 2 threads, writing `--out` to fresh folders; asserts both agree. */
function native(args) {
  const runs = [1, 2].map((threads) => {
    const out = mkdtempSync(path.join(tmp, `out${threads}-`));
    const stdout = run([...args, '--out', out], threads);
    return { stdout, files: readTree(out) };
  });
  assert.ok(runs[0].stdout.equals(runs[1].stdout), 'native --json differs between 1 and 2 threads');
  assert.deepEqual(Object.keys(runs[0].files).sort(), Object.keys(runs[1].files).sort());
  for (const [p, b] of Object.entries(runs[0].files)) assert.ok(b.equals(runs[1].files[p]), `native ${p} differs between 1 and 2 threads`);
  return runs[1];
}

before(async () => {
  isolated = await startServer({ isolate: true });
  plain = await startServer({ isolate: false });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-determinism-'));

  mkdirSync(path.join(tmp, 'gen'));
  const dump = 'gen/Ascend_somas_tensor_offset_1.ir';
  const task = 'gen/task_info_graph_1.ir';
  run(['generate', 'somas', '--flavor', 'v2.4', '--nodes', '25000', '--seed', '5', '--inject-conflicts', '3', '--out', dump, '--task-info-out', task], 2);
  const probe = JSON.parse(run(['somas', dump, '--task-info', task, '--json'], 2));
  const lo = `0x${probe.base_address.toString(16)}`;
  const hi = `0x${(probe.base_address + Math.floor(probe.reused_bytes / 4)).toString(16)}`;
  const conflict = probe.conflicts[0];
  assert.ok(conflict, 'the generated dump has conflicts');
  const queries = { node: 777, tensor: conflict[0], range: `${lo}-${hi}` };
  const r = native(['somas', dump, '--task-info', task, '--json', '--node', String(queries.node), '--tensor', String(queries.tensor), '--address-range', queries.range]);
  const keys = Object.keys(JSON.parse(r.stdout));
  for (const k of ['node_query', 'tensor_query', 'address_range_query']) assert.ok(keys.includes(k), `--json has ${k}`);
  somas = {
    files: filesUnder(path.join(tmp, 'gen')),
    hash: `#s.node=${queries.node}&s.tensor=${queries.tensor}&s.range=${encodeURIComponent(queries.range)}`,
    json: r.stdout,
    out: r.files,
  };

  run(['generate', 'profiler', '--out', 'job', '--roles', '2', '--ranks', '2', '--trace-mb', '5', '--rows', '3000', '--steps', '2', '--seed', '9'], 2);
  cpSync(path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text'), path.join(tmp, 'text'), { recursive: true });
  const a = native(['profiler', '--json', 'job', 'text']);
  ascend = {
    files: [...filesUnder(path.join(tmp, 'job')), ...filesUnder(path.join(tmp, 'text'))],
    out: { ...a.files, 'summary.json': a.stdout },
  };
  assert.deepEqual(Object.keys(a.files).sort(), ASCEND_FILES.filter((n) => n.endsWith('.csv')).sort());
  run(['profiler', 'job', 'text', '--summary', 'job.memlens.json', '--json'], 2);
  ascend.summaryFile = readFileSync(path.join(tmp, 'job.memlens.json'));
});

after(async () => {
  await isolated.close();
  await plain.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The page's three engines: where to open it (servers start in `before`) and the threads its engine must report. */
const ENGINES = [
  { name: 'threaded wasm', server: () => isolated, threads: (n) => n >= 2 },
  { name: 'single-threaded wasm', server: () => plain, threads: (n) => n === 1 },
  { name: 'offline file', server: () => null, threads: (n) => n === 1 },
];

/** `{url, origin}` of an engine's page. */
function where(engine) {
  const s = engine.server();
  return s ? { url: s.url, origin: s.origin } : { url: pathToFileURL(path.join(root, 'dist', 'memlens.html')).href, origin: 'file://' };
}

/**
 * Console errors of the page (coi-serviceworker stays quiet on the plain server: the harness tells
 * it not to register where the test browser blocks service workers).
 */
function pageErrors(b) {
  return b.consoleErrors;
}

async function downloadOf(page, selector) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync(await dl.path());
}

for (const engine of ENGINES) {
  test(`SOMAS: the ${engine.name} exports what the CLI writes, byte for byte`, async () => {
    const b = await openBrowser();
    try {
      const page = await b.page();
      const { url, origin } = where(engine);
      await page.goto(url + somas.hash);
      const threads = await engineThreads(page);
      assert.ok(engine.threads(threads), `${engine.name}: ${threads} threads`);
      await dropFiles(page, somas.files);
      await page.waitForFunction(() => ['ready', 'error', 'empty'].includes(document.querySelector('[data-testid="somas"]')?.dataset.state), null, { timeout: 120000 });
      assert.equal(await page.getAttribute('[data-testid="somas"]', 'data-state'), 'ready');
      // The selection restored from the hash becomes the export's queries.
      await page.waitForFunction(() => /--node 777 --tensor \d+ --address-range 0x/.test(document.querySelector('#somas-export p.muted')?.textContent || ''), null, { timeout: 30000 });
      const zip = unzip(await downloadOf(page, '[data-testid="somas-export-zip"]'));
      assert.deepEqual(Object.keys(zip).sort(), Object.keys(somas.out).sort());
      assert.ok(Object.keys(zip).some((p) => p.startsWith('CheckTensor_ERROR_')), 'the conflict files are part of the set');
      for (const [p, bytes] of Object.entries(somas.out)) assert.ok(bytes.equals(zip[p]), `${engine.name}: ${p} differs from the CLI's`);
      const summary = await downloadOf(page, '[data-testid="somas-export-summary"]');
      assert.ok(summary.equals(somas.json), `${engine.name}: summary.json differs from memlens somas --json`);
      if (origin !== 'file://') assert.deepEqual(foreignRequests(b.requests, origin), []);
      assert.deepEqual(pageErrors(b), []);
    } finally {
      await b.close();
    }
  });

  test(`torch_npu: the ${engine.name} exports what the CLI writes, byte for byte`, async () => {
    const b = await openBrowser();
    try {
      const page = await b.page();
      const { url, origin } = where(engine);
      await page.goto(url);
      assert.ok(engine.threads(await engineThreads(page)));
      await dropFiles(page, ascend.files);
      assert.equal(await settled(page, 120000), 'ready');
      await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
      // By default a job of several ranks is read by a pool: as many readers as cores, at most one per rank.
      const cores = await page.evaluate(() => navigator.hardwareConcurrency);
      assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-readers'), String(Math.min(cores, 6)));
      for (const name of ASCEND_FILES) {
        const id = name.replace(/[._]/g, '-').replace(/-csv$/, '');
        const bytes = await downloadOf(page, `[data-testid="export-${id}"]`);
        assert.ok(bytes.equals(ascend.out[name]), `${engine.name}: ${name} differs from the CLI's`);
      }
      if (origin !== 'file://') assert.deepEqual(foreignRequests(b.requests, origin), []);
      assert.deepEqual(pageErrors(b), []);
    } finally {
      await b.close();
    }
  });
}

// The number of readers makes no difference: with one worker (`?workers=1`, the whole job read by
// the page's worker) and with three readers, in both wasm engines, every job-wide export is what
// the CLI writes, and the pooled job's summary file is what `memlens profiler --summary` writes.
for (const engine of ENGINES.slice(0, 2)) {
  for (const workers of [1, 3]) {
    test(`torch_npu with ${workers} reader(s) of the ${engine.name}: the exports are the CLI's, byte for byte`, async () => {
      const b = await openBrowser();
      try {
        const page = await b.page();
        const { url, origin } = where(engine);
        await page.goto(`${url}?workers=${workers}`);
        assert.ok(engine.threads(await engineThreads(page)));
        await dropFiles(page, ascend.files);
        assert.equal(await settled(page, 180000), 'ready');
        await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 180000 });
        assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-readers'), workers === 1 ? null : String(workers));
        for (const name of ASCEND_FILES) {
          const id = name.replace(/[._]/g, '-').replace(/-csv$/, '');
          const bytes = await downloadOf(page, `[data-testid="export-${id}"]`);
          assert.ok(bytes.equals(ascend.out[name]), `${engine.name}, ${workers} reader(s): ${name} differs from the CLI's`);
        }
        if (workers > 1) {
          // The pooled tab read the job once for all its exports, and a second click reads nothing.
          assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-export-reads'), '1');
          const again = await downloadOf(page, '[data-testid="export-memory-events"]');
          assert.ok(again.equals(ascend.out['memory_events.csv']), `${engine.name}, ${workers} reader(s): a second memory_events.csv differs`);
          assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-export-reads'), '1');
          const summary = await downloadOf(page, '[data-testid="export-job-summary"]');
          assert.ok(summary.equals(ascend.summaryFile), `${engine.name}, ${workers} reader(s): job.memlens.json differs from memlens profiler --summary`);
        } else {
          assert.equal(await page.$('[data-testid="export-job-summary"]'), null);
        }
        if (origin !== 'file://') assert.deepEqual(foreignRequests(b.requests, origin), []);
        assert.deepEqual(pageErrors(b), []);
      } finally {
        await b.close();
      }
    });
  }
}

// A reader that has read its `readerBytes` ends and a fresh one reads the rest of its share
// (www/worker-pool.js): with a limit under every rank's size, each rank is read by a reader of its
// own, two at a time, and the exports and the summary file are still the CLI's, byte for byte.
test('torch_npu with a fresh reader for every rank: the exports are the CLI\'s, byte for byte', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${plain.url}?workers=2&readerBytes=0.001`);
    await dropFiles(page, ascend.files);
    assert.equal(await settled(page, 180000), 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 180000 });
    const ranks = JSON.parse(ascend.out['summary.json']).ranks.length;
    assert.equal(ranks, 6, 'the job: 2 roles × 2 generated ranks and the sample\'s 2');
    assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-readers'), '2');
    assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-reader-runs'), String(ranks));
    for (const name of ASCEND_FILES) {
      const id = name.replace(/[._]/g, '-').replace(/-csv$/, '');
      const bytes = await downloadOf(page, `[data-testid="export-${id}"]`);
      assert.ok(bytes.equals(ascend.out[name]), `a reader per rank: ${name} differs from the CLI's`);
    }
    const summary = await downloadOf(page, '[data-testid="export-job-summary"]');
    assert.ok(summary.equals(ascend.summaryFile), 'a reader per rank: job.memlens.json differs from memlens profiler --summary');
    assert.deepEqual(foreignRequests(b.requests, plain.origin), []);
    assert.deepEqual(pageErrors(b), []);
  } finally {
    await b.close();
  }
});
