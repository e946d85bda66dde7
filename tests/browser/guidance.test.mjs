// The page guides the eye: whatever an action changes comes into view and the URL hash follows it,
// at 1440×900 and at 1024×700. "In view" is geometric: the bounding box of the changed thing lies
// inside the viewport. The expected selections come from the CLI's JSON of the same files.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync, readFileSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, openBrowser, openSample, startServer, engineThreads, settled, filesUnder, dropFiles, foreignRequests, boxOf, assertInViewport } from './harness.mjs';

const TEXT = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 700 },
];

let server;
let tmp;
let gen;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-guidance-'));
  const dir = path.join(tmp, 'gen');
  mkdirSync(dir);
  const dump = path.join(dir, 'Ascend_somas_tensor_offset_1.ir');
  const task = path.join(dir, 'task_info_graph_1.ir');
  execFileSync(CLI, ['generate', 'somas', '--flavor', 'v2.4', '--nodes', '3000', '--seed', '11', '--inject-conflicts', '3', '--out', dump, '--task-info-out', task], { stdio: 'ignore' });
  const r = spawnSync(CLI, ['somas', dump, '--json', '--task-info', task], { encoding: 'utf8', maxBuffer: 1 << 28 });
  gen = { dump, task, json: JSON.parse(r.stdout) };
});

after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The on-screen box of the layout's selected tensor: the canvas box plus the drawn rectangle. */
async function selectionBox(page) {
  const sel = await page.waitForFunction(() => document.querySelector('[data-testid="somas-layout"]')?.dataset.selection, null, { timeout: 20000 });
  const [x, y, w, h] = (await sel.jsonValue()).split(',').map(Number);
  const c = await boxOf(page, '[data-testid="somas-layout"]');
  return { x: c.x + x, y: c.y + y, width: w, height: h };
}

const hashKey = (page, key) => page.evaluate((k) => new URLSearchParams(location.hash.slice(1)).get(k), key);

async function waitHash(page, key, value) {
  await page.waitForFunction(([k, v]) => new URLSearchParams(location.hash.slice(1)).get(k) === v, [key, String(value)], { timeout: 20000 });
}

