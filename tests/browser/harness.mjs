// Shared set-up for the browser tests: Debian's chromium driven by playwright-core, the page served
// by scripts/serve.mjs (with or without the isolation headers), a record of every request the page
// makes, and the native CLI to compare answers with.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, readdirSync, statSync, readFileSync, mkdirSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { deflateRawSync, inflateRawSync, inflateSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { serve } from '../../scripts/serve.mjs';
import { root } from '../../scripts/util.mjs';

export { root };
export const CHROMIUM = '/usr/bin/chromium';
export const CLI = path.join(root, 'target', 'debug', 'memlens');
export const SHOTS = path.join(root, 'test-results', 'screenshots');

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--allow-file-access-from-files',
];

/**
 * Opens a browser context. Every request it makes is recorded in `requests` so tests can prove
 * nothing leaves the page's origin. `serviceWorkers: 'block'` keeps coi-serviceworker out of tests
 * that check the non-isolated fallback.
 */
export async function openBrowser({ serviceWorkers = 'block', colorScheme = 'light', viewport = { width: 1280, height: 860 } } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'memlens-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    serviceWorkers,
    colorScheme,
    viewport,
  });
  // Playwright blocks service workers by replacing `register` with a function that resolves to
  // undefined, which no browser does; coi-serviceworker then reads `scope` of that undefined
  // registration and throws a page error. Its documented `window.coi.shouldRegister` hook tells it
  // not to try, as it would not succeed here anyway: the page stays single-threaded, as in a
  // browser without service workers.
  if (serviceWorkers === 'block') await context.addInitScript(() => { window.coi = { ...window.coi, shouldRegister: () => false }; });
  const requests = [];
  context.on('request', (req) => requests.push(req.url()));
  const consoleErrors = [];
  context.on('page', (p) => watchConsole(p, consoleErrors));
  for (const p of context.pages()) watchConsole(p, consoleErrors);
  context.on('page', delayAnswers);
  for (const p of context.pages()) delayAnswers(p);
  return {
    context,
    // The profile folder: the browser's processes name it (the benchmarks find them by it).
    dir,
    requests,
    consoleErrors,
    async page() {
      const p = context.pages()[0] || (await context.newPage());
      return p;
    },
    async close() {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function watchConsole(page, sink) {
  page.on('pageerror', (err) => sink.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') sink.push(`console: ${msg.text()}`);
  });
}

/**
 * With `MEMLENS_ANSWER_DELAY=MS` in the environment, every page URL a test opens (`page.goto`)
 * carries the test-only `answerDelay=MS` (www/engine-client.js): each engine answer then comes MS
 * ms late, as from a busy worker, and a test that passes only because the worker is quick fails
 * (docs/hardening.md). Without it, nothing changes.
 */
function delayAnswers(page) {
  const ms = process.env.MEMLENS_ANSWER_DELAY;
  if (!ms) return;
  const goto = page.goto.bind(page);
  page.goto = (url, options) => {
    const u = new URL(url);
    if (u.protocol === 'http:' || u.protocol === 'https:') u.searchParams.set('answerDelay', ms);
    return goto(u.href, options);
  };
}

/** How often `watchWorkers` asks the browser which workers still run. */
const WORKER_POLL_MS = 10;

/**
 * The page's dedicated workers as the browser lists them (`Target.getTargets`, workers started by
 * workers included), by target id, with their URLs.
 */
async function workerTargets(cdp) {
  const { targetInfos } = await cdp.send('Target.getTargets');
  return new Map(targetInfos.filter((t) => t.type === 'worker').map((t) => [t.targetId, t.url]));
}

/**
 * Watches the workers `page` runs now (the engine's, the threads it started, any readers), as the
 * browser lists them. `closes(limitMs)` asks the browser every `WORKER_POLL_MS` until none of them
 * is listed, or `limitMs` after the call, and resolves with each one's `{ url, closed }`: the
 * `performance.now()` of the first ask that found it gone, null if it still ran.
 *
 * Playwright's `close` event of a worker is not used: Playwright learns that a worker started by
 * another worker closed through its parent's session, and drops what arrives on that session once
 * the parent has closed, so a nested worker (a thread of the threaded engine) can close without
 * the event. A clean-clone run and a CI run each waited 30 s for a `close` that never came.
 */
export async function watchWorkers(page) {
  const cdp = await page.context().newCDPSession(page);
  const watched = await workerTargets(cdp);
  return {
    size: watched.size,
    async closes(limitMs) {
      const from = performance.now();
      const gone = new Map();
      for (;;) {
        const running = await workerTargets(cdp);
        const now = performance.now();
        for (const id of watched.keys()) if (!gone.has(id) && !running.has(id)) gone.set(id, now);
        if (gone.size === watched.size || now - from > limitMs) {
          return [...watched].map(([id, url]) => ({ id, url, closed: gone.get(id) ?? null }));
        }
        await new Promise((r) => setTimeout(r, WORKER_POLL_MS));
      }
    },
    /** What is known of the workers `targetIds` (still listed): see `workerReport`. */
    report: (targetIds) => workerReport(page, cdp, targetIds),
  };
}

/**
 * The page's own workers (www/spawn-worker.js: the engine's and the pool's readers), as the
 * browser lists them; the threaded engine's threads have blob: URLs, the read-ahead helper its own.
 */
const PAGE_WORKER_URL = /\/worker\.js(\?|$)/;

/**
 * What a stopped load's workers still listed by the browser (`open`: `[{ id, url }]`, from
 * `watchWorkers`) mean, given the page's workers that ran when the watch began (`running`: their
 * numbers) and the page's record of each worker's life (`lives`: number → page time of the first
 * mark of each step, www/worker-life.js). `unended`: those of `running` the page did not end and
 * terminate, or whose context the browser did not end (one that took its lock, `locked`, and whose
 * lock was not granted, `gone`), each `{ id, ...steps }`: a stop that failed. Only when there are
 * none, and the browser granted the lock of every one of `running`, are the page's own targets of
 * `open` `lagging`: their contexts ended, they run no more code, and only the browser's list keeps
 * them (it has kept one over 120 s: docs/hardening.md, *The Cancel whose worker stayed listed*).
 * `listed`: the rest of `open`, which only the list can show ended (the threads, the read-ahead
 * helper, and every target when a worker of the page was terminated before it took its lock).
 */
export function stopVerdict(open, running, lives) {
  const unended = running
    .map((id) => ({ id, ...lives[id] }))
    .filter((l) => l.end === undefined || l.terminate === undefined || (l.locked !== undefined && l.gone === undefined));
  const contextsEnded = unended.length === 0 && running.every((id) => lives[id]?.gone !== undefined);
  const lagging = contextsEnded ? open.filter((w) => PAGE_WORKER_URL.test(w.url)) : [];
  return { unended, lagging, listed: open.filter((w) => !lagging.includes(w)) };
}

/** `promise`'s value, or `fallback` if it has not settled within `ms` (or failed). */
function within(promise, ms, fallback) {
  let timer;
  const late = new Promise((r) => (timer = setTimeout(() => r(fallback), ms)));
  return Promise.race([promise.catch((e) => `${fallback}: ${String(e?.message ?? e).split('\n')[0]}`), late]).finally(() => clearTimeout(timer));
}

/**
 * Text for a failure that finds workers still running: the browser's facts of each target in
 * `targetIds` (as `Target.getTargets` lists it now, or that it no longer does), what each worker
 * the page still has answers about itself (its `memlensLife`, www/worker-life.js: its number,
 * when it saw its stop flag and said `stopped`; a worker busy in a long call answers nothing),
 * the page's record of every worker's life (the `memlens:worker-*` marks, ms on the page's clock,
 * and the clock now) and the load.
 */
export async function workerReport(page, cdp, targetIds) {
  const lines = [`load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`];
  const listed = await within(cdp.send('Target.getTargets').then((r) => r.targetInfos), 3000, null);
  for (const targetId of targetIds) {
    const info = Array.isArray(listed) ? (listed.find((t) => t.targetId === targetId) ?? 'not listed any more') : listed;
    lines.push(`target ${targetId}: ${JSON.stringify(info)}`);
  }
  for (const w of page.workers()) {
    const answer = await within(w.evaluate(() => ({ name: self.name, life: self.memlensLife ?? null, now: performance.now() })), 3000, 'no answer in 3 s');
    lines.push(`worker ${w.url()}: ${JSON.stringify(answer)}`);
  }
  const marks = await within(
    page.evaluate((prefix) => ({
      now: performance.now(),
      marks: performance
        .getEntriesByType('mark')
        .filter((m) => m.name.startsWith(prefix))
        .map((m) => `${Math.round(m.startTime)} ${m.name.slice(prefix.length)} ${JSON.stringify(m.detail)}`),
    }), 'memlens:worker-'),
    3000,
    'the page did not answer in 3 s',
  );
  lines.push(`page ${typeof marks === 'string' ? marks : `now ${Math.round(marks.now)}:\n  ${marks.marks.join('\n  ')}`}`);
  return lines.join('\n');
}

/** Serves www/ on a free port. */
export async function startServer({ isolate = true } = {}) {
  const { server, url } = await serve({ port: 0, host: '127.0.0.1', isolate });
  return { url, origin: new URL(url).origin, close: () => new Promise((r) => server.close(r)) };
}

/** Requests that went anywhere but `origin` (blob: and data: URLs stay in the page). */
export function foreignRequests(requests, origin) {
  return requests.filter((u) => !(u.startsWith(`${origin}/`) || u.startsWith('blob:') || u.startsWith('data:')));
}

/**
 * Waits until the engine badge reports its thread count; returns the number. A document still
 * being parsed (a page reloading itself) has no badge yet: that is waited out too.
 */
export async function engineThreads(page) {
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="engine"]')?.dataset.threads) > 0, null, {
    timeout: 30000,
  });
  return Number(await page.getAttribute('[data-testid="engine"]', 'data-threads'));
}

