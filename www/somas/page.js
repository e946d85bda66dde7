// The SOMAS tab: picks the dump (and its task-info file) of the drop, opens it in the worker and
// lays out the seven linked views. A selection (node, tensor, address range, conflict pair) made
// in any view goes through one store, and every view shows it.
import { el } from '../ui/dom.js';
import * as hash from '../ui/hash-state.js';
import { createStore } from '../ui/store.js';
import { bytes } from '../format.js';
import { stateLine } from './common.js';
import { reveal } from '../ui/reveal.js';
import { confirmVersion } from '../inventory-view.js';
import { Overview } from './overview.js';
import { Curves } from './curves.js';
import { Layout } from './layout.js';
import { Frame } from './frame.js';
import { Tables } from './tables.js';
import { QueryView } from './query.js';
import { ExportView } from './export.js';

// Dump stages in order of preference: the solved plan first.
// The compile cache (no nodes, no names) comes last.
const STAGE_RANK = { tensor_offset: 0, allocate_info: 1, mem_info: 2, pre_processed_info: 5, offline_log: 6, cache: 7 };

/** The dumps and task-info files of an inventory, the preferred dump first in `dumps`' order. */
export function candidates(inventory) {
  const units = inventory.units || [];
  const dumps = units.filter((u) => u.kind === 'somas');
  const tasks = units.filter((u) => u.kind === 'task-info');
  return { dumps, tasks };
}

/** Index of the dump to open by default: the solved plan (tensor_offset) of the first graph. */
export function defaultDump(dumps) {
  let best = 0;
  const rank = (u) => (u.stage in STAGE_RANK ? STAGE_RANK[u.stage] : 3);
  dumps.forEach((u, i) => {
    if (rank(u) < rank(dumps[best])) best = i;
  });
  return best;
}

/**
 * Index of the task-info file read with `dump`, or -1: the one the core's classification paired
 * with it (`inventory.used_with`, the task-info file of the same graph), so that the tab, `memlens
 * PATH...` and the profiler's list of files not analysed agree on it.
 */
export function pairedTask(dump, tasks, usedWith = []) {
  if (!dump) return -1;
  return tasks.findIndex((t) => usedWith.some((u) => u.path === t.path && u.with === dump.path));
}

// What the query box says it takes, and why it takes nothing while no plan is open (by tab state).
const QUERY_PLACEHOLDER = 'node name or index, tensor %12T, address 0x…, range 0x…-0x…   ( / )';
// The box's short words (a 1024 px window shows about 28 characters of it) and the full reason.
const QUERY_CLOSED = {
  loading: { short: 'opening the dump…', why: 'Nothing to query until the dump is open.' },
  error: { short: 'no query: the dump failed', why: 'Nothing to query: the dump could not be opened (the error is below).' },
};

// The keys of the linked selection: a node, a tensor, an address range, a conflict pair.
const SELECTION = ['node', 'tensor', 'range', 'pair'];

/** The linked selection the views share (the page's store, ui/store.js), mirrored in the hash. */
function selectionStore() {
  return createStore({ node: null, tensor: null, range: null, pair: null }, {
    toHash: (now) => ({
      's.node': now.node,
      's.tensor': now.tensor,
      's.range': now.range ? (now.range.single ? now.range.start : `${now.range.start}-${now.range.end}`) : null,
      's.pair': now.pair ? now.pair.join('-') : null,
    }),
    // A held key (, and .) must not flood history.replaceState.
    hashDelay: 120,
  });
}

// The hash keys of the views of one open plan: cleared when another dump or task-info file opens.
const PLAN_KEYS = ['s.node', 's.tensor', 's.range', 's.pair', 's.lx0', 's.lx1', 's.ly0', 's.ly1', 's.cx0', 's.cx1', 's.curve', 's.table', 's.sort'];
// Every hash key of the tab: the dump and task-info file picked, and the plan's views (see
// analyses.js).
const HASH_KEYS = ['s.dump', 's.ti', ...PLAN_KEYS];

export const somasPage = {
  id: 'somas',
  title(inventory) {
    const { dumps } = candidates(inventory);
    return dumps.length > 1 ? `SOMAS (${dumps.length} dumps)` : 'SOMAS';
  },
  accepts(inventory) {
    const { dumps, tasks } = candidates(inventory);
    return dumps.length > 0 || tasks.length > 0;
  },
  hashKeys: HASH_KEYS,
  mount(panel, ctx) {
    return new SomasPage(panel, ctx);
  },
};

/** A dump's line in the selector: path · family version · graph. */
function dumpLabel(u, version) {
  return [u.path, [u.family, version].filter(Boolean).join(' '), u.graph_id !== null && u.graph_id !== undefined ? `graph ${u.graph_id}` : '']
    .filter(Boolean)
    .join(' · ');
}