for (const size of SIZES) {
  test(`profiler at ${size.width}×${size.height}: a group click shows its rows, a row click shows its stack`, async () => {
    const { browser: b, page } = await openSample(server, filesUnder(TEXT), { viewport: size, view: 'ascend' });
    try {
      // "At the peak": the group's rows are listed in the table, and the table comes into view.
      await page.locator('[data-testid="live-group"][aria-disabled="false"]').first().click();
      await page.waitForFunction(() => document.querySelector('[data-testid="chip-group"]') && document.querySelector('[data-testid="ascend-table"]').dataset.state === 'ready');
      assert.equal(await hashKey(page, 'gk'), 'live');
      await page.waitForTimeout(100);
      await assertInViewport(page, await boxOf(page, '[data-testid="chip-group"]'), 'the group filter chip');
      // The table scrolls sideways inside its panel at 1024 px: its first cell is what must show.
      await assertInViewport(page, await boxOf(page, '[data-testid="alloc-row"] > :first-child'), 'the first row of the group');

      // The captions hold no stray "null" (an optional part left out).
      for (const id of ['live', 'unreleased']) assert.doesNotMatch(await page.textContent(`#ascend-${id} .chart-caption`), /null/);

      // A number key puts the view's head below the sticky header and rank bar.
      await page.keyboard.press('2');
      await assertInViewport(page, await boxOf(page, '#ascend-memory .panel-head'), 'the memory view head after 2');
      await page.locator('[data-testid="alloc-row"]').first().scrollIntoViewIfNeeded();

      // A row: its call stack comes into view and the hash names the row.
      await page.locator('[data-testid="alloc-row"]').first().click();
      await page.waitForFunction(() => document.querySelector('[data-testid="ascend-stack"]').dataset.row);
      const row = await page.getAttribute('[data-testid="ascend-stack"]', 'data-row');
      await waitHash(page, 'row', row);
      await page.waitForTimeout(100);
      await assertInViewport(page, await boxOf(page, '#ascend-stack .panel-head'), 'the call stack panel head');
      await assertInViewport(page, await boxOf(page, '[data-testid="stack-source"]'), 'the stack source line');
      assert.deepEqual(foreignRequests(b.requests, server.origin), []);
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  });

  test(`SOMAS at ${size.width}×${size.height}: conflicts, z and p bring their answer into view`, async () => {
    const b = await openBrowser({ viewport: size });
    try {
      const page = await b.page();
      await page.goto(server.url);
      await engineThreads(page);
      await dropFiles(page, [
        { path: 'gen/Ascend_somas_tensor_offset_1.ir', base64: readFileSync(gen.dump).toString('base64') },
        { path: 'gen/task_info_graph_1.ir', base64: readFileSync(gen.task).toString('base64') },
      ]);
      await page.waitForFunction(() => document.querySelector('[data-testid="somas"]')?.dataset.state === 'ready', null, { timeout: 60000 });
      const j = gen.json;
      assert.ok(j.conflicts.length >= 2, 'the generated dump has conflicts');

      // "show the first (c)" in the overview: the pair is selected, the layout shows it in view.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.getByRole('button', { name: /show the first/ }).click();
      const [a, bId] = [Math.min(...j.conflicts[0].slice(0, 2)), Math.max(...j.conflicts[0].slice(0, 2))];
      await waitHash(page, 's.pair', `${a}-${bId}`);
      await waitHash(page, 's.tensor', a);
      await assertInViewport(page, await selectionBox(page), 'the first conflict’s tensor');

      // c from the top of the page: the next conflict, in view.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.keyboard.press('c');
      const next = j.conflicts[1].slice(0, 2);
      await waitHash(page, 's.pair', `${Math.min(...next)}-${Math.max(...next)}`);
      await page.waitForFunction((t) => document.querySelector('[data-testid="somas-layout"]').dataset.selectionTensor === String(t), Math.min(...next));
      await assertInViewport(page, await selectionBox(page), 'the second conflict’s tensor');

      // z from the bottom of the page: the layout zooms to the selection and comes into view.
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await page.keyboard.press('z');
      await page.waitForTimeout(300);
      await assertInViewport(page, await selectionBox(page), 'the zoomed selection');

      // p from the bottom: the peak node's frame comes into view, and the hash names the node.
      await page.keyboard.press('Escape');
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await page.keyboard.press('.');
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await page.keyboard.press('p');
      await waitHash(page, 's.node', j.peak.node_index);
      await page.waitForFunction((i) => document.querySelector('[data-testid="somas-frame"]').dataset.node === String(i), j.peak.node_index);
      await page.waitForTimeout(100);
      await assertInViewport(page, await boxOf(page, '[data-testid="somas-frame"] .panel-head, [data-testid="somas-frame"] h2'), 'the memory frame head');
      assert.deepEqual(foreignRequests(b.requests, server.origin), []);
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  });
}

test('without trace_view.json the groups are op names, and the page says why', async () => {
  // The rank-0 run folder without its trace: the CLI's answer for the same files is the reference.
  const run = path.join(TEXT, 'rank0_ascend_pt');
  const files = filesUnder(run).filter((f) => !f.path.endsWith('trace_view.json'));
  assert.ok(files.length >= 3 && files.length < filesUnder(run).length);
  const dir = path.join(tmp, 'no-trace', 'rank0_ascend_pt', 'ASCEND_PROFILER_OUTPUT');
  mkdirSync(dir, { recursive: true });
  for (const n of ['operator_memory.csv', 'memory_record.csv', 'npu_module_mem.csv']) {
    cpSync(path.join(run, 'ASCEND_PROFILER_OUTPUT', n), path.join(dir, n));
  }
  for (const n of ['profiler_info_0.json', 'profiler_metadata.json']) cpSync(path.join(run, n), path.join(tmp, 'no-trace', 'rank0_ascend_pt', n));
  const json = JSON.parse(execFileSync(CLI, ['profiler', '--json', path.join(tmp, 'no-trace')], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  const r0 = json.ranks[0];
  assert.equal(r0.group_by, 'op_name');
  assert.ok(r0.live_at_peak.some((g) => g.frame.startsWith('aten::')), 'op names at the peak');

  const { browser: b, page } = await openSample(server, filesUnder(path.join(tmp, 'no-trace')), { view: 'ascend' });
  try {
    const groups = await page.$$eval('[data-testid="live-group"]', (rows) => rows.map((r) => ({ frame: r.querySelector('.group-frame').dataset.frame, bytes: Number(r.dataset.bytes), count: Number(r.dataset.count) })));
    assert.deepEqual(groups, r0.live_at_peak.slice(0, groups.length));
    assert.ok(!groups.some((g) => g.frame === '(no stack)'));
    assert.match(await page.textContent('#ascend-live [data-testid="group-note"]'), /trace_view\.json/);
    assert.match(await page.textContent('#ascend-unreleased [data-testid="group-note"]'), /operator names/);
    // A group still filters the table to its rows: the CLI's count of that op name.
    await page.locator('[data-testid="live-group"][aria-disabled="false"]').first().click();
    await page.waitForFunction((n) => document.querySelector('[data-testid="ascend-table"]').dataset.state === 'ready' && document.querySelector('[data-testid="ascend-table"]').dataset.total === String(n), r0.live_at_peak.find((g) => g.count > 0).count, { timeout: 20000 });
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('two garbage CSVs: an error state that counts 2 rejected files, not a dashboard of zeros', async () => {
  const files = [
    { path: 'run/operator_memory.csv', base64: Buffer.from('hello,world\n1,2\nfoo\n').toString('base64') },
    { path: 'run/memory_record.csv', base64: Buffer.from('x;y\n\u0001garbage\n').toString('base64') },
  ];
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    await dropFiles(page, files);
    await settled(page, 60000);
    await page.waitForFunction(() => ['ready', 'empty', 'error'].includes(document.querySelector('[data-testid="ascend"]')?.dataset.state), null, { timeout: 60000 });
    assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-state'), 'error');
    assert.match(await page.textContent('[data-testid="ascend-empty"]'), /2 files rejected/);
    assert.equal(await page.getAttribute('[data-metric="ascend-rejected"]', 'data-value'), '2');
    assert.equal(await page.locator('[data-metric="ascend-peak"]').count(), 0, 'no peak is drawn');
    // Each rejected file's error names it.
    const warnings = await page.textContent('[data-testid="ascend-warnings"]');
    assert.match(warnings, /operator_memory\.csv/);
    assert.match(warnings, /memory_record\.csv/);
  } finally {
    await b.close();
  }
});

test('a run folder with a trace but no memory file: the empty state does not say the trace is missing', async () => {
  // The old sentence listed trace_view.json among the files no run folder held, beside a folder
  // that held one (seen on the page: "No run folder … holds … trace_view.json").
  const run = path.join(TEXT, 'rank0_ascend_pt');
  const files = [
    { path: 'rank0_ascend_pt/profiler_info_0.json', base64: readFileSync(path.join(run, 'profiler_info_0.json')).toString('base64') },
    { path: 'rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json', base64: readFileSync(path.join(run, 'ASCEND_PROFILER_OUTPUT', 'trace_view.json')).toString('base64') },
  ];
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    await dropFiles(page, files);
    await settled(page, 60000);
    await page.waitForFunction(() => ['ready', 'empty', 'error'].includes(document.querySelector('[data-testid="ascend"]')?.dataset.state), null, { timeout: 60000 });
    assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-state'), 'empty');
    const why = await page.textContent('[data-testid="ascend-empty"] p:first-child');
    assert.match(why, /operator_memory\.csv, memory_record\.csv or a database export: ascend_pytorch_profiler_\*\.db, ascend_mindspore_profiler_\*\.db, msprof_\*\.db/);
    assert.match(why, /trace_view\.json alone holds none/);
    // The core's hint says what to do.
    assert.match(await page.textContent('[data-testid="ascend-empty"]'), /profile_memory=True/);
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

/**
 * At both sizes: `drop(page)` settles as "nothing to analyse", the problem shown is exactly `cli`
 * (the CLI's stderr for the same input) and in view, and nothing leaves the origin; `more(page,
 * size)` checks what else the drop should show.
 */
async function seeNothingToAnalyse(cli, drop, more = async () => {}) {
  for (const size of SIZES) {
    const b = await openBrowser({ viewport: size });
    try {
      const page = await b.page();
      await page.goto(server.url);
      await engineThreads(page);
      await drop(page);
      assert.equal(await settled(page, 60000), 'error');
      assert.equal(await page.textContent('[data-testid="status"]'), 'nothing to analyse');
      const problems = await page.$$eval('#error-list li', (li) => li.map((x) => x.textContent));
      assert.deepEqual(problems, [cli]);
      await assertInViewport(page, await boxOf(page, '#errors'), 'the problems box');
      await more(page, size);
      assert.deepEqual(foreignRequests(b.requests, server.origin), []);
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  }
}

test('a folder of files memlens does not read: the page says there is nothing to analyse, in the CLI\'s words', async () => {
  // The old page showed the inputs table alone, its status a green "ready".
  const dir = path.join(tmp, 'unrelated', 'stuff');
  mkdirSync(path.join(dir, 'sub'), { recursive: true });
  writeFileSync(path.join(dir, 'notes.txt'), 'hi\n');
  writeFileSync(path.join(dir, 'data.csv'), 'a,b\n1,2\n');
  writeFileSync(path.join(dir, 'sub', 'config.json'), '{}\n');
  // What the CLI says of the same folder (exit 1, "memlens: stuff: nothing to analyse: ..."): the
  // page says it too, the folder's name first.
  const r = spawnSync(CLI, ['stuff'], { cwd: path.dirname(dir), encoding: 'utf8' });
  assert.equal(r.status, 1, r.stderr);
  const cli = r.stderr.replace(/^memlens: /, '').trimEnd();
  assert.match(cli, /^stuff: nothing to analyse: looked for .* in 3 files/);
  await seeNothingToAnalyse(cli, (page) => dropFiles(page, filesUnder(dir)), async (page, size) => {
    // The inputs table still lists every file with its reason; a path that wraps in its narrow
    // column wraps between folders, never inside a name (the old page showed "confi" "g.json").
    assert.equal(await page.locator('#inventory').isVisible(), true);
    const nameLines = await page.$eval('[data-testid="unit"][data-path="stuff/sub/config.json"] td.path', (td) => {
      const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const at = n.textContent.indexOf('config.json');
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(n, at);
        range.setEnd(n, at + 'config.json'.length);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      }
      return -1;
    });
    assert.equal(nameLines, 1, `config.json on one line at ${size.width}×${size.height}`);
  });
});

test('an empty folder dropped: the page names it, in the CLI\'s words', async () => {
  // The old page said "Nothing to load: the drop held no files." and named no folder.
  const dir = path.join(tmp, 'hollow', 'empty-run');
  mkdirSync(path.join(dir, 'sub'), { recursive: true });
  const r = spawnSync(CLI, ['empty-run'], { cwd: path.dirname(dir), encoding: 'utf8' });
  assert.equal(r.status, 1, r.stderr);
  const cli = r.stderr.replace(/^memlens: /, '').trimEnd();
  assert.match(cli, /^empty-run: nothing to analyse: no files at all \(looked for /);
  await seeNothingToAnalyse(cli, (page) => dropFiles(page, [], [], { folders: ['empty-run/sub'] }), async (page, size) => {
    // The inputs box says what is empty, naming the folder, instead of "0 files, 0 B —" over a
    // table head with no rows (seen on main, 546d10e).
    const at = `${size.width}×${size.height}`;
    assert.equal(await page.locator('[data-testid="inventory-empty"]').isVisible(), true, at);
    assert.equal(await page.textContent('[data-testid="inventory-empty"]'), 'Nothing to list: empty-run holds no files.', at);
    assert.equal(await page.locator('#inventory table.units').isVisible(), false, at);
    assert.equal((await page.textContent('#inventory h2')).trim(), 'Inputs', at);
  });
});

test('the landing page says what to drop and how to produce it', async () => {
  for (const size of SIZES) {
    const b = await openBrowser({ viewport: size });
    try {
      const page = await b.page();
      await page.goto(server.url);
      await engineThreads(page);
      const text = await page.textContent('[data-testid="drop-howto"]');
      for (const want of ['profile_memory=True', 'with_stack=True', 'export type', 'save_graphs', 'trace_view.json', '_dump_snapshot', 'README']) {
        assert.ok(text.includes(want), `${want} on the landing page`);
      }
      // It fits in the first screen, under the drop actions.
      await assertInViewport(page, await boxOf(page, '[data-testid="drop-howto"]'), 'the how-to');
      assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    } finally {
      await b.close();
    }
  }
});

test('operator_memory.csv and memory_record.csv from different runs: a warning with both ranges, a sane axis', async () => {
  // The rank-0 run with memory_record.csv moved 10,000 s later (timestamp column rewritten here).
  const run = path.join(TEXT, 'rank0_ascend_pt');
  const to = path.join(tmp, 'disjoint', 'rank0_ascend_pt');
  cpSync(run, to, { recursive: true });
  const rec = path.join(to, 'ASCEND_PROFILER_OUTPUT', 'memory_record.csv');
  const shifted = readFileSync(rec, 'utf8').split('\n').map((line, i) => {
    if (i === 0 || !line) return line;
    const f = line.split(',');
    const [int, frac = ''] = f[1].trim().split('.');
    f[1] = `${BigInt(int) + 10000000000n}.${frac}`;
    return f.join(',');
  }).join('\n');
  writeFileSync(rec, shifted);
  const { browser: b, page } = await openSample(server, filesUnder(path.join(tmp, 'disjoint')), { view: 'ascend' });
  try {
    const warnings = await page.textContent('[data-testid="ascend-warnings"]');
    assert.match(warnings, /memory_record\.csv covers \d+\.\d{3} us – \d+\.\d{3} us but operator_memory\.csv covers \d+\.\d{3} us – \d+\.\d{3} us/);
    // The axis spans the allocations (seconds), not the 10,000 s between the files.
    const domainMs = Number(await page.getAttribute('[data-testid="memory-canvas"]', 'data-domain-ms'));
    assert.ok(domainMs > 0 && domainMs < 100000, `axis extent ${domainMs} ms`);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('plain words: the single-threaded badge says what to do, a count of one is singular', async () => {
  const plainServer = await startServer({ isolate: false });
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(plainServer.url);
    assert.equal(await engineThreads(page), 1);
    assert.equal(await page.textContent('[data-testid="engine"]'), 'single-threaded: open it from a web server for threads');
    assert.match(await page.getAttribute('[data-testid="engine"]', 'title'), /cross-origin isolated.*Hosting/);
    // One dropped file: "1 file", not "1 files".
    await dropFiles(page, [{ path: 'Ascend_somas_tensor_offset_1.ir', base64: readFileSync(gen.dump).toString('base64') }]);
    await settled(page, 60000);
    await page.click('[data-tab="inputs"]');
    assert.match(await page.textContent('#inventory-summary'), /^1 file,/);
  } finally {
    await b.close();
    await plainServer.close();
  }
});

test('after a drop the drop zone is one short line that says a new drop replaces the analysis', async () => {
  for (const size of SIZES) {
    const b = await openBrowser({ viewport: size });
    try {
      const page = await b.page();
      await page.goto(server.url);
      await engineThreads(page);
      await dropFiles(page, [{ path: 'Ascend_somas_tensor_offset_1.ir', base64: readFileSync(gen.dump).toString('base64') }]);
      await settled(page, 60000);
      const zone = await boxOf(page, '#drop-zone');
      assert.ok(zone.height <= (size.width >= 1440 ? 48 : 90), `drop zone ${zone.height} px high at ${size.width}×${size.height}`);
      assert.match(await page.textContent('[data-testid="drop-replace"]'), /replace this analysis/);
      assert.ok(await page.isVisible('[data-testid="drop-replace"]'));
    } finally {
      await b.close();
    }
  }
});

test('time-axis ticks switch from ms to s, min and h', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    const labels = await page.evaluate(async () => {
      const { axisLabel } = await import('./ui/plot.js');
      return [0, 250, 1500, 150000, 10000000000].map((v) => axisLabel(v, 'ms'));
    });
    // The axis extent once seen on files of two runs, 10,000,000,000 ms, reads in hours.
    assert.deepEqual(labels, ['0 ms', '250 ms', '1.5 s', '2.5 min', '2777.778 h']);
  } finally {
    await b.close();
  }
});
