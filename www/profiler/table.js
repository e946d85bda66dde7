// View 4, the allocations table: the core's rows with the Python tool's columns and memlens'
// extras, filtered (name or stack regex, size range, the brushed window, a group picked in the
// live-set or unreleased view) and sorted in Rust, paged into a virtualised table.
import { el } from '../ui/dom.js';
import { VirtualTable, rowsByName } from '../ui/virtual-table.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { ms, duration, timeTitle, section, parseBytes, rankLabel, shortFrame, allocatorName } from './common.js';

// Columns in display order; `key` names the cell in a row of the engine's allocation table
// (src/profiler/view/allocations.rs). Where-in-the-code comes early; the allocator totals and ids
// after.
// `sample`: the widest value a fixed column usually holds; its width fits that and its header
// (with the sort mark), so neither is cut off ("Allocated…", "14315…").
const COLUMNS = [
  { key: 'name', name: 'Name', kind: 'text', width: 'minmax(120px, 1.2fr)', sort: 'name', fmt: 'name' },
  { key: 'size', name: 'Size', kind: 'bytes', sample: '1023.99 MiB', sort: 'size', fmt: 'bytes' },
  { key: 'start', name: 'Allocated at', kind: 'ms', sample: '99999.999 ms', sort: 'time', fmt: 'time', title: 'ms since the capture start; sort by allocation time' },
  { key: 'duration', name: 'Duration', kind: 'ms', sample: '999.9 ms', sort: 'duration', fmt: 'duration' },
  { key: 'top_frame', name: 'Top user frame', kind: 'text', width: 'minmax(170px, 2.4fr)', sort: 'frame', fmt: 'frame', title: 'the first frame of the call stack in your code; sort by it' },
  { key: 'stack_source', name: 'Stack', kind: 'text', sample: 'approximate', title: 'how the call stack was found: direct, via_forward, approximate, none' },
  { key: 'release', name: 'Released at', kind: 'ms', sample: '99999.999 ms', sort: 'release', fmt: 'time', title: 'ms since the capture start; empty = not released in the capture' },
  { key: 'source', name: 'Source', kind: 'text', sample: 'MindSpore', fmt: 'source', title: 'the framework allocator (PTA for torch_npu, MindSpore) or GE (cann:: rows)' },
  { key: 'total_allocated', name: 'Total alloc.', kind: 'bytes', sample: '1023.99 MiB', fmt: 'bytes', title: 'allocator total allocated when this block was allocated' },
  { key: 'total_reserved', name: 'Total res.', kind: 'bytes', sample: '1023.99 MiB', fmt: 'bytes', title: 'allocator total reserved when this block was allocated' },
  { key: 'total_active', name: 'Total active', kind: 'bytes', sample: '1023.99 MiB', fmt: 'bytes', title: 'allocator total active when this block was allocated' },
  { key: 'step', name: 'Step', kind: 'int', sample: '9999' },
  { key: 'stream', name: 'Stream', kind: 'text', sample: '1431569360' },
  { key: 'device', name: 'Device', kind: 'text', sample: 'NPU:15' },
];

let measurer = null;
/** Width in px of `text` in the page's font at `weight` and `size`. */
function textWidth(text, weight, size) {
  measurer = measurer || document.createElement('canvas').getContext('2d');
  measurer.font = `${weight} ${size}px ${getComputedStyle(document.body).fontFamily}`;
  return measurer.measureText(text).width;
}

// A cell's padding on each side and the cells' font size in px (profiler.css gives the table's
// cells the same): fourteen columns fit in 1440 px with them.
const CELL_PAD = 5;
const CELL_FONT = 12;

/** A fixed column's width: the longest word of its header (headers wrap between words and before
 * the sort mark) or its sample value, whichever is wider, plus the padding. */
function fitWidth(c) {
  if (c.width) return c.width;
  const words = `${c.name}${c.sort ? ' ▼' : ''}`.split(' ');
  const head = Math.max(...words.map((w) => textWidth(w, 600, 12)));
  const value = textWidth(c.sample || '', 400, CELL_FONT);
  // 4 px of room for rounding.
  return `${Math.ceil(Math.max(head, value) + 2 * CELL_PAD + 4)}px`;
}

