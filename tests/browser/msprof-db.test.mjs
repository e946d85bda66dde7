// MindSpore's database export (msprof's layout, `ascend_mindspore_profiler_3.db` with no text
// file) opens on the page, dropped as its run folder and as the file alone. The expectations are
// the figures worked out by hand from the fixture's NPU_OP_MEM rows (see
// tests/profiler_msprof_db.rs): at the GE allocator's peak (4500 bytes) Add-op2 (3000 bytes) and
// Cast-op3 (2000 bytes) are alive, and Cast-op3 is never released. Screenshots of the overview at
// 1440×900 and 1024×700, light and dark, go to test-results/screenshots/msprof-db-*.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { root, openSample, startServer, filesUnder, screenshot, assertClean } from './harness.mjs';

const RUN = path.join(root, 'fixtures', 'msprof_db', 'w_1_20250101000000000_ascend_ms');
const DB = path.join(RUN, 'ASCEND_PROFILER_OUTPUT', 'ascend_mindspore_profiler_3.db');
const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 700 },
];
const LIVE = [
  { frame: 'cann::Add-op2', bytes: 3000, count: 1 },
  { frame: 'cann::Cast-op3', bytes: 2000, count: 1 },
];

let server;

before(async () => {
  server = await startServer({ isolate: true });
});

after(async () => {
  await server.close();
});

const groups = (page, id) => page.$$eval(`[data-testid="${id}"]`, (rows) => rows.map((r) => ({ frame: r.querySelector('.group-frame').dataset.frame, bytes: Number(r.dataset.bytes), count: Number(r.dataset.count) })));

test('the run folder of a MindSpore db export opens with the figures of its NPU_OP_MEM', async () => {
  for (const size of SIZES) {
    for (const colorScheme of ['light', 'dark']) {
      const { browser: b, page } = await openSample(server, filesUnder(RUN), { viewport: size, colorScheme, view: 'ascend' });
      try {
        assert.deepEqual(await groups(page, 'live-group'), LIVE);
        assert.deepEqual(await groups(page, 'unreleased-group'), [LIVE[1]]);
        const option = await page.evaluate(() => {
          const s = document.querySelector('[data-testid="rank-select"]');
          return s.options[s.selectedIndex].textContent;
        });
        assert.match(option, /rank 3/, 'the rank from the db name');
        if (size.width === 1440 && colorScheme === 'light') {
          // The tables named are msprof's, not torch_npu's (MEMORY_RECORD and OP_MEMORY are not in
          // this db), and the lack of call stacks is this export's, not a missing trace_view.json.
          const caption = await page.textContent('#ascend-memory .chart-caption');
          assert.match(caption, /from the database’s NPU_OP_MEM totals/);
          assert.doesNotMatch(caption, /MEMORY_RECORD|OP_MEMORY table/);
          assert.match(await page.getAttribute('[data-testid="rank-source"]', 'title'), /msprof’s layout: ascend_mindspore_profiler_\*\.db/);
          assert.match(await page.textContent('#ascend-live [data-testid="group-note"]'), /database export in msprof’s layout holds none/);
          assert.match(await page.textContent('[data-testid="live-help"]'), /CANN’s GE allocator/);
          await page.locator('[data-testid="alloc-row"]').first().click();
          await page.waitForFunction(() => document.querySelector('[data-testid="ascend-stack"]').dataset.row);
          assert.match(await page.textContent('#ascend-stack'), /database, NPU_OP_MEM row \d+/);
        }
        await screenshot(page, `msprof-db-${size.width}-${colorScheme}`);
        assertClean(b, server.origin);
      } finally {
        await b.close();
      }
    }
  }
});

test('the db file dropped on its own opens too', async () => {
  const file = filesUnder(path.dirname(DB)).map((f) => ({ ...f, path: path.basename(f.path) }));
  assert.deepEqual(file.map((f) => f.path), [path.basename(DB)]);
  const { browser: b, page } = await openSample(server, file, { view: 'ascend' });
  try {
    assert.deepEqual(await groups(page, 'live-group'), LIVE);
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});
