// The workers' read-ahead (www/read-ahead.js) behind the engine's read hook (www/file-reads.js
// `readSlice`): every read gives the bytes a plain read of the same slice gives, in order, backwards
// or of any size; sequential reads come from the helper (no plain read) as views of its shared
// memory, and the view lent to the engine stays intact until its next read; a slice larger than a
// slot falls back to the plain read. The helper reads with a BYOB reader of the slice's stream
// (Node's `Blob.stream()` is a byte stream, as Chromium's), and with `arrayBuffer()` where the
// stream is not one (the last case: a helper whose `Blob.stream()` is made a default stream).
// Run in Node: the helper is the real www/read-ahead-worker.js on a worker thread, and a stand-in
// for FileReaderSync reads the slices synchronously.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker as NodeWorker } from 'node:worker_threads';

const helperUrl = new URL('../../www/read-ahead-worker.js', import.meta.url).href;
// The helper as a browser worker sees it: `self.onmessage`, `self.postMessage`, and messages held
// until its script has run.
const boot = (prelude = '') => `
  const { parentPort } = require('node:worker_threads');
  ${prelude}
  globalThis.self = globalThis;
  self.postMessage = (m) => parentPort.postMessage(m);
  const early = [];
  parentPort.on('message', (data) => (self.onmessage ? self.onmessage({ data }) : early.push(data)));
  import(${JSON.stringify(helperUrl)}).then(() => early.splice(0).forEach((data) => self.onmessage({ data })));
`;
class BrowserWorker {
  constructor(prelude = '') {
    this.thread = new NodeWorker(boot(prelude), { eval: true });
    this.thread.on('message', (data) => this.onmessage?.({ data }));
    this.thread.on('error', (err) => this.onerror?.(err));
    this.thread.unref();
  }
  postMessage(m) {
    this.thread.postMessage(m);
  }
  terminate() {
    this.thread.terminate();
  }
}

// A plain synchronous read: the bytes of a slice, known from the slice call (counted).
const plain = new WeakMap();
let plainReads = 0;
const nodeSlice = Blob.prototype.slice;
Blob.prototype.slice = function recorded(start, end, type) {
  const part = nodeSlice.call(this, start, end, type);
  const bytes = plain.get(this);
  if (bytes) plain.set(part, bytes.subarray(start, end));
  return part;
};
class FakeReader {
  readAsArrayBuffer(blob) {
    plainReads++;
    const bytes = plain.get(blob);
    if (!bytes) throw new Error('unreadable');
    return bytes.slice().buffer;
  }
}
globalThis.self = globalThis;
globalThis.crossOriginIsolated = true;
globalThis.FileReaderSync = FakeReader;
globalThis.Worker = BrowserWorker;

const { startReadAhead } = await import('../../www/read-ahead.js');
const { readSlice: hook } = await import('../../www/file-reads.js');
assert.equal(await startReadAhead(), true);

/** A File of `n` bytes of a known pattern, readable by the stand-in. */
function file(n, seed) {
  const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 7919 + seed) % 251);
  const f = new File([bytes], `f${seed}.bin`);
  plain.set(f, bytes);
  return { f, bytes };
}
// The engine copies each read's bytes before its next read.
const readSlice = (f, a, b) => hook(f, a, b).slice();

test('sequential slices come from the helper, byte for byte, as views of its shared memory', () => {
  const { f, bytes } = file(5_000_000 + 123, 1);
  const before = plainReads;
  const step = 400_000;
  for (let at = 0; at < bytes.length; at += step) {
    const end = Math.min(at + step, bytes.length);
    const got = hook(f, at, end);
    assert.ok(got.buffer instanceof SharedArrayBuffer, `slice at ${at} is a new buffer`);
    assert.deepEqual(got, bytes.subarray(at, end), `slice at ${at}`);
  }
  assert.equal(plainReads, before, 'no plain read');
});

test('the bytes lent to the engine stay as they are while the helper reads ahead', async () => {
  const { f, bytes } = file(6_000_000, 5);
  const step = 1_000_000;
  for (let at = 0; at < 3 * step; at += step) {
    const got = hook(f, at, at + step);
    // The helper reads the following slices meanwhile.
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(got, bytes.subarray(at, at + step), `slice at ${at} after the helper read ahead`);
  }
});

test('reads backwards, of changing sizes and across two files give the right bytes', () => {
  const a = file(3_000_000, 2);
  const b = file(1_000_000, 3);
  for (let at = a.bytes.length - 250_000; at >= 0; at -= 250_000) {
    assert.deepEqual(readSlice(a.f, at, at + 250_000), a.bytes.subarray(at, at + 250_000));
    assert.deepEqual(readSlice(b.f, at % 900_000, (at % 900_000) + 77), b.bytes.subarray(at % 900_000, (at % 900_000) + 77));
  }
  const sizes = [1, 65_536, 3, 1_048_576, 17, 2_000_000];
  let at = 0;
  for (const n of sizes) {
    assert.deepEqual(readSlice(a.f, at, at + n), a.bytes.subarray(at, at + n), `${n} bytes at ${at}`);
    at += n;
  }
  // Past the end: the slice is clamped, as File.slice does.
  assert.deepEqual(readSlice(b.f, 999_990, 1_000_100), b.bytes.subarray(999_990));
});

test('a slice larger than a slot is read plainly', () => {
  const { f, bytes } = file(17 << 20, 4);
  const before = plainReads;
  assert.deepEqual(readSlice(f, 0, 17 << 20), bytes);
  assert.equal(plainReads, before + 1);
});

test('a read of the size a File asks for (16 MiB) comes from the helper', () => {
  const { f, bytes } = file(40 << 20, 6);
  const before = plainReads;
  for (let at = 0; at < bytes.length; at += 16 << 20) {
    const end = Math.min(at + (16 << 20), bytes.length);
    assert.deepEqual(readSlice(f, at, end), bytes.subarray(at, end), `slice at ${at}`);
  }
  assert.equal(plainReads, before, 'no plain read');
});

// The helper's Blob.stream() made a default stream of the same bytes: a BYOB reader cannot be had.
const NO_BYTE_STREAMS = `
  const byteStream = Blob.prototype.stream;
  Blob.prototype.stream = function stream() {
    const reader = byteStream.call(this).getReader();
    return new ReadableStream({
      async pull(c) {
        const { done, value } = await reader.read();
        if (done) c.close();
        else c.enqueue(value);
      },
    });
  };
`;

test('a helper without byte streams reads with arrayBuffer(): the same bytes, no plain read', async () => {
  globalThis.Worker = class extends BrowserWorker {
    constructor() {
      super(NO_BYTE_STREAMS);
    }
  };
  assert.equal(await startReadAhead(), true);
  const { f, bytes } = file(3_000_000 + 7, 8);
  const before = plainReads;
  for (let at = 0; at < bytes.length; at += 500_000) {
    const end = Math.min(at + 500_000, bytes.length);
    assert.deepEqual(readSlice(f, at, end), bytes.subarray(at, end), `slice at ${at}`);
  }
  assert.equal(plainReads, before, 'no plain read');
});
