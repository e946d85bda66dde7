// The Compare requests of the analysis worker: a baseline and a candidate, each its own session of
// files (apart from the drop's), compared by the core (a wasm CompareView). The answer is the JSON
// `memlens compare --json` prints; the exports are the bytes `memlens compare --out` writes. Both
// sessions stay loaded while the comparison is shown, so a link into one side's own views
// (`compare.open`) makes that session the drop's at once; they are freed when the comparison is
// replaced or closed (`compare.close`).

export default function compareRequests(ctx) {
  let view = null;
  let sides = null;
  const close = () => {
    if (view) view.free();
    view = null;
    if (sides) for (const s of sides) ctx.release(s);
    sides = null;
  };
  const session = (side) => {
    const s = new (ctx.mod().Session)();
    ctx.hold(s);
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
      sides = [session(base), session(candidate)];
      try {
        const step = (s) => (s === null || s === undefined || s === '' ? undefined : Number(s));
        view = new (ctx.mod().CompareView)(sides[0], sides[1], step(baseStep), step(candidateStep));
      } catch (err) {
        close();
        throw err;
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
    /**
     * Makes side `side` (0 baseline, 1 candidate) the drop, as if its files had been dropped, and
     * returns { inventory, rank }: rank = where rank pair `pair` (profiler) sits in that side's job.
     */
    'compare.open'({ side, pair }) {
      if (!view || !sides) throw new Error('nothing is compared');
      const ranks = pair === undefined || pair === null ? null : view.pairRanks(pair);
      const inventory = ctx.adopt(sides[side ? 1 : 0]);
      return { inventory, rank: ranks ? ranks[side ? 1 : 0] : null };
    },
    /** Frees the comparison and both sides (the Compare mode was closed). */
    'compare.close'() {
      close();
      return true;
    },
  };
}
