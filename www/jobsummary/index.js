// The job summary tab: a `job.memlens.json` (written by `memlens profiler ROOT --summary` or the
// Ray driver) opened in the worker, shown with the torch_npu job overview — headline figures,
// the role × rank matrix, outliers, one row per rank, warnings — and, for the selected rank,
// what its summary holds: the reduced memory curve, who held memory at the peak, and the largest
// allocations never released. The figures are computed in Rust (src/profiler/summary_view.rs).
import { el, cssVar } from '../ui/dom.js';
import { createStore } from '../ui/store.js';
import { mountedClient } from '../ui/mounted-client.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { overview } from '../profiler/overview.js';
import { ms, rankLabel, section } from '../profiler/common.js';

/** The analysis module (see www/analyses.js). */
export const jobSummaryPage = {
  id: 'summary',
  title: (inventory) => (inventory.units.filter((u) => u.kind === 'job-summary').length > 1 ? 'Job summaries' : 'Job summary'),
  accepts: (inventory) => inventory.units.some((u) => u.kind === 'job-summary'),
  mount,
};

function mount(panel, ctx) {
  const root = el('div', { class: 'ascend jobsummary', 'data-testid': 'jobsummary', 'data-state': 'loading' });
  panel.append(root);
  const files = ctx.inventory.units.filter((u) => u.kind === 'job-summary');
  let unmounted = false;
  let unsubscribe = null;
  const client = mountedClient(ctx.client, () => unmounted);
  const picker = el('select', { 'aria-label': 'job summary file', 'data-testid': 'jobsummary-file' },
    ...files.map((f, i) => el('option', { value: String(i), text: `${f.path} (${bytes(f.size)})` })));
  picker.disabled = files.length < 2;
  const head = el('section', { class: 'panel' },
    el('h2', { text: 'Job summary' }),
    el('label', { text: 'File ' }, picker),
    el('p', { class: 'muted', text: 'A whole job in kilobytes per rank. Drop a rank’s run folder to open its full views (allocations, timeline, call stacks).' }));
  const content = el('div', { class: 'ascend' });
  root.append(head, content);

  async function open(index) {
    if (unsubscribe) unsubscribe();
    unsubscribe = null;
    const f = files[index];
    root.dataset.state = 'loading';
    root.dataset.file = f.path;
    content.replaceChildren(el('section', { class: 'panel' },
      el('div', { class: 'loading-state', 'data-testid': 'jobsummary-loading', text: `Reading ${f.path} (${bytes(f.size)})…` })));
    const t0 = performance.now();
    let answer;
    try {
      answer = await client.call('summary.open', { path: f.path });
    } catch (err) {
      root.dataset.state = 'error';
      content.replaceChildren(el('section', { class: 'panel' },
        el('div', { class: 'error-state', 'data-testid': 'jobsummary-error', text: `This job summary cannot be read: ${err.message}` })));
      return;
    }
    let report = answer.overview;
    // Run folders dropped with the summary (or after it) replace the ranks they match; the
    // torch_npu tab analyses them and hands their summaries over once it has them.
    let rawError = null;
    if (ctx.inventory.units.some((u) => u.kind === 'ascend-run')) {
      try {
        if (!ctx.shared || !ctx.shared.rankSummaries) throw new Error('the torch_npu tab is not open');
        const ranks = await ctx.shared.rankSummaries();
        report = await client.call('summary.raw', { ranks });
      } catch (err) {
        rawError = err.message;
      }
    }
    root.dataset.loadMs = String(Math.round(performance.now() - t0));
    root.dataset.memoryBytes = String(answer.memoryBytes);
    if (!report.ranks.length) {
      root.dataset.state = 'empty';
      content.replaceChildren(el('section', { class: 'panel' },
        el('div', { class: 'empty-state', 'data-testid': 'jobsummary-empty', text: `${f.path} lists no ranks: the job it summarises had no run folders.` })));
      return;
    }
    const store = createStore({ rank: report.totals.peak_rank ?? 0, cmp: null });
    const ov = overview({ report, ranks: report.times }, store);
    const detail = rankDetail(report, client);
    const failed = failedRanks(report, (i) => store.set({ rank: i }));
    const raw = rawFolders(report, f.path, rawError, (i) => store.set({ rank: i }));
    content.replaceChildren(...[raw, failed].filter(Boolean), ov.node, detail.node);
    const paint = (s) => {
      ov.update(s);
      detail.show(s.rank);
    };
    unsubscribe = store.on((s, changed) => {
      paint(s);
      if (changed && changed.has && !changed.has('rank')) return;
      detail.node.scrollIntoView({ block: 'nearest' });
    });
    paint(store.get());
    root.dataset.state = 'ready';
    root.dataset.ranks = String(report.ranks.length);
  }

  picker.addEventListener('change', () => open(Number(picker.value)));
  const ready = open(0);
  return {
    ready,
    shown() {
      window.dispatchEvent(new Event('resize'));
    },
    unmount() {
      unmounted = true;
      if (unsubscribe) unsubscribe();
    },
  };
}

