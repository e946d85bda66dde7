// The two sides' curves on one axis with their difference shaded (red where the candidate holds
// more, green where less): a profiler rank pair's framework allocator total over time, lined up at
// each side's start or at the first step both hold; two SOMAS dumps' in-use along the candidate's
// execution order. The core lines the curves up and reduces them (`CompareView.overlay`); this
// only draws. Both curves are step functions: a value holds until the next point.
import { el, cssVar } from '../ui/dom.js';
import { Plot, topEdgeMarker } from '../ui/plot.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { bytes, exactBytes, timeMs } from '../format.js';

const MAX_POINTS = 4000;
// The largest growth and shrink are drawn at least this wide (css px) with a marker above them, so
// a difference that holds for a moment (a hairline at the chart's scale) is still seen.
const MARK_WIDTH = 4;
const signed = (n) => (n > 0 ? `+${bytes(n)}` : n < 0 ? `−${bytes(-n)}` : '0');
/** A duration in ns, in a unit that shows it (a block alive for microseconds is not "0 ms"). */
const duration = (ns) => (ns < 1e3 ? `${ns} ns` : ns < 1e6 ? `${+(ns / 1e3).toFixed(3)} µs` : timeMs(ns / 1e6));

/**
 * Mounts the overlay of rank pair `pair` (profiler) or of the two dumps (SOMAS) into `parent`;
 * `call(name, args)` asks the worker. Returns { destroy }.
 */
