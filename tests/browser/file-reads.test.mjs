// The worker's timing of file reads (www/file-reads.js) passes every read through unchanged and
// counts the bytes read. Run in Node against a stand-in for FileReaderSync.
import { test } from 'node:test';
import assert from 'node:assert/strict';

class FakeReader {
  readAsArrayBuffer(blob) {
    return blob.bytes.slice().buffer;
  }
}
globalThis.FileReaderSync = FakeReader;
const { installFileReads, fileReads } = await import('../../www/file-reads.js');
installFileReads();

test('reads come back unchanged, and their bytes are counted', () => {
  const bytes = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251);
  const reader = new FakeReader();
  let n = 0;
  for (let at = 0; at < bytes.length; at += 777) {
    const part = bytes.subarray(at, at + 777);
    assert.deepEqual(new Uint8Array(reader.readAsArrayBuffer({ bytes: part })), part);
    n += part.length;
  }
  assert.equal(fileReads.bytes, n);
  assert.ok(fileReads.ms >= 0);
});
