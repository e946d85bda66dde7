// The torch_npu requests of the analysis worker. The job (a ProfilerView of the wasm engine) lives
// here between requests; the page asks for what it draws, and every question but the typed-array
// ones is one request to the core's view model (src/profiler/view). Times are ns relative to each
// rank's capture start.
import { joinLists } from '../json-lists.js';

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

export default (ctx) => {
  let view = null;
  // The job overview made of rank summaries the readers of a worker pool sent (a JobSummaryView).
  let overviewView = null;
  ctx.onReset(() => {
    if (view) view.free();
    view = null;
    if (overviewView) overviewView.free();
    overviewView = null;
  });
  const need = () => {
    if (!view) throw new Error('no torch_npu job is loaded');
    return view;
  };
  const ask = (method, params = {}, v = need()) => JSON.parse(v.request(JSON.stringify({ method, params })));
  return {
    /**
     * Loads the torch_npu job of the current drop; with `runDirs` (a list of run folders) only
     * the ranks with a folder among them (a rank opened from the job overview of a worker pool).
     */
    'ascend.open'({ runDirs } = {}, progress) {
      const mod = ctx.mod();
      const session = ctx.session();
      if (!session) throw new Error('nothing was dropped yet');
      if (view) view.free();
      view = null;
      const t = tracker(progress);
      const t0 = performance.now();
      const v = new mod.ProfilerView(session);
      if (runDirs) v.keepRanks(session, JSON.stringify(runDirs));
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
     * A pool reader's work: the summaries of the ranks `parts` (lists of run folders), read one
     * rank at a time so that only one rank's analysis is held at once, as the JSON text of a list
     * (nanoseconds since the epoch exceed a double's integers). Progress: bytes of all of them.
     */
    'ascend.summarize'({ parts, bytes }, progress) {
      const mod = ctx.mod();
      const session = ctx.session();
      if (!session) throw new Error('nothing was dropped yet');
      let before = 0;
      const seen = new Map();
      const texts = [];
      for (const dirs of parts) {
        const v = new mod.ProfilerView(session);
        try {
          v.keepRanks(session, JSON.stringify(dirs));
          seen.clear();
          v.analyze(session, (path, d) => {
            seen.set(path, d);
            let n = before;
            for (const x of seen.values()) n += x;
            progress(Math.min(n, bytes), bytes, 'reading');
          });
          for (const x of seen.values()) before += x;
          texts.push(v.request(JSON.stringify({ method: 'rankSummaries', params: {} })));
        } finally {
          v.free();
        }
      }
      return { ranks: joinLists(texts), memoryBytes: mod.memoryBytes() };
    },
    /**
     * The job overview of the rank summaries a pool's readers sent (`ranks`: the JSON text of a
     * list, in any order), built by the core as for a job summary file.
     */
    'ascend.overviewOf'({ ranks }) {
      if (overviewView) overviewView.free();
      overviewView = null;
      overviewView = ctx.mod().JobSummaryView.fromRanks(ranks);
      return JSON.parse(overviewView.request('{"method":"overview"}'));
    },
    /** The job of `ascend.overviewOf` as a job summary file (what `memlens profiler --summary` writes). */
    'ascend.summaryFile'() {
      if (!overviewView) throw new Error('no job overview was made');
      return overviewView.fileText();
    },
    'ascend.curves'({ rank, x0, x1, columns, spec }) {
      return need().curves(rank, x0, x1, columns, spec);
    },
    'ascend.timelineInfo'({ rank }) {
      return ask('timelineInfo', { rank });
    },
    'ascend.timeline'({ rank, x0, x1, y0, y1, width, height, maxRects }) {
      return need().timeline(rank, x0, x1, y0, y1, width, height, maxRects || 20000);
    },
    'ascend.hit'({ rank, x, y }) {
      return ask('hit', { rank, x, y });
    },
    'ascend.rect'({ rank, row }) {
      return ask('rect', { rank, row });
    },
    'ascend.table'({ rank, query, offset, limit }) {
      return ask('table', { rank, query, offset, limit });
    },
    'ascend.position'({ rank, query, row }) {
      return ask('position', { rank, query, row });
    },
    'ascend.row'({ rank, row }) {
      return ask('row', { rank, row });
    },
    'ascend.liveAt'({ rank, t, by }) {
      return ask('liveAt', { rank, t, by: by ?? null });
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
      return ask('unreleased', { rank, start: start ?? null, end: end ?? null, by: by ?? null });
    },
    'ascend.export'({ name }) {
      return need().export(name);
    },
    'ascend.memory'() {
      return ctx.mod().memoryBytes();
    },
  };
};

