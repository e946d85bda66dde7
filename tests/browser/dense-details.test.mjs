// Dense details read whole: at 1440×900 the allocation table's headers and its short columns (sizes,
// times, source, totals, step, stream, device) are not cut off, and a cell that is (a long name or
// frame) carries its full value in its tooltip; after a drop, "Add files…" beside the replacing
// pickers keeps the loaded inputs and adds the new ones. Expectations: the CLI's row count, and the
// inventory of the two inputs given.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { root, CLI, openBrowser, openSample, startServer, engineThreads, settled, filesUnder, dropFiles, boxInside, tableGeometry, assertKeysStay } from './harness.mjs';

const TEXT = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
const SOMAS = path.join(root, 'fixtures', 'somas', 'Ascend_somas_tensor_offset_1.ir');

let server;

before(async () => {
  server = await startServer({ isolate: true });
});

after(async () => {
  await server.close();
});

test('the allocation table at 1440 px: headers and short columns whole, long values in tooltips', async () => {
  const cli = JSON.parse(execFileSync(CLI, ['profiler', TEXT, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  const { browser: b, page } = await openSample(server, filesUnder(TEXT), { viewport: { width: 1440, height: 900 }, view: 'ascend-table' });
  try {
    await page.locator('#ascend-table').scrollIntoViewIfNeeded();
    assert.equal(Number(await page.getAttribute('[data-testid="ascend-table"]', 'data-total')), cli.ranks[0].rows);
    const cells = await page.evaluate(() => {
      const heads = [...document.querySelectorAll('#ascend-table .vt-head [role="columnheader"]')];
      const names = heads.map((h) => h.textContent.replace(/[▲▼↑↓]/g, '').trim());
      const out = heads.map((h, i) => ({ col: names[i], head: true, text: names[i], cut: h.scrollWidth > h.clientWidth + 1, title: h.title }));
      for (const row of [...document.querySelectorAll('[data-testid="alloc-row"]')].slice(0, 20)) {
        [...row.children].forEach((c, i) => out.push({ col: names[i], head: false, text: c.textContent, cut: c.scrollWidth > c.clientWidth + 1, title: c.title }));
      }
      return out;
    });
    assert.ok(cells.length > 14 * 10, 'the header and some rows are measured');
    const flexible = new Set(['Name', 'Top user frame']);
    const cutShort = cells.filter((c) => c.cut && (c.head || !flexible.has(c.col)));
    assert.deepEqual(cutShort, [], 'no header and no short column is cut off');
    for (const c of cells.filter((x) => x.head)) assert.ok(c.title.includes(c.text), `header "${c.text}" names itself in its tooltip "${c.title}"`);
    for (const c of cells.filter((x) => x.cut)) assert.ok(c.title.includes(c.text.replace(/^…|…$/g, '')), `the cut cell "${c.text}" has its full value in its tooltip "${c.title}"`);
  } finally {
    await b.close();
  }
});

test('the allocation table at 1440×900: every column in view, no sideways scroll, header over its cells', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { browser: b, page } = await openSample(server, filesUnder(TEXT), { viewport: { width: 1440, height: 900 }, colorScheme, view: 'ascend-table' });
    try {
      await page.locator('#ascend-table').scrollIntoViewIfNeeded();
      const g = await tableGeometry(page, '#ascend-table');
      assert.equal(g.heads.length, 14, 'fourteen columns');
      assert.ok(g.overflowX <= 0, `the rows scroll ${g.overflowX} px sideways`);
      assert.ok(g.boxOverflowX <= 0, `the table's box scrolls ${g.boxOverflowX} px sideways`);
      assert.ok(g.pageOverflowX <= 0, `the page scrolls ${g.pageOverflowX} px sideways`);
      for (const h of g.heads) assert.ok(boxInside(h.box, g.table), `${colorScheme}: header "${h.name}" ${JSON.stringify(h.box)} lies inside the table ${JSON.stringify(g.table)}`);
      // Each header cell stands over its column: the same left edge and width as the row's cell.
      g.heads.forEach((h, i) => {
        assert.ok(Math.abs(h.box.x - g.cells[i].x) <= 1 && Math.abs(h.box.width - g.cells[i].width) <= 1, `header "${h.name}" ${JSON.stringify(h.box)} over its cells ${JSON.stringify(g.cells[i])}`);
      });
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  }
});

test('the allocation table at 1024×700 scrolls sideways inside its box with the name and size kept in view', async () => {
  const { browser: b, page } = await openSample(server, filesUnder(TEXT), { viewport: { width: 1024, height: 700 }, view: 'ascend-table' });
  try {
    await page.locator('#ascend-table').scrollIntoViewIfNeeded();
    const { before, after } = await assertKeysStay(page, '#ascend-table', 2);
    // The far right is Device; Name and Size are the columns kept.
    assert.equal(after.heads[after.heads.length - 1].name, 'Device');
    assert.deepEqual(before.heads.slice(0, 2).map((h) => h.name), ['Name', 'Size']);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('"Add files…" keeps the loaded inputs and adds the new ones; a drop still replaces', async () => {
  const b = await openBrowser({ viewport: { width: 1024, height: 700 } });
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    await dropFiles(page, filesUnder(path.join(TEXT, 'rank0_ascend_pt')));
    assert.equal(await settled(page, 120000), 'ready');
    const kinds = () => page.$$eval('[data-testid="unit"]', (rows) => rows.map((r) => r.dataset.kind).sort());
    assert.deepEqual(await kinds(), ['ascend-run']);
    assert.ok(await page.isVisible('label.add-files'), 'the compact drop line offers "Add files…"');
    const zone = await page.locator('#drop-zone').boundingBox();
    assert.ok(zone.height <= 90, `the drop line stays short: ${zone.height} px`);

    await page.setInputFiles('[data-testid="add-input"]', { name: 'Ascend_somas_tensor_offset_1.ir', mimeType: 'text/plain', buffer: readFileSync(SOMAS) });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="unit"]').length === 2, null, { timeout: 60000 });
    assert.equal(await settled(page, 120000), 'ready');
    assert.deepEqual(await kinds(), ['ascend-run', 'somas']);

    // A drop replaces what was loaded.
    await dropFiles(page, [{ path: 'Ascend_somas_tensor_offset_1.ir', base64: readFileSync(SOMAS).toString('base64') }]);
    assert.equal(await settled(page, 120000), 'ready');
    assert.deepEqual(await kinds(), ['somas']);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
