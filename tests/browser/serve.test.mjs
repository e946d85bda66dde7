// The page served by `memlens serve`, used as a user on a laptop uses it through a port forward:
// the engine badge says the native engine answers, the drop zone lists the served folders, a job
// picked there opens in the torch_npu views with the rank rows of `memlens profiler --json`, and
// its memory_events.csv download is byte for byte what `memlens profiler --out` writes. A request
// for a path outside the served root is refused with 403; the page's CSP (the header `serve` sends)
// still forbids any other origin, and no request leaves the page's origin.
// A memory snapshot picked there shows the figures of `memlens snapshot --json`, and its
// exports are byte for byte what `memlens snapshot --out` writes. A folder holding a job summary
// and the run folders it summarises opens the Job summary tab on the native engine, each rank
// replaced by its folder's figures, which agree with the summary and with the CLI's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync, readFileSync, mkdirSync, copyFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, SHOTS, openBrowser, foreignRequests, settled, unzip, readTree } from './harness.mjs';
import { CSP } from '../../scripts/serve.mjs';

// The real two-rank sample, served as the folder `text`; a SOMAS dump with its task-info file,
// served as the folder `dump`.
const TEXT = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
const SOMAS = path.join(root, 'fixtures', 'somas');
const DUMP = ['Ascend_somas_tensor_offset_1.ir', 'task_info_graph_1.ir'];

let server;
let url;
let tmp;

/** Starts `memlens serve ROOTS…` on a free port; resolves to its { url, origin, kill }. */
async function startServe(...roots) {
  const proc = spawn(CLI, ['serve', ...roots, '--port', '0', '--json', '--www', path.join(root, 'www')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`memlens serve exited with ${code}`)));
  });
  const served = JSON.parse(line).url;
  return { url: served, origin: new URL(served).origin, kill: () => proc.kill() };
}

before(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-serve-page-'));
  mkdirSync(path.join(tmp, 'dump'));
  for (const f of DUMP) copyFileSync(path.join(SOMAS, f), path.join(tmp, 'dump', f));
  server = await startServe(TEXT, path.join(tmp, 'dump'));
  url = server.url;
});
after(() => {
  server.kill();
  rmSync(tmp, { recursive: true, force: true });
});

/** Opens the served page (its first load must load: no retry). */
function openServed(page, at = url) {
  return page.goto(at, { timeout: 30000 });
}

/**
 * Opens the served folder `entry` from the page's list and waits for the view `[data-testid=view]`
 * to settle; returns its state (ready, error or empty).
 */
async function openServedEntry(page, entry, view) {
  await page.waitForFunction(() => document.querySelector('[data-testid="served"]')?.dataset.state === 'ready', null, { timeout: 30000 });
  await page.click(`[data-testid="served-entry"][data-path="${entry}"] [data-testid="served-open"]`);
  await page.waitForFunction((id) => ['ready', 'error', 'empty'].includes(document.querySelector(`[data-testid="${id}"]`)?.dataset.state), view, { timeout: 120000 });
  return page.getAttribute(`[data-testid="${view}"]`, 'data-state');
}

