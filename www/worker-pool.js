// Several dedicated workers reading one job's ranks at the same time. Each reader gets the whole
// drop (a File crosses to a worker as a handle, not its bytes), classifies it as the page's own
// worker does, and reads only the ranks it was given, one rank at a time; it answers their compact
// summaries as JSON text and is terminated as soon as it has answered, so its memory is freed.
// Readers are started while the page is idle (`warmReaders`, called by the page's start-up), before
// any drop, so that a drop finds their engines started: that start (the worker's scripts, compiling
// and instantiating the wasm) took 0.3–0.5 s per reader after the drop before. Each then reads a
// small job made in memory (`warmUp`, www/warm-up.js), so that V8 has compiled the hot functions of
// a rank's analysis with its optimising compiler before a drop's ranks run them. A reader whose
// share of a large job is more than `readerBytes` reads part of it and ends, and a fresh reader
// reads on: a worker keeps much of what it read resident until it ends.
import { EngineClient, Cancelled } from './engine-client.js';
import { joinLists } from './json-lists.js';

/** The cores the browser reports. */
const cores = () => Math.max(1, navigator.hardwareConcurrency || 2);

// Readers started ahead of any drop, their engines starting or started: { reader, spawn, params,
// warmUp } (`warmUp`: page times of its warm-up and its answer, once it has one).
const warm = [];
let warming = null;
// Pools reading a job now: no reader is started ahead while one reads (its end starts them).
const busy = new Set();
// How long after a job's readers are done (or stopped) the next ones start: the page's worker is
// then still drawing the overview, and a reader's start takes a core for a few hundred ms.
const REFILL_MS = 1500;

/**
 * Starts, when the page is next idle (after `delay` ms), readers of the page's pool until as many
 * as the pool would use and the cores the browser reports are ready for the next drop (none where
 * the pool is off: `?workers=1`, the native engine). Each idle reader holds a started engine, which
 * reads the warm-up job once it is ready (not with `?warmUp=0`): `docs/benchmarks.md` gives what
 * this costs an idle tab. The page's start-up calls it; so does the end of each pooled job.
 */
export function warmReaders(delay = 0) {
  if (typeof document === 'undefined' || warming) return;
  const idle = (fn) => (typeof requestIdleCallback === 'function' ? requestIdleCallback(fn, { timeout: 1000 }) : setTimeout(fn, 0));
  warming = setTimeout(() => idle(() => {
    warming = null;
    const size = poolSize();
    if (!size || busy.size) return;
    const params = readerParams(size);
    const warmUp = new URLSearchParams(location.search).get('warmUp') !== '0';
    for (let k = warm.length; k < Math.min(size, cores()); k++) {
      const spawn = performance.now();
      const reader = new EngineClient(params);
      const entry = { reader, spawn, params: JSON.stringify(params), warmUp: null, taken: false };
      // An engine that fails to start fails the reader's requests (and the warm-up), which say why.
      // A reader taken by a drop before its engine is ready skips the warm-up: the drop's requests
      // are already queued, and the warm-up's first step would run before the next of them.
      entry.ready = reader.engine.then(() => (warmUp && !entry.taken ? warmUpReader(entry) : null));
      entry.ready.catch(() => {});
      warm.push(entry);
    }
    // For the benchmark, which drops its files once the readers are ready (engine started and
    // warmed up), as a user who takes a few seconds to pick them finds them.
    const ready = warm.map((w) => w.ready);
    Promise.allSettled(ready).then(() => (document.documentElement.dataset.warmReaders = String(ready.length)));
  }), delay);
}

// The warm-up job's size: large enough that V8 tiers up the trace scan, the CSV readers and the
// attribution (a 2.9 MB job did in Node's V8, `docs/benchmarks.md`), small enough to take well under
// a second in the baseline code.
const WARM_UP = { traceBytes: 2 << 20, rows: 4000 };

/**
 * Has the reader of `entry` read the warm-up job; records its page times (`start`, `end`) and its
 * answer on `entry.warmUp`. A drop taking the reader meanwhile makes it stop at its next step.
 */
async function warmUpReader(entry) {
  const start = performance.now();
  try {
    const answer = await entry.reader.call('warmUp', WARM_UP);
    entry.warmUp = { start, end: performance.now(), ...answer };
  } catch (err) {
    entry.warmUp = { start, end: performance.now(), error: err && err.message ? err.message : String(err) };
  }
}

