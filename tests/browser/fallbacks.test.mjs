// What the torch_npu views show when a rank's files do not fit together or a source is missing:
// memory_record.csv from another run drawn on its own range under the memory chart (with its own
// peak), and the live-set / unreleased groups by size class when there are no call stacks. The
// expectations are read from the input files here by plain text splitting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdtempSync, rmSync, mkdirSync, readFileSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { root, SHOTS, openSample, startServer, filesUnder, screenshot } from './harness.mjs';

const RUN = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text', 'rank0_ascend_pt');
const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 700 },
];

let server;
let tmp;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-fallbacks-'));
});

after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** `"1736405443871259.720"` µs → ns as a BigInt, by splitting the text. */
function ns(text) {
  const [i, f = ''] = text.trim().split('.');
  return BigInt(i) * 1000n + BigInt((f + '000').slice(0, 3));
}

/** Rows of a CSV as objects by header name (the profiler's CSVs have no quoted commas). */
function csv(file) {
  const [head, ...lines] = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
  const names = head.split(',').map((h) => h.trim());
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [names[i], v])));
}

test('memory_record.csv from another run is drawn on its own range, with its own peak', async () => {
  // The rank-0 run with memory_record.csv moved 10,000 s later (timestamp column rewritten here).
  const to = path.join(tmp, 'disjoint', 'rank0_ascend_pt');
  cpSync(RUN, to, { recursive: true });
  const rec = path.join(to, 'ASCEND_PROFILER_OUTPUT', 'memory_record.csv');
  const shifted = readFileSync(rec, 'utf8').split('\n').map((line, i) => {
    if (i === 0 || !line) return line;
    const f = line.split(',');
    const [int, frac = ''] = f[1].trim().split('.');
    f[1] = `${BigInt(int) + 10000000000n}.${frac}`;
    return f.join(',');
  }).join('\n');
  writeFileSync(rec, shifted);
  // The records' own range and the highest PTA allocated (MB = 2^20 bytes) of the shifted file.
  const records = csv(rec);
  const times = records.map((r) => ns(r['Timestamp(us)']));
  const lo = times.reduce((a, t) => (t < a ? t : a));
  const hi = times.reduce((a, t) => (t > a ? t : a));
  let peak = null;
  for (const r of records) {
    if (r.Component.trim() !== 'PTA' || !r['Total Allocated(MB)'].trim()) continue;
    const v = Math.round(Number(r['Total Allocated(MB)']) * 1048576);
    if (!peak || v > peak.bytes) peak = { bytes: v, t: ns(r['Timestamp(us)']) };
  }
  for (const size of SIZES) {
    for (const colorScheme of ['light', 'dark']) {
      const { browser: b, page } = await openSample(server, filesUnder(path.join(tmp, 'disjoint')), { viewport: size, colorScheme, view: 'ascend' });
      try {
        // The warning still names both ranges.
        assert.match(await page.textContent('[data-testid="ascend-warnings"]'), /memory_record\.csv covers \d+\.\d{3} us – \d+\.\d{3} us but operator_memory\.csv covers/);
        // The main chart stays on the allocations.
        const mainMs = Number(await page.getAttribute('[data-testid="memory-canvas"]', 'data-domain-ms'));
        assert.ok(mainMs > 0 && mainMs < 100000, `main axis ${mainMs} ms`);
        assert.match(await page.textContent('#ascend-memory .chart-caption'), /memory_record\.csv covers another time range/);
        // The records: their own chart, their own range and peak.
        const aside = page.locator('[data-testid="records-aside"]');
        assert.equal(await aside.isVisible(), true);
        const asideMs = Number(await page.getAttribute('[data-testid="records-aside-canvas"]', 'data-domain-ms'));
        assert.equal(asideMs, Math.max(Number(hi - lo), 1) / 1e6);
        assert.equal(Number(await aside.getAttribute('data-peak-bytes')), peak.bytes);
        assert.equal(Number(await aside.getAttribute('data-peak-ms')), Number(peak.t - lo) / 1e6);
        await page.waitForFunction(() => document.querySelector('[data-testid="records-aside"]').dataset.state === 'ready', null, { timeout: 30000 });
        assert.equal(Number(await aside.getAttribute('data-drawn-max')), peak.bytes, 'the curve drawn reaches the peak');
        assert.match(await aside.textContent(), /memory_record\.csv on its own time range/);
        // The peak's label keeps off the dotted APP line (flat near the top, where the label
        // used to sit): the label's box against the line's pixel rows under it, from the file.
        await page.waitForFunction(() => document.querySelector('[data-testid="records-aside"]').dataset.peakLabel, null, { timeout: 30000 });
        const [lx, ly, lw, lh] = (await aside.getAttribute('data-peak-label')).split(',').map(Number);
        const [, , aw, ah] = (await page.getAttribute('[data-testid="records-aside-canvas"]', 'data-area')).split(',').map(Number);
        const yTop = Number(await page.getAttribute('[data-testid="records-aside-canvas"]', 'data-domain-bytes'));
        assert.ok(lx >= 0 && ly >= 0 && lx + lw <= aw && ly + lh <= ah, `the label ${[lx, ly, lw, lh]} lies in the plot area ${[aw, ah]}`);
        const peakX = (Number(peak.t - lo) / 1e6 / asideMs) * aw;
        assert.ok(Math.abs(lx - (peakX + 4)) < 1.5 || Math.abs(lx + lw - (peakX - 4)) < 1.5, `the label ${lx}–${lx + lw} stands beside the peak line at ${peakX}`);
        const msAt = (x) => (x / aw) * asideMs;
        const app = records.filter((r) => r.Component.trim() === 'APP' && r['Total Reserved(MB)'].trim()).map((r) => ({ t: Number(ns(r['Timestamp(us)']) - lo) / 1e6, y: ah - ((Number(r['Total Reserved(MB)']) * 1048576) / yTop) * ah })).sort((a, b) => a.t - b.t);
        assert.ok(app.length > 0, 'the file has an APP line');
        // The step line's rows under the label: the value in force at its left edge, and each change under it.
        const under = app.filter((r, i) => (r.t >= msAt(lx) && r.t <= msAt(lx + lw)) || (r.t < msAt(lx) && (i + 1 === app.length || app[i + 1].t >= msAt(lx))));
        for (const r of under) assert.ok(r.y < ly || r.y > ly + lh, `the APP line at y ${r.y.toFixed(1)} crosses the label ${ly}–${ly + lh}`);
        {
          await aside.scrollIntoViewIfNeeded();
          await screenshot(page, `records-aside-${size.width}-${colorScheme}`);
          await page.locator('#ascend-memory').screenshot({ path: path.join(SHOTS, `records-aside-view-${size.width}-${colorScheme}.png`) });
        }
        assert.deepEqual(b.consoleErrors, []);
      } finally {
        await b.close();
      }
    }
  }
});

