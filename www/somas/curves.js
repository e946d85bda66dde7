// Memory curves over execution order: in-use, alive tensor size and total without reuse. The
// worker reduces the curves to one min/max column per pixel (exact at peaks: an envelope, never
// sampling); zoomed in to fewer nodes than pixels it sends one column per node.
//
// Two scales, chosen by a labelled toggle: "Dynamic" (the default) draws the tensor memory alone,
// fitted to its own peak, because static memory (weights, inputs) is constant over the graph and
// is often most of the total: stacked under the curve it flattens the reuse the plan achieves.
// "With static" draws the static memory as a band at the bottom and the curves on top of it.
import { el, cssVar } from '../ui/dom.js';
import * as hash from '../ui/hash-state.js';
import { Plot } from '../ui/plot.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { downloadCanvas } from '../ui/download.js';
import { bytes, exactBytes, int } from '../format.js';
import { section, button, latest } from './common.js';

// `static`: drawn on top of the static memory in the "With static" scale. `withStatic`: the series
// exists only in that scale (in the dynamic scale the alive size is the in-use curve itself).
const SERIES = [
  { id: 'inuse', label: 'In use (+ static)', dynamicLabel: 'In use (tensors)', color: '--somas-inuse', min: 'use_min', max: 'use_max', static: true },
  { id: 'alive', label: 'Alive tensor size', color: '--somas-alive', min: 'use_min', max: 'use_max', static: false, withStatic: true },
  { id: 'total', label: 'Total without reuse (+ static)', dynamicLabel: 'Total without reuse', color: '--somas-total', min: 'total_min', max: 'total_max', static: true, dash: [5, 4] },
];

/** The two y scales of the curves: tensor memory alone, or on top of the static memory. */
export const CURVE_MODES = [
  { id: 'dynamic', label: 'Dynamic (shows reuse)', title: 'Tensor memory only, fitted to its own peak; static memory is constant and left out' },
  { id: 'static', label: 'With static', title: 'Static memory (weights, inputs) as a band at the bottom, the curves on top of it' },
];

