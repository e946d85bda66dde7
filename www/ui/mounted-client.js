// The worker client of a mounted analysis tab: answers that arrive after the tab was unmounted
// (a new drop replaced it) go nowhere — their promises never settle, so no handler draws into
// views that are gone, nor reports an error about a job the worker has already closed.

/** `client` (the worker's `{ call }`) for a tab; `isUnmounted()` says when the tab is gone. */
export function mountedClient(client, isUnmounted) {
  const gone = () => new Promise(() => {});
  return {
    call: (method, params, onProgress) =>
      client.call(method, params, onProgress).then(
        (v) => (isUnmounted() ? gone() : v),
        (e) => (isUnmounted() ? gone() : Promise.reject(e)),
      ),
  };
}
