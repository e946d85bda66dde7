// A zoomable, pannable canvas plot with axes. Views give it a domain and a draw callback; it owns
// the viewport, the interaction (wheel/drag/keys/brush/hover/click) and the axes. A view asks the
// worker for data whenever `onView` reports a new viewport, and keeps what it last received in data
// coordinates: `draw` repaints that immediately under the new view (px/py), so panning stays
// instant while the exact data for the new view is on its way.
import { el, cssVar } from './dom.js';
import { bytes, int, timeMs } from '../format.js';

const MARGIN = { left: 72, right: 14, top: 10, bottom: 28 };

/**
 * Tick values for [a, b], about `n` of them, at 1/2/5×10^k steps (binary steps for bytes), whole
 * numbers for indices and bytes.
 */
export function ticks(a, b, n, kind) {
  if (!(b > a)) return [a];
  const span = b - a;
  let step;
  if (kind === 'bytes' && span >= 1024) {
    const raw = span / n;
    const p = 2 ** Math.floor(Math.log2(raw));
    step = [1, 2, 4, 8].map((m) => p * m).find((s) => s >= raw) || p * 8;
  } else {
    const raw = span / n;
    const p = 10 ** Math.floor(Math.log10(raw));
    step = [1, 2, 5, 10].map((m) => p * m).find((s) => s >= raw);
    // Indices and bytes are whole numbers: a step under 1 would label two ticks alike ("1 B",
    // "1 B" for 0.5 and 1 on the axis of a curve that is 0 or 1 byte).
    if (kind === 'index' || kind === 'bytes') step = Math.max(1, Math.round(step));
  }
  const out = [];
  for (let v = Math.ceil(a / step) * step; v <= b + step * 1e-9; v += step) out.push(v);
  return out;
}

/** Axis label for a value of the given kind. */
export function axisLabel(v, kind) {
  if (kind === 'bytes') return bytes(Math.round(v));
  if (kind === 'ms') return timeMs(v);
  if (kind === 'index') return int(Math.round(v));
  return String(+v.toPrecision(6));
}

/**
 * A small down-pointing triangle hanging from the top edge at `x`, `height` px deep, filled with
 * the context's fill style: marks a place on a chart too narrow to see (a conflict, a peak change).
 */
export function topEdgeMarker(ctx, x, height = 8) {
  ctx.beginPath();
  ctx.moveTo(x - 5, 0);
  ctx.lineTo(x + 5, 0);
  ctx.lineTo(x, height);
  ctx.closePath();
  ctx.fill();
}

/**
 * The thin line under the pointer at `x` (data units of `plot`'s x axis) across the plot area, in
 * `color`: where the tooltip's values are read.
 */
export function hoverLine(ctx, plot, x, color) {
  ctx.strokeStyle = color;
  ctx.lineWidth = 1;
  const px = Math.round(plot.px(x)) + 0.5;
  ctx.beginPath();
  ctx.moveTo(px, 0);
  ctx.lineTo(px, plot.height);
  ctx.stroke();
}

export class Plot {
  /**
   * opts: xKind, yKind, label, height, zoomY (zoom/pan y too), brush (shift-drag selects x range),
   *       margin ({left, right, top, bottom} overrides), xFormat(v) / yFormat(v) (tick labels),
   *       onView(view), onHover(x, y, ev) / onLeave(), onClick(x, y, ev), onBrush([x0, x1] | null),
   *       onFrame(ms, start) (after each repaint: its duration and start time),
   *       draw(ctx, plot) — paints the data for plot.view (called after axes)
   */
  constructor(container, opts) {
    this.opts = { height: 280, zoomY: false, ...opts };
    this.margin = { ...MARGIN, ...(this.opts.margin || {}) };
    this.domain = { x0: 0, x1: 1, y0: 0, y1: 1 };
    this.view = { ...this.domain };
    this.brushRange = null;
    // The data point the pointer hovers (as last given to onHover), null once it has left.
    this.pointer = null;
    this.canvas = el('canvas', { class: 'plot-canvas', tabindex: '0', role: 'img', 'aria-label': this.opts.label || 'chart' });
    this.box = el('div', { class: 'plot' }, this.canvas);
    container.append(this.box);
    this.ctx = this.canvas.getContext('2d');
    this.resize();
    // Only a real size change asks for new data (the observer also fires once on observe).
    this.observer = new ResizeObserver(() => {
      if (this.resize()) this.changed();
    });
    this.observer.observe(this.box);
    this.onScheme = () => this.redraw();
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', this.onScheme);
    this.bind();
  }

