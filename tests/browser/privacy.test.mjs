// Privacy (issue 7, part 4): the Content-Security-Policy forbids every outside connection — in the
// page's meta tag, in the dev server's header and in the offline file —, a request to another
// origin from the page is blocked by that policy (a CSP violation, not a network failure), and
// file paths, names and contents that carry HTML and script are shown as text: nothing runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { root, CLI, openBrowser, startServer, foreignRequests, settled, dropFiles, filesUnder } from './harness.mjs';
import { CSP } from '../../scripts/serve.mjs';

let server;
before(async () => {
  server = await startServer({ isolate: true });
});
after(async () => {
  await server.close();
});

/** `policy` as a map directive → list of sources. */
function parseCsp(policy) {
  const out = new Map();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) out.set(name.toLowerCase(), sources);
  }
  return out;
}

/** Sources that do not reach outside the page: keywords, and the page's own blob:/data: URLs. */
const LOCAL = new Set(["'self'", "'none'", "'wasm-unsafe-eval'", "'unsafe-inline'", 'blob:', 'data:']);

/** Checks that `policy` lets no fetch, script or fallback load reach another origin. */
function assertNoOutsideConnections(policy, where) {
  const d = parseCsp(policy);
  assert.ok(d.has('default-src'), `${where}: default-src missing (it is the fallback of every fetch directive)`);
  for (const name of ['default-src', 'connect-src', 'script-src']) {
    const sources = d.get(name) ?? d.get('default-src');
    for (const s of sources) {
      assert.ok(LOCAL.has(s), `${where}: ${name} allows ${s}`);
      assert.ok(!s.includes('*'), `${where}: ${name} has a wildcard ${s}`);
    }
  }
  // connect-src (fetch, XHR, WebSocket, EventSource, beacons) allows the page's origin at most:
  // no blob:/data: needed, no other scheme.
  for (const s of d.get('connect-src') ?? d.get('default-src')) {
    assert.ok(["'self'", "'none'"].includes(s), `${where}: connect-src allows ${s}`);
  }
  // Every other directive present may only name local sources too.
  for (const [name, sources] of d) {
    if (['report-uri', 'report-to', 'sandbox', 'upgrade-insecure-requests'].includes(name)) {
      assert.fail(`${where}: ${name} would send or change requests`);
    }
    for (const s of sources) assert.ok(LOCAL.has(s), `${where}: ${name} allows ${s}`);
  }
  // No plug-ins at all.
  assert.deepEqual(d.get('object-src') ?? d.get('default-src'), ["'none'"], `${where}: object-src`);
}

test('the CSP of the meta tag, the dev server header and the offline file forbid outside connections', async () => {
  const html = readFileSync(path.join(root, 'www', 'index.html'), 'utf8');
  const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
  assert.ok(meta, 'index.html has a CSP meta tag');
  assertNoOutsideConnections(meta[1], 'www/index.html meta');
  // The header the dev server sends is the same policy (it also covers the workers).
  assert.equal(CSP, meta[1]);
  const res = await fetch(server.url);
  assert.equal(res.headers.get('content-security-policy'), meta[1]);
  assertNoOutsideConnections(res.headers.get('content-security-policy'), 'dev server header');
  for (const file of ['worker.js', 'app.js']) {
    const r = await fetch(new URL(file, server.url));
    assert.equal(r.headers.get('content-security-policy'), CSP, `${file} is served with the policy`);
  }
  const offline = readFileSync(path.join(root, 'dist', 'memlens.html'), 'utf8');
  const off = offline.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
  assert.ok(off, 'dist/memlens.html has a CSP meta tag');
  assertNoOutsideConnections(off[1], 'dist/memlens.html meta');
  assert.deepEqual(parseCsp(off[1]).get('connect-src'), ["'none'"]);
});

