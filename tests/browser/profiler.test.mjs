// The torch_npu / MindSpore profiler page against the native CLI on the same files: the real two-rank sample
// (dropped as a folder, and as a zip made here), a generated multi-role job, the db-only export
// (every view, a "db" badge, exports equal to the CLI's, in all three engines),
// the bundled example, and the offline file. Every hook value is compared with `memlens profiler
// --json`; the brushed window's table filter with an independent count from the CLI's
// memory_events.csv; a selected row's stack with the CSV's call_stack of the same allocation
// (found through operator_memory.csv); the exported memory_events.csv byte for byte. Hostile op
// names and call stacks render as text and never run. No request leaves the page's origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, writeFileSync, mkdirSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import {
  root, CLI, SHOTS, openBrowser, startServer, foreignRequests, engineThreads, settled, filesUnder, dropFiles, pngFirstPixel, zipFiles, csvRecords,
} from './harness.mjs';

const SAMPLES = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0');
const TEXT = path.join(SAMPLES, 'text');
const DB = path.join(SAMPLES, 'db');
const EXAMPLE = path.join(root, 'fixtures', 'examples', 'two-rank-job');
const VIEWS = ['overview', 'memory', 'timeline', 'table', 'stack', 'live', 'unreleased', 'export'];

let isolated;
let plain;
let tmp;

before(async () => {
  isolated = await startServer({ isolate: true });
  plain = await startServer({ isolate: false });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-ascend-page-'));
});
after(async () => {
  await isolated.close();
  await plain.close();
  rmSync(tmp, { recursive: true, force: true });
});

// ---- the CLI's answers --------------------------------------------------------------------------

