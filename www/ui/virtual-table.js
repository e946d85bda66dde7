// A virtualised table: only the rows in view exist in the DOM, pages of rows come from the worker
// (where filtering and sorting happen), so a million rows scroll as smoothly as ten.
import { el, clear } from './dom.js';
import { bytes, exactBytes, int, plural } from '../format.js';

const BLOCK = 200;

/** Default cell formatting by column kind: returns { text, title }. */
export function formatCell(kind, v) {
  if (v === null || v === undefined) return { text: '', title: 'empty' };
  switch (kind) {
    case 'bytes':
      return { text: bytes(v), title: exactBytes(v) };
    case 'int':
      return { text: int(v), title: String(v) };
    case 'hex':
      return { text: `0x${BigInt(v).toString(16)}`, title: int(v) };
    case 'float':
      return { text: Number(v).toFixed(3), title: String(v) };
    default:
      return { text: String(v), title: String(v) };
  }
}

/**
 * The rows of a page the engine sends as one array per column name (`{ids, columns: {name:
 * [cells]}}`) as objects keyed by column name: cells are looked up by name, never by position.
 */
export function rowsByName(page) {
  const names = Object.keys(page.columns);
  return page.ids.map((_, i) => Object.fromEntries(names.map((n) => [n, page.columns[n][i]])));
}

export class VirtualTable {
  /**
   * @param {HTMLElement} container
   * @param {object} opts
   *   columns: [{ key, name, kind, width, format?(value, row) → {text,title}, class? }] (`key`:
   *     the cell's name in a row; `name`: the header; `class`: more classes for its cells).
   *     `format` may return `nodes` (elements made with `el`, e.g. a badge or a bar) in place of
   *     `text`: they become the cell's content.
   *   fetchPage(offset, limit) → Promise<{ total, offset, ids, rows }> (rows: objects keyed by
   *     column key; see rowsByName)
   *   onRowClick(id, row), onSortChange({ col, desc }), rowTestId, rowData(row, id) → {attr: value}
   *   sort: { col, desc } (initial), rowHeight, label (aria-label)
   *   isSelected(row, id) → bool (the view's selection: when given, it alone marks the rows, so a
   *     row clicked before a pick made elsewhere is not left marked beside the pick; a table
   *     without it marks the row clicked or passed to select(id) last)
   *   minWidth (px: wider tables scroll sideways, the header with them)
   *   sticky (how many leading columns stay in view while the table scrolls sideways)
   *   unit (what a row is, for the count under the table: 'row' unless given)
   */
  constructor(container, opts) {
    this.opts = { rowHeight: 26, ...opts };
    this.container = container;
    this.total = 0;
    this.blocks = new Map();
    this.generation = 0;
    this.selectedId = null;
    // The row each built row element shows ({id, row}), for restyling marks without a rebuild.
    this.shown = new WeakMap();
    this.cursor = -1;
    // Counts the reveals asked and the user's own moves of the cursor (a key, a click): a reveal's
    // answer moves the cursor only while nothing counted here came after its ask (see reveal).
    this.moves = 0;
    // The viewport's scroll offset and height as last seen (by its scroll events, its resize
    // observer and our own scrolls): reading them from the element in the middle of a selection
    // made the browser lay out every change made before, once more per read.
    this.top = 0;
    this.height = null;
    this.sort = opts.sort || null;
    this.build();
  }

