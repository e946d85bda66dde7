// The page in its three modes (isolated + threads, not isolated, offline file://) gives the same
// classification as `memlens inspect --json`, through the folder picker and a dropped folder, and
// no request leaves the page's origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  root, openBrowser, startServer, foreignRequests, engineThreads, settled, pageUnits, cliUnits,
  filesUnder, dropFiles, screenshot, sorted,
} from './harness.mjs';

const JOB = path.join(root, 'fixtures', 'classify', 'job');
let isolated;
let plain;

before(async () => {
  isolated = await startServer({ isolate: true });
  plain = await startServer({ isolate: false });
});
after(async () => {
  await isolated.close();
  await plain.close();
});

async function pickFolder(page, dir) {
  await page.setInputFiles('input[data-testid="folder-input"]', dir);
  return settled(page);
}

test('isolated page runs the threaded engine and classifies a picked folder like the CLI', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(isolated.url);
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), true);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    assert.equal(await engineThreads(page), cores);
    assert.equal(await page.getAttribute('[data-testid="engine"]', 'data-build'), 'threads');
    assert.equal(await page.getAttribute('[data-testid="status"]', 'data-state'), 'idle');
    assert.equal(await pickFolder(page, JOB), 'ready');
    assert.deepEqual(sorted(await pageUnits(page)), sorted(cliUnits(JOB)));
    await screenshot(page, 'foundation-inventory-light');
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('without the isolation headers the single-threaded engine gives the same answer', async () => {
  const b = await openBrowser({ colorScheme: 'dark' });
  try {
    const page = await b.page();
    await page.goto(plain.url);
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), false);
    assert.equal(await engineThreads(page), 1);
    const badge = await page.textContent('[data-testid="engine"]');
    assert.equal(badge, 'single-threaded: open it from a web server for threads');
    assert.match(await page.getAttribute('[data-testid="engine"]', 'title'), /not cross-origin isolated/);
    assert.equal(await pickFolder(page, JOB), 'ready');
    assert.deepEqual(sorted(await pageUnits(page)), sorted(cliUnits(JOB)));
    await screenshot(page, 'foundation-inventory-dark');
    assert.deepEqual(foreignRequests(b.requests, plain.origin), []);
  } finally {
    await b.close();
  }
});

test('dist/memlens.html opened from file:// gives the same answer', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    const url = pathToFileURL(path.join(root, 'dist', 'memlens.html')).href;
    await page.goto(url);
    assert.equal(await engineThreads(page), 1);
    assert.equal(await pickFolder(page, JOB), 'ready');
    assert.deepEqual(sorted(await pageUnits(page)), sorted(cliUnits(JOB)));
    // Nothing but the file itself (and blob: workers) was requested.
    assert.deepEqual(b.requests.filter((u) => u !== url && !u.startsWith('blob:') && !u.startsWith('data:')), []);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

test('a dropped folder is walked; unreadable and unknown files are listed and the rest still loads', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(isolated.url);
    await engineThreads(page);
    const files = filesUnder(JOB);
    const locked = 'job/graphs/rank_0/locked_somas_tensor_offset_9.ir';
    files.push({ path: locked, base64: '' });
    await dropFiles(page, files, [locked]);
    assert.equal(await settled(page), 'ready');
    const units = await pageUnits(page);
    const cli = cliUnits(JOB);
    // Everything the CLI finds, plus the unreadable file with its reason.
    const lockedUnit = units.find((u) => u.path === locked);
    assert.equal(lockedUnit.kind, 'unknown');
    assert.match(lockedUnit.reason, /^cannot be read: .*could not be found/);
    assert.deepEqual(sorted(units.filter((u) => u.path !== locked)), sorted(cli));
    assert.equal(cli.find((u) => u.path === 'job/notes.txt').kind, 'unknown');
    const problems = await page.textContent('#error-list');
    assert.match(problems, /locked_somas_tensor_offset_9\.ir/);
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
  } finally {
    await b.close();
  }
});

test('the examples open from the page and classify like the CLI on the fixture files', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(isolated.url);
    await engineThreads(page);
    const ids = await page.$$eval('button[data-example]', (bs) => bs.map((b) => b.dataset.example));
    assert.deepEqual(ids.sort(), ['memory-snapshot', 'somas-toy', 'two-rank-job']);
    for (const id of ids) {
      await page.click(`button[data-example="${id}"]`);
      assert.equal(await settled(page), 'ready');
      assert.deepEqual(sorted(await pageUnits(page)), sorted(cliUnits(path.join(root, 'fixtures', 'examples', id))));
    }
    const ranks = await page.$$eval('[data-testid="unit"][data-kind="ascend-run"]', (rs) => rs.map((r) => r.dataset.rank).sort());
    assert.deepEqual(ranks, ['0', '1']);
    assert.deepEqual(foreignRequests(b.requests, isolated.origin), []);
  } finally {
    await b.close();
  }
});

test('without headers, coi-serviceworker isolates the page after one reload and threads run', async () => {
  const b = await openBrowser({ serviceWorkers: 'allow' });
  try {
    const page = await b.page();
    await page.goto(plain.url);
    // The service worker reloads the page once it controls it (once or twice: it may reload
    // again if the first reload came before it took control). Isolation holds from the start of
    // the reloaded document, before its body is parsed, so its load is waited for too.
    await page.waitForFunction(() => self.crossOriginIsolated === true && document.readyState === 'complete', null, { timeout: 30000 });
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    assert.equal(await engineThreads(page), cores);
    assert.deepEqual(foreignRequests(b.requests, plain.origin), []);
  } finally {
    await b.close();
  }
});
