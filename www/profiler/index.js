// The torch_npu / MindSpore profiler page: loads the job in the worker (per-file progress), then shows eight
// linked views — job overview, memory over time, allocation timeline, allocations table, call
// stack, live set at the peak, unreleased, export — over one shared selection (state.js).
import { el } from '../ui/dom.js';
import { downloadCanvas } from '../ui/download.js';
import { bytes, bytesApart, int, plural } from '../format.js';
import { createState, HASH_KEYS } from './state.js';
import { ms, rankLabel } from './common.js';
import { overview, warningsBlock, problemsMetric } from './overview.js';
import { memoryChart } from './memory-chart.js';
import { timeline } from './timeline.js';
import { allocationsTable } from './table.js';
import { reveal } from '../ui/reveal.js';
import { afterPaint, yieldToBrowser } from '../ui/after-paint.js';
import { mountedClient } from '../ui/mounted-client.js';
import { throughput } from '../ui/throughput.js';
import { callStack } from './stack.js';
import { liveSet, unreleasedSet } from './groups.js';
import { exportView } from './export.js';
import { mountPooled } from './pooled.js';
import { screenDrop, noneRead, withLeftOut } from './file-limit.js';
import { tooLarge, failedWord } from './rank-table.js';
import { poolSize } from '../worker-pool.js';

/** The analysis module (see www/analyses.js). */
export const profiler = {
  id: 'ascend',
  title: () => 'torch_npu / MindSpore profiler',
  accepts: (inventory) => inventory.units.some((u) => u.kind === 'ascend-run'),
  hashKeys: HASH_KEYS,
  mount,
};

function mount(panel, ctx) {
  const root = el('div', { class: 'ascend', 'data-testid': 'ascend', 'data-state': 'loading' });
  panel.append(root);
  // Ranks with a file larger than a tab can hold are left out before anything is read, the same
  // way whichever way the job is read (one worker or a pool): the check is made once, here.
  const screened = screenDrop(ctx.client, ctx.dropped ? ctx.dropped() : null);
  screened.catch(() => {});
  // The job's rank summaries, handed to the other tabs explicitly (the job summary tab sets a
  // dropped rank's folder against its summary): they must not rely on the order in which a
  // worker answers, as there may be several.
  const size = ctx.dropped ? poolSize() : null;
  if (size) {
    let settle;
    const summaries = new Promise((resolve, reject) => {
      settle = (v) => (v instanceof Error ? reject(v) : resolve(v));
    });
    summaries.catch(() => {});
    if (ctx.shared) ctx.shared.rankSummaries = () => summaries;
    // A job of one rank is read by the page's worker alone; it hands its summaries over itself.
    const single = () => mountOne(root, { ...ctx, shared: null }, screened);
    return mountPooled(root, ctx, size, screened, { build, emptyJob, failed, handOver: settle, single });
  }
  return mountOne(root, ctx, screened);
}

/** The error panel of a job that could not be analysed. */
function failed(root, err) {
  root.dataset.state = 'error';
  root.replaceChildren(el('section', { class: 'panel' }, el('h2', { text: 'torch_npu / MindSpore profiler' }),
    el('div', { class: 'error-state', 'data-testid': 'ascend-error', text: `The job could not be analysed: ${err.message}` })));
}

/**
 * The tab reading the whole job in the page's one worker (per-file progress); `screened`: the
 * drop's per-file check (file-limit.js `screenDrop`).
 */
