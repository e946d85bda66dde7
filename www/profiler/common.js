// Helpers shared by the torch_npu views: time formatting (ms since the rank's capture start, the
// absolute time on hover), chart colours from CSS, request coalescing, section frames.
import { el, cssVar } from '../ui/dom.js';
import { fixedShape } from '../format.js';

/** ns (relative) → "12.345 ms". */
export function ms(ns, digits = 3) {
  if (ns === null || ns === undefined) return '–';
  return `${(ns / 1e6).toFixed(digits)} ms`;
}

/**
 * The shape (see format.js `fixedShape`) of `ms(ns)`: its sign and its number of digits, else
 * its text.
 */
export function msShape(ns) {
  const x = Math.abs(ns) / 1e6;
  const digits = Number.isFinite(x) ? fixedShape(x, 3) : null;
  return digits === null ? ms(ns) : digits * 2 + (ns < 0 ? 1 : 0);
}

/** ns duration → a short human duration. */
export function duration(ns) {
  if (ns === null || ns === undefined) return '–';
  const a = Math.abs(ns);
  if (a < 1e3) return `${ns} ns`;
  if (a < 1e6) return `${(ns / 1e3).toFixed(1)} µs`;
  if (a < 1e9) return `${(ns / 1e6).toFixed(3)} ms`;
  return `${(ns / 1e9).toFixed(3)} s`;
}

/**
 * The absolute time of `rel` ns after `originNs` (a decimal string): UTC date-time with ns digits,
 * and the microsecond text torch_npu writes. BigInt keeps all 19 digits.
 */
export function absolute(originNs, rel) {
  if (rel === null || rel === undefined || originNs === undefined) return '';
  const t = BigInt(originNs) + BigInt(Math.round(rel));
  const sec = t / 1000000000n;
  const frac = (t % 1000000000n).toString().padStart(9, '0');
  const iso = new Date(Number(sec) * 1000).toISOString().slice(0, 19).replace('T', ' ');
  const us = `${t / 1000n}.${(t % 1000n).toString().padStart(3, '0')}`;
  return `${iso}.${frac} UTC (${us} µs since the epoch)`;
}

/** The exact relative time and the absolute time, for a title attribute. */
export function timeTitle(originNs, rel) {
  if (rel === null || rel === undefined) return '';
  const r = BigInt(Math.round(rel));
  const a = r < 0n ? -r : r;
  const exact = `${r < 0n ? '-' : ''}${a / 1000000n}.${(a % 1000000n).toString().padStart(6, '0')} ms since the capture start`;
  return `${exact}\n${absolute(originNs, rel)}`;
}

/** Chart colours, read from CSS so dark mode applies. */
export function colors() {
  const v = (name, fallback) => cssVar(name) || fallback;
  return {
    allocated: v('--c-allocated', '#2d6cdf'),
    reserved: v('--c-reserved', '#8e44ad'),
    active: v('--c-active', '#16a085'),
    ge: v('--c-ge', '#d35400'),
    geReserved: v('--c-ge-reserved', '#e67e22'),
    app: v('--c-app', '#7f8c8d'),
    compare: v('--c-compare', '#c0392b'),
    pta: v('--c-pta', '#2d6cdf'),
    geBar: v('--c-ge-bar', '#16a085'),
    unreleased: v('--c-unreleased', '#e4572e'),
    step: v('--c-step', 'rgba(120,130,140,0.10)'),
    peak: v('--c-peak', '#c62828'),
    at: v('--c-at', '#6a3fb5'),
    select: v('--c-select', '#f1c40f'),
    text: v('--text', '#1b1f24'),
    muted: v('--muted', '#5b6470'),
    panel: v('--panel', '#ffffff'),
    border: v('--border', '#d8dde3'),
  };
}

/** Request coalescing, shared by every view (ui/latest.js). */
export { latest } from '../ui/latest.js';

/**
 * A view's frame: a numbered section with a title, tools on the right, a help line (`helpNode`, for
 * a view whose help changes with what it shows) and a body.
 */
export function section(n, id, title, { help, tools = [] } = {}) {
  const titleNode = el('h2', { text: title });
  const head = el('div', { class: 'panel-head' }, el('span', { class: 'view-number', text: String(n), title: `Press ${n} to jump here` }), titleNode, ...tools);
  const body = el('div', { class: 'view-body' });
  const node = el('section', { class: 'panel ascend-view', id: `ascend-${id}`, 'data-view': id, tabindex: '-1', 'aria-label': title }, head);
  const helpNode = help ? el('p', { class: 'view-help muted', text: help }) : null;
  if (helpNode) node.append(helpNode);
  node.append(body);
  return { node, body, head, titleNode, helpNode };
}

/** The rank part of a label: "rank 3", or "device 3" when profiler_info named no rank. */
export function rankText(r) {
  if (r.rank !== 'unknown') return `rank ${r.rank}`;
  // No rank number in profiler_info (MindSpore often writes none): the device every row names.
  return r.device !== null && r.device !== undefined ? `device ${r.device}` : 'rank unknown';
}

