// The tables: allocations alive at the peak grouped by their top user frame (memory_viz's third
// view), blocks allocated at the snapshot by frame (leak candidates), every allocation of the
// timeline, the segments with their free space, and the OOM entries. Sorted and filtered in Rust,
// paged on demand. A group row selects its group (highlighted in the charts); an allocation row
// selects the allocation. A selection made elsewhere (a pick on the timeline or the allocator
// state) is revealed: the worker says where its row sits under the table's query, and the table
// scrolls there with the keyboard cursor on it, or says that its filter hides it.
import { el } from '../ui/dom.js';
import { VirtualTable, rowsByName } from '../ui/virtual-table.js';
import { int } from '../format.js';
import { section, button } from './common.js';

const TABS = [
  { id: 'peak', label: 'At the peak, by frame', sort: { col: 1, desc: true }, empty: 'Nothing is allocated at the peak.' },
  { id: 'snapshot', label: 'At the snapshot, by frame', sort: { col: 1, desc: true }, empty: 'No block is allocated at the snapshot.' },
  { id: 'allocations', label: 'Allocations', sort: null, empty: 'No allocation matches.' },
  { id: 'segments', label: 'Segments', sort: { col: 3, desc: true }, empty: 'No segment.' },
  { id: 'ooms', label: 'OOMs', sort: null, empty: 'No OOM was recorded on this device.' },
];
const WIDE = new Set(['frame', 'file']);
// The tables whose rows are a selection of the tab's (a group of allocations, an allocation).
const SELECTS = new Set(['peak', 'snapshot', 'allocations']);
// What the status line says when the table's query does not show the selection.
const NOT_SHOWN = {
  allocations: 'the selected allocation is hidden by the filter',
  peak: 'the selected group holds nothing at the peak',
  snapshot: 'the selected group holds nothing at the snapshot',
};
const FILTERED = 'the selected group is not among the rows the filter shows';