function mountOne(root, ctx, screened) {
  let disposers = [];
  let unmounted = false;

  // ---- loading: one line per file, bytes read / total --------------------------------------
  const phase = el('div', { class: 'load-phase', 'data-testid': 'ascend-phase', text: 'Reading the torch_npu job…' });
  const fileList = el('ol', { class: 'load-files', 'data-testid': 'ascend-progress' });
  root.append(el('section', { class: 'panel ascend-loading' }, el('h2', { text: 'Loading' }), phase, fileList));
  let plan = [];
  let rows = [];
  const fileRow = (f) => {
    const bar = el('span', { class: 'load-bar' });
    const text = el('span', { class: 'num load-bytes', text: `0 / ${bytes(f.bytes)}` });
    const li = el('li', { 'data-path': f.path }, el('span', { class: 'load-path', text: f.path, title: f.path }), el('span', { class: 'load-track' }, bar), text);
    return { li, bar, text, f };
  };
  const setFile = (r, done) => {
    r.bar.style.width = `${r.f.bytes ? Math.min(100, (100 * done) / r.f.bytes) : 100}%`;
    r.text.textContent = `${bytes(done)} / ${bytes(r.f.bytes)}`;
    r.li.classList.toggle('done', done >= r.f.bytes);
  };
  // Throughput and time left of the reading phase (archives expand at another pace).
  let pace = null;
  const onProgress = (p) => {
    if (unmounted) return;
    if (p.phase === 'reading' && !pace) pace = throughput();
    if (p.files) {
      plan = p.files;
      root.dataset.files = JSON.stringify(plan.map((f) => f.path));
      rows = plan.map(fileRow);
      fileList.replaceChildren(...rows.map((r) => r.li));
    }
    let text = `${p.phase === 'reading' ? 'Reading' : 'Expanding archives'}: ${bytes(p.done)} of ${bytes(p.total)} (${plural(plan.length, 'file')})`;
    if (p.phase === 'reading') {
      const speed = pace(p.done, p.total);
      text += ` — ${speed.text}`;
      phase.dataset.rate = speed.rate === null ? '' : String(Math.round(speed.rate));
      phase.dataset.left = speed.left === null ? '' : speed.left.toFixed(1);
    }
    phase.dataset.done = String(p.done);
    phase.textContent = text;
    if (p.file !== undefined && rows[p.file]) {
      for (let k = 0; k < p.file; k++) setFile(rows[k], rows[k].f.bytes);
      setFile(rows[p.file], p.fileDone);
      if (p.fileDone < p.fileTotal) rows[p.file].li.scrollIntoView({ block: 'nearest' });
    }
    ctx.showProgress(`torch_npu: ${text}`, p.done, p.total, false);
  };

  const ready = (async () => {
    const t0 = performance.now();
    let job;
    let screen;
    try {
      screen = await screened;
      if (unmounted) return;
      if (screen && screen.none) {
        noneRead(root, screen);
        return;
      }
      // The panel naming the files left out shows at once, above the progress of the others.
      if (screen) root.prepend(screen.notice);
      job = await ctx.client.call('ascend.open', screen ? { runDirs: screen.kept, leaveDbs: screen.leaveDbs } : {}, onProgress);
    } catch (err) {
      if (unmounted) return;
      failed(root, err);
      throw err;
    }
    if (unmounted) return;
    for (const r of rows) setFile(r, r.f.bytes);
    root.dataset.loadMs = String(Math.round(performance.now() - t0));
    root.dataset.memoryBytes = String(job.memoryBytes);
    root.dataset.timings = JSON.stringify(job.timings);
    if (!job.report.ranks.length || job.report.totals.ranks_with_data === 0) {
      const settled = emptyJob(root, job);
      if (screen) root.prepend(screen.notice);
      if (settled) throw settled;
      return;
    }
    // Answers that arrive after these views were unmounted (a new drop) go nowhere: the worker
    // has closed their job, and the views are gone.
    let client = mountedClient(ctx.client, () => unmounted);
    if (screen && screen.leftOut.length) {
      // The ranks left out are listed with the others, as the pool lists them; the worker's job
      // holds the ranks read alone, so a view's rank is its index there, and a rank left out is
      // never asked about (its views are replaced by its panel).
      const merged = withLeftOut(job, screen);
      job = merged.job;
      const inner = client;
      client = {
        call: (method, params, onProgress) => {
          if (!method.startsWith('ascend.') || typeof params?.rank !== 'number') return inner.call(method, params, onProgress);
          const at = merged.worker(params.rank);
          if (at < 0) return Promise.reject(new Error(job.report.ranks[params.rank]?.error || `no rank ${params.rank}`));
          return inner.call(method, { ...params, rank: at }, onProgress);
        },
      };
    }
    await build(root, job, { ...ctx, client }, (d) => disposers.push(d), { before: screen ? screen.notice : null });
  })();

  if (ctx.shared) ctx.shared.rankSummaries = () => ready.then(() => ctx.client.call('ascend.rankSummaries', {}));
  return {
    ready,
    shown() {
      // Plots measure their width when they become visible.
      window.dispatchEvent(new Event('resize'));
    },
    unmount() {
      unmounted = true;
      for (const d of disposers) d();
      disposers = [];
    },
  };
}

