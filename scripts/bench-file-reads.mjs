// How fast a worker reads a File through FileReaderSync by the size of its reads (a measurement,
// not a test): the measure behind the read size a browser File states to the engine's readers
// (src/wasm/file_source.rs FILE_READ). A worker in Chromium reads a file of --mb MB (random bytes,
// written once, then in the page cache) front to back in slices of each --sizes MiB, the sizes
// alternated within every run; per size: the throughput, and the time of one read call (median and
// longest: a read cannot be interrupted, so the longest is what a Cancel may wait for one).
// `--async` also reads with `await file.slice(a, b).arrayBuffer()` at the same sizes.
//   node scripts/bench-file-reads.mjs [--mb 109] [--sizes 1,4,8,16,32] [--runs 3] [--async]
//
// `--parallel 1,2,3` measures instead how fast the browser serves `File` bytes to several workers
// at once, summed over them: N workers each read its own file of --mb MB (random bytes, in the page
// cache) front to back, all started together, with each way a worker can read a `File` (--ways):
//   sync16    FileReaderSync.readAsArrayBuffer of 16 MiB slices (the page's reads today)
//   async16   await file.slice(a, a + 16 MiB).arrayBuffer()
//   whole     one await file.arrayBuffer() of the whole file
//   bytes     one await file.bytes() (a Uint8Array; where the browser has it)
//   stream    file.stream() through its default reader (chunks the browser chooses)
//   byob      file.stream() through a BYOB reader into one reused 16 MiB buffer (only if the
//             browser's Blob.stream() is a byte stream; the run says whether it is)
//   byobwhole a BYOB reader into one new buffer of the file's size, then that buffer copied on in
//             16 MiB slices: what a page that reads a rank's files whole before its synchronous
//             analysis does (the engine copies its reads into its memory after the browser's)
// Every way copies what it got into one reused 16 MiB buffer as it goes (as the page's read hook
// hands each slice to the engine, which copies it into its memory), so the ways do the same work
// after the browser's part; `byob` has the browser write into that buffer itself. Each worker must
// get its whole file, or the bench stops. Per N and way, alternated within every run: the summed MB/s (all bytes
// over the span from the first start to the last end), each worker's MB/s, and the browser's CPU
// time over the span (scripts/tab-memory.mjs `browserCpu`: its renderers, which hold the workers,
// and its other processes, which serve the reads) per GB read.
//   node scripts/bench-file-reads.mjs --parallel 1,2,3 [--mb 130] [--runs 3] [--ways sync16,async16,...]
import { writeFileSync, rmSync, mkdtempSync } from 'node:fs';
import { randomFillSync } from 'node:crypto';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';
import { openBrowser, startServer } from '../tests/browser/harness.mjs';
import { opt } from './util.mjs';
import { browserCpu } from './tab-memory.mjs';

