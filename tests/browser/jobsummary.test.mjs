// The job summary tab: a `job.memlens.json` dropped on the page shows the job overview. The real
// sample's summary shows the figures `memlens profiler --json` prints for its raw folders; a
// summary of 1,201 ranks made here from the sample's two (each copy its own role, rank and peak,
// one planted outlier, one failed rank) shows the totals, matrix, outlier and rank details this
// file computes from the JSON itself; a summary of another version is refused naming the file;
// no request leaves the origin; screenshots at 1440×900 and 1024×700, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, SHOTS, openBrowser, openSummary, assertClean, startServer, engineThreads, dropFiles, filesUnder, settled } from './harness.mjs';

const FIXTURE = path.join(root, 'fixtures', 'summary', 'msinsight-level0.memlens.json');
const RAW = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
let server;
let plain;

before(async () => {
  server = await startServer({ isolate: process.env.JM_SINGLE ? false : true });
  plain = await startServer({ isolate: false });
});
after(async () => {
  await server.close();
  await plain.close();
});

const b64 = (text) => Buffer.from(text, 'utf8').toString('base64');

async function fresh(page) {
  await page.goto('about:blank');
  await page.goto(server.url);
  await engineThreads(page);
}

/** Waits for the job summary tab to settle; returns its state. */
async function summarySettled(page, timeout = 120000) {
  await page.waitForFunction(() => {
    const s = document.querySelector('[data-testid="jobsummary"]');
    return s && ['ready', 'error', 'empty'].includes(s.dataset.state);
  }, null, { timeout });
  return page.getAttribute('[data-testid="jobsummary"]', 'data-state');
}

const GRID = '[data-testid="jobsummary"] [data-testid="ascend-matrix"]';
const TABLE_VIEW = '[data-testid="jobsummary"] [data-testid="ascend-rank-table"] .vt-viewport';

/** Whether the rank table's row of rank index `idx` is highlighted and wholly inside the table's view. */
async function rowPlace(page, idx) {
  return page.$eval(TABLE_VIEW, (vp, idx) => {
    const row = vp.querySelector(`[data-testid="rank-row"][data-rank-index="${idx}"]`);
    if (!row) return { selected: false, inView: false };
    const [r, v] = [row.getBoundingClientRect(), vp.getBoundingClientRect()];
    return { selected: row.classList.contains('selected'), inView: r.top >= v.top - 1 && r.bottom <= v.bottom + 1 };
  }, idx);
}

/**
 * The centre of the matrix cell at (row, column) in viewport pixels, the matrix scrolled (into the
 * page, and sideways within itself) so that the cell is in view; with the cell's size (w, h). The
 * geometry is the one the matrix states on its element.
 */
async function cellBox(page, row, col) {
  return page.$eval(GRID, async (g, [row, col]) => {
    const d = Object.fromEntries(['labelWidth', 'headHeight', 'cellWidth', 'cellHeight'].map((k) => [k, Number(g.dataset[k])]));
    g.scrollIntoView({ block: 'center' });
    g.scrollLeft = Math.max(0, col * d.cellWidth - 2 * d.cellWidth);
    g.scrollTop = Math.max(0, row * d.cellHeight - d.cellHeight);
    // The scroll events (which hide the tooltip) are dispatched before the pointer comes.
    await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
    const r = g.getBoundingClientRect();
    return {
      x: r.left + d.labelWidth + col * d.cellWidth - g.scrollLeft + d.cellWidth / 2,
      y: r.top + d.headHeight + row * d.cellHeight - g.scrollTop + d.cellHeight / 2,
      w: d.cellWidth,
      h: d.cellHeight,
    };
  }, [row, col]);
}

/**
 * The rank index of the rank table's row matching `attrs` (e.g. '[data-rank="3"]'). The table is
 * virtual (only the rows in view exist), so it is scrolled page by page from the top, as a user
 * would, until the row is there; the row is left in view. Null when no row matches.
 */
async function rankRowIndex(page, attrs) {
  return page.evaluate(async (attrs) => {
    const scope = '[data-testid="jobsummary"] [data-testid="ascend-rank-table"]';
    const vp = document.querySelector(`${scope} .vt-viewport`);
    const frame = () => new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
    vp.scrollTop = 0;
    for (;;) {
      await frame();
      const row = document.querySelector(`${scope} [data-testid="rank-row"]${attrs}`);
      if (row) {
        vp.scrollTop = Number(row.dataset.index) * row.offsetHeight - vp.clientHeight / 3;
        await frame();
        return row.dataset.rankIndex;
      }
      if (vp.scrollTop + vp.clientHeight >= vp.scrollHeight - 1) return null;
      vp.scrollTop += vp.clientHeight;
    }
  }, attrs);
}

/** Waits until rank index `idx` is the matrix's selection and its detail below is shown. */
function waitSelected(page, idx) {
  return page.waitForFunction((idx) => {
    const g = document.querySelector('[data-testid="jobsummary"] [data-testid="ascend-matrix"]');
    const d = document.querySelector('[data-testid="jobsummary-rank"]');
    return g.dataset.selectedRankIndex === idx && d.dataset.rankIndex === idx && ['ready', 'failed'].includes(d.dataset.state);
  }, idx);
}

async function metrics(page) {
  const all = await page.$$eval('[data-testid="jobsummary"] [data-metric^="ascend-"]', (els) => els.map((e) => [e.dataset.metric, e.dataset.value]));
  return Object.fromEntries(all);
}