test('a request to another origin from the page is a CSP violation, not a network error', async () => {
  const b = await openBrowser();
  try {
    const failed = new Map();
    const responses = [];
    b.context.on('requestfailed', (r) => failed.set(r.url(), r.failure()?.errorText));
    b.context.on('response', (r) => responses.push(r.url()));
    const page = await b.page();
    await page.goto(server.url);
    const result = await page.evaluate(async () => {
      const violations = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        violations.push({ blocked: e.blockedURI, directive: e.effectiveDirective, disposition: e.disposition }),
      );
      let fetchError = null;
      try {
        await fetch('https://example.com/');
      } catch (e) {
        fetchError = String(e);
      }
      let beacon = null;
      try {
        beacon = navigator.sendBeacon('https://example.org/collect', 'x');
      } catch (e) {
        beacon = String(e);
      }
      const img = await new Promise((resolve) => {
        const i = new Image();
        i.onload = () => resolve('loaded');
        i.onerror = () => resolve('blocked');
        i.src = 'https://example.net/pixel.png';
      });
      const ws = await new Promise((resolve) => {
        try {
          const s = new WebSocket('wss://example.com/socket');
          s.onerror = () => resolve('error');
          s.onopen = () => resolve('open');
        } catch (e) {
          resolve(String(e));
        }
      });
      // Violation events are dispatched asynchronously: wait until each blocked URL has one, not
      // for a fixed time (300 ms can be too short on a busy machine). If one never comes, the
      // test fails below, after 20 s, on what did come.
      const blocked = ['https://example.com/', 'https://example.org', 'https://example.net', 'wss://example.com'];
      const seenAll = () => blocked.every((u) => violations.some((x) => x.blocked.startsWith(u)));
      for (const until = performance.now() + 20000; !seenAll() && performance.now() < until; ) await new Promise((r) => setTimeout(r, 20));
      return { violations, fetchError, beacon, img, ws };
    });
    // fetch rejects, and the reason is the policy: a violation of connect-src for that URL. (The
    // page has the policy twice — header and meta tag — so each may be reported once per copy.)
    assert.match(result.fetchError, /TypeError/);
    const v = (url) => [
      ...new Set(result.violations.filter((x) => x.blocked.startsWith(url)).map((x) => `${x.directive} ${x.disposition}`)),
    ];
    assert.deepEqual(v('https://example.com/'), ['connect-src enforce']);
    assert.deepEqual(v('https://example.org'), ['connect-src enforce']);
    assert.deepEqual(v('https://example.net'), ['img-src enforce']);
    assert.deepEqual(v('wss://example.com'), ['connect-src enforce']);
    assert.equal(result.img, 'blocked');
    // Blocked by the browser before the network: fetch, beacon and WebSocket never become
    // requests; the image is announced to the network layer and fails there with the CSP block.
    // No response came from any other host.
    const foreign = foreignRequests(b.requests, server.origin);
    assert.deepEqual(foreign, ['https://example.net/pixel.png']);
    for (const u of foreign) assert.match(failed.get(u) ?? '', /csp|BLOCKED_BY_CSP/i, u);
    assert.deepEqual(foreignRequests(responses, server.origin), []);
  } finally {
    await b.close();
  }
});

// Payloads that would run if any string from the user's files were parsed as HTML. Each one sets
// window.__pwned (and tries a request) when it runs.
const SCRIPT = '<script>window.__pwned = (window.__pwned || 0) + 1</script>';
const IMG = '<img src="x" onerror="window.__pwned = (window.__pwned || 0) + 1; fetch(\'/pwned\')">';
const SVG = '<svg onload="window.__pwned = (window.__pwned || 0) + 1"></svg>';

test('HTML and script in dropped paths, names and file contents render as text and run nothing', async () => {
  const b64 = (s) => Buffer.from(s).toString('base64');
  const run = `job/${IMG}/host_1_20250101000000000_ascend_pt`;
  const files = [
    // A run folder under a role folder named with a payload; its metadata gives a payload role and
    // its profiler_info a payload rank_id (both shown: the role in the details, the bad rank_id
    // in a note).
    { path: `${run}/profiler_info.json`, base64: b64(JSON.stringify({ rank_id: `${SCRIPT}${IMG}` })) },
    { path: `${run}/profiler_metadata.json`, base64: b64(JSON.stringify({ role: `${SVG}role` })) },
    { path: `${run}/ASCEND_PROFILER_OUTPUT/operator_memory.csv`, base64: b64('Name,Size(KB),Allocation Time(us)\n') },
    // The same file twice: the note names both paths.
    { path: `${run}/operator_memory.csv`, base64: b64('x') },
    // Unknown files whose names and first line carry payloads (the reason quotes the first line).
    { path: `job/${SCRIPT}.ir`, base64: b64(`${IMG}\nmore\n`) },
    { path: `job/${SVG}notes.txt`, base64: b64('hello') },
    { path: `job/a"quote'&amp;.ir`, base64: b64(`${SCRIPT}\n`) },
  ];
  const bws = await openBrowser();
  try {
    const page = await bws.page();
    await page.goto(server.url);
    await dropFiles(page, files);
    // The run's only table is a header: no rank holds memory data, so the profiler tab settles as
    // an error (the core's verdict, as `memlens profiler` exits non-zero for it); what is checked
    // here is that the payloads stay text.
    assert.equal(await settled(page), 'error');
    const seen = await page.evaluate(() => {
      const inv = document.getElementById('inventory');
      return {
        pwned: window.__pwned ?? 0,
        elements: [...inv.querySelectorAll('script, img, svg, iframe, object, embed')].map((e) => e.outerHTML),
        text: inv.textContent,
        paths: [...document.querySelectorAll('[data-testid="unit"]')].map((r) => r.dataset.path),
      };
    });
    assert.equal(seen.pwned, 0, 'a payload ran');
    assert.deepEqual(seen.elements, [], 'payload markup became elements');
    // Shown literally, as text: paths, the role, the bad rank_id (in its note), the duplicate note
    // and the unknown file's first line.
    for (const literal of [
      `job/${IMG}/host_1_20250101000000000_ascend_pt`,
      `role ${SVG}role`,
      `rank_id "${SCRIPT}${IMG}" is not a rank number`,
      `operator_memory.csv found twice`,
      `job/${SCRIPT}.ir`,
      `job/${SVG}notes.txt`,
      `job/a"quote'&amp;.ir`,
    ]) {
      assert.ok(seen.text.includes(literal), `not shown as text: ${literal}`);
    }
    assert.ok(seen.paths.includes(`job/${SCRIPT}.ir`));
    // Nothing was requested because of a payload (no /x, no /pwned), nothing left the origin.
    const ownPaths = bws.requests.map((u) => new URL(u).pathname);
    assert.ok(!ownPaths.includes('/x') && !ownPaths.includes('/pwned'), ownPaths.join(' '));
    assert.deepEqual(foreignRequests(bws.requests, server.origin), []);
    assert.deepEqual(bws.consoleErrors, []);
  } finally {
    await bws.close();
  }
});

