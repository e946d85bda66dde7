// The Compare mode against `memlens compare` on the same files: a generated job and a copy with one
// block injected at a rank's peak (the generator's own option), the real sample against itself, and
// two SOMAS dumps with one tensor grown. The page's figures are compared with `--json`, its exports
// byte for byte with `--out`; the empty, loading and error states are seen; screenshots at
// 1440×900 and 1024×700, light and dark. No request leaves the page's origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, readdirSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { bytes } from '../../www/format.js';
import { root, CLI, SHOTS, openBrowser, startServer, foreignRequests, engineThreads, settled } from './harness.mjs';

const SAMPLE = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
let server;
let tmp;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-compare-page-'));
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

function cli(args) {
  try {
    return execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  } catch (err) {
    // Exit 3 (the gate) still prints the document; the test never asks for it.
    if (err.stdout) return err.stdout;
    throw err;
  }
}

function cliOut(base, candidate, extra = []) {
  const dir = mkdtempSync(path.join(tmp, 'out-'));
  cli(['compare', base, candidate, '--out', dir, ...extra]);
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(path.join(dir, n))]));
}

async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  // From the top: the page's sticky header would otherwise sit over the middle of a full-page shot.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

async function openCompare(b, viewport) {
  const page = await b.page();
  if (viewport) await page.setViewportSize(viewport);
  await page.goto(server.url);
  await engineThreads(page);
  await page.click('[data-testid="compare-button"]');
  await page.waitForSelector('[data-testid="compare"][data-state="empty"]');
  // The drop zone shrinks to one line above the Compare mode, as it does above an analysis.
  assert.ok(await page.$eval('#drop-zone', (z) => z.classList.contains('compact') && z.getBoundingClientRect().height < 60), 'drop zone not compact');
  return page;
}

async function compareFolders(page, base, candidate, steps = {}) {
  await page.setInputFiles('input[data-testid="compare-base-folder"]', base);
  await page.setInputFiles('input[data-testid="compare-candidate-folder"]', candidate);
  if (steps.base) await page.fill('[data-testid="compare-base-step"]', String(steps.base));
  if (steps.candidate) await page.fill('[data-testid="compare-candidate-step"]', String(steps.candidate));
  return run(page);
}

async function run(page) {
  await page.click('[data-testid="compare-run"]');
  await page.waitForFunction(() => ['ready', 'error'].includes(document.querySelector('[data-testid="compare"]').dataset.state), null, { timeout: 120000 });
  return page.getAttribute('[data-testid="compare"]', 'data-state');
}

