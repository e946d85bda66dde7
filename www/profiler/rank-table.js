// The overview's table of ranks: one row per rank (role, rank and the export it was read from,
// step, rows, call-stack coverage, peaks, fragmentation, unreleased). A job of thousands of ranks
// must open and select within a frame, so the table is virtual (www/ui/virtual-table.js): only the
// rows in view exist in the DOM. Its rows come from the report already in this thread, so sorting
// is a sort of the rank indices here.
import { el } from '../ui/dom.js';
import { VirtualTable } from '../ui/virtual-table.js';
import { bytes, bytesShape, countShape, exactBytes, int } from '../format.js';
import { ms, msShape, timeTitle, rankText, allocatorName, exportNames } from './common.js';

/** Height of a row in px: two lines (the coverage bar and its counts). */
const ROW_HEIGHT = 40;

/** How long the pointer rests on a row before `soon` is told of its rank (ms). */
const REST_MS = 40;

const none = (v) => v === null || v === undefined;

/**
 * Whether rank `r` of a report has no figures: its files were refused or hold no memory data, its
 * analysis failed where it ran, or the page could not read it. The core says it in `status` for
 * one reader's report and a pool's or a summary's overview alike, so both paths draw it the same:
 * dashes and a word, never zeros.
 */
export const failedRank = (r) => r.status === 'error';

/**
 * Whether rank `r` was left out before reading because a file of it is larger than the page
 * reads (www/profiler/file-limit.js `markLeftOut` gives it `tooLarge: { files, limit }`; a
 * summary handed on without that mark still says so in its reason).
 */
export const tooLarge = (r) => failedRank(r) && (Boolean(r.tooLarge) || /^too large\b/.test(r.error || ''));

/** Whether the page could not read rank `r` (its reader failed or died). */
const notRead = (r) => /^not read\b/.test(r.error || '');

/**
 * What a rank without figures shows in place of its zeros: "too large" when it was left out for
 * a file larger than the page reads, "not read" when the page could not read it (its reader
 * died), and otherwise the core's kind (`no_data.kind`): "refused" (its files were refused),
 * "no data" (its files hold no memory data) or "failed" (its analysis failed where it ran).
 */
export function failedWord(r) {
  if (tooLarge(r)) return 'too large';
  if (notRead(r)) return 'not read';
  return { refused: 'refused', empty: 'no data' }[r.no_data?.kind] || 'failed';
}

/**
 * Why a rank has no figures, as a sentence's start: "this rank was not read: …", or the core's
 * words ("no figures: its file was refused: …"), which the command line prints too.
 */
export function failedReason(r) {
  if (tooLarge(r) || notRead(r)) {
    const why = String(r.error || 'no reason given').replace(/^(not read|too large):\s*/, '');
    return `this rank was not read: ${tooLarge(r) ? `a file is too large for the page: ${why}` : why}`;
  }
  return `no figures: ${r.no_data?.says || `its analysis failed where it ran: ${r.error || 'no reason given'}`}`;
}

/** A figure cell of a rank without figures: a dash, with the reason in its title. */
const noFigure = (r) => ({ text: '–', title: failedReason(r) });

/**
 * The columns: header, its least width in px (`min`, widened to the widest cell: numbers are never
 * cut) and share of the rest (`fr`), tooltip of the header, the sort key of rank index `i`, the
 * cell (`format` of virtual-table.js) of a row `{ r, info, i }`, and `fit(r, info)` (the text of
 * a row whose width the column must hold, in the cell's `font`; none for a column whose text may
 * be cut with its whole value in the title), with `shape(r, info)`: the shape of that text (see
 * `widest`), worked out without writing the text where that is cheaper.
 */
