// The helper of read-ahead.js: reads the slices an analysis worker asks for into shared memory,
// on its own thread, and wakes the worker when a slice is there. Its event loop runs between
// reads, so the buffers it reads are collected as it goes.
// Where the browser's `Blob.stream()` is a byte stream, a slice is read with a BYOB reader into a
// small buffer of the slot's own, reused, each piece copied into the slot as it comes: measured in
// Chromium (docs/benchmarks.md, *How fast the browser serves a File's bytes*), a BYOB reader into
// one reused buffer reads 1.5–2.2× as fast in sum as a new buffer per read, at about 0.4× the
// renderer's CPU per byte. Else (or when that fails) `slice().arrayBuffer()`, as before.
const READY = 2;
const FAILED = 3;
let control = null;
let bytes = null;
let slot = 0;
const files = new Map();
// Per slot, the buffer its BYOB reads fill (a read hands it back as a new ArrayBuffer object).
const PIECE = 1 << 20;
const pieces = [];

/** Reads `blob` into `bytes` at `at` (at most `room` bytes); the bytes read, or -1 when more. */
async function readInto(blob, k, at, room) {
  if (blob.size > room) return -1;
  let reader = null;
  try {
    reader = blob.stream().getReader({ mode: 'byob' });
  } catch {
    // Not a byte stream here.
  }
  if (!reader) {
    const part = new Uint8Array(await blob.arrayBuffer());
    bytes.set(part, at);
    return part.length;
  }
  let got = 0;
  try {
    while (got < blob.size) {
      const { done, value } = await reader.read(new Uint8Array(pieces[k] || new ArrayBuffer(PIECE), 0, Math.min(PIECE, blob.size - got)));
      if (value) pieces[k] = value.buffer;
      if (done) break;
      bytes.set(value, at + got);
      got += value.length;
    }
  } finally {
    reader.cancel().catch(() => {});
    // A read that failed keeps the buffer it was handed (detached here): a new one next time.
    if (pieces[k] && pieces[k].byteLength === 0) pieces[k] = null;
  }
  return got;
}

self.onmessage = async ({ data: m }) => {
  if (m.type === 'init') {
    control = new Int32Array(m.shared, 0, m.slots * 2);
    bytes = new Uint8Array(m.shared, 64);
    slot = m.slot;
    self.postMessage('ready');
  } else if (m.type === 'file') {
    files.set(m.id, m.file);
  } else if (m.type === 'read') {
    let state = FAILED;
    let n = 0;
    try {
      const got = await readInto(files.get(m.id).slice(m.start, m.end), m.slot, m.slot * slot, slot);
      if (got === m.end - m.start) {
        n = got;
        state = READY;
      }
    } catch {
      // The worker reads the slice itself and reports the failure.
    }
    Atomics.store(control, 2 * m.slot + 1, n);
    Atomics.store(control, 2 * m.slot, state);
    Atomics.notify(control, 2 * m.slot);
  }
};
