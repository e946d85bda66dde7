// Work that must not hold back the frame that answers an input. A click in a job's overview has to
// show its selection in the next frame; the views that follow it (charts, tables, questions to the
// engine) run after that frame has been painted, in short tasks of their own, so that the pointer,
// the next click and the frames keep their turn in between.

/**
 * Runs `fn` in a task after the next frame has been painted. Returns a function that cancels it
 * (a no-op once `fn` has started).
 */
export function afterPaint(fn) {
  let cancelled = false;
  let timer = null;
  const frame = requestAnimationFrame(() => {
    // The animation-frame callbacks run before the frame's paint: a task queued from one runs
    // after it.
    timer = setTimeout(() => {
      if (!cancelled) fn();
    }, 0);
  });
  return () => {
    cancelled = true;
    cancelAnimationFrame(frame);
    clearTimeout(timer);
  };
}

/**
 * Lets the browser handle what is waiting (input, a frame) before the caller goes on: resolves in
 * a later task. scheduler.yield keeps the caller's place ahead of other queued work where the
 * browser has it.
 */
export function yieldToBrowser() {
  const s = globalThis.scheduler;
  if (s && typeof s.yield === 'function') return s.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}