const MB = Number(opt('--mb', '109'));
const SIZES = opt('--sizes', '1,4,8,16,32').split(',').map(Number);
const RUNS = Number(opt('--runs', '3'));
const ASYNC = process.argv.includes('--async');
const PARALLEL = process.argv.includes('--parallel') ? opt('--parallel', '1,2,3').split(',').map(Number) : null;
const WAYS = opt('--ways', 'sync16,async16,whole,bytes,stream,byob,byobwhole').split(',');
const dir = mkdtempSync(path.join(tmpdir(), 'memlens-file-reads-'));
const file = path.join(dir, 'random.bin');
writeFileSync(file, randomFillSync(Buffer.alloc(MB * 1e6)));
const server = await startServer({ isolate: false });
if (PARALLEL) {
  try {
    await parallelReads();
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

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

function median(a) {
  return [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
}
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

// The worker of --parallel: reads its file one way on `go`, copying into one reused 16 MiB buffer;
// answers its start and end on the page's clock (performance.timeOrigin + now), the bytes, the
// chunks the browser gave and, for `byob`, whether the browser's stream is a byte stream.
// (A function, hoisted: the --parallel branch runs before the module's later constants exist.)
function parallelWorker() {
  return `const SLICE = 16 << 20;
let f = null;
let buf = new Uint8Array(SLICE);
let at = 0;
function take(u8) {
  for (let o = 0; o < u8.length;) {
    if (at === SLICE) at = 0;
    const n = Math.min(u8.length - o, SLICE - at);
    buf.set(u8.subarray(o, o + n), at);
    at += n;
    o += n;
  }
  return u8.length;
}
async function read(way) {
  let bytes = 0, chunks = 0;
  if (way === 'sync16' || way === 'async16') {
    const r = way === 'sync16' ? new FileReaderSync() : null;
    for (let o = 0; o < f.size; o += SLICE) {
      const a = r ? r.readAsArrayBuffer(f.slice(o, o + SLICE)) : await f.slice(o, o + SLICE).arrayBuffer();
      bytes += take(new Uint8Array(a));
      chunks++;
    }
  } else if (way === 'whole') {
    bytes = take(new Uint8Array(await f.arrayBuffer()));
    chunks = 1;
  } else if (way === 'bytes') {
    if (typeof f.bytes !== 'function') return { unsupported: 'Blob.bytes() is missing' };
    bytes = take(await f.bytes());
    chunks = 1;
  } else if (way === 'stream') {
    const rd = f.stream().getReader();
    for (;;) {
      const { done, value } = await rd.read();
      if (done) break;
      bytes += take(value);
      chunks++;
    }
  } else if (way === 'byobwhole') {
    let whole = new Uint8Array(f.size);
    let rd;
    try {
      rd = f.stream().getReader({ mode: 'byob' });
    } catch (e) {
      return { unsupported: 'Blob.stream() is not a byte stream here (' + e.name + ': ' + e.message + ')' };
    }
    let got = 0;
    while (got < f.size) {
      const { done, value } = await rd.read(new Uint8Array(whole.buffer, got, f.size - got));
      whole = new Uint8Array(value.buffer);
      if (done) break;
      got += value.length;
      chunks++;
    }
    for (let o = 0; o < got; o += SLICE) bytes += take(whole.subarray(o, Math.min(got, o + SLICE)));
  } else if (way === 'byob') {
    let rd;
    try {
      rd = f.stream().getReader({ mode: 'byob' });
    } catch (e) {
      return { unsupported: 'Blob.stream() is not a byte stream here (' + e.name + ': ' + e.message + ')' };
    }
    // Read into the reused buffer directly (no copy after the browser's), front to back as the
    // others' copies go: each read fills the buffer from where the last one ended (the browser
    // fills a fraction of the view per read), so the bytes land in 16 MiB as theirs do, not in
    // the same cache-warm first chunk again and again.
    for (;;) {
      if (at === SLICE) at = 0;
      const { done, value } = await rd.read(new Uint8Array(buf.buffer, at, SLICE - at));
      if (value) buf = new Uint8Array(value.buffer);
      if (done) break;
      at += value.length;
      bytes += value.length;
      chunks++;
    }
  }
  return { bytes, chunks };
}
onmessage = async ({ data }) => {
  if (data.f) { f = data.f; postMessage({ ready: true }); return; }
  const t0 = performance.timeOrigin + performance.now();
  const r = await read(data.way);
  postMessage({ ...r, t0, t1: performance.timeOrigin + performance.now() });
};`;
}

async function parallelReads() {
  const most = Math.max(...PARALLEL);
  const files = [file];
  for (let i = 1; i < most; i++) {
    const other = path.join(dir, `random-${i}.bin`);
    writeFileSync(other, randomFillSync(Buffer.alloc(MB * 1e6)));
    files.push(other);
  }
  const rows = [];
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(server.url);
    await page.evaluate((src) => {
      const i = Object.assign(document.createElement('input'), { type: 'file', id: 'file-reads', multiple: true });
      document.body.append(i);
      const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
      // Fresh workers per measure, each given its file first (`prepare`, outside the measured
      // span: starting a worker costs the renderer CPU); then all told to go at once (`go`).
      let ws = [];
      window.prepare = async (count) => {
        for (const w of ws) w.terminate();
        ws = [];
        for (let k = 0; k < count; k++) {
          const w = new Worker(url);
          await new Promise((res) => {
            w.onmessage = res;
            w.postMessage({ f: document.getElementById('file-reads').files[k] });
          });
          ws.push(w);
        }
      };
      window.go = async (way) => {
        const done = ws.map((w) => new Promise((res) => { w.onmessage = (e) => res(e.data); }));
        for (const w of ws) w.postMessage({ way });
        return Promise.all(done);
      };
    }, parallelWorker());
    await page.setInputFiles('#file-reads', files);
    // Every file read once first, so that all are in the page cache and the blob path is warm.
    await page.evaluate(async (n) => {
      await window.prepare(n);
      await window.go('sync16');
    }, most);
    const unsupported = new Map();
    for (let run = 0; run < RUNS; run++) {
      const order = run % 2 ? [...WAYS].reverse() : WAYS;
      for (const n of run % 2 ? [...PARALLEL].reverse() : PARALLEL) {
        for (const way of order) {
          if (unsupported.has(way)) continue;
          const load = loadavg()[0];
          await page.evaluate((k) => window.prepare(k), n);
          // Let the workers' start settle before the measured span.
          await new Promise((res) => setTimeout(res, 300));
          const c0 = browserCpu(b.dir);
          const ws = await page.evaluate((w) => window.go(w), way);
          const c1 = browserCpu(b.dir);
          if (ws[0].unsupported) {
            unsupported.set(way, ws[0].unsupported);
            console.log(`${way}: ${ws[0].unsupported}`);
            continue;
          }
          // Each worker must have got its whole file (a way that stops short would look fast).
          for (const w of ws) if (w.bytes !== MB * 1e6) throw new Error(`${way}: a worker read ${w.bytes} bytes of ${MB * 1e6}`);
          const bytes = ws.reduce((a, w) => a + w.bytes, 0);
          const span = Math.max(...ws.map((w) => w.t1)) - Math.min(...ws.map((w) => w.t0));
          const gb = bytes / 1e9;
          const row = {
            run: run + 1,
            n,
            way,
            sum: bytes / 1e6 / (span / 1000),
            each: ws.map((w) => w.bytes / 1e6 / ((w.t1 - w.t0) / 1000)),
            chunk: bytes / ws.reduce((a, w) => a + w.chunks, 0),
            rendererPerGb: (c1.renderer - c0.renderer) / 1000 / gb,
            otherPerGb: (c1.all - c1.renderer - (c0.all - c0.renderer)) / 1000 / gb,
            load,
          };
          rows.push(row);
          console.log(`run ${row.run}, ${n} worker(s), ${way}: ${row.sum.toFixed(0)} MB/s summed (each ${row.each.map((x) => x.toFixed(0)).join(', ')}); chunks of ${(row.chunk / 1048576).toFixed(2)} MiB; browser CPU per GB read: renderers ${row.rendererPerGb.toFixed(2)} s, other processes ${row.otherPerGb.toFixed(2)} s (load ${load.toFixed(1)}, ${new Date().toISOString().slice(11, 19)} UTC)`);
        }
      }
    }
  } finally {
    await b.close();
  }
  const med = (a) => median(a).toFixed(0);
  const span = (a) => `${Math.min(...a).toFixed(0)}–${Math.max(...a).toFixed(0)}`;
  const span2 = (a) => `${Math.min(...a).toFixed(2)}–${Math.max(...a).toFixed(2)}`;
  console.log(`\n${MB} MB a file, ${RUNS} runs: per workers and way, summed MB/s median (min–max), one worker's MB/s (min–max), browser CPU s per GB read median: renderers + other processes`);
  for (const n of PARALLEL) {
    for (const way of WAYS) {
      const rs = rows.filter((r) => r.n === n && r.way === way);
      if (!rs.length) continue;
      const sums = rs.map((r) => r.sum);
      const each = rs.flatMap((r) => r.each);
      const rc = rs.map((r) => r.rendererPerGb);
      const oc = rs.map((r) => r.otherPerGb);
      console.log(`${n} × ${way.padEnd(8)} summed ${med(sums).padStart(5)} MB/s (${span(sums)}), each ${span(each)}; CPU/GB ${median(rc).toFixed(2)} + ${median(oc).toFixed(2)} s (${span2(rc)} + ${span2(oc)}); load ${span2(rs.map((r) => r.load))}`);
    }
  }
}
