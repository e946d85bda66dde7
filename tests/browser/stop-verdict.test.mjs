// What the Cancel tests make of workers the browser still lists after a stop (the harness's
// `stopVerdict`): a worker the page did not end, or whose context the browser did not end, fails
// the stop; a worker of the page whose context ended is only lagging in the browser's list once
// every worker of the page is known to be gone; the others are left to the list. Run in Node
// against records written as the page writes them (www/worker-life.js marks, page times in ms).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stopVerdict } from './harness.mjs';

const ENGINE = { id: 'T1', url: 'http://127.0.0.1:8000/worker.js?threads=2&stopWait=10000' };
const READER = { id: 'T2', url: 'http://127.0.0.1:8000/worker.js?engine=single' };
const THREAD = { id: 'T3', url: 'blob:http://127.0.0.1:8000/5b8e0f8c-1c1e-4c55-9d3a-3f2b1f1c9a77' };
const HELPER = { id: 'T4', url: 'http://127.0.0.1:8000/read-ahead-worker.js' };

/** A worker's record: ended on its word, terminated, its lock granted. */
const gone = { watched: 10, locked: 20, end: 1000, stopped: 1010, terminate: 1011, gone: 1030 };

test('a worker of the page still listed, every worker of the page ended and its context ended: lagging, nothing failed', () => {
  const v = stopVerdict([ENGINE, READER], [1, 2], { 1: gone, 2: { ...gone, forced: 1300, terminate: 1300, gone: 1302 } });
  assert.deepEqual(v.unended, []);
  assert.deepEqual(v.lagging, [ENGINE, READER]);
  assert.deepEqual(v.listed, []);
});

test('a thread or the read-ahead helper still listed is left to the list even when every context of the page ended', () => {
  const v = stopVerdict([ENGINE, THREAD, HELPER], [1], { 1: gone });
  assert.deepEqual(v.unended, []);
  assert.deepEqual(v.lagging, [ENGINE]);
  assert.deepEqual(v.listed, [THREAD, HELPER]);
});

test('a worker the page did not end, or did not terminate, fails the stop and nothing counts as lagging', () => {
  const { end, ...notEnded } = gone;
  const { terminate, ...notTerminated } = gone;
  const v = stopVerdict([ENGINE], [1, 2, 3], { 1: notEnded, 2: notTerminated, 3: gone });
  assert.deepEqual(v.unended.map((l) => l.id), [1, 2]);
  assert.equal(v.unended[0].end, undefined);
  assert.equal(v.unended[1].terminate, undefined);
  assert.deepEqual(v.lagging, []);
  assert.deepEqual(v.listed, [ENGINE]);
});

test('a worker terminated whose lock the browser did not grant fails the stop: its context may still run', () => {
  const { gone: _, ...locked } = gone;
  const v = stopVerdict([ENGINE], [1, 2], { 1: locked, 2: gone });
  assert.deepEqual(v.unended, [{ id: 1, ...locked }]);
  assert.deepEqual(v.lagging, []);
});

test('a worker terminated before it took its lock gives no word of its context: every listed target is left to the list', () => {
  const { locked, gone: _, ...early } = gone;
  const v = stopVerdict([ENGINE, READER], [1, 2], { 1: early, 2: gone });
  assert.deepEqual(v.unended, []);
  assert.deepEqual(v.lagging, []);
  assert.deepEqual(v.listed, [ENGINE, READER]);
});

test('a worker that ran at the watch but left no record at all fails the stop', () => {
  const v = stopVerdict([READER], [1, 7], { 1: gone });
  assert.deepEqual(v.unended, [{ id: 7 }]);
  assert.deepEqual(v.lagging, []);
});