/** Words for the figures a raw folder and its summary may disagree on. */
const FIGURES = {
  status: 'status',
  peak_allocated_bytes: 'peak allocated',
  peak_reserved_bytes: 'peak reserved',
  rows: 'allocation rows',
  rows_ge: 'cann:: (GE) rows',
  peak_time_ns: 'time of the peak (ns)',
  fragmentation_bytes: 'fragmentation at the peak',
  unreleased_rows: 'allocations never released',
  unreleased_bytes: 'bytes never released',
};

const figureValue = (figure, v) => (v === null || v === undefined ? 'none' : figure.endsWith('_bytes') ? `${bytes(v)} (${exactBytes(v)})` : typeof v === 'number' && figure !== 'peak_time_ns' ? int(v) : String(v));

/**
 * The run folders opened beside the summary: which rank each replaced (and the figures on which
 * the folder and the summary disagree), or why it replaced none; null when none was dropped.
 */
function rawFolders(report, file, rawError, select) {
  const raw = report.raw || [];
  if (!raw.length && !rawError) return null;
  const label = (r) => rankLabel({ role: r.role, rank: r.rank ?? 'unknown', step: r.step });
  const items = raw.map((r) => {
    const dirs = r.run_dirs.join(', ');
    const li = el('li', { class: r.outcome === 'replaced' && !r.disagreements.length ? 'info' : 'warning', data: { outcome: r.outcome, disagreements: String(r.disagreements.length) } });
    if (r.outcome === 'replaced') {
      li.append(el('button', { type: 'button', class: 'linkish where', text: label(r), title: 'Select this rank', on: { click: () => select(r.index) } }),
        el('span', { class: 'msg', text: r.disagreements.length
          ? `from ${dirs}: its figures replace the summary’s, and differ from them — ${r.disagreements.map((d) => `${FIGURES[d.figure] || d.figure}: ${figureValue(d.figure, d.summary)} in the summary, ${figureValue(d.figure, d.raw)} from the folder`).join('; ')}.`
          : `from ${dirs}: its figures replace the summary’s and agree with them.` }));
    } else {
      const why = {
        unmatched: `matches no rank of ${file}.`,
        ambiguous: `could not be matched: ${r.detail}.`,
        failed: `holds no memory data (${r.detail || 'no reason given'}); the summary’s figures are kept.`,
      }[r.outcome] || r.outcome;
      li.append(el('span', { class: 'where', text: `${dirs} (${label(r)})` }), el('span', { class: 'msg', text: why }));
    }
    return li;
  });
  const replaced = raw.filter((r) => r.outcome === 'replaced').length;
  return el('section', { class: 'panel', 'data-testid': 'jobsummary-raw', data: { replaced: String(replaced), folders: String(raw.length) } },
    el('h2', { text: 'Ranks opened from their run folders' }),
    el('p', { class: 'muted', text: `${plural(replaced, 'rank')} of ${file} ${replaced === 1 ? 'is' : 'are'} shown from ${replaced === 1 ? 'its' : 'their'} dropped run folders; the torch_npu tab has the full views (allocations, timeline, call stacks) of every dropped folder.` }),
    rawError ? el('div', { class: 'error-state', 'data-testid': 'jobsummary-raw-error', text: `The dropped run folders could not be set against the summary: ${rawError}` }) : null,
    items.length ? el('ul', { class: 'warning-list rank-list' }, ...items) : null);
}

