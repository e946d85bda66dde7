// The virtual table's one rule for bringing a selected row into view (www/ui/virtual-table.js
// `reveal`), which the profiler's allocation table, the SOMAS grids and the snapshot tables all use:
// only the latest reveal moves the cursor, and not after the user moved it with the keys or a
// click, nor after the table was refreshed or replaced in its box. The page's worker answers in
// order, so the page alone cannot show a later ask answered first; here the table is loaded into a
// page by itself (served by the tests' static server) and its position functions are promises this
// test resolves by hand, in the order each case needs: no sleeps, no worker.
//
// Seen failing (each check of the rule taken out in turn, and on the old table, which had no
// `reveal`): without the check of the latest ask, the earlier ask's late answer reported 'shown'
// and put the cursor on 700; without counting key moves, the answer took the cursor from End's
// 999 to 600 (without counting clicks, from the clicked 995 to 100); without the generation
// check, the answer asked before the refresh put the cursor on 40; without the box check, the
// replaced table's answer reported 'shown'.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, startServer } from './harness.mjs';

let server;
let b;
let page;

// A page with the page's style sheet (the viewport's height and scrolling come from it) and an
// empty box for the table.
const SHELL = '<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/style.css"></head><body><div id="box" style="width: 600px"></div></body></html>';

before(async () => {
  server = await startServer({ isolate: false });
  b = await openBrowser();
  page = await b.page();
  // Matched by path: with MEMLENS_ANSWER_DELAY the harness adds a query to every URL it opens.
  const at = `${server.origin}/virtual-table-alone.html`;
  await page.route((url) => url.origin === server.origin && url.pathname === '/virtual-table-alone.html', (route) =>
    route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: SHELL }),
  );
  await page.goto(at);
});

after(async () => {
  await b.close();
  await server.close();
});

/**
 * Builds a fresh table of `rows` rows (row k's id is k, so a row's id is its position) in the box
 * and sets up the hand-resolved asks: `ask(n)` starts reveal n (its position function returns a
 * promise kept in `asks[n]`), `answer(n, value)` / `fail(n, message)` settle it, and `outcome(n)`
 * is what reveal n returned ({state, index} or {error}).
 */
async function freshTable(rows = 1000) {
  await page.evaluate(async (total) => {
    const { VirtualTable } = await import('/ui/virtual-table.js');
    const box = document.getElementById('box');
    const make = () =>
      new VirtualTable(box, {
        columns: [{ key: 'n', name: 'N', kind: 'int' }],
        rowTestId: 'row',
        fetchPage: async (offset, limit) => {
          const ids = [];
          for (let i = offset; i < Math.min(total, offset + limit); i++) ids.push(i);
          return { total, offset, ids, rows: ids.map((n) => ({ n })) };
        },
      });
    const t = {
      make,
      vt: make(),
      asks: [],
      reveals: [],
      ask(n, opts) {
        let settle;
        const asked = new Promise((resolve, reject) => (settle = { resolve, reject }));
        t.asks[n] = settle;
        t.reveals[n] = t.vt.reveal(() => asked, opts).then(
          (r) => r,
          (err) => ({ error: err.message }),
        );
      },
      async answer(n, value) {
        t.asks[n].resolve(value);
        return t.reveals[n];
      },
      async fail(n, message) {
        t.asks[n].reject(new Error(message));
        return t.reveals[n];
      },
    };
    window.t = t;
    await t.vt.refresh();
  }, rows);
}

/** The cursor as the table holds it and as the rows in the DOM show it, and whether it is in view. */
function cursor() {
  return page.evaluate(() => {
    const { vt } = window.t;
    const marked = [...vt.rowsBox.querySelectorAll('.vt-row.cursor')].map((r) => Number(r.dataset.index));
    const row = vt.rowsBox.querySelector('.vt-row.cursor');
    let inView = false;
    if (row) {
      const a = row.getBoundingClientRect();
      const v = vt.viewport.getBoundingClientRect();
      inView = a.top >= v.top && a.bottom <= v.bottom;
    }
    return { index: vt.cursor, marked, inView };
  });
}

// Each ask passes the row it reveals as the selection (`id`), as a table whose selection is the row
// clicked or picked last does: its mark comes at once, the cursor and the scroll with the answer.