test('the records chart stays hidden when the files overlap', async () => {
  const { browser: b, page } = await openSample(server, filesUnder(RUN), { view: 'ascend' });
  try {
    assert.equal(await page.locator('[data-testid="records-aside"]').isVisible(), false);
    assert.equal(await page.locator('#ascend-live [data-testid="group-choice"]').isVisible(), false, 'no choice with call stacks');
    // With call stacks the help lines say the groups are frames of the user's code.
    for (const id of ['live-help', 'unreleased-help']) assert.match(await page.textContent(`[data-testid="${id}"]`), /grouped by the first frame in your code/);
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});

/** `[2^k, 2^(k+1) - 1]` holding `n` bytes, by doubling. */
function classOf(n) {
  if (n === 0) return [0, 0];
  let lo = 1;
  while (lo * 2 <= n) lo *= 2;
  return [lo, lo * 2 - 1];
}

test('without call stacks the groups can be size classes, and a class filters the table', async () => {
  const dir = path.join(tmp, 'no-trace', 'rank0_ascend_pt');
  mkdirSync(path.join(dir, 'ASCEND_PROFILER_OUTPUT'), { recursive: true });
  for (const n of ['operator_memory.csv', 'memory_record.csv', 'npu_module_mem.csv']) cpSync(path.join(RUN, 'ASCEND_PROFILER_OUTPUT', n), path.join(dir, 'ASCEND_PROFILER_OUTPUT', n));
  for (const n of ['profiler_info_0.json', 'profiler_metadata.json']) cpSync(path.join(RUN, n), path.join(dir, n));
  // Never released in the capture, by size class: rows without a release time.
  const want = new Map();
  for (const r of csv(path.join(dir, 'ASCEND_PROFILER_OUTPUT', 'operator_memory.csv'))) {
    if (r['Release Time(us)'].trim()) continue;
    const bytes = Math.floor(Number(r['Size(KB)']) * 1024);
    const key = classOf(bytes).join('-');
    const g = want.get(key) || { bytes: 0, count: 0 };
    g.bytes += bytes;
    g.count += 1;
    want.set(key, g);
  }
  assert.ok(want.size > 1, 'several classes');
  for (const size of SIZES) {
    for (const colorScheme of ['light', 'dark']) {
      const { browser: b, page } = await openSample(server, filesUnder(path.join(tmp, 'no-trace')), { viewport: size, colorScheme, view: 'ascend' });
      try {
        const choice = page.locator('#ascend-unreleased [data-testid="group-choice"]');
        assert.equal(await choice.isVisible(), true);
        assert.equal(await page.getAttribute('#ascend-unreleased [data-testid="unreleased-groups"]', 'data-by'), 'op_name');
        // The help lines say what the groups are: operator names, then size classes.
        const helps = () => Promise.all(['live-help', 'unreleased-help'].map((id) => page.textContent(`[data-testid="${id}"]`)));
        for (const h of await helps()) assert.match(h, /grouped by the name of the operator/);
        await choice.locator('button[data-by="size_class"]').click();
        await page.waitForFunction(() => {
          const box = document.querySelector('#ascend-unreleased [data-testid="unreleased-groups"]');
          return box.dataset.state === 'ready' && box.dataset.by === 'size_class';
        }, null, { timeout: 30000 });
        assert.match(await page.locator('#ascend-unreleased [data-testid="group-note"]').textContent(), /size classes/);
        assert.equal(await choice.locator('button[data-by="size_class"]').getAttribute('aria-pressed'), 'true');
        // Both views follow the one choice, and the hash keeps it.
        await page.waitForFunction(() => document.querySelector('#ascend-live [data-testid="live-groups"]').dataset.by === 'size_class', null, { timeout: 30000 });
        assert.match(await page.evaluate(() => location.hash), /gb=size/);
        for (const h of await helps()) {
          assert.match(h, /grouped by size class/);
          assert.doesNotMatch(h, /first frame|operator/);
        }
        const more = page.locator('#ascend-unreleased [data-testid="show-all-groups"]');
        if (await more.count()) await more.click();
        const got = await page.$$eval('[data-testid="unreleased-group"]', (rows) => rows.map((r) => ({ label: r.querySelector('.group-frame').dataset.frame, bytes: Number(r.dataset.bytes), count: Number(r.dataset.count) })));
        assert.equal(got.length, want.size);
        assert.deepEqual(got.map((g) => g.bytes).sort((x, y) => x - y), [...want.values()].map((g) => g.bytes).sort((x, y) => x - y));
        assert.deepEqual(got.map((g) => g.count).sort((x, y) => x - y), [...want.values()].map((g) => g.count).sort((x, y) => x - y));
        assert.ok(got.every((g) => / – /.test(g.label) || g.label === '0 B'), JSON.stringify(got.map((g) => g.label)));
        // A class filters the table to its rows (by its size range).
        const first = got[0];
        await page.locator('[data-testid="unreleased-group"]').first().click();
        await page.waitForFunction((n) => {
          const t = document.querySelector('[data-testid="ascend-table"]');
          return t.dataset.state === 'ready' && t.dataset.total === String(n);
        }, first.count, { timeout: 20000 });
        await page.locator('#ascend-unreleased').scrollIntoViewIfNeeded();
        await screenshot(page, `size-classes-${size.width}-${colorScheme}`);
        await page.locator('#ascend-unreleased').screenshot({ path: path.join(SHOTS, `size-classes-view-${size.width}-${colorScheme}.png`) });
        assert.deepEqual(b.consoleErrors, []);
      } finally {
        await b.close();
      }
    }
  }
});
