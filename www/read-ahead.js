// Reading the next slice of a file on another thread while the engine parses this one. The wasm
// engine reads a `File` synchronously, a slice at a time, through the worker's read hook
// (file-reads.js), so on its own a worker reads and parses in turns; and every slice it reads is a
// new buffer that waits for a garbage collection that a worker busy in wasm does not get to run (a
// third of the bytes read stayed resident in the tab). Here a helper worker (read-ahead-worker.js)
// reads the slices that follow the one asked for into shared memory, with its own event loop and
// collections, and the hook hands the engine a view of the slot, which the engine copies into its
// own memory at once: no new buffer per read, and the read of the next slice overlaps the parse of
// this one. A read the helper cannot serve (a slice larger than a slot, a failed or late read) is the
// hook's plain read, which also gives the error the user sees.
// Needs shared memory (a cross-origin isolated page); else it stays off. A pool's readers start it
// by default (www/worker-pool.js `readerParams`): there it bounds the tab's memory on large jobs and
// reaches their overview sooner; the page's own worker does not (a memory snapshot opened 1.14×
// slower with it, its helper beside the threaded engine): docs/benchmarks.md, *Read-ahead for the
// pool's readers*. Nothing here is needed for a correct read: a helper that cannot start, or slots
// that cannot be had, leave the worker reading by itself.
import { readAheadWith, statedReadSize } from './file-reads.js';
import { isolated } from './worker-isolated.js';

/**
 * Bytes per slot: a File asks for reads of 16 MiB (src/wasm/file_source.rs FILE_READ), or of the
 * page's `?readSize`; a larger read is the hook's plain read.
 */
const SLOT = Math.max(16 << 20, statedReadSize());
/**
 * Slots: the one lent to the engine (its bytes are copied before the next read) and two more read
 * ahead.
 */
const SLOTS = 3;
// Slot states in the shared control words (two words per slot: state, bytes read).
const EMPTY = 0;
const PENDING = 1;
const READY = 2;
const FAILED = 3;
/** A helper that answers no read in this time is given up (the engine reads for itself). */
const WAIT_MS = 10000;
/** A helper that does not start in this time is not used. */
const START_MS = 3000;

/**
 * Starts the helper and serves the read hook's reads through it; resolves to true once reads go
 * through it, false where it cannot be used (the worker then reads as before).
 */
export async function startReadAhead() {
  const usable = isolated() && typeof FileReaderSync === 'function' && typeof Atomics.wait === 'function';
  if (!usable) return false;
  let shared;
  let helper;
  try {
    // The slots first: a tab short of memory for them (a large `?readSize`) starts no helper.
    shared = new SharedArrayBuffer(64 + SLOTS * SLOT);
    helper = new Worker(new URL('./read-ahead-worker.js', import.meta.url), { type: 'module', name: 'memlens read-ahead' });
  } catch {
    return false;
  }
  const started = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), START_MS);
    helper.onmessage = (ev) => {
      clearTimeout(timer);
      resolve(ev.data === 'ready');
    };
    helper.onerror = () => {
      clearTimeout(timer);
      resolve(false);
    };
    helper.postMessage({ type: 'init', shared, slot: SLOT, slots: SLOTS });
  });
  if (!started) {
    helper.terminate();
    return false;
  }
  install(helper, shared);
  return true;
}

/**
 * The read hook's `serve(file, start, end)`: the bytes from the helper's slot (a view, valid until
 * the next call), or null when the hook should read the slice itself.
 */
function install(helper, shared) {
  const control = new Int32Array(shared, 0, SLOTS * 2);
  const bytes = new Uint8Array(shared, 64);
  // The helper knows each File by a number, sent once.
  const ids = new WeakMap();
  let nextId = 1;
  // What each slot holds or is reading: { id, start, end }, null when free; `dead` for a slot whose
  // read did not come back in time (the helper may still write it, so it is never used again).
  const slots = Array(SLOTS).fill(null);
  // The slot whose bytes the last call lent to the engine (-1: none): freed at the next call.
  let lent = -1;

  const idOf = (file) => {
    let id = ids.get(file);
    if (!id) {
      id = nextId++;
      ids.set(file, id);
      helper.postMessage({ type: 'file', id, file });
    }
    return id;
  };
  const free = (k) => {
    if (slots[k].dead) return;
    slots[k] = null;
    Atomics.store(control, 2 * k, EMPTY);
  };
  const issue = (k, id, start, end) => {
    Atomics.store(control, 2 * k, PENDING);
    slots[k] = { id, start, end };
    helper.postMessage({ type: 'read', slot: k, id, start, end });
  };
  // Waits while slot k is being read; false (and the slot given up) if the helper is too late.
  const settle = (k) => {
    if (Atomics.load(control, 2 * k) !== PENDING) return true;
    if (Atomics.wait(control, 2 * k, PENDING, WAIT_MS) !== 'timed-out') return true;
    slots[k] = { dead: true };
    return false;
  };
  const holds = (s, id, start) => s && !s.dead && s.id === id && s.start === start;

  readAheadWith(function serve(file, from, to) {
    // The engine has copied the bytes lent last time.
    if (lent >= 0) free(lent);
    lent = -1;
    const start = Math.min(from, file.size);
    const end = Math.min(to, file.size);
    const n = end - start;
    if (!(n > 0) || n > SLOT) return null;
    const id = idOf(file);
    let k = slots.findIndex((s) => holds(s, id, start) && s.end >= end);
    if (k < 0) {
      // Not read ahead: a free slot, else one whose read-ahead nobody asked for.
      k = slots.indexOf(null);
      if (k < 0) k = slots.findIndex((s) => !s.dead);
      if (k < 0 || !settle(k)) return null;
      issue(k, id, start, end);
    }
    const ok = settle(k) && Atomics.load(control, 2 * k) === READY && Atomics.load(control, 2 * k + 1) >= n;
    // A failed read is read again by the hook, which says what failed.
    if (!ok) {
      free(k);
      return null;
    }
    lent = k;
    // Ahead: the slices of the same length that follow, into the free slots.
    let next = end;
    for (let j = 0; j < SLOTS && next < file.size; j++) {
      const after = Math.min(next + n, file.size);
      if (!slots.some((s) => holds(s, id, next))) {
        const at = slots.indexOf(null);
        if (at < 0) break;
        issue(at, id, next, after);
      }
      next = after;
    }
    return bytes.subarray(k * SLOT, k * SLOT + n);
  });
}