function cliJson(...paths) {
  // Exit status 1 (nothing to analyse, e.g. db-only) still prints the document.
  try {
    return JSON.parse(execFileSync(CLI, ['profiler', '--json', ...paths], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  } catch (err) {
    if (err.stdout) return JSON.parse(err.stdout);
    throw err;
  }
}

function cliOut(...paths) {
  const dir = mkdtempSync(path.join(tmp, 'out-'));
  try {
    execFileSync(CLI, ['profiler', '--out', dir, ...paths], { stdio: 'ignore' });
  } catch {
    // exit 1 still writes the files
  }
  return dir;
}

/** The hook values the CLI's JSON implies, one record per rank. */
function expectedRows(json) {
  return json.ranks.map((r) => ({
    role: r.role,
    rank: String(r.rank),
    step: r.step === null ? '' : String(r.step),
    rows: String(r.rows),
    peakAllocatedBytes: String(r.peak_allocated_bytes),
    peakReservedBytes: String(r.peak_reserved_bytes),
    stacksDirect: String(r.stacks.direct),
    stacksViaForward: String(r.stacks.via_forward),
    unreleasedRows: String(r.unreleased_rows),
  }));
}

function expectedMetrics(json) {
  return {
    'ascend-ranks': String(json.ranks.length),
    'ascend-rows': String(json.ranks.reduce((a, r) => a + r.rows, 0)),
    'ascend-warnings': String(json.warnings.length),
  };
}

/** memory_events.csv as one object per row, keyed by the header. */
function parseCsv(text) {
  const [head, ...body] = csvRecords(text);
  return body.map((r) => Object.fromEntries(head.map((h, k) => [h, r[k]])));
}

/** "1736405443871.259720" ms text → BigInt ns. */
const msToNs = (t) => {
  const [i, f = ''] = t.split('.');
  return BigInt(i) * 1000000n + BigInt((f + '000000').slice(0, 6));
};

// ---- the page -----------------------------------------------------------------------------------

async function pageHooks(page) {
  const rows = await page.$$eval('[data-testid="rank-row"]', (trs) =>
    trs.map((t) => ({
      role: t.dataset.role,
      rank: t.dataset.rank,
      step: t.dataset.step,
      rows: t.dataset.rows,
      peakAllocatedBytes: t.dataset.peakAllocatedBytes,
      peakReservedBytes: t.dataset.peakReservedBytes,
      stacksDirect: t.dataset.stacksDirect,
      stacksViaForward: t.dataset.stacksViaForward,
      unreleasedRows: t.dataset.unreleasedRows,
    })),
  );
  const metrics = await page.$$eval('[data-metric^="ascend-"]', (ms) =>
    Object.fromEntries(ms.filter((m) => ['ascend-ranks', 'ascend-rows', 'ascend-warnings'].includes(m.dataset.metric)).map((m) => [m.dataset.metric, m.dataset.value])),
  );
  return { rows, metrics };
}

async function ascendReady(page, timeout = 120000) {
  assert.equal(await settled(page, timeout), 'ready');
  await page.waitForFunction(() => ['ready', 'empty'].includes(document.querySelector('[data-testid="ascend"]')?.dataset.state), null, { timeout });
  return page.getAttribute('[data-testid="ascend"]', 'data-state');
}

async function tableSettled(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid="ascend-table"]')?.dataset.state === 'ready');
}

async function compareHooks(page, json) {
  const { rows, metrics } = await pageHooks(page);
  assert.deepEqual(rows, expectedRows(json));
  assert.deepEqual(metrics, expectedMetrics(json));
}

async function dropDir(page, dir) {
  await dropFiles(page, filesUnder(dir));
  return ascendReady(page);
}

async function shootViews(page, suffix) {
  mkdirSync(SHOTS, { recursive: true });
  for (const v of VIEWS) {
    const loc = page.locator(`#ascend-${v}`);
    await loc.scrollIntoViewIfNeeded();
    await page.waitForTimeout(150);
    await loc.screenshot({ path: path.join(SHOTS, `ascend-${v}-${suffix}.png`) });
  }
}

/** Live-set groups shown by the page: [{frame, bytes, count}]. */
async function liveGroups(page, testid) {
  await page.waitForFunction((t) => document.querySelector(`[data-testid="${t}s"]`)?.dataset.state === 'ready', testid);
  const more = page.locator(`[data-testid="${testid}s"] [data-testid="show-all-groups"]`);
  if (await more.count()) await more.click();
  return page.$$eval(`[data-testid="${testid}"]`, (rs) =>
    rs.map((r) => ({ frame: r.querySelector('.group-frame').dataset.frame, bytes: Number(r.dataset.bytes), count: Number(r.dataset.count) })),
  );
}

/** Brushes a window on the timeline and selects the first allocation, so screenshots show them. */
async function selectForShots(page) {
  await page.locator('#ascend-timeline').scrollIntoViewIfNeeded();
  const box = await page.locator('[data-testid="timeline-canvas"]').boundingBox();
  const w = box.width - 86;
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + 72 + w * 0.5, box.y + 60);
  await page.mouse.down();
  await page.mouse.move(box.x + 72 + w * 0.8, box.y + 60, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.check('[data-testid="filter-window"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="ascend-table"]').dataset.windowStartNs);
  await tableSettled(page);
  await page.click('[data-testid="alloc-row"] >> nth=0');
  await page.waitForFunction(() => document.querySelector('[data-testid="ascend-stack"]').dataset.row);
  await page.mouse.move(0, 0);
}

