// The memory-snapshot tab against the CLI: the real samples (one also in its JSON form) and
// generated snapshots (several devices, OOMs, expandable segments, the torch-2.0 layout in a file
// named .json) are recognised
// and show the figures `memlens snapshot --json` prints; a broken snapshot shows the CLI's error
// while the other files of the drop still open; hover shows an allocation's size and stack, a
// click selects it, a group row highlights its allocations in both charts; every export equals
// `--out` byte for byte on the threaded and single-threaded engines and in the offline file; no
// request leaves the origin; screenshots at 1440×900 and 1024×700, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, SHOTS, openBrowser, startServer, foreignRequests, engineThreads, dropFiles, pageUnits, cliUnits, sorted, readTree, pointerTask, hoverAt, twoItems } from './harness.mjs';

const FIX = path.join(root, 'fixtures', 'snapshots');
const TINY = 'cs336_tiny_mem_snapshot.pickle';
const MEDIUM = 'cs336_medium_128_training_memory_snapshot.pickle';
const OLD_JSON = 'generated_torch20_p2.json';
// The tiny sample saved with json.dump (the JSON form some tools write for web viewers).
const TINY_JSON = 'cs336_tiny_mem_snapshot.json';
let isolated;
let plain;
let tmp;
let gen; // a generated snapshot: 2 devices, OOMs, expandable segments

