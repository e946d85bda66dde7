// The torch_npu tab when the page reads a job with a worker pool (see www/worker-pool.js): the
// readers send each rank's compact summary and the facts the views need of it (origin, end, peak
// time, steps), the page's worker makes the job overview of the summaries (the core's job-summary
// view model, as for a job summary file), and the views are the ones the page's one worker draws.
// Their questions about the first rank (the one the tab opens) go to the reader that read it, which
// kept its analysis and stays; questions about any other rank go to the page's worker, which reads
// that rank's files alone when first asked and holds the two ranks asked about last (the opened one
// and the one compared with it), so the tab holds the summaries of the job and three ranks' detail
// at most. The job-wide exports are made by a worker started for them alone, which reads the whole
// job once, writes them all and is gone afterwards; the tab keeps the files until a new drop.
import { el } from '../ui/dom.js';
import { bytes, plural } from '../format.js';
import { throughput } from '../ui/throughput.js';
import { mountedClient } from '../ui/mounted-client.js';
import { EngineClient } from '../engine-client.js';
import { WorkerPool, readerParams } from '../worker-pool.js';
import { joinLists } from '../json-lists.js';
import { download } from '../ui/download.js';
import { JOB_EXPORTS } from './export.js';
import { rankLabel } from './common.js';
import { noneRead, markLeftOut } from './file-limit.js';

/**
 * Mounts the pooled tab in `root` with `size` readers. `screened` is the drop's per-file check
 * (file-limit.js `screenDrop`: null, or the ranks left out and the panel naming their files).
 * `build(root, job, ctx, onDispose, options)` draws the views of a job, `emptyJob(root, job)` a
 * job without ranks (returning the error the load settles with, or null), `failed(root, err)` the error panel. `handOver(text|error|promise)` gives
 * the job's rank summaries to the other tabs once they are known. A job of fewer than two ranks has nothing to share out: it is
 * read by `single()` (the one-worker tab, mounted in `root`) instead.
 */