  /**
   * Lets go of the plot when its view is replaced (a new drop): the resize observer and the
   * colour-scheme listener would otherwise keep the canvas and its data alive and repainting.
   */
  destroy() {
    this.observer.disconnect();
    matchMedia('(prefers-color-scheme: dark)').removeEventListener('change', this.onScheme);
    this.opts.draw = null;
    this.box.remove();
  }

  get width() {
    return Math.max(1, this.cssWidth - this.margin.left - this.margin.right);
  }

  get height() {
    return Math.max(1, this.cssHeight - this.margin.top - this.margin.bottom);
  }

  /** Fits the canvas to its box; returns true when its size changed. */
  resize() {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(200, this.box.clientWidth || 600);
    const h = this.opts.height;
    if (w === this.cssWidth && h === this.cssHeight && dpr === this.dpr) return false;
    this.cssWidth = w;
    this.cssHeight = h;
    this.canvas.width = Math.round(this.cssWidth * dpr);
    this.canvas.height = Math.round(this.cssHeight * dpr);
    this.canvas.style.width = `${this.cssWidth}px`;
    this.canvas.style.height = `${this.cssHeight}px`;
    this.dpr = dpr;
    // The plot area inside the canvas (css px), for tests that point at data.
    this.canvas.dataset.area = [this.margin.left, this.margin.top, this.width, this.height].join(',');
    return true;
  }

  /** Sets the full extent of the data; the view is reset to it unless `keepView`. */
  setDomain(domain, { keepView = false, view = null } = {}) {
    this.domain = { ...domain };
    if (view) this.view = this.clamp({ ...view });
    else if (!keepView) this.view = { ...domain };
    this.changed();
  }

  /** Moves the view (clamped to the domain). */
  setView(view) {
    this.view = this.clamp({ ...this.view, ...view });
    this.changed();
  }

  clamp(v) {
    const d = this.domain;
    const fit = (a, b, lo, hi) => {
      const minSpan = this.opts.xKind === 'index' ? 1 : (hi - lo) * 1e-9 || 1e-9;
      let span = Math.max(minSpan, Math.min(b - a, hi - lo));
      a = Math.max(lo, Math.min(a, hi - span));
      return [a, a + span];
    };
    [v.x0, v.x1] = fit(v.x0, v.x1, d.x0, d.x1);
    if (this.opts.zoomY) [v.y0, v.y1] = fit(v.y0, v.y1, d.y0, d.y1);
    else [v.y0, v.y1] = [d.y0, d.y1];
    return v;
  }

  // data ↔ css pixel (inside the plot area, origin at the plot's top-left)
  px(x) {
    return ((x - this.view.x0) / (this.view.x1 - this.view.x0)) * this.width;
  }
  py(y) {
    return this.height - ((y - this.view.y0) / (this.view.y1 - this.view.y0)) * this.height;
  }
  dataX(px) {
    return this.view.x0 + (px / this.width) * (this.view.x1 - this.view.x0);
  }
  dataY(py) {
    return this.view.y0 + ((this.height - py) / this.height) * (this.view.y1 - this.view.y0);
  }

  changed() {
    if (this.opts.onView) this.opts.onView({ ...this.view }, this);
    this.redraw();
  }

