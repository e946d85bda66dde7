// Memory frame at the selected node (the peak node by default): the tensors alive there as a
// strip over the address space, sorted by offset, and as a table (somas_tool's *_mem_frame.csv).
import { el, cssVar } from '../ui/dom.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { section, button, hex, classColors } from './common.js';
import { Grid, COMPACT } from './grid.js';

const STRIP_H = 44;

/** What the frame says of a dump without nodes. */
const noFrame = () => el('div', { class: 'empty-state', 'data-testid': 'somas-frame-none', text: 'This dump lists no node: nothing runs, so no tensor is alive at any point and there is no frame to show.' });

export class Frame {
  constructor(app, parent) {
    this.app = app;
    const info = app.info;
    const { section: s, body, tools } = section('frame', 'Memory frame', {
      help: 'the tensors alive when the selected node runs, by offset; p peak node, m max-address node, , and . previous / next node',
    });
    this.section = s;
    // In the document before any chart is made, so charts start at their real size.
    parent.append(s);
    s.dataset.testid = 'somas-frame';
    this.base = info.base_source === 'none' ? 0 : info.base_address;
    this.extent = Math.max(1, info.layout ? info.layout.y1 : 0, info.reused_bytes);
    this.sel = app.store.get();
    tools.append(
      button('◀', () => this.step(-1), { title: 'previous node (,)', 'aria-label': 'previous node' }),
      button('▶', () => this.step(1), { title: 'next node (.)', 'aria-label': 'next node' }),
      button('Peak node', () => info.peak_index !== null && app.select({ node: info.peak_index }), { title: 'p', disabled: info.peak_index === null }),
      button('Max-address node', () => info.max_address_node_index !== null && app.select({ node: info.max_address_node_index }), {
        title: 'm: the node owning the highest address without lifelong tensors',
        disabled: info.max_address_node_index === null,
      }),
    );
    this.head = el('div', { class: 'somas-frame-head' });
    this.canvas = el('canvas', { class: 'somas-strip', tabindex: '0', role: 'img', 'aria-label': 'memory frame strip by offset', data: { testid: 'somas-frame-strip' } });
    this.axis = el('div', { class: 'somas-strip-axis muted' });
    this.tableBox = el('div', { class: 'somas-frame-table' });
    body.append(this.head, this.canvas, this.axis, this.tableBox);
    // A dump without nodes has no frame at all: a sentence says so, and the strip, its table and
    // the buttons that step through nodes are hidden rather than left empty and dead.
    this.noNodes = !app.summary.nodes;
    for (const n of [tools, this.canvas, this.axis, this.tableBox]) n.hidden = this.noNodes;
    if (this.noNodes) this.head.replaceChildren(noFrame());
    this.grid = new Grid(this.tableBox, {
      app,
      view: 'frame',
      show: COMPACT,
      table: 'tensors',
      label: 'tensors alive at the selected node',
      isSelected: (row) => this.sel.tensor !== null && row.TensorId === this.sel.tensor,
      onRowClick: (row) => app.select({ tensor: row.TensorId }),
      empty: 'no tensor is alive at this node',
    });
    this.canvas.addEventListener('pointermove', (ev) => this.hover(ev));
    this.canvas.addEventListener('pointerleave', () => {
      this.hoverId = null;
      hideTooltip();
      this.draw();
    });
    // A click selects the tensor under its own point, found as a hover finds it: the last hover
    // may have been elsewhere (a tap, a click without a move before it).
    this.canvas.addEventListener('click', (ev) => {
      const i = this.tensorAt(ev.clientX);
      if (i >= 0) app.select({ tensor: this.data.ids[i] });
    });
    this.canvas.addEventListener('keydown', (ev) => {
      // Left/right walk the frame's tensors in offset order.
      if (!this.data || !this.data.ids.length || (ev.key !== 'ArrowLeft' && ev.key !== 'ArrowRight')) return;
      ev.preventDefault();
      const ids = this.data.ids;
      let k = ids.indexOf(this.sel.tensor);
      k = k < 0 ? 0 : Math.max(0, Math.min(ids.length - 1, k + (ev.key === 'ArrowRight' ? 1 : -1)));
      app.select({ tensor: ids[k] });
    });
    new ResizeObserver(() => this.draw()).observe(this.canvas);
    this.onScheme = () => this.draw();
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', this.onScheme);
    this.axis.append(el('span', { text: this.base ? hex(this.base) : '0' }), el('span', { text: this.base ? hex(this.base + this.extent) : `${bytes(this.extent)} (${hex(this.extent)})` }));
    this.loading = 0;
    app.store.on((st, changed) => {
      this.sel = st;
      if (changed.has('node')) this.load(st.node);
      else {
        this.draw();
        this.grid.reveal(st.tensor);
      }
    });
  }

  step(d) {
    const cur = this.sel.node === null ? this.app.info.peak_index || 0 : this.sel.node;
    this.app.select({ node: Math.max(0, Math.min(this.app.info.max_index, cur + d)) });
  }