class SomasPage {
  constructor(panel, ctx) {
    this.panel = panel;
    this.ctx = ctx;
    this.seq = 0;
    this.views = [];
    const { dumps, tasks } = candidates(ctx.inventory);
    this.dumps = dumps;
    this.tasks = tasks;
    this.root = el('div', { class: 'somas', data: { testid: 'somas', state: 'idle' } });
    panel.append(this.root);

    // ---- bar: dump and task-info pickers, the search box ---------------------------------
    this.dumpSelect = el('select', { data: { testid: 'somas-dump' }, 'aria-label': 'SOMAS dump', on: { change: () => this.pick() } });
    dumps.forEach((u, i) => this.dumpSelect.append(el('option', { value: String(i), text: dumpLabel(u, u.version) })));
    this.taskSelect = el('select', { data: { testid: 'somas-task-info' }, 'aria-label': 'task-info file', on: { change: () => this.pick(true) } });
    this.taskSelect.append(el('option', { value: '-1', text: 'no task-info (offsets)' }));
    tasks.forEach((u, i) => this.taskSelect.append(el('option', { value: String(i), text: `${u.path}${u.graph_id !== null ? ` · graph ${u.graph_id}` : ''}` })));
    this.searchInput = el('input', {
      type: 'search',
      class: 'somas-search',
      data: { testid: 'somas-search' },
      placeholder: QUERY_PLACEHOLDER,
      'aria-label': 'Query: node, tensor, address or address range',
      spellcheck: false,
      autocomplete: 'off',
    });
    this.searchButton = el('button', { type: 'submit', text: 'Query' });
    const form = el('form', { class: 'somas-search-form', on: { submit: (ev) => { ev.preventDefault(); this.search(this.searchInput.value); } } },
      this.searchInput, this.searchButton);
    this.bar = el('div', { class: 'somas-bar toolbar' },
      el('label', { class: 'somas-pick' }, el('span', { class: 'muted', text: 'Dump' }), this.dumpSelect),
      el('label', { class: 'somas-pick' }, el('span', { class: 'muted', text: 'Task info' }), this.taskSelect),
      form);
    this.state = el('div', { class: 'somas-state' });
    this.body = el('div', { class: 'somas-body' });
    this.root.append(this.bar, this.state, this.body);

    if (!dumps.length) {
      this.bar.hidden = true;
      this.setState('empty', 'This drop holds a task_info_graph file but no SOMAS dump. Drop the *_somas_tensor_offset_*.ir dump of the same graph with it.');
    }

    this.onKey = (ev) => this.key(ev);
    document.addEventListener('keydown', this.onKey);
    // The page reports ready (or the error) once the dump is open.
    this.ready = dumps.length ? this.start() : Promise.resolve();
  }

  /** Opens the dump of the drop: the one the hash names on a reload, else the solved plan. */
  start() {
    let d = Number(hash.get('s.dump', NaN));
    if (!(d >= 0 && d < this.dumps.length)) d = defaultDump(this.dumps);
    let t = Number(hash.get('s.ti', NaN));
    if (!(t >= -1 && t < this.tasks.length)) t = pairedTask(this.dumps[d], this.tasks, this.ctx.inventory.used_with);
    this.dumpSelect.value = String(d);
    this.taskSelect.value = String(t);
    // The hash restores a reload, or the place a Compare link opens (the page decides: ctx.restore).
    return this.open(d, t, this.ctx.restore);
  }

  unmount() {
    this.seq++;
    document.removeEventListener('keydown', this.onKey);
    for (const v of this.views) if (v.destroy) v.destroy();
  }

  /** The user chose another dump or task-info file. */
  pick(taskOnly = false) {
    const d = Number(this.dumpSelect.value);
    let t = Number(this.taskSelect.value);
    if (!taskOnly) {
      t = pairedTask(this.dumps[d], this.tasks, this.ctx.inventory.used_with);
      this.taskSelect.value = String(t);
    }
    // Another plan: the old selection and zoom mean nothing there.
    hash.forget(PLAN_KEYS);
    // The tab shows a failure itself; the page's status is about the drop.
    this.open(d, t, false).catch(() => {});
  }

  setState(state, text) {
    this.root.dataset.state = state;
    this.queryBox(state);
    this.state.replaceChildren();
    if (state === 'loading') {
      this.progressLabel = el('div', { class: 'progress-label', text: text || 'loading' });
      this.progressBar = el('div', { class: 'progress-bar' });
      this.state.append(el('div', { class: 'progress' }, this.progressLabel, el('div', { class: 'progress-track' }, this.progressBar)));
    } else if (state === 'error') {
      this.state.append(el('div', { class: 'error-state', data: { testid: 'somas-error' }, text }));
    } else if (state === 'empty') {
      this.state.append(stateLine('empty', text));
    }
  }

