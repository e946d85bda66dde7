// Request coalescing for every view: while one request to the engine is in flight, newer ones
// replace each other, so a fast pan or a held key never queues stale work in the worker and a
// burst costs at most two round trips.

/**
 * Wraps `fetch(args)` (async) so that at most one call runs at a time and only the newest
 * waiting argument runs next. `apply(result, args)` (optional) receives a result unless a newer
 * request is already waiting; `onError(err)` receives failures.
 */
export function latest(fetch, apply = null, onError = null) {
  let busy = false;
  let waiting = false;
  let next;
  async function pump() {
    busy = true;
    while (waiting) {
      waiting = false;
      const args = next;
      try {
        const result = await fetch(args);
        if (apply && !waiting) apply(result, args);
      } catch (err) {
        if (onError) onError(err);
      }
    }
    busy = false;
  }
  return (args) => {
    next = args;
    waiting = true;
    if (!busy) pump();
  };
}
