// The Compare requests of the analysis worker: a baseline and a candidate, each its own session of
// files (apart from the drop's), compared by the core (a wasm CompareView). The answer is the JSON
// `memlens compare --json` prints; the exports are the bytes `memlens compare --out` writes.

export default function compareRequests(ctx) {
  let view = null;
  const close = () => {
    if (view) view.free();
    view = null;
  };
  const session = (side) => {
    const s = new (ctx.mod().Session)();
    for (const f of side.files) s.addFile(f.path, f.file);
    for (const u of side.unreadable || []) s.addUnreadable(u.path, u.size || 0, u.error || 'unreadable');
    s.classify(() => {});
    return s;
  };
  return {
    /** Compares `base` and `candidate` ({ files, unreadable }); optional steps (profiler). */
    'compare.run'({ base, candidate, baseStep, candidateStep }, progress) {
      close();
      progress(0, 2, 'reading the baseline and the candidate');
      const b = session(base);
      const c = session(candidate);
      try {
        const step = (s) => (s === null || s === undefined || s === '' ? undefined : Number(s));
        view = new (ctx.mod().CompareView)(b, c, step(baseStep), step(candidateStep));
      } finally {
        b.free();
        c.free();
      }
      return { json: view.json(), files: view.names() };
    },
    /** The overlaid curves as JSON: rank pair `pair` (profiler), `metric`, `align`, at most `maxPoints`. */
    'compare.overlay'({ pair, metric, align, maxPoints }) {
      if (!view) throw new Error('nothing is compared');
      return view.overlay(pair || 0, metric || 'allocated', align || 'start', maxPoints || 4000);
    },
    'compare.export'({ name }) {
      if (!view) throw new Error('nothing is compared');
      return ctx.transfer(view.export(name));
    },
  };
}