/**
 * Waits for the status to reach `ready` or `error` for the page's last drop; returns it.
 *
 * A drop reaches the page's `load()` only after its folders are listed (asynchronously), and until
 * then the status still shows the previous drop's `ready`. So {@link dropFiles} notes the number of
 * the load the status spoke for just before the drop (`window.__settleAfter`), and this waits
 * for the status of a later load (the status's `data-load`). Without a drop in this document
 * (a load through a file input or an example button starts at once), any load will do.
 */
export async function settled(page, timeout = 60000) {
  await page.waitForFunction(
    () => {
      const s = document.querySelector('[data-testid="status"]');
      return ['ready', 'error'].includes(s.dataset.state) && Number(s.dataset.load || 0) > (window.__settleAfter ?? -1);
    },
    null,
    { timeout },
  );
  return page.getAttribute('[data-testid="status"]', 'data-state');
}

/** The classified units the page shows, as comparable records. */
export async function pageUnits(page) {
  return page.$$eval('[data-testid="unit"]', (rows) =>
    rows.map((r) => ({
      kind: r.dataset.kind,
      path: r.dataset.path,
      rank: r.dataset.kind === 'ascend-run' ? r.dataset.rank : undefined,
      role: r.dataset.kind === 'ascend-run' ? r.dataset.role : undefined,
      step: r.dataset.kind === 'ascend-run' ? r.dataset.step : undefined,
      reason: r.dataset.kind === 'unknown' ? r.dataset.reason : undefined,
    })),
  );
}

