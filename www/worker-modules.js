// The analysis families' worker requests (see worker-core.js `serve`). Each entry is
// `(ctx) => ({ method(params, progress) { … } })`.
import ascend from './ascend/worker.js';

export const modules = [ascend];
