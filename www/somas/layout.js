// Tensor layout: x = execution index, y = offset (address when a base is known); one rectangle
// per tensor from life start to life end and over its effective byte range, coloured by type,
// conflicts on top in red. The worker returns only what the viewport shows, sub-pixel tensors
// merged into pixel runs, so a million tensors pan as smoothly as ten; while a new answer is on
// its way the last one is redrawn under the new view.
import { el, cssVar } from '../ui/dom.js';
import * as hash from '../ui/hash-state.js';
import { Plot, topEdgeMarker } from '../ui/plot.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { downloadCanvas } from '../ui/download.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { section, button, latest, hex, classColors, stateLine } from './common.js';

// Individually drawn tensors per request; the rest are merged into runs.
const MAX_RECTS = 20000;

export class Layout {
  constructor(app, parent) {
    this.app = app;
    const info = app.info;
    const { section: s, body, tools } = section('layout', 'Tensor layout', {
      help: 'x = execution index, y = offset. Wheel zooms (Shift: y only, Alt: x only), drag pans, +/- and arrows on the focused chart, 0 resets, click selects a tensor, z zooms to the selection',
    });
    this.section = s;
    // In the document before any chart is made, so charts start at their real size.
    parent.append(s);
    this.base = info.base_source === 'none' ? 0 : info.base_address;
    this.sel = app.store.get();
    this.cache = new Map();
    this.frames = 0;

    const legend = el('div', { class: 'legend' });
    info.legend.forEach((name, c) => legend.append(el('span', { class: 'legend-item' }, el('span', { class: `swatch c${c}` }), name)));
    if ((info.conflict_marks || []).length) legend.append(el('span', { class: 'legend-item bad', text: '▼ ○ where each conflict starts (at any zoom)' }));
    body.append(legend);
    tools.append(
      button('Zoom to selection', () => this.zoomToSelection(), { title: 'z' }),
      button('Reset', () => this.plot && this.plot.reset(), { title: '0 on the chart, or double-click' }),
      button('PNG', () => this.plot && downloadCanvas(this.plot.canvas, 'TensorLayout.png'), { title: 'Save this chart as PNG' }),
    );
    this.status = el('div', { class: 'somas-status muted', data: { testid: 'somas-layout-status' } });
    if (!info.layout) {
      // Zoom, Reset and PNG act on the chart, the legend names its colours: without a chart they
      // are hidden, not left dead.
      tools.hidden = true;
      legend.hidden = true;
      body.append(stateLine('empty', app.summary.nodes
        ? 'No tensor of this dump occupies memory (every aligned size is 0): nothing to lay out.'
        : 'This dump lists no node and no tensor: nothing to lay out. Open the *_somas_tensor_offset_* dump of a compiled graph.'));
      return;
    }
    if (!info.placed) {
      body.append(stateLine('empty', 'Offsets are not solved in this dump (a stage before the solver): every tensor sits at offset 0. Open the *_somas_tensor_offset_* dump for the real layout.'));
    }
    const request = latest(async (v) => {
      // Asked in device pixels, so the image is drawn 1:1 until the view moves.
      const dpr = window.devicePixelRatio || 1;
      const width = Math.max(1, Math.round(this.plot.width * dpr));
      const height = Math.max(1, Math.round(this.plot.height * dpr));
      const sent = performance.now();
      const r = await app.call('rects', { x0: v.x0, x1: v.x1, y0: v.y0, y1: v.y1, width, height, maxRects: MAX_RECTS, ...palette() });
      performance.measure('somas-layout-rects', { start: sent, duration: r.ms });
      performance.measure('somas-layout-raster', { start: sent + r.ms, duration: r.rasterMs });
      const image = await createImageBitmap(new ImageData(r.rgba, width, height));
      if (this.destroyed) {
        image.close();
        return;
      }
      performance.measure('somas-layout-roundtrip', { start: sent, duration: performance.now() - sent });
      if (this.data && this.data.image) this.data.image.close();
      this.data = { view: v, width, height, image };
      this.status.textContent = `${plural(r.visible, 'tensor')} in view: ${int(r.individual)} drawn one by one, ${int(r.merged)} merged into ${int(r.runs)} pixel runs (${r.cached ? 'cached' : `${r.ms.toFixed(1)} ms in the engine`})`;
      this.plot.redraw();
    }, null, app.error);
    this.request = request;
    this.onScheme = () => {
      colorsCache = null;
      if (this.plot) request({ ...this.plot.view });
    };
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', this.onScheme);
    // A point of the chart and the tolerance around it (3 px in the view of the moment it was
    // pointed at): what the worker's hit test takes, for a hover and for a click alike.
    const near = (x, y) => {
      const p = this.plot;
      return { x, y, dx: (3 * (p.view.x1 - p.view.x0)) / p.width, dy: (3 * (p.view.y1 - p.view.y0)) / p.height };
    };
    const hit = ({ x, y, dx, dy }) => app.call('hit', { x, y, dx, dy });
    const hoverReq = latest(async (a) => {
      const t = await hit(a);
      if (!this.plot.hovering(a.x, a.y)) return;
      this.hover = t;
      // How many hovers were answered and the tensor the last one found (-1: none), for the tests.
      const d = this.plot.canvas.dataset;
      d.hovers = String(Number(d.hovers || 0) + 1);
      d.hoverTensor = t ? String(t.id) : '-1';
      this.plot.redraw();
      if (t) this.tooltip(t, a.ev);
      else hideTooltip();
    }, null, app.error);
    // A click selects the tensor under its own point, not the last hover's answer (which can lag a
    // pointer that moved). Clicks queue apart from hovers, so a pointer moving on does not replace
    // a click waiting for its answer; the answer selects only if nothing was selected since the
    // click (ui/store.js ask). The canvas counts the answered clicks and names the tensor the last
    // one hit (-1: none), for the tests to wait on.
    let clicks = 0;
    const clickReq = latest(hit, (t, a) => {
      this.plot.canvas.dataset.clicks = String(++clicks);
      this.plot.canvas.dataset.clickTensor = t ? String(t.id) : '-1';
      if (t && a.current()) app.select({ tensor: t.id });
    }, app.error);

    let hashTimer = null;
    const base = this.base;
    this.plot = new Plot(body, {
      xKind: 'index',
      yKind: 'bytes',
      zoomY: true,
      height: 420,
      margin: base ? { left: 104 } : undefined,
      yFormat: base ? (v) => hex(base + Math.round(v)) : undefined,
      label: 'Tensor layout: execution index by offset',
      onView: (v) => {
        request(v);
        // The view shown, for the tests that check what moves it.
        if (this.plot) this.plot.canvas.dataset.view = [v.x0, v.x1, v.y0, v.y1].join(',');
        clearTimeout(hashTimer);
        hashTimer = setTimeout(() => this.saveView(v), 300);
      },
      onHover: (x, y, ev) => {
        hoverReq({ ...near(x, y), ev: { clientX: ev.clientX, clientY: ev.clientY } });
      },
      onLeave: () => {
        this.hover = null;
        hideTooltip();
        this.plot.redraw();
      },
      onClick: (x, y) => clickReq({ ...near(x, y), current: app.ask() }),
      onFrame: (ms, start) => {
        if (!this.data) return;
        if (!this.frames++) performance.mark('somas-layout-first-draw');
        performance.measure('somas-layout-frame', { start, duration: ms });
        if (this.frames % 2000 === 0) performance.clearMeasures('somas-layout-frame');
      },
      draw: (ctx, plot) => this.draw(ctx, plot),
    });
    this.plot.canvas.dataset.testid = 'somas-layout';
    body.append(this.status);
    const L = info.layout;
    this.domain = { x0: 0, x1: info.max_index + 1, y0: 0, y1: Math.max(L.y1, info.reused_bytes, 1) };
    let view = null;
    if (app.restore) {
      const v = ['s.lx0', 's.lx1', 's.ly0', 's.ly1'].map((k) => Number(hash.get(k, NaN)));
      if (v.every(Number.isFinite) && v[1] > v[0] && v[3] > v[2]) view = { x0: v[0], x1: v[1], y0: v[2], y1: v[3] };
    }
    this.plot.setDomain(this.domain, { view });

    app.store.on((st, changed) => {
      this.sel = st;
      if (changed.has('tensor')) this.load('tensor', st.tensor);
      if (changed.has('pair')) {
        this.pairInfo = null;
        if (st.pair) Promise.all(st.pair.map((id) => this.info(id))).then((p) => { if (this.sel.pair === st.pair) { this.pairInfo = p; this.plot.redraw(); } }, () => {});
      }
      this.plot.redraw();
    });
  }