export function mountPooled(root, ctx, size, screened, { build, emptyJob, failed, handOver, single }) {
  let unmounted = false;
  let disposers = [];
  let inner = null;
  const exporters = new Set();
  const pool = new WorkerPool(size, readerParams(size));
  root.dataset.workers = String(size);
  const client = mountedClient(ctx.client, () => unmounted);

  // ---- loading: one line per rank, bytes read / total ------------------------------------
  const phase = el('div', { class: 'load-phase', 'data-testid': 'ascend-phase', text: `Reading the torch_npu job with ${plural(size, 'worker')}…` });
  const list = el('ol', { class: 'load-files', 'data-testid': 'ascend-progress' });
  root.append(el('section', { class: 'panel ascend-loading' }, el('h2', { text: 'Loading' }), phase, list));

  // Exports of the whole job: read by a worker of their own, so that the page's worker never
  // holds more than two ranks. It writes every job-wide export in one pass and is gone; the files
  // are kept as blobs until the tab goes (a new drop), so another click reads nothing again.
  let exports = null;
  // The run folders a worker reads the whole job of (the exports, an empty job's reasons): every
  // rank's (null), or those of the ranks read when some were left out.
  let readDirs = null;
  // The db exports read from their run's text files instead (file-limit.js `screenDrop`).
  let leaveDbs = null;
  // The reader that kept the first rank's analysis, and that rank's index (-1: none kept).
  let keeper = null;
  let keptRank = -1;
  // Ranks (index in the job) whose reader failed or died, with the reason.
  const unreadRanks = new Map();
  const exportJob = (name) => {
    if (!exports) {
      exports = (async () => {
        const worker = new EngineClient();
        worker.engine.catch(() => {});
        exporters.add(worker);
        try {
          await worker.call('load', ctx.dropped());
          // Ranks left out for a file over the limit are left out of the exports too (reading
          // them would take more memory than the worker has).
          const files = await worker.call('ascend.exportJob', { names: JOB_EXPORTS.map(([n]) => n), runDirs: readDirs, leaveDbs });
          root.dataset.exportReads = String(Number(root.dataset.exportReads || 0) + 1);
          return new Map(JOB_EXPORTS.map(([n, type]) => [n, new Blob([files[n]], { type })]));
        } finally {
          exporters.delete(worker);
          if (worker.worker) worker.terminate();
        }
      })();
      // A failed pass is tried again at the next click.
      exports.catch(() => (exports = null));
    }
    return exports.then((files) => {
      if (!files.has(name)) throw new Error(`no export named ${name}`);
      return files.get(name);
    });
  };

  // Marks for the benchmark (performance.getEntriesByType('mark')): where the time to the
  // overview goes.
  const mark = (name) => performance.mark(`ascend:${name}`);
  const ready = (async () => {
    const t0 = performance.now();
    mark('mount');
    // The readers' engines start, and they classify the drop, while the page's worker lists the
    // job's ranks; a job of fewer ranks than readers ends the ones it does not need.
    const runs = (ctx.inventory?.units || []).filter((u) => u.kind === 'ascend-run').length;
    if (runs >= 2) pool.start(ctx.dropped(), runs);
    let job;
    let parts;
    let notice = null;
    try {
      const all = await client.call('ascend.parts', {});
      mark('parts');
      // Ranks with a file larger than a tab can hold are not read: the page says which, and why.
      const screen = await screened;
      if (unmounted) return;
      // (The screen's parts are weighed with the dbs read as text left out.)
      parts = screen ? screen.all.filter((p) => !screen.skipped(p)) : all;
      notice = screen ? screen.notice : null;
      if (screen && screen.none) {
        pool.terminate();
        noneRead(root, screen);
        handOver(new Error('every rank of the job has a file larger than a tab can hold'));
        return;
      }
      if (notice) {
        root.prepend(notice);
        readDirs = screen.kept;
        leaveDbs = screen.leaveDbs;
      }
      if (all.length < 2) {
        // One rank (or none: the one worker says why) is read by the page's worker alone.
        pool.terminate();
        root.replaceChildren();
        delete root.dataset.workers;
        inner = single();
        handOver(inner.ready.then(() => ctx.client.call('ascend.rankSummaries', {})));
        return inner.ready;
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
      // The reader of the first rank keeps its analysis: the tab opens that rank first, and the
      // reader answers about it, so the page's worker does not read it a second time.
      const read = await pool.summarize(ctx.dropped(), parts, onProgress, parts[0].run_dirs, leaveDbs);
      mark('summarized');
      // Ranks whose reader failed or died are in the job as failed ranks, with the reason; so are
      // the ranks left out for a file larger than the page reads (marked so below).
      const unread = [
        ...read.failed.map((f) => ({ part: parts[f.index], error: `not read: ${f.error}` })),
        ...(screen ? screen.leftOut.map((l) => ({ part: l.part, error: l.error })) : []),
      ];
      const lost = unread.length ? await client.call('ascend.failedRanks', { failed: unread }) : '[]';
      const ranks = joinLists([...read.texts, lost]);
      handOver(ranks);
      const report = await client.call('ascend.overviewOf', { ranks });
      markLeftOut(report.ranks, screen);
      mark('overviewOf');
      root.dataset.timings = JSON.stringify({ readers: read.timings.map((r) => ({ ...r, spawn: Math.round(r.spawn), engine: Math.round(r.engine), loaded: Math.round(r.loaded), answered: Math.round(r.answered) })) });
      for (const r of rows) r.bar.style.width = '100%';
      root.dataset.readers = String(read.readers);
      root.dataset.readerRuns = String(read.runs);
      root.dataset.readerMemoryBytes = JSON.stringify(read.memoryBytes);
      if (report.totals.ranks_with_data === 0) {
        pool.terminate();
        // Nothing to draw: the page's worker reads the drop to say which files it rejected, and why.
        const settled = emptyJob(root, await client.call('ascend.open', readDirs ? { runDirs: readDirs, leaveDbs } : {}));
        if (notice) root.prepend(notice);
        // The core's verdict: no rank read anything, and the tab's load settles as an error.
        if (settled) throw settled;
        return;
      }
      const runDirs = report.ranks.map((r) => r.run_dirs);
      // A rank whose reader died is not read again by the page's worker (it would likely die too):
      // its views say why at once.
      for (const u of unread) {
        const at = runDirs.findIndex((d) => d.join('\n') === u.part.run_dirs.join('\n'));
        if (at >= 0) unreadRanks.set(at, u.error);
      }
      root.dataset.unreadRanks = JSON.stringify([...unreadRanks.keys()]);
      await client.call('ascend.openRanks', { runDirs, leaveDbs });
      if (read.keeper) {
        keeper = read.keeper;
        keptRank = (await keeper.call('ascend.openRanks', { runDirs, leaveDbs })).kept;
        if (keptRank < 0) pool.end(keeper);
      }
      mark('openRanks');
      job = { report, ranks: rankInfos(report, read.infos), memoryBytes: read.memoryBytes };
    } catch (err) {
      // The readers started ahead, or a reader that kept a rank, are of no use now.
      pool.terminate();
      handOver(err);
      if (unmounted) return;
      // An error the tab already shows (an empty job's panel) keeps its panel.
      if (!err.shown) failed(root, err);
      throw err;
    }
    if (unmounted) return;
    root.dataset.overviewMs = String(Math.round(performance.now() - t0));
    mark('build');
    const views = mountedClient({
      call: (method, params, onProgress) => {
        if (method === 'ascend.export') return exportJob(params.name);
        if (method.startsWith('ascend.') && unreadRanks.has(params?.rank)) return Promise.reject(new Error(unreadRanks.get(params.rank)));
        if (keptRank >= 0 && method.startsWith('ascend.') && params?.rank === keptRank) return keeper.call(method, params, onProgress);
        return ctx.client.call(method, params, onProgress);
      },
    }, () => unmounted);
    await build(root, job, { ...ctx, client: views }, (d) => disposers.push(d), { before: notice, after: saveSummary(client, job.report.ranks.length) });
    if (unmounted) return;
    root.dataset.loadMs = String(Math.round(performance.now() - t0));
    // For the benchmark: the page's worker's wasm memory with the first rank's views drawn.
    client.call('ascend.memory', {}).then((m) => (root.dataset.memoryBytes = String(m)), () => {});
    if (keptRank >= 0) keeper.call('ascend.memory', {}).then((m) => (root.dataset.keeperMemoryBytes = String(m)), () => {});
  })();

  return {
    ready,
    shown() {
      if (inner) inner.shown();
      else window.dispatchEvent(new Event('resize'));
    },
    unmount() {
      unmounted = true;
      pool.terminate();
      for (const w of exporters) if (w.worker) w.terminate();
      exporters.clear();
      if (inner) inner.unmount();
      for (const d of disposers) d();
      disposers = [];
    },
  };
}

/**
 * The views' facts of each rank of `report` (in the job's order), from what the readers sent
 * (`infos`: per part, its run folders and its ranks' facts). A rank whose reading failed has no
 * facts: it gets an empty capture, and its views say why when asked.
 */
function rankInfos(report, infos) {
  const key = (dirs) => dirs.join('\n');
  const by = new Map();
  for (const part of infos.flat()) if (part.ranks.length) by.set(key(part.runDirs), part.ranks[0]);
  return report.ranks.map((r, index) => ({
    ...(by.get(key(r.run_dirs)) || { origin_ns: '0', end: 0, active_start: 0, peak: null, components: [], steps: [], records_aside: null }),
    index,
  }));
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
      el('span', { class: 'muted', text: `The job summary of these ${plural(ranks, 'rank')}, as “memlens profiler ROOT --summary” writes it: the whole job in kilobytes per rank, to open later without the raw folders.` })),
    status);
}
