// Views let go of what they hold when a new drop replaces them: the charts' colour-scheme
// listeners (which would keep every old canvas and its data alive and repainting) are counted
// through the page's own MediaQueryList calls, and must not grow drop after drop; and a new drop's
// tabs start afresh, not at the previous drop's rank, selection, filters or file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { root, CLI, openBrowser, startServer, dropFiles, filesUnder, settled } from './harness.mjs';

const FIXTURES = path.resolve(root, 'fixtures');
let server;
before(async () => {
  server = await startServer({ isolate: true });
});
after(async () => {
  await server.close();
});

async function tabReady(page, testid) {
  await page.waitForFunction((t) => document.querySelector(`[data-testid="${t}"]`)?.dataset.state === 'ready', testid, { timeout: 60000 });
}

test('re-dropping files releases the previous views: listeners do not pile up', async () => {
  const dump = [{ path: 'somas/Ascend_somas_tensor_offset_1.ir', base64: readFileSync(path.join(FIXTURES, 'somas', 'Ascend_somas_tensor_offset_1.ir')).toString('base64') }];
  const job = filesUnder(path.join(FIXTURES, 'torch_npu', 'msinsight-level0', 'text'));
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.addInitScript(() => {
      window.__schemeListeners = 0;
      const add = MediaQueryList.prototype.addEventListener;
      const remove = MediaQueryList.prototype.removeEventListener;
      const live = new Set();
      MediaQueryList.prototype.addEventListener = function (type, fn, ...rest) {
        if (type === 'change' && !live.has(fn)) {
          live.add(fn);
          window.__schemeListeners += 1;
        }
        return add.call(this, type, fn, ...rest);
      };
      MediaQueryList.prototype.removeEventListener = function (type, fn, ...rest) {
        if (type === 'change' && live.delete(fn)) window.__schemeListeners -= 1;
        return remove.call(this, type, fn, ...rest);
      };
    });
    await page.goto(server.url);
    const count = () => page.evaluate(() => window.__schemeListeners);
    const drop = async (files, testid) => {
      // settled() waits for this drop's state; its tabs are then the ones mounted for it.
      await dropFiles(page, files);
      assert.equal(await settled(page), 'ready');
      await tabReady(page, testid);
      return count();
    };
    const somasOnce = await drop(dump, 'somas');
    assert.ok(somasOnce > 0, 'the SOMAS charts listen for the colour scheme');
    assert.equal(await drop(dump, 'somas'), somasOnce);
    assert.equal(await drop(dump, 'somas'), somasOnce);
    const jobOnce = await drop(job, 'ascend');
    assert.ok(jobOnce > 0, 'the torch_npu charts listen for the colour scheme');
    assert.equal(await drop(job, 'ascend'), jobOnce);
    assert.equal(await drop(dump, 'somas'), somasOnce);
    // The views still follow the scheme after all that.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(300);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('after a second drop, settled() answers for that drop, not with the state the first one left', async () => {
  const dump = [{ path: 'somas/Ascend_somas_tensor_offset_1.ir', base64: readFileSync(path.join(FIXTURES, 'somas', 'Ascend_somas_tensor_offset_1.ir')).toString('base64') }];
  const job = filesUnder(path.join(FIXTURES, 'torch_npu', 'msinsight-level0', 'text'));
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    const units = () => page.$$eval('[data-testid="unit"]', (rows) => rows.map((r) => `${r.dataset.kind} ${r.dataset.path}`));
    const load = () => page.getAttribute('[data-testid="status"]', 'data-load');
    await dropFiles(page, dump);
    assert.equal(await settled(page), 'ready');
    assert.deepEqual(await units(), ['somas somas/Ascend_somas_tensor_offset_1.ir']);
    const first = Number(await load());
    assert.ok(first > 0, 'the status names the load it speaks for');
    // The second drop's files come slowly (as from a slow disk): until they are listed, the
    // status still says the first drop's "ready".
    await dropFiles(page, job, [], { slowMs: 400 });
    assert.equal(await settled(page), 'ready');
    // Read at once, with no other wait: what settled() answered for must be the second drop.
    const now = await units();
    assert.ok(now.length > 0 && now.every((u) => u.startsWith('ascend-run text/')), `the inputs are the second drop's: ${now.join(', ')}`);
    assert.ok(Number(await load()) > first, 'the status speaks for a later load');
    assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-state'), 'ready');
    assert.equal(await page.$('[data-testid="somas"]'), null, 'the first drop\'s tab is gone');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a second drop opens its tabs afresh: not at the first drop\'s rank, row, filter or snapshot file', async () => {
  const first = filesUnder(path.join(FIXTURES, 'torch_npu', 'msinsight-level0', 'text'));
  const secondDir = path.join(FIXTURES, 'examples', 'two-rank-job');
  const second = filesUnder(secondDir);
  // The second job's first rank, as the CLI reads it: the table's row count when nothing filters.
  const cli = JSON.parse(execFileSync(CLI, ['profiler', '--json', secondDir], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  const snap = (name) => ({ path: `snaps/${name}`, base64: readFileSync(path.join(FIXTURES, 'snapshots', name)).toString('base64') });
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    const tableReady = () => page.waitForFunction(() => document.querySelector('[data-testid="ascend-table"]')?.dataset.state === 'ready', null, { timeout: 60000 });
    const view = () => page.evaluate(() => ({
      rank: document.querySelector('[data-testid="rank-select"]').value,
      filter: document.querySelector('[data-testid="filter-name"]').value,
      chips: document.querySelector('[data-testid="selection-chips"]').textContent,
      hash: location.hash,
    }));
    await dropFiles(page, first);
    assert.equal(await settled(page), 'ready');
    await tabReady(page, 'ascend');
    await tableReady();
    // The user picks the second rank, filters the table by name and selects an allocation.
    await page.selectOption('[data-testid="rank-select"]', '1');
    await page.fill('[data-testid="filter-name"]', 'aten');
    await page.press('[data-testid="filter-name"]', 'Enter');
    await page.waitForFunction(() => /(^|[#&])q=aten/.test(location.hash) && /(^|[#&])rank=1/.test(location.hash));
    await tableReady();
    await page.locator('[data-testid="alloc-row"]').first().click();
    await page.waitForFunction(() => /(^|[#&])row=\d+/.test(location.hash));
    const picked = await view();
    assert.equal(picked.rank, '1');
    assert.notEqual(picked.chips, '', 'the selected allocation shows as a chip');
    // Then looks at the inputs, and drops another job.
    await page.click('#tabs button[data-tab="inputs"]');
    await dropFiles(page, second);
    assert.equal(await settled(page), 'ready');
    await tabReady(page, 'ascend');
    await tableReady();
    const now = await view();
    assert.equal(now.rank, '0', 'the new job opens at its first rank');
    assert.equal(now.filter, '', 'no name filter carried over');
    assert.equal(now.chips, '', 'no allocation of the first job selected');
    assert.doesNotMatch(now.hash, /(^|[#&])(q|row|rank=1)\b/, `the hash holds none of the first job's view state: ${now.hash}`);
    assert.equal(await page.getAttribute('[data-testid="ascend-table"]', 'data-total'), String(cli.ranks[0].rows));

    // Snapshots: the second file of the first drop is opened; the next drop opens its first file.
    await dropFiles(page, [snap('cs336_tiny_mem_snapshot.pickle'), snap('generated_current_p4.pickle')]);
    assert.equal(await settled(page), 'ready');
    await tabReady(page, 'snapshot');
    await page.selectOption('[data-testid="snapshot-file"]', '1');
    await page.waitForFunction(() => document.querySelector('[data-testid="snapshot"]').dataset.file === 'snaps/generated_current_p4.pickle'
      && document.querySelector('[data-testid="snapshot"]').dataset.state === 'ready', null, { timeout: 60000 });
    assert.match(await page.evaluate(() => location.hash), /n\.file=1/);
    await dropFiles(page, [snap('generated_torch20_p2.json'), snap('cs336_tiny_mem_snapshot.pickle')]);
    assert.equal(await settled(page), 'ready');
    await tabReady(page, 'snapshot');
    const files = await page.$$eval('[data-testid="snapshot-file"] option', (os) => os.map((o) => o.textContent.split(' (')[0]));
    assert.equal(files.length, 2);
    assert.equal(await page.getAttribute('[data-testid="snapshot"]', 'data-file'), files[0], 'the new drop opens its first snapshot');
    assert.equal(await page.inputValue('[data-testid="snapshot-file"]'), '0');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