test('every sample, every tab and every view: no request leaves the origin, no CSP violation', async () => {
  const somasDir = path.join(root, 'fixtures', 'somas');
  const npuDir = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0');
  const one = (name) => [{ path: `somas/${name}`, base64: readFileSync(path.join(somasDir, name)).toString('base64') }];
  // A file alone that holds nothing to analyse (a solver log, a task-info file) settles as
  // "nothing to analyse", as the CLI exits 1 for it; every other drop is ready.
  const alone = (name) => (spawnSync(CLI, [path.join(somasDir, name)]).status === 1 ? 'error' : 'ready');
  const expected = new Map(readdirSync(somasDir).map((n) => [`somas/${n}`, alone(n)]));
  const drops = [
    ...readdirSync(somasDir).sort().map((n) => [`somas/${n}`, one(n)]),
    ['the whole somas folder', filesUnder(somasDir)],
    ['torch_npu text export', filesUnder(path.join(npuDir, 'text'))],
    ['torch_npu db export', filesUnder(path.join(npuDir, 'db'))],
    ['memory snapshots', filesUnder(path.join(root, 'fixtures', 'snapshots'))],
  ];
  const b = await openBrowser();
  try {
    const page = await b.page();
    // Every CSP violation, from the first script on.
    await page.addInitScript(() => {
      window.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    let views = 0;
    for (const [label, files] of drops) {
      const from = b.requests.length;
      await page.goto('about:blank');
      await page.goto(server.url);
      await dropFiles(page, files);
      assert.equal(await settled(page, 60000), expected.get(label) ?? 'ready', label);
      // Wait for the analysis tab the drop opened (if any) to finish.
      await page.waitForFunction(
        () => [...document.querySelectorAll('[data-testid="somas"], [data-testid="ascend"], [data-testid="snapshot"]')].every((e) => !['loading', ''].includes(e.dataset.state || '')),
        null,
        { timeout: 60000 },
      );
      // The tabs the user can click: the bar shows only when an analysis took the drop; else the
      // inputs table is the one view, shown without a bar.
      const tabs = await page.$$eval('#tabs:not([hidden]) [role="tab"][data-tab]', (t) => t.map((e) => e.dataset.tab));
      if (tabs.length === 0) {
        assert.equal(await page.locator('#analysis-panels > *').count(), 0, `${label}: no tab bar although an analysis took the drop`);
        assert.ok(await page.isVisible('#inventory'), `${label}: the inputs table shows`);
        views += 1;
      }
      for (const tab of tabs) {
        await page.click(`[role="tab"][data-tab="${tab}"]`);
        await page.waitForTimeout(200);
        const sections = page.locator('section.somas-section:visible, section.ascend-view:visible, section.snap-section:visible');
        const n = await sections.count();
        for (let i = 0; i < n; i++) {
          const s = sections.nth(i);
          await s.scrollIntoViewIfNeeded();
          const box = await s.boundingBox();
          if (box) await page.mouse.move(box.x + box.width / 2, box.y + Math.min(box.height / 2, 120));
          await page.waitForTimeout(50);
          views += 1;
        }
      }
      await page.waitForTimeout(300);
      assert.deepEqual(await page.evaluate(() => window.__csp), [], `${label}: CSP violations`);
      const mine = b.requests.slice(from).filter((u) => u !== 'about:blank');
      assert.deepEqual(foreignRequests(mine, server.origin), [], `${label}: requests outside the origin`);
      assert.deepEqual(mine.filter((u) => !u.startsWith(server.origin) && !u.startsWith('blob:') && !u.startsWith('data:')), [], label);
    }
    // The sweep really went through the views of the three analyses.
    assert.ok(views >= 7 + 8 + 6, `only ${views} views visited`);
    console.log(`privacy sweep: ${drops.length} drops, ${views} views visited`);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
