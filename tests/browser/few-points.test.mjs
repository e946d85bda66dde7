// Views given one point or none draw something a user can read, not an empty box: the job summary
// tab's curve of a rank whose capture is a single sample (a dot and its value), the snapshot
// timeline of a device without a trace (the snapshot's allocated and reserved bytes as lines, as
// `memlens snapshot --json` gives them), the SOMAS views of a dump without nodes (a sentence
// each, no chart, no dead button), the compare overlay of two one-sample runs (a dot per side with
// its value) and of a run against one without a curve (said so), and the axes of a curve of 0 or
// 1 byte (no two ticks labelled alike). Screenshots at 1440×900 and 1024×700, light and dark.
//
// Seen failing on main (641f95b): the job summary curve of fixtures/classify/job's one-row ranks
// painted no pixel (a path of one point strokes nothing); the snapshot timeline without a trace
// painted no curve; the SOMAS curves of a dump without nodes were an empty box labelled
// "1 B, 1 B, 0 B" with its controls live, the frame a grey bar with dead buttons; the compare
// overlay of one-sample runs drew nothing where the dot is.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, CLI, openBrowser, startServer, engineThreads, dropFiles, settled, screenshot, assertClean } from './harness.mjs';

let server;
let tmp;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-few-points-'));
});

after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const b64 = (buf) => Buffer.from(buf).toString('base64');

/** A browser at `viewport` and `colorScheme` with `files` dropped and the page settled. */
async function open(files, { viewport = { width: 1440, height: 900 }, colorScheme = 'light' } = {}) {
  const b = await openBrowser({ viewport, colorScheme });
  const page = await b.page();
  await page.goto(server.url);
  await engineThreads(page);
  await dropFiles(page, files);
  await settled(page, 120000);
  return { b, page };
}

const SIZES = [];
for (const colorScheme of ['light', 'dark']) for (const viewport of [{ width: 1440, height: 900 }, { width: 1024, height: 700 }]) SIZES.push({ colorScheme, viewport });

/** Painted pixels (alpha > 0) of the canvas under `sel`, after the next frames. */
function inked(page, sel) {
  return page.$eval(sel, async (c) => {
    await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let k = 3; k < d.length; k += 4) if (d[k]) n++;
    return n;
  });
}

test('the job summary curve of a rank with one sample is a dot with its value, not an empty box', async () => {
  cpSync(path.join(root, 'fixtures', 'classify', 'job'), path.join(tmp, 'job'), { recursive: true });
  const r = spawnSync(CLI, ['profiler', 'job', '-q', '--summary', 'job.memlens.json'], { cwd: tmp, encoding: 'utf8' });
  assert.equal(r.status, 2, r.stderr);
  const text = readFileSync(path.join(tmp, 'job.memlens.json'), 'utf8');
  const summary = JSON.parse(text);
  // The rank the tab opens on (the highest peak, the first of equals) has one sample.
  const peak = summary.ranks.filter((x) => x.status === 'ok').reduce((a, x) => (x.peak_allocated_bytes > a.peak_allocated_bytes ? x : a));
  assert.equal(peak.curve.t_ns.length, 1);
  const [alloc, reserved] = [peak.curve.allocated_bytes[0], peak.curve.reserved_bytes[0]];
  for (const { colorScheme, viewport } of SIZES) {
    const { b, page } = await open([{ path: 'job.memlens.json', base64: b64(text) }], { viewport, colorScheme });
    try {
      await page.waitForFunction(() => document.querySelector('[data-testid="jobsummary-rank"]')?.dataset.state === 'ready', null, { timeout: 60000 });
      const curve = '[data-testid="jobsummary-curve"]';
      assert.equal(await page.getAttribute(curve, 'data-columns'), '1');
      // The dots (two of radius 4) and their labels are painted (on main: 0 pixels).
      const n = await inked(page, `${curve} canvas`);
      assert.ok(n > 100, `${colorScheme} ${viewport.width}: ${n} pixels painted`);
      assert.equal(await page.getAttribute(curve, 'data-instant'), '1');
      const legend = await page.$eval(`${curve} .legend`, (l) => l.textContent);
      assert.match(legend, /one sample: the capture holds a single point in time, drawn as a dot/);
      assert.ok(legend.includes(`peak ${(alloc / 2 ** 20).toFixed(2)} MiB`) && legend.includes(`peak ${(reserved / 2 ** 20).toFixed(2)} MiB`), legend);
      await page.locator('[data-testid="jobsummary-rank"]').scrollIntoViewIfNeeded();
      await screenshot(page, `few-points-summary-${viewport.width}-${colorScheme}`);
      assertClean(b, server.origin);
    } finally {
      await b.close();
    }
  }
});