/** The same records from `memlens inspect --json` on `paths`. */
export function cliUnits(...paths) {
  const out = execFileSync(CLI, ['inspect', '--json', ...paths], { encoding: 'utf8' });
  return JSON.parse(out).units.map((u) => ({
    kind: u.kind,
    path: u.path,
    rank: u.kind === 'ascend-run' ? (u.rank === null ? '' : String(u.rank)) : undefined,
    role: u.kind === 'ascend-run' ? u.role : undefined,
    step: u.kind === 'ascend-run' ? (u.step === null ? '' : String(u.step)) : undefined,
    reason: u.kind === 'unknown' ? u.reason : undefined,
  }));
}

/** Every file under `dir` as { path (relative to dir's parent), base64 }. */
export function filesUnder(dir) {
  const base = path.dirname(dir);
  const out = [];
  const walk = (d) => {
    for (const n of readdirSync(d).sort()) {
      const full = path.join(d, n);
      if (statSync(full).isDirectory()) walk(full);
      else out.push({ path: path.relative(base, full).split(path.sep).join('/'), base64: readFileSync(full).toString('base64') });
    }
  };
  walk(dir);
  return out;
}

/**
 * Drops `files` on the page through a synthetic drop event whose items expose the folder tree
 * through webkitGetAsEntry, as a real drag of folders does. `failing` lists paths whose `file()`
 * call fails (as it does for files the browser may not read); `slowMs` delays each `file()`
 * answer, as a slow disk does; `folders` lists folders dropped besides those holding `files` (an
 * empty folder). Notes the load the status speaks for before the drop, so that {@link settled}
 * waits for this drop's state.
 */
