// A click inside a chart whose answer is a panel further down brings that panel into view, at
// 1440×900 and 1024×700: a time picked on the memory chart fills "Live at …" (view 6), an
// allocation picked on the timeline fills the call stack (view 5). Geometric: before the click the
// panel's head is outside the viewport (else the test would show nothing); after it, inside,
// below the sticky bars. The picked row is checked against the CLI's row count of the rank.
// A time picked just beside the peak draws the live-set line next to the peak line: their labels
// (boxes the chart states on its canvas) must not meet.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { root, CLI, SHOTS, openSample, startServer, filesUnder, foreignRequests, boxOf, inViewport } from './harness.mjs';

const TEXT = path.join(root, 'fixtures', 'torch_npu', 'msinsight-level0', 'text');
const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 700 },
];

let server;
let cli;

before(async () => {
  server = await startServer({ isolate: true });
  cli = JSON.parse(execFileSync(CLI, ['profiler', TEXT, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }));
});

after(async () => {
  await server.close();
});

/** Whether the box of `selector` lies inside the viewport, below the sticky bars. */
const inside = async (page, selector) => inViewport(page, await boxOf(page, selector));

/** Scrolls the window so that the top of `selector` sits just below the sticky bars. */
async function scrollToTop(page, selector) {
  await page.evaluate((sel) => {
    const n = document.querySelector(sel);
    window.scrollBy({ top: n.getBoundingClientRect().top - 120, behavior: 'instant' });
  }, selector);
}

for (const size of SIZES) {
  test(`profiler at ${size.width}×${size.height}: chart clicks bring their answer into view`, async () => {
    const { browser: b, page } = await openSample(server, filesUnder(TEXT), { viewport: size, view: 'ascend' });
    try {
      await page.waitForFunction(() => document.querySelector('[data-testid="live-groups"]')?.dataset.state === 'ready');

      // The memory chart: a time picked in its middle; "Live at …" (below the fold) follows.
      await scrollToTop(page, '#ascend-memory');
      assert.equal(await inside(page, '#ascend-live .panel-head'), false, 'the live-set head starts out of view');
      const before = await page.getAttribute('[data-testid="live-groups"]', 'data-time');
      const m = await page.locator('[data-testid="memory-canvas"]').boundingBox();
      assert.ok(m.y + 100 < size.height, 'the memory chart is on screen');
      await page.mouse.click(m.x + 72 + (m.width - 86) * 0.45, m.y + 100);
      await page.waitForFunction((t) => {
        const box = document.querySelector('[data-testid="live-groups"]');
        return box.dataset.state === 'ready' && box.dataset.time !== t;
      }, before);
      // The panel is brought into view in the same task that marks its groups ready (at their
      // size): no wait beyond that one.
      assert.ok(await inside(page, '#ascend-live .panel-head'), 'the live-set head is in view after the chart click');
      assert.match(await page.textContent('#ascend-live .panel-head'), /^.*Live at/);

      // The timeline: an allocation bar picked; its call stack (below the fold) follows.
      await scrollToTop(page, '#ascend-timeline');
      assert.equal(await inside(page, '#ascend-stack .panel-head'), false, 'the call-stack head starts out of view');
      const t = await page.locator('[data-testid="timeline-canvas"]').boundingBox();
      let row = null;
      let at = null;
      // The bars are packed from the top of the plot: the first click that lands on one selects it.
      // Each click is answered by the worker (the canvas counts the answers and says what it hit);
      // the next click waits for that answer, else it would replace a hit still on its way.
      const canvas = '[data-testid="timeline-canvas"]';
      for (const fy of [0.08, 0.15, 0.25, 0.35]) {
        for (const fx of [0.1, 0.3, 0.5, 0.7, 0.9]) {
          const y = t.y + 8 + (t.height - 40) * fy;
          if (y > size.height - 4) continue;
          const answered = Number((await page.getAttribute(canvas, 'data-clicks')) || 0);
          const x = t.x + 72 + (t.width - 86) * fx;
          await page.mouse.click(x, y);
          await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).dataset.clicks || 0) > n, [canvas, answered], { timeout: 30000 });
          const hit = await page.getAttribute(canvas, 'data-click-row');
          if (hit !== '-1') {
            // The stack view fetches the row's stack in its turn, then comes into view.
            await page.waitForFunction((id) => document.querySelector('[data-testid="ascend-stack"]').dataset.row === id, hit, { timeout: 30000 });
            row = hit;
            at = { dx: x - t.x, dy: y - t.y };
            break;
          }
          if (!(await inside(page, '#ascend-timeline'))) await scrollToTop(page, '#ascend-timeline');
        }
        if (row) break;
      }
      assert.ok(row, 'a click on the timeline selected an allocation');
      const rank = Number(await page.getAttribute('[data-testid="ascend"]', 'data-rank'));
      assert.ok(Number(row) >= 0 && Number(row) < cli.ranks[rank].rows, `row ${row} is one of the rank's ${cli.ranks[rank].rows} rows`);
      // Brought into view in the same task that filled the stack view (its data-row).
      assert.ok(await inside(page, '#ascend-stack .panel-head'), 'the call-stack head is in view after the timeline click');

      // A pointer that moves on while a click's answer is on its way does not lose the click: the
      // click, then a move elsewhere on the plot, in one task of the page (so the move certainly
      // comes before the worker's answer to the click).
      const clicked = Number(await page.getAttribute(canvas, 'data-clicks'));
      // (Placed from the canvas's box now: the stack view below has scrolled the page since.)
      await page.$eval(canvas, (c, { dx, dy }) => {
        const box = c.getBoundingClientRect();
        const [x, y] = [box.left + dx, box.top + dy];
        const at = (type, cx, cy, buttons) => c.dispatchEvent(new PointerEvent(type, { clientX: cx, clientY: cy, button: 0, buttons, pointerId: 1, pointerType: 'mouse', isPrimary: true, bubbles: true }));
        at('pointerdown', x, y, 1);
        at('pointerup', x, y, 0);
        at('pointermove', x, y + 40, 0);
      }, at);
      await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).dataset.clicks) > n, [canvas, clicked], { timeout: 10000 });
      assert.equal(await page.getAttribute(canvas, 'data-click-row'), row, 'the click answered though the pointer moved on before its answer');
      assert.deepEqual(foreignRequests(b.requests, server.origin), []);
      assert.deepEqual(b.consoleErrors, []);
    } finally {
      await b.close();
    }
  });
}