/**
 * Nothing to draw (run folders whose analysis never ran, or every memory file rejected): say why
 * and what to do, counting the rejected files, instead of a dashboard of zeros. Returns the error
 * the tab's load settles with: the core's verdict on the job (`report.verdict`, the rule behind
 * the CLI's exit code), in its words; marked as shown, since this panel already shows it.
 */
function emptyJob(root, job) {
  const { report } = job;
  const rejected = report.totals.rejected || 0;
  root.dataset.state = rejected ? 'error' : 'empty';
  root.dataset.rejected = String(rejected);
  const hint = report.warnings.find((w) => /analyse\(/.test(w.message));
  const why = rejected
    ? `${plural(rejected, 'file')} rejected: no file of this drop could be read as profiler memory data (operator_memory.csv, memory_record.csv, ascend_pytorch_profiler_*.db, ascend_mindspore_profiler_*.db, msprof_*.db). Each file's error is listed below.`
    : 'No run folder of this drop holds memory data memlens can read (operator_memory.csv, memory_record.csv or a database export: ascend_pytorch_profiler_*.db, ascend_mindspore_profiler_*.db, msprof_*.db; trace_view.json alone holds none).';
  root.replaceChildren(el('section', { class: 'panel' },
    el('h2', { text: 'torch_npu / MindSpore profiler' }),
    el('div', { class: 'metrics' },
      el('div', { class: 'metric', 'data-metric': 'ascend-ranks', 'data-value': '0' }, el('div', { class: 'label', text: 'Ranks with data' }), el('div', { class: 'value', text: '0' })),
      el('div', { class: 'metric', 'data-metric': 'ascend-rejected', 'data-value': String(rejected) }, el('div', { class: 'label', text: 'Files rejected' }), el('div', { class: 'value', text: int(rejected) })),
      el('div', { class: 'metric', 'data-metric': 'ascend-rows', 'data-value': '0' }, el('div', { class: 'label', text: 'Allocation rows' }), el('div', { class: 'value', text: '0' })),
      problemsMetric(report.totals)),
    el('div', { class: rejected ? 'error-state' : 'empty-state', 'data-testid': 'ascend-empty' },
      el('p', { text: why }),
      hint ? el('p', { class: 'hint', text: hint.message }) : null),
    warningsBlock(report)));
  const verdict = report.verdict || {};
  const settled = new Error(verdict.problem || 'no rank of this drop holds memory data');
  settled.shown = true;
  return verdict.has_data ? null : settled;
}

/**
 * The panel shown instead of a rank's views when that rank was not read (its reader failed or
 * died, or it was left out for a file larger than the page reads): which rank, why (for a file
 * too large: which file, its size against the limit), and how to go on — another rank of the job
 * (a button opens the next one read), or the command line, which reads it outside the tab.
 * `show(i)` fills it for rank `i`, or hides it (null).
 */
function failedRankPanel(report, select) {
  const title = el('h2');
  const reason = el('p', { class: 'error-state', 'data-testid': 'ascend-rank-failed-reason' });
  const folders = el('p');
  const next = el('button', { type: 'button', 'data-testid': 'ascend-rank-failed-next' });
  const cli = el('p');
  const marked = el('span');
  const node = el('section', { class: 'panel rank-failed', 'data-testid': 'ascend-rank-failed', hidden: true, role: 'status' },
    title, reason, folders, el('p', {}, marked, next), cli);
  let target = null;
  next.addEventListener('click', () => {
    if (target !== null) select(target);
  });
  return {
    node,
    show(i) {
      node.hidden = i === null;
      node.dataset.rank = i === null ? '' : String(i);
      if (i === null) return;
      const r = report.ranks[i];
      const dirs = r.run_dirs || [];
      const big = tooLarge(r);
      // A rank the page read whose files gave nothing (refused, empty) or whose analysis failed
      // where it ran (a summary's) has the core's words; one the page could not read, its own.
      const word = failedWord(r);
      const read = !big && word !== 'not read';
      node.dataset.reason = big ? 'too-large' : read ? r.no_data?.kind || 'failed' : 'not-read';
      title.textContent = big ? `${rankLabel(r)} was not read: a file is too large for the page` : read ? `${rankLabel(r)} has no figures` : `${rankLabel(r)} was not read`;
      if (big && r.tooLarge) {
        // Each file over the limit with its size, and the limit, printed so that the two differ.
        reason.replaceChildren(...r.tooLarge.files.flatMap((f, k) => [k ? ' ' : '', el('code', { text: f.path }),
          ` is ${bytesApart(f.bytes, r.tooLarge.limit).join(', more than the ')} this page reads of one file.`]),
        ' A browser tab holds at most 4 GiB of WebAssembly memory.');
      } else {
        // The reason as the pool gives it ("not read: the analysis worker …") or as the core says
        // it ("its file was refused: …"), as a sentence.
        const why = read && r.no_data ? r.no_data.says : String(r.error || 'no reason was given').replace(/^(not read|too large):\s*/, '');
        reason.textContent = `${why.charAt(0).toUpperCase()}${why.slice(1)}${/[.!?]$/.test(why) ? '' : '.'}`;
      }
      marked.textContent = `Its row of the job overview is marked “${failedWord(r)}”: it has no figures, charts or tables here. `;
      folders.replaceChildren(dirs.length > 1 ? 'Its run folders: ' : 'Its run folder: ', ...dirs.flatMap((d, k) => [k ? ', ' : '', el('code', { text: d })]));
      // The next rank that was read, after this one in the job's order (wrapping round).
      const n = report.ranks.length;
      target = null;
      for (let k = 1; k < n && target === null; k++) if (report.ranks[(i + k) % n].status !== 'error') target = (i + k) % n;
      next.hidden = target === null;
      if (target !== null) next.textContent = `Open ${rankLabel(report.ranks[target])}`;
      // A rank read without figures would be read the same outside the page: the command line
      // says the same of it.
      if (read && ['refused', 'empty'].includes(r.no_data?.kind)) cli.replaceChildren('The command line says the same of it: ', el('code', { text: `memlens profiler ${dirs.join(' ')}` }), '.');
      else cli.replaceChildren('The command line reads it outside the browser, with the machine’s memory: ',
        el('code', { text: `memlens profiler ${dirs.join(' ')}` }), ', or ', el('code', { text: `memlens serve ${dirs.join(' ')}` }),
        ' to see it on this page read by the native engine.');
    },
  };
}

/**
 * Draws the views of an analysed `job` in `root`; `options.before` and `options.after` are nodes
 * shown before and after them (a pooled tab's ranks left unread, its job summary file).
 */
async function build(root, job, ctx, onDispose, options = {}) {
  const { report, ranks } = job;
  const store = createState(report.ranks.length);
  // A rank whose reading failed (a pool reader died on it) has no detail to show: its views are
  // replaced by one panel that says why and how to go on. The tab never opens on such a rank
  // (a link to it still selects it, and shows that panel).
  const unread = (i) => report.ranks[i]?.status === 'error';
  if (unread(store.get().rank)) {
    const first = report.ranks.findIndex((r) => r.status !== 'error');
    if (first >= 0) store.set({ rank: first, cmp: store.get().cmp === first ? null : store.get().cmp });
  }
  // An action's answer is brought into view (ui/reveal.js); a view whose content arrives later
  // (the call stack) says so through `rendered`, and is brought into view again at its real size.
  const pendingReveal = new Set();
  const show = (name) => {
    pendingReveal.add(name);
    reveal(views[name].node);
  };
  const rendered = (name) => {
    if (pendingReveal.delete(name)) reveal(views[name].node, { flash: false });
  };
  const deps = { client: ctx.client, store, ranks, report, show, rendered };

  // ---- the rank bar: which rank, which to compare with, and what is selected -----------------
  const rankOptions = (withNone) => [
    ...(withNone ? [el('option', { value: '', text: 'no comparison' })] : []),
    ...report.ranks.map((r, i) => el('option', {
      value: String(i),
      // A rank without figures is named by the word its table row shows ("refused", "not read").
      text: unread(i) ? `${rankLabel(r)} — ${failedWord(r)}` : `${rankLabel(r)} — peak ${bytes(r.peak_allocated_bytes)}`,
      // A rank without figures has no curve to compare with.
      disabled: withNone && unread(i),
    })),
  ];
  const rankSelect = el('select', { 'aria-label': 'Rank', 'data-testid': 'rank-select' }, ...rankOptions(false));
  const cmpSelect = el('select', { 'aria-label': 'Compare with rank', 'data-testid': 'compare-select' }, ...rankOptions(true));
  const alignSelect = el('select', { 'aria-label': 'Align the compared rank', 'data-testid': 'align-select' },
    el('option', { value: 'start', text: 'aligned at start' }), el('option', { value: 'step', text: 'aligned by step' }));
  const chips = el('span', { class: 'chips', 'data-testid': 'selection-chips' });
  const selectRank = (i) => store.set({ rank: i, cmp: store.get().cmp === i ? null : store.get().cmp, view: null, window: null, at: null, row: null, group: null });
  rankSelect.addEventListener('change', () => selectRank(Number(rankSelect.value)));
  cmpSelect.addEventListener('change', () => store.set({ cmp: cmpSelect.value === '' ? null : Number(cmpSelect.value) }));
  alignSelect.addEventListener('change', () => store.set({ align: alignSelect.value }));
  const bar = el('div', { class: 'rank-bar', 'data-sticky': '', role: 'toolbar', 'aria-label': 'Selection' },
    el('label', {}, 'Rank ', rankSelect),
    el('label', {}, 'Compare ', cmpSelect),
    alignSelect,
    chips);

  const views = {
    overview: overview(job, store),
    memory: memoryChart(deps),
    timeline: timeline(deps),
    table: allocationsTable(deps),
    stack: callStack(deps),
    live: liveSet(deps),
    unreleased: unreleasedSet(deps),
  };
  onDispose(() => {
    views.memory.plot.destroy();
    // The chart of the records set aside is a plot too: it listens for the colour scheme.
    views.memory.aside.destroy();
    views.timeline.plot.destroy();
  });
  const rankSlug = () => {
    const r = report.ranks[store.get().rank];
    return `${r.role || 'job'}-rank${r.rank}${r.step !== null && r.step !== undefined ? `-step${r.step}` : ''}`.replace(/[^A-Za-z0-9._-]+/g, '_');
  };
  views.export = exportView({
    client: ctx.client,
    charts: [
      { id: 'memory', title: 'Memory over time', canvas: views.memory.canvas, file: () => `memory-${rankSlug()}.png` },
      { id: 'timeline', title: 'Allocation timeline', canvas: views.timeline.canvas, file: () => `timeline-${rankSlug()}.png` },
      { id: 'live', title: 'Live set by source line', canvas: views.live.canvas, file: () => `live-set-${rankSlug()}.png` },
      { id: 'unreleased', title: 'Unreleased by source line', canvas: views.unreleased.canvas, file: () => `unreleased-${rankSlug()}.png` },
    ],
  });
  const order = ['overview', 'memory', 'timeline', 'table', 'stack', 'live', 'unreleased', 'export'];
  const lostPanel = failedRankPanel(report, (i) => selectRank(i));
  const grid = el('div', { class: 'grid2' }, views.live.node, views.unreleased.node);
  // The views of the selected rank alone, left out while it is a rank that was not read.
  const detail = ['memory', 'timeline', 'table', 'stack', 'live', 'unreleased'];
  root.replaceChildren(
    ...[options.before].filter(Boolean),
    views.overview.node,
    bar,
    lostPanel.node,
    views.memory.node,
    views.timeline.node,
    views.table.node,
    views.stack.node,
    grid,
    views.export.node,
    ...[options.after].filter(Boolean),
  );
  // PNG buttons next to each chart too.
  for (const [id, c] of [['memory', views.memory], ['timeline', views.timeline], ['live', views.live], ['unreleased', views.unreleased]]) {
    const head = c.node.querySelector('.panel-head');
    head.append(el('button', { type: 'button', class: 'small', text: 'PNG', title: 'Save this chart as PNG', on: { click: () => downloadCanvas(c.canvas(), `${id}-${rankSlug()}.png`) } }));
  }

  // A select of hundreds of ranks left to size itself is as wide as its longest option: each
  // change of its value then measured every option again (~17 ms of layout at 256 ranks, in the
  // click's frame). Its width is pinned once at the width the browser gave it, and its value is
  // written only when it changes.
  const pinWidth = (sel) => {
    if (!sel.style.width && sel.offsetWidth) sel.style.width = `${sel.offsetWidth}px`;
  };
  const setValue = (sel, value) => {
    pinWidth(sel);
    if (sel.value !== value) sel.value = value;
  };
  function renderBar(s) {
    setValue(rankSelect, String(s.rank));
    setValue(cmpSelect, s.cmp === null ? '' : String(s.cmp));
    alignSelect.value = s.align;
    alignSelect.disabled = s.cmp === null;
    const items = [];
    const chip = (text, title, clear, testid) =>
      el('span', { class: 'filter-chip', title, 'data-testid': testid }, text, el('button', { type: 'button', class: 'chip-x', text: '×', 'aria-label': `clear ${text}`, on: { click: clear } }));
    if (s.window) items.push(chip(`window ${ms(s.window[0])} – ${ms(s.window[1])}`, 'Brushed time window (Esc clears)', () => store.set({ window: null, group: null }), 'chip-window-bar'));
    if (s.at !== null) items.push(chip(`live set at ${ms(s.at)}`, 'Time shown by the live-set view (p: back to the peak)', () => store.set({ at: null, group: null }), 'chip-at'));
    if (s.row !== null) items.push(chip(`allocation #${s.row}`, 'Selected allocation', () => store.set({ row: null }), 'chip-row'));
    chips.replaceChildren(...items);
  }

  // The views of the selected rank are updated in two steps when it changes (a click in the
  // overview, a key, the rank bar): in the input's own task only what shows the choice — the
  // rank bar, the matrix cell and the rank table's row, the views' titles — so that the next
  // frame shows it; the views themselves (their drawing and their questions to the engine) after
  // that frame, one per task (ui/after-paint.js). Each view is owed the state keys that changed
  // since it last heard; a change while some are owed (a second click before the first rank's
  // views were drawn) is owed to every view and starts the pass again, so the views end on the
  // latest rank alone. Changes within one rank's views (a pan, a brush, a row) reach them at once,
  // as before, when nothing is owed.
  const owed = new Map();
  let pass = 0;
  let cancelPass = null;
  // The rank whose views are current once no view is owed anything (`data-rank`; `data-views`
  // says whether a pass is on its way): hooks for the tests and the bench.
  const settleHooks = (s) => {
    root.dataset.rank = String(s.rank);
    root.dataset.views = 'current';
  };
  const pngs = [...views.export.node.querySelectorAll('[data-testid^="png-"]')];
  const showDetail = (s) => {
    const lost = unread(s.rank);
    lostPanel.show(lost ? s.rank : null);
    for (const n of [views.memory.node, views.timeline.node, views.table.node, views.stack.node, grid]) n.hidden = lost;
    for (const b of pngs) {
      b.disabled = lost;
      b.title = lost ? 'This rank was not read: it has no charts' : '';
    }
    return lost;
  };
  const catchUp = async (mine) => {
    cancelPass = null;
    // A rank that was not read has no detail to show: its views keep what they are owed until a
    // read rank is back.
    if (showDetail(store.get())) {
      settleHooks(store.get());
      return;
    }
    for (const name of detail) {
      const keys = owed.get(name);
      if (!keys) continue;
      owed.delete(name);
      views[name].node.removeAttribute('aria-busy');
      views[name].update(store.get(), keys);
      // A change meanwhile (the view's own update resolving a group, or the user's next click)
      // has started another pass after the next frame: this one stops.
      if (mine !== pass) return;
      if (owed.size) await yieldToBrowser();
      if (mine !== pass) return;
    }
    settleHooks(store.get());
  };
  store.on((s, changed) => {
    renderBar(s);
    for (const name of Object.keys(views)) if (!detail.includes(name)) views[name].update(s, changed);
    const deferred = owed.size > 0 || changed.has('rank') || changed.has('cmp');
    if (!deferred && !unread(s.rank)) {
      for (const name of detail) views[name].update(s, changed);
      return;
    }
    for (const name of detail) {
      owed.set(name, new Set([...(owed.get(name) || []), ...changed]));
      if (views[name].preview) views[name].preview(s);
      views[name].node.setAttribute('aria-busy', 'true');
    }
    root.dataset.views = 'pending';
    const mine = ++pass;
    if (cancelPass) cancelPass();
    cancelPass = afterPaint(() => catchUp(mine));
  });
  onDispose(() => {
    pass++;
    if (cancelPass) cancelPass();
  });
  showDetail(store.get());
  renderBar(store.get());
  settleHooks(store.get());
  views.overview.update(store.get(), new Set());

  // ---- keyboard --------------------------------------------------------------------------
  const visible = () => !root.closest('[hidden]') && !document.querySelector('dialog[open]');
  const jump = (name) => {
    const v = views[name];
    reveal(v.node, { top: true, flash: false });
    if (v.focus) v.focus();
    else v.node.focus({ preventScroll: true });
  };
  const onKey = (ev) => {
    if (!visible() || ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement) return;
    const s = store.get();
    const n = report.ranks.length;
    const k = ev.key;
    if (k >= '1' && k <= '8') jump(order[Number(k) - 1]);
    else if (k === 'j' || k === 'k') selectRank((s.rank + (k === 'j' ? 1 : n - 1)) % n);
    else if (k === 'c' && n > 1) {
      // Cycle the comparison through the other ranks, then none.
      const others = [...Array(n).keys()].filter((i) => i !== s.rank && !unread(i));
      const at = s.cmp === null ? -1 : others.indexOf(s.cmp);
      store.set({ cmp: at + 1 < others.length ? others[at + 1] : null });
    } else if (k === 'a' && s.cmp !== null) store.set({ align: s.align === 'step' ? 'start' : 'step' });
    else if (k === 'p') {
      store.set({ at: null, group: s.group && s.group.kind === 'live' ? null : s.group });
      jump('live');
    } else if (k === 'u') jump('unreleased');
    else if (k === '/') views.table.focusFilter();
    else if (k === 'Escape') {
      if (s.group) store.set({ group: null });
      else if (s.window) store.set({ window: null });
      else if (s.row !== null) store.set({ row: null });
      else if (s.at !== null) store.set({ at: null });
      else return;
    } else return;
    ev.preventDefault();
  };
  document.addEventListener('keydown', onKey);
  onDispose(() => document.removeEventListener('keydown', onKey));
  const scheme = matchMedia('(prefers-color-scheme: dark)');
  const recolor = () => {
    views.memory.recolor();
    views.timeline.recolor();
    views.live.update(store.get(), new Set(['group']));
    views.unreleased.update(store.get(), new Set(['group']));
  };
  scheme.addEventListener('change', recolor);
  onDispose(() => scheme.removeEventListener('change', recolor));

  await Promise.all([views.timeline.ready, views.table.ready, views.live.ready, views.unreleased.ready]);
  root.dataset.state = 'ready';
  // For the benchmark: wasm memory once every view has asked its first question.
  ctx.client.call('ascend.memory', {}).then((m) => (root.dataset.memoryReadyBytes = String(m)), () => {});
}