function cliJson(...paths) {
  return JSON.parse(execFileSync(CLI, ['profiler', '--json', ...paths], { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

/** The rank rows the CLI's JSON implies (as the torch_npu page's hooks carry them). */
function expectedRows(json) {
  return json.ranks.map((r) => ({ role: r.role, rank: String(r.rank), rows: String(r.rows), peak: String(r.peak_allocated_bytes) }));
}

test('a job picked from the served folders: native engine, the CLI\'s rank rows and export bytes', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    const response = await openServed(page);
    assert.equal(response.headers()['content-security-policy'], CSP);
    assert.equal(response.headers()['cross-origin-embedder-policy'], 'require-corp');
    await page.waitForFunction(() => document.querySelector('[data-testid="engine"]').dataset.build === 'native', null, { timeout: 30000 });
    await page.waitForFunction(() => document.querySelector('[data-testid="served"]')?.dataset.state === 'ready');
    const roots = await page.$$eval('[data-testid="served-entry"]', (es) => es.map((e) => [e.dataset.path, e.dataset.kind]));
    assert.deepEqual(roots, [['text', 'dir'], ['dump', 'dir']]);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'serve-served-list.png') });

    assert.notEqual(await openServedEntry(page, 'text', 'ascend'), 'error');
    assert.equal(await settled(page, 120000), 'ready');
    const rows = await page.$$eval('[data-testid="rank-row"]', (trs) =>
      trs.map((t) => ({ role: t.dataset.role, rank: t.dataset.rank, rows: t.dataset.rows, peak: t.dataset.peakAllocatedBytes })),
    );
    const json = cliJson(TEXT);
    assert.ok(json.ranks.length >= 2);
    assert.deepEqual(rows, expectedRows(json));
    await page.screenshot({ path: path.join(SHOTS, 'serve-job.png') });

    const out = mkdtempSync(path.join(tmp, 'out-'));
    execFileSync(CLI, ['profiler', '--out', out, TEXT], { stdio: 'ignore' });
    await page.locator('#ascend-export').scrollIntoViewIfNeeded();
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-memory-events"]')]);
    assert.equal(dl.suggestedFilename(), 'memory_events.csv');
    const got = readFileSync(await dl.path());
    const want = readFileSync(path.join(out, 'memory_events.csv'));
    assert.ok(want.length > 1000);
    assert.ok(got.equals(want), 'the page\'s memory_events.csv equals memlens profiler --out');

    assert.deepEqual(foreignRequests(b.requests, new URL(url).origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('paths outside the served root are refused, and other origins stay forbidden', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await openServed(page);
    const result = await page.evaluate(async () => {
      const status = async (p, init) => {
        const r = await fetch(p, init);
        return [r.status, await r.text()];
      };
      const rpc = (call) => status('api/rpc', { method: 'POST', body: JSON.stringify(call) });
      const { session } = await (await fetch('api/rpc', { method: 'POST', body: '{"call":"session.new"}' })).json();
      let outside = null;
      try {
        await fetch('https://example.com/');
      } catch (e) {
        outside = String(e);
      }
      return {
        up: await status('api/list?path=text/..'),
        abs: await status(`api/list?path=${encodeURIComponent('/etc')}`),
        classify: await rpc({ call: 'session.classify', session, files: ['/etc/passwd'] }),
        dotdot: await rpc({ call: 'session.classify', session, files: ['text/../../../../etc'] }),
        outside,
      };
    });
    for (const k of ['up', 'abs', 'classify', 'dotdot']) {
      assert.equal(result[k][0], 403, `${k}: ${result[k][1]}`);
      assert.match(result[k][1], /served folder/, k);
    }
    assert.match(result.outside, /TypeError/);
    assert.deepEqual(foreignRequests(b.requests, new URL(url).origin), []);
  } finally {
    await b.close();
  }
});

test('a SOMAS dump picked from the served folders: the CLI\'s figures and export files', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await openServed(page);
    assert.equal(await openServedEntry(page, 'dump', 'somas'), 'ready');
    // Run where the page's served paths name the same files, so names inside the files match.
    const rel = DUMP.map((f) => `dump/${f}`);
    const j = JSON.parse(execFileSync(CLI, ['somas', rel[0], '--task-info', rel[1], '--json'], { cwd: tmp, encoding: 'utf8' }));
    const metrics = Object.fromEntries(await page.$$eval('[data-metric^="somas-"]', (els) => els.map((e) => [e.dataset.metric, e.dataset.value])));
    assert.equal(metrics['somas-tensors'], String(j.tensors));
    assert.equal(metrics['somas-nodes'], String(j.nodes));
    assert.equal(metrics['somas-reused-bytes'], String(j.reused_bytes));
    assert.equal(metrics['somas-conflicts'], String(j.conflicts.length));
    await page.screenshot({ path: path.join(SHOTS, 'serve-somas.png') });

    // The whole set without the selection's queries: what `--out` writes without query flags.
    await page.uncheck('[data-testid="somas-export-queries"]');
    await page.waitForFunction(() => /as memlens somas FILE --out DIR/.test(document.querySelector('#somas-export p.muted')?.textContent));
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="somas-export-zip"]')]);
    const zip = unzip(readFileSync(await download.path()));
    const out = path.join(tmp, 'somas-out');
    execFileSync(CLI, ['somas', rel[0], '--task-info', rel[1], '--out', out], { cwd: tmp, stdio: 'ignore' });
    const disk = readTree(out);
    assert.deepEqual(Object.keys(zip).sort(), Object.keys(disk).sort());
    for (const [p, bytes] of Object.entries(disk)) assert.ok(bytes.equals(zip[p]), `${p} differs from memlens somas --out`);
    assert.deepEqual(foreignRequests(b.requests, new URL(url).origin), []);
  } finally {
    await b.close();
  }
});

