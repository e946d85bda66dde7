// The allocator state at the snapshot: one bar per segment (by address, one row each), its blocks
// inside it coloured by state — allocated, freed but waiting for streams, free — so
// fragmentation shows as gaps. Reduced in Rust to the viewport's pixels; hover shows a block's
// size, state and stack, click selects it (and its group).
import { el } from '../ui/dom.js';
import { Plot } from '../ui/plot.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { downloadCanvas } from '../ui/download.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { section, button, latest, palette, stackLines, stateLine, PICK } from './common.js';

const CLASSES = 5;
const ROW = 10;

export function stateView({ client, store, info, onError, place }) {
  const { section: node, body, tools } = section('state', 'Allocator state at the snapshot',
    'Segments packed into rows by size (as memory_viz does), each a bar with its blocks coloured by state; x = bytes. Wheel zooms, drag pans, 0 resets, click selects a block.');
  place(node);
  const status = el('div', { class: 'snap-status muted', 'data-testid': 'snapshot-state-status' });
  const legend = el('div', { class: 'legend' },
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch snap-s3' }), 'allocated'),
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch snap-s2' }), 'freed, waiting for streams'),
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch snap-s1' }), 'free (inactive block)'),
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch snap-s4' }), 'selected group'));
  let plot = null;
  let data = null;
  let destroyed = false;
  let hovers = 0;
  const device = () => store.get().device;
  const dinfo = () => info.devices.find((d) => d.device === device());

  const request = latest(async (v) => {
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(plot.width * dpr));
    const height = Math.max(1, Math.round(plot.height * dpr));
    const r = await client.call('snapshot.state', { device: device(), x0: v.x0, x1: v.x1, y0: v.y0, y1: v.y1, width, height, highlight: store.get().group, ...palette('snap-s', CLASSES) });
    if (destroyed) return;
    const image = await createImageBitmap(new ImageData(r.rgba, width, height));
    if (destroyed) {
      image.close();
      return;
    }
    if (data && data.image) data.image.close();
    data = { view: v, image };
    const d = dinfo();
    status.textContent = `${plural(d.segments, 'segment')} in ${plural(d.state_rows, 'row')}; ${plural(r.visible, 'segment')} and blocks in view (${r.ms.toFixed(1)} ms in the engine)`;
    node.dataset.rendered = String(Number(node.dataset.rendered || 0) + 1);
    plot.redraw();
  }, null, onError);

  // The segment or block under a point of the chart (within 2 px of the view it was pointed in),
  // on the device shown then.
  const near = (x, y) => ({ device: device(), x, y, dx: (2 * (plot.view.x1 - plot.view.x0)) / plot.width });
  const hit = (a) => client.call('snapshot.stateHit', { device: a.device, x: a.x, y: a.y, dx: a.dx, dy: 0 });
  const hoverReq = latest(async (a) => {
    const b = await hit(a);
    const ev = a.ev;
    if (destroyed || !plot) return;
    // How many hovers were answered and the block the last one found (-1: none), for the tests.
    plot.canvas.dataset.hovers = String(++hovers);
    // An answer for a point the pointer has left (or left the chart) shows nothing (ui/plot.js).
    if (!plot.hovering(a.x, a.y)) return;
    plot.canvas.dataset.hoverBlock = b && b.kind === 'block' && b.block !== null ? String(b.block) : '-1';
    if (!b) return hideTooltip();
    const lines = b.kind === 'block'
      ? [`${b.state} block: ${bytes(b.size)} (${exactBytes(b.size)}) at ${b.address}`,
        ['requested', exactBytes(b.requested_size)],
        ['group', b.group_label], ...(b.state === 'active_allocated' ? stackLines(b.stack) : []), 'click to select']
      : [`${b.state} segment: ${bytes(b.size)} at ${b.address}`,
        ['allocated', bytes(b.allocated)], ['largest free block', bytes(b.largest_free_block)], ['stream', String(b.stream)],
        ['reserved by', b.group_label]];
    showTooltip(ev.clientX, ev.clientY, lines);
  }, null, onError);
  // A click selects the block under its own point, not the last hover's answer: as the timeline
  // does (timeline.js), with the block the last answered click hit (-1: none) on the canvas.
  let clicks = 0;
  const clickReq = latest(hit, (b, args) => {
    if (destroyed || !plot) return;
    const block = b && b.kind === 'block' && b.block !== null ? b : null;
    plot.canvas.dataset.clicks = String(++clicks);
    plot.canvas.dataset.clickBlock = block ? String(block.block) : '-1';
    if (block && args.current()) store.set({ block: block.block, group: block.group, element: null });
  }, onError);

  function build() {
    const d = dinfo();
    body.replaceChildren();
    if (plot) plot.destroy();
    plot = null;
    data = null;
    // Reset and PNG act on the chart: without one they are hidden, not left dead.
    tools.hidden = !d.segments;
    if (!d.segments) {
      body.append(stateLine('empty', 'This device holds no segment at the snapshot (nothing reserved).'));
      return;
    }
    body.append(legend);
    const rows = d.state_rows;
    plot = new Plot(body, {
      xKind: 'bytes',
      yKind: 'index',
      zoomY: true,
      height: Math.min(420, Math.max(160, rows * 22 + 40)),
      yFormat: (v) => `row ${Math.floor(v / ROW)}`,
      label: 'Allocator state: segments by bytes',
      onView: (v) => request(v),
      onHover: (x, y, ev) => hoverReq({ ...near(x, y), ev: { clientX: ev.clientX, clientY: ev.clientY } }),
      onLeave: () => {
        hideTooltip();
      },
      onClick: (x, y) => clickReq({ ...near(x, y), current: store.ask(PICK) }),
      draw: (ctx, p) => {
        if (!data) return;
        const v = p.view;
        const rv = data.view;
        const kx = p.width / (v.x1 - v.x0);
        const ky = p.height / (v.y1 - v.y0);
        ctx.imageSmoothingEnabled = false;
        ctx.drawImage(data.image, (rv.x0 - v.x0) * kx, (v.y1 - rv.y1) * ky, (rv.x1 - rv.x0) * kx, (rv.y1 - rv.y0) * ky);
      },
    });
    plot.canvas.dataset.testid = 'snapshot-state';
    body.append(status);
    plot.setDomain({ x0: 0, x1: Math.max(1, d.max_segment_bytes), y0: 0, y1: rows * ROW });
  }

  tools.append(
    button('Reset', () => plot && plot.reset(), { title: '0 on the chart, or double-click' }),
    button('PNG', () => plot && downloadCanvas(plot.canvas, 'AllocatorState.png'), { title: 'Save this chart as PNG' }),
  );
  build();
  return {
    node,
    update(st, changed) {
      if (changed.includes('device')) build();
      else if (changed.includes('group') && plot) request({ ...plot.view });
    },
    shown() {
      if (plot && plot.resize()) plot.changed();
    },
    destroy() {
      destroyed = true;
      hideTooltip();
      if (plot) plot.destroy();
      if (data && data.image) data.image.close();
    },
  };
}
