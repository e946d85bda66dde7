// The torch_npu tab when the page reads a job with a worker pool (`?workers=N`, see
// www/worker-pool.js): the readers send each rank's compact summary, the page's worker makes the
// job overview of them (the core's job-summary view model, as for a job summary file), and a
// rank's full views (memory over time, timeline, allocations, call stacks, export) are built when
// the rank is opened, by the page's worker reading that rank's files alone. One rank is held open
// at a time, so the tab holds the summaries of the job and one rank's detail.
import { el } from '../ui/dom.js';
import { createStore } from '../ui/store.js';
import { bytes, plural } from '../format.js';
import { throughput } from '../ui/throughput.js';
import { mountedClient } from '../ui/mounted-client.js';
import { WorkerPool, readerParams } from '../worker-pool.js';
import { joinLists } from '../json-lists.js';
import { download } from '../ui/download.js';
import { overview } from './overview.js';
import { rankLabel } from './common.js';

/**
 * Mounts the pooled tab in `root` with `size` readers. `build(root, job, ctx, onDispose,
 * options)` draws an opened rank's full views; `emptyJob(root, job)` a job without ranks.
 * `handOver(text|error)` gives the job's rank summaries to the other tabs once they are known.
 */
export function mountPooled(root, ctx, size, { build, emptyJob, handOver }) {
  let unmounted = false;
  let disposers = [];
  const pool = new WorkerPool(size, readerParams(size));
  root.dataset.workers = String(size);
  const client = mountedClient(ctx.client, () => unmounted);

  // ---- loading: one line per rank, bytes read / total ------------------------------------
  const phase = el('div', { class: 'load-phase', 'data-testid': 'ascend-phase', text: `Reading the torch_npu job with ${plural(size, 'worker')}…` });
  const list = el('ol', { class: 'load-files', 'data-testid': 'ascend-progress' });
  root.append(el('section', { class: 'panel ascend-loading' }, el('h2', { text: 'Loading' }), phase, list));

  const ready = (async () => {
    const t0 = performance.now();
    let report;
    let parts;
    try {
      parts = await client.call('ascend.parts', {});
      if (!parts.length) {
        // Nothing to share out: the page's worker says why (rejected files, no memory data).
        const job = await client.call('ascend.open', {});
        handOver(await client.call('ascend.rankSummaries', {}));
        emptyJob(root, job);
        return;
      }
      const rows = parts.map((p) => {
        const bar = el('span', { class: 'load-bar' });
        const li = el('li', { 'data-path': p.run_dirs.join(', ') },
          el('span', { class: 'load-path', text: `${rankLabel({ role: p.role, rank: p.rank ?? 'unknown', step: p.step })} — ${p.run_dirs.join(', ')}`, title: p.run_dirs.join('\n') }),
          el('span', { class: 'load-track' }, bar));
        return { li, bar };
      });
      list.replaceChildren(...rows.map((r) => r.li));
      root.dataset.files = JSON.stringify(parts.map((p) => p.run_dirs.join(', ')));
      const pace = throughput();
      const onProgress = (p) => {
        if (unmounted) return;
        const speed = pace(p.done, p.total);
        const text = `Reading: ${bytes(p.done)} of ${bytes(p.total)} (${plural(parts.length, 'rank')}, ${plural(Math.min(size, parts.length), 'worker')}) — ${speed.text}`;
        phase.textContent = text;
        phase.dataset.done = String(p.done);
        phase.dataset.rate = speed.rate === null ? '' : String(Math.round(speed.rate));
        phase.dataset.left = speed.left === null ? '' : speed.left.toFixed(1);
        ctx.showProgress(`torch_npu: ${text}`, p.done, p.total, false);
      };
      const read = await pool.summarize(ctx.dropped(), parts, onProgress);
      const ranks = joinLists(read.texts);
      handOver(ranks);
      report = await client.call('ascend.overviewOf', { ranks });
      for (const r of rows) r.bar.style.width = '100%';
      root.dataset.readers = String(read.readers);
      root.dataset.readerMemoryBytes = JSON.stringify(read.memoryBytes);
    } catch (err) {
      handOver(err);
      if (unmounted) return;
      root.dataset.state = 'error';
      root.replaceChildren(el('section', { class: 'panel' }, el('h2', { text: 'torch_npu / MindSpore profiler' }),
        el('div', { class: 'error-state', 'data-testid': 'ascend-error', text: `The job could not be analysed: ${err.message}` })));
      throw err;
    }
    if (unmounted) return;
    root.dataset.overviewMs = String(Math.round(performance.now() - t0));
    const store = createStore({ rank: report.totals.peak_rank ?? 0, cmp: null });
    const ov = overview({ report, ranks: report.times }, store);
    const opened = el('div', { class: 'ascend-opened', 'data-testid': 'ascend-opened' });
    root.replaceChildren(ov.node, saveSummary(client, parts.length), opened);
    ov.update(store.get(), new Set());
    root.dataset.state = 'overview';
    const first = openRank(opened, report, store.get().rank);
    store.on((s, changed) => {
      ov.update(s, changed);
      if (!changed || !changed.has || changed.has('rank')) openRank(opened, report, s.rank);
    });
    await first;
    if (unmounted) return;
    root.dataset.loadMs = String(Math.round(performance.now() - t0));
    root.dataset.state = 'ready';
  })();

  // The rank whose views are open (one at a time: opening another frees it in the worker).
  let openSeq = 0;
  let openedIndex = -1;
  async function openRank(box, report, index) {
    if (index === openedIndex) return;
    openedIndex = index;
    const my = ++openSeq;
    for (const d of disposers) d();
    disposers = [];
    const r = report.ranks[index];
    box.dataset.rankIndex = String(index);
    box.dataset.state = 'loading';
    box.replaceChildren(el('section', { class: 'panel' },
      el('div', { class: 'loading-state', 'data-testid': 'ascend-opening', text: `Opening ${rankLabel(r)}: reading ${r.run_dirs.join(', ')}…` })));
    if (r.status === 'error') {
      box.dataset.state = 'failed';
      box.replaceChildren(el('section', { class: 'panel' },
        el('div', { class: 'error-state', text: `${rankLabel(r)} has no figures: ${r.error || 'its analysis failed'}` })));
      return;
    }
    let job;
    try {
      job = await client.call('ascend.open', { runDirs: r.run_dirs });
    } catch (err) {
      if (my !== openSeq || unmounted) return;
      box.dataset.state = 'error';
      box.replaceChildren(el('section', { class: 'panel' },
        el('div', { class: 'error-state', 'data-testid': 'ascend-error', text: `${rankLabel(r)} could not be opened: ${err.message}` })));
      return;
    }
    if (my !== openSeq || unmounted) return;
    box.dataset.memoryBytes = String(job.memoryBytes);
    root.dataset.memoryBytes = String(job.memoryBytes);
    const views = el('div', { class: 'ascend' });
    box.replaceChildren(views);
    // A later rank's views replace these: answers for these go nowhere then.
    const mine = mountedClient(ctx.client, () => unmounted || my !== openSeq);
    await build(views, job, { ...ctx, client: mine }, (d) => disposers.push(d), { overview: false });
    if (my !== openSeq) return;
    box.dataset.state = 'ready';
    // For the benchmark: the page's worker's wasm memory with the opened rank's views drawn.
    mine.call('ascend.memory', {}).then((m) => (root.dataset.memoryReadyBytes = String(m)), () => {});
  }

  return {
    ready,
    shown() {
      window.dispatchEvent(new Event('resize'));
    },
    unmount() {
      unmounted = true;
      pool.terminate();
      for (const d of disposers) d();
      disposers = [];
    },
  };
}

/**
 * The job summary file of the read job (what `memlens profiler ROOT --summary` writes): the whole
 * job in kilobytes per rank, to open later without the raw folders.
 */
function saveSummary(client, ranks) {
  const status = el('span', { class: 'muted export-status', role: 'status' });
  const button = el('button', {
    type: 'button',
    'data-testid': 'export-job-summary',
    text: 'job.memlens.json',
    on: {
      click: async () => {
        status.textContent = 'preparing job.memlens.json…';
        try {
          const text = await client.call('ascend.summaryFile', {});
          download('job.memlens.json', new Blob([text], { type: 'application/json' }));
          status.textContent = `job.memlens.json: ${bytes(new Blob([text]).size)}`;
        } catch (err) {
          status.textContent = `job.memlens.json failed: ${err.message}`;
        }
      },
    },
  });
  return el('section', { class: 'panel ascend-pool-export' },
    el('div', { class: 'export-item' }, button,
      el('span', { class: 'muted', text: `The job summary of these ${plural(ranks, 'rank')}, as “memlens profiler ROOT --summary” writes it; the full views below are those of the rank chosen in the overview.` })),
    status);
}
