// The SOMAS memory curves start on the scale that shows the reuse: tensor memory alone, fitted to
// its own peak, with the static memory (constant over the graph, often most of the total) left out
// and said so; a labelled toggle switches to "With static", which the URL keeps across a reload.
// The expected peaks come from the CLI's JSON of the same generated dump.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { CLI, openBrowser, startServer, engineThreads, dropFiles, screenshot } from './harness.mjs';

const SIZES = [
  { width: 1440, height: 900, colorScheme: 'light' },
  { width: 1024, height: 700, colorScheme: 'dark' },
];

let server;
let tmp;
let gen;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-curves-'));
  const dump = path.join(tmp, 'Ascend_somas_tensor_offset_1.ir');
  execFileSync(CLI, ['generate', 'somas', '--flavor', 'v2.4', '--nodes', '3000', '--seed', '5', '--out', dump], { stdio: 'ignore' });
  const r = spawnSync(CLI, ['somas', dump, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  gen = { dump, json: JSON.parse(r.stdout) };
});

after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The curves' y-axis top once the first data has drawn (the worker answers asynchronously). */
async function yTop(page, mode) {
  const h = await page.waitForFunction((m) => {
    const c = document.querySelector('[data-testid="somas-curves"]');
    return c && c.dataset.mode === m && c.dataset.yTop ? c.dataset.yTop : null;
  }, mode, { timeout: 20000 });
  return Number(await h.jsonValue());
}

for (const size of SIZES) {
  test(`SOMAS curves at ${size.width}×${size.height} (${size.colorScheme}): dynamic scale by default, static on a toggle`, async () => {
    const j = gen.json;
    const peak = j.peak.in_use_bytes;
    const stat = j.static_bytes;
    const upper = j.upper_bound_bytes;
    assert.ok(stat > peak / 4, `the generated dump has static memory worth showing apart (static ${stat}, peak ${peak})`);
    // The total without reuse is drawn only when it does not dwarf the in-use peak.
    const curvesTop = upper > 3 * peak ? peak : Math.max(peak, upper);
    const dynTop = 1.08 * curvesTop;
    const staticTop = 1.08 * (curvesTop + stat);

    const b = await openBrowser({ viewport: size, colorScheme: size.colorScheme });
    try {
      const page = await b.page();
      await page.goto(server.url);
      await engineThreads(page);
      await dropFiles(page, [{ path: 'Ascend_somas_tensor_offset_1.ir', base64: readFileSync(gen.dump).toString('base64') }]);
      await page.waitForFunction(() => document.querySelector('[data-testid="somas"]')?.dataset.state === 'ready', null, { timeout: 60000 });

      const dynamic = page.getByRole('radio', { name: 'Dynamic (shows reuse)' });
      const withStatic = page.getByRole('radio', { name: 'With static' });
      assert.equal(await dynamic.isChecked(), true, 'the dynamic scale is the default');
      assert.equal(await withStatic.isChecked(), false);
      const top0 = await yTop(page, 'dynamic');
      assert.ok(Math.abs(top0 - dynTop) <= dynTop * 1e-6 + 1, `dynamic y top ${top0} is the tensor peak scale ${dynTop}`);
      assert.ok(top0 < peak + stat, 'the static memory is not stacked under the curve');
      const note = await page.locator('[data-testid="somas-static-note"]').textContent();
      assert.match(note, /static .* not drawn/);
      await page.locator('[data-testid="somas-curves"]').scrollIntoViewIfNeeded();
      await screenshot(page, `somas-curves-dynamic-${size.width}-${size.colorScheme}`);

      await withStatic.click();
      const top1 = await yTop(page, 'static');
      assert.ok(Math.abs(top1 - staticTop) <= staticTop * 1e-6 + 1, `with static, y top ${top1} is ${staticTop}`);
      assert.equal(new URLSearchParams(await page.evaluate(() => location.hash.slice(1))).get('s.curve'), 'static');
      assert.equal(await page.locator('[data-testid="somas-static-note"]').count(), 0);
      await screenshot(page, `somas-curves-static-${size.width}-${size.colorScheme}`);

      // A reload restores the chosen scale.
      await page.reload();
      await engineThreads(page);
      await dropFiles(page, [{ path: 'Ascend_somas_tensor_offset_1.ir', base64: readFileSync(gen.dump).toString('base64') }]);
      await page.waitForFunction(() => document.querySelector('[data-testid="somas"]')?.dataset.state === 'ready', null, { timeout: 60000 });
      assert.equal(await page.getByRole('radio', { name: 'With static' }).isChecked(), true, 'the reload keeps "With static"');
      await yTop(page, 'static');
    } finally {
      await b.close();
    }
  });
}
