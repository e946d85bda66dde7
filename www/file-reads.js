// The time the analysis worker spends reading the user's `File`s, for the benchmark's split of a
// pool reader's time (reading the files against parsing them). The wasm engine reads a file through
// `FileReaderSync`, a slice at a time; the method is looked up at each call, so wrapping the
// prototype's covers every read of the engine. (Reading ahead 8 MiB per call here was tried: the
// engine's reads are already 2–4 MiB on average, and the page was no faster.)

/** Time spent reading files (ms) and bytes returned, since the worker started. */
export const fileReads = { ms: 0, bytes: 0 };

/**
 * Installs the timing on this worker's `FileReaderSync`. Does nothing where `FileReaderSync` does
 * not exist (the page itself).
 */
export function installFileReads() {
  if (typeof FileReaderSync !== 'function') return;
  const read = FileReaderSync.prototype.readAsArrayBuffer;
  FileReaderSync.prototype.readAsArrayBuffer = function timedRead(blob) {
    const t = performance.now();
    const out = read.call(this, blob);
    fileReads.ms += performance.now() - t;
    fileReads.bytes += out.byteLength;
    return out;
  };
}
