// The analysis worker of the offline file (dist/memlens.html): the single-threaded engine with its
// wasm bytes inlined, bundled into a classic script and started from a Blob URL.
import { serve, startMark } from './worker-core.js';
import { modules } from './worker-modules.js';
import * as mod from './pkg/memlens.js';
import wasmBytes from './pkg/memlens_bg.wasm';

startMark('script');
serve(async () => {
  mod.initSync({ module: new WebAssembly.Module(wasmBytes) });
  startMark('instance');
  return { mod, build: 'single', reason: 'offline file: pages opened from file:// are never cross-origin isolated' };
}, modules);