/** The least width of a column: its px width, or the minimum of its `minmax(…)`. */
function leastWidth(width) {
  const m = /([\d.]+)px/.exec(width);
  return m ? Number(m[1]) : 80;
}

/** The worker query for the current state (times ns relative). */
export function tableQuery(s) {
  const q = { sort: s.sort.key, descending: s.sort.desc };
  const f = s.filters;
  if (f.name) q.name = f.name;
  if (f.stack) q.stack = f.stack;
  if (f.min !== null && f.min !== undefined) q.min_size = f.min;
  if (f.max !== null && f.max !== undefined) q.max_size = f.max;
  const g = s.group && s.group.frame !== null && s.group.frame !== undefined ? s.group : null;
  // A size-class group is its size range (within the size filter, when there is one).
  const groupRows = () => {
    if (!g.size) {
      q.frame = g.frame;
      return;
    }
    q.min_size = Math.max(g.size[0], q.min_size ?? 0);
    q.max_size = Math.min(g.size[1], q.max_size ?? Infinity);
  };
  if (g && g.kind === 'live') {
    groupRows();
    q.live_at = g.t;
  } else if (g && g.kind === 'unreleased') {
    groupRows();
    q.unreleased = true;
    if (g.window) [q.start, q.end] = g.window;
  } else {
    if (f.useWindow && s.window) [q.start, q.end] = s.window;
    if (f.unreleased) q.unreleased = true;
  }
  return q;
}

