// How the page ends a worker (www/worker-life.js `watchWorker`): it raises the worker's stop flag
// and terminates it on its `stopped` word, or by force once the wait for the word is over; a
// worker that fails is terminated too; whatever happens, `terminate()` runs once. Each step is in
// the page's record (the `memlens:worker-*` marks, by the worker's number), which a browser test
// prints when it finds a worker still running after a Cancel. Run in Node against a stand-in for
// a Worker, on an isolated page (shared memory) whose wait for the word is 60 ms, on Node's mock
// clock (the wait's timer fires when the test moves the clock, whatever the machine's load).
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';

globalThis.self = globalThis;
globalThis.crossOriginIsolated = true;
globalThis.location = { search: '?stopWait=60' };
const { watchWorker } = await import('../../www/worker-life.js');

/** A stand-in for a Worker: records what the page posts and each `terminate()`. */
class FakeWorker extends EventTarget {
  constructor() {
    super();
    this.posted = [];
    this.terminated = 0;
  }
  postMessage(data) {
    this.posted.push(data);
  }
  terminate() {
    this.terminated++;
  }
  /** The worker says `data` (a message event, as the browser delivers one). */
  say(data) {
    this.dispatchEvent(new MessageEvent('message', { data }));
  }
}

/** The record's steps of worker `id`, in order, as `step` or `step:detail` for the ones named. */
function steps(id) {
  return performance
    .getEntriesByType('mark')
    .filter((m) => m.name.startsWith('memlens:worker-') && m.detail?.id === id)
    .map((m) => {
      const step = m.name.slice('memlens:worker-'.length);
      const why = m.detail.why ?? m.detail.told;
      return why === undefined ? step : `${step}:${why}`;
    });
}

mock.timers.enable({ apis: ['setTimeout'] });
/** Moves the mock clock on by `ms`: the timers due meanwhile run. */
const advance = (ms) => mock.timers.tick(ms);

/** A watched stand-in, its `life` message (its stop flag and number) and the deaths reported. */
function watched() {
  const worker = new FakeWorker();
  const deaths = [];
  const end = watchWorker(worker, (message) => deaths.push(message));
  const life = worker.posted.find((m) => m.type === 'life');
  return { worker, end, deaths, life, flag: new Int32Array(life.flag) };
}

test('a worker that says `stopped` after its flag is raised is terminated on its word, once', () => {
  const { worker, end, life, flag, deaths } = watched();
  assert.ok(Number.isInteger(life.id) && life.id > 0, 'the worker is told its number');
  assert.equal(flag[0], 0);
  end();
  assert.equal(flag[0], 1, 'the stop flag is raised');
  assert.equal(worker.terminated, 0, 'not before its word');
  worker.say({ type: 'stopped', told: 'asked' });
  assert.equal(worker.terminated, 1);
  end();
  advance(1000);
  assert.equal(worker.terminated, 1, 'neither a second end nor the forced end terminates it again');
  assert.deepEqual(deaths, []);
  assert.deepEqual(steps(life.id), ['watched', 'end', 'stopped:asked', 'terminate:stopped']);
});

test('a worker that never says `stopped` is terminated by force when the wait is over', () => {
  const { worker, end, life } = watched();
  end();
  advance(59);
  assert.equal(worker.terminated, 0, 'the wait (60 ms) is not over');
  advance(1);
  assert.equal(worker.terminated, 1);
  assert.deepEqual(steps(life.id), ['watched', 'end', 'forced', 'terminate:forced']);
});

test('a worker that fails is terminated and reported dead once; ending it afterwards does nothing', () => {
  const { worker, end, life, deaths } = watched();
  worker.dispatchEvent(Object.assign(new Event('error', { cancelable: true }), { message: 'boom' }));
  assert.equal(worker.terminated, 1);
  assert.deepEqual(deaths, ['the analysis worker failed: boom']);
  end();
  advance(1000);
  assert.equal(worker.terminated, 1);
  assert.deepEqual(steps(life.id), ['watched', 'terminate:died', 'died']);
});

test('each worker has a number of its own', () => {
  const ids = [watched(), watched(), watched()].map((w) => w.life.id);
  assert.equal(new Set(ids).size, 3, ids.join(', '));
});
