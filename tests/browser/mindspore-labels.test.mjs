// A MindSpore run (`*_ascend_ms`) is labelled as MindSpore's everywhere the allocator is named —
// the memory chart's legend, the timeline's legend, the table's Source column — and, its
// profiler_info naming no rank number, its rank is "device N" from the rows' Device Type. The
// expectations come from the CLI's JSON of the same folder and from a plain read of the CSV.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { root, CLI, openBrowser, startServer, engineThreads, settled, filesUnder, dropFiles, foreignRequests } from './harness.mjs';

const RUNS = path.join(root, 'fixtures', 'ascend', 'mindspore');
const RUN = path.join(RUNS, 'worker0_20250101000000123_ascend_ms');

let server;

before(async () => {
  server = await startServer({ isolate: true });
});

after(async () => {
  await server.close();
});

test('a MindSpore run says MindSpore and names its rank by its device', async () => {
  const cli = JSON.parse(execFileSync(CLI, ['profiler', RUNS, '--json'], { encoding: 'utf8' }));
  assert.equal(cli.ranks.length, 1);
  assert.equal(cli.ranks[0].rank, 'unknown', 'the fixture names no rank number');
  const devices = new Set(readFileSync(path.join(RUN, 'ASCEND_PROFILER_OUTPUT', 'operator_memory.csv'), 'utf8')
    .split(/\r?\n/).slice(1).filter(Boolean).map((l) => l.split(',').pop()));
  assert.equal(devices.size, 1);
  const device = [...devices][0].replace('NPU:', '');

  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    await dropFiles(page, filesUnder(RUNS));
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-table"]')?.dataset.state === 'ready');

    const option = await page.evaluate(() => {
      const s = document.querySelector('[data-testid="rank-select"]');
      return s.options[s.selectedIndex].textContent;
    });
    assert.ok(option.includes(`device ${device}`), `the rank selector "${option}" names device ${device}`);
    assert.ok(!option.includes('rank unknown'), option);
    const cell = await page.textContent('[data-testid="rank-row"] [role="gridcell"]:nth-child(2)');
    assert.ok(cell.includes(`device ${device}`), `the rank table's cell "${cell}"`);

    const memoryLegend = await page.textContent('[data-testid="memory-legend"]');
    assert.match(memoryLegend, /MindSpore allocated/);
    assert.doesNotMatch(memoryLegend, /PTA/);
    const timelineLegend = await page.textContent('#ascend-timeline .legend');
    assert.match(timelineLegend, /MindSpore allocation/);
    assert.doesNotMatch(timelineLegend, /PTA/);
    const sources = await page.$$eval('[data-testid="alloc-row"]', (rows) => rows.map((r) => r.children[7].textContent));
    assert.equal(sources.length, cli.ranks[0].rows, 'every row is listed');
    assert.deepEqual([...new Set(sources)], ['MindSpore']);

    await page.click('[data-testid="alloc-row"] >> nth=0');
    await page.waitForFunction(() => document.querySelector('[data-testid="ascend-stack"]').dataset.row);
    assert.match(await page.textContent('[data-testid="ascend-stack"]'), /MindSpore/);
    assert.doesNotMatch(await page.textContent('#ascend-stack .facts'), /PTA|torch_npu/);
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
