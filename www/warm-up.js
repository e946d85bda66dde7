// The warm-up of a fresh engine: a pool reader started ahead of any drop reads a small job the
// engine makes in memory (src/wasm/warm_up.rs), through the calls it makes for a real rank
// (`load`'s Session and classification, then `ascend.summarize`'s ProfilerView, keepRanks, analyze
// and the rank's summary and facts). V8 runs new wasm code in its baseline compiler (Liftoff) and
// compiles a function with its optimising one (TurboFan) only once it has run enough; a call already
// running keeps its baseline code. After this small read the hot functions of a rank's analysis are
// compiled in the background, so the drop's ranks run optimised code from their start. It holds a
// session of its own (the drop's is never touched) and gives way between its steps to any request
// that arrived after it: a drop does not wait for it.

/** Lets the worker's event loop run, so that a request sent meanwhile is seen. */
const breathe = () => new Promise((resolve) => setTimeout(resolve, 0));

export default (ctx) => ({
  /**
   * Reads the generated job of `traceBytes` bytes of trace and `rows` operator rows. Answers
   * `{ done, ms: { generate, load, analyze, summary }, rows, peak }` (`rows`, `peak`: the rank's
   * operator rows and peak allocated bytes, as its summary gives them); `done` is false when a
   * later request made it stop early (its steps so far are timed).
   */
  async warmUp({ traceBytes = 2 << 20, rows = 4000 }, progress, order) {
    const mod = ctx.mod();
    const ms = {};
    let at = performance.now();
    const step = (name) => {
      const now = performance.now();
      ms[name] = Math.round(now - at);
      at = now;
    };
    const gaveWay = async () => {
      await breathe();
      at = performance.now();
      return ctx.asked() > order;
    };
    const pairs = mod.warmUpJob(traceBytes, rows);
    step('generate');
    if (await gaveWay()) return { done: false, ms };
    const session = new mod.Session();
    try {
      for (const [path, bytes] of pairs) session.addFile(path, new File([bytes], path.slice(path.lastIndexOf('/') + 1)));
      const inventory = JSON.parse(session.classify(() => {}));
      if (inventory.error) throw new Error(inventory.error);
      const v = new mod.ProfilerView(session);
      try {
        const parts = JSON.parse(v.parts(session));
        if (!parts.length) throw new Error('the warm-up job has no rank');
        step('load');
        if (await gaveWay()) return { done: false, ms };
        v.keepRanks(session, JSON.stringify(parts[0].run_dirs));
        v.analyze(session, () => {});
        step('analyze');
        const summaries = JSON.parse(v.request(JSON.stringify({ method: 'rankSummaries', params: {} })));
        v.request(JSON.stringify({ method: 'ranks', params: {} }));
        step('summary');
        const report = summaries[0]?.report || {};
        return { done: true, ms, rows: report.rows, peak: report.peak_allocated_bytes };
      } finally {
        v.free();
      }
    } finally {
      session.free();
    }
  },
});