async function exportCsv(page, name) {
  const id = name.replace(/[._]/g, '-').replace(/-csv$/, '');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="export-${id}"]`)]);
  assert.equal(dl.suggestedFilename(), name);
  return readFileSync(await dl.path());
}

// ---- tests --------------------------------------------------------------------------------------

test('real two-rank sample: hooks, peak, brush → table, row → stack, export, light screenshots', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(isolated.url);
    assert.equal(await engineThreads(page), await page.evaluate(() => navigator.hardwareConcurrency));
    assert.equal(await dropDir(page, TEXT), 'ready');
    const json = cliJson(TEXT);
    await compareHooks(page, json);
    // The tab opened by itself; the views show rank 0.
    assert.equal(await page.getAttribute('[role="tab"][aria-selected="true"]', 'data-tab'), 'ascend');
    // At the peak: the page's groups are the CLI's live_at_peak of the selected rank.
    assert.deepEqual(await liveGroups(page, 'live-group'), json.ranks[0].live_at_peak);
    // Unreleased in the whole capture: the CLI's counts.
    const unrel = await liveGroups(page, 'unreleased-group');
    assert.equal(unrel.reduce((a, g) => a + g.count, 0), json.ranks[0].unreleased_rows);
    assert.equal(unrel.reduce((a, g) => a + g.bytes, 0), json.ranks[0].unreleased_bytes);
    await tableSettled(page);
    assert.equal(await page.getAttribute('[data-testid="ascend-table"]', 'data-total'), String(json.ranks[0].rows));

    // Brush a window on the memory chart (shift-drag), check the table against the CSV.
    const outDir = cliOut(TEXT);
    const events = parseCsv(readFileSync(path.join(outDir, 'memory_events.csv'), 'utf8'));
    await page.locator('#ascend-memory').scrollIntoViewIfNeeded();
    const box2 = await page.locator('[data-testid="memory-canvas"]').boundingBox();
    const x0 = box2.x + 72 + (box2.width - 86) * 0.3;
    const x1 = box2.x + 72 + (box2.width - 86) * 0.6;
    await page.keyboard.down('Shift');
    await page.mouse.move(x0, box2.y + 120);
    await page.mouse.down();
    await page.mouse.move(x1, box2.y + 120, { steps: 6 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-table"]').dataset.windowStartNs);
    await tableSettled(page);
    const t = await page.$eval('[data-testid="ascend-table"]', (n) => ({ ...n.dataset }));
    const [ws, we] = [BigInt(t.windowStartNs), BigInt(t.windowEndNs)];
    assert.ok(we > ws);
    const inWindow = events.filter((e) => e.rank_id === '0' && e.start_time_ms !== '' && msToNs(e.start_time_ms) >= ws && msToNs(e.start_time_ms) <= we);
    assert.ok(inWindow.length > 0, 'the brushed window holds some allocations');
    assert.equal(Number(t.total), inWindow.length);
    assert.match(await page.textContent('[data-testid="chip-window"]'), /window/);
    // Unreleased in the window: allocated in it and not released by its end.
    const unrelWin = await liveGroups(page, 'unreleased-group');
    const expectWin = inWindow.filter((e) => !e.size_kb.startsWith('-') && (e.release_time_ms === '' || msToNs(e.release_time_ms) > we));
    assert.equal(unrelWin.reduce((a, g) => a + g.count, 0), expectWin.length);

    // Select a row with a direct stack: the stack view lists the frames of that allocation.
    await page.fill('[data-testid="filter-name"]', '^aten::empty_strided$');
    await page.uncheck('[data-testid="filter-window"]');
    await page.waitForFunction(() => {
      const tb = document.querySelector('[data-testid="ascend-table"]');
      return tb.dataset.state === 'ready' && !tb.dataset.windowStartNs && tb.querySelector('[data-testid="alloc-row"]');
    });
    await page.click('[data-testid="alloc-row"] >> nth=0');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-stack"]').dataset.row);
    const stack = await page.$eval('[data-testid="ascend-stack"]', (n) => ({
      source: n.dataset.stackSource,
      frames: [...n.querySelectorAll('[data-testid="stack-frame"] .frame-text')].map((f) => f.textContent),
      line: n.dataset.line,
      run: n.dataset.run,
    }));
    // Independently: operator_memory.csv line → (name, allocation time) → the CSV's call_stack.
    const om = readFileSync(path.join(path.dirname(TEXT), stack.run, 'ASCEND_PROFILER_OUTPUT', 'operator_memory.csv'), 'utf8').split(/\r?\n/);
    const fields = om[Number(stack.line) - 1].split(',');
    const allocUs = fields[2].replace(/[\t"]/g, '').trim();
    const [us, frac = ''] = allocUs.split('.');
    const allocNs = BigInt(us) * 1000n + BigInt((frac + '000').slice(0, 3));
    const match = events.filter((e) => e.rank_id === '0' && e.name === fields[0] && e.start_time_ms !== '' && msToNs(e.start_time_ms) === allocNs);
    assert.equal(match.length, 1);
    assert.equal(stack.source, match[0].stack_source);
    assert.deepEqual(stack.frames, match[0].call_stack.split(';').map((f) => f.trim()).filter(Boolean));
    assert.ok(stack.frames.length > 0);
    assert.ok(await page.$('[data-testid="stack-frame"][data-user="1"]'), 'user frames are marked');
    // The selected allocation shows in the timeline and the selection chip.
    assert.match(await page.textContent('[data-testid="chip-row"]'), /allocation #/);

    // A live-set group filters the table to its allocations. The name filter is cleared just
    // before the click, within its debounce: the table must not say "ready" with the count of the
    // group under the old name filter (it did, now and then: a stale 0 instead of the group's rows).
    await page.evaluate(() => {
      const tb = document.querySelector('[data-testid="ascend-table"]');
      window.__readyTotals = [];
      new MutationObserver(() => {
        if (tb.dataset.state === 'ready' && tb.dataset.frameFilter === '1') window.__readyTotals.push(tb.dataset.total);
      }).observe(tb, { attributes: true });
    });
    await page.fill('[data-testid="filter-name"]', '');
    await page.locator('[data-testid="live-group"][aria-disabled="false"] >> nth=0').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-table"]').dataset.frameFilter === '1');
    await tableSettled(page);
    const first = json.ranks[0].live_at_peak.find((g) => g.count > 0);
    assert.equal(await page.getAttribute('[data-testid="ascend-table"]', 'data-total'), String(first.count));
    await page.waitForTimeout(400);
    assert.deepEqual([...new Set(await page.evaluate(() => window.__readyTotals))], [String(first.count)], 'every "ready" of the table gave the group\'s count');

    // Export: memory_events.csv and the summaries equal the CLI's files byte for byte.
    for (const name of ['memory_events.csv', 'rank_summary.csv', 'peak_attribution.csv', 'step_peaks.csv']) {
      assert.ok((await exportCsv(page, name)).equals(readFileSync(path.join(outDir, name))), `${name} differs from the CLI's`);
    }
    // Rank 1 through the overview: the views follow.
    await page.click('[data-testid="rank-row"][data-rank="1"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]').dataset.rank === '1');
    assert.deepEqual(await liveGroups(page, 'live-group'), json.ranks[1].live_at_peak);
    await page.click('[data-testid="rank-row"][data-rank="0"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]').dataset.rank === '0');
    await tableSettled(page);
    await selectForShots(page);
    await shootViews(page, 'light');
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('dark mode, single-threaded engine: same hooks; dark screenshots; view state survives a reload', async () => {
  const b = await openBrowser({ colorScheme: 'dark' });
  try {
    const page = await b.page();
    await page.goto(plain.url);
    assert.equal(await engineThreads(page), 1);
    assert.equal(await dropDir(page, TEXT), 'ready');
    const json = cliJson(TEXT);
    await compareHooks(page, json);
    // Pick a time on the memory chart: the live-set view follows; the URL keeps it.
    await page.locator('#ascend-memory').scrollIntoViewIfNeeded();
    const box = await page.locator('[data-testid="memory-canvas"]').boundingBox();
    await page.mouse.click(box.x + 72 + (box.width - 86) * 0.45, box.y + 100);
    await page.waitForFunction(() => /(^|&)at=/.test(location.hash.slice(1)));
    await page.waitForFunction(() => document.querySelector('[data-testid="live-groups"]').dataset.state === 'ready');
    await page.click('[data-testid="rank-row"][data-rank="1"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]').dataset.rank === '1');
    await tableSettled(page);
    await selectForShots(page);
    await shootViews(page, 'dark');
    // A chart saved as PNG keeps the dark background it is shown on (opaque, not transparent).
    await page.locator('#ascend-export').scrollIntoViewIfNeeded();
    const [png] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid^="png-"] >> nth=0')]);
    const [r, g, bl, a] = pngFirstPixel(readFileSync(await png.path()));
    assert.equal(a, 255, 'the PNG is opaque');
    assert.ok(r + g + bl < 3 * 80, `a dark background, got rgb(${r}, ${g}, ${bl})`);
    const hash = await page.evaluate(() => location.hash);
    assert.match(hash, /rank=1/);
    // Reload and drop the same files: the selection comes back from the URL (a group filter too,
    // stored by its position in the list, not by its name).
    const before = await page.$eval('[data-testid="ascend-stack"]', (n) => n.dataset.row);
    await page.locator('[data-testid="live-group"][aria-disabled="false"] >> nth=0').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-table"]').dataset.frameFilter === '1');
    await tableSettled(page);
    const windowBefore = await page.$eval('[data-testid="ascend-table"]', (n) => [n.dataset.windowStartNs, n.dataset.total, n.dataset.frameFilter]);
    assert.doesNotMatch(decodeURIComponent(await page.evaluate(() => location.hash)), /main\.py/);
    await page.reload();
    await engineThreads(page);
    assert.equal(await dropDir(page, TEXT), 'ready');
    assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-rank'), '1');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-stack"]').dataset.row);
    assert.equal(await page.$eval('[data-testid="ascend-stack"]', (n) => n.dataset.row), before);
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-table"]').dataset.frameFilter === '1');
    await tableSettled(page);
    assert.deepEqual(await page.$eval('[data-testid="ascend-table"]', (n) => [n.dataset.windowStartNs, n.dataset.total, n.dataset.frameFilter]), windowBefore);
    assert.doesNotMatch(decodeURIComponent(hash), /main\.py|aten::|msinsight|_ascend_pt/, 'no data from the files in the URL');
    assert.deepEqual(foreignRequests(b.requests, plain.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a zip of the sample gives the same answer as the CLI on the zip', async () => {
  const zip = path.join(tmp, 'text.zip');
  writeFileSync(zip, zipFiles(filesUnder(TEXT).map((f) => ({ path: f.path, bytes: Buffer.from(f.base64, 'base64') }))));
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(isolated.url);
    await engineThreads(page);
    await dropFiles(page, [{ path: 'text.zip', base64: readFileSync(zip).toString('base64') }]);
    assert.equal(await ascendReady(page), 'ready');
    const json = cliJson(zip);
    await compareHooks(page, json);
    assert.equal(json.ranks[0].run_dirs[0], 'text.zip/text/rank0_ascend_pt');
    const outDir = cliOut(zip);
    assert.ok((await exportCsv(page, 'memory_events.csv')).equals(readFileSync(path.join(outDir, 'memory_events.csv'))));
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
  } finally {
    await b.close();
  }
});

