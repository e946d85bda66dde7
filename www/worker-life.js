// How the page ends its analysis workers at once, and learns when one dies by itself.
//
// Ending: Chrome's `Worker.terminate()` lets a worker finish the task it runs and, if it has not
// returned to its event loop 2 s later, stops its script by force. A worker inside a long wasm call
// (reading a rank) therefore lingered 2 s after Cancel, and the threaded engine's own threads (nested
// workers that wait in `Atomics.wait` between jobs, and never return) another 2 s after their parent
// was gone. So where the page is cross-origin isolated each worker gets a stop flag in shared memory:
// the page raises it, the worker's next file read fails at once (in the read hook, file-reads.js), so
// the wasm call unwinds within a read's time, and once back in its event loop the worker makes the
// engine's threads return too (`stopThreads`) and says `stopped`; the page then terminates it, which
// now takes milliseconds.
// Without shared memory (the offline file) `terminate()` alone is left.
//
// Dying: a worker that runs out of memory may end without an `error` event. Each worker holds a Web
// Lock of its own name for its whole life; the page asks for the same lock, and is granted it when
// the worker is gone. A worker the page did not end that is gone is reported dead.
//
// Record: every step of a worker's life is a performance mark `memlens:worker-STEP` whose detail
// names the worker by a number of the page's own (`id`, also sent to the worker): `watched`,
// `locked` (it holds its lock), `end` (the page ends it), `stopped` (its word came), `forced` (it
// did not come in time), `terminate` (with `why`), `gone` (its lock was granted: the browser has
// ended its context) and `died`. A test that finds a worker still running long after a Cancel
// prints them: what the page did and what the browser did.

import { isolated } from './worker-isolated.js';
import { stopReadsOn, stopTold } from './file-reads.js';

/** A stop flag for one worker (shared memory), or null where the page has none. */
function stopFlag() {
  return isolated() ? new Int32Array(new SharedArrayBuffer(4)) : null;
}

// The most the page waits for a worker's `stopped` before terminating it anyway (a worker busy in
// a long computation that reads no file does not see the flag until it ends).
const STOP_WAIT_MS = 300;

/**
 * The wait for a worker's `stopped`: STOP_WAIT_MS, unless the page states another one with the
 * test-only `?stopWait=MS`. The browser tests state a long one: whether a worker stops on its word
 * must not depend on how busy the machine is (at load 6.5–10 a word that comes within 300 ms on a
 * quiet machine came too late once); how soon workers stop is measured by
 * scripts/bench-cancel.mjs, with this page's own wait.
 */
function stopWait() {
  const ms = Number(new URLSearchParams(globalThis.location?.search ?? '').get('stopWait'));
  return Number.isFinite(ms) && ms > 0 ? ms : STOP_WAIT_MS;
}

/**
 * Starts watching `worker` (just spawned): sends it its stop flag and its lock's name, and calls
 * `died(message)` once if it ends by itself (an `error` event, a message that cannot be read, or
 * its lock released). Returns `end()`, which ends the worker at once (and stops the watch).
 */
export function watchWorker(worker, died) {
  const flag = stopFlag();
  const lock = typeof navigator !== 'undefined' && navigator.locks ? `memlens-worker-${Math.random().toString(36).slice(2)}-${Date.now()}` : null;
  const id = ++watched;
  mark('watched', id);
  let ended = false;
  const terminate = (why) => {
    mark('terminate', id, { why });
    worker.terminate();
  };
  const fail = (message) => {
    if (ended) return;
    ended = true;
    terminate('died');
    mark('died', id, { message });
    died(message);
  };
  worker.addEventListener('error', (ev) => {
    ev.preventDefault();
    fail(`the analysis worker failed: ${ev.message || 'an error it did not report'}`);
  });
  worker.addEventListener('messageerror', () => fail('the analysis worker sent an answer the page could not read'));
  worker.addEventListener('message', (ev) => {
    // The worker holds its lock: asking for it now resolves when the worker is gone.
    if (ev.data?.type === 'life-locked' && lock) {
      mark('locked', id);
      navigator.locks.request(lock, () => {
        mark('gone', id);
        fail('the analysis worker ended without an answer: it most likely ran out of memory');
      }).catch(() => {});
    }
  });
  worker.postMessage({ type: 'life', flag: flag ? flag.buffer : null, lock, id });
  return function end() {
    if (ended) return;
    ended = true;
    mark('end', id, { flag: Boolean(flag) });
    if (!flag) return terminate('ended');
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    // Marks for the tests and the benchmark: how each worker was ended, and, of one that stopped
    // on its word, how its engine learnt of the stop (`told`: see installLife).
    const timer = setTimeout(() => {
      mark('forced', id);
      terminate('forced');
    }, stopWait());
    worker.addEventListener('message', (ev) => {
      if (ev.data?.type !== 'stopped') return;
      clearTimeout(timer);
      mark('stopped', id, { told: ev.data.told ?? null });
      terminate('stopped');
    });
  };
}

