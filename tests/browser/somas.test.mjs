// The SOMAS tab against the CLI: every toy dump of fixtures/somas and a generated dump with
// known conflicts give the figures `memlens somas --json` prints; a node's memory frame and each
// query kind equal the CLI's answers; the export equals `--out` byte for byte; names carrying HTML
// stay text; a reload restores the view state; and no request leaves the page's origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, SHOTS, openBrowser, startServer, foreignRequests, engineThreads, dropFiles, settled, unzip, readTree, pngFirstPixel } from './harness.mjs';

const SAMPLES = path.resolve(root, 'fixtures', 'somas');
let isolated;
let plain;
let tmp;
let gen; // the generated dump: { dir, dump, task, injected }

// ---- helpers --------------------------------------------------------------------------------

/** `memlens somas FILE --json [args]` (cwd = `cwd`), parsed; or { error, status } on failure. */
function cli(file, args = [], cwd = root) {
  const r = spawnSync(CLI, ['somas', file, '--json', ...args], { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) return { error: r.stderr.trim(), status: r.status };
  return JSON.parse(r.stdout);
}

/** A file of the drop: `rel` is its path in the drop, `full` where to read it. */
function entry(rel, full) {
  return { path: rel, base64: readFileSync(full).toString('base64') };
}

/** The figures the hooks must show, from the CLI's JSON. */
function expectedMetrics(j) {
  return {
    'somas-peak-bytes': String(j.peak ? j.peak.in_use_bytes : undefined),
    'somas-peak-node-index': String(j.peak ? j.peak.node_index : undefined),
    'somas-reused-bytes': String(j.reused_bytes),
    'somas-upper-bound-bytes': String(j.upper_bound_bytes),
    'somas-lifelong-bytes': String(j.lifelong_bytes),
    'somas-conflicts': String(j.conflicts.length),
    'somas-tensors': String(j.tensors),
    'somas-nodes': String(j.nodes),
  };
}

async function pageMetrics(page) {
  const all = await page.$$eval('[data-metric]', (els) => els.map((e) => [e.dataset.metric, e.dataset.value]));
  const out = {};
  for (const [k, v] of all) if (k.startsWith('somas-') && k !== 'somas-task-mismatches') out[k] = v;
  return out;
}

/** Waits for the SOMAS tab to finish opening; returns its state (ready, error, empty). */
async function somasSettled(page, timeout = 60000) {
  await page.waitForFunction(
    () => {
      const s = document.querySelector('[data-testid="somas"]');
      return s && ['ready', 'error', 'empty'].includes(s.dataset.state);
    },
    null,
    { timeout },
  );
  return page.getAttribute('[data-testid="somas"]', 'data-state');
}

/** Opens the page fresh (optionally with a hash) and waits for the engine. */
async function fresh(page, url, hash = '') {
  await page.goto('about:blank');
  await page.goto(url + hash);
  await engineThreads(page);
}

/** Waits until the frame section shows node `index`; returns its tensor ids. */
async function frameOf(page, index) {
  await page.waitForFunction((i) => document.querySelector('[data-testid="somas-frame"]').dataset.node === String(i), index, { timeout: 20000 });
  const ids = await page.getAttribute('[data-testid="somas-frame"]', 'data-tensors');
  return ids ? ids.split(',').map(Number) : [];
}

/**
 * Types a query into the search box and waits for the answer of that search, of `kind`. The
 * result says how many searches had been answered when it was asked for (`data-searches`): the
 * answer shown before (often of the same kind, say the peak node) does not count, and neither does
 * one that was on its way when the search was answered.
 */
async function query(page, text, kind) {
  const result = '[data-testid="somas-query-result"]';
  const before = Number((await page.getAttribute(result, 'data-searches')) || 0);
  await page.fill('[data-testid="somas-search"]', text);
  await page.press('[data-testid="somas-search"]', 'Enter');
  await page.waitForFunction(([sel, n, k]) => {
    const r = document.querySelector(sel);
    return Number(r.dataset.searches || 0) > n && r.dataset.kind === k;
  }, [result, before, kind], { timeout: 20000 });
}

const ids = (s) => (s ? s.split(',').map(Number) : []);

async function shoot(page, name, selector) {
  mkdirSync(SHOTS, { recursive: true });
  await page.locator(selector).screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

before(async () => {
  isolated = await startServer({ isolate: true });
  plain = await startServer({ isolate: false });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-somas-page-'));
  // A moderate generated dump (v2.4 full names) with its task-info and three injected conflicts.
  const dir = path.join(tmp, 'gen');
  mkdirSync(dir);
  const dump = path.join(dir, 'Ascend_somas_tensor_offset_1.ir');
  const task = path.join(dir, 'task_info_graph_1.ir');
  const printed = execFileSync(CLI, ['generate', 'somas', '--flavor', 'v2.4', '--nodes', '3000', '--seed', '11', '--inject-conflicts', '3', '--out', dump, '--task-info-out', task], { encoding: 'utf8' });
  gen = { dir, dump, task, printed };
});

after(async () => {
  await isolated.close();
  await plain.close();
  rmSync(tmp, { recursive: true, force: true });
});

// ---- tests ----------------------------------------------------------------------------------

test('each sample dump, dropped alone, shows the figures of memlens somas --json', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    const names = readdirSync(SAMPLES).sort();
    assert.ok(names.length >= 8, 'the toy dumps are in fixtures/somas');
    let opened = 0;
    for (const name of names) {
      const j = cli(path.join(SAMPLES, name));
      await fresh(page, isolated.url);
      await dropFiles(page, [entry(`somas/${name}`, path.join(SAMPLES, name))]);
      if (j.error) {
        // Task-info alone: the tab explains what is missing; solver logs are not memory plans and
        // get no SOMAS tab (the inputs table gives the reason).
        await page.waitForFunction(() => document.querySelector('[data-testid="status"]').dataset.state !== 'loading');
        await page.waitForTimeout(300);
        const tab = await page.$('[data-testid="somas"]');
        if (/task_info_graph/.test(name)) {
          assert.equal(await somasSettled(page), 'empty', name);
        } else {
          assert.equal(tab, null, `${name}: ${j.error}`);
          const reason = await page.getAttribute(`[data-testid="unit"][data-path="somas/${name}"]`, 'data-reason');
          assert.match(reason, /solver log/);
        }
        continue;
      }
      assert.equal(await somasSettled(page), 'ready', name);
      assert.deepEqual(await pageMetrics(page), expectedMetrics(j), name);
      // The peak node's frame is shown first.
      if (j.peak && j.nodes) {
        const node = cli(path.join(SAMPLES, name), ['--node', String(j.peak.node_index)]);
        assert.deepEqual(await frameOf(page, j.peak.node_index), node.node_query.alive_tensors, `${name} frame`);
      }
      opened++;
    }
    assert.equal(opened, 8);
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('the whole sample folder: the solved dump is opened with its task-info, any dump can be picked', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    const files = readdirSync(SAMPLES).sort().map((n) => entry(`somas/${n}`, path.join(SAMPLES, n)));
    await dropFiles(page, files);
    assert.equal(await somasSettled(page), 'ready');
    const picked = await page.$eval('[data-testid="somas-dump"]', (s) => s.selectedOptions[0].textContent);
    assert.match(picked, /^somas\/Ascend_somas_tensor_offset_1\.ir /);
    assert.match(await page.$eval('[data-testid="somas-task-info"]', (s) => s.selectedOptions[0].textContent), /task_info_graph_1\.ir · graph 1/);
    const dump = path.join(SAMPLES, 'Ascend_somas_tensor_offset_1.ir');
    const task = path.join(SAMPLES, 'task_info_graph_1.ir');
    const j = cli(dump, ['--task-info', task]);
    assert.deepEqual(await pageMetrics(page), expectedMetrics(j));
    assert.equal(await page.getAttribute('[data-metric="somas-task-mismatches"]', 'data-value'), String(j.task_mismatches.length));
    // Every dump of the drop is offered (cache JSON included); picking one reopens with its figures.
    const options = await page.$$eval('[data-testid="somas-dump"] option', (os) => os.map((o) => o.textContent.split(' · ')[0]));
    assert.deepEqual(options.sort(), readdirSync(SAMPLES).filter((n) => !cli(path.join(SAMPLES, n)).error).map((n) => `somas/${n}`).sort());
    for (const name of ['Ascend_somas_tensor_offset_1.v1_10.ir', 'somas_allocate_info_1.r1.ir']) {
      const value = await page.$eval('[data-testid="somas-dump"]', (s, n) => [...s.options].find((o) => o.textContent.startsWith(`somas/${n} `)).value, name);
      await page.selectOption('[data-testid="somas-dump"]', value);
      assert.equal(await somasSettled(page), 'ready');
      await page.waitForFunction((n) => document.querySelector('.somas-facts dd:nth-of-type(2)').textContent === `somas/${n}`, name);
      // Same graph id: the task-info file stays paired.
      const jj = cli(path.join(SAMPLES, name), ['--task-info', task]);
      assert.deepEqual(await pageMetrics(page), expectedMetrics(jj), name);
    }
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a memory stomp seen by task-info: the mismatched tensors are counted and listed like the CLI', async () => {
  // MatMul-op10's output %7T moved by 0x200 in the task file (as in tests/somas_samples.rs).
  const dir = path.join(tmp, 'stomp');
  mkdirSync(dir, { recursive: true });
  const task = path.join(dir, 'task_info_graph_1.ir');
  writeFileSync(task, readFileSync(path.join(SAMPLES, 'task_info_graph_1.ir'), 'utf8').replace('output address:0x108080000000(640)', 'output address:0x108080000200(640)'));
  const dump = path.join(SAMPLES, 'Ascend_somas_tensor_offset_1.ir');
  const j = cli(dump, ['--task-info', task]);
  assert.deepEqual(j.task_mismatches, [7]);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry('stomp/Ascend_somas_tensor_offset_1.ir', dump), entry('stomp/task_info_graph_1.ir', task)]);
    assert.equal(await somasSettled(page), 'ready');
    assert.deepEqual(await pageMetrics(page), expectedMetrics(j));
    assert.equal(await page.getAttribute('[data-metric="somas-task-mismatches"]', 'data-value'), '1');
    await page.click('[data-metric="somas-task-mismatches"] button');
    await page.waitForFunction(() => document.querySelector('[data-testid="somas-query-result"]').dataset.kind === 'mismatches');
    assert.deepEqual(ids(await page.getAttribute('[data-testid="somas-query-result"]', 'data-tensors')), j.task_mismatches);
    await page.waitForSelector('.somas-query-grid .vt-row[data-id]');
    assert.equal(await page.$eval('.somas-query-grid .vt-row[data-id]', (r) => r.children[0].textContent), '7');
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a generated dump: figures, injected conflicts as rows, frames and every query kind equal the CLI', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry('gen/Ascend_somas_tensor_offset_1.ir', gen.dump), entry('gen/task_info_graph_1.ir', gen.task)]);
    assert.equal(await somasSettled(page), 'ready');
    const j = cli(gen.dump, ['--task-info', gen.task]);
    assert.equal(j.conflicts.length, 3, 'the generator injected three conflicts');
    assert.deepEqual(await pageMetrics(page), expectedMetrics(j));
    // Conflict rows, a < b, in the CLI's order.
    await page.waitForSelector('[data-testid="conflict-row"]');
    const rows = await page.$$eval('[data-testid="conflict-row"]', (rs) => rs.map((r) => [Number(r.dataset.a), Number(r.dataset.b)]));
    assert.deepEqual(rows, j.conflicts);

    // The peak node's frame, then a node picked by name in the search box.
    const peak = cli(gen.dump, ['--task-info', gen.task, '--node', String(j.peak.node_index)]).node_query;
    assert.deepEqual(await frameOf(page, j.peak.node_index), peak.alive_tensors);
    const pick = j.max_address_without_lifelong.node_name;
    const nq = cli(gen.dump, ['--task-info', gen.task, '--node', pick]).node_query;
    await query(page, pick, 'node');
    assert.equal(await page.getAttribute('[data-testid="somas-query-result"]', 'data-node'), String(nq.node_index));
    assert.deepEqual(await frameOf(page, nq.node_index), nq.alive_tensors);
    assert.deepEqual(ids(await page.getAttribute('[data-testid="somas-query-result"]', 'data-alive')), nq.alive_tensors);
    const io = await page.$$eval('[data-testid="query-io"]', (rs) =>
      rs.map((r) => ({ role: r.dataset.role, position: Number(r.dataset.position), kind: r.dataset.kind, id: Number(r.dataset.id), overlapping: r.dataset.overlapping, conflicts: r.dataset.conflicts })),
    );
    assert.deepEqual(
      io,
      nq.io.map((x) => ({
        role: x.role,
        position: x.position,
        kind: x.kind,
        id: x.id,
        overlapping: x.overlapping_tensors.map((o) => o.id).join(','),
        conflicts: x.overlapping_tensors.filter((o) => o.conflict).map((o) => o.id).join(','),
      })),
    );
    // Next node with the keyboard: the frame follows.
    await page.evaluate(() => document.activeElement.blur());
    await page.keyboard.press('.');
    const next = nq.node_index + 1;
    assert.deepEqual(await frameOf(page, next), cli(gen.dump, ['--node', String(next)]).node_query.alive_tensors);

    // A tensor of a conflict: users and overlapping tensors, with the conflict flagged.
    const [a, bId] = j.conflicts[0];
    const tq = cli(gen.dump, ['--task-info', gen.task, '--tensor', String(a)]).tensor_query;
    await query(page, `%${a}T`, 'tensor');
    const users = await page.$$eval('[data-testid="query-node"]', (rs) => rs.map((r) => ({ node: r.querySelector('button').textContent, role: r.dataset.role })));
    assert.deepEqual(users, tq.nodes);
    // The answer leads: the tensors sharing its memory while it is alive, conflicts first (the
    // CLI's overlaps with lifetime_overlap, ordered so); every overlapping tensor is in the table.
    const partners = await page.$$eval('[data-testid="query-partner"]', (rs) => rs.map((r) => ({ id: Number(r.dataset.id), conflict: r.dataset.conflict === 'true' })));
    const alive = tq.overlapping_tensors.filter((o) => o.lifetime_overlap).map((o) => ({ id: o.id, conflict: o.conflict }));
    alive.sort((x, y) => Number(y.conflict) - Number(x.conflict) || x.id - y.id);
    assert.deepEqual(partners, alive);
    const leading = partners.slice(0, partners.filter((x) => x.conflict).length);
    assert.ok(leading.some((x) => x.id === bId && x.conflict), 'the conflicting partner is among the first rows');
    assert.deepEqual(ids(await page.getAttribute('[data-testid="somas-query-result"]', 'data-overlapping')), tq.overlapping_tensors.map((o) => o.id));
    const reuse = tq.overlapping_tensors.length - alive.length;
    assert.match(await page.textContent('[data-testid="query-reuse"]'), reuse ? new RegExp(`^${reuse.toLocaleString('en-US')} tensors? reuses? its memory at other times`) : /^No other tensor/);
    assert.equal(await page.locator('[data-testid="query-overlap"]').count(), 0, 'no wall of chips');

    // An address inside the highest tensor, and a range over the first quarter of the block.
    const addr = `0x${(j.max_address_without_lifelong.end_address - 1).toString(16)}`;
    const aq = cli(gen.dump, ['--task-info', gen.task, '--address', addr]).address_query;
    assert.ok(aq.tensors.length > 0);
    await query(page, addr, 'address');
    assert.deepEqual(ids(await page.getAttribute('[data-testid="somas-query-result"]', 'data-tensors')), aq.tensors);
    const lo = `0x${j.base_address.toString(16)}`;
    const hi = `0x${(j.base_address + Math.floor(j.reused_bytes / 4)).toString(16)}`;
    const rq = cli(gen.dump, ['--task-info', gen.task, '--address-range', `${lo}-${hi}`]).address_range_query;
    await query(page, `${lo}-${hi}`, 'range');
    assert.deepEqual(ids(await page.getAttribute('[data-testid="somas-query-result"]', 'data-tensors')), rq.tensors);
    // A bare number names a tensor id first and offers the node with that index too.
    await query(page, '7', 'tensor');
    assert.match(await page.textContent('.somas-query-note'), /node \$7 /);
    // Nonsense is an error in words, not an exception.
    await page.fill('[data-testid="somas-search"]', 'no-such-node-anywhere');
    await page.press('[data-testid="somas-search"]', 'Enter');
    await page.waitForSelector('[data-testid="somas-query-error"]');
    assert.match(await page.textContent('[data-testid="somas-query-error"]'), /no node of that name/);
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('linked views: a click in the curves or the layout selects; tables sort and filter in the engine', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry('gen/Ascend_somas_tensor_offset_1.ir', gen.dump), entry('gen/task_info_graph_1.ir', gen.task)]);
    assert.equal(await somasSettled(page), 'ready');
    const j = cli(gen.dump, ['--task-info', gen.task]);
    const nodeOfHash = async () => Number(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('s.node'));
    // Click the curves at about two thirds of the axis: the selected node's frame is the CLI's.
    const curves = page.locator('[data-testid="somas-curves"]');
    await curves.scrollIntoViewIfNeeded();
    const cb = await curves.boundingBox();
    const target = Math.round(((j.nodes - 1) * 2) / 3);
    const [cl, ct, cw] = (await curves.getAttribute('data-area')).split(',').map(Number);
    await page.mouse.click(cb.x + cl + ((target + 0.5) / j.nodes) * cw, cb.y + ct + 60);
    await page.waitForFunction((p) => new URLSearchParams(location.hash.slice(1)).get('s.node') !== String(p), j.peak.node_index);
    const picked = await nodeOfHash();
    assert.ok(Math.abs(picked - target) <= 3, `clicked near ${target}, selected ${picked}`);
    assert.deepEqual(await frameOf(page, picked), cli(gen.dump, ['--node', String(picked)]).node_query.alive_tensors);
    // The nodes table highlights it.
    await page.click('button[data-table="nodes"]');
    await page.waitForSelector(`#somas-tables .vt-row.selected[data-id]`);
    assert.equal(await page.$eval('#somas-tables .vt-row.selected', (r) => r.children[1].textContent), String(picked));

    // Select the highest tensor, zoom the layout to it (z) and click the middle of the chart.
    const top = j.max_address_without_lifelong.tensor_id;
    await query(page, `%${top}T`, 'tensor');
    await page.evaluate(() => document.activeElement.blur());
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !/s\.tensor=/.test(location.hash));
    await query(page, `%${top}T`, 'tensor');
    await page.evaluate(() => document.activeElement.blur());
    // Where the tensor is, from the CLI's graph_tensors.csv.
    const out = path.join(tmp, 'out-linked');
    rmSync(out, { recursive: true, force: true });
    execFileSync(CLI, ['somas', gen.dump, '--task-info', gen.task, '--out', out]);
    const row = readFileSync(path.join(out, 'graph_tensors.csv'), 'utf8').split('\n').map((l) => l.split(',')).find((c) => c[0] === String(top));
    const [start, end, lifeStart, lifeEnd] = [Number(row[5]) - j.base_address, Number(row[9]) - j.base_address, Number(row[11]), Number(row[12])];
    await page.keyboard.press('z');
    // The zoom lands once the tensor's extent is fetched: wait for a view that holds its lifetime
    // (an earlier zoom, to a node, is in the hash already).
    await page.waitForFunction(([a, b]) => {
      const h = new URLSearchParams(location.hash.slice(1));
      return Number(h.get('s.lx0')) <= a && Number(h.get('s.lx1')) >= b;
    }, [lifeStart, lifeEnd + 1]);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !/s\.tensor=/.test(location.hash));
    const layout = page.locator('[data-testid="somas-layout"]');
    const [ll, lt, lw, lh] = (await layout.getAttribute('data-area')).split(',').map(Number);
    const hv = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
    const [vx0, vx1, vy0, vy1] = ['s.lx0', 's.lx1', 's.ly0', 's.ly1'].map((k) => Number(hv.get(k)));
    const px = ll + (((lifeStart + lifeEnd + 1) / 2 - vx0) / (vx1 - vx0)) * lw;
    const py = lt + lh - (((start + end) / 2 - vy0) / (vy1 - vy0)) * lh;
    // Measured right before pointing: nothing may scroll in between.
    await layout.scrollIntoViewIfNeeded();
    const lb = await layout.boundingBox();
    await page.mouse.move(lb.x + px - 3, lb.y + py);
    await page.mouse.move(lb.x + px, lb.y + py, { steps: 2 });
    await page.waitForSelector('[data-testid="tooltip"]:not([hidden])');
    assert.match(await page.textContent('[data-testid="tooltip"]'), new RegExp(`^%${top}T `));
    await page.mouse.down();
    await page.mouse.up();
    await page.waitForFunction((t) => new RegExp(`s\\.tensor=${t}(&|$)`).test(location.hash), top);
    await page.waitForFunction((t) => document.querySelector('[data-testid="somas-query-result"]').dataset.tensor === String(t), top);

    // Sort the nodes table by alive tensor size, largest first: the peak node comes first.
    await page.click('button[data-table="nodes"]');
    const header = page.locator('#somas-tables .vt-head .vt-cell', { hasText: /^AliveTensorsSize$/ });
    await header.click();
    await page.waitForFunction(() => document.querySelector('#somas-tables .vt-head [data-sorted="desc"]'));
    await page.waitForFunction((p) => document.querySelector('#somas-tables .vt-rows .vt-row[data-index="0"]')?.children[1].textContent === String(p), j.peak.node_index);
    // Filter: the rows whose name contains "matmul", counted in the dump's own node lines.
    const names = readFileSync(gen.dump, 'utf8').split('\n').filter((l) => l.startsWith('$')).map((l) => l.split('\t')[1]);
    const want = names.filter((n) => n.toLowerCase().includes('matmul')).length;
    assert.ok(want > 0);
    await page.fill('[data-testid="somas-table-filter"]', 'MatMul');
    await page.waitForFunction((n) => document.querySelector('#somas-tables .vt-status').textContent === `${n.toLocaleString('en-US')} rows`, want);
    // A regular expression: names ending in -op1 … -op9 (one digit).
    const re = names.filter((n) => /-op\d$/i.test(n)).length;
    await page.check('#somas-tables input[type="checkbox"]');
    await page.fill('[data-testid="somas-table-filter"]', '-op\\d$');
    await page.waitForFunction((n) => document.querySelector('#somas-tables .vt-status').textContent === `${n.toLocaleString('en-US')} rows`, re);
    // PNG of a chart as shown: a real PNG file, named apart from somas_tool's InUseMemory.png of
    // the export (another picture: the current zoom and colour scheme).
    const [png] = await Promise.all([page.waitForEvent('download'), page.click('#somas-curves button:has-text("PNG")')]);
    const bytes = readFileSync(await png.path());
    assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
    assert.equal(png.suggestedFilename(), 'CurvesView.png');
    // On the light page's background, opaque.
    const [r, g, bl, a] = pngFirstPixel(bytes);
    assert.equal(a, 255, 'the PNG is opaque');
    assert.ok(r + g + bl > 3 * 180, `a light background, got rgb(${r}, ${g}, ${bl})`);
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('the export zip and single files equal memlens somas --out byte for byte', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry('gen/Ascend_somas_tensor_offset_1.ir', gen.dump), entry('gen/task_info_graph_1.ir', gen.task)]);
    assert.equal(await somasSettled(page), 'ready');
    const j = cli(gen.dump, ['--task-info', gen.task]);
    // Select a node, an address range, and a tensor of that range (from the answer's table).
    await query(page, '$5', 'node');
    const lo = `0x${j.base_address.toString(16)}`;
    const hi = `0x${(j.base_address + Math.floor(j.reused_bytes / 8)).toString(16)}`;
    await query(page, `${lo}-${hi}`, 'range');
    await page.click('.somas-query-grid .vt-rows .vt-row[data-id]');
    await page.waitForFunction(() => document.querySelector('[data-testid="somas-query-result"]').dataset.kind === 'tensor');
    // The hash is written a moment after a selection (so held keys do not flood the history).
    await page.waitForFunction(() => /s\.node=\d+/.test(location.hash) && /s\.tensor=\d+/.test(location.hash));
    const hash = await page.evaluate(() => location.hash);
    const node = /s\.node=(\d+)/.exec(hash)[1];
    const tensor = /s\.tensor=(\d+)/.exec(hash)[1];
    assert.equal(node, '5');
    await page.waitForFunction(() => /--tensor .*--address-range/.test(document.querySelector('#somas-export p.muted').textContent));
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="somas-export-zip"]')]);
    const zip = unzip(readFileSync(await download.path()));
    // The CLI, run where the page's relative paths mean the same files (so names in the log match).
    const out = path.join(tmp, 'out');
    rmSync(out, { recursive: true, force: true });
    const args = ['somas', 'gen/Ascend_somas_tensor_offset_1.ir', '--task-info', 'gen/task_info_graph_1.ir', '--out', out, '--node', node, '--tensor', tensor, '--address-range', `${lo}-${hi}`];
    execFileSync(CLI, args, { cwd: tmp });
    const disk = readTree(out);
    assert.deepEqual(Object.keys(zip).sort(), Object.keys(disk).sort());
    assert.ok(Object.keys(disk).some((p) => p.startsWith('CheckTensor_ERROR_')), 'conflict files are part of the set');
    for (const [p, bytes] of Object.entries(disk)) assert.ok(bytes.equals(zip[p]), `${p} differs`);
    // One file on its own.
    const [single] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="somas-export-file"][data-path="graph_tensors.csv"]')]);
    assert.ok(readFileSync(await single.path()).equals(disk['graph_tensors.csv']));
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('names with HTML and script payloads render as text and nothing executes', async () => {
  const payloads = ['<img src=x onerror="window.__pwned=1">', '<script>window.__pwned=2</script>', '"><svg onload=window.__pwned=3>'];
  let text = readFileSync(path.join(SAMPLES, 'Ascend_somas_tensor_offset_1.ir'), 'utf8');
  text = text.replaceAll('ReLU-op3', `${payloads[0]}ReLU-op3`).replaceAll('MatMul-op10', `${payloads[1]}MatMul-op10`).replaceAll('MaxPool-op4', `${payloads[2]}MaxPool-op4`);
  const dir = path.join(tmp, 'evil');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'Ascend_somas_tensor_offset_1.ir');
  writeFileSync(file, text);
  const j = cli(file);
  assert.ok(!j.error, j.error);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry('evil/Ascend_somas_tensor_offset_1.ir', file)]);
    assert.equal(await somasSettled(page), 'ready');
    assert.deepEqual(await pageMetrics(page), expectedMetrics(j));
    // The peak node is the ReLU: its name is shown literally in the overview, frame and query.
    assert.equal(j.peak.node_name, `${payloads[0]}ReLU-op3`);
    await query(page, j.peak.node_name, 'node');
    let shown = await page.textContent('[data-testid="somas"]');
    await query(page, `${payloads[1]}MatMul-op10`, 'node');
    shown += await page.textContent('[data-testid="somas-query-result"]');
    await query(page, '%6T', 'tensor');
    await page.click('button[data-table="tensors"]');
    // The click puts the tensors table's box in place at once; its rows come from the worker.
    // The names below are read once its first rows are drawn (a row with data has an index).
    await page.waitForFunction(() => document.querySelector('button[data-table="tensors"]').getAttribute('aria-selected') === 'true'
      && document.querySelector('#somas-tables .vt-rows .vt-row[data-index]'), null, { timeout: 30000 });
    shown += await page.textContent('[data-testid="somas"]');
    for (const p of payloads) assert.ok(shown.includes(p), `payload shown as text: ${p}`);
    // Table cells show the end of scoped names, the whole name on hover.
    const titles = await page.$$eval('#somas-tables .vt-cell[title]', (cs) => cs.map((c) => c.title));
    for (const p of payloads) assert.ok(titles.some((t) => t.startsWith(p)), `payload in a title: ${p}`);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.$$eval('[data-testid="somas"] img, [data-testid="somas"] script, [data-testid="somas"] svg', (e) => e.length), 0);
    // Hover a tensor of the MaxPool: the tooltip shows the name as text too.
    assert.deepEqual(b.requests.filter((u) => /\/x$/.test(u)), [], 'no image was requested');
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a reload with the same hash restores the selection and the zoom once the files are dropped again', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    const files = [entry('gen/Ascend_somas_tensor_offset_1.ir', gen.dump), entry('gen/task_info_graph_1.ir', gen.task)];
    await dropFiles(page, files);
    assert.equal(await somasSettled(page), 'ready');
    await query(page, '$40', 'node');
    await query(page, '%25T', 'tensor');
    // Zoom the layout with the keyboard.
    await page.focus('[data-testid="somas-layout"]');
    for (let i = 0; i < 3; i++) await page.keyboard.press('+');
    await page.waitForFunction(() => /s\.lx0=/.test(location.hash));
    const hash = await page.evaluate(() => location.hash);
    assert.match(hash, /s\.node=40/);
    assert.match(hash, /s\.tensor=25/);
    // Nothing from the files is in the URL: only names of keys, numbers and the tab.
    assert.doesNotMatch(decodeURIComponent(hash), /Default|op\d|\.ir/);
    await fresh(page, isolated.url, hash);
    await dropFiles(page, files);
    assert.equal(await somasSettled(page), 'ready');
    assert.deepEqual(await frameOf(page, 40), cli(gen.dump, ['--node', '40']).node_query.alive_tensors);
    await page.waitForFunction(() => document.querySelector('[data-testid="somas-query-result"]').dataset.tensor === '25');
    const after = await page.evaluate(() => location.hash);
    const num = (h, k) => Number(new URLSearchParams(h.slice(1)).get(k));
    for (const k of ['s.lx0', 's.lx1', 's.ly0', 's.ly1']) {
      const [x, y] = [num(after, k), num(hash, k)];
      assert.ok(Math.abs(x - y) <= 1e-6 * Math.max(1, Math.abs(y)), `${k}: ${x} vs ${y}`);
    }
    // A later drop in the same page starts afresh: the peak node, no tensor, the whole layout.
    await dropFiles(page, files);
    // The page's status for this drop (the tab's own state is the old tab's until it is replaced).
    assert.equal(await settled(page), 'ready');
    assert.equal(await somasSettled(page), 'ready');
    const peak = cli(gen.dump).peak.node_index;
    await frameOf(page, peak);
    await page.waitForFunction(() => !/s\.(tensor|lx0)=/.test(location.hash));
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
  } finally {
    await b.close();
  }
});