function columns(summaries, ranks) {
  const rankKey = (i) => (typeof summaries[i].rank === 'number' ? summaries[i].rank : Infinity);
  // A figure's column: its cell's text and title of a rank read, a dash for a rank that was not;
  // `shape(r, info)` is the shape of the text (see `shape` below).
  const figure = (text, title, shape) => ({
    format: (_, row) => (failedRank(row.r) ? noFigure(row.r) : { text: text(row.r, row.info), title: title(row.r, row.info) }),
    fit: (r, info) => (failedRank(r) ? '–' : text(r, info)),
    shape: (r, info) => (failedRank(r) ? '–' : shape(r, info)),
  });
  const cols = [
    {
      key: 'role', name: 'Role', min: 90, fr: 1.2, sortKey: (i) => summaries[i].role || '',
      format: (_, { r }) => ({ text: r.role || '(no role)', title: r.run_dirs.join('\n') }),
    },
    {
      key: 'rank', name: 'Rank', kind: 'int', min: 92, fr: 0.8, sortKey: rankKey,
      format: (_, { r }) => ({
        nodes: [r.rank === 'unknown' ? rankText(r) : String(r.rank), failedRank(r) ? failedBadge(r) : sourceBadge(r)],
        title: failedRank(r) ? failedReason(r) : r.rank === 'unknown' ? 'profiler_info names no rank number' : '',
      }),
      // The number and its badge; "MM" stands for the badge's margin, padding and border (its
      // smaller type makes this a little more than it takes).
      fit: (r) => `${r.rank === 'unknown' ? rankText(r) : String(r.rank)} ${failedRank(r) ? failedWord(r) : r.source}MM`,
      shape: (r) => (typeof r.rank === 'number' && !failedRank(r) && r.source === 'text' ? countShape(r.rank)
        : `${r.rank === 'unknown' ? rankText(r) : countShape(r.rank)} ${failedRank(r) ? failedWord(r) : r.source}`),
    },
    {
      key: 'step', name: 'Step', kind: 'int', min: 56, fr: 0.4, sortKey: (i) => (none(summaries[i].step) ? -1 : summaries[i].step),
      format: (_, { r }) => ({ text: none(r.step) ? '' : String(r.step), title: none(r.step) ? 'no step' : `step ${r.step}` }),
      fit: (r) => (none(r.step) ? '' : String(r.step)),
      shape: (r) => (none(r.step) ? '' : countShape(r.step)),
    },
    {
      key: 'rows', name: 'Rows', kind: 'int', min: 64, fr: 0.6, sortKey: (i) => summaries[i].rows,
      ...figure((r) => int(r.rows), (r) => `${int(r.rows_pta)} ${allocatorName(r)} + ${int(r.rows_ge)} cann:: (GE)`, (r) => countShape(r.rows)),
    },
    {
      key: 'stacks', name: 'Call stacks', min: 310, fr: 2.6, class: 'stacks',
      title: 'how each row’s Python call stack was found; sorts by the share found directly',
      sortKey: (i) => {
        const st = summaries[i].stacks;
        return st.direct / Math.max(1, st.direct + st.via_forward + st.approximate + st.none);
      },
      // A rank left out for a file too large for the page names the file and its size here.
      format: (_, { r }) => (tooLarge(r) ? tooLargeFiles(r) : failedRank(r) ? noFigure(r) : coverage(r)),
      // The counts under the bar, in their own smaller type (the file of a rank left out too).
      fit: (r) => (tooLarge(r) ? tooLargeText(r) : failedRank(r) ? '–' : coverageText(r.stacks)),
      shape: (r) => {
        if (tooLarge(r)) return tooLargeText(r);
        if (failedRank(r)) return '–';
        // Four counts and the same words between them: each count's number of digits (1–15),
        // which sets where its group separators stand, so four digit counts in base 16. Their sum
        // alone would not do: 1,000,000 and 1 take the same digits as 1,000 and 1,000 but one
        // separator more.
        const st = r.stacks;
        const n = [st.direct, st.via_forward, st.approximate, st.none].map(countShape);
        return n.every((d) => typeof d === 'number' && d > 0) ? ((n[0] * 16 + n[1]) * 16 + n[2]) * 16 + n[3] : coverageText(st);
      },
      font: '11px',
    },
    {
      key: 'peak', name: 'Peak allocated', kind: 'bytes', min: 88, fr: 0.9, class: 'strong', sortKey: (i) => summaries[i].peak_allocated_bytes,
      format: (_, { r }) => (failedRank(r)
        ? { nodes: [failedMark(r)], title: failedReason(r) }
        : { text: bytes(r.peak_allocated_bytes), title: `${exactBytes(r.peak_allocated_bytes)} (from ${r.peak_source})` }),
      fit: (r) => (failedRank(r) ? `✕ ${failedWord(r)}` : bytes(r.peak_allocated_bytes)),
      shape: (r) => (failedRank(r) ? `✕ ${failedWord(r)}` : bytesShape(r.peak_allocated_bytes)),
      font: '600 12.5px',
    },
    {
      key: 'reserved', name: 'Peak reserved', kind: 'bytes', min: 88, fr: 0.9, sortKey: (i) => summaries[i].peak_reserved_bytes,
      ...figure((r) => bytes(r.peak_reserved_bytes), (r) => exactBytes(r.peak_reserved_bytes), (r) => bytesShape(r.peak_reserved_bytes)),
    },
    {
      key: 'at', name: 'Peak at', kind: 'ms', min: 90, fr: 0.9,
      sortKey: (i) => (ranks[i] && !none(ranks[i].peak) ? Number(ranks[i].peak) : -Infinity),
      format: (_, { r, info }) => (failedRank(r) ? noFigure(r) : info && !none(info.peak)
        ? { text: ms(info.peak), title: timeTitle(info.origin_ns, info.peak) }
        : { text: '–', title: 'no allocator data' }),
      fit: (r, info) => (failedRank(r) || !info || none(info.peak) ? '–' : ms(info.peak)),
      shape: (r, info) => (failedRank(r) || !info || none(info.peak) ? '–' : msShape(info.peak)),
    },
    {
      key: 'fragmentation', name: 'Reserved − allocated', kind: 'bytes', min: 100, fr: 1, sortKey: (i) => summaries[i].fragmentation_bytes,
      title: 'reserved but not allocated at the peak (fragmentation)',
      ...figure((r) => bytes(r.fragmentation_bytes), (r) => `${exactBytes(r.fragmentation_bytes)} reserved but not allocated at the peak (fragmentation)`, (r) => bytesShape(r.fragmentation_bytes)),
    },
    {
      key: 'unreleased', name: 'Unreleased', kind: 'bytes', min: 110, fr: 1, sortKey: (i) => summaries[i].unreleased_bytes,
      ...figure((r) => `${int(r.unreleased_rows)} · ${bytes(r.unreleased_bytes)}`, (r) => exactBytes(r.unreleased_bytes), (r) => {
        const [a, b] = [countShape(r.unreleased_rows), bytesShape(r.unreleased_bytes)];
        return typeof a === 'number' && typeof b === 'number' ? a * 65536 + b : `${a} · ${b}`;
      }),
    },
  ];
  return cols;
}

