// Views let go of what they hold when a new drop replaces them: the charts' colour-scheme
// listeners (which would keep every old canvas and its data alive and repainting) are counted
// through the page's own MediaQueryList calls, and must not grow drop after drop.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { root, openBrowser, startServer, dropFiles, filesUnder, settled } from './harness.mjs';

const FIXTURES = path.resolve(root, 'fixtures');
let server;
before(async () => {
  server = await startServer({ isolate: true });
});
after(async () => {
  await server.close();
});

async function tabReady(page, testid) {
  await page.waitForFunction((t) => document.querySelector(`[data-testid="${t}"]`)?.dataset.state === 'ready', testid, { timeout: 60000 });
}

test('re-dropping files releases the previous views: listeners do not pile up', async () => {
  const dump = [{ path: 'somas/Ascend_somas_tensor_offset_1.ir', base64: readFileSync(path.join(FIXTURES, 'somas', 'Ascend_somas_tensor_offset_1.ir')).toString('base64') }];
  const job = filesUnder(path.join(FIXTURES, 'torch_npu', 'msinsight-level0', 'text'));
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.addInitScript(() => {
      window.__schemeListeners = 0;
      const add = MediaQueryList.prototype.addEventListener;
      const remove = MediaQueryList.prototype.removeEventListener;
      const live = new Set();
      MediaQueryList.prototype.addEventListener = function (type, fn, ...rest) {
        if (type === 'change' && !live.has(fn)) {
          live.add(fn);
          window.__schemeListeners += 1;
        }
        return add.call(this, type, fn, ...rest);
      };
      MediaQueryList.prototype.removeEventListener = function (type, fn, ...rest) {
        if (type === 'change' && live.delete(fn)) window.__schemeListeners -= 1;
        return remove.call(this, type, fn, ...rest);
      };
    });
    await page.goto(server.url);
    const count = () => page.evaluate(() => window.__schemeListeners);
    const drop = async (files, testid) => {
      // Mark the previous drop's states, so the waits below see this drop's, not stale ones.
      await page.evaluate(() => {
        for (const e of document.querySelectorAll('[data-testid="status"], [data-testid="somas"], [data-testid="ascend"]')) e.dataset.state = 'previous';
      });
      await dropFiles(page, files);
      assert.equal(await settled(page), 'ready');
      await tabReady(page, testid);
      return count();
    };
    const somasOnce = await drop(dump, 'somas');
    assert.ok(somasOnce > 0, 'the SOMAS charts listen for the colour scheme');
    assert.equal(await drop(dump, 'somas'), somasOnce);
    assert.equal(await drop(dump, 'somas'), somasOnce);
    const jobOnce = await drop(job, 'ascend');
    assert.ok(jobOnce > 0, 'the torch_npu charts listen for the colour scheme');
    assert.equal(await drop(job, 'ascend'), jobOnce);
    assert.equal(await drop(dump, 'somas'), somasOnce);
    // The views still follow the scheme after all that.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(300);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