  build() {
    const { columns } = this.opts;
    const template = columns.map((c) => c.width || 'minmax(80px, 1fr)').join(' ');
    this.header = el('div', { class: 'vt-row vt-head', role: 'row' });
    this.header.style.gridTemplateColumns = template;
    this.stickyLeft = [];
    columns.forEach((c, i) => {
      // `sortable: false` marks a column the data source cannot sort by.
      const sortable = c.sortable !== false;
      const cell = el('div', {
        class: `vt-cell ${isNumeric(c.kind) ? 'num' : ''}${sortable ? '' : ' unsortable'}${this.stickyClass(i)}`,
        role: 'columnheader',
        text: c.name,
        // The header's own name leads its tooltip: a narrow column may cut it off.
        title: c.title ? `${c.name}: ${c.title}` : sortable ? `Sort by ${c.name}` : c.name,
        tabindex: '-1',
        on: sortable ? { click: () => this.toggleSort(i) } : {},
      });
      this.header.append(cell);
    });
    this.spacer = el('div', { class: 'vt-spacer' });
    this.rowsBox = el('div', { class: 'vt-rows', role: 'rowgroup' });
    this.viewport = el('div', { class: 'vt-viewport', tabindex: '0', role: 'grid', 'aria-label': this.opts.label || 'table' }, this.spacer, this.rowsBox);
    this.status = el('div', { class: 'vt-status muted' });
    if (this.opts.minWidth) {
      // Rows are absolutely positioned: give them, the header and the scroll extent the width.
      const w = `${this.opts.minWidth}px`;
      this.header.style.minWidth = w;
      this.rowsBox.style.minWidth = w;
      this.spacer.style.width = w;
    }
    this.viewport.addEventListener('scroll', () => {
      this.top = this.viewport.scrollTop;
      const x = this.viewport.scrollLeft;
      this.header.style.transform = `translateX(${-x}px)`;
      // The sticky header cells move back by as much as the header moved away.
      this.header.style.setProperty('--vt-sx', `${x}px`);
      this.box.classList.toggle('scrolled-x', x > 0);
      this.render();
    });
    this.viewport.addEventListener('keydown', (ev) => this.onKey(ev));
    this.headClip = el('div', { class: 'vt-head-clip' }, this.header);
    new ResizeObserver(() => {
      this.height = this.viewport.clientHeight;
      this.fitHeader();
      // The sticky columns may have moved: every row is built again.
      this.built = null;
      this.render();
    }).observe(this.viewport);
    this.box = el('div', { class: 'vt' }, this.headClip, this.viewport, this.status);
    clear(this.container).append(this.box);
    this.template = template;
    this.updateSortMarks();
  }

  /** ' sticky' (and ' sticky-last') for the leading columns that stay put, '' for the others. */
  stickyClass(i) {
    const n = this.opts.sticky || 0;
    return i < n ? ` sticky${i === n - 1 ? ' sticky-last' : ''}` : '';
  }

  /**
   * Lines the header up with the rows: the rows lose the width of the viewport's vertical scroll
   * bar, so the header's box loses it too (else its `fr` columns come out wider than the rows').
   * Measures where each sticky column starts.
   */
  fitHeader() {
    const bar = this.viewport.offsetWidth - this.viewport.clientWidth;
    this.headClip.style.paddingRight = `${Math.max(0, bar)}px`;
    const n = this.opts.sticky || 0;
    const cells = [...this.header.children];
    this.stickyLeft = cells.slice(0, n).map((c) => c.offsetLeft - (cells[0] ? cells[0].offsetLeft : 0));
  }

  toggleSort(col) {
    const desc = this.sort && this.sort.col === col ? !this.sort.desc : isNumeric(this.opts.columns[col].kind);
    this.sort = { col, desc };
    this.updateSortMarks();
    if (this.opts.onSortChange) this.opts.onSortChange(this.sort);
  }

  updateSortMarks() {
    [...this.header.children].forEach((cell, i) => {
      const on = this.sort && this.sort.col === i;
      cell.setAttribute('aria-sort', on ? (this.sort.desc ? 'descending' : 'ascending') : 'none');
      cell.dataset.sorted = on ? (this.sort.desc ? 'desc' : 'asc') : '';
    });
  }

