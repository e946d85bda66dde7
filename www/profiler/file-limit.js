// The per-file limit of the torch_npu tab: a rank with a file larger than a tab can hold is left
// out before anything of the job is read, and the page names each such file with its size and the
// limit, and what reads it instead. The check runs once per drop, where the tab first looks at it
// (www/profiler/index.js `mount`), so the one-worker tab (`?workers=1`, the offline file, a job of
// one rank) and the worker pool leave out the same ranks and show the same panel.
import { el } from '../ui/dom.js';
import { bytesApart } from '../format.js';
import { rankLabel } from './common.js';

/**
 * The most a page reads of one file whose rows it holds (operator_memory.csv, memory_record.csv,
 * a db export): 1.5 GiB. Measured (scripts/bench-profiler-page.mjs --file-limit/--db-rows: one
 * rank, the worker's wasm memory once every view is drawn, files of 139 MiB to 1.5 GiB), a worker
 * holds 1.74–1.91 × the size of an operator_memory.csv (the costliest kind; a db export 1.0 ×,
 * memory_record.csv 0.6–0.8 ×), in either engine. Limit = 4 GiB (the most wasm32 memory a worker
 * has) ÷ 1.9 = 2.1 GiB, less a fifth for the rank's other files read beside it → 1.7 GiB, rounded
 * down to 1.5 GiB, where a rank whose operator_memory.csv and memory_record.csv are both just
 * under the limit still fits (2.7 + 1.1 GiB).
 * trace_view.json is not limited: it is scanned as it streams by and only some of its events are
 * kept (a 2 GiB trace reads in a few hundred MiB). `?fileLimit=BYTES` sets the limit lower (the
 * tests use files of a few KiB).
 */
export const FILE_LIMIT = 1536 * 2 ** 20;

/** Files read as they stream by, whatever their size. */
const STREAMED = /(^|\/)trace_view\.json$/;

/** The per-file limit this page applies. */
export function fileLimit(search = location.search) {
  const n = Math.floor(Number(new URLSearchParams(search).get('fileLimit')));
  return Number.isFinite(n) && n > 0 ? Math.min(n, FILE_LIMIT) : FILE_LIMIT;
}

/** Whether the dropped file `f` (`{ path, file }`) is held whole and larger than `limit`. */
const over = (f, limit) => Boolean(f.file) && f.file.size > limit && !STREAMED.test(f.path);

/**
 * The dropped `files` (`{ path, file }`) under the run folders `runDirs` larger than `limit`,
 * streamed ones aside.
 */
export function largeFiles(files, runDirs, limit) {
  return files.filter((f) => over(f, limit) && runDirs.some((d) => f.path.startsWith(`${d}/`)));
}

/** A part's key: its run folders, as `ascend.parts` lists them. */
const key = (p) => p.run_dirs.join('\n');

/**
 * Looks at a drop (`dropped`: the worker's `load` request, `{ files }`; null for files that are
 * in the worker alone, a side of a comparison) before the tab reads it. Resolves to null when no
 * rank is left out (no file is over the limit: the worker is not even asked), else to `{ notice,
 * skipped(part), kept, none }`: the panel that names the files, whether a part (as `ascend.parts`
 * gives it) is left out, the run folders of the ranks read, and whether none is.
 */
export async function screenDrop(client, dropped) {
  const limit = fileLimit();
  const files = dropped ? dropped.files : [];
  if (!files.some((f) => over(f, limit))) return null;
  const all = await client.call('ascend.parts', {});
  const big = all.map((p) => largeFiles(files, p.run_dirs, limit));
  const notice = tooLarge(all, big, limit);
  if (!notice) return null;
  const left = new Set(all.filter((p, i) => big[i].length).map(key));
  const kept = all.filter((p) => !left.has(key(p)));
  return { notice, skipped: (p) => left.has(key(p)), kept: kept.flatMap((p) => p.run_dirs), none: kept.length === 0 };
}

/**
 * The panel that names the ranks left unread (`big[i]`: the files of `parts[i]` over the limit),
 * each file with its size, and says what reads them instead; null when every rank is read.
 */
function tooLarge(parts, big, limit) {
  const items = parts.flatMap((p, i) => big[i].map((f) => el('li', { 'data-path': f.path, 'data-bytes': String(f.file.size) },
    `${rankLabel({ role: p.role, rank: p.rank ?? 'unknown', step: p.step })} is not read: `,
    el('code', { text: f.path }), ` is ${bytesApart(f.file.size, limit).join(', more than the ')} this page reads of one file.`)));
  if (!items.length) return null;
  const dirs = parts.filter((p, i) => big[i].length).flatMap((p) => p.run_dirs);
  const rest = parts.some((p, i) => !big[i].length);
  return el('section', { class: 'panel', 'data-testid': 'ascend-too-large' },
    el('h2', { text: 'Files too large for the page' }),
    el('ul', { class: 'error-state' }, ...items),
    el('p', { text: 'A browser tab holds at most 4 GiB of WebAssembly memory. The command line reads files of any size, on every core: ' },
      el('code', { text: `memlens profiler ${dirs.join(' ')}` }),
      ', or ', el('code', { text: `memlens serve ${dirs.join(' ')}` }),
      ` to see them on this page read by the native engine.${rest ? ' The other ranks are shown below.' : ''}`));
}

/** Shows in `root` the panel of a drop whose every rank was left out (`screen.none`). */
export function noneRead(root, screen) {
  root.dataset.state = 'error';
  root.replaceChildren(screen.notice);
}
