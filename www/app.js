// memlens page: wiring between the user's files, the analysis worker and the views.
// Layout, drawing and interaction only; every figure comes from the Rust core in the worker.
import { EngineClient, Cancelled } from './engine-client.js';
import { fromInput, fromDataTransfer, givenNames } from './files.js';
import { loadManifest, loadExampleFile } from './examples-source.js';
import { renderInventory } from './inventory-view.js';
import { bytes, int, plural } from './format.js';
import { analyses } from './analyses.js';
import * as hash from './ui/hash-state.js';
import { el } from './ui/dom.js';
import { showServed } from './served-files.js';
import { mountCompare } from './compare/page.js';
import { comparablePair, showOffer } from './compare/offer.js';
import { selectGroupOnNextView } from './profiler/state.js';
import { warmReaders } from './worker-pool.js';

const $ = (id) => document.getElementById(id);
const client = new EngineClient();
// The pool's readers for the first drop start once the page's own engine is ready (they would
// compete with its start) and the page is idle; a page whose engine failed starts none.
client.engine.then(() => warmReaders(), () => {});

// ---- engine badge -------------------------------------------------------------------------
client.engine.then(
  (e) => {
    const badge = document.querySelector('[data-testid="engine"]');
    badge.dataset.threads = String(e.threads);
    badge.dataset.build = e.build;
    if (e.build === 'native') {
      badge.textContent = `native engine, ${e.threads} threads`;
      badge.title = `memlens ${e.version}, the native engine of memlens serve: it reads the served files where they are`;
      // The native engine reads files where it runs: the served list replaces drops and examples.
      $('drop-zone').classList.add('native');
      document.querySelector('.drop-title').textContent = 'Pick a profiler job, a SOMAS dump or any folder that memlens serve shares:';
      showServed($('served'), (path, size) => load([{ path, size, served: true }]));
      return;
    }
    // Plain words on the badge; the technical reason and what to do in its tooltip.
    badge.textContent = e.build === 'threads' ? `${e.threads} threads` : 'single-threaded: open it from a web server for threads';
    badge.title = `memlens ${e.version}, ${e.build === 'threads' ? 'threaded' : 'single-threaded'} WebAssembly engine${e.build === 'threads' ? '' : ` (${e.reason || 'the page is not cross-origin isolated'}). The README’s “Hosting” section says how to serve memlens so that it runs on every core.`}`;
  },
  (err) => {
    const badge = document.querySelector('[data-testid="engine"]');
    badge.textContent = 'engine failed';
    setStatus('error');
    showErrors([`The analysis engine could not start: ${err.message}`]);
  },
);

// ---- status, progress, errors -------------------------------------------------------------
/**
 * Shows `state` (idle, loading, ready, error, cancelled) and `text`. The status also carries the
 * number of the load it speaks for (`data-load`, the `loadSeq` of that moment): a new drop reaches
 * `load()` only after its folders are listed, and until then the status still says what the
 * previous drop came to; a test waits for a later number, not just for `ready`.
 */
function setStatus(state, text) {
  const s = document.querySelector('[data-testid="status"]');
  s.dataset.state = state;
  s.dataset.load = String(loadSeq);
  s.textContent = text || state;
}

/** Shows `label: done / total` (or `label` alone when `numbers` is false: it says it all). */
function showProgress(label, done, total, numbers = true) {
  $('progress').hidden = false;
  $('progress-label').textContent = total && numbers ? `${label}: ${int(done)} / ${int(total)}` : label;
  $('progress-bar').style.width = total ? `${Math.min(100, (100 * done) / total).toFixed(1)}%` : '0%';
}

function hideProgress() {
  $('progress').hidden = true;
}

function showErrors(messages) {
  const list = $('error-list');
  list.replaceChildren(...messages.map((m) => {
    const li = document.createElement('li');
    li.textContent = m;
    return li;
  }));
  $('errors').hidden = messages.length === 0;
}

// ---- loading ------------------------------------------------------------------------------
let loadSeq = 0;
// Whether a drop has been analysed (its tabs are shown below the drop zone).
let analysed = false;

/**
 * The drop zone shrinks to one line once there is something under it: an analysed drop or the
 * Compare mode. Its one line says what a drop does then.
 */
function compactDropZone() {
  const comparing = !$('compare-root').hidden;
  $('drop-zone').classList.toggle('compact', analysed || comparing);
  // "Add files…" adds to an analysis: there is none to add to in the Compare mode alone.
  $('drop-zone').classList.toggle('analysed', analysed);
  $('drop-replace').textContent = analysed ? 'Drop files to replace this analysis' : 'Drop files to analyse them on their own';
}

