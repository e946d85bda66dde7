// The memory records of a rank drawn on their own time range, under the memory chart: when
// memory_record.csv (or the db's MEMORY_RECORD table) covers a time range that does not overlap the
// allocations' (files copied together from different runs), the core sets the records aside and the
// main chart shows the allocations; here the records keep their own axis, from their first record,
// with their own peak. One axis for both would span the gap between the two runs.
import { el } from '../ui/dom.js';
import { Plot, hoverLine } from '../ui/plot.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { bytes, exactBytes } from '../format.js';
import { ms, absolute, colors, latest } from './common.js';
import { drawEnvelope, vline } from './curve-draw.js';

/**
 * The chart of the records set aside, hidden for a rank without them. `seriesFor(info, colors)`
 * names the curves (the memory chart's, so both charts use the same words and colours).
 */
export function recordsAside({ client, ranks, seriesFor }) {
  const title = el('div', { class: 'records-aside-title', 'data-testid': 'records-aside-title' });
  const caption = el('div', { class: 'chart-caption muted', 'data-testid': 'records-aside-caption' });
  const legend = el('div', { class: 'legend' });
  const node = el('div', { class: 'records-aside', 'data-testid': 'records-aside', hidden: true }, title, caption, legend);
  let rank = -1;
  let aside = null;
  let data = null; // { window: {x0, x1} ns, series, rank }
  let hoverX = null;

  const plot = new Plot(node, {
    xKind: 'ms',
    yKind: 'bytes',
    label: 'Memory records on their own time range',
    height: 180,
    onView: () => requestNow(),
    onHover: (x, y, ev) => hover(x, ev),
    onLeave: () => {
      hoverX = null;
      hideTooltip();
      plot.redraw();
    },
    draw: (g, p) => draw(g, p),
  });
  plot.canvas.dataset.testid = 'records-aside-canvas';

  const series = () => (aside ? seriesFor(aside, colors()) : []);

  const request = latest(
    async (a) => ({ window: { x0: a.x0, x1: a.x1 }, series: await client.call('ascend.curves', a), rank: a.rank }),
    (result) => {
      data = result;
      node.dataset.state = 'ready';
      // The highest allocated value drawn, for the tests: the records' own peak when all is shown.
      const fw = result.series.find((s) => s.metric === 'allocated' && (s.component === 'aside:PTA' || s.component === 'aside:MindSpore'));
      node.dataset.drawnMax = fw ? String(Math.max(0, ...Array.from(fw.max).filter((v, i) => fw.defined[i]))) : '';
      plot.redraw();
    },
    (err) => {
      node.dataset.state = 'error';
      caption.textContent = `could not draw the memory records: ${err.message}`;
    },
  );

  function requestNow() {
    if (!aside) return;
    node.dataset.state = 'loading';
    request({
      rank,
      x0: plot.view.x0 * 1e6,
      x1: plot.view.x1 * 1e6,
      columns: Math.max(1, Math.round(plot.width)),
      spec: series().map((x) => `aside:${x.component}:${x.metric}`).join(','),
    });
  }

  /** Shows rank `r`'s records set aside, or hides the chart when it has none. */
  function setRank(r) {
    rank = r;
    aside = ranks[r] ? ranks[r].records_aside : null;
    data = null;
    node.hidden = !aside;
    if (!aside) return;
    const file = aside.file.split('/').pop();
    title.textContent = `${file} on its own time range`;
    caption.textContent = `${file} does not overlap the allocations in time (copied from a different run?), so it has its own axis here, from its first record: `
      + (aside.peak !== null ? `its peak allocated is ${bytes(aside.peak_bytes)} at ${ms(aside.peak)} after its first record.` : 'it holds no allocator curve.');
    legend.replaceChildren(...series().map((x) => {
      const sw = el('span', { class: 'swatch' });
      sw.style.background = x.color;
      return el('span', {}, sw, x.label);
    }), el('span', {}, el('span', { class: 'swatch peak-swatch' }), 'its peak'));
    let yMax = 0;
    for (const comp of aside.components) for (const [, v] of comp.metrics) yMax = Math.max(yMax, v);
    const end = Math.max(aside.end, 1) / 1e6;
    const top = Math.max(1, yMax * 1.06);
    plot.setDomain({ x0: 0, x1: end, y0: 0, y1: top });
    plot.canvas.dataset.domainMs = String(end);
    plot.canvas.dataset.domainBytes = String(top);
    node.dataset.peakMs = aside.peak !== null ? String(aside.peak / 1e6) : '';
    node.dataset.peakBytes = String(aside.peak_bytes);
  }

  function draw(g, p) {
    if (!aside) return;
    const c = colors();
    const drawn = [];
    if (data && data.rank === rank) {
      const all = series();
      [...data.series].reverse().forEach((sd) => {
        const def = all.find((x) => `aside:${x.component}` === sd.component && x.metric === sd.metric);
        if (!def) return;
        drawEnvelope(g, p, data.window, sd, def.color, def.dash);
        drawn.push({ win: data.window, s: sd });
      });
    }
    if (aside.peak !== null) {
      // The label keeps off the curves: the APP line runs flat near the top, where it would sit.
      const box = vline(g, p, aside.peak, c.peak, [3, 3], `peak ${bytes(aside.peak_bytes)}`, drawn);
      // Where it went (plot-area css px), for the tests: after the curves arrived, the final place.
      node.dataset.peakLabel = box && drawn.length ? [box.x, box.y, box.width, box.height].map((v) => v.toFixed(1)).join(',') : '';
      g.fillStyle = c.peak;
      g.beginPath();
      g.arc(p.px(aside.peak / 1e6), p.py(aside.peak_bytes), 4, 0, Math.PI * 2);
      g.fill();
    }
    if (hoverX !== null) hoverLine(g, p, hoverX, c.muted);
  }

  function hover(x, ev) {
    hoverX = x;
    plot.redraw();
    const t = x * 1e6;
    const lines = [[ms(t), 'since the first record'], absolute(aside.origin_ns, t)];
    if (data && data.rank === rank) {
      const all = series();
      for (const sd of data.series) {
        const def = all.find((d) => `aside:${d.component}` === sd.component && d.metric === sd.metric);
        const n = sd.min.length;
        const k = Math.floor(((t - data.window.x0) / (data.window.x1 - data.window.x0)) * n);
        if (!def || k < 0 || k >= n || !sd.defined[k]) continue;
        lines.push([def.label, `${bytes(sd.max[k])} (${exactBytes(sd.max[k])})`]);
      }
    }
    showTooltip(ev.clientX, ev.clientY, lines);
  }

  return { node, setRank, redraw: () => plot.redraw(), destroy: () => plot.destroy() };
}
