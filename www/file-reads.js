// The analysis worker's one read hook. The wasm engine reads a browser `File` a slice at a time by
// calling `memlensReadSlice(file, start, end)` (src/wasm/file_source.rs), which returns the bytes as
// a `Uint8Array`; everything the page does around a read happens here, in one place:
//   - a cancelled load: once the page raised this worker's stop flag (worker-life.js), every read
//     fails at once, so the wasm call in progress unwinds within a read's time; and since a read
//     may be large (16 MiB, a whole file with `?readSize=256`), the engine's readers also ask
//     `memlensStopped()` every MiB they parse and end the same way (src/source.rs
//     STOP_CHECK_BYTES);
//   - read-ahead (read-ahead.js; a pool's readers on a cross-origin isolated page, or any worker
//     with `?readAhead=1`): the slice comes from the helper's shared memory when it has it, else
//     from a plain read;
//   - timing, for the benchmark's split of a reader's time into reading the files and parsing them;
//   - a little garbage after every 16 MiB of plain reads (`litterAfter`), so that the slices
//     already read are freed.
// A plain read is `FileReaderSync.readAsArrayBuffer` of the slice (workers only).
// How much the engine asks for per read is the core's choice (src/wasm/file_source.rs FILE_READ);
// `?readSize=MiB` on the page states another size, for the benchmark to compare sizes in one build.

/** Time spent reading files (ms) and bytes returned, since the worker started. */
export const fileReads = { ms: 0, bytes: 0 };

// The stop flag (an Int32Array over shared memory; non-zero: stopped), once the page sent one.
let stopped = null;
// The read-ahead helper's `serve(file, start, end)` (bytes, or null when it cannot serve the slice).
let ahead = null;
let reader = null;

// Plain reads since the last litter (bytes), and the last litter, kept so that it is not elided.
let unlittered = 0;
let litter = null;

/**
 * Drops some short-lived garbage on the worker's JavaScript heap after every `LITTER_EVERY` bytes of
 * plain reads. Each plain read is a fresh buffer outside that heap; the collection that frees the
 * buffers already dropped advances only as the worker allocates on its heap, and a worker inside a
 * long wasm call allocates next to nothing there: without this, a worker that read 8 GiB in 16 MiB
 * slices held 0.39–0.44× the bytes read until it ended, with it +0.37–0.75 GiB in all
 * (`scripts/bench-read-garbage.mjs`). Reads from the read-ahead helper are views of reused shared
 * memory and need none.
 */
function litterAfter(bytes) {
  unlittered += bytes;
  if (unlittered < LITTER_EVERY) return;
  unlittered = 0;
  litter = new Array(LITTER_LENGTH).fill(0);
}

/** Bytes of plain reads between two litters: the engine's read size (src/wasm/file_source.rs). */
const LITTER_EVERY = 16 << 20;
/** Elements of one litter (0.4 MB): 200,000 or 500,000 left no less resident; 1,000 freed nothing. */
const LITTER_LENGTH = 50000;

/** Makes every read fail once `flag[0]` is non-zero (see worker-life.js). */
export function stopReadsOn(flag) {
  stopped = flag;
}

/** Serves reads through `serve(file, start, end)` first (see read-ahead.js). */
export function readAheadWith(serve) {
  ahead = serve;
}

// How the engine first learnt that its load was stopped: 'asked' (a reader's stop question,
// `memlensStopped()`, as it parsed), 'refused' (a read failed on the flag), or null (it was not
// told: no engine call was under way, or the one under way ended without asking or reading).
let told = null;

function raised() {
  return stopped !== null && Atomics.load(stopped, 0) !== 0;
}

/** True once the page raised this worker's stop flag (the engine asks as it parses). */
export function loadStopped() {
  if (!raised()) return false;
  told ||= 'asked';
  return true;
}

/** How the engine first learnt of the stop: 'asked', 'refused' or null (see `told`). */
export function stopTold() {
  return told;
}

/**
 * The bytes `[start, end)` of `file` (clamped to its size) as a Uint8Array; throws an AbortError
 * once the load is stopped, or the browser's error when the file cannot be read. The returned
 * bytes are valid until the next read (a read-ahead slot is then reused).
 */
export function readSlice(file, start, end) {
  if (raised()) {
    told ||= 'refused';
    throw new DOMException('the load was stopped', 'AbortError');
  }
  const t = performance.now();
  let bytes = ahead ? ahead(file, start, end) : null;
  if (!bytes) {
    reader ||= new FileReaderSync();
    bytes = new Uint8Array(reader.readAsArrayBuffer(file.slice(start, end)));
    litterAfter(bytes.length);
  }
  fileReads.ms += performance.now() - t;
  fileReads.bytes += bytes.length;
  return bytes;
}

/** The read size this worker's `?readSize=MiB` states, in bytes; 0 when it states none. */
export function statedReadSize() {
  const mib = Number(new URLSearchParams(self.location?.search ?? '').get('readSize'));
  return mib > 0 ? Math.round(mib * 1048576) : 0;
}

/**
 * Makes `readSlice` the engine's read hook and `loadStopped` its stop question in this worker
 * (globals the wasm glue looks up), and states the read size of the worker's `?readSize=MiB` to
 * the engine, if any (`memlensReadSize()`).
 */
export function installFileReads() {
  self.memlensReadSlice = readSlice;
  self.memlensStopped = loadStopped;
  const size = statedReadSize();
  if (size) self.memlensReadSize = () => size;
}