export function mountOverlay(parent, call, { family, pair = 0, steps = false }) {
  const profiler = family === 'profiler';
  const box = el('section', { class: 'compare-block compare-overlay', data: { testid: 'compare-overlay', state: 'loading' } });
  const title = el('h3', { text: profiler ? 'Curves overlaid (framework allocator)' : 'In use along execution order, overlaid' });
  const controls = el('div', { class: 'compare-overlay-controls' });
  const metric = el('select', { data: { testid: 'compare-overlay-metric' } }, el('option', { value: 'allocated', text: 'allocated' }), el('option', { value: 'reserved', text: 'reserved' }));
  const align = el('select', { data: { testid: 'compare-overlay-align' } }, el('option', { value: 'start', text: 'at the start' }), el('option', { value: 'step', text: 'by step' }));
  if (profiler) {
    controls.append(el('label', {}, 'Total ', metric), el('label', {}, 'Lined up ', align));
    if (steps) align.disabled = true;
  }
  const legend = el(
    'div',
    { class: 'legend' },
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch line', style: { background: 'var(--compare-base)' } }), 'Baseline'),
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch line', style: { background: 'var(--compare-candidate)' } }), 'Candidate'),
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch', style: { background: 'var(--compare-grow)' } }), 'candidate more'),
    el('span', { class: 'legend-item' }, el('span', { class: 'swatch', style: { background: 'var(--compare-shrink)' } }), 'candidate less'),
  );
  controls.append(legend);
  const status = el('p', { class: 'muted compare-overlay-status', data: { testid: 'compare-overlay-status' }, text: 'Lining the curves up…' });
  const body = el('div', { class: 'compare-overlay-plot' });
  box.append(title, controls, body, status);
  parent.append(box);

  let data = null;
  let hover = null;
  // Profiler x is ns since the origin, drawn in ms; SOMAS x is the execution index.
  const scale = profiler ? 1e-6 : 1;
  const plot = new Plot(body, {
    xKind: profiler ? 'ms' : 'index',
    yKind: 'bytes',
    label: 'Baseline and candidate curves overlaid',
    height: 220,
    onHover: (x, y, ev) => {
      hover = at(x / scale);
      plot.redraw();
      if (hover === null || !data) return hideTooltip();
      const k = hover;
      const val = (v) => (v === null ? '–' : bytes(v));
      showTooltip(ev.clientX, ev.clientY, [
        [profiler ? 'at' : 'node', profiler ? timeMs(data.x[k] * scale) : String(data.x[k])],
        ['baseline', val(data.base[k])],
        ['candidate', val(data.candidate[k])],
        ['difference', data.delta[k] === null ? '–' : `${signed(data.delta[k])} (${exactBytes(data.delta[k])})`],
      ]);
    },
    onLeave: () => {
      hover = null;
      hideTooltip();
      plot.redraw();
    },
    draw: (ctx, p) => draw(ctx, p),
  });
  plot.canvas.dataset.testid = 'compare-overlay-canvas';

  /** Index of the point in force at x (the last at or before it). */
  function at(x) {
    if (!data || !data.x.length) return null;
    let lo = 0;
    let hi = data.x.length - 1;
    if (x < data.x[0]) return null;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (data.x[mid] <= x) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  function draw(ctx, p) {
    const d = data;
    if (!d || !d.x.length) return;
    const n = d.x.length;
    const end = (k) => (k + 1 < n ? d.x[k + 1] : d.x[k] + (profiler ? 0 : 1));
    // The difference: the area between the two curves, coloured by its sign.
    const grow = cssVar('--compare-grow');
    const shrink = cssVar('--compare-shrink');
    for (let k = 0; k < n; k++) {
      const dv = d.delta[k];
      if (dv === null || dv === 0) continue;
      const x0 = p.px(d.x[k] * scale);
      const x1 = Math.max(x0 + 1, p.px(end(k) * scale));
      const ya = p.py(d.base[k]);
      const yb = p.py(d.candidate[k]);
      ctx.fillStyle = dv > 0 ? grow : shrink;
      ctx.fillRect(x0, Math.min(ya, yb), x1 - x0, Math.max(1, Math.abs(ya - yb)));
    }
    for (const [key, color, dash] of [
      ['base', cssVar('--compare-base'), [5, 3]],
      ['candidate', cssVar('--compare-candidate'), []],
    ]) {
      const ys = d[key];
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.5;
      ctx.setLineDash(dash);
      ctx.beginPath();
      let open = false;
      for (let k = 0; k < n; k++) {
        if (ys[k] === null) {
          open = false;
          continue;
        }
        const x0 = p.px(d.x[k] * scale);
        const y = p.py(ys[k]);
        if (!open) ctx.moveTo(x0, y);
        else ctx.lineTo(x0, y);
        ctx.lineTo(p.px(end(k) * scale), y);
        open = true;
      }
      ctx.stroke();
      ctx.setLineDash([]);
      // A profiler curve's last value has no width (nothing follows it): a dot, or a curve of one
      // point would stroke nothing at all.
      const last = n - 1;
      if (ys[last] !== null && end(last) === d.x[last]) {
        ctx.fillStyle = color;
        ctx.beginPath();
        ctx.arc(p.px(d.x[last] * scale), p.py(ys[last]), 3.5, 0, Math.PI * 2);
        ctx.fill();
        // A lone point says its value and side (the baseline's above, the candidate's below).
        if (n === 1) {
          ctx.font = '11px system-ui, sans-serif';
          ctx.textAlign = 'left';
          ctx.textBaseline = key === 'base' ? 'bottom' : 'top';
          const y = p.py(ys[last]) + (key === 'base' ? -4 : 4);
          ctx.fillText(`${key === 'base' ? 'baseline' : 'candidate'} ${bytes(ys[last])}`, p.px(d.x[last] * scale) + 7, Math.min(Math.max(y, 14), p.height - 14));
        }
      }
    }
    // The largest growth and shrink: a band at least MARK_WIDTH wide and a marker with its size.
    for (const m of marks) {
      let x0 = p.px(m.from * scale);
      let x1 = p.px(m.to * scale);
      const cx = (x0 + x1) / 2;
      if (x1 - x0 < MARK_WIDTH) [x0, x1] = [cx - MARK_WIDTH / 2, cx + MARK_WIDTH / 2];
      const ya = p.py(d.base[m.k]);
      const yb = p.py(d.candidate[m.k]);
      ctx.fillStyle = m.value > 0 ? grow : shrink;
      ctx.fillRect(x0, Math.min(ya, yb), x1 - x0, Math.max(2, Math.abs(ya - yb)));
      ctx.fillStyle = cssVar(m.value > 0 ? '--error' : '--ok');
      topEdgeMarker(ctx, cx);
      ctx.fillStyle = cssVar('--text');
      ctx.font = '11px system-ui, sans-serif';
      const label = signed(m.value);
      const w = ctx.measureText(label).width;
      ctx.fillText(label, cx + 8 + w > p.width ? cx - 8 - w : cx + 8, 9);
    }
    if (hover !== null) {
      ctx.strokeStyle = cssVar('--muted');
      ctx.lineWidth = 1;
      const x = p.px(d.x[hover] * scale);
      ctx.beginPath();
      ctx.moveTo(x, 0);
      ctx.lineTo(x, p.height);
      ctx.stroke();
    }
  }

  // The largest growth and shrink, drawn with a marker: { k, from, to, value }.
  let marks = [];

  function show(d) {
    data = d;
    let top = 1;
    let max = 0;
    let min = 0;
    let from = null;
    let to = null;
    for (let k = 0; k < d.x.length; k++) {
      top = Math.max(top, d.base[k] ?? 0, d.candidate[k] ?? 0);
      const v = d.delta[k];
      if (v !== null && v > max) max = v;
      if (v !== null && v < min) min = v;
    }
    // Where the largest growth holds: from its first point to the point after its last.
    if (max > 0) {
      for (let k = 0; k < d.x.length; k++) {
        if (d.delta[k] !== max) continue;
        if (from === null) from = d.x[k];
        to = k + 1 < d.x.length ? d.x[k + 1] : d.x[k];
      }
    }
    marks = [];
    if (max > 0) marks.push(extent(d, max));
    if (min < 0) marks.push(extent(d, min));
    const x0 = d.x.length ? d.x[0] * scale : 0;
    const x1 = d.x.length ? d.x[d.x.length - 1] * scale + (profiler ? 0 : 1) : 1;
    // Curves of one instant are drawn in the middle of the axis, not on its left edge.
    plot.setDomain({ ...(x1 > x0 ? { x0, x1 } : { x0: x0 - 0.5, x1: x0 + 0.5 }), y0: 0, y1: top * 1.08 });
    Object.assign(box.dataset, {
      state: 'ready',
      points: String(d.x.length),
      exactPoints: String(d.exact_points),
      reduced: String(d.reduced),
      align: d.align,
      maxDelta: String(max),
      minDelta: String(min),
      growFrom: from === null ? '' : String(from),
      growTo: to === null ? '' : String(to),
    });
    const parts = [];
    if (max > 0) parts.push(`largest growth ${signed(max)} ${span(from, to)}`);
    if (min < 0) parts.push(`largest shrink ${signed(min)} ${span(marks[marks.length - 1].from, marks[marks.length - 1].to)}`);
    // A side without any value (its run has no allocator curve) is said, not passed for equal.
    const none = ['base', 'candidate'].filter((key) => !d[key].some((v) => v !== null));
    if (none.length === 2) parts.push('neither side has a curve to draw');
    else if (none.length) parts.push(`the ${none[0] === 'base' ? 'baseline' : 'candidate'} has no curve to draw: only the ${none[0] === 'base' ? 'candidate' : 'baseline'} is drawn`);
    if (!parts.length) parts.push('the curves are equal wherever both have a value');
    box.dataset.without = none.join(' ');
    if (d.reduced) parts.push(`${d.x.length} of ${d.exact_points} points (each side's maximum per bucket)`);
    status.textContent = [parts.join('; '), ...d.notes].join('. ') + '.';
  }

  /** The first point where the difference is `value`, and the x where that holds until. */
  function extent(d, value) {
    const k = d.delta.indexOf(value);
    let j = k;
    while (j + 1 < d.x.length && d.delta[j + 1] === value) j++;
    return { k, from: d.x[k], to: j + 1 < d.x.length ? d.x[j + 1] : d.x[j] + (profiler ? 0 : 1), value };
  }

  /** Where a difference holds in words: "at 15.751 ms, for 2 µs", "from node 3 to node 9". */
  function span(from, to) {
    if (!profiler) return to - from <= 1 ? `at node ${from}` : `from node ${from} to node ${to - 1}`;
    const a = timeMs(from * scale);
    const b = timeMs(to * scale);
    if (to <= from) return `at ${a}`;
    return a === b ? `at ${a}, for ${duration(to - from)}` : `from ${a} to ${b} (${duration(to - from)})`;
  }

  let seq = 0;
  async function load() {
    const mine = ++seq;
    box.dataset.state = 'loading';
    status.textContent = 'Lining the curves up…';
    try {
      const json = await call('compare.overlay', { pair, metric: metric.value, align: align.value, maxPoints: MAX_POINTS });
      if (mine !== seq) return;
      show(JSON.parse(json));
    } catch (err) {
      if (mine !== seq) return;
      box.dataset.state = 'error';
      status.textContent = `The curves could not be drawn: ${err.message}`;
    }
  }
  metric.addEventListener('change', load);
  align.addEventListener('change', load);
  load();
  return {
    destroy() {
      seq++;
      hideTooltip();
      plot.destroy();
      box.remove();
    },
  };
}
