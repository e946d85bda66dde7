// The per-file limit of the torch_npu tab: a rank with a file larger than a tab can hold is left
// out before anything of the job is read, and the page names each such file with its size and the
// limit, and what reads it instead. The check runs once per drop, where the tab first looks at it
// (www/profiler/index.js `mount`), so the one-worker tab (`?workers=1`, the offline file, a job of
// one rank) and the worker pool leave out the same ranks and show the same panel. A db export over
// the limit whose run folder has the text files too does not leave its rank out: the rank is read
// from its text files (the core decides which dbs can be, `ascend.leaveOutDbs`), and the panel says
// so.
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

/** A part's key (or a rank's): its run folders, as `ascend.parts` lists them. */
const key = (p) => p.run_dirs.join('\n');

/**
 * Looks at a drop (`dropped`: the worker's `load` request, `{ files }`; null for files that are
 * in the worker alone, a side of a comparison) before the tab reads it. Resolves to null when no
 * file is over the limit (the worker is not even asked) or none of them is read, else to
 * `{ notice, skipped(part), kept, none, all, leftOut, leaveDbs }`: the panel that names the
 * files, whether a part (as `ascend.parts` gives it) is left out, the run folders of the ranks
 * read, whether none is, every part of the job, the parts left out (`{ part, files: [{ path,
 * bytes }], limit, error }`), and the db exports over the limit that are left out of their ranks'
 * reading for the text files beside them (every request that reads the job passes them on as its
 * `leaveDbs`; `all` is weighed without them).
 */
export async function screenDrop(client, dropped) {
  const limit = fileLimit();
  const files = dropped ? dropped.files : [];
  const large = files.filter((f) => over(f, limit));
  if (!large.length) return null;
  // The core keeps only the db exports among them whose run folders have text files.
  const { left: leaveDbs, parts: all } = await client.call('ascend.leaveOutDbs', { dbs: large.map((f) => f.path) });
  const asText = new Set(leaveDbs);
  // A rank with another file over the limit is left out, naming them all; else its dbs are read as text.
  const mine = all.map((p) => largeFiles(files, p.run_dirs, limit));
  const big = mine.map((m) => (m.some((f) => !asText.has(f.path)) ? m : []));
  const dbs = mine.map((m, i) => (big[i].length ? [] : m));
  const notice = tooLarge(all, big, dbs, limit);
  if (!notice) return null;
  const left = new Set(all.filter((p, i) => big[i].length).map(key));
  const kept = all.filter((p) => !left.has(key(p)));
  const leftOut = all.flatMap((p, i) => {
    if (!big[i].length) return [];
    const files = big[i].map((f) => ({ path: f.path, bytes: f.file.size }));
    return [{ part: p, files, limit, error: tooLargeError(files, limit) }];
  });
  return { notice, skipped: (p) => left.has(key(p)), kept: kept.flatMap((p) => p.run_dirs), none: kept.length === 0, all, leftOut, leaveDbs };
}

/**
 * The reason a rank is left out, as its failed summary states it ("too large: PATH is 1.50 GiB,
 * more than the 1.00 GiB this page reads of one file", one clause per file, joined by "; "):
 * `files` (`{ path, bytes }`) are its files over `limit`.
 */
export function tooLargeError(files, limit) {
  return `too large: ${files.map((f) => `${f.path} is ${bytesApart(f.bytes, limit).join(', more than the ')} this page reads of one file`).join('; ')}`;
}

/**
 * Marks the ranks of `ranks` (a report's, listed with their run folders) that `screen` left out:
 * each gets `tooLarge: { files, limit }` (its files over the limit, with their sizes), which the
 * overview, the rank bar and the rank's panel show.
 */
export function markLeftOut(ranks, screen) {
  if (!screen) return;
  const left = new Map(screen.leftOut.map((l) => [key(l.part), l]));
  for (const r of ranks) {
    const l = left.get(key(r));
    if (l) r.tooLarge = { files: l.files, limit: l.limit };
  }
}

/**
 * The job of the page's one worker (`ascend.open` of the ranks `screen` kept: `{ report, ranks,
 * … }`) with the ranks left out listed too, in the job's order, as failed ranks marked too large
 * (no figures, the reason naming each file and its size), the way the worker pool lists them; the
 * totals count them (ranks, failed ranks, roles) and each one's reason is among the warnings, as
 * the core's job overview of a pool does. Returns `{ job, worker(i) }`: `worker(i)` is the index
 * in the worker's job of rank `i` of the new one, -1 for a rank left out.
 */
