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
  // When each key was last named by `set` or `ask`, on a counter of those calls: what an answer
  // still on its way checks before it sets anything (see `ask`).
  let clock = 0;
  const named = new Map();

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
      const tick = ++clock;
      // Named counts, changed or not: the user who picks again what is picked has picked it.
      for (const k of Object.keys(patch)) named.set(k, tick);
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
    /**
     * For an action of the user whose answer comes later from the worker and then sets some of
     * `keys` (a search, a click the worker resolves): returns `current()`, true until a later
     * `set` or `ask` names one of `keys`. An answer no longer current sets nothing: the user has
     * picked something else meanwhile (even what was picked already), or a newer action asked.
     */
    ask(keys) {
      const tick = ++clock;
      for (const k of keys) named.set(k, tick);
      return () => keys.every((k) => named.get(k) === tick);
    },
    /**
     * For an answer that follows the current pick without selecting (a zoom to it): returns
     * `current()`, true until a later `set` or `ask` names one of `keys`. It names nothing
     * itself, so it keeps no other answer from selecting.
     */
    since(keys) {
      const at = clock;
      return () => keys.every((k) => !(named.get(k) > at));
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
