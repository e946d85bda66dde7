// View 2, memory over time: the allocator's allocated / reserved / active, GE and APP curves of the
// selected rank (from memory_record.csv, else rebuilt from the allocation rows), reduced to the
// pixel width in Rust with exact extremes; peak marked, step spans shaded, a second rank overlaid
// for comparison. Shift-drag brushes a time window, a click picks the time the live-set view shows.
import { el } from '../ui/dom.js';
import { Plot, hoverLine } from '../ui/plot.js';
import { showTooltip, hideTooltip } from '../ui/tooltip.js';
import { bytes, exactBytes } from '../format.js';
import { ms, absolute, colors, latest, section, rankLabel, allocatorName, exportNames } from './common.js';
import { drawEnvelope, vline } from './curve-draw.js';
import { recordsAside } from './records-aside.js';

/** The curves a rank has, as { id, component, metric, label, color } (ids are fixed words). */
export function seriesFor(info, c) {
  const has = (component, metric) => {
    const comp = info.components.find((x) => x.component === component);
    return comp && comp.metrics.some(([m]) => m === metric) ? comp : null;
  };
  const fw = info.components.some((x) => x.component === 'PTA') ? 'PTA' : info.components.some((x) => x.component === 'MindSpore') ? 'MindSpore' : null;
  const out = [];
  const add = (id, component, metric, label, color, dash) => {
    if (has(component, metric)) out.push({ id, component, metric, label, color, dash });
  };
  if (fw) {
    add('fw-allocated', fw, 'allocated', `${fw} allocated`, c.allocated);
    add('fw-reserved', fw, 'reserved', `${fw} reserved`, c.reserved);
    add('fw-active', fw, 'active', `${fw} active`, c.active, [4, 3]);
  }
  add('ge-allocated', 'GE', 'allocated', 'GE allocated', c.ge);
  add('ge-reserved', 'GE', 'reserved', 'GE reserved', c.geReserved, [4, 3]);
  add('app-reserved', 'APP', 'reserved', 'APP reserved (process)', c.app, [2, 3]);
  return out;
}

/** Largest value of a series over the whole capture. */
function seriesMax(info, s) {
  const comp = info.components.find((x) => x.component === s.component);
  const m = comp && comp.metrics.find(([k]) => k === s.metric);
  return m ? m[1] : 0;
}

/**
 * Where the time charts open (ms): from a little before the first allocation to the capture end.
 * The capture often starts with process-level records long before the first allocation; 0 and
 * double-click still show it all.
 */
export function defaultView(info) {
  const end = Math.max(info.end, 1);
  const a = Math.max(0, info.active_start - 0.03 * (end - info.active_start));
  return { x0: a / 1e6, x1: end / 1e6 };
}

/** The shift (ns) that aligns rank `b` with rank `a`: 0 at start, else the first common step. */
export function alignShift(a, b, align) {
  if (align !== 'step') return { shift: 0, step: null };
  for (const s of a.steps) {
    const t = b.steps.find((x) => x.step === s.step);
    if (t) return { shift: t.start - s.start, step: s.step };
  }
  return { shift: 0, step: null };
}