  saveView(v) {
    const d = this.domain;
    const full = v.x0 <= d.x0 && v.x1 >= d.x1 && v.y0 <= d.y0 && v.y1 >= d.y1;
    const r = (x) => (full ? null : +x.toPrecision(12));
    hash.update({ 's.lx0': r(v.x0), 's.lx1': r(v.x1), 's.ly0': r(v.y0), 's.ly1': r(v.y1) });
  }

  /** Tensor info by id, cached (hover and selection ask for the same few). */
  async info(id) {
    if (this.cache.has(id)) return this.cache.get(id);
    const t = await this.app.call('tensor', { id });
    if (this.cache.size > 500) this.cache.clear();
    this.cache.set(id, t);
    return t;
  }

  async load(kind, id) {
    this.tensorInfo = null;
    if (id === null || id === undefined) return;
    try {
      const t = await this.info(id);
      if (this.sel.tensor === id) {
        this.tensorInfo = t;
        this.plot.redraw();
      }
    } catch {
      // Not in this dump (an id from the URL).
    }
  }

  /** Selects the producer node of the selected tensor (n). */
  async selectProducer() {
    if (this.sel.tensor === null) return;
    const current = this.app.ask();
    const t = await this.info(this.sel.tensor);
    // Not if the user selected something meanwhile: the answer is about the tensor selected before.
    if (current() && t.node_index !== null) this.app.select({ node: t.node_index });
  }

