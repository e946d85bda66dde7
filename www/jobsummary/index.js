// The job summary tab: a `job.memlens.json` (written by `memlens profiler ROOT --summary` or the
// Ray driver) opened in the worker, shown with the torch_npu job overview — headline figures,
// the role × rank matrix, outliers, one row per rank, warnings — and, for the selected rank,
// what its summary holds: the reduced memory curve, who held memory at the peak, and the largest
// allocations never released. The figures are computed in Rust (src/profiler/summary_view.rs).
import { el, cssVar } from '../ui/dom.js';
import { createStore } from '../ui/store.js';
import { mountedClient } from '../ui/mounted-client.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { overview, diagnosticItem } from '../profiler/overview.js';
import { ms, rankLabel, section } from '../profiler/common.js';

/** The analysis module (see www/analyses.js). */
export const jobSummaryPage = {
  id: 'summary',
  title: (inventory) => (inventory.units.filter((u) => u.kind === 'job-summary').length > 1 ? 'Job summaries' : 'Job summary'),
  accepts: (inventory) => inventory.units.some((u) => u.kind === 'job-summary'),
  // Its selection stays in the tab: nothing of it goes to the URL hash.
  hashKeys: [],
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
    const detail = rankDetail(report, client);
    // A rank the pointer rests on (or presses) has its figures fetched before the click, so the
    // click shows the rank in the frame after it.
    const ov = overview({ report, ranks: report.times }, store, { soon: detail.fetchRank });
    const failed = failedRanks(report, (i) => store.set({ rank: i }));
    const raw = rawFolders(report, f.path, rawError, (i) => store.set({ rank: i }));
    content.replaceChildren(...[raw, failed].filter(Boolean), ov.node, detail.node);
    // A new rank is shown in one frame: the overview's highlight waits for the detail's figures
    // (a few milliseconds from the worker, at most SLOW_MS), so the page lays out and paints once
    // per selection rather than once for the highlight and again for the figures.
    let selecting = 0;
    unsubscribe = store.on((s, changed) => {
      if (changed && changed.has && !changed.has('rank')) {
        ov.update(s);
        return;
      }
      const my = ++selecting;
      Promise.race([detail.show(s.rank), new Promise((res) => setTimeout(res, SLOW_MS))]).then(() => {
        if (my !== selecting) return;
        ov.update(store.get());
        // The detail comes into view only when little of it shows: scrolling the page costs a
        // layout and a repaint of everything newly in view, and a panel in view needs none.
        const box = detail.node.getBoundingClientRect();
        const seen = Math.min(box.bottom, window.innerHeight) - Math.max(box.top, 0);
        if (seen < Math.min(box.height, 160)) detail.node.scrollIntoView({ block: 'nearest' });
      });
    });
    ov.update(store.get());
    detail.show(store.get().rank);
    root.dataset.ranks = String(report.ranks.length);
    // The core's verdict on the job, as the torch_npu tab follows it: a job none of whose ranks
    // has figures (every rank failed where it ran) settles as an error, in the verdict's words,
    // with its overview and failed ranks still shown.
    const verdict = report.verdict || {};
    if (!verdict.has_data) {
      root.dataset.state = 'error';
      return new Error(verdict.problem || 'no rank of this job summary has figures');
    }
    root.dataset.state = 'ready';
    return null;
  }

  picker.addEventListener('change', () => open(Number(picker.value)));
  // The first file's outcome is the tab's load's (a later pick shows its own state).
  const ready = open(0).then((settled) => {
    if (settled) throw settled;
  });
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

/**
 * How long a selection waits for the rank's figures before it shows the highlight and a loading
 * line without them (ms).
 */
const SLOW_MS = 60;

/** Ranks without figures listed at most; the rest are counted (every reason is among the warnings). */
const FAILED_LISTED = 50;

/**
 * How each kind of rank without figures (the core's `no_data.kind`) is counted in the panel's
 * line: a rank whose files were refused (its files are among the rejected files the totals
 * count), one whose analysis failed where it ran (a task or node that failed), one whose files
 * hold no memory data.
 */
