// Whether this context (the page or a worker) has shared memory: a cross-origin isolated page, where
// the threaded engine runs, workers get stop flags and the read-ahead helper can share its slots.
// The one test of it, for every module that asks.

/** True where `SharedArrayBuffer` can be used (the page is cross-origin isolated). */
export function isolated() {
  return self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}