test('the live-set label keeps off the peak label when the picked time is beside the peak', async () => {
  const size = { width: 1440, height: 900 };
  const { browser: b, page } = await openSample(server, filesUnder(TEXT), { viewport: size, view: 'ascend' });
  try {
    const canvas = '[data-testid="memory-canvas"]';
    await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.peakLabel, canvas);
    await scrollToTop(page, '#ascend-memory');
    const [left, top, width, height] = (await page.getAttribute(canvas, 'data-area')).split(',').map(Number);
    const peakX = Number(await page.getAttribute(canvas, 'data-peak-x'));
    const box = (s) => {
      const [x, y, w, h] = s.split(',').map(Number);
      return { x, y, w, h };
    };
    // Right and left of the peak line, beyond the 4 px within which a click snaps to the peak:
    // both lines want their label at the top beside them.
    for (const dx of [9, -9, 30]) {
      const x = peakX + dx;
      if (x < 0 || x > width) continue;
      const m = await page.locator(canvas).boundingBox();
      await page.mouse.click(m.x + left + x, m.y + top + height * 0.6);
      await page.waitForFunction((sel) => document.querySelector(sel).dataset.liveLabel, canvas);
      await page.waitForTimeout(100);
      const peak = box(await page.getAttribute(canvas, 'data-peak-label'));
      const live = box(await page.getAttribute(canvas, 'data-live-label'));
      for (const [name, l] of [['peak', peak], ['live set', live]]) {
        assert.ok(l.x >= 0 && l.y >= 0 && l.x + l.w <= width && l.y + l.h <= height, `the ${name} label ${JSON.stringify(l)} lies in the plot area ${width}×${height}`);
      }
      const apart = live.x >= peak.x + peak.w || peak.x >= live.x + live.w || live.y >= peak.y + peak.h || peak.y >= live.y + live.h;
      assert.ok(apart, `live-set label ${JSON.stringify(live)} meets the peak label ${JSON.stringify(peak)} (line ${dx} px from the peak)`);
      await page.locator('#ascend-memory').screenshot({ path: path.join(SHOTS, `memory-labels-${dx}.png`) });
      await scrollToTop(page, '#ascend-memory');
    }
    assert.deepEqual(b.consoleErrors, []);
  } finally {
    await b.close();
  }
});