export function memoryChart({ client, store, ranks, report, show }) {
  const legend = el('div', { class: 'legend toggles', 'data-testid': 'memory-legend' });
  const caption = el('div', { class: 'chart-caption muted' });
  const { node, body, titleNode } = section(2, 'memory', 'Memory over time', {
    help: 'Wheel or +/− zoom, drag or ←/→ pan, 0 or double-click resets. Shift-drag selects a time window (used by the table and the unreleased view). Click sets the time of the live-set view.',
  });
  body.append(caption, legend);
  let info = ranks[store.get().rank];
  let data = null; // { window: {x0, x1} ns, series: [...], cmp: {series, shift} }
  let hoverX = null;
  let rowMarks = null; // { alloc, release } ns of the selected allocation
  let applying = false;

  const plot = new Plot(body, {
    xKind: 'ms',
    yKind: 'bytes',
    label: 'Memory over time of the selected rank',
    height: 300,
    brush: true,
    onView: (v) => {
      requestNow();
      if (!applying) store.set({ view: { x0: v.x0 * 1e6, x1: v.x1 * 1e6 } });
    },
    onBrush: (range) => store.set({ window: range ? [Math.round(range[0] * 1e6), Math.round(range[1] * 1e6)] : null, group: null }),
    onHover: (x, y, ev) => hover(x, ev),
    onLeave: () => {
      hoverX = null;
      hideTooltip();
      plot.redraw();
    },
    onClick: (x) => {
      const s = store.get();
      // A click near the peak marker snaps to the peak itself.
      const peakPx = info.peak !== null ? plot.px(info.peak / 1e6) : -1e9;
      if (Math.abs(peakPx - plot.px(x)) <= 4) store.set({ at: null, group: null });
      else store.set({ at: Math.round(x * 1e6), group: s.group && s.group.kind === 'live' ? null : s.group });
      // The answer (what was alive then) is the live-set view, far below: it comes into view.
      if (show) show('live');
    },
    draw: (g, p) => draw(g, p),
  });
  plot.canvas.dataset.testid = 'memory-canvas';
  // The memory records the core set aside (they do not overlap the allocations): their own chart.
  const aside = recordsAside({ client, ranks, seriesFor });
  body.append(aside.node);

  const request = latest(
    async (a) => {
      const main = await client.call('ascend.curves', { rank: a.rank, x0: a.x0, x1: a.x1, columns: a.columns, spec: a.spec });
      let cmp = null;
      if (a.cmp !== null) {
        const series = await client.call('ascend.curves', { rank: a.cmp, x0: a.x0 + a.shift, x1: a.x1 + a.shift, columns: a.columns, spec: a.cmpSpec });
        cmp = { series, shift: a.shift };
      }
      return { window: { x0: a.x0, x1: a.x1 }, series: main, cmp, rank: a.rank };
    },
    (result) => {
      data = result;
      plot.redraw();
      // The rank whose curves are drawn (hook for the tests and the bench).
      plot.canvas.dataset.rank = String(result.rank);
    },
    (err) => {
      caption.textContent = `could not draw the curves: ${err.message}`;
    },
  );

  function currentSeries() {
    return seriesFor(info, colors());
  }

  function fetchArgs() {
    const s = store.get();
    const visible = currentSeries().filter((x) => !s.hidden.has(x.id));
    const args = {
      rank: s.rank,
      x0: plot.view.x0 * 1e6,
      x1: plot.view.x1 * 1e6,
      columns: Math.max(1, Math.round(plot.width)),
      spec: visible.map((x) => `${x.component}:${x.metric}`).join(','),
      cmp: null,
      shift: 0,
      cmpSpec: '',
    };
    if (s.cmp !== null && ranks[s.cmp]) {
      const fw = seriesFor(ranks[s.cmp], colors()).find((x) => x.id === 'fw-allocated');
      if (fw) {
        args.cmp = s.cmp;
        args.shift = alignShift(info, ranks[s.cmp], s.align).shift;
        args.cmpSpec = `${fw.component}:allocated`;
      }
    }
    return args;
  }

  function requestNow() {
    request(fetchArgs());
  }

  /** What the selection shows before the chart is drawn: its title and the rank's figures. */
  function preview(s) {
    titleNode.textContent = `Memory over time — ${rankLabel(report.ranks[s.rank])}`;
    renderCaption(s);
  }

  function setRank() {
    const s = store.get();
    info = ranks[s.rank];
    data = null;
    preview(s);
    const end = Math.max(info.end, 1) / 1e6;
    let yMax = 0;
    for (const x of currentSeries()) if (!s.hidden.has(x.id)) yMax = Math.max(yMax, seriesMax(info, x));
    if (s.cmp !== null && ranks[s.cmp]) {
      const fw = seriesFor(ranks[s.cmp], colors()).find((x) => x.id === 'fw-allocated');
      if (fw) yMax = Math.max(yMax, seriesMax(ranks[s.cmp], fw));
    }
    applying = true;
    const view = s.view ? { x0: s.view.x0 / 1e6, x1: s.view.x1 / 1e6 } : defaultView(info);
    plot.setDomain({ x0: 0, x1: end, y0: 0, y1: Math.max(1, yMax * 1.06) }, { view });
    // The time axis's full extent (ms since the capture start), for the tests.
    plot.canvas.dataset.domainMs = String(end);
    plot.brushRange = s.window ? [s.window[0] / 1e6, s.window[1] / 1e6] : null;
    applying = false;
    renderLegend();
    plot.redraw();
    aside.setRank(s.rank);
  }

  function renderCaption(s) {
    const r = report.ranks[s.rank];
    const shown = ranks[s.rank];
    const parts = [];
    const names = exportNames(r);
    if (r.peak_source === 'none') parts.push(`No allocator data for this rank (${names.noRecords} and no ${allocatorName(r)} rows).`);
    else {
      parts.push(`Peak allocated ${bytes(r.peak_allocated_bytes)} at ${ms(shown.peak)}`);
      parts.push(`peak reserved ${bytes(r.peak_reserved_bytes)}`);
      parts.push(`reserved − allocated at the peak ${bytes(r.fragmentation_bytes)}`);
      parts.push(r.peak_source === 'memory_record'
        ? `from ${names.peakFrom}`
        : r.records_aside
          ? `rebuilt from ${names.rows} (${names.records} covers another time range: drawn below on its own)`
          : `rebuilt from ${names.rows} (${names.noRecords})`);
    }
    if (s.cmp !== null && ranks[s.cmp]) {
      const { step } = alignShift(shown, ranks[s.cmp], s.align);
      parts.push(`compared with ${rankLabel(report.ranks[s.cmp])} (dashed), aligned ${s.align === 'step' ? (step !== null ? `at step ${step}` : 'at start — no common step') : 'at start'}`);
    }
    caption.textContent = parts.join(' · ');
  }

  function renderLegend() {
    const s = store.get();
    const items = currentSeries().map((x) => {
      const box = el('input', { type: 'checkbox', checked: !s.hidden.has(x.id), 'aria-label': `show ${x.label}` });
      box.addEventListener('change', () => {
        const hidden = new Set(store.get().hidden);
        if (box.checked) hidden.delete(x.id);
        else hidden.add(x.id);
        store.set({ hidden });
      });
      const sw = el('span', { class: 'swatch' });
      sw.style.background = x.color;
      return el('label', { class: 'toggle' }, box, sw, x.label);
    });
    if (!items.length) items.push(el('span', { text: 'no curves' }));
    const extra = [
      el('span', {}, el('span', { class: 'swatch peak-swatch' }), 'peak'),
      el('span', {}, el('span', { class: 'swatch step-swatch' }), 'step spans'),
    ];
    if (s.cmp !== null) {
      const sw = el('span', { class: 'swatch' });
      sw.style.background = colors().compare;
      extra.push(el('span', {}, sw, `${rankLabel(report.ranks[s.cmp])} allocated`));
    }
    legend.replaceChildren(...items, ...extra);
  }

  function draw(g, p) {
    const s = store.get();
    const c = colors();
    // Step spans, alternately shaded, labelled at the top.
    info.steps.forEach((st, k) => {
      const a = p.px(st.start / 1e6);
      const b = p.px(st.end / 1e6);
      if (b < 0 || a > p.width) return;
      if (k % 2 === 0) {
        g.fillStyle = c.step;
        g.fillRect(a, 0, b - a, p.height);
      }
      g.fillStyle = c.muted;
      g.font = '10px system-ui, sans-serif';
      g.textAlign = 'left';
      g.textBaseline = 'bottom';
      if (b - a > 40) g.fillText(`step ${st.step}`, Math.max(a, 0) + 3, p.height - 3);
    });
    // The curves drawn, for the marker labels to keep off (the dotted APP line runs near the top).
    const drawn = [];
    if (data && data.rank === s.rank) {
      const all = currentSeries();
      // Last drawn on top: the allocator's allocated curve, which active often equals.
      [...data.series].reverse().forEach((sd) => {
        const def = all.find((x) => x.component === sd.component && x.metric === sd.metric);
        if (!def) return;
        drawEnvelope(g, p, data.window, sd, def.color, def.dash);
        drawn.push({ win: data.window, s: sd });
      });
      if (data.cmp) {
        const win = { x0: data.window.x0 + data.cmp.shift, x1: data.window.x1 + data.cmp.shift };
        for (const sd of data.cmp.series) {
          drawEnvelope(g, p, win, sd, c.compare, [6, 4], data.cmp.shift);
          drawn.push({ win, s: sd, shift: data.cmp.shift });
        }
      }
    }
    // The label boxes (plot-area css px, "x,y,width,height") and the peak's x, for the tests.
    const at = (box) => (box ? [box.x, box.y, box.width, box.height].map((v) => v.toFixed(1)).join(',') : '');
    let peakBox = null;
    if (info.peak !== null) {
      peakBox = vline(g, p, info.peak, c.peak, [3, 3], `peak ${bytes(report.ranks[s.rank].peak_allocated_bytes)}`, drawn);
      const x = p.px(info.peak / 1e6);
      plot.canvas.dataset.peakX = x.toFixed(1);
      const y = p.py(report.ranks[s.rank].peak_allocated_bytes);
      g.fillStyle = c.peak;
      g.beginPath();
      g.arc(x, y, 4, 0, Math.PI * 2);
      g.fill();
    }
    // The live set's label keeps off the peak's as off the curves: the two lines are often close.
    const liveBox = s.at !== null ? vline(g, p, s.at, c.at, [2, 2], `live set at ${ms(s.at)}`, peakBox ? [...drawn, { box: peakBox }] : drawn) : null;
    plot.canvas.dataset.peakLabel = at(peakBox);
    plot.canvas.dataset.liveLabel = at(liveBox);
    if (rowMarks) {
      g.fillStyle = c.select;
      for (const t of [rowMarks.alloc, rowMarks.release]) {
        if (t === null || t === undefined) continue;
        const x = p.px(t / 1e6);
        g.beginPath();
        g.moveTo(x, p.height);
        g.lineTo(x - 5, p.height - 8);
        g.lineTo(x + 5, p.height - 8);
        g.closePath();
        g.fill();
      }
      if (rowMarks.alloc !== null) {
        const a = p.px(rowMarks.alloc / 1e6);
        const b = p.px((rowMarks.release ?? info.end) / 1e6);
        g.fillStyle = c.select;
        g.globalAlpha = 0.25;
        g.fillRect(a, p.height - 4, Math.max(1, b - a), 4);
        g.globalAlpha = 1;
      }
    }
    if (hoverX !== null) hoverLine(g, p, hoverX, c.muted);
  }

  function hover(x, ev) {
    hoverX = x;
    plot.redraw();
    const s = store.get();
    const t = x * 1e6;
    const lines = [[`${ms(t)}`, 'since the capture start'], absolute(info.origin_ns, t)];
    if (data && data.rank === s.rank) {
      const all = currentSeries();
      const n = data.series.length ? data.series[0].min.length : 0;
      const c = Math.floor(((t - data.window.x0) / (data.window.x1 - data.window.x0)) * n);
      for (const sd of data.series) {
        const def = all.find((d) => d.component === sd.component && d.metric === sd.metric);
        if (!def || c < 0 || c >= sd.min.length || !sd.defined[c]) continue;
        const lo = sd.min[c];
        const hi = sd.max[c];
        lines.push([def.label, lo === hi ? `${bytes(hi)} (${exactBytes(hi)})` : `${bytes(lo)} – ${bytes(hi)} (max ${exactBytes(hi)})`]);
      }
      if (data.cmp) {
        for (const sd of data.cmp.series) {
          if (c < 0 || c >= sd.min.length || !sd.defined[c]) continue;
          lines.push([`${rankLabel(report.ranks[s.cmp])}`, `${bytes(sd.max[c])} (${exactBytes(sd.max[c])})`]);
        }
      }
    }
    lines.push('click: live set at this time · shift-drag: select a window');
    showTooltip(ev.clientX, ev.clientY, lines);
  }

  async function updateRow(s) {
    rowMarks = null;
    if (s.row !== null) {
      try {
        const r = await client.call('ascend.row', { rank: s.rank, row: s.row });
        if (store.get().row === s.row) rowMarks = { alloc: r.alloc, release: r.release };
      } catch {
        rowMarks = null;
      }
    }
    plot.redraw();
  }

  function update(s, changed) {
    if (changed.has('rank') || changed.has('cmp') || changed.has('align') || changed.has('hidden')) {
      setRank();
      updateRow(s);
      return;
    }
    if (changed.has('view') && s.view) {
      const v = plot.view;
      if (Math.abs(v.x0 * 1e6 - s.view.x0) > 1 || Math.abs(v.x1 * 1e6 - s.view.x1) > 1) {
        applying = true;
        plot.setView({ x0: s.view.x0 / 1e6, x1: s.view.x1 / 1e6 });
        applying = false;
      }
    } else if (changed.has('view') && !s.view) {
      applying = true;
      plot.setView(defaultView(info));
      applying = false;
    }
    if (changed.has('window')) {
      plot.brushRange = s.window ? [s.window[0] / 1e6, s.window[1] / 1e6] : null;
      plot.redraw();
    }
    if (changed.has('at')) plot.redraw();
    if (changed.has('row')) updateRow(s);
  }

  setRank();
  updateRow(store.get());
  const recolor = () => {
    renderLegend();
    plot.redraw();
    aside.redraw();
  };
  return { node, update, preview, canvas: () => plot.canvas, plot, aside, focus: () => plot.canvas.focus(), recolor };
}