  /**
   * Drops cached pages and fetches again (after the query changed). Resolves when shown. The
   * cursor goes: its position named a row of the old order (the view follows its selection again).
   */
  async refresh({ keepScroll = false } = {}) {
    this.generation += 1;
    this.blocks.clear();
    this.cursor = -1;
    // The rows on screen are the data's before until the first page is in: they say so, and take
    // no click (each row's click checks its generation).
    this.busy(true);
    if (!keepScroll) this.scrollTo(0);
    const gen = this.generation;
    let first;
    try {
      first = await this.opts.fetchPage(0, BLOCK);
    } catch (err) {
      // Show an empty table rather than the placeholders of the rows that are gone.
      if (gen === this.generation) {
        this.busy(false);
        this.total = 0;
        this.spacer.style.height = '0px';
        this.render();
      }
      throw err;
    }
    if (gen !== this.generation) return;
    this.busy(false);
    this.total = first.total;
    this.blocks.set(0, first);
    this.spacer.style.height = `${this.total * this.opts.rowHeight}px`;
    this.status.textContent = plural(this.total, this.opts.unit || 'row');
    this.render();
  }

  /** Marks the rows on screen as the data's before a refresh (`aria-busy`, faded), or not. */
  busy(on) {
    this.box.classList.toggle('refreshing', on);
    if (on) this.box.setAttribute('aria-busy', 'true');
    else this.box.removeAttribute('aria-busy');
  }

  async loadBlock(b) {
    if (this.blocks.has(b)) return;
    const gen = this.generation;
    this.blocks.set(b, null);
    try {
      const page = await this.opts.fetchPage(b * BLOCK, BLOCK);
      if (gen !== this.generation) return;
      this.blocks.set(b, page);
      this.render();
    } catch (err) {
      if (gen === this.generation) this.blocks.delete(b);
      this.status.textContent = `could not load rows: ${err.message}`;
    }
  }

  rowAt(index) {
    const page = this.blocks.get(Math.floor(index / BLOCK));
    if (!page) return null;
    const k = index - page.offset;
    return k >= 0 && k < page.rows.length ? { id: page.ids[k], row: page.rows[k] } : null;
  }

  /**
   * Shows the rows in view (and a few either side). A row already built for the same data is kept
   * as it is (its marks brought up to date): a scroll by a few rows builds only the rows it brings
   * in, and a second render of the same view (a scroll to a row renders at once, then its scroll
   * event renders again) builds none.
   */
  render() {
    const { rowHeight, columns } = this.opts;
    const top = this.top;
    const height = this.viewHeight() || 400;
    const first = Math.max(0, Math.floor(top / rowHeight) - 5);
    const last = Math.min(this.total, Math.ceil((top + height) / rowHeight) + 5);
    for (let b = Math.floor(first / BLOCK); b <= Math.floor(Math.max(first, last - 1) / BLOCK); b++) {
      if (b * BLOCK < this.total) this.loadBlock(b);
    }
    // Rows built for this generation of the data, by view position.
    const before = this.built && this.built.generation === this.generation ? this.built.rows : new Map();
    const kept = new Map();
    const rows = [];
    for (let i = first; i < last; i++) {
      const hit = this.rowAt(i);
      const old = before.get(i);
      if (old && (hit ? old.dataset.id === String(hit.id) : old.dataset.id === undefined)) {
        if (hit) {
          old.classList.toggle('selected', this.marked(hit.row, hit.id));
          old.classList.toggle('cursor', i === this.cursor);
        }
        kept.set(i, old);
        rows.push(old);
        continue;
      }
      const tr = el('div', { class: 'vt-row', role: 'row' });
      tr.style.gridTemplateColumns = this.template;
      tr.style.transform = `translateY(${i * rowHeight}px)`;
      tr.style.height = `${rowHeight}px`;
      if (!hit) {
        tr.append(el('div', { class: 'vt-cell muted', text: '…' }));
      } else {
        const { id, row } = hit;
        if (this.opts.rowTestId) tr.dataset.testid = this.opts.rowTestId;
        tr.dataset.id = String(id);
        tr.dataset.index = String(i);
        this.shown.set(tr, hit);
        if (this.opts.rowData) for (const [k, v] of Object.entries(this.opts.rowData(row, id))) tr.dataset[k] = String(v);
        if (this.marked(row, id)) tr.classList.add('selected');
        if (i === this.cursor) tr.classList.add('cursor');
        columns.forEach((c, k) => {
          const f = c.format ? c.format(row[c.key], row) : formatCell(c.kind, row[c.key]);
          const cls = `vt-cell ${isNumeric(c.kind) ? 'num' : ''}${c.class ? ` ${c.class}` : ''}${this.stickyClass(k)}`;
          const td = el('div', { class: cls, role: 'gridcell', text: f.nodes ? null : f.text, title: f.title }, f.nodes || null);
          if (k < this.stickyLeft.length) td.style.left = `${this.stickyLeft[k]}px`;
          tr.append(td);
        });
        // A row drawn for the data before a refresh (another rank, filter or sort) is not a row
        // of the data asked for: its id may name another row there.
        const gen = this.generation;
        tr.addEventListener('click', () => {
          if (gen !== this.generation) return;
          this.moves += 1;
          this.cursor = i;
          this.select(id);
          if (this.opts.onRowClick) this.opts.onRowClick(id, row);
        });
      }
      kept.set(i, tr);
      rows.push(tr);
    }
    this.built = { generation: this.generation, rows: kept };
    const now = this.rowsBox.children;
    if (now.length === rows.length && rows.every((tr, k) => now[k] === tr)) return;
    // Rows that stay are not taken out and put back (that would style them again).
    const stay = new Set(rows);
    for (const tr of [...now]) if (!stay.has(tr)) tr.remove();
    rows.forEach((tr, k) => {
      if (this.rowsBox.children[k] !== tr) this.rowsBox.insertBefore(tr, this.rowsBox.children[k] || null);
    });
  }