  /**
   * Zooms to the selected conflict pair, tensor, address range or node (z, a conflict row). A
   * tensor's box comes from the worker: if anything is selected before it comes, the zoom was for
   * a pick no longer current and does not happen (ui/store.js `since`), so it cannot take the
   * chart away from what the user picked meanwhile. The canvas counts the zooms whose boxes came,
   * done or not, for the tests to wait on.
   */
  async zoomToSelection() {
    if (!this.plot) return;
    const s = this.sel;
    const current = this.app.since();
    let box = null;
    const add = (b) => {
      box = box ? { x0: Math.min(box.x0, b.x0), x1: Math.max(box.x1, b.x1), y0: Math.min(box.y0, b.y0), y1: Math.max(box.y1, b.y1) } : b;
    };
    const ids = s.pair ? s.pair : s.tensor !== null ? [s.tensor] : [];
    if (ids.length) {
      // Both tensors of a pair asked at once; an unknown id (from the URL) adds nothing.
      const tensors = await Promise.all(ids.map((id) => this.info(id).catch(() => null)));
      if (this.destroyed) return;
      const d = this.plot.canvas.dataset;
      d.zooms = String(Number(d.zooms || 0) + 1);
      if (!current()) return;
      for (const t of tensors) if (t) add({ x0: t.alive[0], x1: t.alive[1] + 1, y0: t.range[0], y1: t.range[1] });
    }
    if (!box && s.range) {
      const a = Number(BigInt(s.range.start) - BigInt(this.base));
      const b = Number(BigInt(s.range.end) - BigInt(this.base));
      add({ x0: this.domain.x0, x1: this.domain.x1, y0: a, y1: Math.max(b, a + 1) });
    }
    if (!box && s.node !== null) add({ x0: s.node - 20, x1: s.node + 21, y0: this.domain.y0, y1: this.domain.y1 });
    if (!box) return;
    const w = box.x1 - box.x0;
    const h = box.y1 - box.y0;
    this.plot.setView({ x0: box.x0 - Math.max(2, w * 0.5), x1: box.x1 + Math.max(2, w * 0.5), y0: box.y0 - Math.max(512, h * 0.6), y1: box.y1 + Math.max(512, h * 0.6) });
  }