export async function dropFiles(page, files, failing = [], { slowMs = 0, folders = [] } = {}) {
  await page.evaluate(
    ({ files, failing, slowMs, folders }) => {
      window.__settleAfter = Number(document.querySelector('[data-testid="status"]')?.dataset.load || 0);
      const tree = { dirs: new Map(), files: [] };
      const folder = (parts) => {
        let node = tree;
        for (const p of parts) {
          if (!node.dirs.has(p)) node.dirs.set(p, { dirs: new Map(), files: [] });
          node = node.dirs.get(p);
        }
        return node;
      };
      // Folders dropped as they are, empty ones too.
      for (const d of folders) folder(d.split('/'));
      for (const f of files) folder(f.path.split('/').slice(0, -1)).files.push(f);
      const decode = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const fileEntry = (f) => {
        const name = f.path.split('/').pop();
        return {
          isFile: true,
          isDirectory: false,
          name,
          file(ok, fail) {
            if (failing.includes(f.path)) setTimeout(() => fail(new DOMException('A requested file or directory could not be found', 'NotFoundError')), slowMs);
            else setTimeout(() => ok(new File([decode(f.base64)], name)), slowMs);
          },
        };
      };
      const dirEntry = (name, node) => ({
        isFile: false,
        isDirectory: true,
        name,
        createReader() {
          const all = [...[...node.dirs].map(([n, d]) => dirEntry(n, d)), ...node.files.map(fileEntry)];
          let pos = 0;
          // Batches of 3, like Chromium's batches of 100, so the reader loop is exercised.
          return { readEntries(ok) { setTimeout(() => { ok(all.slice(pos, pos + 3)); pos += 3; }, 0); } };
        },
      });
      const top = [...[...tree.dirs].map(([n, d]) => dirEntry(n, d)), ...tree.files.map(fileEntry)];
      const ev = new Event('drop', { bubbles: true, cancelable: true });
      Object.defineProperty(ev, 'dataTransfer', {
        value: { items: top.map((e) => ({ kind: 'file', webkitGetAsEntry: () => e })), files: [] },
      });
      document.getElementById('drop-zone').dispatchEvent(ev);
    },
    { files, failing, slowMs, folders },
  );
}

/**
 * Opens a browser at `viewport` in `colorScheme`, loads the page from `server`, waits for the
 * engine, drops `files` and waits until the page is `ready` and, when `view` is given, until the
 * element `[data-testid=view]` is `ready` too. `query` is the page's query string (e.g.
 * `answerDelay=600`). Returns the browser (close it) and its page.
 */
export async function openSample(server, files, { viewport, colorScheme, view, query = '', timeout = 120000 } = {}) {
  return openDropped(server, files, { viewport, colorScheme, query }, async (page) => {
    assert.equal(await settled(page, timeout), 'ready', 'the dropped sample is analysed');
    if (view) await page.waitForFunction((id) => document.querySelector(`[data-testid="${id}"]`)?.dataset.state === 'ready', view, { timeout });
    return {};
  });
}

/**
 * Opens a browser at `viewport` in `colorScheme`, loads the page from `server`, waits for the
 * engine, drops `files` (a job summary) and waits until the job summary tab settles (`ready`,
 * `empty` or `error`). Returns the browser (close it), its page and the tab's state.
 */
