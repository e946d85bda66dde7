// View state in the URL hash (#view=somas&node=12&x0=…), so a reload restores what the user looked
// at. Only view state goes here — never data from the user's files (names are not written; ids and
// numbers are).

const listeners = new Set();
let state = parse(location.hash);

function parse(hash) {
  const out = {};
  for (const part of hash.replace(/^#/, '').split('&')) {
    if (!part) continue;
    const i = part.indexOf('=');
    const k = decodeURIComponent(i < 0 ? part : part.slice(0, i));
    out[k] = i < 0 ? '' : decodeURIComponent(part.slice(i + 1));
  }
  return out;
}

function serialise(obj) {
  return Object.entries(obj)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
}

/** The current state (a copy). */
export function getState() {
  return { ...state };
}

/** One key of the state, or `fallback`. */
export function get(key, fallback = undefined) {
  return key in state ? state[key] : fallback;
}

/** Merges `patch` into the state (undefined/null/'' delete a key) and updates the hash in place. */
export function update(patch) {
  const next = { ...state };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined || v === null || v === '') delete next[k];
    else next[k] = String(v);
  }
  const text = serialise(next);
  state = next;
  // Each replaceState costs the browser a same-document navigation (~ms); several writes in one
  // task (a selection resets a few keys through several views) become one, at the task's end.
  if (queued) return;
  queued = true;
  queueMicrotask(() => {
    queued = false;
    const now = serialise(state);
    const url = `${location.pathname}${location.search}${now ? `#${now}` : ''}`;
    if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
  });
}

let queued = false;

/** Removes `keys` from the state (see `update`). */
export function forget(keys) {
  update(Object.fromEntries(keys.map((k) => [k, null])));
}

/** Calls `fn(state)` when the user edits the hash by hand or navigates. */
export function onExternalChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

window.addEventListener('hashchange', () => {
  state = parse(location.hash);
  for (const fn of listeners) fn(getState());
});
