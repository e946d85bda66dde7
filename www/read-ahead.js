// Reading the next slice of a file on another thread while the engine parses this one. The wasm
// engine reads a `File` synchronously, a slice at a time (`file.slice(a, b)` then
// `FileReaderSync.readAsArrayBuffer`), so on its own a worker reads and parses in turns; and every
// slice it reads is a new buffer that waits for a garbage collection that a worker busy in wasm
// does not get to run (a third of the bytes read stayed resident in the tab). Here a helper worker
// (read-ahead-worker.js) reads the slices that follow the one asked for into shared memory, with
// its own event loop and collections, and the engine's read copies the slice from there into one
// reused buffer: no new buffer per read, and the read of the next slice overlaps the parse of this
// one. The engine's two calls are wrapped in this worker, so the engine is unchanged; a read the
// helper cannot serve (a slice larger than a slot, a failed or late read) is the plain
// `FileReaderSync` read, which also gives the error the user sees.
// Needs shared memory (a cross-origin isolated page) and resizable buffers; else it stays off.
import { fileReads } from './file-reads.js';

/** Bytes per slot: the engine's reads are 8 MiB at most (the core's default chunk). */
const SLOT = 8 << 20;
/** Slots: the slice being read for the engine and one more ahead. */
const SLOTS = 2;
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
 * Starts the helper and wraps this worker's slice and read calls; resolves to true once reads go
 * through it, false where it cannot be used (the worker then reads as before).
 */
export async function startReadAhead() {
  const usable =
    self.crossOriginIsolated === true &&
    typeof SharedArrayBuffer === 'function' &&
    typeof FileReaderSync === 'function' &&
    typeof Atomics.wait === 'function' &&
    'resize' in ArrayBuffer.prototype;
  if (!usable) return false;
  let helper;
  try {
    helper = new Worker(new URL('./read-ahead-worker.js', import.meta.url), { type: 'module', name: 'memlens read-ahead' });
  } catch {
    return false;
  }
  const shared = new SharedArrayBuffer(64 + SLOTS * SLOT);
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

/** Wraps `Blob.prototype.slice` and `FileReaderSync.prototype.readAsArrayBuffer` (see above). */
function install(helper, shared) {
  const control = new Int32Array(shared, 0, SLOTS * 2);
  const bytes = new Uint8Array(shared, 64);
  // The one buffer every served read returns, resized to the slice (the engine copies it at once).
  const out = new ArrayBuffer(0, { maxByteLength: SLOT });
  const outBytes = new Uint8Array(out);
  // Where a slice of a File comes from: { file, start, end }.
  const origins = new WeakMap();
  // The helper knows each File by a number, sent once.
  const ids = new WeakMap();
  let nextId = 1;
  // What each slot holds or is reading: { id, start, end }, null when free; `dead` for a slot whose
  // read did not come back in time (the helper may still write it, so it is never used again).
  const slots = Array(SLOTS).fill(null);

  const slice = Blob.prototype.slice;
  Blob.prototype.slice = function slicedFrom(start, end, type) {
    const part = slice.call(this, start, end, type);
    if (this instanceof File && Number.isFinite(start) && Number.isFinite(end) && start >= 0 && end >= start) {
      origins.set(part, { file: this, start: Math.min(start, this.size), end: Math.min(end, this.size) });
    }
    return part;
  };

  const idOf = (file) => {
    let id = ids.get(file);
    if (!id) {
      id = nextId++;
      ids.set(file, id);
      helper.postMessage({ type: 'file', id, file });
    }
    return id;
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

  const read = FileReaderSync.prototype.readAsArrayBuffer;
  FileReaderSync.prototype.readAsArrayBuffer = function readAhead(blob) {
    const o = origins.get(blob);
    const n = o ? o.end - o.start : 0;
    if (!o || n === 0 || n > SLOT) return read.call(this, blob);
    const t = performance.now();
    const id = idOf(o.file);
    let k = slots.findIndex((s) => holds(s, id, o.start) && s.end >= o.end);
    if (k < 0) {
      // Not read ahead: a free slot, else one whose read-ahead nobody asked for.
      k = slots.indexOf(null);
      if (k < 0) k = slots.findIndex((s) => !s.dead);
      if (k < 0 || !settle(k)) return read.call(this, blob);
      issue(k, id, o.start, o.end);
    }
    const ok = settle(k) && Atomics.load(control, 2 * k) === READY && Atomics.load(control, 2 * k + 1) >= n;
    if (!slots[k].dead) {
      slots[k] = null;
      Atomics.store(control, 2 * k, EMPTY);
    }
    // A failed read is read again here, which says what failed.
    if (!ok) return read.call(this, blob);
    out.resize(n);
    outBytes.set(bytes.subarray(k * SLOT, k * SLOT + n));
    // Ahead: the slices of the same length that follow, into the free slots.
    let next = o.end;
    for (let j = 0; j < SLOTS && next < o.file.size; j++) {
      const end = Math.min(next + n, o.file.size);
      if (!slots.some((s) => holds(s, id, next))) {
        const free = slots.indexOf(null);
        if (free < 0) break;
        issue(free, id, next, end);
      }
      next = end;
    }
    fileReads.ms += performance.now() - t;
    fileReads.bytes += n;
    return out;
  };
}