export async function openSummary(server, files, { viewport, colorScheme, timeout = 120000 } = {}) {
  return openDropped(server, files, { viewport, colorScheme }, async (page) => {
    await page.waitForFunction(() => ['ready', 'error', 'empty'].includes(document.querySelector('[data-testid="jobsummary"]')?.dataset.state), null, { timeout });
    return { state: await page.getAttribute('[data-testid="jobsummary"]', 'data-state') };
  });
}

/**
 * The set-up both openers share: a browser at `viewport` in `colorScheme` on `server`'s page, the
 * engine up, `files` dropped; then `settle(page)` waits for what the caller needs and returns more
 * fields for the result. The browser is closed if any step fails.
 */
async function openDropped(server, files, { viewport, colorScheme, query = '' }, settle) {
  const browser = await openBrowser({ viewport, colorScheme });
  try {
    const page = await browser.page();
    await page.goto(query ? `${server.url}?${query}` : server.url);
    await engineThreads(page);
    await dropFiles(page, files);
    return { browser, page, ...(await settle(page)) };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/** Asserts that the page of `browser` asked nothing outside `origin` and logged no error. */
export function assertClean(browser, origin) {
  assert.deepEqual(foreignRequests(browser.requests, origin), []);
  assert.deepEqual(browser.consoleErrors, []);
}

/**
 * Dispatches pointer events on the element `selector` matches, all in one task of the page, so no
 * answer of the worker can come between them: `steps` are [type, x, y] with x, y from the
 * element's top left. 'pointermove' moves the mouse, 'pointerdown' presses its primary button,
 * 'pointerup' releases it (with a pointerdown at the same point: a click as ui/plot.js reads one),
 * 'click' is a bare click event (a tap: no move before it).
 */
export function pointerTask(page, selector, steps) {
  return page.$eval(selector, (node, list) => {
    const box = node.getBoundingClientRect();
    for (const [type, x, y] of list) {
      const at = { clientX: box.left + x, clientY: box.top + y, button: 0, bubbles: true, cancelable: true };
      if (type === 'click') node.dispatchEvent(new MouseEvent('click', at));
      else node.dispatchEvent(new PointerEvent(type, { ...at, buttons: type === 'pointerdown' ? 1 : 0, pointerId: 1, pointerType: 'mouse', isPrimary: true }));
    }
  }, steps);
}

/**
 * Hovers the chart `sel` at `p` ({x, y} from its top left) from outside it, and waits for the
 * hover's answer (the canvas counts them); returns what the canvas says it found (`attr`).
 */
export async function hoverAt(page, sel, p, attr) {
  await page.mouse.move(0, 0);
  const n = Number((await page.getAttribute(sel, 'data-hovers')) || 0);
  const box = await page.locator(sel).boundingBox();
  await page.mouse.move(box.x + p.x, box.y + p.y);
  await page.waitForFunction(([s, k]) => Number(document.querySelector(s).dataset.hovers || 0) > k, [sel, n], { timeout: 30000 });
  return Number(await page.getAttribute(sel, attr));
}

/**
 * Two points of the chart `sel` (a ui/plot.js canvas whose hovers the worker answers) over two
 * different items, found by hovering points of its plot area: [{x, y, id}, {x, y, id}], with the
 * id the hover's answer names in `attr` (-1: nothing there).
 */
export async function twoItems(page, sel, attr) {
  // In the middle of the viewport: clear of the bars that stay at its top.
  await page.$eval(sel, (n) => n.scrollIntoView({ block: 'center', behavior: 'instant' }));
  const [left, top, w, h] = (await page.getAttribute(sel, 'data-area')).split(',').map(Number);
  const found = [];
  for (const fy of [0.9, 0.75, 0.6, 0.45, 0.3, 0.15]) {
    for (const fx of [0.5, 0.2, 0.8, 0.35, 0.65, 0.05, 0.95]) {
      const p = { x: left + w * fx, y: top + h * fy };
      const id = await hoverAt(page, sel, p, attr);
      if (id >= 0 && !found.some((f) => f.id === id)) found.push({ ...p, id });
      if (found.length === 2) return found;
    }
  }
  assert.fail(`two items under the points of ${sel}: found ${JSON.stringify(found)}`);
}

/** The box of the first element `selector` matches, in viewport coordinates (null if none shows). */
export function boxOf(page, selector) {
  return page.locator(selector).first().boundingBox();
}

/** Bottom of the bars that stay at the top of the viewport (the header, the profiler's rank bar). */
export function coveredTop(page) {
  return page.evaluate(() => Math.max(0, ...[...document.querySelectorAll('header.top, .rank-bar')].map((n) => {
    const r = n.getBoundingClientRect();
    return getComputedStyle(n).position === 'sticky' && r.top <= 60 ? r.bottom : 0;
  })));
}

/** Whether `inner` lies inside `outer` (boxes as {x, y, width, height}), half a pixel spared. */
export function boxInside(inner, outer) {
  const eps = 0.5;
  return !!inner && !!outer && inner.x >= outer.x - eps && inner.y >= outer.y - eps
    && inner.x + inner.width <= outer.x + outer.width + eps && inner.y + inner.height <= outer.y + outer.height + eps;
}

/** Whether `box` (viewport coordinates) lies inside the viewport, below the sticky bars. */
export async function inViewport(page, box) {
  const { width, height } = page.viewportSize();
  const top = await coveredTop(page);
  return boxInside(box, { x: 0, y: top, width, height: height - top });
}

/** Asserts that `box` lies inside the viewport, below the sticky bars; `what` names it. */
export async function assertInViewport(page, box, what) {
  assert.ok(box, `${what}: has a box`);
  const { width, height } = page.viewportSize();
  assert.ok(await inViewport(page, box), `${what} at ${width}×${height}: box ${JSON.stringify(box)} is not inside the viewport below y=${await coveredTop(page)}`);
}

/**
 * The geometry of the VirtualTable inside `container` (a selector), in viewport coordinates: its
 * box, its header cells (name and box), the cells of its first row in view, and how far the rows,
 * the table's box and the page scroll sideways.
 */
export function tableGeometry(page, container) {
  return page.evaluate((sel) => {
    const box = (n) => {
      const r = n.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    };
    const vt = document.querySelector(`${sel} .vt`);
    const vp = vt.querySelector('.vt-viewport');
    const heads = [...vt.querySelectorAll('.vt-head [role="columnheader"]')];
    // The first whole row in view (the rows above and below the viewport are drawn too).
    const top = vp.getBoundingClientRect().top;
    const row = [...vt.querySelectorAll('.vt-rows .vt-row')].filter((r) => r.children.length === heads.length && r.getBoundingClientRect().top >= top - 0.5)
      .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)[0];
    return {
      table: box(vt),
      heads: heads.map((h) => ({ name: h.textContent.replace(/[▲▼]/g, '').trim(), box: box(h) })),
      cells: row ? [...row.children].map(box) : [],
      overflowX: vp.scrollWidth - vp.clientWidth,
      boxOverflowX: vt.scrollWidth - vt.clientWidth,
      pageOverflowX: document.scrollingElement.scrollWidth - window.innerWidth,
    };
  }, container);
}

/** How long a scroll may wait for its `scroll` event (a frame, on a loaded machine: a few). */
const SCROLL_EVENT_MS = 30000;

/**
 * Scrolls the VirtualTable inside `container` to its far right and asserts that it scrolled inside
 * its box (not the page), that its last column came into view over its cells, and that its first
 * `keys` columns (header and first row's cells) stayed in view where they were. Returns the
 * geometry before and after.
 */
export async function assertKeysStay(page, container, keys) {
  const before = await tableGeometry(page, container);
  assert.ok(before.cells.length, `${container}: a row is drawn`);
  assert.ok(before.overflowX > 0, `${container}: the columns do not all fit, the rows scroll sideways`);
  assert.ok(before.pageOverflowX <= 0, `${container}: the page itself does not scroll sideways (${before.pageOverflowX} px)`);
  const last = before.heads.length - 1;
  assert.ok(!boxInside(before.heads[last].box, before.table), `${container}: the last column starts out of view`);
  // The header follows the rows in the table's own `scroll` listener, and the browser dispatches
  // that event at its next frame, which a busy machine can hold back well past any fixed wait.
  // So the scroll is awaited as its event: a listener added now runs after the table's.
  await page.$eval(`${container} .vt-viewport`, (vp, limit) => new Promise((resolve, reject) => {
    const late = setTimeout(() => reject(new Error(`no scroll event ${limit} ms after scrolling sideways`)), limit);
    vp.addEventListener('scroll', () => { clearTimeout(late); resolve(); }, { once: true });
    vp.scrollLeft = vp.scrollWidth;
  }), SCROLL_EVENT_MS);
  const after = await tableGeometry(page, container);
  assert.ok(boxInside(after.heads[last].box, after.table), `${container}: "${after.heads[last].name}" ${JSON.stringify(after.heads[last].box)} in view after scrolling`);
  assert.ok(Math.abs(after.heads[last].box.x - after.cells[last].x) <= 1, `${container}: the header moved with the rows`);
  for (let i = 0; i < keys; i++) {
    const name = after.heads[i].name;
    assert.ok(boxInside(after.heads[i].box, after.table), `${container}: header "${name}" stays in view`);
    assert.ok(boxInside(after.cells[i], after.table), `${container}: the first row's "${name}" cell stays in view`);
    assert.ok(Math.abs(after.heads[i].box.x - before.heads[i].box.x) <= 1 && Math.abs(after.cells[i].x - before.cells[i].x) <= 1, `${container}: "${name}" did not move`);
  }
  return { before, after };
}

/** Saves a screenshot for a human to look at (test-results/screenshots/<name>.png). */
export async function screenshot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Whether `page` draws two animation frames within `ms` (false when it draws none by then). */
function drawsWithin(page, ms) {
  return page.evaluate((ms) => new Promise((res) => {
    const late = setTimeout(() => res(false), ms);
    requestAnimationFrame(() => requestAnimationFrame(() => {
      clearTimeout(late);
      res(true);
    }));
  }), ms);
}

/**
 * Sets `page`'s viewport and waits until the page draws at that size. Headless Chromium once drew
 * no frame for 30 s after such a resize (a clean clone's run: an element screenshot right after
 * timed out "waiting for element to be stable", and its log showed Playwright's stability check,
 * which counts animation frames, never ended, where a moving element makes it end and try
 * again). A page that draws nothing within 5 s is said on the console and resized again, which
 * has the browser draw anew; one that still draws nothing fails here, naming the size, instead
 * of in the screenshot that follows.
 */
export async function resizeAndDraw(page, viewport, what = '') {
  await page.setViewportSize(viewport);
  if (await drawsWithin(page, 5000)) return;
  const at = `${viewport.width}×${viewport.height}${what ? ` ${what}` : ''}`;
  console.log(`no frame drawn within 5 s of the resize to ${at}: resizing again`);
  await page.setViewportSize({ width: viewport.width, height: viewport.height - 1 });
  await page.setViewportSize(viewport);
  assert.ok(await drawsWithin(page, 20000), `the browser drew no frame within 25 s of the resize to ${at}`);
}

/**
 * Shows `panel` (a locator) at 1440×900 and 1024×700, light and dark, and asserts that none of its
 * `parts` (a selector) runs out of its box (a long path or command line would); at each it calls
 * `shoot(colorScheme, width)` to save the screenshots.
 */
export async function assertPanelFitsEverywhere(page, panel, parts, shoot) {
  for (const colorScheme of ['light', 'dark']) {
    for (const viewport of [{ width: 1440, height: 900 }, { width: 1024, height: 700 }]) {
      await page.emulateMedia({ colorScheme });
      await resizeAndDraw(page, viewport, colorScheme);
      await panel.scrollIntoViewIfNeeded();
      const spill = await panel.evaluate((p, sel) => {
        const edge = p.getBoundingClientRect().right;
        return [...p.querySelectorAll(sel)].filter((n) => n.getBoundingClientRect().right > edge + 0.5 || n.scrollWidth > n.clientWidth + 1).map((n) => n.textContent.slice(0, 60));
      }, parts);
      assert.deepEqual(spill, [], `nothing spills out of the panel at ${viewport.width} ${colorScheme}`);
      await shoot(colorScheme, viewport.width);
    }
  }
}

/** Sorts records by path then kind so page and CLI lists compare regardless of order. */
export function sorted(units) {
  return [...units].sort((a, b) => (a.path + a.kind < b.path + b.kind ? -1 : 1));
}

/** The entries of a zip archive as { name: Buffer } (stored or deflated, as the export writes). */
export function unzip(buf) {
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  assert.ok(eocd >= 0, 'zip: no end of central directory');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out = {};
  for (let i = 0; i < count; i++) {
    assert.equal(buf.readUInt32LE(p), 0x02014b50, 'zip: bad central directory entry');
    const method = buf.readUInt16LE(p + 10);
    const csize = buf.readUInt32LE(p + 20);
    const nlen = buf.readUInt16LE(p + 28);
    const xlen = buf.readUInt16LE(p + 30);
    const clen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nlen);
    const lnlen = buf.readUInt16LE(local + 26);
    const lxlen = buf.readUInt16LE(local + 28);
    const data = buf.subarray(local + 30 + lnlen + lxlen, local + 30 + lnlen + lxlen + csize);
    out[name] = method === 8 ? inflateRawSync(data) : Buffer.from(data);
    p += 46 + nlen + xlen + clen;
  }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * A zip archive (every entry deflated) of `files` = [{ path, bytes }], as `zip -r` would write it
 * for the same tree: the tests need no `zip` command on the machine.
 */
export function zipFiles(files) {
  const locals = [];
  const central = [];
  let offset = 0;
  for (const { path: name, bytes } of files) {
    const nameBuf = Buffer.from(name, 'utf8');
    const data = deflateRawSync(bytes);
    const crc = crc32(bytes);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(0x0800, 6); // names are UTF-8
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(bytes.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(0x0800, 8);
    dir.writeUInt16LE(8, 10);
    dir.writeUInt32LE(crc, 16);
    dir.writeUInt32LE(data.length, 20);
    dir.writeUInt32LE(bytes.length, 24);
    dir.writeUInt16LE(nameBuf.length, 28);
    dir.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, data);
    central.push(dir, nameBuf);
    offset += 30 + nameBuf.length + data.length;
  }
  const centralBuf = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(centralBuf.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, centralBuf, end]);
}