test('a generated multi-role job: every rank row, the matrix and the outliers', async () => {
  const job = path.join(tmp, 'rl-job');
  execFileSync(CLI, ['generate', 'profiler', '--out', job, '--roles', '3', '--ranks', '3', '--trace-mb', '0.5', '--rows', '1500', '--steps', '2', '--seed', '11', '--outlier'], { stdio: 'ignore' });
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(isolated.url);
    await engineThreads(page);
    assert.equal(await dropDir(page, job), 'ready');
    const json = cliJson(job);
    assert.equal(json.ranks.length, 9);
    await compareHooks(page, json);
    assert.equal(await page.getAttribute('[data-testid="ascend-matrix"]', 'data-cells'), String(json.matrix.length));
    // The generator made the last rank of the first role heavier: the one outlier, listed under the matrix.
    assert.deepEqual(json.outliers.map((o) => [o.role, o.rank]), [['actor_update', 2]]); // role 0 of the generator
    const flagged = await page.$$eval('[data-testid="matrix-outliers"] button', (bs) =>
      bs.map((b) => ({ rank: Number(b.dataset.rankIndex), text: b.textContent, title: b.title })));
    assert.equal(flagged.length, 1);
    const o = json.outliers[0];
    assert.deepEqual([json.ranks[flagged[0].rank].role, json.ranks[flagged[0].rank].rank], [o.role, o.rank]);
    assert.ok(flagged[0].text.endsWith(` ▲ ${(Math.abs(o.deviation_permille) / 10).toFixed(0)} % vs role`), flagged[0].text);
    assert.match(flagged[0].title, /stands out: \+/);
    mkdirSync(SHOTS, { recursive: true });
    await page.locator('#ascend-overview').screenshot({ path: path.join(SHOTS, 'ascend-overview-outlier-light.png') });
    // Open the last rank with the keyboard (k = previous, wrapping) and compare its live set.
    await page.keyboard.press('k');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]').dataset.rank === '8');
    assert.deepEqual(await liveGroups(page, 'live-group'), json.ranks[8].live_at_peak);
    // Compare with another rank aligned by step: the caption says so.
    await page.keyboard.press('c');
    await page.keyboard.press('a');
    await page.waitForFunction(() => /aligned at step/.test(document.querySelector('#ascend-memory .chart-caption').textContent));
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

/** The db-only sample in one engine: hooks, "db" badge, live set, unreleased, a row's stack, and
 * every export byte for byte against the CLI. */
async function checkDbRun(page, dir, json, outDir) {
  await compareHooks(page, json);
  assert.equal(json.ranks[0].source, 'db');
  assert.equal(await page.textContent('[data-testid="rank-source"]'), 'db');
  assert.equal(await page.getAttribute('[data-testid="rank-row"]', 'data-source'), 'db');
  assert.deepEqual(await liveGroups(page, 'live-group'), json.ranks[0].live_at_peak);
  const unrel = await liveGroups(page, 'unreleased-group');
  assert.equal(unrel.reduce((a, g) => a + g.count, 0), json.ranks[0].unreleased_rows);
  await tableSettled(page);
  assert.equal(await page.getAttribute('[data-testid="ascend-table"]', 'data-total'), String(json.ranks[0].rows));
  // A row's stack: the frames of one of the CLI's rows of that name, said to come from the db.
  const events = parseCsv(readFileSync(path.join(outDir, 'memory_events.csv'), 'utf8'));
  const named = events.filter((e) => e.name === 'aten::_convolution');
  await page.fill('[data-testid="filter-name"]', '^aten::_convolution$');
  await page.waitForFunction((n) => {
    const tb = document.querySelector('[data-testid="ascend-table"]');
    return tb.dataset.state === 'ready' && tb.dataset.total === String(n) && tb.querySelector('[data-testid="alloc-row"]');
  }, named.length);
  await page.click('[data-testid="alloc-row"] >> nth=0');
  await page.waitForFunction(() => document.querySelector('[data-testid="ascend-stack"]').dataset.row);
  const stack = await page.$eval('[data-testid="ascend-stack"]', (n) => ({
    source: n.dataset.stackSource,
    runSource: n.dataset.runSource,
    frames: [...n.querySelectorAll('[data-testid="stack-frame"] .frame-text')].map((f) => f.textContent),
  }));
  assert.equal(stack.runSource, 'db');
  const stacks = named.map((e) => e.call_stack.split(';').map((f) => f.trim()).filter(Boolean));
  assert.ok(stack.frames.length > 0);
  assert.ok(stacks.some((f) => JSON.stringify(f) === JSON.stringify(stack.frames)), `the stack is one the CLI gives a row of that name: ${JSON.stringify(stack.frames.slice(0, 3))} vs ${JSON.stringify(stacks.map((x) => x.slice(0, 3)))}`);
  await page.fill('[data-testid="filter-name"]', '');
  await page.waitForFunction((n) => document.querySelector('[data-testid="ascend-table"]').dataset.total === String(n), json.ranks[0].rows);
  for (const name of ['memory_events.csv', 'rank_summary.csv', 'peak_attribution.csv', 'step_peaks.csv']) {
    assert.ok((await exportCsv(page, name)).equals(readFileSync(path.join(outDir, name))), `${name} differs from the CLI's`);
  }
}

test('the db-only export opens every view as the CLI reads it, with a "db" badge: threaded light 1440×900, single-threaded dark 1024×700, and a zip', async () => {
  const json = cliJson(DB);
  const outDir = cliOut(DB);
  assert.equal(json.ranks.length, 1);
  assert.equal(json.ranks[0].rows, 184);
  for (const [server, colorScheme, viewport, threaded] of [
    [isolated, 'light', { width: 1440, height: 900 }, true],
    [plain, 'dark', { width: 1024, height: 700 }, false],
  ]) {
    const b = await openBrowser({ colorScheme, viewport });
    try {
      const page = await b.page();
      await page.goto(server.url);
      const threads = await engineThreads(page);
      assert.equal(threads, threaded ? await page.evaluate(() => navigator.hardwareConcurrency) : 1);
      assert.equal(await dropDir(page, DB), 'ready');
      // The loading list named the db (the one file read) while its pages were read.
      assert.deepEqual(JSON.parse(await page.getAttribute('[data-testid="ascend"]', 'data-files')),
        ['db/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db']);
      await checkDbRun(page, DB, json, outDir);
      mkdirSync(SHOTS, { recursive: true });
      await page.locator('#ascend-overview').scrollIntoViewIfNeeded();
      await page.locator('#ascend-overview').screenshot({ path: path.join(SHOTS, `ascend-db-overview-${colorScheme}-${viewport.width}.png`) });
      await page.locator('#ascend-memory').scrollIntoViewIfNeeded();
      await page.locator('#ascend-memory').screenshot({ path: path.join(SHOTS, `ascend-db-memory-${colorScheme}-${viewport.width}.png`) });
      assert.deepEqual(foreignRequests(b.requests, server.origin), []);
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  }
  // A zip of the db-only folder: the same answer as the CLI on the zip.
  const zip = path.join(tmp, 'db.zip');
  writeFileSync(zip, zipFiles(filesUnder(DB).map((f) => ({ path: f.path, bytes: Buffer.from(f.base64, 'base64') }))));
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(isolated.url);
    await engineThreads(page);
    await dropFiles(page, [{ path: 'db.zip', base64: readFileSync(zip).toString('base64') }]);
    assert.equal(await ascendReady(page), 'ready');
    const zjson = cliJson(zip);
    await compareHooks(page, zjson);
    assert.equal(zjson.ranks[0].source, 'db');
    assert.ok((await exportCsv(page, 'memory_events.csv')).equals(readFileSync(path.join(cliOut(zip), 'memory_events.csv'))));
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
  } finally {
    await b.close();
  }
});

test('op names, call stacks and folder names with HTML and script are shown as text, never run', async () => {
  // The real rank 0 with hostile strings in the join keys: the same payload in operator_memory.csv
  // and trace_view.json, so the hostile names also reach the stacks and groups.
  const role = 'role<img src=pwned-role onerror=window.__pwned=3>';
  const run = path.join(tmp, 'evil', role, 'rank0_ascend_pt');
  cpSync(path.join(TEXT, 'rank0_ascend_pt'), run, { recursive: true });
  const out = path.join(run, 'ASCEND_PROFILER_OUTPUT');
  const NAME = '<img src=pwned-name onerror=window.__pwned=1>';
  const FRAME = 'main<script>window.__pwned=2</script>.py';
  const om = readFileSync(path.join(out, 'operator_memory.csv'), 'utf8').replaceAll('aten::empty_strided', NAME);
  writeFileSync(path.join(out, 'operator_memory.csv'), om);
  const tv = readFileSync(path.join(out, 'trace_view.json'), 'utf8').replaceAll('aten::empty_strided', NAME).replaceAll('main.py', FRAME.replace('/', '\\/'));
  writeFileSync(path.join(out, 'trace_view.json'), tv);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(isolated.url);
    await engineThreads(page);
    assert.equal(await dropDir(page, path.join(tmp, 'evil')), 'ready');
    await compareHooks(page, cliJson(path.join(tmp, 'evil')));
    // The payloads are visible as text …
    await page.fill('[data-testid="filter-name"]', '^<img');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-table"]').dataset.state === 'ready' && document.querySelector('[data-testid="alloc-row"]'));
    assert.equal(await page.textContent('[data-testid="alloc-row"] >> nth=0 >> .vt-cell >> nth=0'), NAME);
    await page.click('[data-testid="alloc-row"] >> nth=0');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-stack"]').dataset.row);
    const frames = await page.$$eval('[data-testid="stack-frame"] .frame-text', (fs) => fs.map((f) => f.textContent));
    assert.ok(frames.some((f) => f.includes('main<script>window.__pwned=2</script>.py')), 'the frame text is shown verbatim');
    const groups = await page.$$eval('[data-testid="live-group"] .group-frame', (fs) => fs.map((f) => f.textContent));
    assert.ok(groups.some((g) => g.includes('<script>')), JSON.stringify(groups));
    assert.ok((await page.textContent('[data-testid="ascend-rank-table"]')).includes(role));
    // … and nothing ran or was parsed as markup.
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.$$eval('img, script:not([src]):not([type])', (n) => n.filter((x) => x.closest('#analysis-panels')).length), 0);
    assert.deepEqual(b.requests.filter((u) => u.includes('pwned')), []);
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('the example "torch_npu job, 2 ranks" opens straight into the views, like the CLI', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(isolated.url);
    await engineThreads(page);
    await page.click('button[data-example="two-rank-job"]');
    assert.equal(await ascendReady(page), 'ready');
    assert.equal(await page.getAttribute('[role="tab"][aria-selected="true"]', 'data-tab'), 'ascend');
    assert.ok(await page.isVisible('#ascend-memory'));
    const json = cliJson(EXAMPLE);
    await compareHooks(page, json);
    // Keyboard: 4 jumps to the table; ? lists the torch_npu keys.
    await page.keyboard.press('4');
    assert.equal(await page.evaluate(() => document.activeElement.closest('[data-view]')?.dataset.view), 'table');
    await page.keyboard.press('?');
    assert.ok(await page.isVisible('[data-testid="ascend-keys"]'));
    await page.keyboard.press('Escape');
    await page.screenshot({ path: path.join(SHOTS, 'ascend-example-page-light.png'), fullPage: true });
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('dist/memlens.html from file:// runs the torch_npu views too', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    const url = pathToFileURL(path.join(root, 'dist', 'memlens.html')).href;
    await page.goto(url);
    assert.equal(await engineThreads(page), 1);
    await page.setInputFiles('input[data-testid="folder-input"]', TEXT);
    assert.equal(await ascendReady(page), 'ready');
    await compareHooks(page, cliJson(TEXT));
    // The db-only export through the offline engine too.
    await page.setInputFiles('input[data-testid="folder-input"]', DB);
    await page.waitForFunction(() => document.querySelector('[data-testid="rank-row"]')?.dataset.source === 'db', null, { timeout: 120000 });
    assert.equal(await ascendReady(page), 'ready');
    await checkDbRun(page, DB, cliJson(DB), cliOut(DB));
    assert.deepEqual(b.requests.filter((u) => u !== url && !u.startsWith('blob:') && !u.startsWith('data:')), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
