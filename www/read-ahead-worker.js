// The helper of read-ahead.js: reads the slices an analysis worker asks for into shared memory,
// on its own thread, and wakes the worker when a slice is there. Its event loop runs between
// reads, so the buffers it reads are collected as it goes.
const READY = 2;
const FAILED = 3;
let control = null;
let bytes = null;
let slot = 0;
const files = new Map();

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
      const part = new Uint8Array(await files.get(m.id).slice(m.start, m.end).arrayBuffer());
      if (part.length <= slot) {
        bytes.set(part, m.slot * slot);
        n = part.length;
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