  /**
   * Whether a row is marked selected. One rule for every table: a table with a selection of its
   * view (`isSelected`) marks what that selection holds, whichever view made it; only a table
   * without one marks the row clicked last (`selectedId`).
   */
  marked(row, id) {
    return this.opts.isSelected ? !!this.opts.isSelected(row, id) : id === this.selectedId;
  }

  /** Highlights row `id` (if shown; a table with `isSelected` marks by its view's selection). */
  select(id) {
    this.selectedId = id;
    this.restyle();
  }

  /**
   * The view's selection changed elsewhere (a pick on a chart, a search, a key step in another
   * view): the marks follow it and so does the keyboard cursor, so the arrows go on from what the
   * user sees selected, not from a row clicked before. One rule for every table:
   *   id: the row now selected, for a table without `isSelected` (null: none; left out: as is)
   *   index: the selected row's view position when the view knows it (-1: the table does not
   *     hold it); the row is scrolled into view. Left out: the cursor stays on its row if that row
   *     is still marked, else goes to the first marked row among the rows fetched, else nowhere.
   */
  follow({ id, index } = {}) {
    if (id !== undefined) this.selectedId = id;
    const known = index !== undefined;
    this.cursor = known ? index : this.isMarkedAt(this.cursor) ? this.cursor : this.markedIndex();
    if (known && index >= 0 && !this.inView(index)) this.scrollToIndex(index);
    else this.restyle();
  }

  /**
   * Brings the selected row into view, for a selection whose row may not be fetched yet: marks it
   * at once (`follow`), then asks `askPosition()` where the row sits under the table's query, and
   * once it answers moves the cursor there and scrolls to it. One rule for every table: the answer
   * moves the cursor only if this is still the latest reveal, the table was neither refreshed nor
   * replaced in its container meanwhile (the position was asked of another query or another
   * table), and the user has not moved the cursor since (a key or a click; a slow answer must not
   * undo it). The caller says what the outcome means to the user.
   * @param {(() => Promise<number|null>) | null} askPosition resolves to the row's view position,
   *   or to null or a negative number when the table's query does not show the row; null when
   *   nothing is selected (the cursor then stays only on a row still marked).
   * @param {{ id?: * }} [opts] id: the selected row, for a table without `isSelected` (null: none)
   * @returns {Promise<{ state: 'shown' | 'hidden' | 'none' | 'superseded', index: number }>}
   *   shown: the cursor is on row `index`, in view; hidden: the query does not show the row (no
   *   cursor, index -1); none: nothing to reveal; superseded: the answer came too late to count
   *   (nothing moved). An `askPosition` that fails rejects, unless superseded meanwhile.
   */
  async reveal(askPosition, { id } = {}) {
    const mine = ++this.moves;
    const generation = this.generation;
    const current = () => mine === this.moves && generation === this.generation && this.box.parentNode === this.container;
    this.follow(id === undefined ? {} : { id });
    if (!askPosition) return { state: 'none', index: -1 };
    let index;
    try {
      index = await askPosition();
    } catch (err) {
      if (current()) throw err;
      return { state: 'superseded', index: -1 };
    }
    if (!current()) return { state: 'superseded', index: -1 };
    const at = typeof index === 'number' && index >= 0 ? index : -1;
    this.follow({ index: at });
    return { state: at < 0 ? 'hidden' : 'shown', index: at };
  }