test('keyboard: help lists the SOMAS keys; p, m, c and digits work', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry('gen/Ascend_somas_tensor_offset_1.ir', gen.dump), entry('gen/task_info_graph_1.ir', gen.task)]);
    assert.equal(await somasSettled(page), 'ready');
    const j = cli(gen.dump, ['--task-info', gen.task]);
    await page.keyboard.press('?');
    assert.match(await page.textContent('[data-testid="somas-keys"]'), /max-address node/);
    await page.keyboard.press('Escape');
    const mNode = j.max_address_without_lifelong.node_index;
    await page.keyboard.press('m');
    await frameOf(page, mNode);
    await page.keyboard.press('p');
    await frameOf(page, j.peak.node_index);
    await page.keyboard.press('c');
    await page.waitForFunction((a) => new RegExp(`s\\.tensor=${a}(&|$)`).test(location.hash), j.conflicts[0][0]);
    await page.keyboard.press('c');
    await page.waitForFunction((a) => new RegExp(`s\\.tensor=${a}(&|$)`).test(location.hash), j.conflicts[1][0]);
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'somas-search');
    await page.keyboard.press('Escape');
    await page.keyboard.press('3');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'somas-layout');
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a broken dump shows the error of the CLI; the single-threaded engine and the offline file agree', async () => {
  const good = readFileSync(path.join(SAMPLES, 'Ascend_somas_tensor_offset_1.ir'), 'utf8');
  const cut = path.join(tmp, 'cut');
  mkdirSync(cut, { recursive: true });
  const broken = path.join(cut, 'Ascend_somas_tensor_offset_1.ir');
  writeFileSync(broken, good.replace('%9T\t#512S', '%9T\t#512X'));
  const bad = cli('cut/Ascend_somas_tensor_offset_1.ir', [], tmp);
  assert.equal(bad.status, 2);
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, plain.url);
    assert.equal(await engineThreads(page), 1);
    await dropFiles(page, [entry('cut/Ascend_somas_tensor_offset_1.ir', broken)]);
    assert.equal(await somasSettled(page), 'error');
    assert.equal(await page.textContent('[data-testid="somas-error"]'), bad.error.replace(/^memlens: /, ''));
    const dump = path.join(SAMPLES, 'Ascend_somas_tensor_offset_1.v2_4_fullname.ir');
    const j = cli(dump);
    await fresh(page, plain.url);
    await dropFiles(page, [entry('somas/x.ir', dump)]);
    assert.equal(await somasSettled(page), 'ready');
    assert.deepEqual(await pageMetrics(page), expectedMetrics(j));
    const url = pathToFileURL(path.join(root, 'dist', 'memlens.html')).href;
    await fresh(page, url);
    await dropFiles(page, [entry('gen/Ascend_somas_tensor_offset_1.ir', gen.dump), entry('gen/task_info_graph_1.ir', gen.task)]);
    assert.equal(await somasSettled(page), 'ready');
    assert.deepEqual(await pageMetrics(page), expectedMetrics(cli(gen.dump, ['--task-info', gen.task])));
    assert.equal(await page.$$eval('[data-testid="conflict-row"]', (r) => r.length), 3);
    const local = b.requests.filter((u) => !u.startsWith(plain.origin));
    assert.deepEqual(local.filter((u) => u !== url && !u.startsWith('blob:') && !u.startsWith('data:')), []);
    assert.deepEqual(foreignRequests(b.requests.filter((u) => !u.startsWith('file:')), plain.origin), []);
  } finally {
    await b.close();
  }
});