function cli(rel, cwd) {
  const r = spawnSync(CLI, ['snapshot', rel, '--json'], { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  // The CLI prefixes its errors with `memlens: `; the page shows the diagnostic itself.
  if (r.status !== 0) return { error: r.stderr.trim().replace(/^memlens: /, ''), status: r.status };
  return { json: JSON.parse(r.stdout), text: r.stdout };
}

/**
 * A minimal pickle (protocol 2, no memo) of a JavaScript value made of objects, arrays, strings
 * and non-negative integers: enough to write a small snapshot with chosen names.
 */
function pickle(value) {
  const out = [Buffer.from([0x80, 2])];
  const put = (v) => {
    if (typeof v === 'string') {
      const b = Buffer.from(v, 'utf8');
      const len = Buffer.alloc(4);
      len.writeUInt32LE(b.length);
      out.push(Buffer.from('X'), len, b);
    } else if (typeof v === 'number') {
      const b = Buffer.alloc(8);
      b.writeBigInt64LE(BigInt(v));
      out.push(Buffer.from([0x8a, 8]), b);
    } else if (Array.isArray(v)) {
      out.push(Buffer.from(']('));
      v.forEach(put);
      out.push(Buffer.from('e'));
    } else {
      out.push(Buffer.from('}('));
      for (const [k, x] of Object.entries(v)) {
        put(k);
        put(x);
      }
      out.push(Buffer.from('u'));
    }
  };
  put(value);
  out.push(Buffer.from('.'));
  return Buffer.concat(out);
}

function entry(rel, full) {
  return { path: rel, base64: readFileSync(full).toString('base64') };
}

async function fresh(page, url, hash = '') {
  await page.goto('about:blank');
  await page.goto(url + hash);
  await engineThreads(page);
}

/** Waits for the snapshot tab to finish opening a file; returns its state. */
async function snapSettled(page, timeout = 120000) {
  await page.waitForFunction(() => {
    const s = document.querySelector('[data-testid="snapshot"]');
    return s && ['ready', 'error', 'empty'].includes(s.dataset.state);
  }, null, { timeout });
  return page.getAttribute('[data-testid="snapshot"]', 'data-state');
}

async function metrics(page) {
  const all = await page.$$eval('[data-metric^="snapshot-"]', (els) => els.map((e) => [e.dataset.metric, e.dataset.value]));
  return Object.fromEntries(all);
}

function expectedMetrics(d) {
  return {
    'snapshot-reserved-bytes': String(d.reserved_bytes),
    'snapshot-allocated-bytes': String(d.allocated_bytes),
    'snapshot-peak-bytes': String(d.peak_allocated_bytes),
    'snapshot-segments': String(d.segments),
    'snapshot-blocks': String(d.blocks),
    'snapshot-entries': String(d.trace_entries),
    'snapshot-ooms': String(d.oom_events),
    'snapshot-largest-free-block': String(d.largest_free_block),
  };
}

/** Waits for both charts to have drawn an answer. */
async function drawn(page) {
  await page.waitForFunction(() => ['timeline', 'state'].every((v) => Number(document.getElementById(`snap-${v}`)?.dataset.rendered || 0) > 0), null, { timeout: 60000 });
}

async function exportFile(page, name) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="snapshot-export"] [data-file="${name}"]`)]);
  return readFileSync(await dl.path());
}

before(async () => {
  isolated = await startServer({ isolate: true });
  plain = await startServer({ isolate: false });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-snapshot-page-'));
  mkdirSync(path.join(tmp, 'snaps'));
  for (const f of [TINY, MEDIUM, OLD_JSON, TINY_JSON]) writeFileSync(path.join(tmp, 'snaps', f), readFileSync(path.join(FIX, f)));
  const g = path.join(tmp, 'snaps', 'gen.pickle');
  execFileSync(CLI, ['generate', 'snapshot', '--size-mb', '3', '--devices', '2', '--ooms', '2', '--expandable', '--seed', '3', '--out', g]);
  gen = g;
  // A truncated copy of the tiny sample.
  const full = readFileSync(path.join(FIX, TINY));
  writeFileSync(path.join(tmp, 'snaps', 'broken.pickle'), full.subarray(0, 40000));
});

after(async () => {
  await isolated.close();
  await plain.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('the samples and a generated snapshot show the figures of memlens snapshot --json; classification equals inspect', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    for (const name of [TINY, MEDIUM, 'gen.pickle', TINY_JSON]) {
      await fresh(page, isolated.url);
      await dropFiles(page, [entry(`snaps/${name}`, path.join(tmp, 'snaps', name))]);
      assert.equal(await snapSettled(page), 'ready', name);
      const { json } = cli(`snaps/${name}`, tmp);
      for (const [dev, d] of Object.entries(json.devices)) {
        if (dev !== String(Object.keys(json.devices)[0])) {
          await page.selectOption('[data-testid="snapshot-device"]', dev);
          await page.waitForFunction((v) => document.querySelector('[data-metric="snapshot-entries"]')?.dataset.value === v, String(d.trace_entries));
        }
        assert.deepEqual(await metrics(page), expectedMetrics(d), `${name} device ${dev}`);
      }
      await drawn(page);
      // The file line names the form: the pickle's protocol, or JSON.
      const form = name === TINY_JSON ? ', JSON, keys segments' : ', pickle protocol ';
      assert.ok((await page.textContent('[data-testid="snapshot"]')).includes(form), name);
    }
    // Classification: the page and inspect agree on the whole folder (a .json pickle and a JSON
    // snapshot included).
    await fresh(page, isolated.url);
    const drop = [TINY, MEDIUM, OLD_JSON, TINY_JSON, 'gen.pickle', 'broken.pickle'].map((n) => entry(`snaps/${n}`, path.join(tmp, 'snaps', n)));
    await dropFiles(page, drop);
    await snapSettled(page);
    const units = sorted(await pageUnits(page));
    assert.deepEqual(units, sorted(cliUnits(path.join(tmp, 'snaps'))));
    assert.equal(units.filter((u) => u.kind === 'snapshot').length, 6);
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a broken snapshot shows the error of the CLI; the other files of the drop still open', async () => {
  const bad = cli('snaps/broken.pickle', tmp);
  assert.equal(bad.status, 2);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    const drop = ['broken.pickle', OLD_JSON].map((n) => entry(`snaps/${n}`, path.join(tmp, 'snaps', n)));
    await dropFiles(page, drop);
    assert.equal(await snapSettled(page), 'error');
    assert.equal(await page.getAttribute('[data-testid="snapshot"]', 'data-file'), 'snaps/broken.pickle');
    assert.equal(await page.textContent('[data-testid="snapshot-error"]'), `This snapshot cannot be read: ${bad.error}`);
    await page.selectOption('[data-testid="snapshot-file"]', '1');
    await page.waitForFunction(() => document.querySelector('[data-testid="snapshot"]').dataset.file === 'snaps/generated_torch20_p2.json');
    assert.equal(await snapSettled(page), 'ready');
    const { json } = cli(`snaps/${OLD_JSON}`, tmp);
    assert.deepEqual(await metrics(page), expectedMetrics(json.devices['0']));
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('hover shows size and stack; a click selects; a group row highlights its allocations in both charts', async () => {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry(`snaps/${MEDIUM}`, path.join(tmp, 'snaps', MEDIUM))]);
    assert.equal(await snapSettled(page), 'ready');
    await drawn(page);
    const canvas = page.locator('[data-testid="snapshot-timeline"]');
    await canvas.scrollIntoViewIfNeeded();
    const box = await canvas.boundingBox();
    const [left, top, w, h] = (await canvas.getAttribute('data-area')).split(',').map(Number);
    // Low in the stack, at the middle of the trace: an allocation is there.
    await page.mouse.move(box.x + left + w * 0.5, box.y + top + h * 0.9);
    await page.waitForSelector('[data-testid="tooltip"]:not([hidden])', { timeout: 20000 });
    const tip = await page.textContent('[data-testid="tooltip"]');
    assert.match(tip, / at 0x[0-9a-f]+/);
    assert.match(tip, /group/);
    await page.mouse.click(box.x + left + w * 0.5, box.y + top + h * 0.9);
    await page.waitForFunction(() => /n\.el=\d+/.test(location.hash));
    await page.waitForFunction(() => document.getElementById('snap-detail').dataset.selected);
    const selected = await page.getAttribute('#snap-detail', 'data-selected');
    assert.ok(tip.includes(selected), `${selected} in ${tip}`);
    // A group row of the at-the-peak table highlights: both charts are drawn again.
    const before = await page.evaluate(() => ['timeline', 'state'].map((v) => Number(document.getElementById(`snap-${v}`).dataset.rendered)));
    const current = /n\.g=(\d+)/.exec(await page.evaluate(() => location.hash))[1];
    await page.waitForSelector('#snap-tables [data-testid="snapshot-row"]');
    const row = page.locator(`#snap-tables [data-testid="snapshot-row"]:not([data-group="${current}"])`).first();
    await row.click();
    await page.waitForFunction((b0) => ['timeline', 'state'].every((v, i) => Number(document.getElementById(`snap-${v}`).dataset.rendered) > b0[i]), before);
    assert.match(await page.evaluate(() => location.hash), /n\.g=\d+/);
    // The tables filter in the engine.
    await page.click('#snap-tables [data-table="allocations"]');
    await page.waitForFunction(() => document.getElementById('snap-tables').dataset.table === 'allocations');
    const all = Number(await page.getAttribute('#snap-tables', 'data-total'));
    await page.fill('[data-testid="snapshot-table-filter"]', 'optimizer.py');
    await page.waitForFunction((n) => Number(document.getElementById('snap-tables').dataset.total) < n, all);
    assert.ok(Number(await page.getAttribute('#snap-tables', 'data-total')) > 0);
    // A row of the filtered allocations selects it: its stack shows, the grouping frame in it.
    await page.waitForSelector('#snap-tables [data-testid="snapshot-row"]');
    await page.locator('#snap-tables [data-testid="snapshot-row"]').first().click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="snapshot-frame"]').length > 0);
    const grouping = await page.textContent('[data-testid="snapshot-frame"].top-frame');
    assert.match(grouping, /optimizer\.py:\d+ step/);
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a click on either chart selects what is under its own point, not what the last hover found there', async () => {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry(`snaps/${MEDIUM}`, path.join(tmp, 'snaps', MEDIUM))]);
    assert.equal(await snapSettled(page), 'ready');
    await drawn(page);
    const hashed = async (key) => new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get(key);
    // The timeline's allocations (n.el in the hash), then the allocator state's blocks (n.bl).
    for (const [sel, attr, key] of [['[data-testid="snapshot-timeline"]', 'data-hover-element', 'n.el'], ['[data-testid="snapshot-state"]', 'data-hover-block', 'n.bl']]) {
      assert.equal(await hashed(key), null, `nothing of ${key} is selected yet`);
      const [a, other] = await twoItems(page, sel, attr);
      // The hover at the other item answered: the old page's click selected what it found.
      assert.equal(await hoverAt(page, sel, other, attr), other.id);
      // In one task of the page: the pointer moves to a, clicks there and moves back on, so the
      // worker answers the hover at a only after the click.
      await pointerTask(page, sel, [['pointermove', a.x, a.y], ['pointerdown', a.x, a.y], ['pointerup', a.x, a.y], ['pointermove', other.x, other.y]]);
      await page.waitForFunction(([k, ids]) => ids.includes(Number(new URLSearchParams(location.hash.slice(1)).get(k))), [key, [a.id, other.id]], { timeout: 30000 });
      assert.equal(Number(await hashed(key)), a.id, `${sel}: the click at ${a.id} selects it (the last hover had found ${other.id})`);
      await page.mouse.move(0, 0);
    }
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a hover answered after the pointer left either chart shows no tooltip', async () => {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry(`snaps/${MEDIUM}`, path.join(tmp, 'snaps', MEDIUM))]);
    assert.equal(await snapSettled(page), 'ready');
    await drawn(page);
    const tipShown = () => page.evaluate(() => {
      const t = document.querySelector('[data-testid="tooltip"]');
      return !!t && !t.hidden;
    });
    for (const [sel, attr] of [['[data-testid="snapshot-state"]', 'data-hover-block'], ['[data-testid="snapshot-timeline"]', 'data-hover-element']]) {
      const [a] = await twoItems(page, sel, attr);
      // A hover there shows a tooltip (the point is over an item), and leaving hides it.
      assert.equal(await hoverAt(page, sel, a, attr), a.id);
      assert.equal(await tipShown(), true, `${sel}: a hover over ${a.id} shows its tooltip`);
      await page.mouse.move(0, 0);
      assert.equal(await tipShown(), false);
      // In one task of the page: the pointer moves over the item and leaves the chart, so the
      // worker answers the hover only after the leave. The old allocator-state chart showed the
      // answer's tooltip then, for a pointer no longer there.
      const n = Number((await page.getAttribute(sel, 'data-hovers')) || 0);
      await pointerTask(page, sel, [['pointermove', a.x, a.y], ['pointerleave', a.x, a.y]]);
      await page.waitForFunction(([s, k]) => Number(document.querySelector(s).dataset.hovers || 0) > k, [sel, n], { timeout: 30000 });
      assert.equal(await tipShown(), false, `${sel}: no tooltip after the pointer left (the late answer was about ${a.id})`);
    }
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a table row clicked, then another allocation picked on the timeline: only the pick is marked; the segments table marks its clicked row', async () => {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry(`snaps/${MEDIUM}`, path.join(tmp, 'snaps', MEDIUM))]);
    assert.equal(await snapSettled(page), 'ready');
    await drawn(page);
    const hashed = async (key) => new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get(key);
    const marked = () => page.$$eval('#snap-tables [data-testid="snapshot-row"].selected', (rows) => rows.map((r) => r.dataset.id));
    const line = '[data-testid="snapshot-timeline"]';
    // Two allocations on the timeline, found before any is picked.
    const items = await twoItems(page, line, 'data-hover-element');
    await page.mouse.move(0, 0);
    await page.click('#snap-tables [data-table="allocations"]');
    await page.waitForFunction(() => document.getElementById('snap-tables').dataset.table === 'allocations');
    await page.waitForSelector('#snap-tables [data-testid="snapshot-row"]');
    // A row of the allocations table that is neither timeline item is clicked: it alone is marked.
    const ids = await page.$$eval('#snap-tables [data-testid="snapshot-row"]', (rows) => rows.map((r) => r.dataset.id));
    const clicked = ids.find((id) => !items.some((it) => String(it.id) === id));
    await page.click(`#snap-tables [data-testid="snapshot-row"][data-id="${clicked}"]`);
    await page.waitForFunction((e) => new URLSearchParams(location.hash.slice(1)).get('n.el') === e, clicked, { timeout: 30000 });
    assert.deepEqual(await marked(), [clicked]);
    // Then an allocation is picked on the timeline: the clicked row is no longer marked (the old
    // page kept it marked beside the pick's row), and the pick's row is, if it is in view.
    const pick = items[0];
    await page.$eval(line, (n) => n.scrollIntoView({ block: 'center', behavior: 'instant' }));
    const box = await page.locator(line).boundingBox();
    await page.mouse.click(box.x + pick.x, box.y + pick.y);
    await page.waitForFunction((e) => new URLSearchParams(location.hash.slice(1)).get('n.el') === e, String(pick.id), { timeout: 30000 });
    assert.equal(await hashed('n.el'), String(pick.id));
    const shown = await page.$$eval('#snap-tables [data-testid="snapshot-row"]', (rows) => rows.map((r) => r.dataset.id));
    assert.deepEqual(await marked(), shown.includes(String(pick.id)) ? [String(pick.id)] : [], `only the timeline's pick ${pick.id} is marked, not the row clicked before (${clicked})`);
    // The segments have no selection of their own: the row clicked last is marked, and only it.
    await page.click('#snap-tables [data-table="segments"]');
    await page.waitForFunction(() => document.getElementById('snap-tables').dataset.table === 'segments');
    await page.waitForSelector('#snap-tables [data-testid="snapshot-row"]');
    const segs = page.locator('#snap-tables [data-testid="snapshot-row"]');
    assert.ok((await segs.count()) >= 2, 'two segments at least');
    for (const k of [1, 0]) {
      const id = await segs.nth(k).getAttribute('data-id');
      await segs.nth(k).click();
      await page.waitForFunction((i) => document.querySelector(`#snap-tables [data-testid="snapshot-row"][data-id="${i}"]`)?.classList.contains('selected'), id, { timeout: 30000 });
      assert.deepEqual(await marked(), [id], `the segment row clicked (${id}) is marked`);
    }
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a table row clicked, then another allocation picked on the timeline: the keyboard cursor leaves the clicked row, the arrows go on from the pick, the cursor is drawn only while the table has the focus', async () => {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry(`snaps/${MEDIUM}`, path.join(tmp, 'snaps', MEDIUM))]);
    assert.equal(await snapSettled(page), 'ready');
    await drawn(page);
    const ROW = '#snap-tables [data-testid="snapshot-row"]';
    const elementIs = (e) => page.waitForFunction((x) => new URLSearchParams(location.hash.slice(1)).get('n.el') === x, e, { timeout: 30000 });
    const cursors = () => page.$$eval(`${ROW}.cursor`, (rows) => rows.map((r) => ({ id: r.dataset.id, index: Number(r.dataset.index) })));
    const idAt = (index) => page.$eval(`${ROW}[data-index="${index}"]`, (r) => r.dataset.id);
    const outline = (id) => page.$eval(`${ROW}[data-id="${id}"]`, (r) => getComputedStyle(r).outlineStyle);
    // The allocation picked: the lowest on the timeline (a block held from before the trace, early
    // in the table's order, so among the rows the table fetched first, though not in its view).
    const line = '[data-testid="snapshot-timeline"]';
    await page.$eval(line, (n) => n.scrollIntoView({ block: 'center', behavior: 'instant' }));
    const [left, top, w, h] = (await page.getAttribute(line, 'data-area')).split(',').map(Number);
    let pick = null;
    for (const fy of [0.97, 0.93, 0.9, 0.85]) {
      const p = { x: left + w * 0.5, y: top + h * fy };
      const id = await hoverAt(page, line, p, 'data-hover-element');
      if (id >= 0) {
        pick = { ...p, id: String(id) };
        break;
      }
    }
    assert.ok(pick, 'an allocation along the bottom of the timeline');
    await page.mouse.move(0, 0);
    await page.click('#snap-tables [data-table="allocations"]');
    await page.waitForFunction(() => document.getElementById('snap-tables').dataset.table === 'allocations');
    await page.waitForSelector(ROW);
    // A row in the table's view that is not the pick is clicked: the cursor is on it.
    const clicked = await page.$eval(ROW, (r) => r.dataset.id);
    assert.notEqual(clicked, pick.id);
    await page.click(`${ROW}[data-id="${clicked}"]`);
    await elementIs(clicked);
    assert.deepEqual((await cursors()).map((c) => c.id), [clicked]);
    // Then the allocation is picked on the timeline: the cursor leaves the row clicked before (the
    // old page left it there, so the arrows went on from that row).
    await page.$eval(line, (n) => n.scrollIntoView({ block: 'center', behavior: 'instant' }));
    const box = await page.locator(line).boundingBox();
    await page.mouse.click(box.x + pick.x, box.y + pick.y);
    await elementIs(pick.id);
    await page.waitForFunction((s) => !document.querySelector(s)?.classList.contains('selected'), `${ROW}[data-id="${clicked}"]`, { timeout: 30000 });
    assert.deepEqual((await cursors()).filter((c) => c.id !== pick.id), [], `the cursor is on the timeline's pick ${pick.id} if anywhere, not on the row clicked before (${clicked})`);
    // The keys go on from the pick: ArrowDown moves to the row after it (the table scrolls there),
    // Enter selects that row; ArrowUp and Enter select the pick again.
    await page.focus('#snap-tables .vt-viewport');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction((s) => document.querySelector(`${s}.cursor`), ROW);
    const [next] = await cursors();
    assert.equal(await idAt(next.index - 1), pick.id, `ArrowDown went to position ${next.index}, the row after the pick's`);
    await page.keyboard.press('Enter');
    await elementIs(next.id);
    await page.keyboard.press('ArrowUp');
    assert.deepEqual(await cursors(), [{ id: pick.id, index: next.index - 1 }]);
    await page.keyboard.press('Enter');
    await elementIs(pick.id);
    // The dashed cursor is drawn while the table has the focus, not once the focus went elsewhere
    // (the row keeps its selected fill).
    assert.equal(await outline(pick.id), 'dashed', 'the cursor is drawn while the table has the focus');
    await page.focus('[data-testid="snapshot-table-filter"]');
    assert.equal(await outline(pick.id), 'none', 'no cursor drawn while the table has no focus');
    assert.ok(await page.$eval(`${ROW}[data-id="${pick.id}"]`, (r) => r.classList.contains('selected')));
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('an allocation picked on the timeline far down the allocations table: the table scrolls to it with the cursor on it, sorted or not; the keys go on from it; a filter that hides it says so', async () => {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry(`snaps/${MEDIUM}`, path.join(tmp, 'snaps', MEDIUM))]);
    assert.equal(await snapSettled(page), 'ready');
    await drawn(page);
    const ROW = '#snap-tables [data-testid="snapshot-row"]';
    const line = '[data-testid="snapshot-timeline"]';
    const elementIs = (e) => page.waitForFunction((x) => new URLSearchParams(location.hash.slice(1)).get('n.el') === x, e, { timeout: 30000 });
    // The row of `id`, once it is fetched, marked and has the cursor: its view position, and
    // whether it lies wholly inside the table's viewport.
    // Looked at in the one step that finds it: a table made again between a wait and a second
    // look left nothing to look at (a flaky failure, seen once in a clean clone).
    const revealed = async (id) => {
      const found = await page.waitForFunction((s) => {
        const r = document.querySelector(s);
        if (!r?.classList.contains('cursor')) return null;
        const v = r.closest('.vt').querySelector('.vt-viewport').getBoundingClientRect();
        const b = r.getBoundingClientRect();
        return { index: Number(r.dataset.index), inside: b.top >= v.top && b.bottom <= v.bottom };
      }, `${ROW}[data-id="${id}"].selected`, { timeout: 30000 });
      return found.jsonValue();
    };
    const cursors = () => page.$$eval(`${ROW}.cursor`, (rows) => rows.map((r) => r.dataset.id));
    const status = () => page.$eval('#snap-tables .vt-status', (n) => n.textContent);
    // An allocation late in the trace: high on the stack towards the right of the timeline. The
    // table lists the allocations in element order, 200 rows a page: its row is far past the rows
    // fetched.
    await page.$eval(line, (n) => n.scrollIntoView({ block: 'center', behavior: 'instant' }));
    const [left, top, w, h] = (await page.getAttribute(line, 'data-area')).split(',').map(Number);
    let pick = null;
    for (const fx of [0.9, 0.8, 0.7, 0.6, 0.5]) {
      for (const fy of [0.15, 0.3, 0.45, 0.6]) {
        const p = { x: left + w * fx, y: top + h * fy };
        const id = await hoverAt(page, line, p, 'data-hover-element');
        if (id >= 1000) pick = { ...p, id: String(id) };
        if (pick) break;
      }
      if (pick) break;
    }
    assert.ok(pick, 'an allocation past the first 1000 elements on the timeline');
    await page.mouse.move(0, 0);
    await page.click('#snap-tables [data-table="allocations"]');
    await page.waitForFunction(() => document.getElementById('snap-tables').dataset.table === 'allocations');
    await page.waitForSelector(ROW);
    assert.equal(await page.$(`${ROW}[data-id="${pick.id}"]`), null, 'the pick\'s row is not among the rows shown before the pick');
    // The pick: the table scrolls to its row (the old page stayed at the top, the row unfetched).
    await page.$eval(line, (n) => n.scrollIntoView({ block: 'center', behavior: 'instant' }));
    const box = await page.locator(line).boundingBox();
    await page.mouse.click(box.x + pick.x, box.y + pick.y);
    await elementIs(pick.id);
    const at = await revealed(pick.id);
    assert.deepEqual(at, { index: Number(pick.id), inside: true }, `element ${pick.id} at its own position in the unsorted table, in view`);
    assert.deepEqual(await cursors(), [pick.id]);
    // The keys go on from the pick: ArrowDown is the next row, Enter selects it.
    await page.focus('#snap-tables .vt-viewport');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction((s) => document.querySelector(s)?.dataset.id !== undefined, `${ROW}.cursor`);
    const next = await page.$eval(`${ROW}.cursor`, (r) => ({ id: r.dataset.id, index: Number(r.dataset.index) }));
    assert.equal(next.index, at.index + 1, 'ArrowDown moved to the row after the pick');
    await page.keyboard.press('Enter');
    await elementIs(next.id);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    await elementIs(pick.id);
    // Sorted by size, largest first: the table, made again, shows the pick where the sort puts it.
    // The header's click marks the old table sorted at once; the sorted table replaces it after
    // the worker's first page, and until then the old table still holds the pick's row.
    const unsorted = await page.$('#snap-tables .vt');
    await page.click('#snap-tables .vt-head [role="columnheader"]:nth-child(2)');
    await page.waitForFunction((old) => !old.isConnected && document.querySelector('#snap-tables .vt-head [aria-sort="descending"]'), unsorted, { timeout: 30000 });
    const sorted = await revealed(pick.id);
    assert.ok(sorted.inside, 'the pick is in view in the sorted table');
    await page.focus('#snap-tables .vt-viewport');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction((i) => document.querySelector(`#snap-tables [data-testid="snapshot-row"].cursor[data-index="${i}"]`), sorted.index + 1, { timeout: 30000 });
    await page.keyboard.press('ArrowUp');
    // A filter that hides the pick: the status line says so; cleared, the pick is shown again.
    const frame = await page.$eval(`${ROW}[data-id="${pick.id}"]`, (r) => r.children[r.children.length - 1].textContent.toLowerCase());
    const others = await page.$$eval(ROW, (rows) => rows.map((r) => r.children[r.children.length - 1].textContent));
    const hide = others.find((f) => f && !frame.includes(f.toLowerCase()));
    assert.ok(hide, `a frame among the rows shown that the pick's (${frame}) does not contain`);
    await page.fill('[data-testid="snapshot-table-filter"]', hide);
    await page.waitForFunction(() => /hidden by the filter/.test(document.querySelector('#snap-tables .vt-status')?.textContent || ''), null, { timeout: 30000 });
    assert.match(await status(), /^[\d,]+ rows? · the selected allocation is hidden by the filter$/);
    assert.equal(await page.$(`${ROW}[data-id="${pick.id}"]`), null);
    await page.fill('[data-testid="snapshot-table-filter"]', '');
    assert.ok((await revealed(pick.id)).inside);
    assert.doesNotMatch(await status(), /hidden/);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('an allocation picked, then another device chosen before its answer came: the new device’s timeline marks nothing', async () => {
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry('snaps/gen.pickle', gen)]);
    assert.equal(await snapSettled(page), 'ready');
    await drawn(page);
    const devices = await page.$$eval('[data-testid="snapshot-device"] option', (os) => os.map((o) => o.value));
    assert.equal(devices.length, 2, 'the generated snapshot has two devices');
    await page.click('#snap-tables [data-table="allocations"]');
    await page.waitForFunction(() => document.getElementById('snap-tables').dataset.table === 'allocations');
    await page.waitForSelector('#snap-tables [data-testid="snapshot-row"]');
    // Picked with nothing else after it, an allocation's entries are marked.
    // (Its group is highlighted too: the timeline is drawn again, which is waited for.)
    const rendered = () => page.getAttribute('#snap-timeline', 'data-rendered').then(Number);
    const r0 = await rendered();
    const first = page.locator('#snap-tables [data-testid="snapshot-row"]').first();
    const element = await first.getAttribute('data-id');
    await first.click();
    await page.waitForFunction(([e, n]) => {
      const t = document.getElementById('snap-timeline').dataset;
      return t.marked === e && Number(t.rendered) > n;
    }, [element, r0], { timeout: 30000 });
    // In one task of the page: another allocation's row, then the other device. The answer about
    // the allocation comes before the new device's timeline is drawn (answers keep their order;
    // a new group is drawn first), and the old page marked that allocation's entries on it.
    const r1 = await rendered();
    const { picked, draws } = await page.evaluate((dev) => {
      const row = document.querySelectorAll('#snap-tables [data-testid="snapshot-row"]')[1];
      const group = new URLSearchParams(location.hash.slice(1)).get('n.g');
      row.click();
      const sel = document.querySelector('[data-testid="snapshot-device"]');
      sel.value = dev;
      sel.dispatchEvent(new Event('change', { bubbles: true }));
      return { picked: row.dataset.id, draws: row.dataset.group === group ? 1 : 2 };
    }, devices[1]);
    assert.notEqual(picked, element);
    await page.waitForFunction((n) => Number(document.getElementById('snap-timeline').dataset.rendered) >= n, r1 + draws, { timeout: 30000 });
    assert.equal(await page.getAttribute('#snap-timeline', 'data-marked'), '', `no allocation is marked on device ${devices[1]} (the old page marked ${picked} of device ${devices[0]})`);
    assert.equal(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('n.el'), null, 'nothing is selected');
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('every export equals memlens snapshot --out, on the threaded and single-threaded engines and offline', async () => {
  const out = path.join(tmp, 'out');
  rmSync(out, { recursive: true, force: true });
  execFileSync(CLI, ['snapshot', 'snaps/gen.pickle', '--out', out], { cwd: tmp });
  const disk = readTree(out);
  assert.deepEqual(Object.keys(disk).sort(), ['allocations.csv', 'blocks.csv', 'live_at_peak_by_frame.csv', 'live_at_snapshot_by_frame.csv', 'ooms.csv', 'segments.csv', 'summary.json']);
  assert.ok(disk['summary.json'].equals(Buffer.from(cli('snaps/gen.pickle', tmp).text)));
  const b = await openBrowser();
  try {
    const page = await b.page();
    const offline = pathToFileURL(path.join(root, 'dist', 'memlens.html')).href;
    for (const [url, threaded] of [[isolated.url, true], [plain.url, false], [offline, false]]) {
      await fresh(page, url);
      assert.equal((await engineThreads(page)) > 1, threaded && (await page.evaluate(() => navigator.hardwareConcurrency)) > 1, url);
      await dropFiles(page, [entry('snaps/gen.pickle', gen)]);
      assert.equal(await snapSettled(page), 'ready');
      for (const name of Object.keys(disk)) assert.ok((await exportFile(page, name)).equals(disk[name]), `${name} differs (${url})`);
    }
    const local = b.requests.filter((u) => u.startsWith('file:'));
    assert.deepEqual(local.filter((u) => u !== offline), []);
    assert.deepEqual(foreignRequests(b.requests.filter((u) => !u.startsWith('file:')), isolated.origin).filter((u) => !u.startsWith(plain.origin)), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('frame names and file names with HTML and script render as text and run nothing', async () => {
  const IMG = '<img src=x onerror="window.__pwned=1">';
  const SCRIPT = '<script>window.__pwned=2</script>';
  const frame = { filename: `/home/u/${IMG}.py`, line: 7, name: SCRIPT };
  const snap = {
    segments: [{ device: 0, address: 4096, total_size: 2097152, allocated_size: 1048576, active_size: 1048576, requested_size: 1048576, stream: 0, segment_type: 'large',
      blocks: [{ address: 4096, size: 1048576, requested_size: 1048576, state: 'active_allocated', frames: [frame] },
        { address: 4096 + 1048576, size: 1048576, requested_size: 0, state: 'inactive', frames: [] }] }],
    device_traces: [[{ action: 'alloc', addr: 4096, size: 1048576, stream: 0, frames: [frame] }]],
  };
  const name = `snaps/<svg onload="window.__pwned=3">.pickle`;
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [{ path: name, base64: pickle(snap).toString('base64') }]);
    assert.equal(await snapSettled(page), 'ready');
    await drawn(page);
    const canvas = page.locator('[data-testid="snapshot-timeline"]');
    await canvas.scrollIntoViewIfNeeded();
    const box = await canvas.boundingBox();
    const [left, top, w, h] = (await canvas.getAttribute('data-area')).split(',').map(Number);
    await page.mouse.move(box.x + left + w * 0.5, box.y + top + h * 0.8);
    await page.waitForSelector('[data-testid="tooltip"]:not([hidden])', { timeout: 20000 });
    assert.ok((await page.textContent('[data-testid="tooltip"]')).includes(`${IMG}.py:7 ${SCRIPT}`));
    await page.mouse.click(box.x + left + w * 0.5, box.y + top + h * 0.8);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="snapshot-frame"]').length === 1);
    const seen = await page.evaluate(() => {
      const root = document.querySelector('[data-testid="snapshot"]');
      return {
        pwned: window.__pwned ?? 0,
        elements: [...document.querySelectorAll('main script, main img, main svg, main iframe, [data-testid="tooltip"] img')].map((e) => e.outerHTML),
        frame: document.querySelector('[data-testid="snapshot-frame"]').textContent,
        picker: root.querySelector('[data-testid="snapshot-file"]').textContent,
      };
    });
    assert.equal(seen.pwned, 0, 'a payload ran');
    assert.deepEqual(seen.elements, []);
    assert.ok(seen.frame.includes(`/home/u/${IMG}.py:7 ${SCRIPT}`), seen.frame);
    assert.ok(seen.picker.includes(name));
    const ownPaths = b.requests.map((u) => new URL(u).pathname);
    assert.ok(!ownPaths.includes('/x'), 'an image was requested');
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('screenshots of every view at 1440×900 and 1024×700, light and dark', async () => {
  mkdirSync(SHOTS, { recursive: true });
  for (const [width, height] of [[1440, 900], [1024, 700]]) {
    for (const scheme of ['light', 'dark']) {
      const b = await openBrowser({ colorScheme: scheme, viewport: { width, height } });
      try {
        const page = await b.page();
        await fresh(page, isolated.url);
        await dropFiles(page, [entry('snaps/gen.pickle', gen)]);
        assert.equal(await snapSettled(page), 'ready');
        await drawn(page);
        const tag = `${width}-${scheme}`;
        // Hover an allocation (tooltip), click it (its stack in the detail view), then pick the
        // largest group at the peak (highlighted in both charts).
        const canvas = page.locator('[data-testid="snapshot-timeline"]');
        await canvas.scrollIntoViewIfNeeded();
        const box = await canvas.boundingBox();
        const [left, top, w, h] = (await canvas.getAttribute('data-area')).split(',').map(Number);
        await page.mouse.move(box.x + left + w * 0.3, box.y + top + h * 0.8);
        await page.waitForSelector('[data-testid="tooltip"]:not([hidden])', { timeout: 20000 });
        await page.screenshot({ path: path.join(SHOTS, `snapshot-hover-${tag}.png`) });
        await page.mouse.click(box.x + left + w * 0.3, box.y + top + h * 0.8);
        await page.waitForFunction(() => document.getElementById('snap-detail').dataset.selected && /n\.g=\d+/.test(location.hash));
        const before = await page.evaluate(() => Number(document.getElementById('snap-timeline').dataset.rendered));
        const current = /n\.g=(\d+)/.exec(await page.evaluate(() => location.hash))[1];
        await page.waitForSelector('#snap-tables [data-testid="snapshot-row"]');
        await page.locator(`#snap-tables [data-testid="snapshot-row"]:not([data-group="${current}"])`).first().click();
        await page.waitForFunction((n) => Number(document.getElementById('snap-timeline').dataset.rendered) > n, before);
        await page.mouse.move(0, 0);
        await page.waitForTimeout(500);
        for (const v of ['overview', 'timeline', 'state', 'tables', 'detail', 'export']) {
          await page.locator(`#snap-${v}`).screenshot({ path: path.join(SHOTS, `snapshot-${v}-${tag}.png`) });
        }
        assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
        assert.deepEqual(b.consoleErrors, []);
      } finally {
        await b.close();
      }
    }
  }
});
