// The torch_npu requests of the analysis worker. The job (a ProfilerView of the wasm engine) lives
// here between requests; the page asks for what it draws, and every question but the typed-array
// ones is one request to the core's view model (src/profiler/view). Times are ns relative to each
// rank's capture start.
import { joinLists } from '../json-lists.js';
import { fileReads } from '../file-reads.js';
import { testFault } from '../worker-life.js';

/** Progress of a load: per-file bytes read, posted as `{done, total, label, phase, files?, file}`. */
function tracker(progress) {
  let plan = [];
  let index = new Map();
  let done = [];
  let total = 0;
  let sent = false;
  const sum = () => done.reduce((a, b) => a + b, 0);
  return {
    /** Starts a phase with a list of files [{path, bytes}] (sent once, whole). */
    start(phase, files) {
      plan = files;
      index = new Map(files.map((f, i) => [f.path, i]));
      done = files.map(() => 0);
      total = files.reduce((a, f) => a + f.bytes, 0);
      sent = false;
      progress(0, total, phase, { phase, files: plan, keep: true });
      sent = true;
    },
    /** A file was read up to `d` of `t` bytes. */
    report(phase, path, d, t) {
      let i = index.get(path);
      if (i === undefined) {
        // A file the plan did not list (an archive being expanded): add it.
        plan.push({ path, bytes: t });
        i = plan.length - 1;
        index.set(path, i);
        done.push(0);
        total += t;
        sent = false;
      }
      done[i] = d;
      // Files are read one after the other: everything before this one is complete.
      for (let k = 0; k < i; k++) done[k] = plan[k].bytes;
      const extra = { phase, file: i, fileDone: d, fileTotal: t };
      if (!sent) {
        extra.files = plan;
        extra.keep = true;
        sent = true;
      }
      progress(Math.min(sum(), total), total, phase, extra);
    },
  };
}

/**
 * Leaves the db exports `dbs` (from `ascend.leaveOutDbs`; null or empty: none) out of the view
 * `v`'s plan, their run folders read from their text files instead.
 */
function leaveOut(v, session, dbs) {
  if (dbs && dbs.length) v.leaveOutDbs(session, JSON.stringify(dbs));
}