  /** Whether the row at view position `index` is fetched and marked. */
  isMarkedAt(index) {
    const hit = index >= 0 ? this.rowAt(index) : null;
    return !!hit && this.marked(hit.row, hit.id);
  }

  /** The view position of the first marked row among the rows fetched, or -1. */
  markedIndex() {
    let best = -1;
    for (const page of this.blocks.values()) {
      if (!page || (best >= 0 && page.offset > best)) continue;
      const k = page.ids.findIndex((id, j) => this.marked(page.rows[j], id));
      if (k >= 0 && (best < 0 || page.offset + k < best)) best = page.offset + k;
    }
    return best;
  }

  /**
   * Moves the `selected` and `cursor` marks over the rows in the DOM without building them again:
   * a selection restyles two rows instead of laying out every row in view.
   */
  restyle() {
    for (const tr of this.rowsBox.children) {
      if (tr.dataset.id === undefined) continue;
      const hit = this.shown.get(tr);
      tr.classList.toggle('selected', !!hit && this.marked(hit.row, hit.id));
      tr.classList.toggle('cursor', Number(tr.dataset.index) === this.cursor);
    }
  }

  /** The viewport's height in px (as last laid out). */
  viewHeight() {
    if (this.height === null) this.height = this.viewport.clientHeight;
    return this.height;
  }

  /** Scrolls the viewport to `top` px (a scroll to where it is costs nothing). */
  scrollTo(top) {
    const max = Math.max(0, this.total * this.opts.rowHeight - this.viewHeight());
    const to = Math.max(0, Math.min(top, max));
    if (to === this.top) return;
    this.viewport.scrollTop = to;
    this.top = to;
  }

  /** Whether view position `index` is wholly in view. */
  inView(index) {
    const top = index * this.opts.rowHeight;
    return top >= this.top && top + this.opts.rowHeight <= this.top + this.viewHeight();
  }

  /** Scrolls so that view position `index` is visible. */
  scrollToIndex(index) {
    if (!this.inView(index)) this.scrollTo(index * this.opts.rowHeight - this.viewHeight() / 3);
    this.render();
  }

  onKey(ev) {
    const page = Math.max(1, Math.floor(this.viewHeight() / this.opts.rowHeight) - 1);
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page, Home: -Infinity, End: Infinity };
    if (ev.key in moves) {
      ev.preventDefault();
      this.moves += 1;
      // Without a cursor the keys start from the selected row, if it is fetched.
      if (this.cursor < 0) this.cursor = this.markedIndex();
      const next = Math.max(0, Math.min(this.total - 1, (this.cursor < 0 ? -1 : this.cursor) + moves[ev.key]));
      if (!Number.isFinite(next)) return;
      this.cursor = ev.key === 'Home' ? 0 : ev.key === 'End' ? this.total - 1 : next;
      this.scrollToIndex(this.cursor);
    } else if (ev.key === 'Enter' && this.cursor >= 0) {
      const hit = this.rowAt(this.cursor);
      if (hit) {
        this.select(hit.id);
        if (this.opts.onRowClick) this.opts.onRowClick(hit.id, hit.row);
      }
    }
  }
}

function isNumeric(kind) {
  return ['bytes', 'int', 'ns', 'hex', 'float', 'ms'].includes(kind);
}