export class Curves {
  constructor(app, parent) {
    this.app = app;
    const { section: s, body, tools } = section('curves', 'Memory over execution order', {
      help: 'wheel or +/- to zoom, drag or arrows to pan, 0 or double-click to reset, click selects a node',
    });
    this.section = s;
    // In the document before any chart is made, so charts start at their real size.
    parent.append(s);
    const sm = app.summary;
    this.static = sm.static_bytes;
    this.peak = sm.peak;
    this.upper = sm.upper_bound_bytes;
    this.mode = app.restore && hash.get('s.curve') === 'static' ? 'static' : 'dynamic';
    const { top: peakTop, total: totalTop } = this.tops();
    // The total without reuse can dwarf the in-use curve on a large graph: start with it hidden then.
    this.shown = { inuse: true, alive: true, total: !(totalTop > 3 * peakTop) };
    this.data = null;
    this.hover = null;

    const modes = el('div', { class: 'curve-mode', role: 'radiogroup', 'aria-label': 'Curve scale', 'data-testid': 'somas-curve-mode' }, el('span', { class: 'muted', text: 'Scale:' }));
    this.modeInputs = {};
    for (const m of CURVE_MODES) {
      const input = el('input', { type: 'radio', name: 'somas-curve-mode', value: m.id, checked: this.mode === m.id, on: { change: () => input.checked && this.setMode(m.id) } });
      this.modeInputs[m.id] = input;
      modes.append(el('label', { class: 'legend-item', title: m.title }, input, m.label));
    }
    this.legend = el('div', { class: 'legend' });
    tools.append(modes, this.legend, button('PNG', () => downloadCanvas(this.plot.canvas, 'CurvesView.png'), { title: 'Save this chart as PNG' }));
    this.fillLegend();

    const request = latest(async (v) => {
      const columns = Math.max(1, Math.round(this.plot.width));
      const r = await app.call('curves', { x0: v.x0, x1: v.x1, columns });
      this.data = r;
      this.rescale();
    }, null, app.error);
    const hoverReq = latest(async ({ index, x, y, ev }) => {
      const n = await app.call('nodeAt', { index });
      // An answer for a point the pointer has left (or left the chart) shows nothing (ui/plot.js).
      if (!this.plot.hovering(x, y)) return;
      this.tooltip(n, ev);
    }, null, app.error);

    let hashTimer = null;
    this.plot = new Plot(body, {
      xKind: 'index',
      yKind: 'bytes',
      label: 'Memory curves over execution order',
      height: 240,
      onView: (v) => {
        request(v);
        clearTimeout(hashTimer);
        hashTimer = setTimeout(() => {
          const full = v.x0 <= this.plot.domain.x0 && v.x1 >= this.plot.domain.x1;
          hash.update({ 's.cx0': full ? null : Math.round(v.x0), 's.cx1': full ? null : Math.round(v.x1) });
        }, 300);
      },
      onHover: (x, y, ev) => {
        const index = Math.max(0, Math.min(app.info.max_index, Math.floor(x)));
        this.hover = { index, x };
        this.plot.redraw();
        hoverReq({ index, x, y, ev: { clientX: ev.clientX, clientY: ev.clientY } });
      },
      onLeave: () => {
        this.hover = null;
        hideTooltip();
        this.plot.redraw();
      },
      onClick: (x) => app.select({ node: Math.max(0, Math.min(app.info.max_index, Math.floor(x))) }),
      draw: (ctx, plot) => this.draw(ctx, plot),
    });
    this.plot.canvas.dataset.testid = 'somas-curves';
    // A dump without nodes has no execution order to draw over (the chart was an empty box with
    // a scale of 0–1 B): a sentence says so, and the chart and its controls are hidden.
    if (!sm.nodes) {
      this.plot.box.hidden = true;
      tools.hidden = true;
      body.append(el('div', { class: 'empty-state', 'data-testid': 'somas-curves-none', text: 'This dump lists no node: there is no execution order to draw memory over. Open the *_somas_tensor_offset_* dump of a compiled graph.' }));
    }
    const x1 = app.info.max_index + 1;
    let view = null;
    const cx0 = Number(hash.get('s.cx0', NaN));
    const cx1 = Number(hash.get('s.cx1', NaN));
    if (app.restore && cx1 > cx0) view = { x0: cx0, x1: cx1, y0: 0, y1: 1 };
    this.plot.setDomain({ x0: 0, x1, y0: 0, y1: Math.max(1, peakTop) }, { view });
    this.plot.canvas.dataset.mode = this.mode;
    app.store.on((s, changed) => {
      this.sel = s;
      if (changed.has('tensor')) this.loadTensor(s.tensor);
      this.plot.redraw();
    });
    this.sel = app.store.get();
  }

  /** The in-use peak and the total-without-reuse peak in the current scale. */
  tops() {
    const add = this.mode === 'static' ? this.static : 0;
    const top = this.peak ? this.peak.in_use_bytes + add : add;
    return { top, total: this.upper + add };
  }

  /** The legend of the current scale: one checkbox per series, and what is left out. */
  fillLegend() {
    const legend = this.legend;
    legend.replaceChildren();
    const withStatic = this.mode === 'static';
    if (withStatic && this.static > 0) {
      legend.append(el('span', { class: 'legend-item' }, el('span', { class: 'swatch', style: { background: 'var(--somas-static)' } }), `Static ${bytes(this.static)}`));
    }
    for (const ser of SERIES) {
      if (ser.withStatic && !withStatic) continue;
      const box = el('input', { type: 'checkbox', checked: this.shown[ser.id], on: { change: () => { this.shown[ser.id] = box.checked; this.rescale(); } } });
      const label = withStatic ? ser.label : ser.dynamicLabel || ser.label;
      legend.append(el('label', { class: 'legend-item' }, box, el('span', { class: `swatch line ${ser.dash ? 'dashed' : ''}`, style: { background: `var(${ser.color})` } }), label));
    }
    const { top, total } = this.tops();
    if (!this.shown.total && total > 3 * top) legend.append(el('span', { class: 'muted', text: `(total without reuse peaks at ${bytes(total)}, ${(total / Math.max(1, top)).toFixed(1)}× the in-use peak)` }));
    if (!withStatic && this.static > 0) legend.append(el('span', { class: 'muted', 'data-testid': 'somas-static-note', text: `+ static ${bytes(this.static)} not drawn (constant)` }));
    if ((this.app.info.conflict_marks || []).length) legend.append(el('span', { class: 'legend-item bad', text: '| conflicts' }));
  }