// True from a drop until its analyses are ready (or failed): the worker is busy with it.
let busy = false;

/**
 * Stops the load in progress within moments, whatever the worker is doing: the worker is
 * terminated (its memory goes with it) and a fresh one starts; the views of the stopped load go.
 */
function stopWork() {
  loadSeq++;
  busy = false;
  client.restart();
  for (const m of mounted) if (m.handle && m.handle.unmount) m.handle.unmount();
  mounted = [];
  $('analysis-panels').replaceChildren();
  $('tabs').replaceChildren();
  $('tabs').hidden = true;
  hideProgress();
}

$('cancel-button').addEventListener('click', () => {
  if (!busy) return;
  stopWork();
  $('inventory').hidden = true;
  analysed = false;
  compactDropZone();
  showErrors([]);
  setStatus('cancelled', 'cancelled');
});

// What the current analysis was made of: "Add files…" loads these and the new ones together.
let loadedItems = [];

/** `items` added to the loaded ones; a path given again is the new file. */
function withLoaded(items) {
  const paths = new Set(items.map((i) => i.path));
  return [...loadedItems.filter((i) => !paths.has(i.path)), ...items];
}

// The job summary files of the last drop. A drop that brings run folders and no summary opens
// them beside these (a rank's raw folder dropped after the summary of its job replaces that
// rank's summary and opens its full views); any other drop replaces them.
let keptSummaries = [];

/**
 * The worker's `load` request for a file list, with the names it was given as (`given`: the
 * drop's top-level names, which hold the folders without files).
 */
function loadRequest(items, given = []) {
  // A served path (memlens serve) has no File: the native engine reads it where it lies.
  const files = items.filter((i) => i.file || i.served).map(({ path, file }) => ({ path, file }));
  const unreadable = items.filter((i) => !i.file && !i.served).map(({ path, size, error }) => ({ path, size, error }));
  return { files, unreadable, given: givenNames(items, given) };
}

/**
 * Sends a file list to the worker and shows what it found. `given`: the names dropped, when they
 * may hold more than the items do (a folder without files); the core's answer names them.
 */
async function load(items, given = []) {
  // A new drop while the previous one is still being read replaces it at once.
  if (busy) stopWork();
  const seq = ++loadSeq;
  loadedItems = items;
  const { unreadable } = loadRequest(items);
  if (items.length === 0 && given.length === 0) {
    showErrors(['Nothing to load: the drop held no files.']);
    // This load is answered (a load it stopped would otherwise leave "loading" up for good).
    setStatus('error', 'error');
    return;
  }
  showErrors([]);
  setStatus('loading', 'loading');
  busy = true;
  const total = items.reduce((s, i) => s + (i.file ? i.file.size : i.served ? i.size || 0 : 0), 0);
  showProgress(`${plural(items.length, 'file')}, ${bytes(total)}`, 0, 0);
  try {
    const onProgress = (p) => {
      if (seq === loadSeq) showProgress(p.label, p.done, p.total);
    };
    let inventory = await client.call('load', loadRequest(items, given), onProgress);
    if (seq !== loadSeq) return;
    const has = (kind) => inventory.units.some((u) => u.kind === kind);
    if (keptSummaries.length && has('ascend-run') && !has('job-summary')) {
      const kept = keptSummaries.filter((k) => !items.some((i) => i.path === k.path));
      items = [...kept, ...items];
      loadedItems = items;
      inventory = await client.call('load', loadRequest(items), onProgress);
      if (seq !== loadSeq) return;
    }
    const summaries = new Set(inventory.units.filter((u) => u.kind === 'job-summary').map((u) => u.path));
    keptSummaries = items.filter((i) => summaries.has(i.path));
    await present(seq, inventory, comparablePair(inventory, items), unreadable.map((u) => `${u.path}: ${u.error}`), items);
  } catch (err) {
    if (seq !== loadSeq || err instanceof Cancelled) return;
    setStatus('error', 'error');
    showErrors([err.message]);
  } finally {
    if (seq === loadSeq) {
      busy = false;
      hideProgress();
    }
  }
}

/**
 * Shows an analysed drop — its inputs table and one tab per analysis — with the "compare these"
 * offer for `pair` (or none) and `problems`; the status is ready when every tab is. A drop with
 * nothing to analyse says so, in the CLI's words (what was looked for, how deep, the closest
 * things found: the core's `nothing_to_analyse`), rather than a bare inputs table that is "ready".
 */