  /** Repaints axes and data now. */
  redraw() {
    const { ctx } = this;
    const t0 = performance.now();
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.clearRect(0, 0, this.cssWidth, this.cssHeight);
    this.drawAxes();
    ctx.save();
    ctx.translate(this.margin.left, this.margin.top);
    ctx.beginPath();
    ctx.rect(0, 0, this.width, this.height);
    ctx.clip();
    if (this.opts.draw) this.opts.draw(ctx, this);
    if (this.brushRange) {
      const a = this.px(this.brushRange[0]);
      const b = this.px(this.brushRange[1]);
      ctx.fillStyle = 'rgba(45,108,223,0.15)';
      ctx.fillRect(Math.min(a, b), 0, Math.abs(b - a), this.height);
      ctx.strokeStyle = cssVar('--accent');
      ctx.strokeRect(Math.min(a, b) + 0.5, 0.5, Math.abs(b - a), this.height - 1);
    }
    ctx.restore();
    this.lastFrameMs = performance.now() - t0;
    if (this.opts.onFrame) this.opts.onFrame(this.lastFrameMs, t0);
  }

  drawAxes() {
    const { ctx } = this;
    const muted = cssVar('--muted') || '#666';
    const grid = cssVar('--grid') || 'rgba(128,128,128,0.18)';
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = muted;
    ctx.strokeStyle = grid;
    ctx.lineWidth = 1;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const v of ticks(this.view.y0, this.view.y1, Math.max(2, Math.floor(this.height / 45)), this.opts.yKind)) {
      const y = this.margin.top + Math.round(this.py(v)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(this.margin.left, y);
      ctx.lineTo(this.margin.left + this.width, y);
      ctx.stroke();
      ctx.fillText(this.opts.yFormat ? this.opts.yFormat(v) : axisLabel(v, this.opts.yKind), this.margin.left - 6, y);
    }
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const xt = ticks(this.view.x0, this.view.x1, Math.max(2, Math.floor(this.width / 110)), this.opts.xKind);
    for (const v of xt) {
      const x = this.margin.left + Math.round(this.px(v)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(x, this.margin.top);
      ctx.lineTo(x, this.margin.top + this.height);
      ctx.stroke();
      // Keep the label inside the canvas (the last tick often sits on the right edge).
      const label = this.opts.xFormat ? this.opts.xFormat(v) : axisLabel(v, this.opts.xKind);
      const half = ctx.measureText(label).width / 2;
      ctx.fillText(label, Math.min(Math.max(x, half + 1), this.cssWidth - half - 1), this.margin.top + this.height + 6);
    }
    ctx.strokeStyle = muted;
    ctx.strokeRect(this.margin.left + 0.5, this.margin.top + 0.5, this.width, this.height);
  }

  /** Zooms by `factor` (<1 zooms in) around data point (cx, cy). */
  zoom(factor, cx, cy, axes = 'xy') {
    const v = { ...this.view };
    if (axes.includes('x')) {
      v.x0 = cx - (cx - v.x0) * factor;
      v.x1 = cx + (v.x1 - cx) * factor;
    }
    if (axes.includes('y') && this.opts.zoomY) {
      v.y0 = cy - (cy - v.y0) * factor;
      v.y1 = cy + (v.y1 - cy) * factor;
    }
    this.setView(v);
  }

  /** Pans by a fraction of the view. */
  pan(fx, fy) {
    const dx = (this.view.x1 - this.view.x0) * fx;
    const dy = (this.view.y1 - this.view.y0) * fy;
    this.setView({ x0: this.view.x0 + dx, x1: this.view.x1 + dx, y0: this.view.y0 + dy, y1: this.view.y1 + dy });
  }

  reset() {
    this.view = this.clamp({ ...this.domain });
    this.changed();
  }

  local(ev) {
    const r = this.canvas.getBoundingClientRect();
    return { x: ev.clientX - r.left - this.margin.left, y: ev.clientY - r.top - this.margin.top };
  }

  inside(p) {
    return p.x >= 0 && p.x <= this.width && p.y >= 0 && p.y <= this.height;
  }

  /**
   * Whether the pointer still hovers the data point (x, y) given to onHover. The rule for every
   * hover answered later (by the worker): it may show a tooltip only while this holds, else an
   * answer arriving after onLeave would show one for a pointer that has gone.
   */
  hovering(x, y) {
    return !!this.pointer && this.pointer.x === x && this.pointer.y === y;
  }

  bind() {
    const c = this.canvas;
    c.addEventListener(
      'wheel',
      (ev) => {
        const p = this.local(ev);
        if (!this.inside(p)) return;
        ev.preventDefault();
        const factor = Math.exp(Math.sign(ev.deltaY) * Math.min(Math.abs(ev.deltaY), 200) * 0.0025);
        const axes = ev.shiftKey ? 'y' : ev.altKey ? 'x' : this.opts.zoomY ? 'xy' : 'x';
        this.zoom(factor, this.dataX(p.x), this.dataY(p.y), axes);
      },
      { passive: false },
    );
    let drag = null;
    c.addEventListener('pointerdown', (ev) => {
      const p = this.local(ev);
      if (!this.inside(p) || ev.button !== 0) return;
      c.setPointerCapture(ev.pointerId);
      drag = { start: p, view: { ...this.view }, brush: ev.shiftKey && !!this.opts.onBrush, moved: false };
      if (drag.brush) this.brushRange = [this.dataX(p.x), this.dataX(p.x)];
    });
    c.addEventListener('pointermove', (ev) => {
      const p = this.local(ev);
      if (drag) {
        if (Math.abs(p.x - drag.start.x) + Math.abs(p.y - drag.start.y) > 3) drag.moved = true;
        if (drag.brush) {
          this.brushRange = [this.brushRange[0], this.dataX(Math.max(0, Math.min(this.width, p.x)))];
          this.redraw();
        } else if (drag.moved) {
          const dx = ((p.x - drag.start.x) / this.width) * (drag.view.x1 - drag.view.x0);
          const dy = ((p.y - drag.start.y) / this.height) * (drag.view.y1 - drag.view.y0);
          this.setView({ x0: drag.view.x0 - dx, x1: drag.view.x1 - dx, y0: drag.view.y0 + dy, y1: drag.view.y1 + dy });
        }
        return;
      }
      if (this.inside(p)) {
        this.pointer = { x: this.dataX(p.x), y: this.dataY(p.y) };
        if (this.opts.onHover) this.opts.onHover(this.pointer.x, this.pointer.y, ev);
      } else {
        this.pointer = null;
        if (this.opts.onLeave) this.opts.onLeave();
      }
    });
    c.addEventListener('pointerup', (ev) => {
      const p = this.local(ev);
      const d = drag;
      drag = null;
      if (!d) return;
      if (d.brush) {
        const [a, b] = this.brushRange;
        if (Math.abs(this.px(b) - this.px(a)) < 3) this.setBrush(null);
        else this.setBrush([Math.min(a, b), Math.max(a, b)]);
      } else if (!d.moved && this.opts.onClick && this.inside(p)) {
        this.opts.onClick(this.dataX(p.x), this.dataY(p.y), ev);
      }
    });
    c.addEventListener('pointerleave', () => {
      this.pointer = null;
      if (this.opts.onLeave) this.opts.onLeave();
    });
    c.addEventListener('dblclick', () => this.reset());
    c.addEventListener('keydown', (ev) => {
      const cx = (this.view.x0 + this.view.x1) / 2;
      const cy = (this.view.y0 + this.view.y1) / 2;
      const k = ev.key;
      if (k === '+' || k === '=') this.zoom(0.7, cx, cy);
      else if (k === '-' || k === '_') this.zoom(1 / 0.7, cx, cy);
      else if (k === 'ArrowLeft') this.pan(-0.1, 0);
      else if (k === 'ArrowRight') this.pan(0.1, 0);
      else if (k === 'ArrowUp' && this.opts.zoomY) this.pan(0, 0.1);
      else if (k === 'ArrowDown' && this.opts.zoomY) this.pan(0, -0.1);
      else if (k === '0') this.reset();
      else if (k === 'Escape' && this.brushRange) this.setBrush(null);
      else return;
      ev.preventDefault();
    });
  }

  /** Sets (or clears with null) the brushed x range and tells the view. */
  setBrush(range) {
    this.brushRange = range;
    this.redraw();
    if (this.opts.onBrush) this.opts.onBrush(range);
  }
}
