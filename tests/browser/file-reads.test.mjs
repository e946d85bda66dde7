// The engine's one read hook (www/file-reads.js `readSlice`): it gives the bytes of the slice asked
// for, clamped to the file, counts them, and once the worker's stop flag is raised fails every read
// at once without reading. Run in Node against a stand-in for FileReaderSync.
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
