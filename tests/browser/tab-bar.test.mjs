// The tab bar shows only when a drop has something to show under it: hidden on the landing page,
// in the Compare mode alone and for a drop no analysis takes (the inputs table shows then, without
// a bar of one tab); shown with Inputs plus one tab per family for each kind of sample. "Shown" is
// what the user sees: a box on the page, not the hidden attribute, which a `display` rule beats.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { root, openBrowser, startServer, engineThreads, settled, filesUnder, dropFiles } from './harness.mjs';

const FX = path.join(root, 'fixtures');
const one = (file, as = path.basename(file)) => [{ path: as, base64: readFileSync(file).toString('base64') }];
// Each family's sample and the tabs it gives (Inputs first).
const FAMILIES = [
  ['SOMAS dump', one(path.join(FX, 'somas', 'Ascend_somas_tensor_offset_1.ir')), ['inputs', 'somas'], 'somas'],
  ['torch_npu text export', filesUnder(path.join(FX, 'torch_npu', 'msinsight-level0', 'text')), ['inputs', 'ascend'], 'ascend'],
  ['memory snapshot', one(path.join(FX, 'snapshots', 'cs336_tiny_mem_snapshot.pickle')), ['inputs', 'snapshot'], 'snapshot'],
  ['job summary', one(path.join(FX, 'summary', 'msinsight-level0.memlens.json')), ['inputs', 'summary'], 'summary'],
];

let server;

before(async () => {
  server = await startServer({ isolate: true });
});

after(async () => {
  await server.close();
});

/** What the user sees of the tab bar: whether it has a box, and the tabs in it. */
function tabBar(page) {
  return page.evaluate(() => {
    const bar = document.getElementById('tabs');
    const r = bar.getBoundingClientRect();
    return {
      shown: getComputedStyle(bar).display !== 'none' && r.height > 0,
      tabs: [...bar.querySelectorAll('[role="tab"]')].map((t) => t.dataset.tab),
      selected: bar.querySelector('[aria-selected="true"]')?.dataset.tab ?? null,
    };
  });
}

test('the tab bar is hidden on the landing page, in the Compare mode alone and for a drop no analysis takes', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    assert.deepEqual(await tabBar(page), { shown: false, tabs: [], selected: null }, 'landing page');
    assert.equal(await page.locator('#tabs').boundingBox(), null);

    await page.click('[data-testid="compare-button"]');
    assert.ok(await page.isVisible('#compare-root'));
    assert.equal((await tabBar(page)).shown, false, 'the Compare mode alone');
    await page.click('[data-testid="compare-button"]');

    // Only a file no analysis reads: the inputs table says what it is, no bar of tabs above it.
    await dropFiles(page, [{ path: 'notes.txt', base64: Buffer.from('not a profile\n').toString('base64') }]);
    await settled(page, 60000);
    const bar = await tabBar(page);
    assert.equal(bar.shown, false, 'a drop no analysis takes');
    assert.ok(await page.isVisible('#inventory'), 'the inputs table shows instead');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('each family shows the tab bar with Inputs and its own tab, and the tabs switch the panels', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    for (const [label, files, tabs, own] of FAMILIES) {
      await page.goto('about:blank');
      await page.goto(server.url);
      await engineThreads(page);
      await dropFiles(page, files);
      assert.equal(await settled(page, 120000), 'ready', label);
      assert.deepEqual(await tabBar(page), { shown: true, tabs, selected: own }, label);
      assert.ok(await page.isVisible(`#panel-${own}`), `${label}: its panel shows`);
      await page.click('[role="tab"][data-tab="inputs"]');
      assert.equal((await tabBar(page)).selected, 'inputs');
      assert.ok(await page.isVisible('#inventory') && !(await page.isVisible(`#panel-${own}`)), `${label}: Inputs swaps the panels`);
    }
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
