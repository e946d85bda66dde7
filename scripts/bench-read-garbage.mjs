// What reading a large file through FileReaderSync leaves in a tab (a measurement, not a test): a
// worker reads a sparse file of --gib GiB in --mib MiB slices, as the wasm engine does, and drops
// each slice at once; the tab's peak resident memory (scripts/tab-memory.mjs) shows how much of what
// was read waits for a garbage collection. The modes (--modes, measured one after the other in each
// run, each in a fresh browser; scripts/read-garbage.mjs reads):
//   page      the page's own read hook (`readSlice` of www/file-reads.js, imported by the worker),
//             which litters the worker's heap a little after each read so the collector runs;
//   plain     `FileReaderSync.readAsArrayBuffer` alone, the slices left to the garbage collector
//             (the page's reads before they littered: 0.28–0.52× the bytes read stayed resident);
//   detach    the same, each slice's buffer detached (`ArrayBuffer.prototype.transfer(0)`) once read
//             (measured as a way to free the slices at once: the renderer then kept every byte read
//             until the worker ended, 1.00–1.06×, so the page does not do it).
//   node scripts/bench-read-garbage.mjs [--gib 2] [--mib 16] [--runs 1] [--modes page,plain]
import { truncateSync, writeFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';
import { startServer } from '../tests/browser/harness.mjs';
import { readInFreshTab } from './read-garbage.mjs';
import { opt } from './util.mjs';

const GIB = Number(opt('--gib', 2));
const MIB = Number(opt('--mib', 16));
const RUNS = Number(opt('--runs', 1));
const MODES = opt('--modes', 'page,plain').split(',');
const dir = mkdtempSync(path.join(tmpdir(), 'memlens-read-garbage-'));
const file = path.join(dir, 'zeros.bin');
writeFileSync(file, '');
truncateSync(file, GIB * 2 ** 30);
const server = await startServer({ isolate: false });
const mib = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;

/** Reads the file once in a fresh browser, the slices read as `mode` says (see the header). */
async function measure(mode) {
  const r = await readInFreshTab(server.url, file, MIB * 2 ** 20, mode);
  const how = { page: "the page's read hook", plain: 'slices left to the collector', detach: 'each slice detached once read' }[mode];
  console.log(`${GIB} GiB read in ${MIB} MiB slices, ${how}, in ${(r.ms / 1000).toFixed(1)} s (load ${loadavg()[0].toFixed(1)}): the tab's renderer ${mib(r.before)} before, ${mib(r.peak)} at its peak (+${mib(r.peak - r.before)} = ${((r.peak - r.before) / r.bytes).toFixed(2)} × the bytes read)`);
}

try {
  for (let run = 0; run < RUNS; run++) for (const mode of MODES) await measure(mode);
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