export function allocationsTable({ client, store, ranks, report, show }) {
  const input = (props) => el('input', { type: 'text', spellcheck: false, autocomplete: 'off', ...props });
  const s0 = store.get();
  const name = input({ placeholder: 'name regex', value: s0.filters.name, 'aria-label': 'Filter by name (regular expression)', 'data-testid': 'filter-name', class: 'filter-name' });
  const stack = input({ placeholder: 'call stack regex', value: s0.filters.stack, 'aria-label': 'Filter by call stack (regular expression)', 'data-testid': 'filter-stack' });
  const min = input({ placeholder: 'min size', value: s0.filters.min === null ? '' : String(s0.filters.min), size: 8, 'aria-label': 'Smallest size (e.g. 1 MiB)', title: 'bytes, or with a unit: 512 KiB, 1.5 MiB, 2G', 'data-testid': 'filter-min' });
  const max = input({ placeholder: 'max size', value: s0.filters.max === null ? '' : String(s0.filters.max), size: 8, 'aria-label': 'Largest size (e.g. 1 GiB)', title: 'bytes, or with a unit: 512 KiB, 1.5 MiB, 2G', 'data-testid': 'filter-max' });
  const useWindow = el('input', { type: 'checkbox', checked: s0.filters.useWindow, 'data-testid': 'filter-window' });
  const unreleased = el('input', { type: 'checkbox', checked: s0.filters.unreleased, 'data-testid': 'filter-unreleased' });
  const chips = el('span', { class: 'chips' });
  const problem = el('span', { class: 'filter-problem', role: 'status' });
  const toolbar = el('div', { class: 'toolbar' },
    name, stack, min, max,
    el('label', { class: 'toggle', title: 'Only allocations made inside the time window brushed on a chart' }, useWindow, 'in the window'),
    el('label', { class: 'toggle', title: 'Only allocations not released by the end of the window (or of the capture)' }, unreleased, 'unreleased only'),
    chips, problem);
  const { node, body, titleNode } = section(4, 'table', 'Allocations', {
    help: 'One row per operator_memory row. Click a header to sort; ↑/↓, PgUp/PgDn, Home/End move, Enter selects. “/” focuses the name filter.',
  });
  const box = el('div', { class: 'ascend-table', 'data-testid': 'ascend-table' });
  body.append(toolbar, box);

  let origin = ranks[s0.rank].origin_ns;
  const cell = (text, title) => ({ text, title });
  const timeCell = (v) => (v === null || v === undefined ? cell('', 'not released in the capture') : cell(ms(v), timeTitle(origin, v)));
  const formats = {
    bytes: (v) => (v === null || v === undefined ? cell('', 'empty') : cell(bytes(v), exactBytes(v))),
    time: (v) => timeCell(v),
    duration: (v) => (v === null || v === undefined ? cell('', 'empty') : cell(duration(v), `${int(v)} ns`)),
    frame: (v) => (v ? cell(shortFrame(v), v) : cell('(no stack)', 'no call stack for this row')),
    // The core says PTA for every framework-allocator row; a MindSpore rank's allocator is MindSpore.
    source: (v) => (v === 'PTA' ? cell(allocatorName(report.ranks[requestedRank]), 'the framework allocator') : cell(v || '', v === 'GE' ? 'a cann:: row (CANN memory)' : 'empty')),
    name: (v, row) => cell(v || '(no name)', `${v}${row.unreleased ? '\nnot released in the capture' : ''}`),
  };
  const columns = COLUMNS.map((c) => {
    const col = { ...c, sortable: !!c.sort, width: fitWidth(c) };
    const f = formats[c.fmt];
    col.format = (v, row) => (f ? f(v, row) : { text: v === null || v === undefined ? '' : String(v), title: v === null || v === undefined ? 'empty' : String(v) });
    return col;
  });
  const sortCol = (key) => Math.max(0, COLUMNS.findIndex((c) => c.sort === key));

  let currentQuery = tableQuery(s0);
  let requestedRank = s0.rank;
  const vt = new VirtualTable(box, {
    columns,
    // All columns fit at 1440 px; a narrower table scrolls sideways with the name and the size
    // kept in view.
    minWidth: columns.reduce((sum, c) => sum + leastWidth(c.width), 0),
    sticky: 2,
    label: 'Allocations of the selected rank',
    rowTestId: 'alloc-row',
    rowData: (row, id) => ({ row: id, unreleased: row.unreleased ? '1' : '' }),
    sort: { col: sortCol(s0.sort.key), desc: s0.sort.desc },
    fetchPage: async (offset, limit) => {
      const page = await client.call('ascend.table', { rank: requestedRank, query: currentQuery, offset, limit });
      return { ...page, rows: rowsByName(page) };
    },
    onSortChange: ({ col, desc }) => store.set({ sort: { key: COLUMNS[col].sort || 'time', desc } }),
    onRowClick: (id) => {
      // The rows on screen are still the rank shown before until the table asks for the new
      // rank's (its update waits for the next frame): a row id there names another allocation.
      if (store.get().rank !== requestedRank) return;
      store.set({ row: id });
      show('stack');
    },
  });

  function setHooks(s, total) {
    box.dataset.rank = String(s.rank);
    box.dataset.total = String(total);
    const q = currentQuery;
    const abs = (rel) => (BigInt(origin) + BigInt(Math.round(rel))).toString();
    box.dataset.windowStartNs = q.start !== undefined ? abs(q.start) : '';
    box.dataset.windowEndNs = q.end !== undefined ? abs(q.end) : '';
    box.dataset.liveAtNs = q.live_at !== undefined ? abs(q.live_at) : '';
    box.dataset.frameFilter = q.frame !== undefined ? '1' : '';
  }

  function renderChips(s) {
    const items = [];
    const chip = (text, title, clear, testid) =>
      el('span', { class: 'filter-chip', title, 'data-testid': testid }, text, el('button', { type: 'button', class: 'chip-x', text: '×', title: 'Remove this filter', 'aria-label': `remove filter ${text}`, on: { click: clear } }));
    if (s.group && s.group.frame !== null && s.group.frame !== undefined) {
      const what = s.group.kind === 'live' ? `alive at ${ms(s.group.t)}` : 'unreleased';
      items.push(chip(`${what}: ${s.group.frame}`, 'Rows of the group picked in the live-set / unreleased view', () => store.set({ group: null }), 'chip-group'));
    }
    if (s.window && (s.filters.useWindow || (s.group && s.group.kind === 'unreleased'))) {
      items.push(chip(`window ${ms(s.window[0])} – ${ms(s.window[1])}`, 'Allocations made inside the brushed window', () => store.set({ window: null }), 'chip-window'));
    }
    useWindow.disabled = !s.window;
    chips.replaceChildren(...items);
  }

  // Only the latest refresh speaks for the table: an earlier one answering late (its query was
  // replaced while the worker ran it) must not mark the table ready with its stale count.
  let refreshes = 0;
  let answered = 0;
  // A filter typed and not yet applied (the debounce below): the rows do not show it yet.
  let typing = false;
  const settle = () => {
    if (answered === refreshes && !typing && box.dataset.state === 'loading') box.dataset.state = 'ready';
  };

  /** What the selection shows before the rows arrive: the table's title. */
  function preview(s) {
    titleNode.textContent = `Allocations — ${rankLabel(report.ranks[s.rank])}`;
  }

  async function refresh({ keepScroll = false } = {}) {
    const mine = ++refreshes;
    const s = store.get();
    requestedRank = s.rank;
    origin = ranks[s.rank].origin_ns;
    currentQuery = tableQuery(s);
    preview(s);
    renderChips(s);
    problem.textContent = '';
    name.classList.remove('invalid');
    stack.classList.remove('invalid');
    box.dataset.state = 'loading';
    try {
      await vt.refresh({ keepScroll });
      if (mine !== refreshes) return;
      answered = mine;
      setHooks(s, vt.total);
      vt.status.textContent = `${int(vt.total)} of ${plural(report.ranks[s.rank].rows, 'row')}`;
      settle();
      if (s.row !== null) await reveal(s.row);
    } catch (err) {
      if (mine !== refreshes) return;
      answered = mine;
      box.dataset.state = 'error';
      problem.textContent = err.message;
      if (/regular expression/.test(err.message)) (err.message.includes(JSON.stringify(s.filters.stack)) && s.filters.stack ? stack : name).classList.add('invalid');
    }
  }

  /**
   * Highlights row `id` (null: none) and scrolls to it, if the current filter shows it; the table
   * decides whether the worker's answer still counts (ui/virtual-table.js `reveal`).
   */
  async function reveal(id) {
    const rank = store.get().rank;
    const query = currentQuery;
    const ask = id === null ? null : () => client.call('ascend.position', { rank, query, row: id });
    const { state, index } = await vt.reveal(ask, { id });
    if (state === 'shown' || state === 'hidden') box.dataset.selectedPosition = String(index);
  }

  // Text filters apply as the user types (debounced); sizes accept units.
  let timer = null;
  const applyFilters = () => {
    clearTimeout(timer);
    typing = true;
    if (box.dataset.state === 'ready') box.dataset.state = 'loading';
    timer = setTimeout(() => {
      typing = false;
      const f = store.get().filters;
      const minV = parseBytes(min.value);
      const maxV = parseBytes(max.value);
      min.classList.toggle('invalid', min.value.trim() !== '' && minV === null);
      max.classList.toggle('invalid', max.value.trim() !== '' && maxV === null);
      // Nothing new (typed and erased): no refresh comes, the table is as it was.
      if (!store.set({ filters: { ...f, name: name.value, stack: stack.value, min: minV, max: maxV } })) settle();
    }, 200);
  };
  for (const i of [name, stack, min, max]) {
    i.addEventListener('input', applyFilters);
    i.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        applyFilters();
        vt.viewport.focus();
      } else if (ev.key === 'Escape') {
        i.value = '';
        applyFilters();
      }
    });
  }
  useWindow.addEventListener('change', () => store.set({ filters: { ...store.get().filters, useWindow: useWindow.checked } }));
  unreleased.addEventListener('change', () => store.set({ filters: { ...store.get().filters, unreleased: unreleased.checked } }));

  function update(s, changed) {
    if (changed.has('rank') || changed.has('filters') || changed.has('group') || changed.has('sort') || (changed.has('window') && (s.filters.useWindow || (s.group && s.group.kind === 'unreleased')))) {
      if (changed.has('sort')) {
        vt.sort = { col: sortCol(s.sort.key), desc: s.sort.desc };
        vt.updateSortMarks();
      }
      if (changed.has('filters')) {
        if (name.value !== s.filters.name) name.value = s.filters.name;
        if (stack.value !== s.filters.stack) stack.value = s.filters.stack;
        useWindow.checked = s.filters.useWindow;
        unreleased.checked = s.filters.unreleased;
      }
      refresh();
      return;
    }
    if (changed.has('window')) renderChips(s);
    if (changed.has('row')) reveal(s.row);
  }

  const ready = refresh();
  return { node, update, preview, ready, focusFilter: () => name.focus(), focus: () => vt.viewport.focus() };
}