test('only the latest reveal moves the cursor, whichever answer comes first', async () => {
  await freshTable();
  // A later ask answered first: it moves the cursor; the earlier one, answered after, does not.
  await page.evaluate(() => {
    window.t.ask(1, { id: 700 });
    window.t.ask(2, { id: 300 });
  });
  assert.deepEqual(await page.evaluate(() => window.t.answer(2, 300)), { state: 'shown', index: 300 });
  assert.deepEqual(await cursor(), { index: 300, marked: [300], inView: true });
  assert.deepEqual(await page.evaluate(() => window.t.answer(1, 700)), { state: 'superseded', index: -1 });
  assert.deepEqual(await cursor(), { index: 300, marked: [300], inView: true }, 'the late answer for the earlier ask moved the cursor');

  // Two asks answered in order: the later one still decides.
  await page.evaluate(() => {
    window.t.ask(3, { id: 20 });
    window.t.ask(4, { id: 850 });
  });
  assert.equal((await page.evaluate(() => window.t.answer(3, 20))).state, 'superseded');
  assert.deepEqual(await page.evaluate(() => window.t.answer(4, 850)), { state: 'shown', index: 850 });
  assert.deepEqual(await cursor(), { index: 850, marked: [850], inView: true });

  // A row the query does not show (null, or -1 as the profiler and SOMAS engines say): no cursor,
  // and the caller hears 'hidden' (to say so in its own words).
  await page.evaluate(() => window.t.ask(5, { id: 5000 }));
  assert.deepEqual(await page.evaluate(() => window.t.answer(5, null)), { state: 'hidden', index: -1 });
  assert.deepEqual(await cursor(), { index: -1, marked: [], inView: false });
  await page.evaluate(() => window.t.ask(6, { id: 5001 }));
  assert.deepEqual(await page.evaluate(() => window.t.answer(6, -1)), { state: 'hidden', index: -1 });

  // Nothing selected: nothing is asked.
  assert.deepEqual(await page.evaluate(() => window.t.vt.reveal(null, { id: null })), { state: 'none', index: -1 });
});

test('a key move or a click between the ask and its answer wins', async () => {
  await freshTable();
  await page.evaluate(() => window.t.ask(1, { id: 600 }));
  await page.focus('.vt-viewport');
  await page.keyboard.press('End');
  assert.equal((await cursor()).index, 999);
  assert.deepEqual(await page.evaluate(() => window.t.answer(1, 600)), { state: 'superseded', index: -1 });
  assert.deepEqual(await cursor(), { index: 999, marked: [999], inView: true }, 'the answer undid the key move');

  // A click on a row is a move too.
  await page.evaluate(() => window.t.ask(2, { id: 100 }));
  await page.click('[data-testid="row"][data-index="995"]');
  assert.deepEqual(await page.evaluate(() => window.t.answer(2, 100)), { state: 'superseded', index: -1 });
  assert.deepEqual(await cursor(), { index: 995, marked: [995], inView: true }, 'the answer undid the click');

  // A reveal asked after the moves counts again.
  await page.evaluate(() => window.t.ask(3, { id: 400 }));
  assert.deepEqual(await page.evaluate(() => window.t.answer(3, 400)), { state: 'shown', index: 400 });
  assert.deepEqual(await cursor(), { index: 400, marked: [400], inView: true });
});

test('an answer asked before a refresh, or of a table since replaced in its box, moves nothing', async () => {
  await freshTable();
  // The position was asked under the query the refresh replaced: it names a row of the old order.
  await page.evaluate(() => window.t.ask(1, { id: 40 }));
  await page.evaluate(() => window.t.vt.refresh());
  assert.deepEqual(await page.evaluate(() => window.t.answer(1, 40)), { state: 'superseded', index: -1 });
  assert.equal((await cursor()).index, -1, 'the answer for the old query moved the cursor');

  // A new table in the same box (another tab, other columns): the old one's answer is too late.
  await page.evaluate(() => window.t.ask(2, { id: 500 }));
  const old = await page.evaluate(async () => {
    const { t } = window;
    t.old = t.vt;
    t.vt = t.make();
    await t.vt.refresh();
    return t.old.box.isConnected;
  });
  assert.equal(old, false);
  assert.deepEqual(await page.evaluate(() => window.t.answer(2, 500)), { state: 'superseded', index: -1 });
  assert.equal(await page.evaluate(() => window.t.old.cursor), -1, 'the replaced table moved its cursor');
});

test('a failed ask rejects while it is the latest, and is dropped once superseded', async () => {
  await freshTable();
  await page.evaluate(() => window.t.ask(1, { id: 3 }));
  assert.deepEqual(await page.evaluate(() => window.t.fail(1, 'the worker failed')), { error: 'the worker failed' });
  await page.evaluate(() => {
    window.t.ask(2, { id: 4 });
    window.t.ask(3, { id: 10 });
  });
  assert.deepEqual(await page.evaluate(() => window.t.fail(2, 'too late to matter')), { state: 'superseded', index: -1 });
  assert.deepEqual(await page.evaluate(() => window.t.answer(3, 10)), { state: 'shown', index: 10 });
  assert.deepEqual(b.consoleErrors, []);
});

test('the selection is marked at once, before the answer; none clears the mark and the cursor', async () => {
  await freshTable();
  await page.evaluate(() => window.t.ask(1, { id: 5 }));
  assert.deepEqual(await page.$$eval('.vt-row.selected', (rows) => rows.map((r) => Number(r.dataset.index))), [5]);
  assert.deepEqual(await page.evaluate(() => window.t.answer(1, 5)), { state: 'shown', index: 5 });
  assert.deepEqual(await cursor(), { index: 5, marked: [5], inView: true });
  assert.deepEqual(await page.evaluate(() => window.t.vt.reveal(null, { id: null })), { state: 'none', index: -1 });
  assert.equal(await page.$$eval('.vt-row.selected', (rows) => rows.length), 0);
  assert.deepEqual(await cursor(), { index: -1, marked: [], inView: false });
});