/** 1,200 ranks from the sample's two plus one failed rank, and the figures expected of them. */
function bigSummary() {
  const base = JSON.parse(readFileSync(FIXTURE, 'utf8')).ranks;
  const ranks = [];
  for (let k = 0; k < 1200; k++) {
    const r = structuredClone(base[k % base.length]);
    const role = k % 3 === 0 ? 'critic' : 'actor';
    // Peaks within 1.00–1.05 GB, but rank 700 (an actor) at 3 GB: the one outlier.
    const peak = k === 700 ? 3_000_000_000 : 1_000_000_000 + ((k * 7919) % 50_000_000);
    Object.assign(r, { role, rank: k, peak_allocated_bytes: peak });
    Object.assign(r.report, { role, rank: k, peak_allocated_bytes: peak, unreleased_bytes: k * 1000, rows: k + 5 });
    ranks.push(r);
  }
  ranks.push({
    role: 'actor', rank: 1200, step: null, run_dirs: ['job/actor/broken_ascend_pt'], status: 'error',
    error: 'job/actor/broken_ascend_pt/operator_memory.csv: line 3: expected 8 fields', peak_allocated_bytes: 0,
    peak_reserved_bytes: 0, report: null, curve: { component: '', t_ns: [], allocated_bytes: [], reserved_bytes: [] },
    unreleased: [], warnings: [],
  });
  const ok = ranks.filter((r) => r.status === 'ok');
  const expect = {
    ranks: ranks.length,
    peak: Math.max(...ok.map((r) => r.peak_allocated_bytes)),
    unreleased: ok.reduce((a, r) => a + r.report.unreleased_bytes, 0),
    rows: ok.reduce((a, r) => a + r.report.rows, 0),
    cells: ranks.length, // the overview draws a cell per rank, the failed one at 0 B
    failedReason: ranks[1200].error,
  };
  // The head's figures are left empty: the page recomputes them from the ranks.
  const text = JSON.stringify({ format: 'memlens-job-summary', version: 1, totals: {}, matrix: [], outliers: [], ranks });
  return { text, ranks, expect };
}

test('the sample summary shows the figures of memlens profiler --json on its raw folders', async () => {
  const cli = JSON.parse(execFileSync(CLI, ['profiler', RAW, '--json'], { encoding: 'utf8' }));
  const { browser: b, page, state } = await openSummary(server, [{ path: 'job.memlens.json', base64: readFileSync(FIXTURE).toString('base64') }]);
  try {
    assert.equal(state, 'ready');
    const m = await metrics(page);
    assert.equal(m['ascend-ranks'], String(cli.totals.ranks));
    assert.equal(m['ascend-rows'], String(cli.totals.rows));
    assert.equal(m['ascend-peak'], String(cli.totals.peak_allocated_bytes));
    assert.equal(m['ascend-unreleased'], String(cli.totals.unreleased_bytes));
    const rows = await page.$$eval('[data-testid="jobsummary"] [data-testid="rank-row"]', (trs) => trs.map((t) => [t.dataset.rank, t.dataset.peakAllocatedBytes, t.dataset.rows]));
    assert.deepEqual(rows, cli.ranks.map((r) => [String(r.rank), String(r.peak_allocated_bytes), String(r.rows)]));
    // The selected rank (the peak's) lists who held memory at the peak, as the CLI's report does.
    const peakRank = cli.ranks[cli.totals.peak_rank];
    await page.waitForSelector('[data-testid="jobsummary-rank"][data-state="ready"]');
    const live = await page.$$eval('[data-testid="jobsummary-live"] tbody tr', (trs) => trs.length);
    assert.equal(live, peakRank.live_at_peak.length);
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});

test('the single-threaded page (no isolation headers) opens a summary and selects a rank without a page error', async () => {
  const { browser: b, page, state } = await openSummary(plain, [{ path: 'job.memlens.json', base64: readFileSync(FIXTURE).toString('base64') }], { colorScheme: 'dark' });
  try {
    assert.equal(state, 'ready');
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), false);
    assert.equal(await engineThreads(page), 1);
    await page.waitForSelector('[data-testid="jobsummary-rank"][data-state="ready"]');
    const other = await page.$eval('[data-testid="jobsummary"] [data-testid="rank-row"]:not(.selected)', (t) => t.dataset.rankIndex);
    await page.click(`[data-testid="jobsummary"] [data-testid="rank-row"][data-rank-index="${other}"]`);
    await page.waitForSelector(`[data-testid="jobsummary-rank"][data-rank-index="${other}"][data-state="ready"]`);
    assertClean(b, plain.origin);
  } finally {
    await b.close();
  }
});

