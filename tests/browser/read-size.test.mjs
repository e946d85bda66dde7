// The read size a browser File states to the engine (src/wasm/file_source.rs FILE_READ, 16 MiB;
// `?readSize=MiB` on the page states another): the wasm engine's reads of a rank's files, seen at
// the worker's read hook (`memlensReadSlice`, wrapped here), are of that size — the trace in
// batches of at least 16 MiB, the CSV files in chunks of it — and with `?readSize=2` the trace
// keeps its own 4 MiB batches and the CSV files are read 2 MiB at a time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { rmSync, statSync, mkdtempSync } from 'node:fs';
import { CLI, openBrowser, startServer, settled, engineThreads } from './harness.mjs';

// In a folder of this run's own: a name by process id could meet an earlier run's leftover.
const TMP = mkdtempSync(path.join(tmpdir(), 'memlens-read-size-'));
const JOB = path.join(TMP, 'job');
let server;

before(async () => {
  execFileSync(CLI, ['generate', 'profiler', '--out', JOB, '--roles', '1', '--ranks', '1', '--trace-mb', '40', '--rows', '60000', '--seed', '3'], { stdio: 'ignore' });
  server = await startServer({ isolate: false });
});
after(async () => {
  rmSync(TMP, { recursive: true, force: true });
  if (server) await server.close();
});

/** The reads (file name, start, end) the engine made of the job's files, on the page with `query`. */
async function reads(query) {
  const b = await openBrowser();
  try {
    const page = await b.page();
    await page.goto(`${server.url}?${query}`);
    await engineThreads(page);
    // Every worker that reads files: its hook is wrapped to record each read.
    for (const w of page.workers()) {
      await w.evaluate(() => {
        const hook = self.memlensReadSlice;
        if (typeof hook !== 'function') return;
        self.readsSeen = [];
        self.memlensReadSlice = (file, start, end) => {
          self.readsSeen.push([file.name, start, Math.min(end, file.size)]);
          return hook(file, start, end);
        };
      });
    }
    await page.setInputFiles('input[data-testid="folder-input"]', JOB);
    assert.equal(await settled(page, 120000), 'ready');
    const seen = [];
    for (const w of page.workers()) seen.push(...((await w.evaluate(() => self.readsSeen || [])) ?? []));
    return seen;
  } finally {
    await b.close();
  }
}

/** The sizes of the reads of `name`, in order. */
const sizesOf = (seen, name) => seen.filter((r) => r[0] === name).map((r) => r[2] - r[1]);

const MIB = 2 ** 20;
/** The size of the job's file `name` (one rank: one of each). */
function sizeOf(name) {
  const out = execFileSync('find', [JOB, '-name', name]).toString().trim().split('\n');
  assert.equal(out.length, 1, out.join(', '));
  return statSync(out[0]).size;
}

/** `len` bytes read front to back in reads of `size`, the last one clamped. */
const expected = (len, size) => Array.from({ length: Math.ceil(len / size) }, (_, k) => Math.min(size, len - k * size));

test('a File is read in the size it states: 16 MiB by default, the page’s ?readSize otherwise', async () => {
  const trace = sizeOf('trace_view.json');
  const om = sizeOf('operator_memory.csv');
  assert.ok(trace > 32 * MIB && om > 2 * MIB, `files large enough: ${trace}, ${om}`);
  // The single-threaded engine (a plain page): the trace's own batch is 4 MiB, the CSV chunk 1 MiB.
  const byDefault = await reads('workers=1');
  assert.deepEqual(sizesOf(byDefault, 'trace_view.json'), expected(trace, 16 * MIB));
  assert.deepEqual(sizesOf(byDefault, 'operator_memory.csv'), expected(om, 16 * MIB));
  const stated = await reads('workers=1&readSize=2');
  assert.deepEqual(sizesOf(stated, 'trace_view.json'), expected(trace, 4 * MIB));
  assert.deepEqual(sizesOf(stated, 'operator_memory.csv'), expected(om, 2 * MIB));
});