export function withLeftOut(job, screen) {
  const { report, ranks } = job;
  const left = new Map(screen.leftOut.map((l) => [key(l.part), l]));
  const read = new Map(report.ranks.map((r, i) => [key(r), i]));
  // The job's order is the order of its parts (the worker's job keeps it, less the ranks left out).
  const order = [];
  for (const p of screen.all) {
    const k = key(p);
    if (left.has(k)) order.push(left.get(k));
    else if (read.has(k)) {
      order.push(read.get(k));
      read.delete(k);
    }
  }
  order.push(...read.values());
  const at = order.map((x) => (typeof x === 'number' ? x : -1));
  const leftOut = order.filter((x) => typeof x !== 'number');
  const newRanks = order.map((x) => (typeof x === 'number' ? report.ranks[x] : leftOutRank(x)));
  const infos = order.map((x, index) => (typeof x === 'number'
    ? { ...ranks[x], index }
    : { origin_ns: '0', end: 0, active_start: 0, peak: null, components: [], steps: [], records_aside: null, index }));
  const peak = report.totals.peak_rank;
  const totals = {
    ...report.totals,
    ranks: report.totals.ranks + leftOut.length,
    failed_ranks: (report.totals.failed_ranks || 0) + leftOut.length,
    roles: new Set(newRanks.map((r) => r.role)).size,
    errors: (report.totals.errors || 0) + leftOut.length,
    peak_rank: peak === null || peak === undefined ? peak : at.indexOf(peak),
  };
  const warnings = [...leftOut.map((l) => ({ severity: 'error', file: l.part.run_dirs[0] || '', message: l.error })), ...report.warnings];
  return {
    job: { ...job, report: { ...report, ranks: newRanks, totals, warnings }, ranks: infos },
    worker: (i) => (i >= 0 && i < at.length ? at[i] : -1),
  };
}

/**
 * The report object of a rank left out (`l`: an entry of `screen.leftOut`): the keys of a rank's
 * report with nothing measured, failed with the reason, marked too large (as the core's job
 * overview lists a failed rank's summary).
 */
function leftOutRank(l) {
  const p = l.part;
  return {
    role: p.role, rank: p.rank ?? 'unknown', step: p.step ?? null, run_dirs: p.run_dirs,
    rows: 0, rows_pta: 0, rows_ge: 0, stacks: { direct: 0, via_forward: 0, approximate: 0, none: 0 },
    peak_allocated_bytes: 0, peak_reserved_bytes: 0, peak_active_bytes: 0, peak_time_ns: 0, peak_source: 'none',
    fragmentation_bytes: 0, unreleased_rows: 0, unreleased_bytes: 0, group_by: 'frame',
    live_at_peak: [], step_peaks: [], module_peaks: [], trace_ops: 0, trace_events: 0,
    source: 'none', framework: '', device: null,
    status: 'error', error: l.error, tooLarge: { files: l.files, limit: l.limit },
  };
}

/**
 * The panel that names the ranks left unread (`big[i]`: the files of `parts[i]` over the limit,
 * db exports read as text aside) and the ranks read from their text files instead of their db
 * export (`dbs[i]`: those exports of `parts[i]`), each file with its size, and says what reads
 * them whole; null when no file over the limit is named.
 */
function tooLarge(parts, big, dbs, limit) {
  const label = (p) => rankLabel({ role: p.role, rank: p.rank ?? 'unknown', step: p.step });
  const size = (f) => ` is ${bytesApart(f.file.size, limit).join(', more than the ')} this page reads of one file`;
  const items = parts.flatMap((p, i) => big[i].map((f) => el('li', { 'data-path': f.path, 'data-bytes': String(f.file.size) },
    `${label(p)} is not read: `, el('code', { text: f.path }), `${size(f)}.`)));
  const asText = parts.flatMap((p, i) => (dbs[i].map((f) => el('li', { 'data-path': f.path, 'data-bytes': String(f.file.size) },
    `${label(p)} is read from its text files: its database export `, el('code', { text: f.path }), `${size(f)}.`))));
  if (!items.length && !asText.length) return null;
  const dirs = parts.filter((p, i) => big[i].length || dbs[i].length).flatMap((p) => p.run_dirs);
  const rest = parts.some((p, i) => !big[i].length);
  return el('section', { class: 'panel', 'data-testid': 'ascend-too-large' },
    el('h2', { text: 'Files too large for the page' }),
    items.length ? el('ul', { class: 'error-state' }, ...items) : null,
    asText.length ? el('ul', { 'data-testid': 'ascend-db-as-text' }, ...asText) : null,
    el('p', { text: `A browser tab holds at most 4 GiB of WebAssembly memory. The command line reads files of any size${asText.length ? ', database exports included' : ''}, on every core: ` },
      el('code', { text: `memlens profiler ${dirs.join(' ')}` }),
      ', or ', el('code', { text: `memlens serve ${dirs.join(' ')}` }),
      ` to see them on this page read by the native engine.${items.length && rest ? ' The other ranks are shown below.' : ''}`));
}

/** Shows in `root` the panel of a drop whose every rank was left out (`screen.none`). */
export function noneRead(root, screen) {
  root.dataset.state = 'error';
  root.replaceChildren(screen.notice);
}