  async load(index) {
    const seq = ++this.loading;
    if (index === null || index === undefined) {
      this.data = null;
      this.head.replaceChildren(this.noNodes ? noFrame() : el('span', { class: 'muted', text: 'Select a node (in the curves, the layout, the nodes table or with a query) to see its memory frame.' }));
      delete this.section.dataset.node;
      this.draw();
      return;
    }
    try {
      const [frame, node] = await Promise.all([this.app.call('frame', { index }), this.app.call('nodeAt', { index })]);
      if (seq !== this.loading) return;
      this.data = frame;
      this.node = node;
      this.section.dataset.node = String(index);
      this.section.dataset.count = String(frame.ids.length);
      this.section.dataset.tensors = Array.from(frame.ids).join(',');
      let sum = 0;
      for (let i = 0; i < frame.ids.length; i++) sum += frame.end[i] - frame.start[i];
      const peak = this.app.info.peak_index === index ? ' · peak node' : '';
      const maxa = this.app.info.max_address_node_index === index ? ' · max-address node' : '';
      this.head.replaceChildren(
        el('span', { class: 'somas-node-name', text: node.name === null ? '(no node at this index)' : node.name, title: node.name || '' }),
        el('span', { class: 'muted', text: ` $${int(index)}${peak}${maxa}` }),
        el('span', { class: 'somas-frame-fig', title: exactBytes(node.in_use), text: ` · alive ${bytes(node.in_use)}` }),
        el('span', { class: 'somas-frame-fig', title: exactBytes(node.in_use + node.static), text: ` · in use with static ${bytes(node.in_use + node.static)}` }),
        el('span', { class: 'somas-frame-fig', title: `${frame.ids.length} tensors (union members each), effective ranges ${exactBytes(sum)}`, text: ` · ${plural(frame.ids.length, 'tensor')}` }),
      );
      this.draw();
      await this.grid.query({ rows: { frame: index } });
      this.grid.reveal(this.sel.tensor);
    } catch (err) {
      if (seq !== this.loading) return;
      this.head.replaceChildren(el('span', { class: 'error-state', text: err.message }));
    }
  }

  /** Data x (offset) of a client x on the strip. */
  offsetAt(clientX) {
    const r = this.canvas.getBoundingClientRect();
    return ((clientX - r.left) / Math.max(1, r.width)) * this.extent;
  }

  /** The frame's index of the tensor at a client x on the strip (within 3 px), or -1. */
  tensorAt(clientX) {
    const d = this.data;
    if (!d) return -1;
    const r = this.canvas.getBoundingClientRect();
    const tol = (3 / Math.max(1, r.width)) * this.extent;
    const x = this.offsetAt(clientX);
    // Frames are sorted by offset; tensors of one frame do not overlap unless in conflict or union.
    let best = -1;
    let bestDist = Infinity;
    for (let i = 0; i < d.ids.length; i++) {
      const dist = x < d.start[i] ? d.start[i] - x : x >= d.end[i] ? x - d.end[i] : 0;
      if (dist < bestDist || (dist === 0 && bestDist === 0 && d.cls[i] > d.cls[best])) {
        best = i;
        bestDist = dist;
      }
    }
    return bestDist > tol ? -1 : best;
  }

  hover(ev) {
    const d = this.data;
    if (!d) return;
    const best = this.tensorAt(ev.clientX);
    if (best < 0) {
      this.hoverId = null;
      hideTooltip();
      this.draw();
      return;
    }
    this.hoverId = d.ids[best];
    this.draw();
    const a = d.start[best];
    const b = d.end[best];
    showTooltip(ev.clientX, ev.clientY, [
      `%${d.ids[best]}T · ${this.app.info.legend[d.cls[best]]}`,
      [this.base ? 'Address' : 'Offset', `${hex(this.base + a)} – ${hex(this.base + b)}`],
      ['Size', `${bytes(b - a)} (${exactBytes(b - a)})`],
      'click to select',
    ]);
  }

  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(100, c.clientWidth || 600);
    c.width = Math.round(w * dpr);
    c.height = Math.round(STRIP_H * dpr);
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = cssVar('--somas-strip-bg');
    ctx.fillRect(0, 0, w, STRIP_H);
    const d = this.data;
    if (!d) return;
    const colors = classColors();
    const sx = w / this.extent;
    for (let i = 0; i < d.ids.length; i++) {
      ctx.fillStyle = colors[d.cls[i]];
      const x = d.start[i] * sx;
      ctx.fillRect(x, 4, Math.max(1, (d.end[i] - d.start[i]) * sx), STRIP_H - 8);
    }
    // Separators between neighbours that are wide enough to show them.
    ctx.fillStyle = cssVar('--somas-strip-bg');
    for (let i = 0; i < d.ids.length; i++) {
      const x = d.start[i] * sx;
      if ((d.end[i] - d.start[i]) * sx > 4) ctx.fillRect(x, 4, 1, STRIP_H - 8);
    }
    const mark = (id, color, width) => {
      const i = Array.prototype.indexOf.call(d.ids, id);
      if (i < 0) return;
      const x = d.start[i] * sx;
      const ww = Math.max(3, (d.end[i] - d.start[i]) * sx);
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.strokeRect(x - 1, 2, ww + 2, STRIP_H - 4);
    };
    if (this.sel.range) {
      const a = (Number(BigInt(this.sel.range.start)) - this.base) * sx;
      const b = (Number(BigInt(this.sel.range.end)) - this.base) * sx;
      ctx.fillStyle = cssVar('--somas-select-band');
      ctx.fillRect(a - 1, 0, Math.max(2, b - a + 2), STRIP_H);
    }
    if (this.hoverId !== null && this.hoverId !== undefined) mark(this.hoverId, cssVar('--text'), 1);
    if (this.sel.tensor !== null) mark(this.sel.tensor, cssVar('--accent'), 2.5);
  }

  destroy() {
    hideTooltip();
    matchMedia('(prefers-color-scheme: dark)').removeEventListener('change', this.onScheme);
  }
}