/** A reader started ahead with `params` and still alive (taken out of the warm set), or null. */
function takeWarm(params) {
  const key = JSON.stringify(params);
  while (warm.length) {
    const w = warm.shift();
    w.taken = true;
    if (w.params === key && w.reader.worker && !w.reader.dead) return w;
    if (w.reader.worker) w.reader.terminate();
  }
  return null;
}

/**
 * How many readers share a job's ranks: the cores the browser reports (`?workers=auto`, the
 * default; the pool never starts more readers than the job has ranks), or N (`?workers=N`, N ≥ 2),
 * or null (`?workers=1`): the job is then read by the page's one worker. A page served by
 * `memlens serve` reads with the native engine, which is parallel already: null there too.
 */
export function poolSize(search = location.search) {
  if (document.querySelector('meta[name="memlens-engine"]')?.content === 'native') return null;
  const v = new URLSearchParams(search).get('workers') ?? 'auto';
  if (v === 'auto') return Math.max(1, navigator.hardwareConcurrency || 2);
  const n = Math.floor(Number(v));
  if (!Number.isFinite(n) || n < 1) return Math.max(1, navigator.hardwareConcurrency || 2);
  return n === 1 ? null : Math.min(n, 64);
}

/**
 * The readers' worker parameters. The engine they run (`?poolEngine=single` or `threads`): by
 * default the single-threaded one when there are as many readers as cores, else the threaded one
 * with the cores shared out. Each reads its files ahead (www/read-ahead.js, where the page is
 * cross-origin isolated; the page's `?readAhead=0` turns it off): on 8 and 16 GiB jobs the tab
 * peaked at 0.20–0.34× its memory without, and the overview came in 0.65–0.93× the time
 * (docs/benchmarks.md, *Read-ahead for the pool's readers*).
 */
export function readerParams(size, search = location.search) {
  const cores = Math.max(1, navigator.hardwareConcurrency || 2);
  const asked = new URLSearchParams(search).get('poolEngine');
  const single = asked === 'single' || (asked !== 'threads' && size >= cores);
  // The test hook of worker-life.js (`testFault`) reaches the readers through their URL.
  const q = new URLSearchParams(search);
  const fault = q.get('fault') ? { fault: q.get('fault'), faultRank: q.get('faultRank') } : {};
  const engine = single ? { engine: 'single' } : { threads: Math.max(1, Math.floor(cores / size)) };
  return { ...engine, readAhead: 1, ...fault };
}

/**
 * How many bytes of `File`s one reader reads before the pool ends it and a fresh reader goes on
 * with the rest of its ranks (`?readerBytes=MiB`; 0: no limit; the default when not a number). A
 * worker that has read a file keeps much of what it read resident until it ends, garbage
 * collected or not (0.46–1.06× the bytes read, `scripts/bench-read-garbage.mjs`;
 * docs/benchmarks.md): a 16 GiB job's tab peaked at 5.1–6.0 GiB resident without a limit, at
 * 2.9 GiB with the default. That is now the single-threaded page's case: readers that read ahead
 * (`readerParams`) make no new buffer per read, and with them (and the default runs) the tab of
 * that job peaked at 0.58 GiB.
 */
export function readerBytes(search = location.search) {
  const v = new URLSearchParams(search).get('readerBytes');
  const mib = v === null || v.trim() === '' ? NaN : Number(v);
  if (mib === 0) return Infinity;
  return (Number.isFinite(mib) && mib > 0 ? mib : READER_MIB) * 2 ** 20;
}

// The default of `readerBytes`, in MiB: chosen by measure, docs/benchmarks.md (round 32).
const READER_MIB = 2048;

/**
 * Cuts one reader's parts (`indices` into `parts`, each `{ bytes }`) into runs, in their order, of
 * at most `limit` bytes each; a part larger than the limit is a run of its own.
 */
export function batches(indices, parts, limit) {
  const out = [];
  let bytes = 0;
  for (const i of indices) {
    const last = out[out.length - 1];
    if (last && bytes + parts[i].bytes <= limit) {
      last.push(i);
      bytes += parts[i].bytes;
    } else {
      out.push([i]);
      bytes = parts[i].bytes;
    }
  }
  return out;
}

/**
 * One answer of `summarize`'s readers made of several, in order: `times` is `first`'s (by default
 * the first answer's: its reader's start and load) with the last answer's `answered`, when the
 * share was done.
 */
function joinAnswers(list, first = list[0].times) {
  return {
    ranks: joinLists(list.map((a) => a.ranks)),
    infos: list.flatMap((a) => a.infos),
    timings: list.flatMap((a) => a.timings),
    memoryBytes: Math.max(...list.map((a) => a.memoryBytes)),
    times: { ...first, answered: list[list.length - 1].times.answered },
    failed: list.flatMap((a) => a.failed),
  };
}