const KINDS = [
  ['refused', (n) => `${plural(n, 'rank')} had ${n === 1 ? 'its' : 'their'} files refused`],
  ['failed', (n) => `${plural(n, 'rank')} failed where ${n === 1 ? 'it' : 'they'} ran`],
  ['empty', (n) => `${plural(n, 'rank')} ${n === 1 ? 'holds' : 'hold'} no memory data`],
];

/** A rank's kind of having no figures: the core's, or (a rank handed over without it) failed. */
const kindOf = (r) => r.no_data?.kind || 'failed';

/**
 * The ranks without figures, counted by why and each with the core's words for it (its file
 * refused and why, its analysis failed where it ran, its files read and empty: what the command
 * line prints under the rank); null when every rank has figures. A rank's button selects it.
 */
function failedRanks(report, select) {
  const failed = [];
  report.ranks.forEach((r, i) => {
    if (r.status === 'error') failed.push(i);
  });
  if (!failed.length) return null;
  const n = failed.length;
  const counts = new Map();
  for (const i of failed) counts.set(kindOf(report.ranks[i]), (counts.get(kindOf(report.ranks[i])) || 0) + 1);
  const list = el('ul', { class: 'warning-list rank-list' }, ...failed.slice(0, FAILED_LISTED).map((i) => {
    const r = report.ranks[i];
    const says = r.no_data?.says || `its analysis failed where it ran: ${r.error || 'no reason given'}`;
    return el('li', { class: 'error', 'data-rank-index': String(i), 'data-kind': kindOf(r) },
      el('button', { type: 'button', class: 'linkish where', text: rankLabel(r), title: (r.run_dirs || []).join('\n'), on: { click: () => select(i) } }),
      el('span', { class: 'msg', text: `no figures: ${says}` }));
  }));
  const ok = report.ranks.length - n;
  const rest = ok === 0 ? 'no rank of the job has figures' : ok === 1 ? 'the other rank is summarised in full' : `the other ${int(ok)} ranks are summarised in full`;
  const why = KINDS.filter(([k]) => counts.has(k)).map(([k, words]) => words(counts.get(k)));
  // Every rank failed where it ran: "2 ranks failed", as the totals' card counts them.
  const title = counts.size === 1 && counts.has('failed') ? `${plural(n, 'rank')} failed` : `${plural(n, 'rank')} without figures`;
  return el('section', { class: 'panel', 'data-testid': 'jobsummary-failed', data: { failed: String(n), kinds: KINDS.filter(([k]) => counts.has(k)).map(([k]) => `${k}:${counts.get(k)}`).join(' ') } },
    el('h2', { text: title }),
    el('p', { class: 'muted', text: `${why.join('; ')}, so the summary has no figures for ${n === 1 ? 'it' : 'them'}; ${rest}.` }),
    list,
    n > FAILED_LISTED ? el('p', { class: 'muted', text: `… and ${plural(n - FAILED_LISTED, 'more rank')} (every reason is listed among the warnings below).` }) : null);
}

/**
 * The selected rank's summary: curve, attribution at the peak, unreleased, warnings. Built once and
 * updated in place on each selection: the rank's figures come from the worker a few milliseconds
 * later, and rebuilding the panel (or emptying it while the answer comes) made the page lay out
 * twice and jump. While the answer comes, the previous rank's figures stay, dimmed, at their size.
 */