  /** Switches the y scale ('dynamic' or 'static'), keeps it in the URL and refits the axis. */
  setMode(mode) {
    if (mode === this.mode) return;
    this.mode = mode;
    for (const [id, input] of Object.entries(this.modeInputs)) input.checked = id === mode;
    this.plot.canvas.dataset.mode = mode;
    hash.update({ 's.curve': mode === 'static' ? 'static' : null });
    this.fillLegend();
    this.rescale();
  }

  async loadTensor(id) {
    this.tensor = null;
    if (id === null) return;
    try {
      const t = await this.app.call('tensor', { id });
      if (this.sel.tensor === id) {
        this.tensor = t;
        this.plot.redraw();
      }
    } catch {
      // An id from the URL that this dump does not have: nothing to mark.
    }
  }

  /** Fits the y axis to the visible series in the current window. */
  rescale() {
    const d = this.data;
    let top = 0;
    if (d) {
      for (const ser of this.drawn()) {
        const arr = d[ser.max];
        let m = 0;
        for (let c = 0; c < arr.length; c++) if (arr[c] > m) m = arr[c];
        top = Math.max(top, m + this.offset(ser));
      }
    }
    if (this.mode === 'static') top = Math.max(top, this.static);
    top = Math.max(1, top * 1.08);
    this.plot.canvas.dataset.yTop = String(top);
    this.plot.domain.y1 = top;
    this.plot.view.y0 = 0;
    this.plot.view.y1 = top;
    this.plot.redraw();
  }

  /** The series drawn in the current scale and legend state. */
  drawn() {
    return SERIES.filter((ser) => this.shown[ser.id] && (!ser.withStatic || this.mode === 'static'));
  }

  /** What a series is drawn on top of: the static memory in the "With static" scale, else 0. */
  offset(ser) {
    return ser.static && this.mode === 'static' ? this.static : 0;
  }

