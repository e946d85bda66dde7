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

/**
 * The rows of the job-wide memory_events.csv the page exports, counted per `rank_id` from the
 * downloaded file: `{ rank: rows }`.
 */
async function exportedRowsPerRank(page) {
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click('[data-testid="export-memory-events"]')]);
  const records = csvRecords(readFileSync(await dl.path(), 'utf8'));
  const rankCol = records[0].indexOf('rank_id');
  assert.ok(rankCol >= 0, records[0].join(','));
  const perRank = {};
  for (const r of records.slice(1)) perRank[r[rankCol]] = (perRank[r[rankCol]] || 0) + 1;
  return perRank;
}

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
    // The other ranks: the CLI's figures, rank by rank; the ranks left out are listed too,
    // marked too large.
    const rows = await page.$$eval('[data-testid="rank-row"]', (trs) => trs.map((t) => ({ status: t.dataset.status, role: t.dataset.role, rank: t.dataset.rank, rows: t.dataset.rows, peak: t.dataset.peakAllocatedBytes })));
    assert.deepEqual(rows.filter((r) => r.status === 'ok').map(({ status, ...r }) => r), kept.map((r) => ({ role: r.role, rank: String(r.rank), rows: String(r.rows), peak: String(r.peak_allocated_bytes) })));
    const key = (r) => `${r.role} ${r.rank}`;
    assert.deepEqual(rows.filter((r) => r.status !== 'ok').map((r) => `${r.status} ${key(r)}`).sort(), json.ranks.filter(refused).map((r) => `too-large ${key(r)}`).sort());
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
// job of one rank read) and the worker pool — and the job-wide export leaves it out too. The rank
// left out is still a rank of the job wherever ranks are listed: its row of the rank table, the
// rank bar and its matrix cell say "too large" with its file's size, and opened it shows a panel
// naming the file, its size against the limit and the commands that read it.
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
        // Every rank of the job is in the overview, the one left out too: the ranks read with the
        // CLI's figures, the one left out marked too large, with the size of its file.
        const rows = await page.$$eval('[data-testid="rank-row"]', (trs) => trs.map((t) => (t.dataset.status === 'ok'
          ? { rank: t.dataset.rank, rows: t.dataset.rows, peak: t.dataset.peakAllocatedBytes }
          : { rank: t.dataset.rank, status: t.dataset.status, bytes: t.dataset.tooLargeBytes })));
        assert.deepEqual(rows, cli.ranks.map((r) => (r === lost
          ? { rank: String(r.rank), status: 'too-large', bytes: String(LIMIT + 1) }
          : { rank: String(r.rank), rows: String(r.rows), peak: String(r.peak_allocated_bytes) })));
        assert.equal(await page.getAttribute('[data-metric="ascend-ranks"]', 'data-value'), String(cli.ranks.length));
        assert.match(await page.textContent('[data-metric="ascend-warnings"] .sub'), /^1 rank too large\b/);
        // Its row says so in words: a badge, a mark where its peak would be, the file and its
        // size where its call-stack counts would be (the exact sizes in that cell's title), and
        // no figure ("0", "0 B") anywhere.
        const row = await page.$eval('[data-testid="rank-row"][data-status="too-large"]', (t) => ({
          index: t.dataset.rankIndex,
          badge: t.querySelector('[data-testid="rank-failed"]')?.textContent,
          peak: t.querySelector('[data-testid="rank-failed-peak"]')?.textContent,
          file: t.querySelector('[data-testid="rank-too-large-file"]')?.textContent,
          title: t.querySelector('[data-testid="rank-too-large-file"]')?.closest('.vt-cell').title,
          cells: [...t.querySelectorAll('.vt-cell')].map((c) => c.textContent),
        }));
        assert.equal(row.badge, 'too large');
        assert.equal(row.peak, '✕ too large');
        // 1.5 GiB and one byte, to two decimals.
        assert.equal(row.file, 'operator_memory.csv is 1.50 GiB');
        assert.ok(row.title.includes(named[0].path) && row.title.includes('is 1,610,612,737 bytes, more than the 1,610,612,736 bytes'), row.title);
        assert.ok(!row.cells.some((c) => /^0( B)?$/.test(c)), row.cells.join(' | '));
        // The rank bar lists it, "too large", and never as a comparison.
        const lostAt = row.index;
        assert.match(await page.$eval(`[data-testid="rank-select"] option[value="${lostAt}"]`, (o) => o.textContent), new RegExp(`rank ${lost.rank} — too large$`));
        assert.equal(await page.$eval(`[data-testid="compare-select"] option[value="${lostAt}"]`, (o) => o.disabled), true);
        // Its matrix cell: its tooltip names the file and its size against the limit.
        const hoverCell = async () => {
          const at = await page.$eval('[data-testid="ascend-matrix"]', async (g, rank) => {
            const d = Object.fromEntries(['labelWidth', 'headHeight', 'cellWidth', 'cellHeight'].map((k) => [k, Number(g.dataset[k])]));
            g.scrollIntoView({ block: 'center' });
            await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
            const r = g.getBoundingClientRect();
            // One role: the ranks' columns in their order (0, 1, 2).
            return { x: r.left + d.labelWidth + rank * d.cellWidth + d.cellWidth / 2, y: r.top + d.headHeight + d.cellHeight / 2 };
          }, lost.rank);
          await page.mouse.move(at.x, at.y);
          await page.waitForFunction((i) => document.querySelector('[data-testid="ascend-matrix"]').dataset.hoverRankIndex === i
            && /too large/.test(document.querySelector('[data-testid="tooltip"]')?.textContent || ''), lostAt, { timeout: 10000 });
          return page.textContent('[data-testid="tooltip"]');
        };
        const tip = await hoverCell();
        assert.ok(tip.includes(`rank ${lost.rank}`) && tip.includes(named[0].path) && tip.includes('is 1,610,612,737 bytes, more than the 1,610,612,736 bytes'), tip);
        await page.mouse.move(0, 0);
        // Its words stay inside its cell, clear of its frame: a column of pixels 3 px inside its
        // left edge is the error background from top to bottom ("✕ too large" in the cell's bold
        // type is wider than the cell, and ran over its edge).
        const inside = await page.$eval('[data-testid="ascend-matrix"]', async (g, rank) => {
          await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
          const probe = document.createElement('div');
          probe.style.color = getComputedStyle(document.documentElement).getPropertyValue('--error-bg');
          document.body.append(probe);
          const bg = getComputedStyle(probe).color.match(/\d+/g).slice(0, 3).map(Number);
          probe.remove();
          const d = Object.fromEntries(['labelWidth', 'headHeight', 'cellWidth', 'cellHeight'].map((k) => [k, Number(g.dataset[k])]));
          const canvas = g.parentElement.querySelector('canvas');
          const dpr = canvas.width / canvas.clientWidth;
          const x = Math.round((d.labelWidth + rank * d.cellWidth + 1.5 + 3 - g.scrollLeft) * dpr);
          const y0 = Math.round((d.headHeight + 1.5 + 3 - g.scrollTop) * dpr);
          const px = canvas.getContext('2d').getImageData(x, y0, 1, Math.round((d.cellHeight - 9) * dpr)).data;
          const off = [];
          for (let k = 0; k < px.length; k += 4) if ([0, 1, 2].some((c) => Math.abs(px[k + c] - bg[c]) > 2)) off.push([px[k], px[k + 1], px[k + 2]].join(','));
          return { bg: bg.join(','), off };
        }, lost.rank);
        assert.deepEqual(inside.off, [], `the cell's left edge is its background ${inside.bg}`);
        // Opened, it shows its panel instead of its views: which file, its size against the
        // limit, the commands that read it, a button to the next rank read.
        await page.selectOption('[data-testid="rank-select"]', lostAt);
        const panel = page.locator('[data-testid="ascend-rank-failed"]');
        await panel.waitFor({ state: 'visible', timeout: 10000 });
        assert.equal(await panel.getAttribute('data-rank'), lostAt);
        assert.equal(await panel.getAttribute('data-reason'), 'too-large');
        const says = await panel.textContent();
        const folder = lost.run_dirs[0].split('/').pop();
        assert.ok(says.includes(`rank ${lost.rank} was not read: a file is too large for the page`), says);
        assert.ok(says.includes(`${named[0].path} is 1,610,612,737 bytes, more than the 1,610,612,736 bytes this page reads of one file.`), says);
        assert.match(says, new RegExp(`memlens profiler \\S*${folder}.*memlens serve \\S*${folder}`));
        for (const view of ['#ascend-memory', '#ascend-timeline', '[data-testid="ascend-table"]', '#ascend-live', '#ascend-unreleased']) {
          assert.equal(await page.locator(view).isVisible(), false, `${view} is left out for a rank too large`);
        }
        if (!workers) {
          // The row, the cell's tooltip and the panel at both sizes, light and dark.
          await assertPanelFitsEverywhere(page, panel, 'h2, p, code, button', async (scheme, width) => {
            await panel.screenshot({ path: path.join(SHOTS, `too-large-rank-panel-${scheme}-${width}.png`) });
            await page.locator('[data-testid="ascend-rank-table"]').screenshot({ path: path.join(SHOTS, `too-large-rank-table-${scheme}-${width}.png`) });
            await hoverCell();
            await page.screenshot({ path: path.join(SHOTS, `too-large-rank-tooltip-${scheme}-${width}.png`) });
            await page.mouse.move(0, 0);
          });
          await page.emulateMedia({ colorScheme: 'light' });
        }
        // Its button opens the next rank read, whose views come back with its rows.
        const next = cli.ranks[cli.ranks.indexOf(lost) + 1];
        await page.click('[data-testid="ascend-rank-failed-next"]');
        await panel.waitFor({ state: 'hidden', timeout: 30000 });
        const nextAt = String(Number(lostAt) + 1);
        await page.waitForFunction((i) => {
          const t = document.querySelector('[data-testid="ascend-table"]');
          return t && t.dataset.rank === i && t.dataset.state === 'ready';
        }, nextAt, { timeout: 60000 });
        assert.equal(await page.getAttribute('[data-testid="ascend-table"]', 'data-total'), String(next.rows));
        // The job-wide export: the ranks read, and their rows, nothing of the rank left out.
        assert.deepEqual(await exportedRowsPerRank(page), Object.fromEntries(kept.map((r) => [String(r.rank), r.rows])));
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