/** Failed ranks listed at most; the rest are counted (every reason is among the warnings). */
const FAILED_LISTED = 50;

/**
 * The ranks whose analysis failed where they ran, counted and each with its reason (a damaged or
 * missing file, a task or node that failed); null when every rank has a summary. A rank's button
 * selects it.
 */
function failedRanks(report, select) {
  const failed = [];
  report.ranks.forEach((r, i) => {
    if (r.status === 'error') failed.push(i);
  });
  if (!failed.length) return null;
  const n = failed.length;
  const list = el('ul', { class: 'warning-list rank-list' }, ...failed.slice(0, FAILED_LISTED).map((i) => {
    const r = report.ranks[i];
    return el('li', { class: 'error', 'data-rank-index': String(i) },
      el('button', { type: 'button', class: 'linkish where', text: rankLabel(r), title: (r.run_dirs || []).join('\n'), on: { click: () => select(i) } }),
      el('span', { class: 'msg', text: r.error || 'failed (no reason given)' }));
  }));
  const ok = report.ranks.length - n;
  const rest = ok === 0 ? 'no rank of the job has figures' : ok === 1 ? 'the other rank is summarised in full' : `the other ${int(ok)} ranks are summarised in full`;
  return el('section', { class: 'panel', 'data-testid': 'jobsummary-failed', data: { failed: String(n) } },
    el('h2', { text: `${plural(n, 'rank')} failed` }),
    el('p', { class: 'muted', text: `${n === 1 ? 'Its' : 'Their'} analysis failed where ${n === 1 ? 'it' : 'they'} ran, so the summary has no figures for ${n === 1 ? 'it' : 'them'}; ${rest}.` }),
    list,
    n > FAILED_LISTED ? el('p', { class: 'muted', text: `… and ${plural(n - FAILED_LISTED, 'more rank')} (every reason is listed among the warnings below).` }) : null);
}

/** The selected rank's summary: curve, attribution at the peak, unreleased, warnings. */
function rankDetail(report, client) {
  const { node, body, titleNode } = section(2, 'summary-rank', 'Selected rank', {
    help: 'What the summary keeps of a rank: its memory over time in at most 256 columns (each the column’s maximum, so the peak is exact), who held memory at the peak, and the largest allocations never released.',
  });
  node.dataset.testid = 'jobsummary-rank';
  let shown = -1;
  let seq = 0;
  async function show(i) {
    if (i === shown) return;
    shown = i;
    const my = ++seq;
    const r = report.ranks[i];
    titleNode.textContent = `Selected rank: ${rankLabel(r)}`;
    node.dataset.rankIndex = String(i);
    node.dataset.state = 'loading';
    body.replaceChildren(el('div', { class: 'loading-state', text: 'Reading the rank’s summary…' }));
    let s;
    try {
      s = await client.call('summary.rank', { rank: i });
    } catch (err) {
      if (my !== seq) return;
      node.dataset.state = 'error';
      body.replaceChildren(el('div', { class: 'error-state', text: err.message }));
      return;
    }
    if (my !== seq) return;
    node.dataset.state = 'ready';
    const parts = [el('p', { class: 'muted', text: `Run folders: ${s.run_dirs.join(', ') || '(none)'}` })];
    if (s.status === 'error') {
      node.dataset.state = 'failed';
      parts.push(el('div', { class: 'error-state', 'data-testid': 'jobsummary-rank-error', text: `This rank has no summary: ${s.error || 'failed'}` }));
      body.replaceChildren(...parts);
      return;
    }
    parts.push(curveChart(s.curve, r));
    const grid = el('div', { class: 'grid2' });
    grid.append(liveAtPeak(r), unreleasedList(s));
    parts.push(grid);
    if (s.warnings.length) {
      parts.push(el('h3', { text: plural(s.warnings.length, 'warning') }),
        el('ul', { class: 'warning-list' }, ...s.warnings.map((w) => el('li', { class: 'warning' }, el('span', { class: 'msg', text: w })))));
    }
    body.replaceChildren(...parts);
  }
  return { node, show };
}