/** Padding of a cell (.vt-cell: 8 px each side), and a pixel for rounding. */
const CELL_PAD = 17;

let measurer = null;

/** Any decimal digit, wherever it stands in a text. */
const DIGITS = /[0-9]/g;

/**
 * The width in px of the widest text `c.fit` gives of the ranks (`summaries`, `ranks`), set in
 * `font` (a CSS font's size and weight and the page's family, `c.font` or 12.5px). A text counts
 * as its characters other than digits (measured as one string) plus each digit as wide as the
 * widest digit: the cells set figures in tabular digits, and the counts under the coverage bar,
 * set in proportional ones, are given the room of the widest. Two texts of one shape — the same
 * characters besides their digits, and as many digits — are therefore as wide, and `c.shape`
 * gives each rank's shape without writing its text where it can (a count's digits, a size's
 * length and unit): only the first rank of each shape has its text written and measured, a few
 * dozen per column whatever the number of ranks. Shapes differ where a shorter text can be wider
 * than a longer one (another unit, "✕ not read" in place of a size, "–"), so each is measured.
 * The result is the width of measuring every rank's text this way (tests/browser/rank-table).
 */
function widest(c, summaries, ranks, family) {
  if (!measurer) measurer = document.createElement('canvas').getContext('2d');
  const g = measurer;
  g.font = `${c.font || '12.5px'} ${family}`;
  const shape = c.shape || c.fit;
  const first = new Map();
  for (let i = 0; i < summaries.length; i++) {
    const k = shape(summaries[i], ranks[i]);
    if (!first.has(k)) first.set(k, i);
  }
  let digit = 0;
  for (const d of '0123456789') digit = Math.max(digit, g.measureText(d).width);
  let w = 0;
  for (const i of first.values()) {
    const t = c.fit(summaries[i], ranks[i]);
    const skeleton = t.replace(DIGITS, '');
    w = Math.max(w, g.measureText(skeleton).width + (t.length - skeleton.length) * digit);
  }
  return w;
}