/** Every file under `dir` as { relative path: Buffer }. */
export function readTree(dir) {
  const out = {};
  const walk = (d) => {
    for (const n of readdirSync(d)) {
      const full = path.join(d, n);
      if (statSync(full).isDirectory()) walk(full);
      else out[path.relative(dir, full).split(path.sep).join('/')] = readFileSync(full);
    }
  };
  walk(dir);
  return out;
}

/**
 * The top-left pixel of a PNG (8-bit RGB or RGBA, not interlaced) as [r, g, b, a]. Every PNG
 * filter leaves the first pixel of the first row as it is (no left or upper neighbour), so it can
 * be read straight after the filter byte.
 */
export function pngFirstPixel(buf) {
  assert.equal(buf.subarray(1, 4).toString(), 'PNG');
  const colorType = buf[25];
  assert.equal(buf[24], 8, 'PNG: 8 bits per sample');
  assert.ok(colorType === 2 || colorType === 6, `PNG: colour type ${colorType}`);
  const idat = [];
  for (let p = 8; p + 8 <= buf.length; ) {
    const len = buf.readUInt32BE(p);
    const type = buf.toString('latin1', p + 4, p + 8);
    if (type === 'IDAT') idat.push(buf.subarray(p + 8, p + 8 + len));
    p += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const px = raw.subarray(1, colorType === 6 ? 5 : 4);
  return [px[0], px[1], px[2], colorType === 6 ? px[3] : 255];
}

/**
 * The records of a CSV text, each a list of fields (quoted fields hold commas, quotes and line
 * breaks; a `\r` outside quotes is dropped, so CRLF files read as LF ones).
 */
export function csvRecords(text) {
  const records = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      records.push(row);
      row = [];
      field = '';
    } else if (c !== '\r') field += c;
  }
  if (field || row.length) records.push([...row, field]);
  return records;
}
