// The analysis families' worker requests, and the fresh engine's warm-up (see worker-core.js
// `serve`). Each entry is `(ctx) => ({ method(params, progress) { … } })`.
import profiler from './profiler/worker.js';
import somas from './somas/worker.js';
import snapshot from './snapshot/worker.js';
import compare from './compare/worker.js';
import jobSummary from './jobsummary/worker.js';
import warmUp from './warm-up.js';

export const modules = [profiler, somas, snapshot, compare, jobSummary, warmUp];
