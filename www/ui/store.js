// The one store of a page's view state, shared by every tab: the views read `get()`, change it
// with `set(patch)` and hear about changes through `on(fn)`; the store mirrors the state into the
// URL hash through the tab's own `toHash` (only view state goes there: ids, numbers, the user's
// filter text — never names from the user's files), so a reload restores what was looked at.
//
// A tab builds its views the same way: a view is a function or class given the tab's context
// ({ store, client, show, … }) that returns { node, update(state, changed) } or subscribes with
// `store.on`; an action that changes a view out of sight calls `show(view)` (ui/reveal.js).
import * as hash from './hash-state.js';

/**
 * A store over `initial`. `toHash(state)` returns the hash keys of the tab (null/'' removes a
 * key); `hashDelay` (ms) coalesces the writes of a held key, since browsers throttle
 * history.replaceState.
 */
export function createStore(initial, { toHash = null, hashDelay = 0 } = {}) {
  let state = { ...initial };
  const listeners = new Set();
  let timer = null;

  function write() {
    if (!toHash) return;
    clearTimeout(timer);
    timer = null;
    hash.update(toHash(state));
  }

  return {
    /** The current state; treat it as read-only (`set` replaces it). */
    get: () => state,
    /**
     * Merges `patch`; the listeners hear the new state and the Set of the keys whose value
     * changed. Returns whether anything changed.
     */
    set(patch) {
      const changed = new Set();
      for (const [k, v] of Object.entries(patch)) {
        if (!same(state[k], v)) changed.add(k);
      }
      if (!changed.size) return false;
      state = { ...state, ...patch };
      if (hashDelay > 0) {
        clearTimeout(timer);
        timer = setTimeout(write, hashDelay);
      } else write();
      for (const fn of listeners) fn(state, changed);
      return true;
    },
    /** Calls `fn(state, changed)` after each change; returns the function that stops it. */
    on(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    /** Writes the hash now. */
    write,
  };
}

/** Deep equality of plain values, arrays and Sets. */
export function same(a, b) {
  if (a === b) return true;
  if (a instanceof Set && b instanceof Set) return a.size === b.size && [...a].every((x) => b.has(x));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => same(a[k], b[k]));
  }
  return false;
}
