// A SOMAS table view backed by the worker: the query (sort, filter, subset) runs in Rust, pages
// come back on demand, the selected node or tensor is highlighted and scrolled to.
import { VirtualTable, formatCell, rowsByName } from '../ui/virtual-table.js';
import { hex } from './common.js';

const WIDE = new Set(['SourceNodeName', 'Name', 'NodeA', 'NodeB']);
// Ids and indices are matched against %12T, $12 and the CLI's output: no thousands separators.
const IDS = new Set(['TensorId', 'TensorA', 'TensorB', 'Index', 'SourceNodeId', 'OpId', 'OutputIndex', 'SourceStream', 'Stream', 'Type', 'LifeStart', 'LifeEnd', 'AliveFrom', 'AliveTo', 'AliveFromA', 'AliveToA', 'AliveFromB', 'AliveToB']);
const plain = (v) => (v === null ? { text: '', title: 'empty' } : { text: String(v), title: String(v) });
// v2.4+ names are full scopes (Default/network-…/layer54-Add/Add-op135): the end tells the op, so
// the cell shows it and the full name is on hover.
const scoped = (v) => {
  if (v === null) return { text: '', title: 'empty' };
  const s = String(v);
  const i = s.lastIndexOf('/', s.length - 2);
  return { text: i < 0 ? s : `…${s.slice(i)}`, title: s };
};

// An address column's minimum: a 64-bit address in hex (18 characters) and the cell's padding.
const HEX_PX = 150;

/** Column layout for a spec list: names get room, numbers a fixed minimum. */
function columns(specs) {
  return specs.map((c) => ({
    key: c.name,
    name: c.name,
    kind: c.kind,
    width: WIDE.has(c.name) ? 'minmax(220px, 3fr)' : c.kind === 'hex' ? `minmax(${HEX_PX}px, 1fr)` : 'minmax(92px, 1fr)',
    minPx: WIDE.has(c.name) ? 220 : c.kind === 'hex' ? HEX_PX : 92,
    format: c.kind === 'hex' ? (v) => (v === null ? { text: '', title: 'unknown' } : { text: hex(v), title: String(v) }) : IDS.has(c.name) ? plain : WIDE.has(c.name) ? scoped : undefined,
  }));
}

export class Grid {
  /**
   * opts: app, view (name of the worker-side view), table, label, rowTestId, rowData(row) → data,
   *       onRowClick(row), isSelected(row) → bool, sort ({col: column name, desc}), empty (text
   *       when no row matches), show (column names to show, in order; default all), sticky (how
   *       many leading key columns stay in view while the table scrolls sideways). Rows are
   *       objects keyed by column name (`row.TensorId`).
   */
  constructor(container, opts) {
    this.container = container;
    this.opts = opts;
    this.app = opts.app;
    this.request = {};
    this.sort = opts.sort || null;
    this.vt = null;
    this.specs = null;
  }

  /** Runs `request` (without sort: the grid keeps its own) and shows the first rows. */
  async query(request = this.request) {
    this.request = request;
    const full = { ...request, sort: this.sort ? [[this.sort.key, this.sort.desc]] : [] };
    const res = await this.app.call('table', { view: this.opts.view, table: this.opts.table, request: full });
    const key = JSON.stringify(res.columns);
    if (!this.vt || key !== this.specs) {
      this.specs = key;
      const shown = this.opts.show ? this.opts.show.map((n) => res.columns.find((c) => c.name === n)).filter(Boolean) : res.columns;
      this.columns = columns(shown);
      const sortIndex = this.sort ? this.columns.findIndex((c) => c.key === this.sort.key) : -1;
      this.vt = new VirtualTable(this.container, {
        columns: this.columns,
        label: this.opts.label,
        rowTestId: this.opts.rowTestId,
        rowData: this.opts.rowData,
        isSelected: this.opts.isSelected,
        minWidth: this.columns.reduce((s, c) => s + c.minPx, 0),
        sticky: this.opts.sticky || 0,
        sort: sortIndex >= 0 ? { col: sortIndex, desc: this.sort.desc } : null,
        fetchPage: async (offset, limit) => {
          const page = await this.app.call('page', { view: this.opts.view, offset, limit });
          return { ...page, rows: rowsByName(page) };
        },
        onRowClick: (id, row) => this.opts.onRowClick && this.opts.onRowClick(row, id),
        onSortChange: (sort) => {
          this.sort = { key: this.columns[sort.col].key, desc: sort.desc };
          this.query().catch(this.app.error);
        },
      });
    }
    await this.vt.refresh();
    this.total = res.total;
    if (!res.total && this.opts.empty) this.vt.status.textContent = this.opts.empty;
    return res;
  }

  /** Column index by header name. */
  col(name) {
    return this.columns ? this.columns.findIndex((c) => c.name === name) : -1;
  }

  /**
   * The selection changed: the table marks it at once and, once the worker says where the row of
   * `key` is, scrolls to it with the cursor on it (no row when the view does not hold it); the
   * table decides whether that answer still counts (ui/virtual-table.js `reveal`).
   */
  async reveal(key) {
    if (!this.vt) return;
    const view = this.opts.view;
    const none = key === null || key === undefined;
    await this.vt.reveal(none ? null : () => this.app.call('position', { view, key }));
  }
}

export { formatCell };

/** The tensor columns that matter in a frame or a query answer (the Tables view has them all). */
export const COMPACT = ['TensorId', 'SourceNodeName', 'StartAddr', 'EndAddr', 'AlignSize', 'AliveFrom', 'AliveTo', 'TensorType', 'LifeLong', 'Conflicts'];