test('a summary of 1,201 ranks: totals, matrix, the outlier and each rank as the file says; stays responsive', async () => {
  const { text, ranks, expect } = bigSummary();
  const file = [{ path: 'big/job.memlens.json', base64: b64(text) }];
  for (const colorScheme of ['light', 'dark']) {
    for (const viewport of [{ width: 1440, height: 900 }, { width: 1024, height: 700 }]) {
      const { browser: b, page, state } = await openSummary(server, file, { colorScheme, viewport });
      try {
        assert.equal(state, 'ready');
        const m = await metrics(page);
        assert.equal(m['ascend-ranks'], String(expect.ranks));
        assert.equal(m['ascend-peak'], String(expect.peak));
        assert.equal(m['ascend-unreleased'], String(expect.unreleased));
        assert.equal(m['ascend-rows'], String(expect.rows));
        assert.equal(await page.getAttribute(GRID, 'data-cells'), String(expect.cells));
        const flagged = await page.$$eval('[data-testid="jobsummary"] [data-testid="matrix-outliers"] button', (bs) => bs.map((b) => b.title.split('\n')[0]));
        assert.deepEqual(flagged, ['actor · rank 700']);
        // The failed rank is worded as a failed rank with its reason, never as a rejected file.
        assert.equal(await page.getAttribute('[data-testid="jobsummary-failed"]', 'data-failed'), '1');
        assert.equal(await page.textContent('[data-testid="jobsummary-failed"] h2'), '1 rank failed');
        const failedItems = await page.$$eval('[data-testid="jobsummary-failed"] li', (lis) => lis.map((li) => li.textContent));
        assert.deepEqual(failedItems, [`actor · rank 1200no figures: its analysis failed where it ran: ${expect.failedReason}`]);
        assert.equal(await page.textContent('[data-testid="jobsummary"] [data-metric="ascend-warnings"] .sub'), '1 rank failed');
        assert.doesNotMatch(await page.textContent('[data-testid="jobsummary"]'), /rejected|\(s\)/);
        // The call-stack counts fit their column (they were cut to "63 nor…" at 1024 px).
        const cut = await page.$$eval('[data-testid="jobsummary"] .vt-cell.stacks', (cs) => cs.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent));
        assert.deepEqual(cut, [], `call-stack cells cut at ${viewport.width} px`);
        if (colorScheme === 'light' && viewport.width === 1440) {
          // A rank's detail: its curve and lists are the file's.
          const idx = await rankRowIndex(page, '[data-role="critic"][data-rank="3"]');
          await page.click(`[data-testid="jobsummary"] [data-testid="rank-row"][data-rank-index="${idx}"]`);
          await page.waitForSelector(`[data-testid="jobsummary-rank"][data-rank-index="${idx}"][data-state="ready"]`);
          const want = ranks[3];
          assert.equal(await page.getAttribute('[data-testid="jobsummary-curve"]', 'data-columns'), String(want.curve.t_ns.length));
          assert.equal(await page.$$eval('[data-testid="jobsummary-unreleased"] tbody tr', (t) => t.length), want.unreleased.length);
          assert.equal(await page.$$eval('[data-testid="jobsummary-live"] tbody tr', (t) => t.length), want.report.live_at_peak.length);
          // The failed rank says why.
          const bad = await rankRowIndex(page, '[data-rank="1200"]');
          await page.click(`[data-testid="jobsummary"] [data-testid="rank-row"][data-rank-index="${bad}"]`);
          await page.waitForSelector('[data-testid="jobsummary-rank-error"]');
          assert.match(await page.textContent('[data-testid="jobsummary-rank-error"]'), /line 3: expected 8 fields/);
          // Responsiveness, recorded (not asserted: timings are measured by benchmarks, see
          // scripts/bench-matrix-page.mjs): the longest main-thread task while the pointer crosses
          // 200 matrix cells.
          const box = await cellBox(page, 0, 0);
          await page.evaluate(() => {
            window.__worst = 0;
            window.__obs = new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__worst = Math.max(window.__worst, e.duration); });
            window.__obs.observe({ type: 'longtask', buffered: false });
          });
          for (let k = 0; k < 200; k++) await page.mouse.move(box.x + ((k * 37) % 12) * box.w, box.y + (k % 2) * box.h);
          const longest = await page.evaluate(() => { window.__obs.disconnect(); return window.__worst; });
          console.log(`jobsummary 1201 ranks: load ${await page.getAttribute('[data-testid="jobsummary"]', 'data-load-ms')} ms, wasm memory ${await page.getAttribute('[data-testid="jobsummary"]', 'data-memory-bytes')} B, longest task while hovering ${longest.toFixed(0)} ms`);
        }
        await page.screenshot({ path: path.join(SHOTS, `jobsummary-${colorScheme}-${viewport.width}.png`), fullPage: false });
        assertClean(b, server.origin);
      } finally {
        await b.close();
      }
    }
  }
});