async function present(seq, inventory, pair, problems, items = null) {
  renderInventory(inventory);
  analysed = true;
  compactDropZone();
  mountAnalyses(inventory, items);
  showOffer($('compare-offer'), pair, (base, candidate) => openCompare().compare(base, candidate));
  const nothing = inventory.nothing_to_analyse ? [inventory.nothing_to_analyse.text] : [];
  showErrors([...nothing, ...problems]);
  // The analyses read their files after mounting; the page is ready when they all are.
  setStatus('loading', 'analysing');
  const outcomes = await Promise.allSettled(mounted.map((m) => m.handle && m.handle.ready));
  if (seq !== loadSeq) return;
  const failed = outcomes.filter((o) => o.status === 'rejected').map((o) => (o.reason && o.reason.message) || String(o.reason));
  showErrors([...nothing, ...problems, ...failed]);
  if (failed.length) setStatus('error', 'error');
  else if (nothing.length) setStatus('error', 'nothing to analyse');
  else setStatus('ready', 'ready');
}

/**
 * A link from the Compare mode: side `side` (0 baseline, 1 candidate) of the comparison becomes the
 * drop, already loaded in the worker, and its own view opens at `place`: { pair } (a profiler rank
 * pair: that rank, at its peak), { pair, frame } (with that frame's live group picked) or { node } /
 * { tensor } (SOMAS).
 */
async function openSide(side, place) {
  const seq = ++loadSeq;
  // A load still running is superseded (its answers are dropped), not stopped: stopping would
  // restart the worker, and the comparison this side comes from lives there.
  busy = false;
  showErrors([]);
  setStatus('loading', 'loading');
  try {
    const { inventory, rank } = await client.call('compare.open', { side, pair: place.pair ?? null });
    if (seq !== loadSeq) return;
    // The side opens at the place alone: none of the view state of what was shown before.
    forgetViewState();
    if (place.pair !== undefined) {
      hash.update({ rank: rank ?? 0, tab: 'ascend' });
      if (place.frame !== undefined) selectGroupOnNextView('live', place.frame);
    } else {
      hash.update({ 's.node': place.node ?? null, 's.tensor': place.tensor ?? null, tab: 'somas' });
    }
    // The tabs about to mount read the place just written to the hash.
    restoreNext = true;
    const done = present(seq, inventory, null, []);
    $('tabs').scrollIntoView({ block: 'start' });
    await done;
  } catch (err) {
    if (seq !== loadSeq) return;
    setStatus('error', 'error');
    showErrors([err.message]);
  }
}

$('file-input').addEventListener('change', (ev) => {
  load(fromInput(ev.target.files));
  ev.target.value = '';
});
$('folder-input').addEventListener('change', (ev) => {
  load(fromInput(ev.target.files));
  ev.target.value = '';
});
$('add-input').addEventListener('change', (ev) => {
  load(withLoaded(fromInput(ev.target.files)));
  ev.target.value = '';
});

const zone = $('drop-zone');
for (const type of ['dragenter', 'dragover']) {
  document.addEventListener(type, (ev) => {
    ev.preventDefault();
    zone.classList.add('dragging');
  });
}
document.addEventListener('dragleave', (ev) => {
  if (ev.relatedTarget === null) zone.classList.remove('dragging');
});
document.addEventListener('drop', async (ev) => {
  ev.preventDefault();
  zone.classList.remove('dragging');
  if (!ev.dataTransfer) return;
  const { items, given } = await fromDataTransfer(ev.dataTransfer);
  load(items, given);
});

// ---- tabs: the inputs table and one tab per analysis family that accepts the drop ---------
let mounted = [];

// Whether the tabs mounted next take their view state (rank, selection, filters, zoom…) from the
// URL hash. The hash restores a reload: only the first analysed drop after the page opens reads
// it, and a link from the Compare mode, which writes the place it opens. Any later drop starts
// afresh: a tab that read the hash then would open the new files at the old drop's rank, row,
// filters and zoom, which mean something else there (or nothing).
let restoreNext = true;

/** Clears every tab's view state from the URL hash (each analysis declares its keys: analyses.js). */
function forgetViewState() {
  hash.forget(analyses.flatMap((a) => a.hashKeys));
}

