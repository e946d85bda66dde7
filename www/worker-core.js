// The analysis worker's message loop, shared by the served page (worker.js) and the offline file
// (worker-offline.js). It owns the wasm engine and the user's files; the page asks it questions by
// method name and gets JSON-ready answers back. Progress is streamed as it happens.
import { installFileReads } from './file-reads.js';
import { installLife } from './worker-life.js';

// When the steps of this worker's start happened (ms since the epoch, so the page can set them on
// its own clock): the benchmark's split of a reader's engine start (see `startMark`).
const marks = {};

/**
 * Marks a step of the worker's start (`script`: its scripts loaded and run; `glue`: the engine's
 * JavaScript imported; `instance`: the wasm compiled and instantiated; `threads`: the threaded
 * engine's pool running); the engine announcement carries them.
 */
export function startMark(name) {
  marks[name] = performance.timeOrigin + performance.now();
}

/**
 * Starts answering requests. `loadEngine()` resolves to { mod, build, reason, readAhead } where
 * `mod` is the initialised wasm-bindgen module and `readAhead` says whether files are read ahead on
 * another thread (read-ahead.js). Each of `modules` is `(ctx) => ({ method(params, progress) })`:
 * the analysis families add their requests this way. `ctx.mod()` is the wasm module, `ctx.session()`
 * the current Session (files of the last drop), `ctx.onReset(fn)` registers cleanup for a new drop,
 * `ctx.transfer(result)` returns `result` marked so its typed arrays move to the page uncopied.
 * `ctx.asked()` counts the requests received so far; a handler's third argument is its own
 * request's number in that count, so a request that runs in steps can give way to a later one.
 * `ctx.hold(s)` / `ctx.release(s)` mark a Session another request keeps (the Compare mode's two
 * sides): a new drop does not free a held session, and a released one is freed unless it has
 * become the drop's; `ctx.adopt(s)` makes a held session the drop's (a link from a comparison into
 * one side's own views) and returns its inventory.
 */
export function serve(loadEngine, modules = []) {
  // The engine's one read hook (file-reads.js): stop flag, read-ahead and timing.
  installFileReads();
  let engine = null;
  let session = null;
  let engineError = null;
  const post = (msg, transfer = []) => self.postMessage(msg, transfer);

  const ready = loadEngine()
    .then((e) => {
      engine = e;
      const info = JSON.parse(e.mod.engineInfo());
      startMark('ready');
      post({ type: 'engine', threads: info.threads, build: info.build, version: info.version, reason: e.reason || null, readAhead: Boolean(e.readAhead), marks });
    })
    .catch((err) => {
      engineError = err && err.message ? err.message : String(err);
      post({ type: 'engine-error', message: engineError });
    });

  const resets = [];
  // Sessions another request keeps: not freed when the drop's session is replaced.
  const held = new Set();
  const replace = (next) => {
    for (const fn of resets) fn();
    if (session && session !== next && !held.has(session)) session.free();
    session = next;
  };
  // Results whose typed arrays the handler gave away (see ctx.transfer).
  const movable = new WeakSet();
  // Requests received so far: a request that runs in steps (the warm-up) gives way when it grows.
  let asked = 0;
  const ctx = {
    mod: () => engine.mod,
    session: () => session,
    onReset: (fn) => resets.push(fn),
    /** Marks a fresh result so its typed arrays' buffers are moved to the page, not copied. */
    transfer: (result) => {
      if (result && typeof result === 'object') movable.add(result);
      return result;
    },
    /** How many requests this worker has received so far (the one running included). */
    asked: () => asked,
    hold: (s) => held.add(s),
    release: (s) => {
      held.delete(s);
      if (s !== session) s.free();
    },
    adopt: (s) => {
      replace(s);
      const inventory = JSON.parse(s.classify(() => {}));
      if (inventory.error) throw new Error(inventory.error);
      return inventory;
    },
  };
  const handlers = {
    /** Replaces the session with the given files, expands archives and classifies them. */
    load({ files, unreadable, given }, progress) {
      replace(new engine.mod.Session());
      for (const g of given || []) session.addGiven(g);
      for (const f of files) session.addFile(f.path, f.file);
      for (const u of unreadable || []) session.addUnreadable(u.path, u.size || 0, u.error || 'unreadable');
      // Archives are expanded here, once: their members are files of the drop from now on.
      const json = session.classify((done, total, label) => progress(done, total, label));
      const inventory = JSON.parse(json);
      if (inventory.error) throw new Error(inventory.error);
      return inventory;
    },
  };
  for (const m of modules) Object.assign(handlers, m(ctx));

  // Settles once the worker holds its life lock (see installLife): requests wait for it.
  let life = Promise.resolve();
  self.onmessage = async (ev) => {
    // The page's stop flag and lock (see worker-life.js); the threaded engine's threads are
    // stopped with the worker.
    if (ev.data?.type === 'life') {
      life = installLife(ev.data, () => engine?.mod.stopThreads?.());
      return;
    }
    const { id, method, params } = ev.data || {};
    const order = ++asked;
    try {
      await ready;
      await life;
      if (!engine) throw new Error(`the analysis engine did not load: ${engineError}`);
      const handler = handlers[method];
      if (!handler) throw new Error(`unknown request ${method}`);
      let last = 0;
      // `extra` (optional) is merged into the progress message; `extra.keep` exempts a message from
      // the throttle (e.g. one that carries a list the page must not miss).
      const progress = (done, total, label, extra) => {
        // Throttle to ~20 messages a second; the last one always goes out.
        const now = performance.now();
        if (done < total && now - last < 50 && !(extra && extra.keep)) return;
        last = now;
        post({ id, progress: { ...extra, done, total, label } });
      };
      const result = await handler(params || {}, progress, order);
      post({ id, result }, movable.has(result) ? transferables(result) : []);
    } catch (err) {
      const message = err && err.message ? err.message : String(err);
      // A trap inside wasm (RuntimeError) leaves the instance unusable; say so plainly, with the
      // memory it held (a failed allocation aborts as a trap too).
      const fatal = err instanceof WebAssembly.RuntimeError;
      post({ id, error: fatal ? `internal error in the analysis engine (${message}, with ${heldMiB(engine)} of WebAssembly memory; it may have run out of memory); reload the page` : message });
    }
  };
}

/** The wasm memory the engine holds, as text (`? MiB` when it cannot say). */
function heldMiB(engine) {
  try {
    return `${Math.round(engine.mod.memoryBytes() / 2 ** 20)} MiB`;
  } catch {
    return '? MiB';
  }
}

/**
 * The buffers of a result's typed arrays (the result itself or its top-level values) that can be
 * moved to the page instead of copied: whole, unshared ArrayBuffers only, so a view into the wasm
 * memory (or any buffer still in use here) is never detached.
 */
function transferables(result) {
  const out = new Set();
  const consider = (v) => {
    if (ArrayBuffer.isView(v) && v.buffer instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) out.add(v.buffer);
  };
  if (result && typeof result === 'object') {
    consider(result);
    if (!ArrayBuffer.isView(result)) for (const v of Object.values(result)) consider(v);
  }
  return [...out];
}