  draw(ctx, plot) {
    const d = this.data;
    const v = plot.view;
    if (d) {
      // The raster of the answer (made for d.view) mapped into the current view: exact while the
      // view is unchanged, stretched while the next answer is on its way.
      const rv = d.view;
      const kx = plot.width / (v.x1 - v.x0);
      const ky = plot.height / (v.y1 - v.y0);
      const left = (rv.x0 - v.x0) * kx;
      const top = (v.y1 - rv.y1) * ky;
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(d.image, left, top, (rv.x1 - rv.x0) * kx, (rv.y1 - rv.y0) * ky);
    }
    // Conflicts are often far below a pixel: a red mark on the top edge at each one's first
    // shared node, and a ring where it sits when that is in view.
    const marks = this.app.info.conflict_marks || [];
    if (marks.length) {
      ctx.fillStyle = cssVar('--somas-c7');
      ctx.strokeStyle = cssVar('--somas-c7');
      ctx.lineWidth = 1.5;
      for (const [cx, cy] of marks) {
        const x = plot.px(cx + 0.5);
        if (x < -6 || x > plot.width + 6) continue;
        topEdgeMarker(ctx, x, 7);
        const y = plot.py(cy);
        if (y >= 0 && y <= plot.height) {
          ctx.beginPath();
          ctx.arc(x, y, 5, 0, Math.PI * 2);
          ctx.stroke();
        }
      }
    }
    const accent = cssVar('--accent');
    const sel = this.sel || {};
    // Address range: a horizontal band.
    if (sel.range) {
      const a = Number(BigInt(sel.range.start) - BigInt(this.base));
      const b = Number(BigInt(sel.range.end) - BigInt(this.base));
      const top = plot.py(Math.max(b, a + 1));
      const bottom = plot.py(a);
      ctx.fillStyle = cssVar('--somas-select-band');
      ctx.fillRect(0, top - 1, plot.width, Math.max(2, bottom - top + 2));
      ctx.strokeStyle = accent;
      ctx.strokeRect(0.5, top - 0.5, plot.width - 1, Math.max(2, bottom - top + 1));
    }
    // Peak node (dashed) and selected node.
    const vline = (index, color, dash) => {
      const x = Math.round(plot.px(index + 0.5)) + 0.5;
      if (x < 0 || x > plot.width) return;
      ctx.strokeStyle = color;
      ctx.setLineDash(dash);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(x, 0);
      ctx.lineTo(x, plot.height);
      ctx.stroke();
      ctx.setLineDash([]);
    };
    if (this.app.info.peak_index !== null) vline(this.app.info.peak_index, cssVar('--muted'), [4, 4]);
    if (sel.node !== null && sel.node !== undefined) vline(sel.node, accent, []);
    const outline = (t, color, width) => {
      const x0 = plot.px(t.alive[0]);
      const x1 = plot.px(t.alive[1] + 1);
      const y0 = plot.py(t.range[1]);
      const y1 = plot.py(t.range[0]);
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      const w = Math.max(2, x1 - x0);
      const h = Math.max(2, y1 - y0);
      ctx.strokeRect(x0, y0, w, h);
      if (w < 6 || h < 6) {
        // Too small to see at this zoom: ring it.
        ctx.beginPath();
        ctx.arc(x0 + w / 2, y0 + h / 2, 9, 0, Math.PI * 2);
        ctx.stroke();
      }
    };
    // Both tensors of a conflict are red: outline them in the text colour so each shows.
    if (this.pairInfo) for (const t of this.pairInfo) outline(t, cssVar('--text'), 2);
    if (this.hover) outline(this.hover, cssVar('--text'), 1);
    if (this.tensorInfo) outline(this.tensorInfo, accent, 2.5);
    this.markSelection(plot);
  }