test('the served list at 1440×900 light and 1024×700 dark, browsing into a folder and back', async () => {
  for (const [colorScheme, viewport] of [
    ['light', { width: 1440, height: 900 }],
    ['dark', { width: 1024, height: 700 }],
  ]) {
    const b = await openBrowser({ colorScheme, viewport });
    try {
      const page = await b.page();
      await openServed(page);
      await page.waitForFunction(() => document.querySelector('[data-testid="served"]')?.dataset.state === 'ready', null, { timeout: 30000 });
      // Drops and examples are hidden: the engine reads files where it runs.
      assert.equal(await page.isVisible('[data-testid="folder-input"]'), false);
      await page.click('[data-testid="served-entry"][data-path="text"] button.link');
      await page.waitForFunction(() => document.querySelector('[data-testid="served"]').dataset.path === 'text');
      const inside = await page.$$eval('[data-testid="served-entry"]', (es) => es.map((e) => e.dataset.path));
      assert.ok(inside.length > 0 && inside.every((p) => p.startsWith('text/')), inside.join(' '));
      await page.screenshot({ path: path.join(SHOTS, `serve-list-${colorScheme}-${viewport.width}.png`) });
      await page.click('[data-testid="served-crumb"] >> nth=0');
      await page.waitForFunction(() => document.querySelector('[data-testid="served"]').dataset.path === '');
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  }
});

test('a memory snapshot picked from the served folders: the CLI\'s figures and export bytes', async () => {
  // Its own server: the snapshot's folder is the only root.
  const dir = path.join(tmp, 'snap');
  mkdirSync(dir);
  copyFileSync(path.join(root, 'fixtures', 'snapshots', 'cs336_tiny_mem_snapshot.pickle'), path.join(dir, 'tiny.pickle'));
  const own = await startServe(dir);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await openServed(page, own.url);
    assert.equal(await openServedEntry(page, 'snap', 'snapshot'), 'ready', await page.textContent('[data-testid="snapshot"]'));
    assert.equal(await page.getAttribute('[data-testid="engine"]', 'data-build'), 'native');
    // Run where the page's served path names the same file, so names inside the file match.
    const j = JSON.parse(execFileSync(CLI, ['snapshot', 'snap/tiny.pickle', '--json'], { cwd: tmp, encoding: 'utf8' }));
    const d = Object.values(j.devices)[0];
    const metrics = Object.fromEntries(await page.$$eval('[data-metric^="snapshot-"]', (els) => els.map((e) => [e.dataset.metric, e.dataset.value])));
    assert.equal(metrics['snapshot-reserved-bytes'], String(d.reserved_bytes));
    assert.equal(metrics['snapshot-allocated-bytes'], String(d.allocated_bytes));
    assert.equal(metrics['snapshot-peak-bytes'], String(d.peak_allocated_bytes));
    assert.equal(metrics['snapshot-segments'], String(d.segments));
    assert.equal(metrics['snapshot-blocks'], String(d.blocks));
    await page.screenshot({ path: path.join(SHOTS, 'serve-snapshot.png'), fullPage: true });

    const out = path.join(tmp, 'snap-out');
    execFileSync(CLI, ['snapshot', 'snap/tiny.pickle', '--out', out], { cwd: tmp, stdio: 'ignore' });
    const disk = readTree(out);
    assert.ok(Object.keys(disk).length >= 2, Object.keys(disk).join(' '));
    for (const [name, bytes] of Object.entries(disk)) {
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="snapshot-export"] [data-file="${name}"]`)]);
      assert.ok(readFileSync(await dl.path()).equals(bytes), `${name} differs from memlens snapshot --out`);
    }
    assert.deepEqual(b.consoleErrors, []);
    assert.deepEqual(foreignRequests(b.requests, own.origin), []);
  } finally {
    await b.close();
    own.kill();
  }
});

test('a job summary picked with its run folders: the summary tab on the native engine, ranks from the folders', async () => {
  // Its own server: one folder holding the sample's summary and the raw folders it summarises.
  const dir = path.join(tmp, 'sj');
  mkdirSync(dir);
  copyFileSync(path.join(root, 'fixtures', 'summary', 'msinsight-level0.memlens.json'), path.join(dir, 'job.memlens.json'));
  cpSync(TEXT, path.join(dir, 'text'), { recursive: true });
  const own = await startServe(dir);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await openServed(page, own.url);
    assert.equal(await openServedEntry(page, 'sj', 'jobsummary'), 'ready', await page.textContent('[data-testid="jobsummary"]'));
    assert.equal(await page.getAttribute('[data-testid="engine"]', 'data-build'), 'native');
    const cli = cliJson(TEXT);
    const metrics = Object.fromEntries(await page.$$eval('[data-testid="jobsummary"] [data-metric^="ascend-"]', (els) => els.map((e) => [e.dataset.metric, e.dataset.value])));
    assert.equal(metrics['ascend-ranks'], String(cli.totals.ranks));
    assert.equal(metrics['ascend-rows'], String(cli.totals.rows));
    assert.equal(metrics['ascend-peak'], String(cli.totals.peak_allocated_bytes));
    const rows = await page.$$eval('[data-testid="jobsummary"] [data-testid="rank-row"]', (trs) => trs.map((t) => [t.dataset.rank, t.dataset.peakAllocatedBytes, t.dataset.rows]));
    assert.deepEqual(rows, cli.ranks.map((r) => [String(r.rank), String(r.peak_allocated_bytes), String(r.rows)]));
    // Both ranks come from their run folders, and agree with the summary.
    assert.equal(await page.getAttribute('[data-testid="jobsummary-raw"]', 'data-replaced'), '2');
    const outcomes = await page.$$eval('[data-testid="jobsummary-raw"] li', (lis) => lis.map((li) => [li.dataset.outcome, li.dataset.disagreements]));
    assert.deepEqual(outcomes, [['replaced', '0'], ['replaced', '0']]);
    // The torch_npu tab (the folders' full views) comes first; the summary's tab is beside it.
    await page.click('[data-tab="summary"]');
    await page.waitForSelector('[data-testid="jobsummary-rank"][data-state="ready"]');
    await page.screenshot({ path: path.join(SHOTS, 'serve-jobsummary.png') });
    assert.deepEqual(b.consoleErrors, []);
    assert.deepEqual(foreignRequests(b.requests, own.origin), []);
  } finally {
    await b.close();
    own.kill();
  }
});