function mountAnalyses(inventory, items) {
  for (const m of mounted) if (m.handle && m.handle.unmount) m.handle.unmount();
  mounted = [];
  const panels = $('analysis-panels');
  panels.replaceChildren();
  const restore = restoreNext;
  restoreNext = false;
  // Cleared here, for every tab at once, before any mounts: the tabs only read the hash.
  if (!restore) forgetViewState();
  // `shared`: what one tab hands to another (the torch_npu tab's rank summaries); `dropped()`:
  // the drop as the worker's `load` request, for a tab that reads it with workers of its own
  // (null for a side of a comparison: its files are in the worker alone); `restore`: the hash
  // holds view state to restore, not a cleared slate.
  const ctx = { client, inventory, setStatus, showProgress, hideProgress, showErrors, shared: {}, restore, dropped: items ? () => loadRequest(items) : null };
  for (const a of analyses) {
    if (!a.accepts(inventory)) continue;
    const panel = el('section', { id: `panel-${a.id}`, class: 'analysis', role: 'tabpanel' });
    panel.hidden = true;
    panels.append(panel);
    mounted.push({ id: a.id, title: a.title(inventory), panel, handle: a.mount(panel, ctx) });
  }
  const tabs = $('tabs');
  tabs.replaceChildren(
    ...[{ id: 'inputs', title: 'Inputs' }, ...mounted].map((t) =>
      el('button', { type: 'button', role: 'tab', text: t.title, data: { tab: t.id }, on: { click: () => showTab(t.id) } }),
    ),
  );
  tabs.hidden = mounted.length === 0;
  const wanted = hash.get('tab');
  showTab(mounted.some((m) => m.id === wanted) ? wanted : mounted.length ? mounted[0].id : 'inputs');
}

function showTab(id) {
  $('inventory').hidden = id !== 'inputs';
  for (const m of mounted) m.panel.hidden = m.id !== id;
  for (const b of $('tabs').children) b.setAttribute('aria-selected', String(b.dataset.tab === id));
  hash.update({ tab: id });
  const m = mounted.find((x) => x.id === id);
  if (m && m.handle && m.handle.shown) m.handle.shown();
}

function cycleTab(step) {
  const ids = ['inputs', ...mounted.map((m) => m.id)];
  const current = ids.indexOf(hash.get('tab', 'inputs'));
  showTab(ids[(current + step + ids.length) % ids.length]);
}

// ---- compare: a baseline and a candidate, apart from the drop -----------------------------
let compareMode = null;
/** Shows the Compare mode (mounted on first use) or, with `toggle`, hides it when shown. */
function openCompare(toggle = false) {
  const box = $('compare-root');
  // The header status follows a comparison, unless a drop is being analysed: that one speaks.
  if (!compareMode) compareMode = mountCompare(box, client, openSide, (state, text) => busy || setStatus(state, text));
  box.hidden = toggle ? !box.hidden : false;
  // Hidden: the comparison and its two loaded sides are freed (a side opened as the drop stays).
  if (box.hidden) compareMode.close();
  $('compare-button').setAttribute('aria-expanded', String(!box.hidden));
  compactDropZone();
  hash.update({ compare: box.hidden ? null : '1' });
  if (!box.hidden) box.scrollIntoView({ block: 'start' });
  return compareMode;
}
$('compare-button').addEventListener('click', () => openCompare(true));
if (hash.get('compare') === '1') $('compare-button').click();

// ---- examples -----------------------------------------------------------------------------
loadManifest().then(
  (examples) => {
    if (!examples.length) return;
    const box = $('example-buttons');
    for (const ex of examples) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = ex.title;
      b.title = ex.description;
      b.dataset.example = ex.id;
      b.addEventListener('click', () => openExample(ex));
      box.append(b);
    }
    $('examples').hidden = false;
  },
  () => {},
);

async function openExample(ex) {
  setStatus('loading', 'loading');
  try {
    const items = [];
    for (const f of ex.files) {
      const blob = await loadExampleFile(ex.id, f);
      const name = f.split('/').pop();
      items.push({ path: `${ex.id}/${f}`, file: new File([blob], name) });
    }
    await load(items);
  } catch (err) {
    setStatus('error', 'error');
    showErrors([`The example could not be opened: ${err.message}`]);
  }
}

// ---- keyboard -----------------------------------------------------------------------------
const help = $('help');
$('help-button').addEventListener('click', () => help.showModal());
$('help-close').addEventListener('click', () => help.close());
document.addEventListener('keydown', (ev) => {
  if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLTextAreaElement) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === '?') {
    ev.preventDefault();
    if (help.open) help.close();
    else help.showModal();
  } else if (ev.key === 'o') {
    $('file-input').click();
  } else if (ev.key === 'O') {
    $('folder-input').click();
  } else if ((ev.key === '[' || ev.key === ']') && mounted.length) {
    cycleTab(ev.key === ']' ? 1 : -1);
  }
});
