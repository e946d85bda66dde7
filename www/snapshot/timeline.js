// The active memory timeline: allocations stacked over trace entries (memory_viz's view), reduced
// in Rust to the pixels of the viewport and painted in the worker; the allocated and reserved
// curves on top. Hover shows an allocation's size and stack, click selects it (and its group;
// its alloc and free entries are marked), a selected group is highlighted. While a new answer is on its way the last image is redrawn
// under the new view, so panning repaints at once.
import { el, cssVar } from '../ui/dom.js';
import { Plot } from '../ui/plot.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { downloadCanvas } from '../ui/download.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { section, button, latest, palette, stackLines, stateLine, PICK } from './common.js';

const CLASSES = 12;

export function timelineView({ client, store, info, onError, place }) {
  const { section: node, body, tools } = section('timeline', 'Active memory timeline',
    'x = trace entry, y = bytes. Each allocation is a band from its alloc to its free, stacked on those made before it. Wheel zooms (Shift: y only, Alt: x only), drag pans, 0 resets, click selects an allocation.');
  place(node);
  const status = el('div', { class: 'snap-status muted', 'data-testid': 'snapshot-timeline-status' });
  const legend = el('div', { class: 'legend' },
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch line-allocated' }), 'allocated'),
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch line-reserved' }), 'reserved'),
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch snap-merged' }), 'allocations thinner than a pixel, merged'),
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch snap-peak' }), 'peak'));
  let plot = null;
  let data = null;
  let curve = null;
  let hover = null;
  let hovers = 0;
  let selected = null;
  let frames = 0;
  let destroyed = false;
  const device = () => store.get().device;
  const dinfo = () => info.devices.find((d) => d.device === device());

  const request = latest(async (v) => {
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(plot.width * dpr));
    const height = Math.max(1, Math.round(plot.height * dpr));
    const sent = performance.now();
    const highlight = store.get().group;
    const [r, c] = await Promise.all([
      client.call('snapshot.timeline', { device: device(), x0: v.x0, x1: v.x1, y0: v.y0, y1: v.y1, width, height, highlight, ...palette('snap-c', CLASSES) }),
      client.call('snapshot.curve', { device: device(), x0: v.x0, x1: v.x1, columns: Math.max(1, Math.round(plot.width)) }),
    ]);
    if (destroyed) return;
    performance.measure('snapshot-timeline-engine', { start: sent, duration: r.ms });
    performance.measure('snapshot-timeline-roundtrip', { start: sent, duration: performance.now() - sent });
    const image = await createImageBitmap(new ImageData(r.rgba, width, height));
    if (destroyed) {
      image.close();
      return;
    }
    if (data && data.image) data.image.close();
    data = { view: v, image };
    curve = { view: v, ...c };
    status.textContent = `${plural(r.visible, 'band')} in view: ${plural(r.individual, 'allocation')} drawn one by one, ${int(r.merged)} runs of thinner ones merged (${r.ms.toFixed(1)} ms in the engine)`;
    node.dataset.rendered = String(Number(node.dataset.rendered || 0) + 1);
    plot.redraw();
  }, null, onError);

  // The allocation under a point of the chart, on the device shown when it was pointed at.
  const hit = (a) => client.call('snapshot.timelineHit', { device: a.device, x: a.x, y: a.y });
  const hoverReq = latest(async ({ x, y, ev }) => {
    const a = await hit({ device: device(), x, y });
    if (destroyed || !plot) return;
    // How many hovers were answered and what the last one found (-1: nothing), for the tests.
    plot.canvas.dataset.hovers = String(++hovers);
    // An answer for a point the pointer has left (or left the chart) shows nothing (ui/plot.js).
    if (!plot.hovering(x, y)) return;
    hover = a;
    plot.canvas.dataset.hoverElement = a ? String(a.element) : '-1';
    plot.redraw();
    if (!a) return hideTooltip();
    const lines = [
      `${bytes(a.size)} (${exactBytes(a.size)}) at ${a.address}`,
      ['allocated', a.alloc_index === null ? 'before the trace began' : `entry ${int(a.alloc_index)}`],
      ['freed', a.free_index === null ? 'not freed at the snapshot' : `entry ${int(a.free_index)}`],
      ['group', a.group_label],
      ...stackLines(a.stack),
      'click to select',
    ];
    showTooltip(ev.clientX, ev.clientY, lines);
  }, null, onError);
  // A click selects the allocation under its own point, not the last hover's answer (which can lag
  // a pointer that moved). Clicks queue apart from hovers, so a pointer moving on does not replace
  // a click waiting for its answer; the answer selects only if nothing was picked since the click
  // (ui/store.js ask). The canvas counts the answered clicks and names the allocation the last one
  // hit (-1: none), for the tests to wait on.
  let clicks = 0;
  const clickReq = latest(hit, (a, args) => {
    if (destroyed || !plot) return;
    plot.canvas.dataset.clicks = String(++clicks);
    plot.canvas.dataset.clickElement = a ? String(a.element) : '-1';
    if (a && args.current()) store.set({ element: a.element, group: a.group, block: null });
  }, onError);

  function build() {
    const d = dinfo();
    body.replaceChildren();
    if (plot) plot.destroy();
    plot = null;
    data = null;
    curve = null;
    // Reset and PNG act on the chart: without one they are hidden, not left dead.
    tools.hidden = !d.allocations;
    if (!d.allocations) {
      body.append(stateLine('empty', 'No allocation is known on this device: the trace records none and the snapshot holds no allocated block.'));
      return;
    }
    if (!d.entries) body.append(stateLine('empty', 'This device has no trace (recording was off, or the file is a bare segment list): the timeline shows the allocations at the snapshot.'));
    body.append(legend);
    plot = new Plot(body, {
      xKind: 'index',
      yKind: 'bytes',
      zoomY: true,
      height: 380,
      label: 'Active memory timeline: trace entry by bytes',
      onView: (v) => request(v),
      onHover: (x, y, ev) => hoverReq({ x, y, ev: { clientX: ev.clientX, clientY: ev.clientY } }),
      onLeave: () => {
        hover = null;
        hideTooltip();
        plot.redraw();
      },
      onClick: (x, y) => clickReq({ device: device(), x, y, current: store.ask(PICK) }),
      onFrame: (ms, start) => {
        if (!data) return;
        if (!frames++) performance.mark('snapshot-timeline-first-draw');
        performance.measure('snapshot-timeline-frame', { start, duration: ms });
        if (frames % 2000 === 0) performance.clearMeasures('snapshot-timeline-frame');
      },
      draw: (ctx, p) => draw(ctx, p),
    });
    plot.canvas.dataset.testid = 'snapshot-timeline';
    body.append(status);
    const x1 = Math.max(1, d.entries);
    plot.setDomain({ x0: 0, x1, y0: 0, y1: Math.max(d.max_stack_bytes, d.max_curve_bytes, 1) * 1.04 });
  }

  function draw(ctx, p) {
    const v = p.view;
    if (data) {
      const rv = data.view;
      const kx = p.width / (v.x1 - v.x0);
      const ky = p.height / (v.y1 - v.y0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(data.image, (rv.x0 - v.x0) * kx, (v.y1 - rv.y1) * ky, (rv.x1 - rv.x0) * kx, (rv.y1 - rv.y0) * ky);
    }
    if (curve) {
      const cv = curve.view;
      const cols = curve.allocatedMax.length;
      const line = (max, color, dash) => {
        ctx.strokeStyle = color;
        ctx.setLineDash(dash);
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        let started = false;
        for (let i = 0; i < cols; i++) {
          if (!curve.defined[i]) {
            started = false;
            continue;
          }
          const x = p.px(cv.x0 + ((i + 0.5) * (cv.x1 - cv.x0)) / cols);
          const y = p.py(max[i]);
          if (!started) ctx.moveTo(x, y);
          else ctx.lineTo(x, y);
          started = true;
        }
        ctx.stroke();
        ctx.setLineDash([]);
      };
      line(curve.reservedMax, cssVar('--snap-reserved'), [5, 3]);
      line(curve.allocatedMax, cssVar('--snap-allocated'), []);
    }
    const d = dinfo();
    if (!d.entries) atSnapshot(ctx, p);
    if (d.peak_trace_index !== null) {
      const x = Math.round(p.px(d.peak_trace_index + 0.5)) + 0.5;
      if (x >= 0 && x <= p.width) {
        ctx.strokeStyle = cssVar('--snap-peak');
        ctx.setLineDash([4, 4]);
        ctx.beginPath();
        ctx.moveTo(x, 0);
        ctx.lineTo(x, p.height);
        ctx.stroke();
        ctx.setLineDash([]);
      }
    }
    const outline = (a, color, width) => {
      if (!a || a.offset === null || a.offset === undefined) return;
      const s = a.alloc_index === null ? 0 : a.alloc_index;
      const e = a.free_index === null ? d.entries || 1 : a.free_index;
      const x0 = p.px(s);
      const x1 = p.px(e);
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.strokeRect(x0, p.py(a.offset + a.size), Math.max(2, x1 - x0), Math.max(2, p.py(a.offset) - p.py(a.offset + a.size)));
    };
    outline(hover, cssVar('--text'), 1);
    // The selected allocation: its alloc and free entries (its band moves as others are freed).
    if (selected) {
      ctx.strokeStyle = cssVar('--accent');
      ctx.lineWidth = 2;
      for (const at of [selected.alloc_index, selected.free_index]) {
        if (at === null) continue;
        const x = Math.round(p.px(at + 0.5)) + 0.5;
        if (x < 0 || x > p.width) continue;
        ctx.beginPath();
        ctx.moveTo(x, 0);
        ctx.lineTo(x, p.height);
        ctx.stroke();
      }
    }
  }

  // Without a trace the curves have no entry to be drawn at (the chart was an empty box): what the
  // snapshot itself says, its allocated and reserved bytes, is drawn across the chart instead, each
  // line named with its value. The canvas says which values it drew, for the tests.
  function atSnapshot(ctx, p) {
    const s = info.summary.devices[String(device())];
    if (!s) return;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'left';
    const drawn = [];
    for (const [value, color, dash, name, above] of [
      [s.reserved_bytes, cssVar('--snap-reserved'), [5, 3], 'reserved', true],
      [s.allocated_bytes, cssVar('--snap-allocated'), [], 'allocated', false],
    ]) {
      const y = Math.round(p.py(value)) + 0.5;
      ctx.strokeStyle = color;
      ctx.setLineDash(dash);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(0, y);
      ctx.lineTo(p.width, y);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = color;
      ctx.textBaseline = above ? 'bottom' : 'top';
      const ty = above ? Math.max(14, y - 3) : Math.min(p.height - 14, y + 3);
      ctx.fillText(`${name} at the snapshot: ${bytes(value)}`, 6, ty);
      drawn.push(`${name}:${value}`);
    }
    plot.canvas.dataset.atSnapshot = drawn.join(' ');
  }

  // The selected allocation's alloc and free entries, marked on the chart. Its answer is drawn only
  // while it is still the selection's: an allocation picked and then left (another device chosen
  // before the answer came) would mark entries of another device's trace. The section names the
  // allocation it marks (data-marked, '' for none), for the tests.
  async function loadSelected(st) {
    selected = null;
    node.dataset.marked = '';
    if (st.element !== null) {
      let a = null;
      try {
        a = await client.call('snapshot.allocation', { device: st.device, element: st.element });
      } catch {
        a = null;
      }
      const now = store.get();
      if (now.element !== st.element || now.device !== st.device) return;
      selected = a;
      node.dataset.marked = a ? String(st.element) : '';
    }
    if (plot) plot.redraw();
  }

  tools.append(
    button('Reset', () => plot && plot.reset(), { title: '0 on the chart, or double-click' }),
    button('PNG', () => plot && downloadCanvas(plot.canvas, 'ActiveMemoryTimeline.png'), { title: 'Save this chart as PNG' }),
  );
  build();
  return {
    node,
    update(st, changed) {
      if (changed.includes('device')) build();
      else if (changed.includes('group') && plot) request({ ...plot.view });
      if (changed.includes('element') || changed.includes('device')) loadSelected(st);
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