test('a 1,201-rank overview: a rank opens by a click on its cell and by the keyboard, with a tooltip; the matrix stays a few DOM nodes', async () => {
  const { text, ranks } = bigSummary();
  const { browser: b, page, state } = await openSummary(server, [{ path: 'big/job.memlens.json', base64: b64(text) }], { viewport: { width: 1440, height: 900 } });
  try {
    assert.equal(state, 'ready');
    // Rows of the matrix: the roles in the order of the rank table (the job's order of ranks);
    // columns: the ranks by number. Each rank's index comes from its row in the rank table.
    const indexOf = (role, rank) => rankRowIndex(page, `[data-role="${role}"][data-rank="${rank}"]`);
    const roleOf = (k) => ranks[k].role;
    assert.deepEqual([roleOf(3), roleOf(700), roleOf(701), roleOf(702), roleOf(1200)], ['critic', 'actor', 'actor', 'critic', 'actor']);
    await rankRowIndex(page, '[data-rank-index="0"]');
    const firstRole = await page.$eval('[data-testid="jobsummary"] [data-testid="rank-row"][data-rank-index="0"]', (t) => t.dataset.role);
    const ROW = firstRole === 'critic' ? { critic: 0, actor: 1 } : { actor: 0, critic: 1 };
    const toCritic = ROW.critic < ROW.actor ? 'ArrowUp' : 'ArrowDown';
    const toActor = ROW.critic < ROW.actor ? 'ArrowDown' : 'ArrowUp';
    const selectedIs = (idx) => waitSelected(page, idx);

    // A click on the cell of critic rank 3.
    const critic3 = await indexOf('critic', 3);
    // The rank table is scrolled away to its end first: choosing the rank in the matrix brings its
    // row back into the table's view, highlighted.
    await page.$eval(TABLE_VIEW, (vp) => { vp.scrollTop = vp.scrollHeight; });
    let box = await cellBox(page, ROW.critic, 3);
    await page.mouse.click(box.x, box.y);
    await selectedIs(critic3);
    assert.deepEqual(await rowPlace(page, critic3), { selected: true, inView: true });

    // Far along the matrix (it scrolls sideways): the outlier's cell, hovered, says what it is.
    box = await cellBox(page, ROW.actor, 700);
    await page.mouse.move(box.x, box.y);
    await page.waitForSelector('[data-testid="tooltip"]:not([hidden])');
    const tip = await page.textContent('[data-testid="tooltip"]');
    assert.match(tip, /^actor · rank 700/);
    assert.match(tip, /peak allocated 3,000,000,000 bytes/);
    assert.match(tip, /stands out: \+/);
    assert.equal(await page.getAttribute(GRID, 'data-hover-rank-index'), await indexOf('actor', 700));
    await page.mouse.click(box.x, box.y);
    await selectedIs(await indexOf('actor', 700));
    // An empty cell (no actor has rank 3) opens nothing.
    box = await cellBox(page, ROW.actor, 3);
    await page.mouse.click(box.x, box.y);
    await page.waitForTimeout(300);
    assert.equal(await page.getAttribute(GRID, 'data-selected-rank-index'), await indexOf('actor', 700));

    // Keyboard: the matrix is one ARIA grid; focus puts the active cell on the selected rank,
    // arrows move it (read through aria-activedescendant), Enter opens.
    assert.equal(await page.getAttribute(GRID, 'role'), 'grid');
    await page.focus(GRID);
    const activeText = () => page.$eval(GRID, (g) => document.getElementById(g.getAttribute('aria-activedescendant')).textContent);
    assert.match(await activeText(), /^actor · rank 700, peak allocated/);
    await page.keyboard.press('ArrowRight');
    assert.match(await activeText(), /^actor · rank 701,/);
    await page.keyboard.press(toCritic);
    assert.match(await activeText(), /no such rank/); // 701 is an actor's
    await page.keyboard.press('ArrowRight');
    assert.match(await activeText(), /^critic · rank 702,/);
    await page.keyboard.press('Enter');
    await selectedIs(await indexOf('critic', 702));
    assert.equal(await page.$eval(GRID, (g) => document.getElementById(g.getAttribute('aria-activedescendant')).getAttribute('aria-selected')), 'true');
    // End goes to the last rank (the failed one, an actor): the matrix scrolls to it.
    await page.keyboard.press(toActor);
    await page.keyboard.press('End');
    assert.match(await activeText(), /^actor · rank 1200,/);
    const scroll = await page.$eval(GRID, (g) => [g.scrollLeft + g.clientWidth, g.scrollWidth]);
    assert.ok(scroll[0] >= scroll[1] - 1, `scrolled to the end: ${scroll}`);
    await page.keyboard.press(' ');
    await selectedIs(await indexOf('actor', 1200));
    await page.waitForSelector('[data-testid="jobsummary-rank-error"]');

    // The matrix holds a handful of nodes whatever the ranks; the page is screenshotted focused.
    const matrixNodes = await page.$eval(GRID, (g) => g.closest('.matrix-view').querySelectorAll('*').length);
    assert.ok(matrixNodes <= 8, `matrix nodes: ${matrixNodes}`);
    console.log(`jobsummary 1201 ranks: ${matrixNodes} matrix nodes, ${await page.evaluate(() => document.getElementsByTagName('*').length)} on the page`);
    await page.$eval(GRID, (g) => g.scrollIntoView({ block: 'center' }));
    await page.screenshot({ path: path.join(SHOTS, 'jobsummary-matrix-keyboard.png'), fullPage: false });
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});

test('a rank the pointer rests on is shown by the click itself; repainting only the changed cells draws what a whole repaint draws', async () => {
  const { text } = bigSummary();
  const { browser: b, page, state } = await openSummary(server, [{ path: 'big/job.memlens.json', base64: b64(text) }], { viewport: { width: 1440, height: 900 } });
  try {
    assert.equal(state, 'ready');
    await rankRowIndex(page, '[data-rank-index="0"]');
    const firstRole = await page.$eval('[data-testid="jobsummary"] [data-testid="rank-row"][data-rank-index="0"]', (t) => t.dataset.role);
    const actorRow = firstRole === 'actor' ? 0 : 1;
    // What the selected rank's panel says at the moment the click has been handled (a listener on
    // the window runs after the matrix's own): with the pointer resting on the cell first, its
    // figures are already there, so the click's frame shows them.
    await page.evaluate(() => {
      window.__atClick = [];
      window.addEventListener('click', () => {
        const d = document.querySelector('[data-testid="jobsummary-rank"]');
        window.__atClick.push({ rank: d.dataset.rankIndex, state: d.dataset.state, title: d.querySelector('h2').textContent });
      });
    });
    for (const rank of [5, 8, 11]) {
      const box = await cellBox(page, actorRow, rank);
      await page.mouse.move(box.x, box.y);
      // The rank under the pointer, once its answer, fetched while the pointer rests, is at hand
      // (the detail panel says which rank it fetched ahead last).
      const hovered = await (await page.waitForFunction((grid) => {
        const h = document.querySelector(grid).dataset.hoverRankIndex;
        return h !== undefined && h !== '-1' && document.querySelector('[data-testid="jobsummary-rank"]').dataset.aheadRankIndex === h ? h : null;
      }, GRID, { timeout: 30000 })).jsonValue();
      await page.mouse.click(box.x, box.y);
      const at = (await page.evaluate(() => window.__atClick)).at(-1);
      assert.deepEqual({ rank: at.rank, state: at.state }, { rank: hovered, state: 'ready' }, `rank ${rank}: the panel at the click`);
      assert.match(at.title, new RegExp(`actor · rank ${rank}$`));
      await waitSelected(page, hovered);
    }
    // The canvas after hover and selection moves (each repaints a few cells) against the same
    // state painted whole (a scroll repaints every cell in view).
    const pixels = () => page.$eval(GRID, async (g) => {
      await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
      const c = g.parentElement.querySelector('canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let h = 0;
      for (let k = 0; k < d.length; k++) h = (h * 31 + d[k]) | 0;
      return { w: c.width, h: c.height, sum: h };
    });
    const box = await cellBox(page, actorRow, 9);
    await page.mouse.move(box.x, box.y);
    await page.mouse.move(box.x + box.w, box.y);
    const partial = await pixels();
    await page.$eval(GRID, async (g) => {
      const frame = () => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
      g.scrollLeft += 1;
      await frame();
      g.scrollLeft -= 1;
      await frame();
    });
    const whole = await pixels();
    assert.deepEqual(partial, whole);
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});

test('a 1,201-rank rank table: a rank opens by a click on its row and by the keyboard, sorts by peak; only the rows in view are in the DOM', async () => {
  const { text, ranks, expect } = bigSummary();
  const { browser: b, page, state } = await openSummary(server, [{ path: 'big/job.memlens.json', base64: b64(text) }], { viewport: { width: 1440, height: 900 } });
  try {
    assert.equal(state, 'ready');
    const ROWS = '[data-testid="jobsummary"] [data-testid="rank-row"]';
    const rowData = (idx) => page.$eval(`${ROWS}[data-rank-index="${idx}"]`, (t) => ({ role: t.dataset.role, rank: t.dataset.rank, peak: t.dataset.peakAllocatedBytes, rows: t.dataset.rows }));

    // The overview opens on the highest peak (actor 700, the outlier): its row is highlighted in view.
    const peakIdx = await page.getAttribute(GRID, 'data-selected-rank-index');
    assert.deepEqual(await rowData(peakIdx), { role: 'actor', rank: '700', peak: String(expect.peak), rows: String(ranks[700].report.rows) });
    assert.deepEqual(await rowPlace(page, peakIdx), { selected: true, inView: true });

    // Only the rows in view (and a few beyond) exist: the DOM stays small whatever the ranks.
    const inDom = await page.$$eval(ROWS, (t) => t.length);
    const nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
    assert.ok(inDom > 5 && inDom <= 40, `rank rows in the DOM: ${inDom}`);
    assert.ok(nodes < 3000, `DOM nodes on the page: ${nodes}`);
    // The whole table's model is on the table (what the benchmarks report): every rank, all rows.
    const TABLE = '[data-testid="jobsummary"] [data-testid="ascend-rank-table"]';
    assert.equal(await page.getAttribute(TABLE, 'data-total'), String(expect.ranks));
    assert.equal(await page.getAttribute(TABLE, 'data-total-rows'), String(expect.rows));

    // A click on a row (critic rank 3, found by scrolling the table) opens that rank.
    const critic3 = await rankRowIndex(page, '[data-role="critic"][data-rank="3"]');
    assert.deepEqual(await rowData(critic3), { role: 'critic', rank: '3', peak: String(ranks[3].peak_allocated_bytes), rows: String(ranks[3].report.rows) });
    await page.click(`${ROWS}[data-rank-index="${critic3}"]`);
    await waitSelected(page, critic3);
    assert.deepEqual(await rowPlace(page, critic3), { selected: true, inView: true });

    // The keyboard: the table is one grid; the arrows move from the clicked row, Enter opens. The
    // table lists the ranks in the job's order, so the next row is the next rank index.
    await page.focus(TABLE_VIEW);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    const next = String(Number(critic3) + 1);
    await waitSelected(page, next);
    assert.deepEqual(await rowPlace(page, next), { selected: true, inView: true });
    // End goes to the last row (the table scrolls there); Enter opens it.
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    const last = String(ranks.length - 1);
    await waitSelected(page, last);
    assert.deepEqual(await rowPlace(page, last), { selected: true, inView: true });

    // Sorted by peak allocated (highest first): the outlier leads, the peaks fall; the selected
    // rank keeps its highlight and is brought into view at its new place.
    await page.click('[data-testid="jobsummary"] [data-testid="ascend-rank-table"] [role="columnheader"]:has-text("Peak allocated")');
    await page.waitForFunction((sel) => document.querySelector(`${sel} [data-testid="rank-row"].selected`), '[data-testid="jobsummary"] [data-testid="ascend-rank-table"]');
    assert.deepEqual(await rowPlace(page, last), { selected: true, inView: true });
    const top = await page.$eval(TABLE_VIEW, async (vp) => {
      vp.scrollTop = 0;
      await new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
      return [...vp.querySelectorAll('[data-testid="rank-row"]')].sort((a, b) => a.dataset.index - b.dataset.index).slice(0, 12).map((t) => Number(t.dataset.peakAllocatedBytes));
    });
    const okPeaks = ranks.filter((r) => r.status === 'ok').map((r) => r.peak_allocated_bytes).sort((a, b) => b - a);
    assert.deepEqual(top, okPeaks.slice(0, 12));
    await page.focus(TABLE_VIEW);
    await page.keyboard.press('Home');
    await page.keyboard.press('Enter');
    await waitSelected(page, peakIdx);
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});

test('a summary of another version is refused naming the file', async () => {
  const { browser: b, page, state } = await openSummary(server, [{ path: 'new/v3.memlens.json', base64: b64('{"format":"memlens-job-summary","version":3,"ranks":[]}\n') }]);
  try {
    assert.equal(state, 'error');
    const msg = await page.textContent('[data-testid="jobsummary-error"]');
    assert.match(msg, /new\/v3\.memlens\.json/);
    assert.match(msg, /version/);
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});

test('a rank\'s run folder dropped after the summary replaces that rank with the figures of memlens profiler --json', async () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'memlens-jobsummary-raw-'));
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    // A generated job of 2 roles × 2 ranks and the summary the CLI writes of it.
    const job = path.join(tmp, 'job');
    execFileSync(CLI, ['generate', 'profiler', '--out', job, '--roles', '2', '--ranks', '2', '--trace-mb', '0.2', '--rows', '600', '--steps', '2', '--seed', '5'], { stdio: 'ignore' });
    const summaryPath = path.join(tmp, 'job.memlens.json');
    execFileSync(CLI, ['profiler', job, '--summary', summaryPath], { stdio: 'ignore' });
    const text = readFileSync(summaryPath, 'utf8');
    const summary = JSON.parse(text);
    const all = JSON.parse(execFileSync(CLI, ['profiler', job, '--json'], { encoding: 'utf8' }));
    // The folder of the second rank of the first role, dropped alone (as a user drags it).
    const target = all.ranks[1];
    const folder = path.join(tmp, target.run_dirs[0]);
    const cli = JSON.parse(execFileSync(CLI, ['profiler', folder, '--json'], { encoding: 'utf8' })).ranks[0];
    assert.equal(cli.rank, target.rank);
    assert.equal(summary.ranks.length, 4);

    const page = await b.page();
    const rowOf = (idx) => page.$eval(`[data-testid="jobsummary"] [data-testid="rank-row"][data-rank-index="${idx}"]`, (t) => [t.dataset.role, t.dataset.rank, t.dataset.peakAllocatedBytes, t.dataset.rows]);
    const dropSummaryThenFolder = async (summaryText) => {
      await fresh(page);
      await dropFiles(page, [{ path: 'job.memlens.json', base64: b64(summaryText) }]);
      assert.equal(await summarySettled(page), 'ready');
      await dropFiles(page, filesUnder(folder));
      // This drop's status: until the folder is listed the page still shows the summary alone.
      await settled(page, 120000);
      await page.waitForFunction(() => document.querySelector('[data-testid="jobsummary-raw"]') || document.querySelector('[data-testid="jobsummary"]')?.dataset.state === 'error', null, { timeout: 120000 });
      assert.equal(await summarySettled(page), 'ready');
    };

    // The summary as written: the folder's rank is replaced, its figures agree.
    await dropSummaryThenFolder(text);
    assert.equal(await page.getAttribute('[data-testid="jobsummary-raw"]', 'data-replaced'), '1');
    const item = await page.$eval('[data-testid="jobsummary-raw"] li', (li) => [li.dataset.outcome, li.dataset.disagreements, li.textContent]);
    assert.deepEqual(item.slice(0, 2), ['replaced', '0'], item[2]);
    assert.match(item[2], new RegExp(`${target.role} · rank ${target.rank}`));
    const idx = await page.$eval(`[data-testid="jobsummary"] [data-testid="rank-row"][data-role="${target.role}"][data-rank="${target.rank}"]`, (t) => t.dataset.rankIndex);
    assert.deepEqual(await rowOf(idx), [target.role, String(cli.rank), String(cli.peak_allocated_bytes), String(cli.rows)]);
    assert.equal(await page.$$eval('[data-testid="jobsummary"] [data-testid="rank-row"]', (t) => t.length), 4);
    // Its full views opened beside: the torch_npu tab shows the folder's rank.
    await page.waitForFunction(() => ['ready', 'empty', 'error'].includes(document.querySelector('[data-testid="ascend"]')?.dataset.state), null, { timeout: 120000 });
    assert.equal(await page.getAttribute('[data-testid="ascend"]', 'data-state'), 'ready');
    const ascendRows = await page.$$eval('[data-testid="ascend"] [data-testid="rank-row"]', (trs) => trs.map((t) => [t.dataset.rank, t.dataset.peakAllocatedBytes]));
    assert.deepEqual(ascendRows, [[String(cli.rank), String(cli.peak_allocated_bytes)]]);
    await page.click('[data-testid="jobsummary-raw"] li button');
    await page.waitForSelector(`[data-testid="jobsummary-rank"][data-rank-index="${idx}"][data-state="ready"]`);
    await page.screenshot({ path: path.join(SHOTS, 'jobsummary-raw-folder.png'), fullPage: false });

    // A summary whose figure for that rank is stale, and which lacks another rank: the folder's
    // figures replace the stale one, saying so with both values.
    // Edited as text (one rank a line): nanosecond times exceed a double's integers, so a parse
    // and a stringify here would change them too.
    const lines = text.split('\n');
    const k = lines.findIndex((l) => l.includes(`"run_dirs":${JSON.stringify(target.run_dirs)}`));
    assert.ok(k > 0 && lines[k].endsWith(','), 'the target rank is a middle line of the file');
    const stale = 1234567;
    const edited = [...lines];
    edited[k] = edited[k].replace(/"peak_allocated_bytes":\d+/, `"peak_allocated_bytes":${stale}`);
    assert.notEqual(edited[k], lines[k]);
    await dropSummaryThenFolder(edited.join('\n'));
    const differs = await page.$eval('[data-testid="jobsummary-raw"] li', (li) => [li.dataset.outcome, li.dataset.disagreements, li.textContent]);
    assert.deepEqual(differs.slice(0, 2), ['replaced', '1']);
    assert.match(differs[2], /peak allocated: [^;]*\(1,234,567 bytes\) in the summary/);
    assert.ok(differs[2].includes(`(${Number(cli.peak_allocated_bytes).toLocaleString('en-US')} bytes) from the folder`), differs[2]);
    assert.deepEqual((await rowOf(idx)).slice(2), [String(cli.peak_allocated_bytes), String(cli.rows)]);

    // A summary without that rank: the folder matches no rank, the summary's ranks are unchanged.
    await dropSummaryThenFolder(lines.filter((_, j) => j !== k).join('\n'));
    const unmatched = await page.$eval('[data-testid="jobsummary-raw"] li', (li) => [li.dataset.outcome, li.textContent]);
    assert.equal(unmatched[0], 'unmatched');
    assert.match(unmatched[1], /matches no rank of job\.memlens\.json/);
    assert.equal(await page.$$eval('[data-testid="jobsummary"] [data-testid="rank-row"]', (t) => t.length), 3);
    assertClean(b, server.origin);
  } finally {
    await b.close();
    rmSync(tmp, { recursive: true, force: true });
  }
});

/**
 * Three ranks of a big job: the sample's first rank with the figures of an 8.6 M-row rank (its
 * rows, call-stack counts and unreleased rows in the millions, peaks in the hundreds of GiB), the
 * sample's second as it is, and a failed rank (its analysis failed where it ran).
 */
function hugeSummary() {
  const base = JSON.parse(readFileSync(FIXTURE, 'utf8')).ranks;
  const huge = structuredClone(base[0]);
  const GiB = 2 ** 30;
  Object.assign(huge, { role: 'actor', rank: 63, peak_allocated_bytes: 612 * GiB + 12345, peak_reserved_bytes: 1000 * GiB - 1 });
  Object.assign(huge.report, {
    role: 'actor', rank: 63, rows: 8_604_114, rows_pta: 8_000_000, rows_ge: 604_114,
    stacks: { direct: 4_302_057, via_forward: 2_151_028, approximate: 1_547_000, none: 604_029 },
    peak_allocated_bytes: 612 * GiB + 12345, peak_reserved_bytes: 1000 * GiB - 1, fragmentation_bytes: 387 * GiB,
    unreleased_rows: 1_234_567, unreleased_bytes: 999 * GiB,
  });
  const plain = structuredClone(base[1]);
  Object.assign(plain, { role: 'actor', rank: 1 });
  Object.assign(plain.report, { role: 'actor', rank: 1 });
  const failed = {
    role: 'actor', rank: 2, step: null, run_dirs: ['job/actor/rank2_ascend_pt'], status: 'error',
    error: 'job/actor/rank2_ascend_pt/operator_memory.csv: line 3: expected 8 fields', peak_allocated_bytes: 0,
    peak_reserved_bytes: 0, report: null, curve: { component: '', t_ns: [], allocated_bytes: [], reserved_bytes: [] },
    unreleased: [], warnings: [],
  };
  const ranks = [plain, failed, huge];
  return { text: JSON.stringify({ format: 'memlens-job-summary', version: 1, totals: {}, matrix: [], outliers: [], ranks }), ranks };
}

test('a rank of 8.6 M rows: no figure of the rank table is cut; a failed rank is marked failed in the table and the matrix', async () => {
  const { text, ranks } = hugeSummary();
  const huge = ranks[2].report;
  for (const colorScheme of ['light', 'dark']) {
    for (const viewport of [{ width: 1440, height: 900 }, { width: 1024, height: 700 }]) {
      const { browser: b, page, state } = await openSummary(server, [{ path: 'big/job.memlens.json', base64: b64(text) }], { colorScheme, viewport });
      try {
        assert.equal(state, 'ready');
        const TABLE = '[data-testid="jobsummary"] [data-testid="ascend-rank-table"]';
        // Every cell but the role (a name, whole in its title) shows all of its text.
        const cut = await page.$$eval(`${TABLE} [data-testid="rank-row"] .vt-cell:not(:first-child)`, (cs) => cs.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent));
        assert.deepEqual(cut, [], `cells cut at ${viewport.width} px ${colorScheme}`);
        // The big rank's figures are whole in their cells (as format.js writes them, independently
        // here: en-US digit groups).
        const cells = await page.$eval(`${TABLE} [data-testid="rank-row"][data-rank="63"]`, (row) => [...row.querySelectorAll('.vt-cell')].map((c) => c.textContent));
        assert.ok(cells.includes('8,604,114'), cells.join(' | '));
        assert.ok(cells.some((c) => c.includes('4,302,057 direct · 2,151,028 via fwd · 1,547,000 approx · 604,029 none')), cells.join(' | '));
        assert.ok(cells.includes('1,234,567 · 999.0 GiB'), cells.join(' | '));
        assert.equal(huge.rows, 8_604_114);
        // The failed rank: a badge and a mark in words, never "0 B" or "0".
        const bad = await page.$eval(`${TABLE} [data-testid="rank-row"][data-rank="2"]`, (row) => ({
          status: row.dataset.status,
          badge: row.querySelector('[data-testid="rank-failed"]')?.textContent,
          peak: row.querySelector('[data-testid="rank-failed-peak"]')?.textContent,
          cells: [...row.querySelectorAll('.vt-cell')].map((c) => c.textContent),
        }));
        assert.equal(bad.status, 'error');
        assert.equal(bad.badge, 'failed');
        assert.equal(bad.peak, '✕ failed');
        assert.ok(!bad.cells.some((c) => /^0( B)?$/.test(c)), bad.cells.join(' | '));
        // The read ranks carry no such mark.
        assert.equal(await page.$$eval(`${TABLE} [data-testid="rank-failed"]`, (n) => n.length), 1);
        // The matrix: the failed rank's cell is painted in the page's error background (not the
        // heat of a 0 B peak), and its tooltip says it failed, with the reason.
        const expected = await page.evaluate(() => {
          const probe = document.createElement('div');
          probe.style.color = getComputedStyle(document.documentElement).getPropertyValue('--error-bg');
          document.body.append(probe);
          const c = getComputedStyle(probe).color;
          probe.remove();
          return c.match(/\d+/g).slice(0, 3).map(Number);
        });
        const box = await cellBox(page, 0, 1);
        const cell = await page.$eval(GRID, (g) => {
          const d = Object.fromEntries(['labelWidth', 'headHeight', 'cellWidth', 'cellHeight'].map((k) => [k, Number(g.dataset[k])]));
          const canvas = g.parentElement.querySelector('canvas');
          const dpr = canvas.width / canvas.clientWidth;
          // Column of rank 2 (ranks 1, 2, 63 in one role's row): the second; a few pixels inside it.
          const x = Math.round((d.labelWidth + d.cellWidth + 8 - g.scrollLeft) * dpr);
          const y = Math.round((d.headHeight + 8 - g.scrollTop) * dpr);
          return [...canvas.getContext('2d').getImageData(x, y, 1, 1).data].slice(0, 3);
        });
        assert.ok(cell.every((v, k) => Math.abs(v - expected[k]) <= 2), `failed cell ${cell} is the error background ${expected}`);
        // The big rank's figures stay inside its cell ("res. 1000.0 GiB" ran over its left edge
        // into the gap before the failed rank's cell): the gap between the two is left unpainted.
        const spilled = await page.$eval(GRID, (g) => {
          const d = Object.fromEntries(['labelWidth', 'headHeight', 'cellWidth', 'cellHeight'].map((k) => [k, Number(g.dataset[k])]));
          const canvas = g.parentElement.querySelector('canvas');
          const dpr = canvas.width / canvas.clientWidth;
          const x = Math.round((d.labelWidth + 2 * d.cellWidth - g.scrollLeft) * dpr);
          const y0 = Math.round((d.headHeight + 2 - g.scrollTop) * dpr);
          const px = canvas.getContext('2d').getImageData(x, y0, 1, Math.round((d.cellHeight - 4) * dpr)).data;
          let n = 0;
          for (let k = 3; k < px.length; k += 4) if (px[k] > 0) n++;
          return n;
        });
        assert.equal(spilled, 0, 'pixels painted in the gap between two cells');
        await page.screenshot({ path: path.join(SHOTS, `jobsummary-huge-${colorScheme}-${viewport.width}.png`), fullPage: false });
        await page.locator(TABLE).screenshot({ path: path.join(SHOTS, `rank-table-huge-${colorScheme}-${viewport.width}.png`) });
        await page.mouse.move(box.x, box.y);
        await page.waitForFunction(() => /rank 2/.test(document.querySelector('[data-testid="tooltip"]')?.textContent || ''), null, { timeout: 5000 });
        const tip = await page.textContent('[data-testid="tooltip"]');
        assert.match(tip, /actor · rank 2.*no figures: its analysis failed where it ran: .*line 3: expected 8 fields/s);
        assertClean(b, server.origin);
      } finally {
        await b.close();
      }
    }
  }
});
