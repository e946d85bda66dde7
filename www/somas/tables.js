// Tables: nodes, tensors, parameters and conflicts with somas_tool's columns, sorted and filtered
// in Rust, paged on demand (a million rows scroll like ten). Rows select nodes and tensors;
// conflict rows select the pair and zoom the layout to it.
import { el } from '../ui/dom.js';
import * as hash from '../ui/hash-state.js';
import { int } from '../format.js';
import { section, button } from './common.js';
import { Grid } from './grid.js';
import { rowsByName } from '../ui/virtual-table.js';

const TABS = [
  { id: 'nodes', label: 'Nodes' },
  { id: 'tensors', label: 'Tensors' },
  { id: 'parameters', label: 'Parameters' },
  { id: 'conflicts', label: 'Conflicts' },
];

export class Tables {
  constructor(app, parent) {
    this.app = app;
    const sm = app.summary;
    const { section: s, body, tools } = section('tables', 'Tables', {
      help: 'click a header to sort, type to filter (substring, or a regular expression), arrows / Page Up / Page Down / Home / End move, Enter selects',
    });
    this.section = s;
    // In the document before any chart is made, so charts start at their real size.
    parent.append(s);
    this.sel = app.store.get();
    const counts = { nodes: sm.nodes, tensors: sm.tensors, parameters: sm.parameters, conflicts: sm.conflicts.length };
    this.tabButtons = {};
    const seg = el('div', { class: 'somas-seg', role: 'tablist', 'aria-label': 'table' });
    for (const t of TABS) {
      const b = button(`${t.label} ${int(counts[t.id])}`, () => this.show(t.id), { role: 'tab', data: { table: t.id } });
      if (t.id === 'conflicts' && counts.conflicts) b.classList.add('bad');
      this.tabButtons[t.id] = b;
      seg.append(b);
    }
    this.filter = el('input', { type: 'search', placeholder: 'filter rows…', 'aria-label': 'filter rows', data: { testid: 'somas-table-filter' } });
    this.regex = el('input', { type: 'checkbox', 'aria-label': 'regular expression' });
    let timer = null;
    const refilter = () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.run(), 150);
    };
    this.filter.addEventListener('input', refilter);
    this.regex.addEventListener('change', refilter);
    this.filter.addEventListener('keydown', (ev) => {
      if (ev.key === 'ArrowDown' && this.grid && this.grid.vt) {
        ev.preventDefault();
        this.grid.vt.viewport.focus();
      }
    });
    this.error = el('div', { class: 'error-state', hidden: true });
    tools.append(seg, this.filter, el('label', { class: 'muted' }, this.regex, ' regex'));
    this.box = el('div', { class: 'somas-table-box' });
    body.append(this.error, this.box);
    this.grids = {};
    this.conflictIndex = -1;
    app.store.on((st) => {
      this.sel = st;
      if (this.grid) this.grid.reveal(this.keyFor(this.current, st));
    });
  }

  start() {
    const wanted = hash.get('s.table');
    const sm = this.app.summary;
    const first = sm.conflicts.length ? 'conflicts' : sm.nodes ? 'nodes' : 'tensors';
    this.show(TABS.some((t) => t.id === wanted) ? wanted : first, true);
  }

  keyFor(table, st) {
    if (table === 'nodes') return st.node;
    if (table === 'tensors') return st.tensor;
    if (table === 'conflicts') return st.pair ? st.pair[0] : null;
    return null;
  }

  grid_(id) {
    if (this.grids[id]) return this.grids[id];
    const app = this.app;
    const sm = app.summary;
    const counts = { nodes: sm.nodes, tensors: sm.tensors, parameters: sm.parameters, conflicts: sm.conflicts.length };
    const box = el('div', { class: 'somas-grid' });
    const opts = {
      app,
      view: `table-${id}`,
      table: id,
      label: `${id} table`,
      // The key stays in view while the wide tables scroll sideways: the tensor id, the node
      // name, the parameter index, a conflict's two tensors.
      sticky: id === 'conflicts' ? 2 : 1,
      empty:
        id === 'conflicts'
          ? app.summary.conflicts_checked
            ? 'no overwrite conflict: no two tensors share memory while both alive'
            : 'not checked: offsets are not solved in this dump'
          : counts[id] === 0
            ? `this dump has no ${id}`
            : 'no row matches',
    };
    if (id === 'nodes') {
      opts.isSelected = (row) => this.sel.node !== null && row.Index === this.sel.node;
      opts.onRowClick = (row) => app.select({ node: row.Index });
    } else if (id === 'tensors') {
      opts.isSelected = (row) => this.sel.tensor !== null && row.TensorId === this.sel.tensor;
      opts.onRowClick = (row) => app.select({ tensor: row.TensorId });
    } else if (id === 'conflicts') {
      opts.rowTestId = 'conflict-row';
      opts.rowData = (row) => ({ a: Math.min(row.TensorA, row.TensorB), b: Math.max(row.TensorA, row.TensorB) });
      opts.isSelected = (row) => !!this.sel.pair && row.TensorA === this.sel.pair[0] && row.TensorB === this.sel.pair[1];
      opts.onRowClick = (row) => {
        // c and C go on from the conflict picked here (the table's cursor is the clicked row).
        this.conflictIndex = this.grids.conflicts.vt.cursor;
        this.selectPair(row);
      };
    }
    const g = new Grid(box, opts);
    g.box = box;
    this.grids[id] = g;
    return g;
  }

  async show(id, initial = false) {
    this.current = id;
    for (const [k, b] of Object.entries(this.tabButtons)) b.setAttribute('aria-selected', String(k === id));
    if (!initial) hash.update({ 's.table': id });
    this.grid = this.grid_(id);
    this.box.replaceChildren(this.grid.box);
    await this.run();
  }

  async run() {
    const g = this.grid;
    const text = this.filter.value.trim();
    try {
      await g.query(text ? { text: [{ pattern: text, regex: this.regex.checked }] } : {});
      this.error.hidden = true;
      g.reveal(this.keyFor(this.current, this.sel));
    } catch (err) {
      this.error.hidden = false;
      this.error.textContent = err.message;
    }
  }

  selectPair(row) {
    const a = Math.min(row.TensorA, row.TensorB);
    const b = Math.max(row.TensorA, row.TensorB);
    // The conflict happens where both are alive: select the first node of the overlap.
    const from = Math.max(row.AliveFromA, row.AliveFromB);
    this.app.select({ pair: [a, b], tensor: a, node: from });
    this.app.zoomToSelection && this.app.zoomToSelection();
  }

  /**
   * Selects the next (d = 1) or previous (d = -1) conflict in the conflicts table's order (c / C).
   * The place in the list (`conflictIndex`: the last conflict a step selected, or the row picked
   * in the table) moves only when a step's answer selects: a step kept from selecting because the
   * user picked something meanwhile leaves it, so the next c goes to the conflict after the last
   * one selected, none skipped. Steps taken before the previous one's answer go on from where it
   * is headed (c c: two conflicts on).
   */
  async stepConflict(d) {
    const n = this.app.summary.conflicts.length;
    if (!n) return;
    // From the place the last step is headed while its answer may still select, else from the
    // place. Positions are kept unreduced until the table's total is known.
    const last = this.stepping;
    const at = (last && last.current() ? last.at : this.conflictIndex) + d;
    // The pair comes from the worker: if the user selects something (or steps again) meanwhile,
    // this step selects nothing.
    const step = { at, current: this.app.ask() };
    this.stepping = step;
    // Right after the drop the table's first query may still be running: wait for its total.
    const counted = this.grids.conflicts && Number.isInteger(this.grids.conflicts.total);
    if (this.current !== 'conflicts' || !counted) await this.show('conflicts');
    const g = this.grids.conflicts;
    // A filter may leave no conflict row: nothing to step to.
    if (!g.total) return;
    const offset = ((at % g.total) + g.total) % g.total;
    const page = await this.app.call('page', { view: 'table-conflicts', offset, limit: 1 });
    const rows = rowsByName(page);
    if (!step.current()) return;
    this.conflictIndex = offset;
    if (rows.length) this.selectPair(rows[0]);
    // The answer is the pair on the layout, wherever the key or the overview's link was used.
    this.app.reveal('layout');
  }
}
