// The analysis worker of the served page: loads the threaded engine when the page is cross-origin
// isolated (SharedArrayBuffer available), the single-threaded one otherwise.
import { serve } from './worker-core.js';
import { modules } from './worker-modules.js';

serve(async () => {
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