/**
 * Shares `parts` (each `{ bytes }`) among `n` readers, largest first to the least loaded one, so
 * that they finish at about the same time; returns the parts' indices per reader (empty readers
 * dropped). Ties go to the lower reader, so the split depends on the sizes alone.
 */
export function share(parts, n) {
  const order = parts.map((p, i) => i).sort((a, b) => parts[b].bytes - parts[a].bytes || a - b);
  const load = Array(n).fill(0);
  const out = Array.from({ length: n }, () => []);
  for (const i of order) {
    let k = 0;
    for (let j = 1; j < n; j++) if (load[j] < load[k]) k = j;
    load[k] += parts[i].bytes;
    out[k].push(i);
  }
  for (const o of out) o.sort((a, b) => a - b);
  return out.filter((o) => o.length);
}

export class WorkerPool {
  /** `size` readers at most, each started with `params` (see `spawnWorker`). */
  constructor(size, params = {}) {
    this.size = size;
    this.params = params;
    this.readers = new Set();
    // Readers started ahead of the work (`start`), each with its drop loaded or loading.
    this.idle = [];
    this.stopped = false;
    busy.add(this);
  }

  /**
   * Starts `n` readers now and gives each the drop `load`, so that their engines start and they
   * classify the drop while the page still finds out which ranks there are; `summarize` uses them
   * (and starts more, or ends the ones it does not need).
   */
  start(load, n) {
    for (let k = this.idle.length; k < Math.min(n, this.size); k++) this.idle.push(this.spawn(load));
  }

  /**
   * A reader (one started ahead if there is one, else a new one), the drop `load` sent to it:
   * `{ reader, loaded, times }`.
   */
  spawn(load) {
    const taken = performance.now();
    const ahead = takeWarm(this.params);
    const reader = ahead ? ahead.reader : new EngineClient(this.params);
    const times = { spawn: ahead ? ahead.spawn : taken, taken, warm: Boolean(ahead) };
    // The reader's warm-up, as far as it went (it gives way to the drop's first request).
    if (ahead) ahead.ready.then(() => ahead.warmUp && (times.warmUp = pageWarmUp(ahead.warmUp)), () => {});
    // An engine that fails to start fails the reader's requests, which say why. `marks`: the
    // steps of the worker's start (worker-core.js `startMark`), on the page's clock.
    reader.engine.then((e) => Object.assign(times, { engine: reader.engineAt, readAhead: e.readAhead, marks: pageTimes(e.marks) }), () => {});
    this.readers.add(reader);
    const loaded = reader.call('load', load).then(() => (times.loaded = performance.now()));
    loaded.catch(() => {});
    return { reader, loaded, times };
  }

  /** Ends `reader` (done, failed or not needed): its memory goes now, not when the tab goes. */
  end(reader) {
    this.readers.delete(reader);
    if (reader.worker) reader.terminate();
  }