// A db export over the limit beside the text files of its run folder does not leave the rank out:
// the rank is read from its text files, on both ways of reading a job, and the panel says which
// db, its size against the limit, and that the text files are read instead. The db put beside
// rank 1's text files is another job's (twice the rows), so a page that read it would show other
// figures than the CLI's for the folder without it. A db over the limit with no text file beside
// it (rank 2) still leaves its rank out, with the old words.
for (const workers of ['1', null]) {
  test(`a db over the limit beside its text files is read from the text files, ${workers ? 'read by the page\'s one worker' : 'read by the worker pool'}`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'memlens-db-as-text-'));
    try {
      const job = path.join(dir, 'job');
      const other = path.join(dir, 'other');
      execFileSync(CLI, ['generate', 'profiler', '--out', job, '--roles', '1', '--ranks', '3', '--trace-mb', '0.2', '--rows', '1500', '--seed', '9'], { stdio: 'ignore' });
      execFileSync(CLI, ['generate', 'profiler', '--out', other, '--roles', '1', '--ranks', '3', '--trace-mb', '0.2', '--rows', '3000', '--seed', '5', '--export', 'db'], { stdio: 'ignore' });
      // The expected figures: the CLI on the job as generated, before any db is put in it.
      const plain = JSON.parse(execFileSync(CLI, ['profiler', '--json', job], { encoding: 'utf8', maxBuffer: 1 << 28 }));
      assert.equal(plain.ranks.length, 3);
      assert.ok(plain.ranks.every((r) => r.source === 'text'), plain.ranks.map((r) => r.source).join());
      const out = (r) => path.join(dir, r.run_dirs[0], 'ASCEND_PROFILER_OUTPUT');
      const dbOf = (r) => path.join(out(r), `ascend_pytorch_profiler_${r.rank}.db`);
      const [first, asText, dbOnly] = plain.ranks;
      // Rank 1: the other job's db beside its text files. Rank 2: its text files replaced by a db.
      const db1 = path.join(other, path.relative(job, dbOf(asText)));
      const db2 = path.join(other, path.relative(job, dbOf(dbOnly)));
      cpSync(db1, dbOf(asText));
      for (const f of ['trace_view.json', 'operator_memory.csv', 'memory_record.csv', 'npu_module_mem.csv']) rmSync(path.join(out(dbOnly), f));
      cpSync(db2, dbOf(dbOnly));
      rmSync(other, { recursive: true, force: true });
      // Read as dropped (natively), rank 1 is read from the db: other figures than its text files'.
      const asDropped = JSON.parse(execFileSync(CLI, ['profiler', '--json', job], { encoding: 'utf8', maxBuffer: 1 << 28 }));
      assert.equal(asDropped.ranks[1].source, 'db');
      assert.notEqual(asDropped.ranks[1].rows, asText.rows);
      // The limit: under both dbs, over every text file held whole (traces stream by).
      const held = filesUnder(job).map((f) => path.join(dir, f.path)).filter((p) => !p.endsWith('/trace_view.json') && !p.endsWith('.db'));
      const limit = Math.min(statSync(dbOf(asText)).size, statSync(dbOf(dbOnly)).size) - 1;
      assert.ok(held.every((p) => statSync(p).size <= limit), `every text file within ${limit} bytes`);
      const b = await openBrowser();
      try {
        const page = await b.page();
        await page.goto(`${server.url}?fileLimit=${limit}${workers ? `&workers=${workers}` : ''}`);
        await engineThreads(page);
        await page.setInputFiles('input[data-testid="folder-input"]', job);
        assert.equal(await settled(page, 120000), 'ready');
        await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
        assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-workers'), workers ? null : String(await page.evaluate(() => navigator.hardwareConcurrency)));
        // The panel: rank 1's db read as text, rank 2's db left out, each with its size and the limit.
        const items = (sel) => page.$$eval(sel, (lis) => lis.map((li) => ({ path: li.dataset.path, bytes: Number(li.dataset.bytes), text: li.textContent })));
        const read = await items('[data-testid="ascend-db-as-text"] li');
        const lost = await items('[data-testid="ascend-too-large"] .error-state li');
        assert.equal(read.length, 1, JSON.stringify(read));
        assert.equal(lost.length, 1, JSON.stringify(lost));
        const says = (n, file, words) => {
          assert.ok(file.endsWith(n.path), `${n.path} is ${file}`);
          assert.equal(n.bytes, statSync(file).size);
          const [a, most] = bytesApart(n.bytes, limit);
          assert.ok(n.text.endsWith(`${words}${n.path} is ${a}, more than the ${most} this page reads of one file.`), n.text);
        };
        says(read[0], dbOf(asText), `rank ${asText.rank} is read from its text files: its database export `);
        says(lost[0], dbOf(dbOnly), `rank ${dbOnly.rank} is not read: `);
        assert.equal(await page.$eval('[data-testid="ascend"]', (r) => r.firstElementChild?.dataset.testid), 'ascend-too-large');
        // Ranks 0 and 1 with the figures of the CLI on the folders without the db; rank 2 too large.
        const rows = await page.$$eval('[data-testid="rank-row"]', (trs) => trs.map((t) => (t.dataset.status === 'ok'
          ? { rank: t.dataset.rank, rows: t.dataset.rows, peak: t.dataset.peakAllocatedBytes }
          : { rank: t.dataset.rank, status: t.dataset.status })));
        assert.deepEqual(rows, [
          ...[first, asText].map((r) => ({ rank: String(r.rank), rows: String(r.rows), peak: String(r.peak_allocated_bytes) })),
          { rank: String(dbOnly.rank), status: 'too-large' },
        ]);
        // Opened, rank 1's table holds its text rows (the view is read again by the page's worker,
        // or held from the load).
        await page.selectOption('[data-testid="rank-select"]', '1');
        await page.waitForFunction(() => {
          const t = document.querySelector('[data-testid="ascend-table"]');
          return t && t.dataset.rank === '1' && t.dataset.state === 'ready';
        }, null, { timeout: 60000 });
        assert.equal(await page.getAttribute('[data-testid="ascend-table"]', 'data-total'), String(asText.rows));
        // The job-wide export reads rank 1 from its text files too, and leaves rank 2 out.
        assert.deepEqual(await exportedRowsPerRank(page), { [first.rank]: first.rows, [asText.rank]: asText.rows });
        if (!workers) {
          const panel = page.locator('[data-testid="ascend-too-large"]');
          await assertPanelFitsEverywhere(page, panel, 'li, p, code', (scheme, width) =>
            panel.screenshot({ path: path.join(SHOTS, `db-as-text-${scheme}-${width}.png`) }));
          await page.emulateMedia({ colorScheme: 'light' });
        }
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