/**
 * The grid widths of `cols` for the rows `summaries` / `ranks`, each column at least as wide as
 * its widest cell, the least width of the whole table (`minWidth`), and the width of each fitted
 * column's widest text in whole px (`texts`, by column key: a hook for the tests and the bench):
 * `{ widths, least, texts }`.
 */
function fitColumns(cols, summaries, ranks) {
  // Its cost, for the benchmarks (performance.getEntriesByName('rank-table-fit')).
  performance.mark('rank-table-fit-start');
  const family = getComputedStyle(document.body).fontFamily || 'sans-serif';
  const texts = {};
  const widths = cols.map((c) => {
    let least = c.min;
    if (c.fit && summaries.length) {
      texts[c.key] = Math.ceil(widest(c, summaries, ranks, family));
      least = Math.max(least, texts[c.key] + CELL_PAD);
    }
    return least;
  });
  performance.measure('rank-table-fit', 'rank-table-fit-start');
  return { widths: cols.map((c, k) => `minmax(${widths[k]}px, ${c.fr}fr)`), least: widths.reduce((a, b) => a + b, 0), texts };
}

/** The call-stack coverage of a rank's rows: a bar of four parts and their counts. */
function coverage(r) {
  const st = r.stacks;
  const total = Math.max(1, st.direct + st.via_forward + st.approximate + st.none);
  const bar = el('div', { class: 'coverage' });
  for (const [k, n] of [['direct', st.direct], ['via_forward', st.via_forward], ['approximate', st.approximate], ['none', st.none]]) {
    const seg = el('span', { class: `seg ${k}` });
    seg.style.width = `${(100 * n) / total}%`;
    bar.append(seg);
  }
  return {
    nodes: [bar, el('div', { class: 'coverage-text', text: coverageText(st) })],
    title: `direct ${int(st.direct)}, via forward ${int(st.via_forward)}, approximate ${int(st.approximate)}, none ${int(st.none)} (of which ${int(r.rows_ge)} cann:: rows have no Python stack by nature)`,
  };
}

/** The counts under a rank's coverage bar, grouped as the Rows column beside them writes its count. */
function coverageText(st) {
  return `${int(st.direct)} direct · ${int(st.via_forward)} via fwd · ${int(st.approximate)} approx · ${int(st.none)} none`;
}

/** A failed rank's badge beside its number, in place of the export it was read from. */
function failedBadge(r) {
  return el('span', { class: 'source-badge failed', 'data-testid': 'rank-failed', text: failedWord(r) });
}

/** A failed rank's peak: a mark and a word, not "0 B". */
function failedMark(r) {
  return el('span', { class: 'failed-mark', 'data-testid': 'rank-failed-peak', text: `✕ ${failedWord(r)}` });
}

/** The files of a rank left out for their size, each with its size ("operator_memory.csv is 1.50 GiB"). */
function tooLargeText(r) {
  const files = r.tooLarge ? r.tooLarge.files : [];
  if (!files.length) return 'a file too large for the page';
  return files.map((f) => `${f.path.slice(f.path.lastIndexOf('/') + 1)} is ${bytes(f.bytes)}`).join('; ');
}

/** The cell of a rank left out for a file too large for the page: that file and its size, in words. */
function tooLargeFiles(r) {
  return {
    nodes: [el('span', { class: 'too-large-file', 'data-testid': 'rank-too-large-file', text: tooLargeText(r) })],
    title: failedReason(r),
  };
}

/** Which export of a rank was read: a small "db" (database) or "text" (CSV/JSON files) badge. */
function sourceBadge(r) {
  const { source } = r;
  const db = source === 'db';
  return el('span', {
    class: `source-badge ${db ? 'db' : 'text'}`,
    'data-testid': 'rank-source',
    text: db ? 'db' : source === 'text' ? 'text' : source,
    title: db ? `read from the database export (${exportNames(r).dbFiles})` : source === 'text' ? 'read from the text export (CSV and JSON files)' : 'read from both exports (runs of both kinds)',
  });
}

/**
 * The rank table of an overview: `summaries` (the report's ranks), `ranks` (their times: peak and
 * origin), `onSelect(i)` when a row is clicked or chosen with Enter, `soon(i)` (optional) when the
 * pointer presses a row, before its click. Returns { node, show(i) }: `show` highlights rank index
 * `i` (or none) and scrolls its row into view.
 */