function rankDetail(report, client) {
  const { node, body, titleNode } = section(2, 'summary-rank', 'Selected rank', {
    help: 'What the summary keeps of a rank: its memory over time in at most 256 columns (each the column’s maximum, so the peak is exact), who held memory at the peak, and the largest allocations never released.',
  });
  node.dataset.testid = 'jobsummary-rank';
  // One line that says what the panel is doing, then the rank's run folders.
  const line = el('p', { class: 'muted summary-line', text: 'Reading the rank’s summary…' });
  const failure = el('div', { class: 'error-state', 'data-testid': 'jobsummary-rank-error', hidden: true });
  const curve = curveChart();
  const live = liveAtPeak();
  const unreleased = unreleasedList();
  const grid = el('div', { class: 'grid2' }, live.node, unreleased.node);
  const warnTitle = el('h3');
  const warnList = el('ul', { class: 'warning-list' });
  // Hidden until the first rank's answer; from then on it keeps its place and size.
  const figures = el('div', { class: 'summary-figures', hidden: true }, curve.node, grid, warnTitle, warnList);
  body.append(line, failure, figures);
  node.dataset.state = 'loading';
  let shown = -1;
  let seq = 0;
  let warningsSaid = null;
  // Ranks' answers by rank index, fetched ahead (`fetchRank`) or for a selection: each entry a
  // promise, and its answer once it came (`answer`), which `show` applies without waiting. A few
  // dozen kilobytes each, the latest CACHED kept.
  const cache = new Map();
  function fetchRank(i) {
    let entry = cache.get(i);
    if (entry) {
      // The latest used stays longest.
      cache.delete(i);
      cache.set(i, entry);
      return entry;
    }
    entry = { answer: null, error: null };
    entry.promise = client.call('summary.rank', { rank: i }).then((a) => {
      entry.answer = a;
    }, (err) => {
      entry.error = err;
      // A failed answer is asked again at the next selection.
      if (cache.get(i) === entry) cache.delete(i);
    });
    cache.set(i, entry);
    while (cache.size > CACHED) cache.delete(cache.keys().next().value);
    return entry;
  }
  // Names the rank and says what the panel is doing; the figures below stay until replaced.
  const head = (i, state, text) => {
    titleNode.textContent = `Selected rank: ${rankLabel(report.ranks[i])}`;
    node.dataset.rankIndex = String(i);
    node.dataset.state = state;
    line.textContent = text;
  };
  /** Shows rank index `i`; resolves once its figures are shown (or a later call took over). */
  async function show(i) {
    if (i === shown) return;
    shown = i;
    const my = ++seq;
    const r = report.ranks[i];
    const entry = fetchRank(i);
    if (!entry.answer) {
      // Nothing changes on screen until the answer, unless it is slow to come.
      const slow = setTimeout(() => {
        if (my === seq) head(i, 'loading', 'Reading the rank’s summary…');
      }, SLOW_MS);
      await entry.promise;
      clearTimeout(slow);
      if (my !== seq) return;
      if (entry.error) {
        head(i, 'error', '');
        failure.textContent = entry.error.message;
        failure.hidden = false;
        figures.hidden = true;
        return;
      }
    }
    const s = entry.answer;
    head(i, 'ready', `Run folders: ${s.run_dirs.join(', ') || '(none)'}`);
    if (s.status === 'error') {
      node.dataset.state = 'failed';
      failure.textContent = `This rank has no figures: ${s.no_data?.says || s.error || 'failed'}`;
      failure.hidden = false;
      figures.hidden = true;
      return;
    }
    failure.hidden = true;
    figures.hidden = false;
    curve.set(s.curve, r);
    live.set(r);
    unreleased.set(s);
    // The rank's diagnostics counted by level, in the engine's words.
    warnTitle.textContent = s.levels;
    warnTitle.hidden = !s.warnings.length;
    warnList.hidden = !s.warnings.length;
    // Ranks of one job often share their warnings: the list is built again only when they differ.
    const said = JSON.stringify(s.warnings);
    if (warningsSaid !== said) {
      warningsSaid = said;
      warnList.replaceChildren(...s.warnings.map((w) => diagnosticItem(w)));
    }
  }
  // A rank fetched ahead (the pointer rests on it) says so once its answer is at hand, for the
  // tests: its click then shows it at once, and they wait for that answer, not for a time.
  const ahead = (i) => {
    const entry = fetchRank(i);
    entry.promise.then(() => {
      if (entry.answer) node.dataset.aheadRankIndex = String(i);
    });
  };
  return { node, show, fetchRank: ahead };
}

/** Rank answers the selected rank's panel keeps (see `rankDetail`). */
const CACHED = 64;

/** Height of the curve's canvas in css px. */
const CURVE_H = 160;

/**
 * Allocated and reserved bytes over the capture, one point per column, on a canvas of a fixed
 * height. Returns { node, set(curve, r) }; the canvas is drawn on the next frame, and again when
 * its width changes. A curve whose samples are all at one instant (a rank of one row has one) has
 * no time to draw a line along: each series is a dot in the middle with its value beside it, and
 * the legend says that it is one sample (a line from a point to itself drew nothing at all).
 */
