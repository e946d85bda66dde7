// What reading a large file through FileReaderSync leaves in a tab (a measurement, not a test): a
// worker reads a sparse file of --gib GiB in --mib MiB slices, as the wasm engine does, and drops
// each slice's ArrayBuffer at once; the tab's peak resident memory (scripts/tab-memory.mjs) shows
// how much of what was read waits for a garbage collection. Each read is measured twice, one mode
// after the other in the same run: the slices left to the garbage collector, and each slice's
// buffer detached (`ArrayBuffer.prototype.transfer(0)`) once read. (Detaching was measured as a way
// to free the slices at once: the renderer then kept every byte read until the worker ended, 1.00×
// against 0.28–0.33×, so the page does not do it.)
//   node scripts/bench-read-garbage.mjs [--gib 2] [--mib 4] [--runs 1]
import { truncateSync, writeFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';
import { openBrowser, startServer } from '../tests/browser/harness.mjs';
import { watchTabMemory } from './tab-memory.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const GIB = arg('gib', 2);
const MIB = arg('mib', 4);
const dir = mkdtempSync(path.join(tmpdir(), 'memlens-read-garbage-'));
const file = path.join(dir, 'zeros.bin');
writeFileSync(file, '');
truncateSync(file, GIB * 2 ** 30);
const RUNS = arg('runs', 1);
const server = await startServer({ isolate: false });
const mib = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;

/** Reads the file once in a fresh browser; `detach`: each slice's buffer is detached once read. */
async function measure(detach) {
  const b = await openBrowser();
  const tab = watchTabMemory(b.dir, 100);
  try {
    const page = await b.page();
    await page.goto(server.url);
    await page.evaluate(() => {
      const i = Object.assign(document.createElement('input'), { type: 'file', id: 'read-garbage' });
      document.body.append(i);
    });
    await page.setInputFiles('#read-garbage', file);
    const before = tab.peak().renderer;
    const r = await page.evaluate(([slice, detach]) => new Promise((res) => {
      const src = `onmessage = (e) => {
        const f = e.data; const r = new FileReaderSync(); let n = 0;
        for (let o = 0; o < f.size; o += ${slice}) {
          const a = r.readAsArrayBuffer(f.slice(o, o + ${slice}));
          n += a.byteLength;
          if (${detach}) a.transfer(0);
        }
        postMessage(n);
      };`;
      const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
      const t = performance.now();
      w.onmessage = (e) => res({ bytes: e.data, ms: performance.now() - t });
      w.postMessage(document.getElementById('read-garbage').files[0]);
    }), [MIB * 2 ** 20, detach]);
    const peak = tab.stop().renderer;
    const how = detach ? 'each slice detached once read' : 'slices left to the garbage collector';
    console.log(`${GIB} GiB read in ${MIB} MiB slices, ${how}, in ${(r.ms / 1000).toFixed(1)} s (load ${loadavg()[0].toFixed(1)}): the tab's renderer ${mib(before)} before, ${mib(peak)} at its peak (+${mib(peak - before)} = ${((peak - before) / r.bytes).toFixed(2)} × the bytes read)`);
  } finally {
    tab.stop();
    await b.close();
  }
}

try {
  for (let run = 0; run < RUNS; run++) for (const detach of [false, true]) await measure(detach);
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