  draw(ctx, plot) {
    const d = this.data;
    const sel = this.sel || {};
    const accent = cssVar('--accent');
    // Selected tensor's lifetime as a band behind the curves.
    if (this.tensor) {
      const [a, b] = this.tensor.alive;
      ctx.fillStyle = cssVar('--somas-select-band');
      ctx.fillRect(plot.px(a), 0, plot.px(b + 1) - plot.px(a), plot.height);
    }
    if (this.mode === 'static' && this.static > 0) {
      // Static memory: constant over the graph, a band under the curves.
      const y = plot.py(this.static);
      ctx.fillStyle = cssVar('--somas-static');
      ctx.fillRect(0, y, plot.width, plot.height - y);
    }
    if (d) {
      const n = d.columns;
      const span = d.x_end - d.x_start;
      const xa = (c) => plot.px(d.x_start + (c * span) / n);
      for (const ser of this.drawn()) {
        const add = this.offset(ser);
        const mins = d[ser.min];
        const maxs = d[ser.max];
        const color = cssVar(ser.color);
        // Band between the smallest and largest value of each column.
        ctx.globalAlpha = 0.25;
        ctx.fillStyle = color;
        for (let c = 0; c < n; c++) {
          if (!d.defined[c]) continue;
          const top = plot.py(maxs[c] + add);
          const bottom = plot.py(mins[c] + add);
          if (bottom - top >= 1) ctx.fillRect(xa(c), top, Math.max(1, xa(c + 1) - xa(c)), bottom - top);
        }
        ctx.globalAlpha = 1;
        // Step line along the maxima: the peak of every column is on it.
        ctx.strokeStyle = color;
        ctx.lineWidth = 1.5;
        ctx.setLineDash(ser.dash || []);
        ctx.beginPath();
        let started = false;
        for (let c = 0; c < n; c++) {
          if (!d.defined[c]) continue;
          const y = plot.py(maxs[c] + add);
          if (!started) {
            ctx.moveTo(xa(c), y);
            started = true;
          } else ctx.lineTo(xa(c), y);
          ctx.lineTo(xa(c + 1), y);
        }
        ctx.stroke();
        ctx.setLineDash([]);
      }
    }
    // Conflicts: red ticks on the axis at the first node each pair shares.
    ctx.fillStyle = cssVar('--somas-c7');
    for (const [cx] of this.app.info.conflict_marks || []) {
      const x = plot.px(cx + 0.5);
      if (x >= 0 && x <= plot.width) ctx.fillRect(x - 1, plot.height - 8, 2, 8);
    }
    // Peak marker.
    if (this.peak && this.shown.inuse) {
      const x = plot.px(this.peak.node_index + 0.5);
      const value = this.mode === 'static' ? this.peak.in_use_with_static_bytes : this.peak.in_use_bytes;
      const y = plot.py(value);
      ctx.fillStyle = cssVar('--somas-inuse');
      ctx.beginPath();
      ctx.arc(x, y, 4, 0, Math.PI * 2);
      ctx.fill();
      ctx.font = '11px system-ui, sans-serif';
      ctx.textBaseline = 'bottom';
      ctx.textAlign = x > plot.width - 160 ? 'right' : 'left';
      ctx.fillText(`peak ${bytes(value)} at $${int(this.peak.node_index)}`, x + (ctx.textAlign === 'left' ? 6 : -6), Math.max(12, y - 4));
    }
    // Selected node.
    if (sel.node !== null && sel.node !== undefined) {
      const x = Math.round(plot.px(sel.node + 0.5)) + 0.5;
      ctx.strokeStyle = accent;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(x, 0);
      ctx.lineTo(x, plot.height);
      ctx.stroke();
    }
    if (this.hover) {
      const x = Math.round(plot.px(this.hover.index + 0.5)) + 0.5;
      ctx.strokeStyle = cssVar('--muted');
      ctx.setLineDash([2, 3]);
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(x, 0);
      ctx.lineTo(x, plot.height);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (d) performance.mark('somas-curves-drawn');
  }

  tooltip(n, ev) {
    const lines = [`$${int(n.index)} ${n.name === null ? '(no node at this index)' : n.name}`];
    lines.push(['In use (+ static)', `${bytes(n.in_use + n.static)} (${exactBytes(n.in_use + n.static)})`]);
    lines.push(['Alive tensor size', `${bytes(n.in_use)} (${exactBytes(n.in_use)})`]);
    lines.push(['Total without reuse (+ static)', `${bytes(n.total + n.static)} (${exactBytes(n.total + n.static)})`]);
    lines.push(['Alive tensors', int(n.alive)]);
    const d = this.data;
    if (d && d.columns < d.x_end - d.x_start && this.hover) {
      // Zoomed out: this pixel covers several nodes; say what its envelope holds.
      const span = d.x_end - d.x_start;
      const c = Math.floor(((this.hover.x - d.x_start) / span) * d.columns);
      if (c >= 0 && c < d.columns && d.defined[c]) {
        const a = Math.ceil(d.x_start + (c * span) / d.columns);
        const b = Math.ceil(d.x_start + ((c + 1) * span) / d.columns) - 1;
        lines.push(['This pixel', `nodes $${int(a)}–$${int(b)}: alive size ${bytes(d.use_min[c])} – ${bytes(d.use_max[c])}, max at $${int(d.use_argmax[c])}`]);
      }
    }
    lines.push('click to select this node');
    showTooltip(ev.clientX, ev.clientY, lines);
  }

  destroy() {
    hideTooltip();
    this.plot.destroy();
  }
}