function curveChart() {
  const wrap = el('div', { class: 'summary-curve', 'data-testid': 'jobsummary-curve', data: { columns: '0' } });
  const canvas = el('canvas', { 'aria-label': 'memory over time of the selected rank' });
  canvas.style.height = `${CURVE_H}px`;
  const keyAllocated = el('span', { class: 'curve-key allocated' });
  const keyReserved = el('span', { class: 'curve-key reserved' });
  const scale = el('span', { class: 'muted' });
  const legend = el('div', { class: 'legend' }, keyAllocated, keyReserved, scale);
  const empty = el('div', { class: 'empty-state', hidden: true, text: 'No allocator curve in this rank’s summary (no memory_record.csv or operator rows).' });
  wrap.append(canvas, legend, empty);
  let data = null;
  let queued = false;
  let drawnWidth = 0;
  const draw = () => {
    queued = false;
    if (!data) return;
    const { curve, maxY, t0, span, instant } = data;
    const n = curve.t_ns.length;
    const w = Math.max(200, wrap.clientWidth || 600);
    const h = CURVE_H;
    const dpr = window.devicePixelRatio || 1;
    if (w !== drawnWidth) {
      drawnWidth = w;
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
      canvas.style.width = `${w}px`;
    }
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const x = (t) => 4 + ((t - t0) / span) * (w - 8);
    const y = (v) => h - 4 - (v / maxY) * (h - 8);
    const series = [[curve.reserved_bytes, cssVar('--muted') || '#888', 'reserved'], [curve.allocated_bytes, cssVar('--accent') || '#36c', 'allocated']];
    if (instant) {
      drawInstant(g, series, w / 2, y);
      return;
    }
    for (const [values, color] of series) {
      g.strokeStyle = color;
      g.lineWidth = 1.5;
      g.beginPath();
      for (let k = 0; k < n; k++) {
        const px = x(curve.t_ns[k]);
        if (k === 0) g.moveTo(px, y(values[k]));
        else {
          g.lineTo(px, y(values[k - 1]));
          g.lineTo(px, y(values[k]));
        }
      }
      g.stroke();
    }
  };
  const queue = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(draw);
  };
  new ResizeObserver(() => {
    if (data && Math.max(200, wrap.clientWidth || 600) !== drawnWidth) queue();
  }).observe(wrap);
  function set(curve, r) {
    const n = curve.t_ns.length;
    wrap.dataset.columns = String(n);
    canvas.hidden = !n;
    legend.hidden = !n;
    empty.hidden = !!n;
    if (!n) {
      data = null;
      return;
    }
    let maxY = 1;
    for (const v of curve.reserved_bytes) maxY = Math.max(maxY, v);
    for (const v of curve.allocated_bytes) maxY = Math.max(maxY, v);
    const t0 = curve.t_ns[0];
    // Every sample at one instant: no span to draw a line along.
    const instant = curve.t_ns[n - 1] === t0;
    const span = Math.max(1, curve.t_ns[n - 1] - t0);
    data = { curve, maxY, t0, span, instant };
    wrap.dataset.instant = instant ? '1' : '0';
    canvas.setAttribute('aria-label', `memory over time of ${rankLabel(r)}`);
    keyAllocated.textContent = `allocated (peak ${bytes(r.peak_allocated_bytes)})`;
    keyReserved.textContent = `reserved (peak ${bytes(r.peak_reserved_bytes)})`;
    scale.textContent = instant
      ? `${n === 1 ? 'one sample' : `${plural(n, 'sample')} at one instant`}: the capture holds a single point in time, drawn as a dot · scale 0–${bytes(maxY)}`
      : `${ms(span)} · ${plural(n, 'column')} · scale 0–${bytes(maxY)}`;
    queue();
  }
  return { node: wrap, set };
}

/**
 * Series ([values, colour, name]) whose samples are all at one instant, at x = `cx`: each a dot
 * at its last value (a vertical stroke from its least to its largest when they differ), its name
 * and value written beside it — reserved above its dot, allocated below, so that equal values
 * do not write over each other.
 */
