// A file larger than a tab can hold: before reading, the page names each such file with its size
// and the limit, says what reads it instead (the CLI, `memlens serve`), and still reads every
// other rank. The limit (1.5 GiB) is lowered for the test with `?fileLimit=BYTES`, so that files of
// a few hundred KiB stand for files of gigabytes; which files exceed it is worked out here from
// the files on disk, and the ranks shown are compared with `memlens profiler --json`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, cpSync, statSync, truncateSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { bytes, bytesApart } from '../../www/format.js';
import { root, CLI, SHOTS, openBrowser, startServer, engineThreads, settled, dropFiles, filesUnder, foreignRequests, assertPanelFitsEverywhere, csvRecords } from './harness.mjs';

let server;
let tmp;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-large-'));
  execFileSync(CLI, ['generate', 'profiler', '--out', 'job', '--roles', '1', '--ranks', '2', '--trace-mb', '0.5', '--rows', '4000', '--seed', '4'], { cwd: tmp, stdio: 'ignore' });
  cpSync(path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text'), path.join(tmp, 'text'), { recursive: true });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** "1.50 KiB" / "1,536 bytes" / "12 B" → bytes (approximate for the units). */
function parseSize(text) {
  const [num, unit] = text.split(' ');
  const units = { B: 1, bytes: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30 };
  return Number(num.replaceAll(',', '')) * units[unit];
}

test('a size just over the limit and the limit never print alike', () => {
  const MiB = 2 ** 20;
  for (const limit of [768 * MiB, 950 * MiB, 1536 * MiB, 4000, 1024]) {
    for (const over of [1, 7, 1000, 5000, MiB / 2, 3 * MiB]) {
      const [a, b] = bytesApart(limit + over, limit);
      assert.notEqual(a, b, `${limit + over} against ${limit}`);
      // Each text is the size it stands for, to the precision it shows.
      assert.ok(parseSize(a) > parseSize(b), `${a} > ${b}`);
      assert.ok(Math.abs(parseSize(a) - (limit + over)) <= (limit + over) / 100, `${a} stands for ${limit + over}`);
    }
  }
  // Sizes far apart keep the usual form.
  assert.deepEqual(bytesApart(900 * MiB, 768 * MiB), [bytes(900 * MiB), bytes(768 * MiB)]);
  assert.deepEqual(bytesApart(768 * MiB + 1, 768 * MiB), ['805,306,369 bytes', '805,306,368 bytes']);
});

test('a rank with a file over the limit is named with its size and not read; the other ranks are', async () => {
  const files = [...filesUnder(path.join(tmp, 'job')), ...filesUnder(path.join(tmp, 'text'))];
  const size = (p) => statSync(path.join(tmp, p)).size;
  // The limit: just under the largest file the page holds whole (traces stream by, whatever their size).
  const held = files.filter((f) => !f.path.endsWith('/trace_view.json'));
  const limit = Math.max(...held.map((f) => size(f.path))) - 1;
  const over = held.filter((f) => size(f.path) > limit).map((f) => f.path);
  const json = JSON.parse(execFileSync(CLI, ['profiler', '--json', 'job', 'text'], { cwd: tmp, encoding: 'utf8', maxBuffer: 1 << 28 }));
  const refused = (r) => r.run_dirs.some((d) => over.some((p) => p.startsWith(`${d}/`)));
  const kept = json.ranks.filter((r) => !refused(r));
  assert.ok(over.length >= 1 && kept.length >= 2 && kept.length < json.ranks.length, `${over.length} file(s) over, ${kept.length} of ${json.ranks.length} ranks kept`);

  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${server.url}?fileLimit=${limit}`);
    await engineThreads(page);
    await dropFiles(page, files);
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
    const named = await page.$$eval('[data-testid="ascend-too-large"] li', (lis) => lis.map((li) => ({ path: li.dataset.path, bytes: Number(li.dataset.bytes), text: li.textContent })));
    assert.deepEqual(named.map((n) => n.path).sort(), [...over].sort());
    for (const n of named) {
      assert.equal(n.bytes, size(n.path));
      assert.ok(n.text.includes(n.path), n.text);
      // The limit is one byte under the largest file: the two sizes must still read differently.
      const [, file, most] = n.text.match(/is not read: .* is ([\d.,]+ (?:[KMG]iB|B|bytes)), more than the ([\d.,]+ (?:[KMG]iB|B|bytes)) this page reads of one file\.$/) || [];
      assert.ok(file && most, n.text);
      assert.notEqual(file, most, n.text);
      assert.ok(parseSize(file) > parseSize(most), n.text);
    }
    const advice = await page.textContent('[data-testid="ascend-too-large"] p');
    assert.match(advice, /memlens profiler .*memlens serve /);
    // The other ranks: the CLI's figures, rank by rank.
    const rows = await page.$$eval('[data-testid="rank-row"]', (trs) => trs.map((t) => ({ role: t.dataset.role, rank: t.dataset.rank, rows: t.dataset.rows, peak: t.dataset.peakAllocatedBytes })));
    assert.deepEqual(rows, kept.map((r) => ({ role: r.role, rank: String(r.rank), rows: String(r.rows), peak: String(r.peak_allocated_bytes) })));
    // The panel at both sizes, light and dark: nothing of it runs out of its box (a path or a
    // command wider than the panel would).
    const panel = page.locator('[data-testid="ascend-too-large"]');
    await assertPanelFitsEverywhere(page, panel, 'li, p, code', (scheme, width) =>
      panel.screenshot({ path: path.join(SHOTS, `too-large-${scheme}-${width}.png`) }));
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

// The real limit, 1.5 GiB (no `?fileLimit`): one rank's operator_memory.csv is made a sparse file
// of 1.5 GiB and one byte (its blocks stay unwritten, so the test writes nothing to disk), opened
// through the folder picker as a user would. Both ways of reading a job leave that rank out at
// once and show the same panel — the page's one worker (`?workers=1`, as the offline file and a
// job of one rank read) and the worker pool — and the job-wide export leaves it out too.
const LIMIT = 1.5 * 2 ** 30;
for (const workers of ['1', null]) {
  test(`a 1.5 GiB file is left out before reading, ${workers ? 'read by the page\'s one worker' : 'read by the worker pool'}`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'memlens-sparse-'));
    try {
      const job = path.join(dir, 'job');
      execFileSync(CLI, ['generate', 'profiler', '--out', job, '--roles', '1', '--ranks', '3', '--trace-mb', '0.2', '--rows', '1500', '--seed', '9'], { stdio: 'ignore' });
      const cli = JSON.parse(execFileSync(CLI, ['profiler', '--json', job], { encoding: 'utf8', maxBuffer: 1 << 28 }));
      assert.equal(cli.ranks.length, 3);
      // The middle rank's operator_memory.csv grows past the limit by one byte.
      const lost = cli.ranks[1];
      const big = path.join(dir, lost.run_dirs[0], 'ASCEND_PROFILER_OUTPUT', 'operator_memory.csv');
      assert.ok(statSync(big).size < LIMIT);
      truncateSync(big, LIMIT + 1);
      const kept = cli.ranks.filter((r) => r !== lost);
      const b = await openBrowser();
      try {
        const page = await b.page();
        await page.goto(workers ? `${server.url}?workers=${workers}` : server.url);
        await engineThreads(page);
        await page.setInputFiles('input[data-testid="folder-input"]', job);
        assert.equal(await settled(page, 120000), 'ready');
        await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
        // The pool's readers, or none.
        assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-workers'), workers ? null : String(await page.evaluate(() => navigator.hardwareConcurrency)));
        const named = await page.$$eval('[data-testid="ascend-too-large"] li', (lis) => lis.map((li) => ({ path: li.dataset.path, bytes: li.dataset.bytes, text: li.textContent })));
        assert.equal(named.length, 1, JSON.stringify(named));
        assert.ok(big.endsWith(named[0].path), `${named[0].path} is ${big}`);
        assert.equal(named[0].bytes, String(LIMIT + 1));
        // 1.5 GiB and one byte against 1.5 GiB: two texts that differ.
        assert.match(named[0].text, /is 1,610,612,737 bytes, more than the 1,610,612,736 bytes this page reads of one file\.$/);
        // The panel comes first in the tab, above the job's views.
        assert.equal(await page.$eval('[data-testid="ascend"]', (r) => r.firstElementChild?.dataset.testid), 'ascend-too-large');
        const rows = await page.$$eval('[data-testid="rank-row"]', (trs) => trs.map((t) => ({ rank: t.dataset.rank, rows: t.dataset.rows, peak: t.dataset.peakAllocatedBytes })));
        assert.deepEqual(rows, kept.map((r) => ({ rank: String(r.rank), rows: String(r.rows), peak: String(r.peak_allocated_bytes) })));
        // The job-wide export: the ranks read, and their rows, nothing of the rank left out.
        const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click('[data-testid="export-memory-events"]')]);
        const records = csvRecords(readFileSync(await dl.path(), 'utf8'));
        const rankCol = records[0].indexOf('rank_id');
        assert.ok(rankCol >= 0, records[0].join(','));
        const perRank = new Map();
        for (const r of records.slice(1)) perRank.set(r[rankCol], (perRank.get(r[rankCol]) || 0) + 1);
        assert.deepEqual(Object.fromEntries(perRank), Object.fromEntries(kept.map((r) => [String(r.rank), r.rows])));
        assert.equal(await page.textContent('#error-list'), '');
        assert.deepEqual(foreignRequests(b.requests, server.origin), []);
        assert.deepEqual(b.consoleErrors, []);
      } finally {
        await b.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
