// The page's side of the worker conversation: requests with ids, promises for answers, progress
// callbacks while a request runs, and the engine announcement.
import { spawnWorker } from './spawn-worker.js';

export class EngineClient {
  constructor() {
    this.worker = spawnWorker();
    this.nextId = 1;
    this.pending = new Map();
    this.engine = new Promise((resolve, reject) => {
      this.resolveEngine = resolve;
      this.rejectEngine = reject;
    });
    this.worker.onmessage = (ev) => this.onMessage(ev.data);
    this.worker.onerror = (ev) => {
      const message = `the analysis worker failed: ${ev.message || 'unknown error'}`;
      this.rejectEngine(new Error(message));
      for (const p of this.pending.values()) p.reject(new Error(message));
      this.pending.clear();
    };
  }

  onMessage(msg) {
    if (msg.type === 'engine') return this.resolveEngine(msg);
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
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, method, params });
    });
  }
}
