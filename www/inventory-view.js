// The table of classified inputs: one row per unit, with the hooks automated checks rely on
// (data-testid="unit", data-kind, data-path, data-rank, data-role). Every string that comes from
// the user's files is set with textContent, never as HTML.
import { bytes, exactBytes, int, plural } from './format.js';

const KIND_LABEL = {
  somas: 'SOMAS dump',
  'task-info': 'task info',
  'ascend-run': 'profiler run',
  snapshot: 'memory snapshot',
  unknown: 'unknown',
};

// A run folder's framework, from its name's suffix (`_ascend_pt`, `_ascend_ms`).
const FRAMEWORK_LABEL = { pt: 'torch_npu run', ms: 'MindSpore run' };

/** The kind column: a run folder says which framework wrote it when its name tells. */
function kindLabel(unit) {
  if (unit.kind === 'ascend-run' && FRAMEWORK_LABEL[unit.framework]) return FRAMEWORK_LABEL[unit.framework];
  return KIND_LABEL[unit.kind] || unit.kind;
}

const RUN_FILES = [
  ['operator_memory', 'operator_memory.csv'],
  ['memory_record', 'memory_record.csv'],
  ['npu_module_mem', 'npu_module_mem.csv'],
  ['trace_view', 'trace_view.json'],
];

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k === 'title') node.title = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c) node.append(c);
  return node;
}

function details(unit) {
  const cell = el('td', { class: 'details' });
  if (unit.kind === 'ascend-run') {
    const rank = unit.rank === null ? 'rank unknown' : `rank ${unit.rank}`;
    const parts = [rank];
    parts.push(unit.role ? `role ${unit.role}` : 'no role');
    if (unit.step !== null) parts.push(`step ${unit.step}`);
    if (unit.timestamp) parts.push(`started ${formatTimestamp(unit.timestamp)}`);
    cell.append(el('div', { text: parts.join(' · ') }));
    const chips = el('div', { class: 'chips' });
    for (const [key, name] of RUN_FILES) {
      chips.append(el('span', { class: unit.files[key] ? 'chip' : 'chip missing', text: name, title: unit.files[key] || `${name} not found` }));
    }
    for (const db of unit.files.db) chips.append(el('span', { class: 'chip', text: db.split('/').pop(), title: db }));
    cell.append(chips);
    if (unit.notes.length) {
      const ul = el('ul', { class: 'notes' });
      for (const n of unit.notes) ul.append(el('li', { text: n }));
      cell.append(ul);
    }
  } else if (unit.kind === 'somas' || unit.kind === 'task-info') {
    // A SomasInfo dump's version is told by its tensor lines, which a large graph's parameters can
    // push past the head the classifier reads: until the analysis has read the whole dump, the
    // version says where it came from (confirmVersion puts the parsed one in its place).
    const fromHead = unit.family === 'somas-info';
    const parts = [`${unit.family} ${unit.version}${fromHead ? ' (from the file’s head)' : ''}`];
    if (unit.stage) parts.push(unit.stage);
    if (unit.graph_id !== null) parts.push(`graph ${unit.graph_id}`);
    const line = el('div', { text: parts.join(' · '), 'data-testid': 'unit-version' });
    if (fromHead) {
      line.title = 'version read from the first 64 KiB of the file; the SOMAS tab reads the whole dump and names the exact version here';
      line.dataset.versionFrom = 'head';
    }
    cell.append(line);
  } else if (unit.kind === 'snapshot') {
    cell.append(el('div', { text: `${unit.protocol ? `pickle protocol ${unit.protocol}` : 'JSON'} · ${unit.layout === 'dict' ? 'segments and device traces' : 'a bare list of segments'}` }));
  } else {
    cell.append(el('div', { class: 'muted', text: unit.reason }));
  }
  return cell;
}

function formatTimestamp(ts) {
  // YYYYmmddHHMMSSmmm, local time of the profiled host.
  return `${ts.slice(0, 4)}-${ts.slice(4, 6)}-${ts.slice(6, 8)} ${ts.slice(8, 10)}:${ts.slice(10, 12)}:${ts.slice(12, 14)}.${ts.slice(14)}`;
}