  /**
   * The query box asks the open plan: while none is open (the dump still opening, or failed) it
   * takes no input and says why in its place, else it would take a query nothing can answer.
   */
  queryBox(state) {
    const closed = QUERY_CLOSED[state];
    this.searchInput.disabled = !!closed;
    this.searchButton.disabled = !!closed;
    this.searchInput.placeholder = closed ? closed.short : QUERY_PLACEHOLDER;
    this.searchInput.title = closed ? closed.why : '';
    this.searchButton.title = closed ? closed.why : '';
    if (closed) this.searchInput.value = '';
  }

  progress(p) {
    if (!this.progressLabel) return;
    this.progressLabel.textContent = p.total ? `${p.label}: ${bytes(p.done)} of ${bytes(p.total)}` : p.label;
    this.progressBar.style.width = p.total ? `${Math.min(100, (100 * p.done) / p.total).toFixed(1)}%` : '100%';
    this.progressBar.classList.toggle('indeterminate', !p.total);
  }

  async open(d, t, restore) {
    const seq = ++this.seq;
    const dump = this.dumps[d];
    const task = t >= 0 ? this.tasks[t] : null;
    hash.update({ 's.dump': d, 's.ti': t });
    for (const v of this.views) if (v.destroy) v.destroy();
    this.views = [];
    this.body.replaceChildren();
    // The tab has its own loading, error and ready states (data-state on [data-testid="somas"]);
    // the first open is also the page's `ready` (see analyses.js).
    this.setState('loading', `opening ${dump.path}`);
    performance.mark('somas-open-start');
    try {
      const res = await this.ctx.client.call('somas.open', { dump: dump.path, taskInfo: task ? task.path : null }, (p) => {
        if (seq === this.seq) this.progress(p);
      });
      if (seq !== this.seq) return;
      performance.mark('somas-opened');
      // The engine's own breakdown, for the benchmark (scripts/bench-somas-page.mjs).
      const tm = res.info.timings || {};
      let at = performance.getEntriesByName('somas-open-start').pop().startTime;
      for (const [k, name] of [['read_ms', 'read'], ['parse_ms', 'parse'], ['task_info_ms', 'task-info'], ['analyse_ms', 'analyse']]) {
        if (typeof tm[k] !== 'number') continue;
        performance.measure(`somas-${name}`, { start: at, duration: tm[k] });
        at += tm[k];
      }
      this.summary = res.summary;
      this.info = res.info;
      // The inventory's version comes from the first 64 KiB; the parse saw the whole dump (a large
      // graph's parameters can fill the head before any tensor says which version wrote it). The
      // selector and the overview name the same version: the parsed one.
      const opt = this.dumpSelect.options[d];
      if (opt && res.summary.format) opt.textContent = dumpLabel(dump, res.summary.format.version);
      // The Inputs tab says the same once the whole dump is read.
      if (res.summary.format) confirmVersion(dump, res.summary.format.version);
      this.build(restore);
      this.setState('ready');
    } catch (err) {
      if (seq !== this.seq) return;
      this.setState('error', err.message);
      throw err;
    }
  }

