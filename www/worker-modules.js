// The analysis families' worker requests (see worker-core.js `serve`). Each entry is
// `(ctx) => ({ method(params, progress) { … } })`.
export const modules = [];
