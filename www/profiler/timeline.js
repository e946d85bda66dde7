// View 3, the allocation timeline: every allocation a bar from allocation to release (unreleased
// ones run to the capture end and are marked), height = size, placed by Rust so that blocks
// alive at the same time never overlap. Rust returns only what the viewport shows — bars of at
// least 1.5 px one by one, smaller ones merged into pixel runs — so hundreds of thousands of
// allocations stay smooth. Hover names a bar, a click selects it everywhere.
import { el } from '../ui/dom.js';
import { Plot } from '../ui/plot.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { ms, duration, absolute, colors, latest, section, rankLabel, allocatorName } from './common.js';
import { defaultView } from './memory-chart.js';

const MERGED = 0xffffffff;

export function timeline({ client, store, ranks, report, show }) {
  const caption = el('div', { class: 'chart-caption muted' });
  const legend = el('div', { class: 'legend' });
  const { node, body, titleNode } = section(3, 'timeline', 'Allocation timeline', {
    help: 'Each bar is one allocation, from allocation to release; height is its size. Wheel zooms time (Shift+wheel: bytes), drag pans, shift-drag selects a window, click selects an allocation.',
  });
  body.append(caption, legend);
  let info = null; // { height, end, count }
  let data = null; // { req: view+size, lod }
  let selected = null; // [x0, x1, y0, y1]
  let applying = false;
  let lastPointer = null;
  let clicks = 0;
  const rowCache = new Map();

  const plot = new Plot(body, {
    xKind: 'ms',
    yKind: 'bytes',
    zoomY: true,
    label: 'Allocation timeline of the selected rank',
    height: 320,
    brush: true,
    onView: (v) => {
      requestRects();
      // Before the layout arrives the plot's domain is a placeholder: not a view to share.
      if (!applying && info) store.set({ view: { x0: v.x0 * 1e6, x1: v.x1 * 1e6 } });
    },
    onBrush: (range) => store.set({ window: range ? [Math.round(range[0] * 1e6), Math.round(range[1] * 1e6)] : null, group: null }),
    onHover: (x, y, ev) => {
      lastPointer = ev;
      hover({ rank: store.get().rank, x: x * 1e6, y, at: { x, y } });
    },
    onLeave: () => {
      lastPointer = null;
      hideTooltip();
    },
    // The hit comes from the worker: it selects only if the user picked no allocation and no
    // rank meanwhile (ui/store.js `ask`), else a late answer would move the user's pick.
    onClick: (x, y) => click({ rank: store.get().rank, x: x * 1e6, y, current: store.ask(['rank', 'row']) }),
    draw: (g, p) => draw(g, p),
  });
  plot.canvas.dataset.testid = 'timeline-canvas';

  const fetchRects = latest(
    (a) => client.call('ascend.timeline', a).then((lod) => ({ req: a, lod })),
    (result) => {
      data = result;
      // The rank whose allocations are drawn (hook for the tests and the bench).
      plot.canvas.dataset.rank = String(result.req.rank);
      const { lod } = result;
      caption.textContent = `${plural(info ? info.count : 0, 'allocation')} · ${int(lod.visible)} in view: ${int(lod.individual)} drawn one by one, ${int(lod.merged)} merged into pixel runs (too thin to see one by one)`;
      plot.redraw();
    },
    (err) => {
      caption.textContent = `could not draw the timeline: ${err.message}`;
    },
  );

  function requestRects() {
    if (!info) return;
    const v = plot.view;
    fetchRects({
      rank: store.get().rank,
      x0: v.x0 * 1e6,
      x1: v.x1 * 1e6,
      y0: v.y0,
      y1: v.y1,
      width: Math.max(1, Math.round(plot.width)),
      height: Math.max(1, Math.round(plot.height)),
      maxRects: 20000,
    });
  }

  /** The allocation under a point, with its row (cached): the answer to a hover or a click. */
  async function fetchHit(a) {
    const id = await client.call('ascend.hit', { rank: a.rank, x: a.x, y: a.y });
    let row = null;
    if (id >= 0) {
      const key = `${a.rank}:${id}`;
      row = rowCache.get(key);
      if (!row) {
        row = await client.call('ascend.row', { rank: a.rank, row: id });
        if (rowCache.size > 500) rowCache.clear();
        rowCache.set(key, row);
      }
    }
    return { id, row };
  }

  // Clicks and hovers queue apart: a newer request replaces one waiting in its own queue only, so
  // a pointer that moves while a click's answer is on its way does not lose the click.
  const click = latest(fetchHit, ({ id }, a) => {
    // What the last click hit (an allocation's row, -1 for none) and how many clicks were
    // answered: the answer comes from the worker after the click, so the tests wait for it here
    // instead of for a time.
    plot.canvas.dataset.clicks = String(++clicks);
    plot.canvas.dataset.clickRow = String(id);
    if (id >= 0 && a.current()) {
      store.set({ row: id });
      // The answer (the row's call stack) is a view below: it comes into view.
      if (show) show('stack');
    }
  });

  const hover = latest(fetchHit, ({ id, row }, a) => {
    // An answer for a point the pointer has left (or left the chart) shows nothing (ui/plot.js);
    // while the point is hovered, onHover has kept the pointer's event for the tooltip's place.
    if (!plot.hovering(a.at.x, a.at.y)) return;
    if (id < 0 || !row) {
      hideTooltip();
      return;
    }
    const lines = [
      row.name || '(no name)',
      ['size', `${bytes(row.size)} (${exactBytes(row.size)})`],
      ['allocated', `${ms(row.alloc)} since the capture start`],
      ['', absolute(ranks[a.rank].origin_ns, row.alloc)],
      ['released', row.release === null ? 'not released in the capture' : `${ms(row.release)} (after ${duration(row.duration ?? row.release - row.alloc)})`],
      ['top user frame', row.top_frame || '(no stack)'],
      ['stack', row.stack_source],
      'click to select',
    ];
    showTooltip(lastPointer.clientX, lastPointer.clientY, lines);
  });

  /** What the selection shows before the timeline is laid out: its title. */
  function preview(s) {
    titleNode.textContent = `Allocation timeline — ${rankLabel(report.ranks[s.rank])}`;
  }

  async function setRank() {
    const s = store.get();
    preview(s);
    renderLegend();
    info = null;
    data = null;
    caption.textContent = 'laying out the allocations…';
    // The previous rank's bars go at once: they are not this rank's.
    plot.redraw();
    const rank = s.rank;
    const t = await client.call('ascend.timelineInfo', { rank });
    if (store.get().rank !== rank) return;
    info = t;
    const end = Math.max(ranks[rank].end, t.end, 1) / 1e6;
    applying = true;
    const x = s.view ? { x0: s.view.x0 / 1e6, x1: s.view.x1 / 1e6 } : defaultView(ranks[rank]);
    const view = { ...x, y0: 0, y1: Math.max(1, t.height) };
    plot.setDomain({ x0: 0, x1: end, y0: 0, y1: Math.max(1, t.height) }, { view });
    plot.brushRange = s.window ? [s.window[0] / 1e6, s.window[1] / 1e6] : null;
    applying = false;
    if (!t.count) caption.textContent = 'This rank has no allocation rows with a time (no operator_memory.csv, OP_MEMORY or NPU_OP_MEM table?).';
    await updateRow(store.get());
  }

  function renderLegend() {
    const c = colors();
    const sw = (color, text, cls) => {
      const s = el('span', { class: `swatch ${cls || ''}` });
      s.style.background = color;
      return el('span', {}, s, text);
    };
    legend.replaceChildren(
      sw(c.pta, `${allocatorName(report.ranks[store.get().rank])} allocation (released)`),
      sw(c.geBar, 'cann:: (GE) allocation'),
      sw(c.unreleased, 'not released in the capture: runs to the end, marked ▶'),
      sw(c.select, 'selected'),
    );
  }

  function draw(g, p) {
    if (!data) return;
    const c = colors();
    const fill = [c.pta, c.geBar, c.unreleased];
    const { req, lod } = data;
    // Rectangles arrive in pixels of the requested view; map them to the current one.
    const v = p.view;
    const sx = ((req.x1 - req.x0) / 1e6 / (v.x1 - v.x0)) * (p.width / req.width);
    const ox = p.px(req.x0 / 1e6);
    const sy = ((req.y1 - req.y0) / (v.y1 - v.y0)) * (p.height / req.height);
    const oy = p.py(req.y1);
    const endPx = info ? p.px(info.end / 1e6) : Infinity;
    for (let i = 0; i < lod.x.length; i++) {
      const cls = lod.cls[i];
      g.fillStyle = fill[cls] || c.pta;
      const x = ox + lod.x[i] * sx;
      const y = oy + lod.y[i] * sy;
      const w = Math.max(1, lod.w[i] * sx);
      const h = Math.max(1, lod.h[i] * sy);
      if (lod.id[i] !== MERGED) {
        g.globalAlpha = 0.85;
        g.fillRect(x, y, w, h);
        g.globalAlpha = 1;
        if (w > 3 && h > 3) {
          g.strokeStyle = c.panel;
          g.lineWidth = 0.5;
          g.strokeRect(x + 0.25, y + 0.25, w - 0.5, h - 0.5);
        }
        // Unreleased bars end at the capture end: mark that end.
        if (cls === 2 && Math.abs(x + w - endPx) < 2 && h >= 4) {
          // Dark on the unreleased colour in both schemes.
          g.fillStyle = 'rgba(0, 0, 0, 0.7)';
          g.beginPath();
          const my = y + h / 2;
          const r = Math.min(5, h / 2);
          g.moveTo(x + w - r - 1, my - r);
          g.lineTo(x + w - 1, my);
          g.lineTo(x + w - r - 1, my + r);
          g.closePath();
          g.fill();
        }
      } else {
        g.globalAlpha = 0.6;
        g.fillRect(x, y, w, h);
        g.globalAlpha = 1;
      }
    }
    if (selected) {
      const [x0, x1, y0, y1] = selected;
      const a = p.px(x0 / 1e6);
      const b = p.px(x1 / 1e6);
      const top = p.py(y1);
      const bottom = p.py(y0);
      g.strokeStyle = c.select;
      g.lineWidth = 2;
      g.strokeRect(a - 1, top - 1, Math.max(2, b - a) + 2, Math.max(2, bottom - top) + 2);
      // A faint crosshair so that even a sub-pixel block can be found.
      g.globalAlpha = 0.35;
      g.lineWidth = 1;
      g.setLineDash([4, 4]);
      g.beginPath();
      g.moveTo(a, 0);
      g.lineTo(a, p.height);
      g.moveTo(0, (top + bottom) / 2);
      g.lineTo(p.width, (top + bottom) / 2);
      g.stroke();
      g.setLineDash([]);
      g.globalAlpha = 1;
    }
    const s = store.get();
    if (s.at !== null || ranks[s.rank].peak !== null) {
      const t = s.at ?? ranks[s.rank].peak;
      const x = Math.round(p.px(t / 1e6)) + 0.5;
      g.strokeStyle = s.at === null ? c.peak : c.at;
      g.setLineDash([3, 3]);
      g.lineWidth = 1;
      g.beginPath();
      g.moveTo(x, 0);
      g.lineTo(x, p.height);
      g.stroke();
      g.setLineDash([]);
    }
  }

  async function updateRow(s) {
    selected = null;
    if (s.row !== null) {
      try {
        const r = await client.call('ascend.rect', { rank: s.rank, row: s.row });
        if (store.get().row === s.row && store.get().rank === s.rank && r) selected = Array.from(r);
      } catch {
        selected = null;
      }
    }
    plot.redraw();
  }

  function update(s, changed) {
    if (changed.has('rank')) {
      setRank();
      return;
    }
    if (changed.has('view') && info) {
      const v = plot.view;
      const want = s.view ? { x0: s.view.x0 / 1e6, x1: s.view.x1 / 1e6 } : defaultView(ranks[s.rank]);
      if (Math.abs(v.x0 - want.x0) * 1e6 > 1 || Math.abs(v.x1 - want.x1) * 1e6 > 1) {
        applying = true;
        plot.setView(want);
        applying = false;
      }
    }
    if (changed.has('window')) {
      plot.brushRange = s.window ? [s.window[0] / 1e6, s.window[1] / 1e6] : null;
      plot.redraw();
    }
    if (changed.has('at')) plot.redraw();
    if (changed.has('row')) updateRow(s);
  }

  const ready = setRank();
  return { node, update, preview, ready, canvas: () => plot.canvas, plot, focus: () => plot.canvas.focus(), recolor: renderLegend };
}