/** Allocated and reserved bytes over the capture, one point per column, on a canvas. */
function curveChart(curve, r) {
  const wrap = el('div', { class: 'summary-curve', 'data-testid': 'jobsummary-curve', data: { columns: String(curve.t_ns.length) } });
  const n = curve.t_ns.length;
  if (!n) {
    wrap.append(el('div', { class: 'empty-state', text: 'No allocator curve in this rank’s summary (no memory_record.csv or operator rows).' }));
    return wrap;
  }
  const maxY = Math.max(1, ...curve.reserved_bytes, ...curve.allocated_bytes);
  const t0 = curve.t_ns[0];
  const span = Math.max(1, curve.t_ns[n - 1] - t0);
  const canvas = el('canvas', { 'aria-label': `memory over time of ${rankLabel(r)}` });
  const legend = el('div', { class: 'legend' },
    el('span', { class: 'curve-key allocated', text: `allocated (peak ${bytes(r.peak_allocated_bytes)})` }),
    el('span', { class: 'curve-key reserved', text: `reserved (peak ${bytes(r.peak_reserved_bytes)})` }),
    el('span', { class: 'muted', text: `${ms(span)} · ${n} columns · scale 0–${bytes(maxY)}` }));
  wrap.append(canvas, legend);
  const draw = () => {
    const w = Math.max(200, wrap.clientWidth || 600);
    const h = 160;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
    const g = canvas.getContext('2d');
    g.scale(dpr, dpr);
    g.clearRect(0, 0, w, h);
    const x = (t) => 4 + ((t - t0) / span) * (w - 8);
    const y = (v) => h - 4 - (v / maxY) * (h - 8);
    for (const [values, color] of [[curve.reserved_bytes, cssVar('--muted') || '#888'], [curve.allocated_bytes, cssVar('--accent') || '#36c']]) {
      g.strokeStyle = color;
      g.lineWidth = 1.5;
      g.beginPath();
      values.forEach((v, k) => {
        const px = x(curve.t_ns[k]);
        if (k === 0) g.moveTo(px, y(v));
        else {
          g.lineTo(px, y(values[k - 1]));
          g.lineTo(px, y(v));
        }
      });
      g.stroke();
    }
  };
  requestAnimationFrame(draw);
  const ro = new ResizeObserver(() => draw());
  ro.observe(wrap);
  return wrap;
}

function liveAtPeak(r) {
  const groups = r.live_at_peak || [];
  const by = { op_name: 'Op', size_class: 'Size class' }[r.group_by] || 'Top user frame';
  const table = el('table', { class: 'summary-table', 'data-testid': 'jobsummary-live' },
    el('thead', {}, el('tr', {}, el('th', { text: by }), el('th', { class: 'num', text: 'Allocations' }), el('th', { class: 'num', text: 'Bytes' }))),
    el('tbody', {}, ...groups.map((gr) => el('tr', {},
      el('td', { class: 'frame', text: gr.frame, title: gr.frame }),
      el('td', { class: 'num', text: int(gr.count) }),
      el('td', { class: 'num', text: bytes(gr.bytes), title: exactBytes(gr.bytes) })))));
  return el('div', {}, el('h3', { text: `Held at the peak (${bytes(r.peak_allocated_bytes)})` }),
    groups.length ? el('div', { class: 'scroll-x' }, table) : el('p', { class: 'muted', text: 'Nothing recorded at the peak.' }));
}

function unreleasedList(s) {
  const table = el('table', { class: 'summary-table', 'data-testid': 'jobsummary-unreleased' },
    el('thead', {}, el('tr', {}, el('th', { text: 'Allocation' }), el('th', { text: 'Top user frame' }), el('th', { class: 'num', text: 'Bytes' }))),
    el('tbody', {}, ...s.unreleased.map((u) => el('tr', {},
      el('td', { text: u.name, title: u.name }),
      el('td', { class: 'frame', text: u.frame, title: u.frame }),
      el('td', { class: 'num', text: bytes(u.size_bytes), title: exactBytes(u.size_bytes) })))));
  return el('div', {}, el('h3', { text: `Largest never released (${int(s.unreleased.length)} listed)` }),
    s.unreleased.length ? el('div', { class: 'scroll-x' }, table) : el('p', { class: 'muted', text: 'Every allocation was released in the capture.' }));
}
