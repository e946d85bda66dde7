// Reading a large file in a worker of the page the way the engine reads it, for the measure of what
// the reads leave resident (scripts/bench-read-garbage.mjs, tests/browser/read-garbage.test.mjs).
// The file is picked through a file input the page is given; a module worker reads it in slices and
// drops each slice at once.
import { openBrowser } from '../tests/browser/harness.mjs';
import { watchTabMemory } from './tab-memory.mjs';

/** How a slice is read (see {@link readInWorker}). */
export const READ_MODES = ['page', 'plain', 'detach'];

/**
 * Picks `file` (a path) in `page` (already at the served page) and reads it in a fresh worker in
 * `slice`-byte slices, each read as `mode` says:
 *   'page'    the page's own read hook (`readSlice` of www/file-reads.js, imported by the worker);
 *   'plain'   `FileReaderSync.readAsArrayBuffer` alone, the slice left to the garbage collector;
 *   'detach'  the same, the slice's buffer detached (`ArrayBuffer.prototype.transfer(0)`) once read.
 * Resolves to { bytes, ms }: the bytes read and the worker's time from the file's arrival to the end.
 */
export async function readInWorker(page, file, slice, mode) {
  if (!READ_MODES.includes(mode)) throw new Error(`unknown mode ${mode}: ${READ_MODES.join(', ')}`);
  await page.evaluate(() => {
    const i = Object.assign(document.createElement('input'), { type: 'file', id: 'read-garbage' });
    document.body.append(i);
  });
  await page.setInputFiles('#read-garbage', file);
  return page.evaluate(([slice, mode]) => new Promise((res, rej) => {
    const read = {
      page: 'const a = readSlice(f, o, o + slice);',
      plain: 'const a = r.readAsArrayBuffer(f.slice(o, o + slice));',
      detach: 'const a = r.readAsArrayBuffer(f.slice(o, o + slice)); n += a.byteLength; a.transfer(0); continue;',
    }[mode];
    const src = `import { readSlice } from '${location.origin}/file-reads.js';
      const slice = ${slice};
      onmessage = (e) => {
        const f = e.data; const r = new FileReaderSync(); let n = 0;
        const t = performance.now();
        for (let o = 0; o < f.size; o += slice) { ${read} n += a.byteLength; }
        postMessage({ bytes: n, ms: performance.now() - t });
      };`;
    const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })), { type: 'module' });
    w.onmessage = (e) => {
      w.terminate();
      res(e.data);
    };
    w.onerror = (e) => rej(new Error(`the reading worker failed: ${e.message}`));
    w.postMessage(document.getElementById('read-garbage').files[0]);
  }), [slice, mode]);
}

/**
 * Reads `file` as {@link readInWorker} does in a fresh browser, on a page of `serverUrl`'s origin
 * with nothing running in it (the server's not-found page), so that only the reading worker moves
 * the tab's memory. Resolves to { bytes, ms, before, peak }: before and peak are the tab's
 * renderers' resident bytes (scripts/tab-memory.mjs) before the read and at their peak to its end.
 */
export async function readInFreshTab(serverUrl, file, slice, mode) {
  const b = await openBrowser();
  const tab = watchTabMemory(b.dir, 100);
  try {
    const page = await b.page();
    await page.goto(new URL('nothing-here', serverUrl).href);
    const before = tab.peak().renderer;
    const r = await readInWorker(page, file, slice, mode);
    return { ...r, before, peak: tab.stop().renderer };
  } finally {
    tab.stop();
    await b.close();
  }
}