// The number of the last worker watched on this page (the `id` of the marks).
let watched = 0;

/** Marks step `step` of the life of worker `id` (see the record, at the top). */
function mark(step, id, detail = {}) {
  performance.mark(`memlens:worker-${step}`, { detail: { id, ...detail } });
}

/**
 * The worker's side of a `life` message from `watchWorker`: takes its lock for the rest of its life,
 * makes every file read fail once the flag is raised, and when it is, stops the engine's threads
 * (`stopThreads()`, given by the caller: the engine may still be starting) and says `stopped`,
 * with how the engine call under way learnt of the stop (`told`: 'asked' by a parse's stop
 * question, 'refused' a read, or null when none was under way or it was never told).
 */
export function installLife({ flag, lock, id }, stopThreads) {
  // What this worker knows of its life, for a test that finds it still running: its number on the
  // page's marks, and when (its `performance.now()`) it saw its stop flag and said `stopped`.
  self.memlensLife = { id, seen: null, said: null };
  // Settles once the worker holds its lock (at once without one). The page learns of the
  // worker's end only through the lock, so the worker serves no request before it holds it: a
  // worker that died in its first request before the lock came (a kill for its memory, the
  // tests' `fault=close`) left the page waiting for ever.
  let held = Promise.resolve();
  if (lock && self.navigator?.locks) {
    held = new Promise((resolve) => {
      self.navigator.locks.request(lock, () => {
        self.postMessage({ type: 'life-locked' });
        resolve();
        return new Promise(() => {});
      }).catch(() => resolve());
    });
  }
  if (flag) watchFlag(new Int32Array(flag), stopThreads);
  return held;
}

/** Stops the worker's reads and threads, and says `stopped`, once the page raises `raised`. */
function watchFlag(raised, stopThreads) {
  stopReadsOn(raised);
  const stop = () => {
    self.memlensLife.seen = performance.now();
    // Runs from the event loop, so no wasm call is under way: the threads can go safely.
    try {
      stopThreads();
    } finally {
      self.postMessage({ type: 'stopped', told: stopTold() });
      self.memlensLife.said = performance.now();
    }
  };
  if (typeof Atomics.waitAsync === 'function') {
    const w = Atomics.waitAsync(raised, 0, 0);
    if (w.async) w.value.then(stop);
    else stop();
  } else {
    const timer = setInterval(() => {
      if (!Atomics.load(raised, 0)) return;
      clearInterval(timer);
      stop();
    }, 20);
  }
}

/**
 * A test hook of the pool's readers (`?fault=close|throw&faultRank=TEXT` on the page, passed on to
 * the readers): before reading a rank whose run folders contain TEXT, the reader ends itself
 * (`close`, as a worker killed for its memory) or throws outside any request (`throw`, an `error`
 * event). Returns a promise that never settles when it fired, else null.
 */
export function testFault(runDirs) {
  const q = new URLSearchParams(self.location.search);
  const how = q.get('fault');
  const which = q.get('faultRank');
  if (!how || !which || !runDirs.some((d) => d.includes(which))) return null;
  if (how === 'close') self.close();
  else setTimeout(() => {
    throw new Error(`test fault in the reader of ${runDirs.join(', ')}`);
  });
  return new Promise(() => {});
}