  /** Creates the views for the open plan. */
  build(restore) {
    const store = selectionStore();
    this.store = store;
    // Answers that arrive after these views were replaced (a new drop or dump) go nowhere: the
    // worker has closed their plan, and the views are gone.
    const seq = this.seq;
    const gone = () => new Promise(() => {});
    const call = (method, params, onProgress) =>
      this.ctx.client.call(`somas.${method}`, params, onProgress).then(
        (v) => (this.seq === seq ? v : gone()),
        (e) => (this.seq === seq ? Promise.reject(e) : gone()),
      );
    const app = {
      call,
      store,
      summary: this.summary,
      info: this.info,
      restore,
      select: (patch) => store.set(patch),
      // For an action answered later that then selects (a search, c, n): `current()` turns false
      // once anything is selected or another such action is taken, and the late answer then
      // selects nothing (see ui/store.js `ask`).
      ask: () => store.ask(SELECTION),
      // For an answer that follows the current selection without selecting (the layout's zoom to
      // it): `current()` turns false once anything is selected or a selecting action is taken.
      since: () => store.since(SELECTION),
      search: (text) => this.search(text),
      focusView: (id) => this.focusView(id),
      // Brings a view into view after an action changed it (see ui/reveal.js).
      reveal: (id) => reveal(this.body.querySelector(`[data-view="${id}"]`)),
      error: (err) => this.viewError(err),
    };
    this.app = app;
    const body = this.body;
    const overview = new Overview(app, body);
    const curves = new Curves(app, body);
    const layout = new Layout(app, body);
    const pair = el('div', { class: 'somas-pair' });
    body.append(pair);
    const frame = new Frame(app, pair);
    const query = new QueryView(app, pair);
    const tables = new Tables(app, body);
    const exportView = new ExportView(app, body, { curves, layout, frame });
    app.stepConflict = (dir) => tables.stepConflict(dir);
    app.zoomToSelection = () => layout.zoomToSelection();
    app.showList = (title, ids, kind) => query.showList(title, ids, kind);
    this.views = [overview, curves, layout, frame, query, tables, exportView];
    this.layoutView = layout;
    for (const v of this.views) if (v.start) v.start();
    // Restore the selection of a reloaded page, else start at the peak node.
    const initial = { node: null, tensor: null, range: null, pair: null };
    const num = (k) => (hash.get(k) !== undefined && /^\d+$/.test(hash.get(k)) ? Number(hash.get(k)) : null);
    if (restore) {
      initial.node = num('s.node');
      initial.tensor = num('s.tensor');
      const r = /^(0x[0-9a-fA-F]+)(?:-(0x[0-9a-fA-F]+))?$/.exec(hash.get('s.range', ''));
      if (r && r[2]) initial.range = { start: r[1], end: r[2] };
      else if (r) initial.range = { start: r[1], end: `0x${(BigInt(r[1]) + 1n).toString(16)}`, single: true };
      const p = /^(\d+)-(\d+)$/.exec(hash.get('s.pair', ''));
      if (p) initial.pair = [Number(p[1]), Number(p[2])];
    }
    if (initial.node === null && this.info.peak_index !== null) initial.node = this.info.peak_index;
    store.set(initial);
  }

  viewError(err) {
    // A failed view request (e.g. a bad regular expression) is shown where it happened; this is
    // the fallback for requests with no place to show it.
    this.ctx.showErrors([err.message || String(err)]);
  }

  async search(text) {
    if (!this.app) return;
    this.searchInput.value = text;
    await this.views.find((v) => v instanceof QueryView).run(text);
  }

  focusView(id) {
    const s = this.body.querySelector(`[data-view="${id}"]`);
    if (!s) return;
    reveal(s, { top: true, flash: false });
    // The view's main control: its chart, else its table, else its first input or button.
    const target = ['canvas', '.vt-viewport', 'input', 'button'].map((q) => s.querySelector(q)).find(Boolean) || s;
    target.focus({ preventScroll: true });
  }

  // ---- keyboard: documented in index.html's help dialog -----------------------------------
  key(ev) {
    if (this.panel.hidden || !this.app || this.root.dataset.state !== 'ready') return;
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement) {
      if (ev.key === 'Escape' && t === this.searchInput) t.blur();
      return;
    }
    if (document.querySelector('dialog[open]')) return;
    const s = this.store.get();
    const views = ['overview', 'curves', 'layout', 'frame', 'query', 'tables', 'export'];
    const maxIndex = this.info.max_index;
    let handled = true;
    switch (ev.key) {
      case '/':
        this.searchInput.focus();
        this.searchInput.select();
        break;
      case 'p':
        if (this.info.peak_index !== null) this.store.set({ node: this.info.peak_index });
        this.app.reveal('frame');
        break;
      case 'm':
        if (this.info.max_address_node_index !== null) this.store.set({ node: this.info.max_address_node_index });
        this.app.reveal('frame');
        break;
      case ',':
      case '.': {
        const cur = s.node === null ? (this.info.peak_index || 0) : s.node;
        const next = Math.max(0, Math.min(maxIndex, cur + (ev.key === '.' ? 1 : -1)));
        this.store.set({ node: next });
        this.app.reveal('frame');
        break;
      }
      case 'c':
      case 'C':
        this.app.stepConflict(ev.key === 'c' ? 1 : -1);
        break;
      case 'n':
        if (s.tensor !== null) {
          this.views.find((v) => v instanceof Layout).selectProducer();
          this.app.reveal('frame');
        }
        break;
      case 'z':
        this.layoutView.zoomToSelection();
        this.app.reveal('layout');
        break;
      case 'e':
        this.views.find((v) => v instanceof ExportView).downloadZip();
        break;
      case 'Escape':
        this.store.set({ tensor: null, range: null, pair: null });
        break;
      default:
        if (/^[1-7]$/.test(ev.key)) this.focusView(views[Number(ev.key) - 1]);
        else handled = false;
    }
    if (handled) ev.preventDefault();
  }
}