function drawInstant(g, series, cx, y) {
  g.font = '12px system-ui, sans-serif';
  g.textAlign = 'left';
  for (const [values, color, name] of series) {
    const last = values[values.length - 1];
    const [lo, hi] = [Math.min(...values), Math.max(...values)];
    g.fillStyle = color;
    g.strokeStyle = color;
    g.lineWidth = 1.5;
    if (lo !== hi) {
      g.beginPath();
      g.moveTo(cx, y(lo));
      g.lineTo(cx, y(hi));
      g.stroke();
    }
    g.beginPath();
    g.arc(cx, y(last), 4, 0, Math.PI * 2);
    g.fill();
    const above = name === 'reserved';
    g.textBaseline = above ? 'bottom' : 'top';
    const ty = Math.min(Math.max(y(last) + (above ? -4 : 4), above ? 14 : 0), above ? CURVE_H : CURVE_H - 14);
    g.fillText(`${name} ${bytes(last)}`, cx + 8, ty);
  }
}

/**
 * A table of a few rows under a heading, with a line that stands in for it when it has none.
 * Returns { node, set(title, rows, emptyText) } with rows as arrays of cells ({ text, title, class }).
 */
function smallTable(testid, headers) {
  const title = el('h3');
  const tbody = el('tbody');
  const table = el('table', { class: 'summary-table', 'data-testid': testid },
    el('thead', {}, el('tr', {}, ...headers.map(([text, cls]) => el('th', { class: cls, text })))),
    tbody);
  const scroller = el('div', { class: 'scroll-x' }, table);
  const none = el('p', { class: 'muted', hidden: true });
  // Rows and cells are kept from one rank to the next and only their text changes: new rows made
  // the page style and lay out the whole table on each selection.
  const put = (node, value) => {
    if (node.textContent !== value) node.textContent = value;
  };
  function set(heading, rows, emptyText) {
    put(title, heading);
    while (tbody.rows.length > rows.length) tbody.lastElementChild.remove();
    rows.forEach((cells, k) => {
      let tr = tbody.rows[k];
      if (!tr || tr.cells.length !== cells.length) {
        const fresh = el('tr', {}, ...cells.map(() => el('td')));
        if (tr) tr.replaceWith(fresh);
        else tbody.append(fresh);
        tr = fresh;
      }
      cells.forEach((c, j) => {
        const td = tr.cells[j];
        put(td, c.text ?? '');
        if (td.title !== (c.title ?? '')) td.title = c.title ?? '';
        if (td.className !== (c.class ?? '')) td.className = c.class ?? '';
      });
    });
    scroller.hidden = !rows.length;
    none.hidden = !!rows.length;
    put(none, emptyText);
  }
  return { node: el('div', {}, title, scroller, none), set };
}

/** Who held memory at the rank's peak, by the summary's grouping. */
function liveAtPeak() {
  const t = smallTable('jobsummary-live', [['Top user frame'], ['Allocations', 'num'], ['Bytes', 'num']]);
  const th = t.node.querySelector('th');
  function set(r) {
    const groups = r.live_at_peak || [];
    th.textContent = { op_name: 'Op', size_class: 'Size class' }[r.group_by] || 'Top user frame';
    t.set(`Held at the peak (${bytes(r.peak_allocated_bytes)})`, groups.map((gr) => [
      { class: 'frame', text: gr.frame, title: gr.frame },
      { class: 'num', text: int(gr.count) },
      { class: 'num', text: bytes(gr.bytes), title: exactBytes(gr.bytes) },
    ]), 'Nothing recorded at the peak.');
  }
  return { node: t.node, set };
}

/** The rank's largest allocations never released. */
function unreleasedList() {
  const t = smallTable('jobsummary-unreleased', [['Allocation'], ['Top user frame'], ['Bytes', 'num']]);
  function set(s) {
    t.set(`Largest never released (${int(s.unreleased.length)} listed)`, s.unreleased.map((u) => [
      { text: u.name, title: u.name },
      { class: 'frame', text: u.frame, title: u.frame },
      { class: 'num', text: bytes(u.size_bytes), title: exactBytes(u.size_bytes) },
    ]), 'Every allocation was released in the capture.');
  }
  return { node: t.node, set };
}
