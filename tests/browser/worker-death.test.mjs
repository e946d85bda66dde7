// A reader of the pool that dies must show as an error, never as a page that waits for ever: the
// rank it was reading is listed as failed, naming its run folder and what happened, the job's other
// ranks open with the command line's figures, and the page reads the next drop as usual. The test
// hook `?fault=close|throw&faultRank=TEXT` makes the reader of the rank whose run folder contains
// TEXT end itself (`close`: gone without a word, as a worker killed for its memory) or throw outside
// any request (`throw`: an `error` event), before reading it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { root, CLI, openBrowser, startServer, engineThreads, settled, assertClean } from './harness.mjs';

const TEXT = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
let server;
let tmp;
let job;
let cli;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-death-'));
  job = path.join(tmp, 'job');
  execFileSync(CLI, ['generate', 'profiler', '--out', job, '--roles', '1', '--ranks', '3', '--trace-mb', '0.5', '--rows', '3000', '--seed', '21'], { stdio: 'ignore' });
  cli = JSON.parse(execFileSync(CLI, ['profiler', '--json', job], { encoding: 'utf8', maxBuffer: 1 << 28 }));
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

for (const [how, says] of [['close', /the analysis worker ended without an answer: it most likely ran out of memory/], ['throw', /the analysis worker failed: .*test fault in the reader of /]]) {
  test(`a reader that dies (${how}) fails its rank with the reason; the other ranks open and the page stays usable`, async () => {
    assert.equal(cli.ranks.length, 3);
    // The last rank of the job fails: the tab opens the first one.
    const lost = cli.ranks[2];
    const folder = path.basename(lost.run_dirs[0]);
    const b = await openBrowser();
    try {
      const page = await b.page();
      await page.goto(`${server.url}?workers=2&fault=${how}&faultRank=${encodeURIComponent(folder)}`);
      await engineThreads(page);
      await page.setInputFiles('input[data-testid="folder-input"]', job);
      assert.equal(await settled(page, 120000), 'ready');
      await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
      // The failed rank, named with its run folder and the reason.
      const errors = await page.$$eval('[data-testid="ascend-warnings"] li.error', (lis) => lis.map((li) => li.textContent));
      assert.equal(errors.length, 1, errors.join('\n'));
      assert.ok(errors[0].includes(folder), errors[0]);
      assert.match(errors[0], /not read: /);
      assert.match(errors[0], says);
      assert.equal(JSON.parse(await page.getAttribute('[data-testid="ascend"]', 'data-unread-ranks')).length, 1);
      // Every rank is in the table; the two read have the command line's figures.
      assert.equal(await page.getAttribute('[data-testid="ascend-rank-table"]', 'data-total'), '3');
      const rows = await page.$$eval('[data-testid="rank-row"]', (trs) => trs.map((t) => ({ rank: t.dataset.rank, rows: t.dataset.rows, peak: t.dataset.peakAllocatedBytes })));
      for (const r of cli.ranks.slice(0, 2)) {
        assert.deepEqual(rows.find((x) => x.rank === String(r.rank)), { rank: String(r.rank), rows: String(r.rows), peak: String(r.peak_allocated_bytes) });
      }
      // The page reads the next drop as usual.
      await page.setInputFiles('input[data-testid="folder-input"]', TEXT);
      assert.equal(await settled(page, 120000), 'ready');
      await page.waitForFunction(() => document.querySelector('[data-testid="ascend"]')?.dataset.state === 'ready', null, { timeout: 120000 });
      assert.equal(await page.textContent('#error-list'), '');
      assertClean(b, server.origin);
    } finally {
      await b.close();
    }
  });
}
