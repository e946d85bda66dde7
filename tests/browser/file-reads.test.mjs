// The engine's one read hook (www/file-reads.js `readSlice`): it gives the bytes of the slice asked
// for, clamped to the file, counts them, and once the worker's stop flag is raised fails every read
// at once without reading; the worker can say how its engine learnt of the stop. Run in Node
// against a stand-in for FileReaderSync.
import { test } from 'node:test';
import assert from 'node:assert/strict';

// The stand-in reads a Blob slice's bytes (Node's Blob has no synchronous read); it counts reads.
let reads = 0;
class FakeReader {
  readAsArrayBuffer(blob) {
    reads++;
    return blob.known.slice().buffer;
  }
}
const nodeSlice = Blob.prototype.slice;
Blob.prototype.slice = function recorded(start, end) {
  const part = nodeSlice.call(this, start, end);
  part.known = this.known.subarray(start, end);
  return part;
};
globalThis.self = globalThis;
globalThis.FileReaderSync = FakeReader;
const { installFileReads, readSlice, stopReadsOn, fileReads } = await import('../../www/file-reads.js');
installFileReads();

const bytes = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251);
const file = new Blob([bytes]);
file.known = bytes;

test('the hook is the global the engine calls; reads come back unchanged, and their bytes are counted', () => {
  assert.equal(self.memlensReadSlice, readSlice);
  let n = 0;
  for (let at = 0; at < bytes.length; at += 777) {
    const part = self.memlensReadSlice(file, at, at + 777);
    assert.deepEqual(part, bytes.subarray(at, at + 777));
    n += part.length;
  }
  assert.equal(n, bytes.length, 'the last slice is clamped to the file');
  assert.equal(fileReads.bytes, n);
  assert.ok(fileReads.ms >= 0);
});

test('a raised stop flag fails every read at once, without reading', () => {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  stopReadsOn(flag);
  assert.deepEqual(readSlice(file, 0, 10), bytes.subarray(0, 10));
  Atomics.store(flag, 0, 1);
  const before = reads;
  assert.throws(() => readSlice(file, 10, 20), (e) => e.name === 'AbortError' && /the load was stopped/.test(e.message));
  assert.equal(reads, before);
  stopReadsOn(null);
});

test('the worker says how its engine first learnt of the stop: by its stop question, or by a refused read', async () => {
  // Each case in a fresh copy of the module: what it was told is kept for the worker's life.
  const fresh = (tag) => import(`../../www/file-reads.js?${tag}`);
  const asked = await fresh('asked');
  asked.installFileReads();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  asked.stopReadsOn(flag);
  assert.equal(self.memlensStopped(), false);
  asked.readSlice(file, 0, 10);
  assert.equal(asked.stopTold(), null, 'nothing told while the flag is down');
  Atomics.store(flag, 0, 1);
  assert.equal(self.memlensStopped(), true);
  assert.throws(() => asked.readSlice(file, 10, 20), (e) => e.name === 'AbortError');
  assert.equal(asked.stopTold(), 'asked', 'the question came first');

  const refused = await fresh('refused');
  refused.installFileReads();
  refused.stopReadsOn(flag);
  assert.throws(() => refused.readSlice(file, 10, 20), (e) => e.name === 'AbortError');
  assert.equal(self.memlensStopped(), true);
  assert.equal(refused.stopTold(), 'refused', 'the refused read came first');

  const idle = await fresh('idle');
  idle.stopReadsOn(flag);
  assert.equal(idle.stopTold(), null, 'a raised flag alone tells nothing: no call asked or read');
  installFileReads();
});

test("the worker's ?readSize=MiB is the read size stated to the engine, and none without it", () => {
  delete self.memlensReadSize;
  installFileReads();
  assert.equal(self.memlensReadSize, undefined, 'no size stated: the engine keeps its own');
  for (const [search, bytes] of [['?readSize=0.5', 524288], ['?engine=single&readSize=32', 32 << 20]]) {
    globalThis.location = { search };
    installFileReads();
    assert.equal(self.memlensReadSize(), bytes, search);
  }
  for (const search of ['?readSize=0', '?readSize=-4', '?readSize=x']) {
    delete self.memlensReadSize;
    globalThis.location = { search };
    installFileReads();
    assert.equal(self.memlensReadSize, undefined, search);
  }
  delete globalThis.location;
});
