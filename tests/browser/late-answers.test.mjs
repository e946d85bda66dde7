// Late answers do not override the user. An action the worker answers and that then selects (the
// SOMAS search box, its c and n keys, a click on the profiler's allocation timeline or on the
// SOMAS layout) selects only if the user picked nothing in the meantime, and one that follows a
// pick without selecting (the layout's zoom to a conflict row's pair) follows it only while that
// pick is current: the user's pick stays, in every view. Each browser test takes the action and
// the user's pick in one task of the page, so the worker's answer certainly comes after the pick,
// however quick the worker or loaded the machine; the old page then moved the selection (or the
// view) to the late answer's. A c kept from selecting does not move c's place in the conflicts
// list, and a click selects what is under its own point, not what the last answered hover found.
// Rows of the data shown before, still on screen while the data asked for is on its way (the
// snapshot's table being replaced, the allocation table's rank before), are marked busy and a
// click on them selects nothing. The rule itself (ui/store.js `ask`, `since`) is checked first,
// in Node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, SHOTS, openBrowser, openSample, startServer, engineThreads, dropFiles, filesUnder, foreignRequests, pointerTask, hoverAt, twoItems } from './harness.mjs';

// ---- the rule, in Node --------------------------------------------------------------------------

test('store.ask: an answer is current until a later set or ask names one of its keys', async () => {
  // ui/store.js mirrors into the hash through ui/hash-state.js, which reads `location` and listens
  // on `window` when loaded; a store without `toHash` writes nothing there.
  globalThis.location ??= { hash: '' };
  globalThis.window ??= { addEventListener() {} };
  const { createStore } = await import('../../www/ui/store.js');
  const store = createStore({ node: 1, tensor: null, zoom: 0 });
  const keys = ['node', 'tensor'];

  const quiet = store.ask(keys);
  store.set({ zoom: 3 });
  assert.equal(quiet(), true, 'a key the action does not set changes nothing');

  const picked = store.ask(keys);
  store.set({ tensor: 5 });
  assert.equal(picked(), false, 'the user picked a tensor meanwhile');

  const again = store.ask(keys);
  assert.equal(store.set({ node: 1 }), false, 'the node picked again is no change of state');
  assert.equal(again(), false, 'but the user picked it: the late answer keeps away');

  const older = store.ask(keys);
  const newer = store.ask(['node']);
  assert.equal(older(), false, 'a newer action asked for the node');
  assert.equal(newer(), true);
  store.set(newer() ? { node: 9 } : {});
  assert.equal(store.get().node, 9);
  assert.equal(newer(), false, 'its own answer, once set, makes it past');

  // `since`: an answer that follows the pick of the moment, without selecting (a zoom).
  const zoom = store.since(keys);
  store.set({ zoom: 4 });
  assert.equal(zoom(), true, 'a key it does not follow changes nothing');
  const search = store.ask(keys);
  assert.equal(zoom(), false, 'an action that will select was taken');
  assert.equal(search(), true, 'and `since` named nothing: that action may still select');
  const follows = store.since(keys);
  store.set({ tensor: 5 });
  assert.equal(follows(), false, 'the user picked again what was picked: a pick');
});

// ---- the SOMAS tab ------------------------------------------------------------------------------

let server;
let tmp;
let gen; // the generated dump: { dump, task, j }