/** The version the analysis read from the whole dump at `path` replaces the head's guess. */
export function confirmVersion(unit, version) {
  for (const tr of document.querySelectorAll('[data-testid="unit"]')) {
    if (tr.dataset.path !== unit.path) continue;
    const line = tr.querySelector('[data-testid="unit-version"]');
    if (!line || line.dataset.versionFrom !== 'head') continue;
    const parts = [`${unit.family} ${version}`];
    if (unit.stage) parts.push(unit.stage);
    if (unit.graph_id !== null && unit.graph_id !== undefined) parts.push(`graph ${unit.graph_id}`);
    line.textContent = parts.join(' · ');
    line.title = 'version read by the analysis of the whole dump';
    line.dataset.versionFrom = 'parse';
  }
}

/**
 * A path's cell: the path as text with a line-break opportunity after each `/`, so that a narrow
 * column wraps a path between its folders rather than inside a name (`stuff/sub/confi` `g.json`).
 */
function pathCell(path) {
  const td = el('td', { class: 'path' });
  const parts = path.split('/');
  parts.forEach((part, i) => {
    const last = i === parts.length - 1;
    td.append(document.createTextNode(last ? part : `${part}/`));
    if (!last) td.append(document.createElement('wbr'));
  });
  return td;
}

/** Renders `inventory` into the inputs section. */
export function renderInventory(inventory) {
  const section = document.getElementById('inventory');
  const tbody = document.getElementById('unit-rows');
  tbody.replaceChildren();
  for (const unit of inventory.units) {
    const tr = el('tr', { 'data-testid': 'unit', 'data-kind': unit.kind, 'data-path': unit.path });
    if (unit.kind === 'ascend-run') {
      tr.dataset.rank = unit.rank === null ? '' : String(unit.rank);
      tr.dataset.role = unit.role;
      tr.dataset.step = unit.step === null ? '' : String(unit.step);
    }
    if (unit.kind === 'unknown') tr.dataset.reason = unit.reason;
    const size = unit.kind === 'ascend-run' ? unit.bytes : unit.size;
    const sizeCell = el('td', { class: 'num', text: bytes(size), title: exactBytes(size) });
    if (unit.kind === 'ascend-run') sizeCell.title += ` in ${plural(unit.file_count, 'file')}`;
    tr.append(
      el('td', {}, el('span', { class: `kind kind-${unit.kind}`, text: kindLabel(unit) })),
      pathCell(unit.path || '(top level)'),
      details(unit),
      sizeCell,
    );
    tbody.append(tr);
  }
  const counts = {};
  for (const u of inventory.units) counts[u.kind] = (counts[u.kind] || 0) + 1;
  const summary = Object.entries(counts).map(([k, n]) => `${n} ${KIND_LABEL[k] || k}${n > 1 && !k.endsWith('info') ? 's' : ''}`);
  document.getElementById('inventory-summary').textContent = inventory.units.length
    ? `${plural(inventory.files, 'file')}, ${bytes(inventory.bytes)} — ${summary.join(', ')}`
    : '';
  // A drop of empty folders lists nothing: a sentence says so, naming what was dropped, in the
  // place of a table with a head and no rows.
  section.querySelector('table.units').hidden = !inventory.units.length;
  let empty = document.getElementById('inventory-empty');
  if (!empty) {
    empty = el('p', { id: 'inventory-empty', class: 'empty-state', 'data-testid': 'inventory-empty' });
    section.append(empty);
  }
  empty.hidden = inventory.units.length > 0;
  const given = (inventory.nothing_to_analyse && inventory.nothing_to_analyse.given) || [];
  empty.textContent = given.length
    ? `Nothing to list: ${given.join(', ')} ${given.length === 1 ? 'holds' : 'hold'} no files.`
    : 'Nothing to list: the drop held no files.';
  section.hidden = false;
}
