// The analysis worker of the offline file (dist/memlens.html): the single-threaded engine with its
// wasm bytes inlined, bundled into a classic script and started from a Blob URL.
import { serve } from './worker-core.js';
import { modules } from './worker-modules.js';
import * as mod from './pkg/memlens.js';
import wasmBytes from './pkg/memlens_bg.wasm';

serve(async (offer) => {
  // The engine compiled by the tab's first worker, or compiled here (this is the first).
  const module = (await offer).module || new WebAssembly.Module(wasmBytes);
  mod.initSync({ module });
  return { mod, module, build: 'single', reason: 'offline file: pages opened from file:// are never cross-origin isolated' };
}, modules);