/** `memlens somas DUMP --task-info TASK --json [args]`, parsed. */
function cli(args = []) {
  const r = spawnSync(CLI, ['somas', gen.dump, '--task-info', gen.task, '--json', ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-late-answers-'));
  const dump = path.join(tmp, 'Ascend_somas_tensor_offset_1.ir');
  const task = path.join(tmp, 'task_info_graph_1.ir');
  execFileSync(CLI, ['generate', 'somas', '--flavor', 'v2.4', '--nodes', '3000', '--seed', '11', '--inject-conflicts', '3', '--out', dump, '--task-info-out', task], { encoding: 'utf8' });
  gen = { dump, task };
  gen.j = cli();
});

after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const FRAME = '[data-testid="somas-frame"]';

/** Opens the page, drops the generated dump and waits for the tab and the peak node's frame. */
async function openSomas(b) {
  const page = await b.page();
  await page.goto(server.url);
  await engineThreads(page);
  const file = (rel, full) => ({ path: rel, base64: readFileSync(full).toString('base64') });
  await dropFiles(page, [file('gen/Ascend_somas_tensor_offset_1.ir', gen.dump), file('gen/task_info_graph_1.ir', gen.task)]);
  await page.waitForFunction(() => document.querySelector('[data-testid="somas"]')?.dataset.state === 'ready', null, { timeout: 120000 });
  await frameShows(page, [gen.j.peak.node_index]);
  return page;
}

/** Waits until the frame shows one of the nodes `indices`; returns the one it shows. */
async function frameShows(page, indices) {
  await page.waitForFunction(([sel, want]) => want.includes(Number(document.querySelector(sel)?.dataset.node)), [FRAME, indices], { timeout: 30000 });
  return Number(await page.getAttribute(FRAME, 'data-node'));
}

/**
 * In one task of the page: `action` (a search, a key), then a click on the frame's next-node
 * button (▶), the user's pick. Every answer the action waits for comes in a later task.
 */
function actThenPick(page, action) {
  return page.evaluate((act) => {
    const search = document.querySelector('[data-testid="somas-search"]');
    if (act.search !== undefined) {
      search.value = act.search;
      search.form.requestSubmit();
    } else {
      search.blur();
      document.body.dispatchEvent(new KeyboardEvent('keydown', { key: act.key, bubbles: true, cancelable: true }));
    }
    document.querySelector('[data-testid="somas-frame"] button[aria-label="next node"]').click();
  }, action);
}

/** The peak node (shown first), and the node after it, which the user picks (▶). */
function nodes() {
  const peak = gen.j.peak.node_index;
  assert.ok(peak + 1 < gen.j.nodes, 'the peak node is not the last');
  return { peak, next: peak + 1 };
}

test('SOMAS: a search answered after the user picked a node keeps the pick, and offers what it names', async () => {
  const b = await openBrowser();
  try {
    const page = await openSomas(b);
    const { peak, next } = nodes();
    // A node neither the peak nor the next one, searched by its name.
    const wanted = [peak + 7, peak - 7, peak + 11].find((i) => i >= 0 && i < gen.j.nodes && i !== next);
    const named = cli(['--node', String(wanted)]).node_query;
    assert.equal(named.node_index, wanted);

    await actThenPick(page, { search: named.node_name });
    // The frame follows the one selection: the old page moved it to the search's node, since its
    // answer came after the pick. Answers come in the order asked (one worker), so the frame's
    // answer for the pick comes after the search's answer.
    assert.equal(await frameShows(page, [next, wanted]), next, 'the node the user picked while the search was answered stays selected');
    const late = page.locator('[data-testid="somas-query-late"]');
    const name = named.node_name;
    assert.equal(await late.textContent(), `“${name}” names node $${wanted} ${name}: not selected, since you selected something else before the answer came.`);
    // The query panel, which follows the selection, speaks for the pick.
    await page.waitForFunction((m) => document.querySelector('[data-testid="somas-query-result"]').dataset.node === String(m), next, { timeout: 30000 });
    // What the search named is one click away.
    await late.locator('button').first().click();
    assert.equal(await frameShows(page, [wanted]), wanted);
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('SOMAS: c (next conflict) answered after the user picked a node selects no pair', async () => {
  const b = await openBrowser();
  try {
    const page = await openSomas(b);
    const { next } = nodes();
    // The conflicts table is shown first and counted, so c asks for its row at once.
    await page.waitForSelector('[data-testid="conflict-row"]');
    await actThenPick(page, { key: 'c' });
    // The old page selected the pair (written to the hash) and its first shared node.
    await page.waitForFunction(
      ([sel, m]) => document.querySelector(sel).dataset.node === String(m) || /(^|&)s\.pair=/.test(location.hash.slice(1)),
      [FRAME, next],
      { timeout: 30000 },
    );
    assert.equal(Number(await page.getAttribute(FRAME, 'data-node')), next, 'the node the user picked stays selected');
    assert.equal(await page.locator('[data-testid="conflict-row"].selected').count(), 0, 'no conflict row is selected');
    assert.ok(!/(^|&)s\.pair=/.test(await page.evaluate(() => location.hash.slice(1))), 'no pair in the hash');
    // And c, with nothing picked after it, steps to a conflict.
    await page.evaluate(() => document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'c', bubbles: true, cancelable: true })));
    await page.waitForFunction(() => /(^|&)s\.pair=/.test(location.hash.slice(1)), null, { timeout: 30000 });
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('SOMAS: n (the selected tensor’s producer) answered after the user picked a node keeps the pick', async () => {
  const b = await openBrowser();
  try {
    const page = await openSomas(b);
    const { peak, next } = nodes();
    // A tensor an ordinary node writes (its first output), selected from the search box.
    const producer = [peak + 5, peak - 5, peak + 9].find((i) => i >= 0 && i < gen.j.nodes && i !== next);
    const out = cli(['--node', String(producer)]).node_query.io.find((x) => x.role === 'output' && x.kind === 'tensor');
    assert.ok(out, 'the node writes a tensor');
    await page.fill('[data-testid="somas-search"]', `%${out.id}T`);
    await page.press('[data-testid="somas-search"]', 'Enter');
    await page.waitForFunction((id) => document.querySelector('[data-testid="somas-query-result"]').dataset.tensor === String(id), out.id, { timeout: 30000 });
    assert.equal(Number(await page.getAttribute(FRAME, 'data-node')), peak, 'a tensor search leaves the node');

    await actThenPick(page, { key: 'n' });
    assert.equal(await frameShows(page, [next, producer]), next, 'the node the user picked stays selected');
    // With nothing picked after it, n selects the producer.
    await page.evaluate(() => document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'n', bubbles: true, cancelable: true })));
    assert.equal(await frameShows(page, [producer]), producer);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

// ---- the profiler's allocation timeline ---------------------------------------------------------

test('profiler: a timeline click answered after the user picked a table row keeps the pick', async () => {
  const text = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
  const { browser: b, page } = await openSample(server, filesUnder(text), { viewport: { width: 1440, height: 900 }, view: 'ascend' });
  try {
    const canvas = '[data-testid="timeline-canvas"]';
    await page.locator(canvas).scrollIntoViewIfNeeded();
    const t = await page.locator(canvas).boundingBox();
    // A point on a bar: the bars are packed from the top of the plot; the canvas counts the clicks
    // the worker answered and names the row the last one hit.
    let at = null;
    let hit = null;
    for (const fy of [0.08, 0.15, 0.25, 0.35]) {
      for (const fx of [0.1, 0.3, 0.5, 0.7, 0.9]) {
        const answered = Number((await page.getAttribute(canvas, 'data-clicks')) || 0);
        const [x, y] = [t.x + 72 + (t.width - 86) * fx, t.y + 8 + (t.height - 40) * fy];
        await page.mouse.click(x, y);
        await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).dataset.clicks || 0) > n, [canvas, answered], { timeout: 30000 });
        hit = await page.getAttribute(canvas, 'data-click-row');
        if (hit !== '-1') {
          at = { dx: x - t.x, dy: y - t.y };
          break;
        }
      }
      if (at) break;
    }
    assert.ok(at, 'a click on the timeline hit an allocation');
    const chip = '[data-testid="chip-row"]';
    await page.waitForFunction(([sel, r]) => document.querySelector(sel)?.textContent.startsWith(`allocation #${r}`), [chip, hit], { timeout: 30000 });
    // Another allocation of the table, the user's pick, chosen once the table has scrolled to the
    // bar's row: the table reveals a selection after its own answer, and a row chosen before that
    // scroll may have left the DOM by the time it is clicked.
    await page.waitForSelector(`[data-testid="alloc-row"].selected[data-row="${hit}"]`, { timeout: 30000 });
    const pick = await page.$$eval('[data-testid="alloc-row"]', (rows, h) => rows.map((r) => r.dataset.row).find((r) => r !== h), hit);
    assert.ok(pick !== undefined, 'the table shows another allocation');

    // In one task of the page: a click on the bar (its hit is the worker's answer), then a click
    // on the table's row.
    const clicked = Number(await page.getAttribute(canvas, 'data-clicks'));
    await page.evaluate(([sel, { dx, dy }, row]) => {
      const c = document.querySelector(sel);
      const box = c.getBoundingClientRect();
      const [x, y] = [box.left + dx, box.top + dy];
      const at = (type, buttons) => c.dispatchEvent(new PointerEvent(type, { clientX: x, clientY: y, button: 0, buttons, pointerId: 1, pointerType: 'mouse', isPrimary: true, bubbles: true }));
      at('pointerdown', 1);
      at('pointerup', 0);
      document.querySelector(`[data-testid="alloc-row"][data-row="${row}"]`).click();
    }, [canvas, at, pick]);
    await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).dataset.clicks) > n, [canvas, clicked], { timeout: 30000 });
    assert.equal(await page.getAttribute(canvas, 'data-click-row'), hit, 'the click was answered: it hit the bar');
    // The old page selected the bar's allocation again when the answer came.
    assert.match(await page.textContent(chip), new RegExp(`^allocation #${pick}\\b`), 'the row the user picked stays selected');
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

// ---- SOMAS: the zoom to a conflict row's pair, c's place, clicks at their own point -------------

const LAYOUT = '[data-testid="somas-layout"]';
const STRIP = '[data-testid="somas-frame-strip"]';
const NEXT_NODE = '[data-testid="somas-frame"] button[aria-label="next node"]';

/** The conflict pair of each row of the conflicts table, in its order: [[a, b], …]. */
function conflictRows(page) {
  return page.$$eval('[data-testid="conflict-row"]', (rs) => rs.map((r) => [Number(r.dataset.a), Number(r.dataset.b)]));
}

/** The pairs of the conflict rows marked selected (one at most: the selection's). */
function selectedPairs(page) {
  return page.$$eval('[data-testid="conflict-row"].selected', (rs) => rs.map((x) => [Number(x.dataset.a), Number(x.dataset.b)]));
}

/** The tensor in the URL hash (the store writes it 120 ms after a pick), or null. */
async function hashTensor(page) {
  const t = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('s.tensor');
  return t === null ? null : Number(t);
}

/** Waits until the hash names one of the tensors `ids`; returns it. */
async function tensorPicked(page, ids) {
  await page.waitForFunction((want) => want.includes(Number(new URLSearchParams(location.hash.slice(1)).get('s.tensor'))), ids, { timeout: 30000 });
  return hashTensor(page);
}

test('SOMAS: a conflict row clicked, then a node picked before the pair’s boxes came: the layout does not zoom to the pair', async () => {
  const b = await openBrowser();
  try {
    const page = await openSomas(b);
    await page.waitForSelector('[data-testid="conflict-row"]');
    await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.view, LAYOUT);
    const view = await page.getAttribute(LAYOUT, 'data-view');
    const zooms = Number((await page.getAttribute(LAYOUT, 'data-zooms')) || 0);
    const [pair] = await conflictRows(page);
    // In one task of the page: the row's click (it selects the pair; the zoom waits for the two
    // tensors' boxes from the worker), then the user's pick of the next node (▶).
    await page.evaluate((sel) => {
      document.querySelector('[data-testid="conflict-row"]').click();
      document.querySelector(sel).click();
    }, NEXT_NODE);
    // The old page zoomed once the boxes came; the page now counts the boxes' answer, and leaves
    // the view to the user's pick.
    await page.waitForFunction(
      ([sel, v, n]) => document.querySelector(sel).dataset.view !== v || Number(document.querySelector(sel).dataset.zooms || 0) > n,
      [LAYOUT, view, zooms],
      { timeout: 30000 },
    );
    assert.equal(await page.getAttribute(LAYOUT, 'data-view'), view, 'the layout keeps its view: the pick the zoom was for is gone');
    assert.deepEqual(await selectedPairs(page), [pair], 'the pair stays selected (only the node moved on)');

    // With nothing picked before its boxes come, a row's click zooms to its pair.
    await page.locator('[data-testid="conflict-row"]').first().click();
    await page.waitForFunction(([sel, v]) => document.querySelector(sel).dataset.view !== v, [LAYOUT, view], { timeout: 30000 });
    const [x0, x1] = (await page.getAttribute(LAYOUT, 'data-view')).split(',').map(Number);
    const [v0, v1] = view.split(',').map(Number);
    assert.ok(x1 - x0 < v1 - v0, `zoomed in: ${x0}–${x1} within ${v0}–${v1}`);
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('SOMAS: c kept from selecting by a pick leaves c’s place: the next c selects the first conflict, and c goes on from a row picked in the table', async () => {
  const b = await openBrowser();
  try {
    const page = await openSomas(b);
    const { next } = nodes();
    await page.waitForSelector('[data-testid="conflict-row"]');
    const rows = await conflictRows(page);
    assert.deepEqual(rows, gen.j.conflicts, 'the table lists the CLI’s conflicts in its order');
    assert.ok(rows.length >= 3, 'three conflicts were injected');
    const zooms = async () => Number((await page.getAttribute(LAYOUT, 'data-zooms')) || 0);
    const key = (k) => page.evaluate((x) => document.body.dispatchEvent(new KeyboardEvent('keydown', { key: x, bubbles: true, cancelable: true })), k);

    // c and a pick in one task: c's answer selects nothing (late-answers' c test above).
    await actThenPick(page, { key: 'c' });
    assert.equal(await frameShows(page, [next]), next);
    // Once that answer is in (answers come in the order asked, and the frame's for the pick was
    // asked after c's page), c again: it selects the first conflict, which no c has selected yet.
    // The old page had moved c's place to the first already, and selected the second.
    let z = await zooms();
    await key('c');
    await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).dataset.zooms || 0) > n, [LAYOUT, z], { timeout: 30000 });
    assert.deepEqual(await selectedPairs(page), [rows[0]], 'the first conflict, none skipped');

    // A row picked in the table is where c goes on from: the one after it, here round to the
    // first. (The row's click zooms to its pair: that zoom is waited for first.)
    const lastRow = rows.length - 1;
    z = await zooms();
    await page.locator('[data-testid="conflict-row"]').nth(lastRow).click();
    await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).dataset.zooms || 0) > n, [LAYOUT, z], { timeout: 30000 });
    assert.deepEqual(await selectedPairs(page), [rows[lastRow]]);
    z = await zooms();
    await key('c');
    await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).dataset.zooms || 0) > n, [LAYOUT, z], { timeout: 30000 });
    // The row clicked is marked no more once c selected another (the old table marked both).
    assert.deepEqual(await selectedPairs(page), [rows[0]], 'the conflict after the row picked, alone marked');
    // Two c in one task: two conflicts on.
    z = await zooms();
    await page.evaluate(() => {
      for (let i = 0; i < 2; i++) document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'c', bubbles: true, cancelable: true }));
    });
    await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).dataset.zooms || 0) > n, [LAYOUT, z], { timeout: 30000 });
    assert.deepEqual(await selectedPairs(page), [rows[2 % rows.length]], 'c c steps twice');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('SOMAS layout: a click selects the tensor under its own point, not the one the last hover found', async () => {
  const b = await openBrowser();
  try {
    const page = await openSomas(b);
    assert.equal(await hashTensor(page), null, 'no tensor is selected yet');
    const [a, other] = await twoItems(page, LAYOUT, 'data-hover-tensor');
    // The hover at the other tensor answered: the old page's click selected what it found.
    assert.equal(await hoverAt(page, LAYOUT, other, 'data-hover-tensor'), other.id);
    // In one task of the page: the pointer moves to a, clicks there, and moves back on (its hover
    // answers come after the click, as on a page whose worker is busy).
    await pointerTask(page, LAYOUT, [['pointermove', a.x, a.y], ['pointerdown', a.x, a.y], ['pointerup', a.x, a.y], ['pointermove', other.x, other.y]]);
    assert.equal(await tensorPicked(page, [a.id, other.id]), a.id, `the click at %${a.id}T selects it (the last hover had found %${other.id}T)`);
    assert.equal(await page.getAttribute(LAYOUT, 'data-click-tensor'), String(a.id));
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('SOMAS frame: a click (a tap: no move before it) selects the tensor under its own point, not the one last hovered', async () => {
  const b = await openBrowser();
  try {
    const page = await openSomas(b);
    assert.equal(await hashTensor(page), null, 'no tensor is selected yet');
    const strip = page.locator(STRIP);
    await strip.scrollIntoViewIfNeeded();
    const box = await strip.boundingBox();
    const y = box.height / 2;
    // The strip finds the tensor under the pointer itself (its frame is at hand): the tooltip names
    // it at once. Two different tensors, each also under the points 2 px either side.
    const at = async (x) => {
      await page.mouse.move(box.x + x, box.y + y);
      const tip = page.locator('[data-testid="tooltip"]');
      if (await tip.isHidden()) return -1;
      const m = /^%(\d+)T/.exec(await tip.textContent());
      return m ? Number(m[1]) : -1;
    };
    const found = [];
    for (let k = 1; k < 40 && found.length < 2; k++) {
      const x = (box.width * k) / 40;
      const id = await at(x);
      if (id < 0 || found.some((f) => f.id === id)) continue;
      if ((await at(x - 2)) === id && (await at(x + 2)) === id) found.push({ x, id });
    }
    assert.equal(found.length, 2, `two tensors on the strip: ${JSON.stringify(found)}`);
    const [a, other] = found;
    assert.equal(await at(other.x), other.id, 'the pointer rests on the other tensor');
    await pointerTask(page, STRIP, [['click', a.x, y]]);
    assert.equal(await tensorPicked(page, [a.id, other.id]), a.id, `the click at %${a.id}T selects it (the pointer had last been over %${other.id}T)`);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

// ---- the memory snapshot tab --------------------------------------------------------------------

// The snapshot tab keeps the table shown before on screen until the table asked for has its first
// rows (www/snapshot/tables.js). A click on a row of that old table acted as a click on the new
// one: a row of the peak table, clicked once Allocations was asked for, selected as an allocation
// the element whose id that peak row had. The old table now says it is busy, takes no click, and
// the click selects nothing; once the new table is in, its rows select as before. The worker's
// answers come 600 ms late (`?answerDelay`), so the click certainly lands before the new table.
/**
 * Waits until the element `sel` has faded (the rows of the data before, while the data asked for
 * is on its way), then takes a screenshot of the section `shot` as `name`.png, for a human to
 * look at.
 */
async function fadedShot(page, sel, shot, name) {
  await page.waitForFunction((s) => Number(getComputedStyle(document.querySelector(s)).opacity) < 0.5, sel, { timeout: 10000 });
  mkdirSync(SHOTS, { recursive: true });
  await page.locator(shot).screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

test('snapshot: a row of the table being replaced selects nothing; the old table is marked busy until the new one is in', async () => {
  const snap = path.join(root, 'fixtures', 'snapshots', 'cs336_tiny_mem_snapshot.pickle');
  const { browser: b, page } = await openSample(server, [{ path: path.basename(snap), base64: readFileSync(snap).toString('base64') }], { view: 'snapshot', query: 'answerDelay=600' });
  try {
    const box = '#snap-tables .snap-table-box';
    const rows = '#snap-tables [data-testid="snapshot-row"]';
    await page.waitForFunction((sel) => document.getElementById('snap-tables')?.dataset.table === 'peak' && document.querySelector(sel), rows, { timeout: 60000 });
    await page.locator('#snap-tables').scrollIntoViewIfNeeded();
    const element = () => page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('n.el'));
    const before = await element();
    const old = page.locator(rows).first();
    const oldId = await old.getAttribute('data-id');
    const at = await old.boundingBox();
    assert.equal(await page.getAttribute(box, 'aria-busy'), null, 'the peak table, shown, is not busy');
    await page.click('#snap-tables [data-table="allocations"]');
    // Still the peak table's row, under the pointer, while the allocations are on their way.
    assert.equal(await page.getAttribute('#snap-tables', 'data-table'), 'peak');
    assert.equal(await page.getAttribute(box, 'aria-busy'), 'true');
    await page.mouse.click(at.x + at.width / 2, at.y + at.height / 2);
    assert.equal(await element(), before, `a click on the peak table's row ${oldId} selected no allocation`);
    // It fades (after 150 ms, so that a quick answer does not flash it): for a human to look at.
    await fadedShot(page, box, '#snap-tables', 'snapshot-table-switching-light');
    await page.waitForFunction(() => document.getElementById('snap-tables').dataset.table === 'allocations', null, { timeout: 60000 });
    assert.equal(await page.getAttribute(box, 'aria-busy'), null, 'the allocations, shown, are not busy');
    assert.equal(await element(), before, 'the old click did not come through later');
    assert.deepEqual(await page.$$eval(`${rows}.selected`, (r) => r.map((x) => x.dataset.id)), []);
    // The new table's rows select their allocation.
    const row = page.locator(rows).first();
    const id = await row.getAttribute('data-id');
    await row.click();
    await page.waitForFunction((want) => new URLSearchParams(location.hash.slice(1)).get('n.el') === want, id, { timeout: 30000 });
    // The same in the dark, the segments asked for after the allocations.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.click('#snap-tables [data-table="segments"]');
    assert.equal(await page.getAttribute(box, 'aria-busy'), 'true');
    await fadedShot(page, box, '#snap-tables', 'snapshot-table-switching-dark');
    await page.waitForFunction(() => document.getElementById('snap-tables').dataset.table === 'segments', null, { timeout: 60000 });
    assert.equal(await page.getAttribute(box, 'aria-busy'), null);
    assert.equal(Number(await page.$eval(box, (n) => getComputedStyle(n).opacity)), 1);
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

// ---- the torch_npu allocation table -------------------------------------------------------------

// The allocation table keeps the rank shown before on screen until the new rank's first rows are
// in. A click on one of those rows selected the row of the same number in the new rank (another
// allocation). Both windows are checked: before the table has asked for the new rank (its update
// waits for the next frame) and after it has, while the answer is on its way (600 ms late).
test('profiler: a row of the rank shown before, clicked once another rank is asked for, selects nothing', async () => {
  const { browser: b, page } = await openSample(server, filesUnder(path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text')), { view: 'ascend', query: 'answerDelay=600' });
  try {
    const table = '[data-testid="ascend-table"]';
    const rows = `${table} [data-testid="alloc-row"]`;
    await page.waitForFunction(([t, r]) => document.querySelector(t)?.dataset.state === 'ready' && document.querySelector(r), [table, rows], { timeout: 120000 });
    const ranks = await page.$$eval('[data-testid="rank-select"] option', (o) => o.map((x) => x.value));
    assert.ok(ranks.length >= 2, 'the sample has two ranks');
    assert.equal(await page.getAttribute(table, 'data-rank'), ranks[0]);
    const picked = () => page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('row') || null);
    assert.equal(await picked(), null);
    const old = page.locator(rows).nth(3);
    await old.scrollIntoViewIfNeeded();
    const oldId = await old.getAttribute('data-row');
    const at = await old.boundingBox();
    const click = () => page.mouse.click(at.x + at.width / 2, at.y + at.height / 2);
    // Before the table has asked for the new rank.
    await page.selectOption('[data-testid="rank-select"]', ranks[1]);
    await click();
    assert.equal(await picked(), null, `rank ${ranks[0]}'s row ${oldId} selected nothing in rank ${ranks[1]}`);
    // After it has: its rows say they are the data before, and take no click.
    await page.waitForFunction((t) => document.querySelector(`${t} .vt`).getAttribute('aria-busy') === 'true', table, { timeout: 30000 });
    assert.equal(await page.getAttribute(table, 'data-rank'), ranks[0], 'the rows are still the first rank\'s');
    assert.equal(await page.locator(rows).nth(3).getAttribute('data-row'), oldId);
    await click();
    assert.equal(await picked(), null, `rank ${ranks[0]}'s row ${oldId}, clicked while rank ${ranks[1]}'s rows were on their way, selected nothing`);
    await fadedShot(page, `${table} .vt-rows`, '#ascend-table', 'profiler-table-refreshing-light');
    await page.waitForFunction(([t, want]) => document.querySelector(t).dataset.state === 'ready' && document.querySelector(t).dataset.rank === want, [table, ranks[1]], { timeout: 60000 });
    assert.equal(await page.$eval(`${table} .vt`, (v) => v.getAttribute('aria-busy')), null);
    assert.equal(await picked(), null, 'no old click came through later');
    // The new rank's rows select.
    const row = page.locator(rows).nth(2);
    const id = await row.getAttribute('data-row');
    await row.click();
    await page.waitForFunction((want) => new URLSearchParams(location.hash.slice(1)).get('row') === want, id, { timeout: 30000 });
    // The same in the dark, back to the first rank.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.selectOption('[data-testid="rank-select"]', ranks[0]);
    await page.waitForFunction((t) => document.querySelector(`${t} .vt`).getAttribute('aria-busy') === 'true', table, { timeout: 30000 });
    await fadedShot(page, `${table} .vt-rows`, '#ascend-table', 'profiler-table-refreshing-dark');
    await page.waitForFunction(([t, want]) => document.querySelector(t).dataset.state === 'ready' && document.querySelector(t).dataset.rank === want, [table, ranks[0]], { timeout: 60000 });
    assert.equal(Number(await page.$eval(`${table} .vt-rows`, (n) => getComputedStyle(n).opacity)), 1);
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
