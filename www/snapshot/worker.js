// The memory-snapshot requests of the analysis worker: one opened snapshot (a wasm
// SnapshotSession) at a time, and the questions its views ask. Every figure is computed in Rust
// (src/snapshot/view.rs); this file only forwards requests and paints the rectangle answers.
import { rasterize } from '../ui/raster.js';
import { fileReads } from '../file-reads.js';

export default function snapshotRequests(ctx) {
  let snap = null;
  let openPath = null;
  const close = () => {
    if (snap) snap.free();
    snap = null;
    openPath = null;
  };
  ctx.onReset(close);
  const need = () => {
    if (!snap) throw new Error('no memory snapshot is open');
    return snap;
  };
  const paint = (r, params) => {
    const { width, height, fill, border } = params;
    const t0 = performance.now();
    const rgba = rasterize(r, width, height, fill, border);
    return ctx.transfer({
      rgba,
      width,
      height,
      visible: r.visible,
      individual: r.individual,
      merged: r.merged,
      rasterMs: performance.now() - t0,
    });
  };
  return {
    /** Opens the snapshot at `path` of the drop; returns the overview (summary and devices). */
    'snapshot.open'({ path }, progress) {
      close();
      const t0 = performance.now();
      const read0 = fileReads.ms;
      snap = ctx.mod().SnapshotSession.open(ctx.session(), path, (done, total, label) => progress(done, total, label));
      openPath = path;
      const overview = JSON.parse(snap.overview());
      // Where the open went, for the benchmark (scripts/bench-snapshot-page.mjs): the time inside
      // the read hook beside the engine's own steps (its parse includes those reads).
      if (overview.timings) overview.timings.file_read_ms = fileReads.ms - read0;
      // Linear memory only grows: after the load this is the peak the load needed.
      return { ...overview, path: openPath, ms: performance.now() - t0, memoryBytes: ctx.mod().memoryBytes() };
    },
    'snapshot.curve'(params) {
      return need().curve(params);
    },
    /** The stacked timeline of a viewport, painted: `{rgba, width, height, visible, …, ms}`. */
    'snapshot.timeline'(params) {
      const t0 = performance.now();
      const r = need().timeline(params);
      const ms = performance.now() - t0;
      const out = paint(r, params);
      out.ms = ms;
      return out;
    },
    'snapshot.timelineHit'(params) {
      return JSON.parse(need().timelineHit(params));
    },
    'snapshot.allocation'({ device, element }) {
      return JSON.parse(need().allocation(device, element));
    },
    /** The allocator state of a viewport, painted. */
    'snapshot.state'(params) {
      const t0 = performance.now();
      const r = need().state(params);
      const ms = performance.now() - t0;
      const out = paint(r, params);
      out.ms = ms;
      return out;
    },
    'snapshot.blockInfo'({ device, block }) {
      return JSON.parse(need().block(device, block));
    },
    'snapshot.stateHit'(params) {
      return JSON.parse(need().stateHit(params));
    },
    'snapshot.table'(params) {
      return JSON.parse(need().table(params));
    },
    /** Where a selected `row` or `group` sits in a table under its query: an index, or null (hidden). */
    'snapshot.position'(params) {
      return JSON.parse(need().position(params));
    },
    /** An export file's bytes (summary.json is what `memlens snapshot --json` prints). */
    'snapshot.export'({ name }) {
      return ctx.transfer(need().export(name));
    },
    'snapshot.memory'() {
      return ctx.mod().memoryBytes();
    },
  };
}
