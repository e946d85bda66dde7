// The workers' read-ahead (www/read-ahead.js): every read gives the bytes a plain read of the same
// slice gives, in order, backwards or of any size; sequential reads come from the helper (no plain
// read) into one reused buffer; a slice larger than a slot and a read the helper cannot make fall
// back to the plain read. Run in Node: the helper is the real www/read-ahead-worker.js on a
// worker thread, and a stand-in for FileReaderSync reads the slices synchronously.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker as NodeWorker } from 'node:worker_threads';

const helperUrl = new URL('../../www/read-ahead-worker.js', import.meta.url).href;
// The helper as a browser worker sees it: `self.onmessage`, `self.postMessage`, and messages held
// until its script has run.
const boot = `
  const { parentPort } = require('node:worker_threads');
  globalThis.self = globalThis;
  self.postMessage = (m) => parentPort.postMessage(m);
  const early = [];
  parentPort.on('message', (data) => (self.onmessage ? self.onmessage({ data }) : early.push(data)));
  import(${JSON.stringify(helperUrl)}).then(() => early.splice(0).forEach((data) => self.onmessage({ data })));
`;
class BrowserWorker {
  constructor() {
    this.thread = new NodeWorker(boot, { eval: true });
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
assert.equal(await startReadAhead(), true);

/** A File of `n` bytes of a known pattern, readable by the stand-in. */
function file(n, seed) {
  const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 7919 + seed) % 251);
  const f = new File([bytes], `f${seed}.bin`);
  plain.set(f, bytes);
  return { f, bytes };
}
const reader = new FakeReader();
const readSlice = (f, a, b) => new Uint8Array(reader.readAsArrayBuffer(f.slice(a, b)).slice(0));

test('sequential slices come from the helper, byte for byte, into one reused buffer', () => {
  const { f, bytes } = file(5_000_000 + 123, 1);
  const before = plainReads;
  const step = 400_000;
  const buffers = new Set();
  for (let at = 0; at < bytes.length; at += step) {
    const end = Math.min(at + step, bytes.length);
    const buffer = reader.readAsArrayBuffer(f.slice(at, end));
    buffers.add(buffer);
    assert.deepEqual(new Uint8Array(buffer), bytes.subarray(at, end), `slice at ${at}`);
  }
  assert.equal(plainReads, before, 'no plain read');
  assert.equal(buffers.size, 1, 'one buffer for every read');
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

test('a slice larger than a slot, and one the helper cannot read, are read plainly', () => {
  const { f, bytes } = file(9 << 20, 4);
  let before = plainReads;
  assert.deepEqual(readSlice(f, 0, 9 << 20), bytes);
  assert.equal(plainReads, before + 1);
  // A Blob the helper was never given (not a File): the plain read, and its error.
  before = plainReads;
  const blob = new Blob([new Uint8Array(10)]);
  assert.throws(() => reader.readAsArrayBuffer(blob.slice(0, 5)), /unreadable/);
  assert.equal(plainReads, before + 1);
});
