// Selecting a rank in a job's overview: the click's own task shows the choice (the matrix cell,
// the rank table's row, the rank bar), the rank's views follow after the frame; a second click
// before the first rank's views were drawn ends with the second rank's views alone, whatever the
// moment it comes. A generated job of 2 roles × 3 ranks, read by the page; every expectation
// (titles, the table's row count, the live set at the peak, the unreleased bytes) comes from
// `memlens profiler --json` on the same folder. Screenshots of the views after a switch at
// 1440×900 and 1024×700, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { CLI, openBrowser, startServer, engineThreads, settled, filesUnder, dropFiles, assertClean, screenshot, resizeAndDraw } from './harness.mjs';

let server;
let tmp;
let job;
let cli;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-rank-switch-'));
  job = path.join(tmp, 'job');
  execFileSync(CLI, ['generate', 'profiler', '--out', job, '--roles', '2', '--ranks', '3', '--trace-mb', '0.3', '--rows', '900', '--steps', '2', '--seed', '21'], { stdio: 'ignore' });
  cli = JSON.parse(execFileSync(CLI, ['profiler', '--json', job], { encoding: 'utf8', maxBuffer: 1 << 28 }));
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The label the page gives a rank ("role · rank N", with its step when the folder names one). */
const label = (r) => [r.role || '(no role)', `rank ${r.rank}`, ...(r.step !== null && r.step !== undefined ? [`step ${r.step}`] : [])].join(' · ');

/** What rank `i`'s views must show, from the CLI's JSON. */
function expected(i) {
  const r = cli.ranks[i];
  return {
    label: label(r),
    rows: String(r.rows),
    unreleased: String(r.unreleased_bytes),
    live: r.live_at_peak.map((g) => ({ frame: g.frame, bytes: g.bytes, count: g.count })),
  };
}

/** Waits until every view of the page shows rank index `i` (its drawing hooks), then reads them. */
async function shownViews(page, i) {
  await page.waitForFunction((i) => {
    const root = document.querySelector('[data-testid="ascend"]');
    const q = (s) => document.querySelector(s);
    const table = q('[data-testid="ascend-table"]');
    return root.dataset.views === 'current' && root.dataset.rank === i
      && q('[data-testid="memory-canvas"]').dataset.rank === i
      && q('[data-testid="timeline-canvas"]').dataset.rank === i
      && table.dataset.rank === i && table.dataset.state === 'ready'
      && q('[data-testid="live-groups"]').dataset.state === 'ready'
      && q('[data-testid="unreleased-groups"]').dataset.state === 'ready';
  }, String(i), { timeout: 60000 });
  // Answers to the first rank still on their way land now, if any were to land.
  await page.waitForTimeout(400);
  await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
  return page.evaluate(() => {
    const q = (s) => document.querySelector(s);
    const title = (id) => q(`#ascend-${id} h2`).textContent;
    const more = q('[data-testid="live-groups"] [data-testid="show-all-groups"]');
    if (more) more.click();
    return {
      rank: q('[data-testid="ascend"]').dataset.rank,
      views: q('[data-testid="ascend"]').dataset.views,
      memoryDrawn: q('[data-testid="memory-canvas"]').dataset.rank,
      timelineDrawn: q('[data-testid="timeline-canvas"]').dataset.rank,
      tableRank: q('[data-testid="ascend-table"]').dataset.rank,
      titles: Object.fromEntries(['memory', 'timeline', 'table', 'live', 'unreleased'].map((id) => [id, title(id)])),
      rows: q('[data-testid="ascend-table"]').dataset.total,
      unreleased: q('[data-testid="unreleased-groups"]').dataset.totalBytes,
      live: [...document.querySelectorAll('[data-testid="live-group"]')].map((r) => ({ frame: r.querySelector('.group-frame').dataset.frame, bytes: Number(r.dataset.bytes), count: Number(r.dataset.count) })),
      busy: [...document.querySelectorAll('.ascend-view[aria-busy="true"]')].map((n) => n.id),
    };
  });
}