test('the snapshot timeline of a device without a trace draws the snapshot\'s allocated and reserved bytes', async () => {
  const frames = [{ name: 'train_step', filename: '/home/user/train.py', line: 42 }];
  const A = 139637976727552;
  const segment = {
    device: 0, address: A, total_size: 2097152, allocated_size: 1024, active_size: 1024, requested_size: 1000, stream: 0, segment_type: 'large', frames,
    blocks: [{ address: A, size: 1024, requested_size: 1000, state: 'active_allocated', frames }, { address: A + 1024, size: 2097152 - 1024, requested_size: 0, state: 'inactive', frames: [] }],
  };
  const file = path.join(tmp, 'no-trace.json');
  writeFileSync(file, JSON.stringify({ segments: [segment], device_traces: [[]] }));
  const r = spawnSync(CLI, ['snapshot', file, '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const d = JSON.parse(r.stdout).devices['0'];
  assert.equal(d.trace_entries, 0);
  for (const { colorScheme, viewport } of SIZES) {
    const { b, page } = await open([{ path: 'no-trace.json', base64: b64(readFileSync(file)) }], { viewport, colorScheme });
    try {
      await page.waitForFunction(() => document.querySelector('[data-testid="snapshot"]')?.dataset.state === 'ready', null, { timeout: 60000 });
      const canvas = '[data-testid="snapshot-timeline"]';
      await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.atSnapshot, canvas, { timeout: 30000 });
      assert.equal(await page.getAttribute(canvas, 'data-at-snapshot'), `reserved:${d.reserved_bytes} allocated:${d.allocated_bytes}`);
      await page.locator('#snap-timeline').scrollIntoViewIfNeeded();
      await screenshot(page, `few-points-snapshot-no-trace-${viewport.width}-${colorScheme}`);
      assertClean(b, server.origin);
    } finally {
      await b.close();
    }
  }
});

test('a snapshot device without segments: the allocator state says so and hides its chart buttons', async () => {
  const frames = [{ name: 'train_step', filename: '/home/user/train.py', line: 42 }];
  const text = JSON.stringify({ segments: [], device_traces: [[{ action: 'alloc', addr: 4096, size: 1024, stream: 0, frames }]] });
  const { b, page } = await open([{ path: 'trace-only.json', base64: b64(text) }]);
  try {
    await page.waitForFunction(() => document.querySelector('[data-testid="snapshot"]')?.dataset.state === 'ready', null, { timeout: 60000 });
    const state = await page.$eval('#snap-state', (s) => ({
      says: s.querySelector('.empty-state')?.textContent,
      buttons: [...s.querySelectorAll('button')].filter((x) => x.offsetParent !== null).map((x) => x.textContent),
    }));
    assert.deepEqual(state, { says: 'This device holds no segment at the snapshot (nothing reserved).', buttons: [] });
    // The timeline has a chart: its buttons stay.
    assert.deepEqual(await page.$$eval('#snap-timeline button', (bs) => bs.filter((x) => x.offsetParent !== null).map((x) => x.textContent)), ['Reset', 'PNG']);
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});

test('a SOMAS dump without nodes: each view says so, with no empty chart and no dead button', async () => {
  // A dump of the v1.10+ shape with its sections and nothing in them.
  const dump = [
    'All Parameters:', '', 'index:\tsize:\tsource node name:\tnode out index:', '', '',
    'All Tensors:', '', 'index:\taligned_size:\toriginal_size:\toffset:\ttype:\tlifelong:\tlife_start:\tlife_end:\tsource node name:', '', '',
    'All Nodes:', '', '', '',
    'All Union Tensors Info:', '', '', '',
    'All Merged Blocks:', '', 'start_offset:\tsize:', '',
    'Total Memory Size after reused:0',
  ].join('\n');
  const file = path.join(tmp, 'Ascend_somas_tensor_offset_1.ir');
  writeFileSync(file, dump);
  const r = spawnSync(CLI, ['somas', file, '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).nodes, 0);
  for (const { colorScheme, viewport } of SIZES) {
    const { b, page } = await open([{ path: 'Ascend_somas_tensor_offset_1.ir', base64: b64(dump) }], { viewport, colorScheme });
    try {
      await page.waitForFunction(() => document.querySelector('[data-testid="somas"]')?.dataset.state === 'ready', null, { timeout: 60000 });
      const views = await page.evaluate(() => Object.fromEntries(['curves', 'layout', 'frame'].map((id) => {
        const s = document.querySelector(`[data-view="${id}"]`);
        return [id, {
          says: s.querySelector('.empty-state')?.textContent ?? null,
          canvases: [...s.querySelectorAll('canvas')].filter((c) => c.offsetParent !== null).length,
          buttons: [...s.querySelectorAll('button')].filter((x) => x.offsetParent !== null).map((x) => x.textContent),
        }];
      })));
      assert.deepEqual(views, {
        curves: { says: 'This dump lists no node: there is no execution order to draw memory over. Open the *_somas_tensor_offset_* dump of a compiled graph.', canvases: 0, buttons: [] },
        layout: { says: 'This dump lists no node and no tensor: nothing to lay out. Open the *_somas_tensor_offset_* dump of a compiled graph.', canvases: 0, buttons: [] },
        frame: { says: 'This dump lists no node: nothing runs, so no tensor is alive at any point and there is no frame to show.', canvases: 0, buttons: [] },
      });
      // The export offers no PNG of a chart that is not drawn.
      const exported = await page.$$eval('[data-view="export"] .toolbar button', (bs) => bs.filter((x) => x.offsetParent !== null).map((x) => x.textContent));
      assert.deepEqual(exported, ['Download all (zip)', 'summary.json']);
      await screenshot(page, `few-points-somas-no-nodes-${viewport.width}-${colorScheme}`);
      assertClean(b, server.origin);
    } finally {
      await b.close();
    }
  }
});

test('the axis of a curve of 0 or 1 byte (or entry) labels no two ticks alike', async () => {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    const got = await page.evaluate(async () => {
      const { ticks, axisLabel } = await import(new URL('ui/plot.js', location.href).href);
      const out = {};
      for (const [kind, top] of [['bytes', 1.08], ['index', 1.04], ['bytes', 3.2]]) {
        out[`${kind} ${top}`] = ticks(0, top, 4, kind).map((v) => axisLabel(v, kind));
      }
      return out;
    });
    assert.deepEqual(got, { 'bytes 1.08': ['0 B', '1 B'], 'index 1.04': ['0', '1'], 'bytes 3.2': ['0 B', '1 B', '2 B', '3 B'] });
  } finally {
    await b.close();
  }
});

test('a compared pair of one-sample runs draws each side as a dot with its value; a side without a curve is said', async () => {
  // One run folder of fixtures/classify/job (one memory_record row: 10.0 MB allocated), and a
  // copy of it whose CSVs keep only their headers (no curve).
  const one = path.join(tmp, 'cmp-one', 'host-a_1001_20250101120000123_ascend_pt');
  cpSync(path.join(root, 'fixtures', 'classify', 'job', 'step1', 'actor_update', 'host-a_1001_20250101120000123_ascend_pt'), one, { recursive: true });
  const none = path.join(tmp, 'cmp-none', 'host-a_1001_20250101120000123_ascend_pt');
  cpSync(one, none, { recursive: true });
  for (const f of ['memory_record.csv', 'operator_memory.csv']) {
    const p = path.join(none, 'ASCEND_PROFILER_OUTPUT', f);
    writeFileSync(p, `${readFileSync(p, 'utf8').split('\n')[0]}\n`);
  }
  const allocated = 10.0 * 2 ** 20;
  for (const { colorScheme, viewport } of SIZES) {
    const b = await openBrowser({ viewport, colorScheme });
    try {
      const page = await b.page();
      await page.goto(server.url);
      await engineThreads(page);
      await page.click('[data-testid="compare-button"]');
      await page.waitForSelector('[data-testid="compare"][data-state="empty"]');
      const compare = async (base, candidate) => {
        await page.setInputFiles('input[data-testid="compare-base-folder"]', base);
        await page.setInputFiles('input[data-testid="compare-candidate-folder"]', candidate);
        // The overlay of an earlier comparison is marked, so that the wait is for this one's.
        await page.evaluate(() => document.querySelector('[data-testid="compare-overlay"]')?.classList.add('earlier'));
        await page.click('[data-testid="compare-run"]');
        await page.waitForFunction(() => document.querySelector('[data-testid="compare-overlay"]:not(.earlier)')?.dataset.state === 'ready', null, { timeout: 120000 });
      };
      await compare(one, one);
      // The candidate's dot (drawn last) is in the middle of the axis at 10 MiB: that pixel has
      // the candidate's colour (on main nothing was drawn there but the grid).
      const want = await page.$eval('[data-testid="compare-overlay-canvas"]', async () => {
        await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
        const probe = document.createElement('canvas').getContext('2d');
        probe.fillStyle = getComputedStyle(document.documentElement).getPropertyValue('--compare-candidate').trim();
        probe.fillRect(0, 0, 1, 1);
        return [...probe.getImageData(0, 0, 1, 1).data].slice(0, 3);
      });
      const dot = await page.$eval('[data-testid="compare-overlay-canvas"]', (c, allocated) => {
        const [left, top, width, height] = c.dataset.area.split(',').map(Number);
        const dpr = window.devicePixelRatio || 1;
        const top1 = allocated * 1.08;
        const x = left + width / 2;
        const y = top + height - (allocated / top1) * height;
        return [...c.getContext('2d').getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data].slice(0, 3);
      }, allocated);
      assert.ok(dot.every((v, i) => Math.abs(v - want[i]) <= 40), `${colorScheme} ${viewport.width}: the dot's pixel ${dot} against ${want}`);
      await page.locator('[data-testid="compare-overlay"]').scrollIntoViewIfNeeded();
      await screenshot(page, `few-points-compare-one-${viewport.width}-${colorScheme}`);
      await compare(one, none);
      const said = await page.$eval('[data-testid="compare-overlay"]', (o) => ({ without: o.dataset.without, status: o.querySelector('[data-testid="compare-overlay-status"]').textContent }));
      assert.equal(said.without, 'candidate');
      assert.match(said.status, /^the candidate has no curve to draw: only the baseline is drawn/);
      assertClean(b, server.origin);
    } finally {
      await b.close();
    }
  }
});