  /**
   * Writes where the selected tensor is drawn (canvas CSS px, clipped to the plot area) on the
   * canvas as data-selection="x,y,w,h" with its id in data-selection-tensor, for the tests that
   * check an action brings it into view; removed when nothing is selected or it is out of view.
   */
  markSelection(plot) {
    const d = plot.canvas.dataset;
    const t = this.tensorInfo;
    const m = plot.margin;
    if (!t) {
      delete d.selection;
      delete d.selectionTensor;
      return;
    }
    const [rx0, rx1, ry0, ry1] = [plot.px(t.alive[0]), plot.px(t.alive[1] + 1), plot.py(t.range[1]), plot.py(t.range[0])];
    const clip = (v, hi) => Math.min(Math.max(v, 0), hi);
    const [x0, x1, y0, y1] = [clip(rx0, plot.width), clip(rx1, plot.width), clip(ry0, plot.height), clip(ry1, plot.height)];
    if (rx1 < 0 || rx0 > plot.width || ry1 < 0 || ry0 > plot.height) {
      delete d.selection;
    } else {
      d.selection = [m.left + x0, m.top + y0, Math.max(2, x1 - x0), Math.max(2, y1 - y0)].map((v) => Math.round(v)).join(',');
    }
    d.selectionTensor = String(t.id);
  }

  tooltip(t, ev) {
    const where = this.base ? `${hex(this.base + t.range[0])} – ${hex(this.base + t.range[1])}` : `${hex(t.range[0])} – ${hex(t.range[1])}`;
    const lines = [`%${t.id}T  ${t.kind}${t.lifelong !== 'LifeLongNone' ? ` · ${t.lifelong}` : ''}${t.union_group ? ' · union' : ''}${t.contiguous ? ' · contiguous' : ''}`];
    lines.push(['Node', `${t.node_name}${t.node_index !== null ? ` ($${t.node_index}${t.output_index !== null ? `, output ${t.output_index}` : ''})` : ''}`]);
    lines.push(['Size', `${bytes(t.aligned)} aligned (${exactBytes(t.aligned)}), original ${exactBytes(t.size)}`]);
    lines.push([this.base ? 'Address' : 'Offset', `${where} (offset ${int(t.offset)})`]);
    lines.push(['Alive', `$${int(t.alive[0])} – $${int(t.alive[1])} (life_start ${t.life[0]}, life_end ${t.life[1]})`]);
    if (t.task) lines.push(['Task address', `${hex(t.task[0])}, ${exactBytes(t.task[1])}${t.task_mismatch ? ' — MISMATCH' : ''}`]);
    if (t.conflicts_with.length) lines.push(['Conflicts with', t.conflicts_with.slice(0, 12).map((i) => `%${i}T`).join(' ') + (t.conflicts_with.length > 12 ? ' …' : '')]);
    lines.push('click to select');
    showTooltip(ev.clientX, ev.clientY, lines);
  }

  destroy() {
    hideTooltip();
    if (this.onScheme) matchMedia('(prefers-color-scheme: dark)').removeEventListener('change', this.onScheme);
    // The old chart may still repaint (a late answer, a resize): with nothing to draw.
    this.destroyed = true;
    if (this.plot) this.plot.destroy();
    if (this.data && this.data.image) this.data.image.close();
    this.data = null;
  }
}

/** The RGBA bytes of a CSS colour, resolved by the browser. */
const probe = new OffscreenCanvas(1, 1).getContext('2d', { willReadFrequently: true });
function rgba(color) {
  probe.clearRect(0, 0, 1, 1);
  probe.fillStyle = '#000';
  probe.fillStyle = color;
  probe.fillRect(0, 0, 1, 1);
  return probe.getImageData(0, 0, 1, 1).data;
}

let colorsCache = null;

/**
 * Fill and border colour of each layout class as 0xAABBGGRR words for the worker's raster
 * (borders: the class colour mixed with --somas-edge, lighter in light mode, darker in dark).
 */
function palette() {
  if (colorsCache) return colorsCache;
  const edge = rgba(cssVar('--somas-edge'));
  const a = edge[3] / 255;
  const mix = (x, e) => Math.round(x * (1 - a) + e * a);
  const word = (r, g, b) => ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
  const fill = [];
  const border = [];
  for (const c of classColors()) {
    const [r, g, b] = rgba(c);
    fill.push(word(r, g, b));
    border.push(word(mix(r, edge[0]), mix(g, edge[1]), mix(b, edge[2])));
  }
  colorsCache = { fill, border };
  return colorsCache;
}