export default (ctx) => {
  let view = null;
  // The job overview made of rank summaries the readers of a worker pool sent (a JobSummaryView).
  let overviewView = null;
  // A pooled job (`ascend.openRanks`): the run folders of each rank of the job, read when a view
  // asks about that rank; the ranks read last are held, at most OPEN_RANKS of them (the opened
  // rank and the one compared with it), most recent first.
  let lazy = null;
  // The db exports of the pooled job read from their text files instead (`ascend.openRanks`).
  let lazyDbs = null;
  let held = [];
  const OPEN_RANKS = 2;
  // A pool reader's analysis of the rank the tab opens first (`ascend.summarize`'s `keep`), kept
  // so that the page's worker need not read that rank again: `{ dirs, view }`.
  let kept = null;
  const forget = () => {
    if (view) view.free();
    view = null;
    for (const h of held) h.view.free();
    held = [];
    lazy = null;
    lazyDbs = null;
    if (kept) kept.view.free();
    kept = null;
  };
  ctx.onReset(() => {
    forget();
    if (overviewView) overviewView.free();
    overviewView = null;
  });
  const need = () => {
    if (!view) throw new Error('no torch_npu job is loaded');
    return view;
  };
  const ask = (method, params = {}, v = need()) => JSON.parse(v.request(JSON.stringify({ method, params })));
  /** The view that answers about job rank `rank`, and the rank's index in that view. */
  const forRank = (rank) => {
    if (!lazy) return [need(), rank];
    let at = held.findIndex((h) => h.rank === rank);
    if (at < 0) {
      const dirs = lazy[rank];
      if (!dirs) throw new Error(`no rank ${rank}: the job has ${lazy.length}`);
      const session = ctx.session();
      const v = new (ctx.mod().ProfilerView)(session);
      try {
        v.keepRanks(session, JSON.stringify(dirs));
        leaveOut(v, session, lazyDbs);
        v.analyze(session, () => {});
      } catch (err) {
        v.free();
        throw err;
      }
      held.unshift({ rank, view: v });
      while (held.length > OPEN_RANKS) held.pop().view.free();
      at = 0;
    } else if (at > 0) held.unshift(...held.splice(at, 1));
    return [held[0].view, 0];
  };
  /** `ask` about job rank `params.rank`. */
  const askRank = (method, params) => {
    const [v, rank] = forRank(params.rank);
    return ask(method, { ...params, rank }, v);
  };
  return {
    /**
     * Loads the torch_npu job of the current drop; with `runDirs` (a list of run folders) only
     * the ranks with a folder among them (a rank opened from the job overview of a worker pool);
     * the db exports among `leaveDbs` are left out for their run's text files (`ascend.leaveOutDbs`).
     */
    'ascend.open'({ runDirs, leaveDbs } = {}, progress) {
      const mod = ctx.mod();
      const session = ctx.session();
      if (!session) throw new Error('nothing was dropped yet');
      forget();
      const t = tracker(progress);
      const t0 = performance.now();
      const v = new mod.ProfilerView(session);
      if (runDirs) v.keepRanks(session, JSON.stringify(runDirs));
      leaveOut(v, session, leaveDbs);
      const plan = ask('plan', {}, v);
      const t1 = performance.now();
      t.start('reading', plan);
      v.analyze(session, (path, d, total) => t.report('reading', path, d, total));
      const t2 = performance.now();
      view = v;
      const report = ask('report');
      const ranks = ask('ranks');
      const t3 = performance.now();
      return {
        // Where the load went (ms): grouping the ranks, reading + analysis, summaries.
        timings: { classify: Math.round(t1 - t0), analyze: Math.round(t2 - t1), summary: Math.round(t3 - t2) },
        report,
        ranks,
        plan,
        memoryBytes: mod.memoryBytes(),
      };
    },
    /**
     * The job's ranks as units of reading — role, rank, step, run folders, bytes — for a worker
     * pool to share among its readers.
     */
    'ascend.parts'() {
      const session = ctx.session();
      if (!session) throw new Error('nothing was dropped yet');
      const v = new (ctx.mod().ProfilerView)(session);
      try {
        return JSON.parse(v.parts(session));
      } finally {
        v.free();
      }
    },
    /**
     * The database exports among `dbs` (paths of the drop: the files over the page's per-file
     * limit) whose run folders have text files to read instead: `{ left, parts }`, the exports
     * the core leaves out (`ProfilerView.leaveOutDbs`) and the job's ranks as `ascend.parts`
     * gives them, weighed with those exports left out. Every request that reads the job takes
     * `left` as its `leaveDbs`, so that every worker reads those ranks alike.
     */
    'ascend.leaveOutDbs'({ dbs }) {
      const session = ctx.session();
      if (!session) throw new Error('nothing was dropped yet');
      const v = new (ctx.mod().ProfilerView)(session);
      try {
        const left = JSON.parse(v.leaveOutDbs(session, JSON.stringify(dbs)));
        return { left, parts: JSON.parse(v.parts(session)) };
      } finally {
        v.free();
      }
    },
    /**
     * A pool reader's work: the summaries of the ranks `parts` (lists of run folders), read one
     * rank at a time so that only one rank's analysis is held at once, as the JSON text of a list
     * (nanoseconds since the epoch exceed a double's integers). Progress: bytes of all of them.
     * The analysis of the part whose run folders are `keep` (the rank the tab opens first) is
     * kept for `ascend.openRanks`; `kept` in the answer says whether this reader has it.
     * `leaveDbs`: the db exports read from their run's text files instead (`ascend.leaveOutDbs`).
     */
    'ascend.summarize'({ parts, bytes, keep = null, leaveDbs = null }, progress) {
      const mod = ctx.mod();
      const session = ctx.session();
      if (!session) throw new Error('nothing was dropped yet');
      let before = 0;
      const seen = new Map();
      const texts = [];
      const infos = [];
      // Where each rank's time went (ms): reading its files, the rest of the analysis, its summary;
      // and the bytes its reads returned.
      const timings = [];
      for (const dirs of parts) {
        const fault = testFault(dirs);
        if (fault) return fault;
        const v = new mod.ProfilerView(session);
        // The file being read, named to the page with the progress (and in an error), so that a
        // reader that dies can be said to have died reading it.
        let file = null;
        try {
          const t0 = performance.now();
          const [r0, b0] = [fileReads.ms, fileReads.bytes];
          v.keepRanks(session, JSON.stringify(dirs));
          leaveOut(v, session, leaveDbs);
          seen.clear();
          v.analyze(session, (path, d) => {
            seen.set(path, d);
            let n = before;
            for (const x of seen.values()) n += x;
            if (path !== file) {
              // A new file: said at once (past the throttle), with the bytes read so far. It used
              // to say the bytes of the ranks before only, and the count that followed within the
              // throttle's 50 ms was dropped: the line went back at every file, and a file read
              // whole (`?readSize=256`) never showed.
              file = path;
              progress(Math.min(n, bytes), bytes, 'reading', { file, keep: true });
            } else {
              progress(Math.min(n, bytes), bytes, 'reading', { file });
            }
          });
          for (const x of seen.values()) before += x;
          const t1 = performance.now();
          const read = fileReads.ms - r0;
          texts.push(v.request(JSON.stringify({ method: 'rankSummaries', params: {} })));
          // What the views need of the rank beyond its summary (origin, end, peak time, steps).
          infos.push({ runDirs: dirs, ranks: ask('ranks', {}, v) });
          timings.push({ read: Math.round(read), parse: Math.round(t1 - t0 - read), summary: Math.round(performance.now() - t1), bytes: fileReads.bytes - b0 });
          if (keep && !kept && JSON.stringify(dirs) === JSON.stringify(keep)) kept = { dirs, view: v };
        } catch (err) {
          const message = err && err.message ? err.message : String(err);
          throw new Error(file ? `${message} (while reading ${file})` : message);
        } finally {
          if (kept?.view !== v) v.free();
        }
      }
      return { ranks: joinLists(texts), infos, timings, kept: kept !== null, memoryBytes: mod.memoryBytes() };
    },
    /**
     * The job overview of the rank summaries a pool's readers sent (`ranks`: the JSON text of a
     * list, in any order), built by the core as for a job summary file, with what the discovery
     * of the whole drop said beside the ranks (its warnings, the files not analysed), as a
     * one-worker load says it.
     */
    'ascend.overviewOf'({ ranks }) {
      const session = ctx.session();
      if (!session) throw new Error('nothing was dropped yet');
      if (overviewView) overviewView.free();
      overviewView = null;
      const v = new (ctx.mod().ProfilerView)(session);
      let discovery;
      try {
        discovery = v.discovery();
      } finally {
        v.free();
      }
      overviewView = ctx.mod().JobSummaryView.fromRanks(ranks, discovery);
      return JSON.parse(overviewView.request('{"method":"overview"}'));
    },
    /**
     * The rank summaries (JSON text of a list) of ranks no reader could read (`failed`: `{ part,
     * error }`, `part` as `ascend.parts` gives it): failed ranks, with the reason, for the job
     * overview.
     */
    'ascend.failedRanks'({ failed }) {
      return `[${failed.map((f) => ctx.mod().failedRankSummary(JSON.stringify(f.part), f.error)).join(',')}]`;
    },
    /**
     * Answers about a pooled job from now on: `runDirs` lists each job rank's run folders, and a
     * rank is read by this worker when a view first asks about it (the readers of the pool only
     * sent summaries). Frees the job held before. A reader that kept a rank's analysis
     * (`ascend.summarize`'s `keep`) answers about it at once: `kept` is its index (-1: none).
     * `leaveDbs`: the db exports read from their run's text files instead, rank by rank.
     */
    'ascend.openRanks'({ runDirs, leaveDbs = null }) {
      if (!ctx.session()) throw new Error('nothing was dropped yet');
      const keep = kept;
      kept = null;
      forget();
      lazy = runDirs;
      lazyDbs = leaveDbs;
      // The rank a pool reader kept answers without being read again.
      const at = keep ? runDirs.findIndex((d) => JSON.stringify(d) === JSON.stringify(keep.dirs)) : -1;
      if (at >= 0) held.push({ rank: at, view: keep.view });
      else if (keep) keep.view.free();
      return { kept: at };
    },
    /**
     * The exports `names` of the whole job (or of its ranks with a folder among `runDirs`), read
     * once (a worker started for them alone, so that the memory it takes goes with the worker):
     * `{ name: bytes }`, each byte for byte what `ascend.export` gives (the db exports among
     * `leaveDbs` left out for their text files, as the tab read them). Their buffers move to the
     * page uncopied.
     */
    'ascend.exportJob'({ names, runDirs = null, leaveDbs = null }) {
      const session = ctx.session();
      if (!session) throw new Error('nothing was dropped yet');
      const v = new (ctx.mod().ProfilerView)(session);
      try {
        // Only the ranks with a run folder among `runDirs` when given (the others were left out).
        if (runDirs) v.keepRanks(session, JSON.stringify(runDirs));
        leaveOut(v, session, leaveDbs);
        v.analyze(session, () => {});
        return ctx.transfer(Object.fromEntries(names.map((name) => [name, v.export(name)])));
      } finally {
        v.free();
      }
    },
    /** The job of `ascend.overviewOf` as a job summary file (what `memlens profiler --summary` writes). */
    'ascend.summaryFile'() {
      if (!overviewView) throw new Error('no job overview was made');
      return overviewView.fileText();
    },
    'ascend.curves'({ rank, x0, x1, columns, spec }) {
      const [v, r] = forRank(rank);
      return v.curves(r, x0, x1, columns, spec);
    },
    'ascend.timelineInfo'({ rank }) {
      return askRank('timelineInfo', { rank });
    },
    'ascend.timeline'({ rank, x0, x1, y0, y1, width, height, maxRects }) {
      const [v, r] = forRank(rank);
      return v.timeline(r, x0, x1, y0, y1, width, height, maxRects || 20000);
    },
    'ascend.hit'({ rank, x, y }) {
      return askRank('hit', { rank, x, y });
    },
    'ascend.rect'({ rank, row }) {
      return askRank('rect', { rank, row });
    },
    'ascend.table'({ rank, query, offset, limit }) {
      return askRank('table', { rank, query, offset, limit });
    },
    'ascend.position'({ rank, query, row }) {
      return askRank('position', { rank, query, row });
    },
    'ascend.row'({ rank, row }) {
      return askRank('row', { rank, row });
    },
    'ascend.liveAt'({ rank, t, by }) {
      return askRank('liveAt', { rank, t, by: by ?? null });
    },
    /**
     * Each rank's compact summary, as a job summary file holds it (for a summary opened beside),
     * as JSON text: nanoseconds since the epoch exceed a double's integers, so it is passed on
     * unparsed.
     */
    'ascend.rankSummaries'() {
      return need().request(JSON.stringify({ method: 'rankSummaries', params: {} }));
    },
    'ascend.unreleased'({ rank, start, end, by }) {
      return askRank('unreleased', { rank, start: start ?? null, end: end ?? null, by: by ?? null });
    },
    'ascend.export'({ name }) {
      return need().export(name);
    },
    'ascend.memory'() {
      return ctx.mod().memoryBytes();
    },
  };
};

