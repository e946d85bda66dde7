// Starts the analysis worker. The offline build (dist/memlens.html) swaps this module for one that
// starts the same code from a Blob URL, because file:// pages cannot load module workers.
// A page served by `memlens serve` carries <meta name="memlens-engine" content="native">: its worker
// then sends the analyses to that engine.
export function spawnWorker() {
  const native = document.querySelector('meta[name="memlens-engine"]')?.content === 'native';
  const url = new URL(native ? './worker.js?engine=native' : './worker.js', import.meta.url);
  return new Worker(url, { type: 'module', name: 'memlens' });
}