test('a dump that cannot be opened leaves the query box disabled with the reason; a good dump enables it', async () => {
  // A dump cut short (the audit's case): the CLI fails on it, and so does the tab. The old page
  // left the query box taking input with no plan to ask (it was enabled here, with its usual
  // placeholder).
  const good = path.join(SAMPLES, 'Ascend_somas_tensor_offset_1.ir');
  const bytes = readFileSync(good);
  const cutDir = path.join(tmp, 'cut-short');
  mkdirSync(cutDir, { recursive: true });
  const cut = path.join(cutDir, 'Ascend_somas_tensor_offset_1.ir');
  writeFileSync(cut, bytes.subarray(0, bytes.length >> 1));
  assert.equal(cli(cut).status, 2);
  const box = '[data-testid="somas-search"]';
  const button = '.somas-search-form button[type="submit"]';
  const closed = async (page) => ({
    input: await page.isDisabled(box),
    button: await page.isDisabled(button),
    placeholder: await page.getAttribute(box, 'placeholder'),
    title: await page.getAttribute(box, 'title'),
  });
  const b = await openBrowser();
  try {
    const page = await b.page();
    await fresh(page, isolated.url);
    await dropFiles(page, [entry('cut/Ascend_somas_tensor_offset_1.ir', cut)]);
    assert.equal(await somasSettled(page), 'error');
    assert.deepEqual(await closed(page), {
      input: true,
      button: true,
      placeholder: 'no query: the dump failed',
      title: 'Nothing to query: the dump could not be opened (the error is below).',
    });
    // '/' (focus the query box) does nothing either.
    await page.locator('body').press('/');
    assert.notEqual(await page.evaluate(() => document.activeElement?.dataset.testid), 'somas-search');

    // A good drop on the same page: the query box takes a query again, and answers it.
    await dropFiles(page, [entry('somas/Ascend_somas_tensor_offset_1.ir', good)]);
    await settled(page);
    assert.equal(await somasSettled(page), 'ready');
    assert.equal((await closed(page)).input, false);
    assert.equal((await closed(page)).button, false);
    await query(page, '%1T', 'tensor');
    assert.equal(await page.getAttribute('[data-testid="somas-query-result"]', 'data-tensor'), '1');

    // Within one drop: picking the dump cut short closes the box, picking the good one opens it.
    await dropFiles(page, [entry('both/a/Ascend_somas_tensor_offset_1.ir', cut), entry('both/b/Ascend_somas_tensor_offset_1.ir', good)]);
    await settled(page);
    await somasSettled(page);
    const options = await page.$$eval('[data-testid="somas-dump"] option', (os) => os.map((o) => [o.value, o.textContent]));
    const pick = async (dir) => {
      await page.selectOption('[data-testid="somas-dump"]', options.find(([, t]) => t.startsWith(`both/${dir}/`))[0]);
      return somasSettled(page);
    };
    assert.equal(await pick('a'), 'error');
    assert.equal((await closed(page)).input, true);
    assert.equal(await pick('b'), 'ready');
    const open = await closed(page);
    assert.equal(open.input, false);
    assert.equal(open.button, false);
    assert.match(open.placeholder, /^node name or index/);
    assert.equal(open.title, '');
    await query(page, '%2T', 'tensor');
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
  } finally {
    await b.close();
  }
});

