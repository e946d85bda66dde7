// The analysis worker of the served page: uses the native engine of `memlens serve` when the page
// says one serves it (`?engine=native`), else loads the threaded wasm engine when the page is
// cross-origin isolated (SharedArrayBuffer available), the single-threaded one otherwise.
import { serve } from './worker-core.js';
import { modules } from './worker-modules.js';
import { probeNative, nativeModule } from './native-engine.js';

serve(async () => {
  if (new URLSearchParams(self.location.search).get('engine') === 'native') {
    const info = await probeNative();
    if (info) return { mod: nativeModule(info), build: 'native', reason: null };
  }
  const isolated = self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
  let reason = isolated ? null : 'page is not cross-origin isolated';
  if (isolated) {
    try {
      const mod = await import('./pkg-threads/memlens.js');
      await mod.default();
      // rayon's pool must exist before the first parallel call, or it silently runs on one thread.
      await mod.initThreadPool(navigator.hardwareConcurrency || 2);
      return { mod, build: 'threads', reason: null };
    } catch (err) {
      reason = `threaded engine failed to start: ${err && err.message ? err.message : err}`;
    }
  }
  const mod = await import('./pkg/memlens.js');
  await mod.default();
  return { mod, build: 'single', reason };
}, modules);