export function tablesView({ client, store, info, onError, place }) {
  const { section: node, body, tools } = section('tables', 'Who holds the memory',
    'Click a header to sort, type to filter (substring or regular expression); click a group to highlight its allocations in the charts.');
  place(node);
  const tabs = el('div', { class: 'snap-seg', role: 'tablist', 'aria-label': 'table' });
  const filter = el('input', { type: 'search', placeholder: 'filter rows…', 'aria-label': 'filter rows', 'data-testid': 'snapshot-table-filter' });
  const regex = el('input', { type: 'checkbox', 'aria-label': 'regular expression' });
  const box = el('div', { class: 'snap-table-box' });
  const error = el('div', { class: 'error-state', hidden: true });
  tools.append(tabs, filter, el('label', { class: 'muted' }, regex, ' regex'));
  body.append(error, box);
  let current = 'peak';
  let vt = null;
  let sort = null;
  // The query the table on screen was made with: its pages and the positions asked for it use
  // this one, not the filter box as typed since (a new filter applies 150 ms later).
  let shownQuery = null;
  // The status line without a note about the selection.
  let status = '';
  let shows = 0;
  let groupOf = new Map();
  const buttons = {};
  for (const t of TABS) {
    buttons[t.id] = button(t.label, () => show(t.id), { role: 'tab', 'data-table': t.id });
    tabs.append(buttons[t.id]);
  }
  let specs = [];
  const query = () => ({
    device: store.get().device,
    table: current,
    sort: sort && specs[sort.col] ? [[specs[sort.col].name, sort.desc]] : [],
    text: filter.value ? [{ pattern: filter.value, regex: regex.checked }] : [],
  });

  async function show(id, keepSort = false) {
    const mine = ++shows;
    current = id;
    const tab = TABS.find((t) => t.id === id);
    if (!keepSort) sort = tab.sort;
    for (const t of TABS) buttons[t.id].setAttribute('aria-selected', String(t.id === id));
    error.hidden = true;
    // The table on screen is the one shown before until this one's first rows are in: it says it
    // is not the table asked for, and takes no click or key meanwhile.
    stale(true);
    let first;
    let q;
    try {
      // The columns first (sort keys are column names), then the sorted first page.
      if (!specs.length || !keepSort) {
        specs = (await client.call('snapshot.table', { device: store.get().device, table: id, offset: 0, limit: 0 })).specs;
      }
      q = query();
      first = await client.call('snapshot.table', { ...q, offset: 0, limit: 1 });
    } catch (err) {
      if (mine !== shows) return;
      error.hidden = false;
      error.textContent = err.message;
      return;
    }
    // A later show (another tab, sort or filter) speaks for the table.
    if (mine !== shows) return;
    groupOf = new Map();
    box.replaceChildren();
    stale(false);
    const columns = first.specs.map((c) => ({
      key: c.name,
      name: c.name,
      kind: c.kind,
      // An address needs up to 18 characters (a 64-bit address in hex) and the cell's padding.
      width: WIDE.has(c.name) ? 'minmax(260px, 4fr)' : c.kind === 'hex' ? 'minmax(150px, 1fr)' : 'minmax(110px, 1fr)',
      minPx: WIDE.has(c.name) ? 260 : c.kind === 'hex' ? 150 : 110,
    }));
    vt = new VirtualTable(box, {
      columns,
      label: tab.label,
      rowTestId: 'snapshot-row',
      rowData: (row, rid) => ({ group: String(groupOf.get(rid) ?? '') }),
      minWidth: columns.reduce((s, c) => s + c.minPx, 0),
      // The key (frame, address or entry) stays in view while the table scrolls sideways.
      sticky: 1,
      sort,
      // The tables whose rows are the tab's selection (an allocation, a group) mark that
      // selection, wherever it was made; the segments and the OOMs, which have none, mark the row
      // clicked last (ui/virtual-table.js decides).
      isSelected: SELECTS.has(id) ? (row, rid) => {
        const st = store.get();
        if (id === 'allocations') return st.element === rid;
        const g = groupOf.get(rid);
        return g !== undefined && st.group === g;
      } : undefined,
      fetchPage: async (offset, limit) => {
        const a = await client.call('snapshot.table', { ...q, offset, limit });
        a.page.ids.forEach((rid, i) => groupOf.set(rid, a.groups[i]));
        return { total: a.page.total, offset: a.page.offset, ids: a.page.ids, rows: rowsByName(a.page) };
      },
      // A row or header of this table selects or sorts only while it is the table asked for
      // (its rows name its own kind of thing: a row of the peak table is no allocation).
      onRowClick: (rid) => {
        if (id !== current) return;
        const g = groupOf.get(rid);
        if (id === 'allocations') store.set({ element: rid, group: g ?? null, block: null });
        else if (id === 'peak' || id === 'snapshot' || id === 'segments') store.set({ group: g ?? null });
      },
      onSortChange: (s) => {
        if (id !== current) return;
        sort = s;
        show(id, true).catch(onError);
      },
    });
    shownQuery = q;
    status = '';
    const made = vt;
    await made.refresh();
    if (made !== vt) return;
    node.dataset.table = id;
    node.dataset.total = String(first.page.total);
    if (!first.page.total) vt.status.textContent = tab.empty;
    status = vt.status.textContent;
    await reveal();
  }

  /**
   * Marks the table on screen as one about to be replaced (`aria-busy`, faded, inert: no click,
   * focus or key reaches it), or as the table asked for.
   */
  function stale(on) {
    box.classList.toggle('stale', on);
    box.inert = on;
    if (on) box.setAttribute('aria-busy', 'true');
    else box.removeAttribute('aria-busy');
  }

  /** The tab's selection as table `table` holds it: `{row}`, `{group}` or null (none it holds). */
  function selected(table) {
    const st = store.get();
    if (table === 'allocations') return st.element === null ? null : { row: st.element };
    if (table === 'peak' || table === 'snapshot') return st.group === null ? null : { group: st.group };
    return null;
  }

  /**
   * Shows the selection in the table: marked at once, then, once the worker says where its row
   * sits under the table's query, scrolled into view with the cursor on it; or the status line
   * says the query does not show it. Whether the worker's answer still counts (a later pick, a
   * key move or another table came meanwhile) the table decides (ui/virtual-table.js `reveal`).
   */
  async function reveal() {
    const t = vt;
    const q = shownQuery;
    if (!t) return;
    const key = selected(q.table);
    if (status) t.status.textContent = status;
    if (!key) delete node.dataset.selectedPosition;
    let answer;
    try {
      answer = await t.reveal(key && (() => client.call('snapshot.position', { ...q, ...key })));
    } catch (err) {
      onError(err);
      return;
    }
    const { state, index } = answer;
    if (state !== 'shown' && state !== 'hidden') return;
    node.dataset.selectedPosition = String(index);
    if (state === 'hidden') t.status.textContent = `${status} · ${key.group !== undefined && q.text.length ? FILTERED : NOT_SHOWN[q.table]}`;
  }

  let timer = null;
  const refilter = () => {
    clearTimeout(timer);
    timer = setTimeout(() => show(current, true).catch(onError), 150);
  };
  filter.addEventListener('input', refilter);
  regex.addEventListener('change', refilter);
  const counts = () => {
    const d = info.summary.devices[String(store.get().device)];
    buttons.peak.textContent = `At the peak, by frame ${int(d.live_at_peak_by_frame.groups)}`;
    buttons.snapshot.textContent = `At the snapshot, by frame ${int(d.live_at_snapshot_by_frame.groups)}`;
    buttons.segments.textContent = `Segments ${int(d.segments)}`;
    buttons.ooms.textContent = `OOMs ${int(d.oom_events)}`;
    buttons.ooms.classList.toggle('bad', d.oom_events > 0);
  };
  counts();
  show(current).catch(onError);
  return {
    node,
    update(st, changed) {
      if (changed.includes('device')) {
        counts();
        show(current).catch(onError);
      } else if (vt && (changed.includes('group') || changed.includes('element'))) reveal();
    },
    destroy() {},
  };
}
