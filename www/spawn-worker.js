// Starts the analysis worker. The offline build (dist/memlens.html) swaps this module for one that
// starts the same code from a Blob URL, because file:// pages cannot load module workers.
export function spawnWorker() {
  return new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'memlens' });
}
