// How the pool cuts one reader's share of a job into runs, each read by a fresh reader
// (www/worker-pool.js `batches`, `readerBytes`), checked in Node against the rules the runs must
// keep, on shares of random sizes: every part once and in order; no run over the limit unless it
// is one part; and no run that could have taken the next part without passing the limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';

const { batches, readerBytes } = await import('../../www/worker-pool.js');

/** A small deterministic generator (xorshift32), so that a failure can be run again. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}

test('batches: every part once, in order, within the limit, each run as long as the limit allows', () => {
  const r = rng(7);
  for (let trial = 0; trial < 500; trial++) {
    const n = Math.floor(r() * 40);
    const parts = Array.from({ length: n + 3 }, () => ({ bytes: Math.floor(r() * 3000) }));
    // A reader's share: some of the parts, in increasing order (as `share` gives them).
    const share = parts.map((p, i) => i).filter(() => r() < 0.7);
    const limit = 1 + Math.floor(r() * 4000);
    const runs = batches(share, parts, limit);
    const sum = (run) => run.reduce((s, i) => s + parts[i].bytes, 0);
    assert.deepEqual(runs.flat(), share, `trial ${trial}: the runs hold the share in order`);
    for (const run of runs) {
      assert.ok(run.length > 0, `trial ${trial}: no empty run`);
      assert.ok(run.length === 1 || sum(run) <= limit, `trial ${trial}: run ${JSON.stringify(run)} of ${sum(run)} bytes passes ${limit}`);
    }
    for (let k = 0; k + 1 < runs.length; k++) {
      const next = runs[k + 1][0];
      assert.ok(sum(runs[k]) + parts[next].bytes > limit, `trial ${trial}: run ${k} could have taken part ${next}`);
    }
  }
});

test('batches: no limit reads the share in one run; an empty share has none', () => {
  const parts = [{ bytes: 5 }, { bytes: 2 ** 40 }, { bytes: 0 }];
  assert.deepEqual(batches([0, 1, 2], parts, Infinity), [[0, 1, 2]]);
  assert.deepEqual(batches([], parts, 10), []);
  // A part over the limit is a run of its own, and so is each part when every one is.
  assert.deepEqual(batches([0, 1, 2], parts, 4), [[0], [1], [2]]);
});

test('readerBytes: MiB from the query, 0 for no limit, 2 GiB otherwise', () => {
  assert.equal(readerBytes(''), 2 * 2 ** 30);
  assert.equal(readerBytes('?readerBytes=512'), 512 * 2 ** 20);
  assert.equal(readerBytes('?readerBytes=0.5'), 2 ** 19);
  assert.equal(readerBytes('?readerBytes=0'), Infinity);
  for (const bad of ['?readerBytes=', '?readerBytes=abc', '?readerBytes=-3', '?readerBytes=Infinity']) {
    assert.equal(readerBytes(bad), 2 * 2 ** 30, bad);
  }
});