/** The framework allocator's name as its own files write it: MindSpore, or PTA (torch_npu). */
export function allocatorName(r) {
  return r && r.framework === 'MindSpore' ? 'MindSpore' : 'PTA';
}

/** The allocator in words, for help texts and the call-stack facts. */
export function allocatorText(r) {
  return r && r.framework === 'MindSpore' ? 'MindSpore (its memory pool)' : 'PTA (torch_npu caching allocator)';
}

/** What torch_npu's exports, text or db, say of missing stacks and of the live set's allocations. */
const TORCH_NPU_STACKS = {
  noStacks: 'its trace_view.json was not dropped, or holds no stacks',
  stacksFix: 'Drop the run folder with trace_view.json to group by the line of your code.',
  liveAllocations: 'the framework allocator (PTA, or MindSpore’s)',
};

/**
 * What each export calls the things a rank was read from, as the export's own tools name them:
 * the text export's files, torch_npu's database tables, and the tables of a database in msprof's
 * layout (MindSpore's), which holds its allocator totals and its rows in NPU_OP_MEM and no stacks.
 */
const EXPORT_NAMES = {
  text: {
    peakFrom: 'memory_record.csv',
    records: 'memory_record.csv',
    noRecords: 'no memory_record.csv',
    rows: 'operator_memory.csv',
    row: (line) => `operator_memory.csv line ${line}`,
    dbFiles: null,
    ...TORCH_NPU_STACKS,
  },
  db: {
    peakFrom: 'the database’s MEMORY_RECORD table',
    records: 'the MEMORY_RECORD table',
    noRecords: 'no MEMORY_RECORD table',
    rows: 'the OP_MEMORY rows',
    row: (line) => `database, OP_MEMORY row ${line}`,
    dbFiles: 'ascend_pytorch_profiler_*.db',
    ...TORCH_NPU_STACKS,
  },
  msprof: {
    peakFrom: 'the database’s NPU_OP_MEM totals',
    records: 'the NPU_MEM and NPU_OP_MEM totals',
    noRecords: 'no NPU_OP_MEM table',
    rows: 'the NPU_OP_MEM rows',
    row: (line) => `database, NPU_OP_MEM row ${line}`,
    dbFiles: 'in msprof’s layout: ascend_mindspore_profiler_*.db or msprof_*.db',
    noStacks: 'its database export in msprof’s layout holds none',
    stacksFix: 'Drop the run folder of the text export of the same run (with trace_view.json) to group by the line of your code.',
    liveAllocations: 'CANN’s GE allocator (a database export in msprof’s layout holds no framework allocator records)',
  },
};

/**
 * The names of `EXPORT_NAMES` for what was read from `source` (`db`, `text` or `text+db`, the
 * rank summary's own by default) of rank summary `r`: its database's layout when that is `db`,
 * the text export's otherwise.
 */
export function exportNames(r, source = r && r.source) {
  if (source !== 'db') return EXPORT_NAMES.text;
  return r && r.db_layout === 'msprof' ? EXPORT_NAMES.msprof : EXPORT_NAMES.db;
}

/** "role · rank N · step S", or "device N" for a rank without a number. */
export function rankLabel(r) {
  const parts = [];
  parts.push(r.role ? r.role : '(no role)');
  parts.push(rankText(r));
  if (r.step !== null && r.step !== undefined) parts.push(`step ${r.step}`);
  if (r.source === 'db') parts.push('db');
  return parts.join(' · ');
}

/** What a stack source means, in plain words. */
export const STACK_SOURCE_TEXT = {
  direct: 'direct — the op that made this allocation recorded this call stack',
  via_forward:
    'via the forward op — the allocation was made in the backward pass by an op without a call stack; this is the stack of the forward op with the same autograd sequence number',
  approximate:
    'approximate — no op with this name contains the allocation time; this is the stack of the last same-name op that started before it (the rule of the Python tool memlens replaces)',
  none: 'none — no call stack could be found for this allocation',
};

/** Parses "1.5 MiB", "512k", "2G", "1048576" into bytes (binary units); null when empty/invalid. */
export function parseBytes(text) {
  const t = String(text || '').trim();
  if (!t) return null;
  const m = /^([0-9]*\.?[0-9]+)\s*([kmgt]?)(i?b?)?$/i.exec(t);
  if (!m) return null;
  const mult = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[m[2].toLowerCase()];
  return Math.round(Number(m[1]) * mult);
}

/**
 * A frame shortened for narrow places: the last two path components and the line/function
 * ("…/imagenet_script/main.py(354): train"). The full frame goes in a title.
 */
export function shortFrame(frame) {
  if (!frame) return frame;
  const paren = frame.indexOf('(');
  const pathPart = paren < 0 ? frame : frame.slice(0, paren);
  const parts = pathPart.split('/');
  if (parts.length <= 3) return frame;
  return `…/${parts.slice(-2).join('/')}${paren < 0 ? '' : frame.slice(paren)}`;
}
