// The page's side of the worker conversation: requests with ids, promises for answers, progress
// callbacks while a request runs, and the engine announcement.
import { spawnWorker } from './spawn-worker.js';
import { watchWorker } from './worker-life.js';

/** The error a request gets when its work was cancelled (see `EngineClient.restart`). */
export class Cancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'Cancelled';
  }
}

/**
 * The test-only `?answerDelay=MS` of the page: each answer to a request (its result or its error)
 * is handed to the page MS ms after the worker gave it, as a busy worker would give it late. The
 * browser tests run with it (`MEMLENS_ANSWER_DELAY`, tests/browser/harness.mjs) to find the races
 * a quick worker hides (docs/hardening.md). Without it (or with 0 or no number) answers are handed
 * on at once; progress and the engine announcement never wait.
 */
function answerDelay() {
  const ms = Number(new URLSearchParams(globalThis.location?.search ?? '').get('answerDelay'));
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

export class EngineClient {
  /** `params` go to each worker it starts (see `spawnWorker`). */
  constructor(params = {}) {
    this.params = params;
    this.delay = answerDelay();
    this.nextId = 1;
    this.pending = new Map();
    this.engine = new Promise((resolve, reject) => {
      this.resolveEngine = resolve;
      this.rejectEngine = reject;
    });
    this.start();
  }

  /**
   * Starts a worker; the first one's engine announcement settles `this.engine`. A worker that dies
   * (see `watchWorker`) fails its pending requests and every later one with the reason, until
   * `restart` (a new drop, Cancel) starts a fresh one.
   */
  start() {
    const worker = spawnWorker(this.params);
    this.worker = worker;
    this.dead = null;
    worker.onmessage = (ev) => {
      if (worker !== this.worker) return;
      const msg = ev.data;
      // A late answer finds its request gone if a restart cancelled it meanwhile (ids are unique).
      if (this.delay && msg.id !== undefined && !msg.progress) setTimeout(() => this.onMessage(msg), this.delay);
      else this.onMessage(msg);
    };
    this.end = watchWorker(worker, (message) => {
      if (worker !== this.worker) return;
      this.dead = message;
      this.rejectEngine(new Error(message));
      const pending = [...this.pending.values()];
      this.pending.clear();
      for (const p of pending) p.reject(new Error(message));
    });
  }

  /**
   * Stops whatever the worker is doing at once: ends it (which frees all its memory, the wasm heap
   * included; see `watchWorker` for how a busy one is stopped), rejects every pending request with
   * `Cancelled` and starts a fresh worker.
   */
  restart() {
    this.end();
    const pending = [...this.pending.values()];
    this.pending.clear();
    this.start();
    for (const p of pending) p.reject(new Cancelled());
  }

  /**
   * Stops the worker for good (a pool's reader whose work is done or cancelled): its memory is
   * freed and pending requests fail with `Cancelled`; no worker replaces it.
   */
  terminate() {
    this.end();
    this.worker = null;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new Cancelled());
  }

  onMessage(msg) {
    if (msg.type === 'engine') {
      // When the engine was ready, on the page's clock (the benchmark's split).
      this.engineAt = performance.now();
      return this.resolveEngine(msg);
    }
    if (msg.type === 'engine-error') return this.rejectEngine(new Error(msg.message));
    const p = this.pending.get(msg.id);
    if (!p) return;
    if (msg.progress) {
      if (p.onProgress) p.onProgress(msg.progress);
      return;
    }
    this.pending.delete(msg.id);
    if ('error' in msg) p.reject(new Error(msg.error));
    else p.resolve(msg.result);
  }

  /** Sends `method(params)` to the worker; resolves with its answer. */
  call(method, params, onProgress) {
    const id = this.nextId++;
    if (!this.worker) return Promise.reject(new Cancelled());
    if (this.dead) return Promise.reject(new Error(this.dead));
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, method, params });
    });
  }
}