test('screenshots of every view, light and dark', async () => {
  for (const scheme of ['light', 'dark']) {
    const b = await openBrowser({ colorScheme: scheme, viewport: { width: 1400, height: 900 } });
    try {
      const page = await b.page();
      await fresh(page, isolated.url);
      await dropFiles(page, [entry('gen/Ascend_somas_tensor_offset_1.ir', gen.dump), entry('gen/task_info_graph_1.ir', gen.task)]);
      assert.equal(await somasSettled(page), 'ready');
      await page.keyboard.press('c');
      await page.waitForFunction(() => /s\.tensor=/.test(location.hash));
      await page.waitForTimeout(600);
      const views = ['overview', 'curves', 'layout', 'frame', 'query', 'tables', 'export'];
      for (const v of views) await shoot(page, `somas-${v}-${scheme}`, `#somas-${v}`);
      // Hover a tensor in the zoomed layout for the tooltip.
      await page.locator('#somas-layout').scrollIntoViewIfNeeded();
      const box = await page.locator('[data-testid="somas-layout"]').boundingBox();
      await page.mouse.move(box.x + box.width / 2 + 36, box.y + box.height / 2);
      await page.waitForTimeout(400);
      await shoot(page, `somas-layout-hover-${scheme}`, '#somas-layout');
      await page.screenshot({ path: path.join(SHOTS, `somas-page-${scheme}.png`), fullPage: true });
      assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  }
});
