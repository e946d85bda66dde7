// The job-summary requests of the analysis worker: one opened job summary (a wasm JobSummaryView)
// at a time. Every figure is computed in Rust (src/profiler/summary_view.rs); this file forwards.

export default function jobSummaryRequests(ctx) {
  let view = null;
  const close = () => {
    if (view) view.free();
    view = null;
  };
  ctx.onReset(close);
  const ask = (method, params) => {
    if (!view) throw new Error('no job summary is open');
    return JSON.parse(view.request(JSON.stringify({ method, params })));
  };
  return {
    /** Opens the job summary at `path` of the drop; returns its overview. */
    'summary.open'({ path }) {
      close();
      const t0 = performance.now();
      view = new (ctx.mod().JobSummaryView)(ctx.session(), path);
      const overview = ask('overview');
      // Linear memory only grows: after the load this is the peak the load needed.
      return { overview, ms: performance.now() - t0, memoryBytes: ctx.mod().memoryBytes() };
    },
    /**
     * Ranks analysed from their raw run folders (`ranks`: the JSON text of `ascend.rankSummaries`,
     * unparsed, so nanosecond times stay exact) replace the ranks they match; the new overview.
     */
    'summary.raw'({ ranks }) {
      if (!view) throw new Error('no job summary is open');
      return JSON.parse(view.request(`{"method":"raw","params":{"ranks":${ranks}}}`));
    },
    /** One rank's summary whole (curve, attribution at the peak, unreleased, warnings). */
    'summary.rank'({ rank }) {
      return ask('rank', { rank });
    },
  };
}
