// Starts the analysis worker. The offline build (dist/memlens.html) swaps this module for one that
// starts the same code from a Blob URL, because file:// pages cannot load module workers.
// A page served by `memlens serve` carries <meta name="memlens-engine" content="native">: its worker
// then sends the analyses to that engine.
// `params` (optional) go to the worker in its URL: `threads` caps the threaded engine's pool,
// `engine: 'single'` asks for the single-threaded engine (the readers of a worker pool).
export function spawnWorker(params = {}) {
  const url = new URL('./worker.js', import.meta.url);
  if (nativePage()) url.searchParams.set('engine', 'native');
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
  // `?readAhead=1` or `0` on the page turns every worker's read-ahead on or off, over `params` (see
  // read-ahead.js; the pool's readers read ahead by default); `?readSize=MiB`
  // sets the size of their reads of a File (see file-reads.js).
  const page = new URLSearchParams(location.search);
  for (const k of ['readAhead', 'readSize']) if (page.get(k)) url.searchParams.set(k, page.get(k));
  return new Worker(url, { type: 'module', name: 'memlens' });
}

/** True on a page served by `memlens serve`, whose workers use its native engine. */
export function nativePage() {
  return document.querySelector('meta[name="memlens-engine"]')?.content === 'native';
}
