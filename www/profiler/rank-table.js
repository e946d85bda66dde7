// The overview's table of ranks: one row per rank (role, rank and the export it was read from,
// step, rows, call-stack coverage, peaks, fragmentation, unreleased). A job of thousands of ranks
// must open and select within a frame, so the table is virtual (www/ui/virtual-table.js): only the
// rows in view exist in the DOM. Its rows come from the report already in this thread, so sorting
// is a sort of the rank indices here.
import { el } from '../ui/dom.js';
import { VirtualTable } from '../ui/virtual-table.js';
import { bytes, exactBytes, int } from '../format.js';
import { ms, timeTitle, rankText, allocatorName } from './common.js';

/** Height of a row in px: two lines (the coverage bar and its counts). */
const ROW_HEIGHT = 40;

/** How long the pointer rests on a row before `soon` is told of its rank (ms). */
const REST_MS = 40;

const none = (v) => v === null || v === undefined;

/**
 * The columns: header, width, tooltip of the header, the sort key of rank index `i`, and the
 * cell (`format` of virtual-table.js) of a row `{ r, info, i }`.
 */
function columns(summaries, ranks) {
  const rankKey = (i) => (typeof summaries[i].rank === 'number' ? summaries[i].rank : Infinity);
  return [
    {
      key: 'role', name: 'Role', width: 'minmax(90px, 1.2fr)', sortKey: (i) => summaries[i].role || '',
      format: (_, { r }) => ({ text: r.role || '(no role)', title: r.run_dirs.join('\n') }),
    },
    {
      key: 'rank', name: 'Rank', kind: 'int', width: 'minmax(92px, 0.8fr)', sortKey: rankKey,
      format: (_, { r }) => ({
        nodes: [r.rank === 'unknown' ? rankText(r) : String(r.rank), sourceBadge(r.source)],
        title: r.rank === 'unknown' ? 'profiler_info names no rank number' : '',
      }),
    },
    {
      key: 'step', name: 'Step', kind: 'int', width: 'minmax(56px, 0.4fr)', sortKey: (i) => (none(summaries[i].step) ? -1 : summaries[i].step),
      format: (_, { r }) => ({ text: none(r.step) ? '' : String(r.step), title: none(r.step) ? 'no step' : `step ${r.step}` }),
    },
    {
      key: 'rows', name: 'Rows', kind: 'int', width: 'minmax(64px, 0.6fr)', sortKey: (i) => summaries[i].rows,
      format: (_, { r }) => ({ text: int(r.rows), title: `${int(r.rows_pta)} ${allocatorName(r)} + ${int(r.rows_ge)} cann:: (GE)` }),
    },
    {
      key: 'stacks', name: 'Call stacks', width: 'minmax(310px, 2.6fr)', class: 'stacks',
      title: 'how each row’s Python call stack was found; sorts by the share found directly',
      sortKey: (i) => {
        const st = summaries[i].stacks;
        return st.direct / Math.max(1, st.direct + st.via_forward + st.approximate + st.none);
      },
      format: (_, { r }) => coverage(r),
    },
    {
      key: 'peak', name: 'Peak allocated', kind: 'bytes', width: 'minmax(88px, 0.9fr)', class: 'strong', sortKey: (i) => summaries[i].peak_allocated_bytes,
      format: (_, { r }) => ({ text: bytes(r.peak_allocated_bytes), title: `${exactBytes(r.peak_allocated_bytes)} (from ${r.peak_source})` }),
    },
    {
      key: 'reserved', name: 'Peak reserved', kind: 'bytes', width: 'minmax(88px, 0.9fr)', sortKey: (i) => summaries[i].peak_reserved_bytes,
      format: (_, { r }) => ({ text: bytes(r.peak_reserved_bytes), title: exactBytes(r.peak_reserved_bytes) }),
    },
    {
      key: 'at', name: 'Peak at', kind: 'ms', width: 'minmax(90px, 0.9fr)',
      sortKey: (i) => (ranks[i] && !none(ranks[i].peak) ? Number(ranks[i].peak) : -Infinity),
      format: (_, { info }) => (info && !none(info.peak)
        ? { text: ms(info.peak), title: timeTitle(info.origin_ns, info.peak) }
        : { text: '–', title: 'no allocator data' }),
    },
    {
      key: 'fragmentation', name: 'Reserved − allocated', kind: 'bytes', width: 'minmax(100px, 1fr)', sortKey: (i) => summaries[i].fragmentation_bytes,
      title: 'reserved but not allocated at the peak (fragmentation)',
      format: (_, { r }) => ({ text: bytes(r.fragmentation_bytes), title: `${exactBytes(r.fragmentation_bytes)} reserved but not allocated at the peak (fragmentation)` }),
    },
    {
      key: 'unreleased', name: 'Unreleased', kind: 'bytes', width: 'minmax(110px, 1fr)', sortKey: (i) => summaries[i].unreleased_bytes,
      format: (_, { r }) => ({ text: `${int(r.unreleased_rows)} · ${bytes(r.unreleased_bytes)}`, title: exactBytes(r.unreleased_bytes) }),
    },
  ];
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
    nodes: [bar, el('div', { class: 'coverage-text', text: `${st.direct} direct · ${st.via_forward} via fwd · ${st.approximate} approx · ${st.none} none` })],
    title: `direct ${st.direct}, via forward ${st.via_forward}, approximate ${st.approximate}, none ${st.none} (of which ${r.rows_ge} cann:: rows have no Python stack by nature)`,
  };
}

/** Which export of a rank was read: a small "db" (database) or "text" (CSV/JSON files) badge. */
function sourceBadge(source) {
  const db = source === 'db';
  return el('span', {
    class: `source-badge ${db ? 'db' : 'text'}`,
    'data-testid': 'rank-source',
    text: db ? 'db' : source === 'text' ? 'text' : source,
    title: db ? 'read from the database export (ascend_pytorch_profiler_*.db)' : source === 'text' ? 'read from the text export (CSV and JSON files)' : 'read from both exports (runs of both kinds)',
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
  });
  const table = new VirtualTable(node, {
    columns: cols,
    rowHeight: ROW_HEIGHT,
    label: 'ranks',
    unit: 'rank',
    rowTestId: 'rank-row',
    // The columns' minimum widths (the call stacks' counts need 310 px at five digits each).
    minWidth: 1200,
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
  // Touches the rows only when something changed (a click on a row has highlighted it already),
  // and builds them again only when the row must be scrolled into view.
  function showNow(i) {
    const has = !none(i) && i >= 0 && i < summaries.length;
    const changed = table.selectedId !== (has ? i : null);
    table.selectedId = has ? i : null;
    if (!has) {
      if (changed) table.restyle();
      return;
    }
    const moved = table.cursor !== at[i];
    table.cursor = at[i];
    if (!table.inView(at[i])) table.scrollToIndex(at[i]);
    else if (changed || moved) table.restyle();
  }
  return { node, show };
}