export function rankTable(summaries, ranks, onSelect, soon = null) {
  const cols = columns(summaries, ranks);
  const fitted = fitColumns(cols, summaries, ranks);
  cols.forEach((c, k) => { c.width = fitted.widths[k]; });
  // order[k]: the rank index shown at position k; at[i]: the position of rank index i.
  let order = summaries.map((_, i) => i);
  let at = order.slice();
  // The table's model in two attributes (its ranks, their allocation rows in all), since only the
  // rows in view are in the DOM: what the benchmarks check against the command line's figures.
  const node = el('div', {
    class: 'rank-table',
    'data-testid': 'ascend-rank-table',
    'data-total': String(summaries.length),
    'data-total-rows': String(summaries.reduce((n, r) => n + r.rows, 0)),
    // Each fitted column's widest text in px, as the fit measured it (a hook for the tests).
    'data-text-widths': JSON.stringify(fitted.texts),
  });
  const table = new VirtualTable(node, {
    columns: cols,
    rowHeight: ROW_HEIGHT,
    label: 'ranks',
    unit: 'rank',
    rowTestId: 'rank-row',
    // The columns' least widths (the call stacks' counts need 310 px at five digits each), more
    // when a column's figures are wider.
    minWidth: Math.max(1200, fitted.least),
    sticky: 2,
    fetchPage: (offset, limit) => {
      const ids = order.slice(offset, offset + limit);
      return Promise.resolve({ total: order.length, offset, ids, rows: ids.map((i) => ({ r: summaries[i], info: ranks[i], i })) });
    },
    rowData: ({ r, i }) => ({
      role: r.role,
      rank: String(r.rank),
      step: none(r.step) ? '' : String(r.step),
      rows: String(r.rows),
      peakAllocatedBytes: String(r.peak_allocated_bytes),
      peakReservedBytes: String(r.peak_reserved_bytes),
      stacksDirect: String(r.stacks.direct),
      stacksViaForward: String(r.stacks.via_forward),
      unreleasedRows: String(r.unreleased_rows),
      source: r.source,
      status: tooLarge(r) ? 'too-large' : failedRank(r) ? 'error' : 'ok',
      // Which kind of rank without figures the core says it is (refused, failed, empty).
      noData: r.no_data?.kind || '',
      tooLargeBytes: r.tooLarge ? String(r.tooLarge.files.reduce((n, f) => n + f.bytes, 0)) : '',
      rankIndex: String(i),
    }),
    onRowClick: (i) => onSelect(i),
    onSortChange: ({ col, desc }) => {
      const key = cols[col].sortKey;
      const keys = summaries.map((_, i) => key(i));
      const sign = desc ? -1 : 1;
      // Ties keep the job's order, so a sort by role lists each role's ranks as the job does.
      order = summaries.map((_, i) => i).sort((a, b) => {
        const [x, y] = [keys[a], keys[b]];
        const c = typeof x === 'string' ? x.localeCompare(y) : x < y ? -1 : x > y ? 1 : 0;
        return sign * c || a - b;
      });
      at = new Array(order.length);
      order.forEach((i, k) => { at[i] = k; });
      table.refresh({ keepScroll: true }).then(() => showNow(table.selectedId));
    },
  });
  if (soon) {
    // The row the pointer rests on for REST_MS, or presses.
    const rowOf = (ev) => {
      const row = ev.target.closest && ev.target.closest('[data-rank-index]');
      return row ? Number(row.dataset.rankIndex) : null;
    };
    let rest = 0;
    node.addEventListener('pointerover', (ev) => {
      clearTimeout(rest);
      const i = rowOf(ev);
      if (i !== null) rest = setTimeout(() => soon(i), REST_MS);
    });
    node.addEventListener('pointerdown', (ev) => {
      const i = rowOf(ev);
      if (i !== null) soon(i);
    });
  }
  // The first page is a resolved promise, shown on the next microtask; `show` waits for it.
  const ready = table.refresh();

  function show(i) {
    ready.then(() => showNow(i));
  }
  // Touches the rows only when something changed (a click on a row has highlighted it already);
  // the table builds them again only when the row must be scrolled into view.
  function showNow(i) {
    const has = !none(i) && i >= 0 && i < summaries.length;
    const id = has ? i : null;
    const index = has ? at[i] : -1;
    if (table.selectedId === id && table.cursor === index && (!has || table.inView(index))) return;
    table.follow({ id, index });
  }
  return { node, show };
}