async function exportFile(page, name) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="compare-export-${name}"]`)]);
  assert.equal(dl.suggestedFilename(), name);
  return readFileSync(await dl.path());
}

const pairsOnPage = (page) =>
  page.$$eval('[data-testid="compare-pair"]', (rows) =>
    rows.map((r) => ({ role: r.dataset.role, rank: r.dataset.rank, basePeak: Number(r.dataset.basePeak), candidatePeak: Number(r.dataset.candidatePeak), delta: Number(r.dataset.delta), reservedDelta: Number(r.dataset.reservedDelta), differences: Number(r.dataset.differences) })),
  );

/** The overlaid curves' figures once drawn (aligned as asked). */
async function overlayOnPage(page, align) {
  await page.waitForFunction((a) => {
    const o = document.querySelector('[data-testid="compare-overlay"]');
    return o && o.dataset.state !== 'loading' && o.dataset.align === a;
  }, align, { timeout: 60000 });
  const d = await page.$eval('[data-testid="compare-overlay"]', (o) => ({ ...o.dataset }));
  assert.equal(d.state, 'ready', await page.textContent('[data-testid="compare-overlay-status"]'));
  return { ...d, maxDelta: Number(d.maxDelta), minDelta: Number(d.minDelta), growFrom: Number(d.growFrom), growTo: Number(d.growTo) };
}

const pairsOfCli = (json) =>
  json.pairs.map((p) => ({ role: p.key.role, rank: p.key.rank === null ? '' : String(p.key.rank), basePeak: p.base.peak_allocated_bytes, candidatePeak: p.candidate.peak_allocated_bytes, delta: p.peak_allocated_delta_bytes, reservedDelta: p.peak_reserved_delta_bytes, differences: p.differences }));

test('generated job with one block at a rank peak: figures = compare --json, exports = --out, screenshots', async () => {
  const base = path.join(tmp, 'job-a');
  const cand = path.join(tmp, 'job-b');
  const gen = ['generate', 'profiler', '--ranks', '2', '--rows', '600', '--trace-mb', '0.2', '--steps', '2', '--seed', '4'];
  cli([...gen, '--out', base]);
  const injectedLine = cli([...gen, '--out', cand, '--inject-peak-bytes', String(48 << 20)]).split('\n')[0];
  const injected = JSON.parse(injectedLine);
  // The block's life in ns, exactly (the times pass 2^53: read as BigInt from the text).
  const ns = (field) => BigInt(injectedLine.match(new RegExp(`"${field}":(-?\\d+)`))[1]);
  const life = Number(ns('release_ns') - ns('alloc_ns'));
  const json = JSON.parse(cli(['compare', base, cand, '--json']));
  const files = cliOut(base, cand);
  for (const [scheme, viewport, tag] of [
    ['light', { width: 1440, height: 900 }, '1440'],
    ['dark', { width: 1024, height: 700 }, '1024'],
  ]) {
    const b = await openBrowser({ colorScheme: scheme });
    try {
      const page = await openCompare(b, viewport);
      if (tag === '1440') await shot(page, `compare-empty-${scheme}-${tag}`);
      assert.equal(await compareFolders(page, base, cand), 'ready');
      assert.deepEqual(await pairsOnPage(page), pairsOfCli(json));
      // The header status says what was compared, not "idle".
      assert.equal(await page.getAttribute('[data-testid="status"]', 'data-state'), 'ready');
      assert.equal(await page.textContent('[data-testid="status"]'), `compared ${json.pairs.length} rank pair${json.pairs.length === 1 ? '' : 's'}: ${json.differences} difference${json.differences === 1 ? '' : 's'}`);
      // The pair that grew is selected; its changed frame is the injected one, on top.
      assert.equal(await page.getAttribute('[data-testid="compare-detail"]', 'data-rank'), '1');
      const top = await page.$eval('[data-testid="compare-frame"]', (r) => ({ frame: r.dataset.frame, delta: Number(r.dataset.delta) }));
      assert.deepEqual(top, { frame: injected.frame, delta: 48 << 20 });
      const only = await page.$$eval('[data-testid="compare-only"]', (rows) => rows.map((r) => [r.dataset.side, r.dataset.name, Number(r.dataset.bytes)]));
      assert.deepEqual(only, [['candidate', injected.op_name, 48 << 20]]);
      assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-differences'), String(json.differences));
      // One count of the differences, in plain words (no "(s)").
      assert.equal(await page.textContent('[data-testid="compare-message"]'), `${json.differences} difference${json.differences === 1 ? '' : 's'} found.`);
      assert.equal((await page.textContent('[data-testid="compare"]')).split(`${json.differences} difference`).length, 2);
      assert.doesNotMatch(await page.textContent('[data-testid="compare"]'), /\(s\)/);
      // The curves overlaid: the difference is the injected block, +48 MiB over exactly its life,
      // and nothing shrinks; lined up by step it is the same block.
      for (const align of ['start', 'step']) {
        if (align === 'step') await page.selectOption('[data-testid="compare-overlay-align"]', 'step');
        const o = await overlayOnPage(page, align);
        assert.equal(o.align, align);
        assert.equal(o.maxDelta, 48 << 20);
        assert.equal(o.minDelta, 0);
        assert.equal(o.reduced, 'false');
        assert.equal(o.growTo - o.growFrom, life);
        // The block lives for a moment: its time is named once ("at …, for …"), never "from X to X".
        const status = await page.textContent('[data-testid="compare-overlay-status"]');
        assert.match(status, /^largest growth \+48(\.0+)? MiB (at [^,]+, for [\d.]+ (ns|µs|ms)|from \S+ \S+ to \S+ \S+ \([\d.]+ (ns|µs|ms)\))/, status);
        const m = /from (\S+ \S+) to (\S+ \S+)/.exec(status);
        if (m) assert.notEqual(m[1], m[2], status);
      }
      await shot(page, `compare-profiler-${scheme}-${tag}`);
      if (tag === '1440') {
        for (const name of Object.keys(files)) assert.ok((await exportFile(page, name)).equals(files[name]), name);
        // Links into each side's own view: the selected pair's rank, at its peak, in the torch_npu
        // tab of the candidate, then of the baseline (both kept loaded: no files are sent again).
        const p = json.pairs.findIndex((x) => x.key.rank === 1);
        for (const [side, figures] of [
          ['candidate', json.pairs[p].candidate],
          ['base', json.pairs[p].base],
        ]) {
          await page.click(`[data-testid="compare-detail"] .compare-open-line [data-testid="compare-open-${side}"]`);
          assert.equal(await settled(page, 120000), 'ready');
          assert.equal(await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('tab')), 'ascend');
          assert.ok(await page.isVisible('#panel-ascend [data-testid="rank-select"]'));
          const selected = await page.$eval('#panel-ascend [data-testid="rank-select"]', (s) => s.selectedOptions[0].textContent);
          assert.match(selected, /rank 1\b/, selected);
          assert.equal(await page.getAttribute('#panel-ascend [data-metric="ascend-ranks"]', 'data-value'), '2');
          // The rank's peak in its own view is the comparison's figure for that side.
          const peak = await page.$eval('#panel-ascend [data-testid="rank-select"]', (s) => s.selectedOptions[0].textContent.split('peak ')[1]);
          assert.equal(peak, bytes(figures.peak_allocated_bytes));
          // The comparison is still there, still ready.
          assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-state'), 'ready');
        }
        // A frame row opens the rank at its peak with that frame's live group picked: the table
        // is filtered to the injected frame's blocks.
        await page.click('[data-testid="compare-frame"] [data-testid="compare-open-candidate"]');
        assert.equal(await settled(page, 120000), 'ready');
        assert.match(await page.$eval('#panel-ascend [data-testid="rank-select"]', (s) => s.selectedOptions[0].textContent), /rank 1\b/);
        await page.waitForSelector('#panel-ascend [data-testid="chip-group"]', { timeout: 60000 });
        const chipText = await page.textContent('#panel-ascend [data-testid="chip-group"]');
        assert.ok(chipText.includes(`: ${injected.frame}`), chipText);
        // Closing the Compare mode frees the comparison: the page is back to empty there.
        await page.click('[data-testid="compare-button"]');
        await page.click('[data-testid="compare-button"]');
        assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-state'), 'empty');
      }
      assert.deepEqual(foreignRequests(b.requests, server.origin), []);
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  }
});

test('the real sample against itself compares equal; two steps; a SOMAS pair; the error state', async () => {
  const b = await openBrowser({ colorScheme: 'dark' });
  try {
    const page = await openCompare(b, { width: 1440, height: 900 });
    assert.equal(await compareFolders(page, SAMPLE, SAMPLE), 'ready');
    assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-differences'), '0');
    assert.match(await page.textContent('[data-testid="status"]'), /^compared \d+ rank pairs?: no difference$/);
    assert.deepEqual(await pairsOnPage(page), pairsOfCli(JSON.parse(cli(['compare', SAMPLE, SAMPLE, '--json']))));

    // Two steps of one generated run: the same folder twice, with steps.
    const job = path.join(tmp, 'job-steps');
    cli(['generate', 'profiler', '--ranks', '1', '--rows', '400', '--trace-mb', '0.1', '--steps', '2', '--out', job]);
    assert.equal(await compareFolders(page, job, job, { base: 1, candidate: 2 }), 'ready');
    const steps = JSON.parse(cli(['compare', job, job, '--base-step', '1', '--candidate-step', '2', '--json']));
    assert.equal(steps.mode, 'steps');
    assert.deepEqual(await pairsOnPage(page), pairsOfCli(steps));
    await page.fill('[data-testid="compare-base-step"]', '');
    await page.fill('[data-testid="compare-candidate-step"]', '');

    // SOMAS: one tensor grown moves the peak.
    const a = path.join(tmp, 'a_somas_tensor_offset_1.ir');
    const c = path.join(tmp, 'c_somas_tensor_offset_1.ir');
    cli(['generate', 'somas', '--out', a, '--nodes', '3000', '--flavor', 'v2.4']);
    const grown = JSON.parse(cli(['generate', 'somas', '--out', c, '--nodes', '3000', '--flavor', 'v2.4', '--grow-tensor', '300000000'])).grown_tensor;
    await page.setInputFiles('input[data-testid="compare-base-files"]', a);
    await page.setInputFiles('input[data-testid="compare-candidate-files"]', c);
    assert.equal(await run(page), 'ready');
    assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-family'), 'somas');
    const json = JSON.parse(cli(['compare', a, c, '--json']));
    assert.equal(await page.textContent('[data-testid="status"]'), `compared two SOMAS dumps: ${json.differences} difference${json.differences === 1 ? '' : 's'}`);
    const nodes = await page.$$eval('[data-testid="compare-node"]', (rows) => rows.map((r) => [Number(r.dataset.index), Number(r.dataset.delta)]));
    assert.deepEqual(nodes, json.node_differences.map((n) => [n.candidate_index, n.delta_bytes]));
    assert.deepEqual(nodes.map((n) => n[0]), [grown.node_index]);
    // The in-use curves overlaid: the growth at the grown tensor's node only.
    const o = await overlayOnPage(page, 'start');
    assert.equal(o.maxDelta, json.node_differences[0].delta_bytes);
    assert.equal(o.minDelta, 0);
    assert.equal(o.growFrom, grown.node_index);
    assert.equal(o.growTo, grown.node_index + 1);
    const tensors = await page.$$eval('[data-testid="compare-tensor"]', (rows) => rows.map((r) => [r.dataset.change, Number(r.dataset.id), Number(r.dataset.effect)]));
    assert.deepEqual(tensors, [['changed', grown.tensor, grown.aligned_after]]);
    const files = cliOut(a, c);
    for (const name of Object.keys(files)) assert.ok((await exportFile(page, name)).equals(files[name]), name);
    await shot(page, 'compare-somas-dark-1440');
    // Links into a side's SOMAS view: the grown node in the baseline (not its peak node, so the
    // selection comes from the link), then the grown tensor in the candidate.
    assert.notEqual(json.node_differences[0].name, json.base.peak_node);
    const hashOf = (k) => page.evaluate((key) => new URLSearchParams(location.hash.slice(1)).get(key), k);
    await page.click('[data-testid="compare-node"] [data-testid="compare-open-base"]');
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForSelector('#panel-somas [data-testid="somas"]', { state: 'visible' });
    assert.equal(await hashOf('tab'), 'somas');
    await page.waitForFunction((n) => new URLSearchParams(location.hash.slice(1)).get('s.node') === n, String(json.node_differences[0].base_index), { timeout: 60000 });
    // The user queries an address range in that view; the next link opens its own place alone,
    // without the range picked in the other dump's view.
    await page.fill('#panel-somas [data-testid="somas-search"]', '0x0-0x1000');
    await page.press('#panel-somas [data-testid="somas-search"]', 'Enter');
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('s.range') !== null, null, { timeout: 60000 });
    await page.click('[data-testid="compare-tensor"] [data-testid="compare-open-candidate"]');
    assert.equal(await settled(page, 120000), 'ready');
    await page.waitForFunction((t) => new URLSearchParams(location.hash.slice(1)).get('s.tensor') === t, String(grown.tensor), { timeout: 60000 });
    assert.equal(await hashOf('s.range'), null, 'no range of the baseline\'s view carried into the candidate\'s');
    assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-state'), 'ready');

    // A profiler run against a SOMAS dump: the error state names the problem.
    await page.setInputFiles('input[data-testid="compare-base-folder"]', SAMPLE);
    assert.equal(await run(page), 'error');
    assert.match(await page.textContent('[data-testid="compare-message"]'), /different families/);
    assert.deepEqual([await page.getAttribute('[data-testid="status"]', 'data-state'), await page.textContent('[data-testid="status"]')], ['error', 'compare failed']);
    await shot(page, 'compare-error-dark-1440');
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
  } finally {
    await b.close();
  }
});

test('two runs of one rank in one drop: "compare these" with a baseline choice and a swap', async () => {
  // One folder holding two runs of rank 0: the second with a block injected at its peak.
  const pair = path.join(tmp, 'two-runs');
  const gen = ['generate', 'profiler', '--ranks', '1', '--rows', '400', '--trace-mb', '0.1', '--steps', '2', '--seed', '9'];
  cli([...gen, '--out', path.join(pair, 'before')]);
  cli([...gen, '--out', path.join(pair, 'after'), '--inject-peak-bytes', String(16 << 20)]);
  const forward = JSON.parse(cli(['compare', path.join(pair, 'before'), path.join(pair, 'after'), '--json']));
  const backward = JSON.parse(cli(['compare', path.join(pair, 'after'), path.join(pair, 'before'), '--json']));
  assert.equal(forward.pairs[0].peak_allocated_delta_bytes, 16 << 20);
  const b = await openBrowser({ colorScheme: 'light' });
  try {
    const page = await b.page();
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(server.url);
    await engineThreads(page);
    await page.setInputFiles('input[data-testid="folder-input"]', pair);
    await page.waitForSelector('[data-testid="compare-offer"]:not([hidden])', { timeout: 120000 });
    // The torch_npu view reads one of the two runs as the rank and says it set the other aside.
    assert.equal(await settled(page, 120000), 'ready');
    assert.equal(await page.getAttribute('#panel-ascend [data-metric="ascend-ranks"]', 'data-value'), '1');
    const warnings = await page.$$eval('#panel-ascend [data-testid="ascend-warnings"] li', (li) => li.map((x) => x.textContent));
    const aside = warnings.filter((w) => /another run of .*rank 0, in another directory than .*: set aside/.test(w));
    assert.equal(aside.length, 1, warnings.join('\n'));
    // Said once on the page: the list of files not analysed names the run without repeating why.
    const text = await page.textContent('#panel-ascend');
    assert.equal(text.split(aside[0].slice(aside[0].indexOf('another run of'))).length - 1, 1, 'the set-aside reason is written once');
    // The inputs in the order the inventory lists them; the first is the baseline until swapped.
    const names = async () => [await page.textContent('[data-testid="offer-base"]'), await page.textContent('[data-testid="offer-candidate"]')];
    const [first, second] = await names();
    assert.notEqual(first, second);
    const beforeFirst = /\/before\//.test(`${first}/`);
    assert.ok(/\/(before|after)\//.test(`${first}/`) && /\/(before|after)\//.test(`${second}/`), `${first} ${second}`);
    await page.click('[data-testid="offer-swap"]');
    assert.deepEqual(await names(), [second, first]);
    // Baseline = the run before the injection, whichever the inventory listed first.
    if (beforeFirst) await page.click('[data-testid="offer-swap"]');
    await shot(page, 'compare-offer-light-1440');
    await page.click('[data-testid="offer-compare"]');
    await page.waitForFunction(() => ['ready', 'error'].includes(document.querySelector('[data-testid="compare"]')?.dataset.state), null, { timeout: 120000 });
    assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-state'), 'ready');
    assert.deepEqual(await pairsOnPage(page), pairsOfCli(forward));
    // Swapped: the same two runs the other way round.
    await page.click('[data-testid="offer-swap"]');
    await page.click('[data-testid="offer-compare"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="compare-pair"]')?.dataset.delta === String(-(16 << 20)), null, { timeout: 120000 });
    assert.deepEqual(await pairsOnPage(page), pairsOfCli(backward));
    assert.deepEqual(foreignRequests(b.requests, server.origin), []);
    assert.deepEqual(b.consoleErrors, []);

    // A two-rank job is two ranks, not two versions: no offer.
    await page.setInputFiles('input[data-testid="folder-input"]', SAMPLE);
    await page.waitForSelector('[data-testid="compare-offer"]', { state: 'hidden', timeout: 120000 });
    assert.equal(await settled(page, 120000), 'ready');
    assert.equal(await page.getAttribute('[data-testid="compare-offer"]', 'hidden'), '');
  } finally {
    await b.close();
  }
});
