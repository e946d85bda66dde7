// The rank table's column fit on a job summary of 4,096 ranks with figures of every size
// (tests/browser/varied-summary.mjs): each fitted column is as wide as the widest text any rank
// shows in it, measured the way the table counts a text (its characters other than digits as one
// string, each digit as wide as the widest digit: the figures are set in tabular digits). The
// reference is made here, independently of the table's own fit: every row of the table is
// scrolled into view, the text of each of its cells read from the page, and measured on a canvas
// in the font the page's style gives that cell. No cell's text is cut in any row (its scroll width
// within its client width).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { openBrowser, startServer, engineThreads, assertClean, CLI, dropFiles, filesUnder, settled } from './harness.mjs';
import { variedSummary } from './varied-summary.mjs';

const RANKS = 4096;
let server;
let tmp;

before(async () => {
  server = await startServer({ isolate: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'memlens-rank-table-'));
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const TABLE = '[data-testid="jobsummary"] [data-testid="ascend-rank-table"]';

test('4,096 ranks of varied figures: each column as wide as its widest text over every row, and no cell cut', async () => {
  const { text, ranks } = variedSummary(RANKS);
  const file = path.join(tmp, 'job.memlens.json');
  writeFileSync(file, text);
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    // The file input, as "Open files…" does (a base64 drop of megabytes is slow to decode).
    await page.setInputFiles('[data-testid="file-input"]', file);
    await page.waitForFunction(() => ['ready', 'error', 'empty'].includes(document.querySelector('[data-testid="jobsummary"]')?.dataset.state), null, { timeout: 120000 });
    assert.equal(await page.getAttribute('[data-testid="jobsummary"]', 'data-state'), 'ready');
    assert.equal(Number(await page.getAttribute(TABLE, 'data-total')), ranks.length);
    const fitted = JSON.parse(await page.getAttribute(TABLE, 'data-text-widths'));

    // Every row, read from the page: the table shows only the rows in view, so its viewport is
    // made tall and scrolled through, a screenful at a time.
    const seen = await page.$eval(TABLE, async (table) => {
      const viewport = table.querySelector('.vt-viewport');
      viewport.style.height = '4000px';
      viewport.style.maxHeight = 'none';
      const frame = () => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
      await frame();
      const heads = [...table.querySelectorAll('.vt-head .vt-cell')].map((c) => c.textContent.replace(/ [▲▼]$/, ''));
      const rows = new Map();
      const cut = [];
      // The text a cell shows and the element whose font sets it (the rank's number and its
      // badge; the counts under the coverage bar, or the file of a rank left out).
      const read = (cell, k) => {
        if (heads[k] === 'Rank') {
          const badge = cell.querySelector('.source-badge');
          return { text: `${cell.firstChild.textContent} ${badge ? badge.textContent : ''}MM`, font: cell };
        }
        const small = cell.querySelector('.coverage-text, .too-large-file');
        return small ? { text: small.textContent, font: small } : { text: cell.textContent, font: cell };
      };
      const fontOf = (node) => {
        const s = getComputedStyle(node);
        return `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
      };
      for (let top = 0, last = -1; ; top += 3000) {
        viewport.scrollTop = top;
        await frame();
        // Rows whose block of data is still on its way show a placeholder until it comes.
        for (let n = 0; n < 100 && viewport.querySelector('.vt-row:not([data-testid])'); n++) await frame();
        for (const row of viewport.querySelectorAll('[data-testid="rank-row"]')) {
          const i = Number(row.dataset.rankIndex);
          if (rows.has(i)) continue;
          const cells = [...row.querySelectorAll('.vt-cell')];
          rows.set(i, cells.map((c, k) => {
            const { text, font } = read(c, k);
            return { text, font: fontOf(font) };
          }));
          // The role may be cut (its whole name is in its title); no other cell may.
          cells.forEach((c, k) => {
            if (k > 0 && c.scrollWidth > c.clientWidth) cut.push(`${heads[k]} of rank index ${i}: "${c.textContent}" (${c.scrollWidth} > ${c.clientWidth} px)`);
          });
        }
        if (viewport.scrollTop === last) break;
        last = viewport.scrollTop;
      }
      // The reference: each row's text measured as the table counts it, in its cell's font.
      const g = document.createElement('canvas').getContext('2d');
      const digitWidth = new Map();
      const measure = (t, font) => {
        g.font = font;
        if (!digitWidth.has(font)) digitWidth.set(font, Math.max(...[...'0123456789'].map((d) => g.measureText(d).width)));
        const skeleton = t.replace(/[0-9]/g, '');
        return g.measureText(skeleton).width + (t.length - skeleton.length) * digitWidth.get(font);
      };
      const widest = {};
      const longest = {};
      for (const cells of rows.values()) {
        cells.forEach(({ text, font }, k) => {
          const w = measure(text, font);
          const h = heads[k];
          if (!widest[h] || w > widest[h].w) widest[h] = { w, text };
          longest[h] = Math.max(longest[h] || 0, text.length);
        });
      }
      return { count: rows.size, cut, heads, widest, longest };
    });
    assert.equal(seen.count, ranks.length, 'every row was read');
    assert.deepEqual(seen.cut, []);
    // The fitted columns, by key, and their headers.
    const head = { rank: 'Rank', step: 'Step', rows: 'Rows', stacks: 'Call stacks', peak: 'Peak allocated', reserved: 'Peak reserved', at: 'Peak at', fragmentation: 'Reserved − allocated', unreleased: 'Unreleased' };
    assert.deepEqual(Object.keys(fitted).sort(), Object.keys(head).sort());
    const expected = Object.fromEntries(Object.entries(head).map(([key, h]) => [key, Math.ceil(seen.widest[h].w)]));
    assert.deepEqual(fitted, expected, JSON.stringify(Object.fromEntries(Object.entries(head).map(([k, h]) => [k, seen.widest[h].text]))));
    // The figures do vary: the widest texts are long ones ("…,…,… direct · …", TiB, hours in ms).
    assert.ok(seen.widest['Call stacks'].text.length >= 50, seen.widest['Call stacks'].text);
    assert.ok(seen.longest.Rows >= 9 && seen.longest['Peak at'] >= 14, JSON.stringify(seen.longest));
    // Its cost, for the record (the bench compares it with the page before).
    const fit = await page.evaluate(() => performance.getEntriesByName('rank-table-fit').map((e) => e.duration));
    assert.ok(fit.length >= 1);
    console.log(`rank table fit, ${ranks.length} ranks: ${fit.map((d) => d.toFixed(1)).join(', ')} ms`);
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});

/** `n` with en-US digit groups, written here without the page's formatter ("1143" → "1,143"). */
const grouped = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

test('a generated job of 3,000 rows a rank: the call-stack counts under the bar and in its title are grouped, equal to the CLI\'s', async () => {
  const job = path.join(tmp, 'stacks-job');
  execFileSync(CLI, ['generate', 'profiler', '--out', job, '--roles', '1', '--ranks', '2', '--trace-mb', '0.5', '--rows', '3000', '--seed', '5'], { stdio: 'ignore' });
  const json = JSON.parse(execFileSync(CLI, ['profiler', '--json', job], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  assert.equal(json.ranks.length, 2);
  // The case this is about: a part of at least 1,000 rows, whose count takes a separator.
  assert.ok(json.ranks.every((r) => r.stacks.direct >= 1000), JSON.stringify(json.ranks.map((r) => r.stacks)));
  const b = await openBrowser({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await b.page();
    await page.goto(server.url);
    await engineThreads(page);
    await dropFiles(page, filesUnder(job));
    assert.equal(await settled(page, 120000), 'ready');
    const OVERVIEW = '[data-testid="ascend"] [data-testid="ascend-rank-table"]';
    await page.waitForFunction((sel) => document.querySelectorAll(`${sel} [data-testid="rank-row"]`).length === 2, OVERVIEW, { timeout: 120000 });
    const rows = await page.$$eval(`${OVERVIEW} [data-testid="rank-row"]`, (rs) => rs.map((r) => {
      const cells = [...r.querySelectorAll('.vt-cell')];
      const stacks = cells.find((c) => c.querySelector('.coverage-text'));
      return { rank: r.dataset.rank, role: r.dataset.role, text: stacks.querySelector('.coverage-text').textContent, title: stacks.title, cells: cells.map((c) => c.textContent) };
    }));
    assert.equal(rows.length, 2);
    for (const row of rows) {
      const r = json.ranks.find((x) => String(x.rank) === row.rank && x.role === row.role);
      assert.ok(r, `rank ${row.rank} of ${row.role} is in the CLI's report`);
      const st = r.stacks;
      assert.equal(row.text, `${grouped(st.direct)} direct · ${grouped(st.via_forward)} via fwd · ${grouped(st.approximate)} approx · ${grouped(st.none)} none`);
      assert.equal(row.title, `direct ${grouped(st.direct)}, via forward ${grouped(st.via_forward)}, approximate ${grouped(st.approximate)}, none ${grouped(st.none)} (of which ${grouped(r.rows_ge)} cann:: rows have no Python stack by nature)`);
      // Grouped as the Rows column beside it writes its count.
      assert.ok(row.cells.includes(grouped(r.rows)), row.cells.join(' | '));
    }
    assertClean(b, server.origin);
  } finally {
    await b.close();
  }
});
