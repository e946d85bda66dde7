// The analysis worker of the served page: uses the native engine of `memlens serve` when the page
// says one serves it (`?engine=native`), else loads the threaded wasm engine when the page is
// cross-origin isolated (SharedArrayBuffer available), the single-threaded one otherwise. Each
// worker fetches and compiles its engine itself: the readers of a worker pool are started while the
// page is idle (worker-pool.js), so that time is off the path from a drop to the overview.
import { serve, startMark } from './worker-core.js';
import { modules } from './worker-modules.js';
import { probeNative, nativeModule } from './native-engine.js';
import { startReadAhead } from './read-ahead.js';
import { isolated } from './worker-isolated.js';

// The worker's scripts are loaded and run (its imports above included).
startMark('script');

serve(async () => {
  const query = new URLSearchParams(self.location.search);
  if (query.get('engine') === 'native') {
    const info = await probeNative();
    if (info) return { mod: nativeModule(info), build: 'native', reason: null };
  }
  // The helper that reads the files ahead starts with the engine on `readAhead=1` in the worker's
  // address: a pool's readers have it by default (www/worker-pool.js `readerParams`), other workers
  // when the page asks (`?readAhead=1`; `?readAhead=0` turns it off for all). See read-ahead.js.
  const ahead = query.get('readAhead') === '1' ? startReadAhead() : Promise.resolve(false);
  const loaded = await loadWasm(query);
  return { ...loaded, readAhead: await ahead };
}, modules);

/** The wasm engine this worker runs, with the marks of its start (see `startMark`). */
async function loadWasm(query) {
  let reason = isolated() ? null : 'page is not cross-origin isolated';
  // A reader of a worker pool may be asked for the single-threaded engine, or for fewer threads
  // than the cores (the pool shares them among its workers).
  if (isolated() && query.get('engine') === 'single') reason = 'a reader of a worker pool';
  const threads = Math.max(1, Number(query.get('threads')) || navigator.hardwareConcurrency || 2);
  if (isolated() && query.get('engine') !== 'single') {
    try {
      const mod = await import('./pkg-threads/memlens.js');
      startMark('glue');
      await mod.default();
      startMark('instance');
      // rayon's pool must exist before the first parallel call, or it silently runs on one thread.
      await quietThreads(() => mod.initThreadPool(threads));
      startMark('threads');
      return { mod, build: 'threads', reason: null };
    } catch (err) {
      reason = `threaded engine failed to start: ${err && err.message ? err.message : err}`;
    }
  }
  const mod = await import('./pkg/memlens.js');
  startMark('glue');
  await mod.default();
  startMark('instance');
  return { mod, build: 'single', reason };
}

// The error by which `stopThreads` makes each engine thread leave its run loop (see
// worker-life.js); a thread's worker would report it as an unhandled rejection.
const QUIET = `self.addEventListener('unhandledrejection', (e) => { if (e.reason && e.reason.message === "the engine's threads are stopped") e.preventDefault(); });\n`;

/**
 * Runs `start` (which starts the engine's threads) with `fetch` giving wasm-bindgen-rayon's thread
 * script, which it fetches to start each thread from a Blob, a first line that keeps that error
 * quiet.
 */
async function quietThreads(start) {
  const original = self.fetch;
  self.fetch = async (input, init) => {
    const res = await original(input, init);
    if (!String(input).includes('workerHelpers')) return res;
    return new Response(QUIET + (await res.text()), { headers: { 'content-type': 'text/javascript' } });
  };
  try {
    return await start();
  } finally {
    self.fetch = original;
  }
}