test('a second click before the first rank\'s views are drawn ends with the second rank\'s views only', async () => {
  assert.equal(cli.ranks.length, 6);
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    await dropFiles(page, filesUnder(job));
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
    // The page's order of ranks is the CLI's (checked on the rank table's rows).
    const order = await page.$$eval('[data-testid="ascend"] [data-testid="rank-row"]', (rows) => rows.map((r) => [r.dataset.rankIndex, r.dataset.role, r.dataset.rank]));
    assert.deepEqual(order.map(([i, role, rank]) => [Number(i), role, rank]).sort((x, y) => x[0] - y[0]), cli.ranks.map((r, i) => [i, r.role, String(r.rank)]));
    // The ranks differ where the test looks: a mix would show.
    for (let i = 1; i < 6; i++) assert.notDeepEqual(expected(i).live, expected(0).live, `rank ${i}'s live set differs from rank 0's`);

    // Pairs of clicks on the rank table's rows, the second 0, 1, 2, 4 and 8 frames after the
    // first, or once the first rank's memory chart asked for its curves.
    const plans = [[1, 2, 0], [3, 4, 1], [5, 0, 2], [2, 5, 4], [4, 1, 8], [0, 3, 'asked']];
    for (const [first, second, gap] of plans) {
      const atClick = await page.evaluate(async ({ first, second, gap }) => {
        const row = (i) => document.querySelector(`[data-testid="ascend"] [data-testid="rank-row"][data-rank-index="${i}"]`);
        const frame = () => new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
        row(first).click();
        if (gap === 'asked') {
          // The first rank's views are being drawn: its chart has asked for its curves.
          for (let k = 0; k < 600 && document.querySelector('[data-testid="ascend"]').dataset.views !== 'current'; k++) {
            if (!document.querySelector('#ascend-memory').hasAttribute('aria-busy')) break;
            await frame();
          }
        } else for (let k = 0; k < gap; k++) await frame();
        row(second).click();
        // In the click's own task (its microtasks run): the selection is shown where the click
        // was, in the matrix and in the rank bar.
        await Promise.resolve();
        return {
          matrix: document.querySelector('[data-testid="ascend"] [data-testid="ascend-matrix"]').dataset.selectedRankIndex,
          bar: document.querySelector('[data-testid="rank-select"]').value,
          row: row(second).classList.contains('selected'),
          memoryTitle: document.querySelector('#ascend-memory h2').textContent,
        };
      }, { first, second, gap });
      const want = expected(second);
      assert.deepEqual(atClick, { matrix: String(second), bar: String(second), row: true, memoryTitle: `Memory over time — ${want.label}` }, `gap ${gap}: the click's task shows rank ${second}`);
      const seen = await shownViews(page, second);
      const other = expected(first).label;
      assert.deepEqual({ rank: seen.rank, views: seen.views, memoryDrawn: seen.memoryDrawn, timelineDrawn: seen.timelineDrawn, tableRank: seen.tableRank, busy: seen.busy },
        { rank: String(second), views: 'current', memoryDrawn: String(second), timelineDrawn: String(second), tableRank: String(second), busy: [] }, `gap ${gap}`);
      for (const [id, text] of Object.entries(seen.titles)) {
        assert.ok(text.endsWith(`— ${want.label}`), `gap ${gap}: ${id} titled "${text}", want rank ${second} (${want.label})`);
        assert.ok(!text.includes(other), `gap ${gap}: ${id} still names the first rank`);
      }
      assert.equal(seen.rows, want.rows, `gap ${gap}: the table's rows are rank ${second}'s`);
      assert.equal(seen.unreleased, want.unreleased, `gap ${gap}: unreleased bytes of rank ${second}`);
      assert.deepEqual(seen.live, want.live, `gap ${gap}: the live set at rank ${second}'s peak`);
    }

    // The views after a switch, at both sizes and in both schemes, for a human to look at.
    for (const colorScheme of ['light', 'dark']) {
      for (const viewport of [{ width: 1440, height: 900 }, { width: 1024, height: 700 }]) {
        await page.emulateMedia({ colorScheme });
        await resizeAndDraw(page, viewport, colorScheme);
        await screenshot(page, `rank-switch-${colorScheme}-${viewport.width}`);
      }
    }
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});
