// How fast a worker reads a File through FileReaderSync by the size of its reads (a measurement,
// not a test): the measure behind the read size a browser File states to the engine's readers
// (src/wasm/file_source.rs FILE_READ). A worker in Chromium reads a file of --mb MB (random bytes,
// written once, then in the page cache) front to back in slices of each --sizes MiB, the sizes
// alternated within every run; per size: the throughput, and the time of one read call (median and
// longest: a read cannot be interrupted, so the longest is what a Cancel may wait for one).
// `--async` also reads with `await file.slice(a, b).arrayBuffer()` at the same sizes.
//   node scripts/bench-file-reads.mjs [--mb 109] [--sizes 1,4,8,16,32] [--runs 3] [--async]
import { writeFileSync, rmSync, mkdtempSync } from 'node:fs';
import { randomFillSync } from 'node:crypto';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';
import { openBrowser, startServer } from '../tests/browser/harness.mjs';
import { opt } from './util.mjs';

const MB = Number(opt('--mb', '109'));
const SIZES = opt('--sizes', '1,4,8,16,32').split(',').map(Number);
const RUNS = Number(opt('--runs', '3'));
const ASYNC = process.argv.includes('--async');
const dir = mkdtempSync(path.join(tmpdir(), 'memlens-file-reads-'));
const file = path.join(dir, 'random.bin');
writeFileSync(file, randomFillSync(Buffer.alloc(MB * 1e6)));
const server = await startServer({ isolate: false });

// The worker: reads the file in `slice` bytes, synchronously or not, timing each call.
const WORKER = `onmessage = async ({ data: { f, slice, sync } }) => {
  const r = new FileReaderSync(); const calls = []; let n = 0;
  const t0 = performance.now();
  for (let o = 0; o < f.size; o += slice) {
    const t = performance.now();
    const a = sync ? r.readAsArrayBuffer(f.slice(o, o + slice)) : await f.slice(o, o + slice).arrayBuffer();
    calls.push(performance.now() - t);
    n += a.byteLength;
  }
  postMessage({ bytes: n, ms: performance.now() - t0, calls });
};`;

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const rows = [];
try {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    await page.evaluate((src) => {
      const i = Object.assign(document.createElement('input'), { type: 'file', id: 'file-reads' });
      document.body.append(i);
      window.readWith = (slice, sync) => new Promise((res) => {
        const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
        w.onmessage = (e) => {
          w.terminate();
          res(e.data);
        };
        w.postMessage({ f: document.getElementById('file-reads').files[0], slice, sync });
      });
    }, WORKER);
    await page.setInputFiles('#file-reads', file);
    // One read first, so that the file is in the page cache and the browser's blob path is warm.
    await page.evaluate(() => window.readWith(16 << 20, true));
    const modes = ASYNC ? [true, false] : [true];
    for (let run = 0; run < RUNS; run++) {
      for (const size of run % 2 ? [...SIZES].reverse() : SIZES) {
        for (const sync of modes) {
          const r = await page.evaluate(([s, y]) => window.readWith(s, y), [size * 2 ** 20, sync]);
          const row = {
            run: run + 1,
            how: sync ? 'FileReaderSync' : 'arrayBuffer()',
            mib: size,
            mbps: r.bytes / 1e6 / (r.ms / 1000),
            median: median(r.calls),
            max: Math.max(...r.calls),
            load: loadavg()[0],
          };
          rows.push(row);
          console.log(`run ${row.run}, ${row.how}, ${size} MiB reads: ${row.mbps.toFixed(0)} MB/s; one read ${row.median.toFixed(1)} ms median, ${row.max.toFixed(1)} ms longest (load ${row.load.toFixed(1)}, ${new Date().toISOString().slice(11, 19)} UTC)`);
        }
      }
    }
  } finally {
    await b.close();
  }
  console.log(`\n${MB} MB file, ${RUNS} runs: per read size, MB/s (min–max) and the longest single read`);
  for (const how of [...new Set(rows.map((r) => r.how))]) {
    for (const size of SIZES) {
      const rs = rows.filter((r) => r.how === how && r.mib === size);
      const mb = rs.map((r) => r.mbps);
      console.log(`${how} ${String(size).padStart(3)} MiB: ${Math.min(...mb).toFixed(0)}–${Math.max(...mb).toFixed(0)} MB/s, longest read ${Math.max(...rs.map((r) => r.max)).toFixed(1)} ms`);
    }
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
