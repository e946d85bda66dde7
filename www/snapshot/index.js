// The memory-snapshot tab: opens a `_dump_snapshot` pickle in the worker (bytes read / total),
// then shows memory_viz's three views at scale — the active memory timeline, the allocator state,
// the allocations at the peak by frame — with the overview, the selected allocation's stack, the
// tables and the export, over one shared selection (device, group, allocation, block).
import { el } from '../ui/dom.js';
import * as hash from '../ui/hash-state.js';
import { mountedClient } from '../ui/mounted-client.js';
import { bytes } from '../format.js';
import { createStore, stateLine, HASH_KEYS, SELECTION_KEYS } from './common.js';
import { timelineView } from './timeline.js';
import { stateView } from './state-view.js';
import { tablesView } from './tables.js';
import { overviewView, detailView, exportView } from './details.js';

/** The analysis module (see www/analyses.js). */
export const snapshotPage = {
  id: 'snapshot',
  title: (inventory) => (inventory.units.filter((u) => u.kind === 'snapshot').length > 1 ? 'Memory snapshots' : 'Memory snapshot'),
  accepts: (inventory) => inventory.units.some((u) => u.kind === 'snapshot'),
  hashKeys: HASH_KEYS,
  mount,
};

function mount(panel, ctx) {
  const root = el('div', { class: 'snapshot', 'data-testid': 'snapshot', 'data-state': 'loading' });
  panel.append(root);
  const files = ctx.inventory.units.filter((u) => u.kind === 'snapshot');
  let unmounted = false;
  let views = [];
  let unsubscribe = null;
  const client = mountedClient(ctx.client, () => unmounted);
  const onError = (err) => ctx.showErrors([err.message || String(err)]);

  const picker = el('select', { 'aria-label': 'snapshot file', 'data-testid': 'snapshot-file' },
    ...files.map((f, i) => el('option', { value: String(i), text: `${f.path} (${bytes(f.size)})` })));
  const deviceBox = el('span', { class: 'snap-device' });
  const bar = el('div', { class: 'snap-bar panel' }, el('label', { text: 'File ' }, picker), deviceBox);
  const content = el('div', { class: 'snap-content' });
  root.append(bar, content);
  if (files.length < 2) picker.disabled = true;

  function teardown() {
    for (const v of views) v.destroy();
    views = [];
    if (unsubscribe) unsubscribe();
    unsubscribe = null;
  }

  async function open(index) {
    teardown();
    const f = files[index];
    root.dataset.state = 'loading';
    root.dataset.file = f.path;
    content.replaceChildren(el('section', { class: 'panel' }, el('h2', { text: 'Loading' }),
      stateLine('loading', `Reading ${f.path}…`)));
    const t0 = performance.now();
    performance.mark('snapshot-open-start');
    let info;
    try {
      info = await client.call('snapshot.open', { path: f.path }, (p) => {
        ctx.showProgress(`Reading ${f.path}: ${bytes(p.done)} of ${bytes(p.total)}`, p.done, p.total, false);
      });
    } catch (err) {
      ctx.hideProgress();
      root.dataset.state = 'error';
      // One bad file never stops the others: the picker stays, the message names the file.
      content.replaceChildren(el('section', { class: 'panel' }, el('h2', { text: f.path }),
        el('div', { class: 'error-state', 'data-testid': 'snapshot-error', text: `This snapshot cannot be read: ${err.message}` })));
      return;
    }
    ctx.hideProgress();
    if (unmounted) return;
    performance.mark('snapshot-opened');
    root.dataset.loadMs = String(Math.round(performance.now() - t0));
    root.dataset.memoryBytes = String(info.memoryBytes);
    root.dataset.readMs = String(Math.round(info.read_ms));
    // The worker's split of the open (ms), for the benchmark.
    root.dataset.timings = JSON.stringify({ ...info.timings, worker_ms: info.ms });
    if (!info.devices.length) {
      root.dataset.state = 'empty';
      content.replaceChildren(el('section', { class: 'panel' }, el('h2', { text: f.path }),
        stateLine('empty', 'This snapshot holds no segment and no trace entry: the allocator had reserved nothing and recorded nothing.')));
      return;
    }
    const store = createStore(info.devices);
    // Each view puts its section in the document before it makes its charts, so they start at
    // their real size.
    const deps = { client, store, info, onError, place: (node) => content.append(node) };
    const deviceSel = el('select', { 'aria-label': 'device', 'data-testid': 'snapshot-device' },
      ...info.devices.map((d) => el('option', { value: String(d.device), text: `device ${d.device}` })));
    deviceSel.value = String(store.get().device);
    deviceSel.addEventListener('change', () => store.set({ device: Number(deviceSel.value), group: null, element: null, block: null }));
    deviceBox.replaceChildren(el('label', { text: 'Device ' }, deviceSel));
    content.replaceChildren();
    const make = (fn) => {
      const v = fn(deps);
      views.push(v);
      return v;
    };
    make(overviewView);
    make(timelineView);
    make(stateView);
    make(tablesView);
    make(detailView);
    make(exportView);
    unsubscribe = store.on((st, changed) => {
      if (changed.includes('device')) deviceSel.value = String(st.device);
      for (const v of views) v.update(st, changed);
    });
    root.dataset.state = 'ready';
  }

  picker.addEventListener('change', () => {
    // Another file: the last one's device and selection mean nothing there.
    hash.forget(SELECTION_KEYS);
    hash.update({ 'n.file': picker.value });
    open(Number(picker.value));
  });
  const wanted = Number(hash.get('n.file', 0));
  const first = Number.isInteger(wanted) && wanted >= 0 && wanted < files.length ? wanted : 0;
  picker.value = String(first);
  const ready = open(first);
  return {
    ready,
    shown() {
      for (const v of views) if (v.shown) v.shown();
    },
    unmount() {
      unmounted = true;
      teardown();
    },
  };
}