  /**
   * Reads `parts` (from `ascend.parts`) of the drop `load` (the worker's `load` request) in
   * parallel. `onProgress({ done, total, parts: [bytes done per part] })` as bytes are read.
   * Resolves with `{ texts: [JSON text of a list of rank summaries, per reader], infos: [per
   * reader, per part: `{ runDirs, ranks }`, the views' facts of its ranks], memoryBytes: [wasm
   * bytes per reader], readers (at once), runs (the runs the shares were read in: a share past
   * `readerBytes` is read in several, each by a fresh reader), timings: [per reader: page times
   * (ms, `performance.now()`) of its first run's reader's start (`spawn`), its taking for this job
   * (`taken`; `warm`: it was started ahead), its engine's announcement (`engine`) and the steps
   * before it (`marks`), drop loaded and answer (`answered`: its last run's), `readAhead` (its
   * files were read ahead, see read-ahead.js), and per rank its `{ read, parse, summary }` ms],
   * keeper }`; rejects with `Cancelled` when stopped. With `keep` (a part's run folders), the
   * reader of that part keeps its analysis and stays: `keeper` is its EngineClient (null if none
   * kept it), to answer about that rank after an `ascend.openRanks`; `terminate` ends it too.
   * `leaveDbs`: the db exports read from their run's text files instead (`ascend.leaveOutDbs`).
   * A reader that fails (an error, or it dies: out of memory) does not fail the job: its ranks are
   * read again one per reader, so that only the rank that fails alone is lost; `failed` lists those
   * (`{ index, error }`: the part and why, naming the file it was reading).
   */
  async summarize(load, parts, onProgress = () => {}, keep = null, leaveDbs = null) {
    const groups = share(parts, Math.max(1, Math.min(this.size, parts.length)));
    const total = parts.reduce((s, p) => s + p.bytes, 0);
    const done = groups.map(() => 0);
    const report = () => onProgress({ done: done.reduce((a, b) => a + b, 0), total });
    if (this.stopped) throw new Cancelled();
    // Readers started ahead first; any beyond the groups are not needed.
    const started = this.idle.splice(0);
    // The reader that kept the analysis of `keep`.
    const kept = [];
    for (const extra of started.splice(groups.length)) this.end(extra.reader);
    const bytesOf = (indices) => indices.reduce((s, i) => s + parts[i].bytes, 0);
    // `base`: bytes of the group read before (by an earlier try of some of its parts, or its
    // earlier runs). `next`: a reader spawned ahead for this run (see `group`).
    const one = async (indices, k, fresh = false, base = 0, next = null) => {
      if (this.stopped) throw new Cancelled();
      const { reader, loaded, times } = next || (!fresh && started[k]) || this.spawn(load);
      let file = null;
      const bytes = bytesOf(indices);
      try {
        await loaded;
        const answer = await reader.call('ascend.summarize', { parts: indices.map((i) => parts[i].run_dirs), bytes, keep, leaveDbs }, (p) => {
          if (p.file) file = p.file;
          done[k] = base + p.done;
          report();
        });
        done[k] = base + bytes;
        report();
        times.answered = performance.now();
        if (answer.kept) kept.push(reader);
        return { ...answer, times, failed: [] };
      } catch (err) {
        if (this.stopped || err instanceof Cancelled) throw err;
        const why = err && err.message ? err.message : String(err);
        if (indices.length === 1) {
          const named = file && !why.includes(file) ? `${why} (while reading ${file})` : why;
          done[k] = base + bytes;
          report();
          times.answered = performance.now();
          return { ranks: '[]', infos: [], timings: [], memoryBytes: 0, times, failed: [{ index: indices[0], error: named }] };
        }
        // Which rank it was is not known: each is read again alone, one after another.
        const each = [];
        let at = base;
        for (const i of indices) {
          each.push(await one([i], k, true, at));
          at += parts[i].bytes;
        }
        return joinAnswers(each, times);
      } finally {
        if (!kept.includes(reader)) this.end(reader);
      }
    };
    // A reader's group in runs of at most `readerBytes` (see there), each read by a reader of its
    // own; the next run's reader is spawned when a run starts, so that its engine and its load of
    // the drop are ready when the run ends.
    const limit = readerBytes();
    const cuts = groups.map((indices) => batches(indices, parts, limit));
    const group = async (cut, k) => {
      const list = [];
      let base = 0;
      let next = null;
      for (let b = 0; b < cut.length; b++) {
        const now = next;
        next = b + 1 < cut.length && !this.stopped ? this.spawn(load) : null;
        list.push(await one(cut[b], k, b > 0, base, now));
        base += bytesOf(cut[b]);
      }
      return list.length === 1 ? list[0] : joinAnswers(list);
    };
    let answers;
    try {
      answers = await Promise.all(cuts.map((cut, k) => group(cut, k)));
    } catch (err) {
      // One reader failed or was stopped: the others' work is of no use any more.
      this.terminate();
      throw err;
    }
    // The readers of the next drop.
    busy.delete(this);
    warmReaders(REFILL_MS);
    return {
      texts: answers.map((a) => a.ranks),
      infos: answers.map((a) => a.infos),
      memoryBytes: answers.map((a) => a.memoryBytes),
      readers: groups.length,
      runs: cuts.reduce((s, cut) => s + cut.length, 0),
      keeper: kept[0] || null,
      timings: answers.map((a) => ({ ...a.times, ranks: a.timings })),
      failed: answers.flatMap((a) => a.failed),
    };
  }

  /**
   * Terminates every reader at once (their memory goes with them); pending work fails with
   * `Cancelled`. Readers for the next drop start soon after.
   */
  terminate() {
    this.stopped = true;
    for (const r of this.readers) if (r.worker) r.terminate();
    this.readers.clear();
    this.idle = [];
    busy.delete(this);
    warmReaders(REFILL_MS);
  }
}

/** A warm-up's record (see `warmUpReader`) with its page times rounded. */
function pageWarmUp(w) {
  return { ...w, start: Math.round(w.start), end: Math.round(w.end) };
}

/** Marks in ms since the epoch (a worker's clock) as times on the page's clock. */
function pageTimes(marks = {}) {
  return Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, v - performance.timeOrigin]));
}

