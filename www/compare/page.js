// The Compare mode: a baseline and a candidate, each picked or dropped on its own zone, compared in
// the worker by the core (the figures are `memlens compare --json`'s); the rank pairs (or the SOMAS
// figures) with what grew, the selected pair's live set at the peak by frame, one-side allocations
// and new unreleased blocks; exports byte-identical to `memlens compare --out`.
import { el, clear } from '../ui/dom.js';
import { download } from '../ui/download.js';
import { fromInput, fromDataTransfer } from '../files.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { mountOverlay } from './overlay.js';

const signed = (n) => (n > 0 ? `+${bytes(n)}` : n < 0 ? `−${bytes(-n)}` : '0');
const pct = (v) => (v === null || v === undefined ? '–' : `${v > 0 ? '+' : ''}${v.toFixed(2)} %`);
const rankText = (k) => `${k.role || '-'} · rank ${k.rank === null ? 'unknown' : k.rank}${k.step === null ? '' : ` · step folder ${k.step}`}`;

function table(testid, head, rows, onRow) {
  const tbody = el('tbody');
  for (const r of rows) {
    const tr = el('tr', { data: { testid, ...r.data } }, ...r.cells.map((c, i) => (c instanceof Node ? el('td', {}, c) : el('td', { class: head[i].num ? 'num' : '', text: c.text ?? c, title: c.title }))));
    if (onRow) {
      tr.tabIndex = 0;
      tr.addEventListener('click', () => onRow(r, tr));
      tr.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') onRow(r, tr);
      });
    }
    tbody.append(tr);
  }
  return el('table', { class: 'compare-table' }, el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { class: h.num ? 'num' : '', text: h.text })))), tbody);
}

function block(title, ...children) {
  return el('section', { class: 'compare-block' }, el('h3', { text: title }), ...children);
}

/** Two buttons that open the baseline's / the candidate's own view at a place (either may be absent). */
function openButtons(open, what, base, candidate) {
  const b = (side, label, place) =>
    el('button', {
      type: 'button',
      class: 'link-button',
      text: label,
      title: `Open the ${side ? 'candidate' : 'baseline'}’s own view at this ${what}`,
      disabled: place === null,
      data: { testid: `compare-open-${side ? 'candidate' : 'base'}` },
      on: {
        click: (ev) => {
          ev.stopPropagation();
          open(side, place);
        },
      },
    });
  return el('span', { class: 'compare-open' }, b(0, 'baseline', base), b(1, 'candidate', candidate));
}

/**
 * Mounts the Compare mode into `root`; `client` is the page's EngineClient; `open(side, place)`
 * opens side 0 (baseline) or 1 (candidate) as the drop, in its own view at `place` ({ pair },
 * { node } or { tensor }). Returns { compare(base, candidate), close() }: `compare` sets both sides
 * (file lists) and compares them, as the page's "compare these" offer does for two inputs of one
 * drop; `close` frees the comparison (the mode was hidden). `status(state, text)` hears what the
 * mode is doing, for the page's header status: comparing, what was compared, or that it failed.
 */
export function mountCompare(root, client, open, status = () => {}) {
  const sides = { base: [], candidate: [] };
  const setters = {};
  const section = el('section', { class: 'panel compare', data: { testid: 'compare', state: 'empty' }, 'aria-label': 'Compare a baseline and a candidate' });
  const message = el('p', { class: 'compare-message', data: { testid: 'compare-message' }, role: 'status' });
  const result = el('div', { class: 'compare-result', data: { testid: 'compare-result' } });
  const exports = el('div', { class: 'compare-exports', data: { testid: 'compare-exports' } });
  const runButton = el('button', { type: 'button', class: 'primary', text: 'Compare', disabled: true, data: { testid: 'compare-run' }, on: { click: () => run() } });
  const stepInput = (testid) => el('input', { type: 'number', min: '0', step: '1', class: 'compare-step', placeholder: 'whole run', data: { testid } });
  const baseStep = stepInput('compare-base-step');
  const candidateStep = stepInput('compare-candidate-step');

  const sideBox = (side, title) => {
    const summary = el('p', { class: 'muted', text: 'nothing chosen', data: { testid: `compare-${side}-summary` } });
    const set = (items, label) => {
      sides[side] = items;
      const files = items.filter((i) => i.file);
      summary.textContent = items.length ? `${plural(items.length, 'file')}, ${bytes(files.reduce((s, f) => s + f.file.size, 0))}${items[0] ? ` — ${label || items[0].path.split('/')[0]}` : ''}` : 'nothing chosen';
      runButton.disabled = !(sides.base.length && sides.candidate.length);
      if (!runButton.disabled && section.dataset.state === 'empty') setMessage('empty', 'Both sides chosen: press Compare.');
    };
    const input = (props) =>
      el('input', {
        type: 'file',
        multiple: true,
        ...props,
        on: {
          change: (ev) => {
            set(fromInput(ev.target.files));
            ev.target.value = '';
          },
        },
      });
    const box = el(
      'div',
      { class: 'compare-side', data: { side, testid: `compare-${side}` } },
      el('h3', { text: title }),
      el('div', { class: 'drop-actions' }, el('label', { class: 'button' }, 'Files…', input({ data: { testid: `compare-${side}-files` } })), el('label', { class: 'button' }, 'Folder…', input({ webkitdirectory: true, data: { testid: `compare-${side}-folder` } }))),
      summary,
    );
    // A drop on a side's zone is that side's, and does not reach the page's own drop handler.
    box.addEventListener('dragover', (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      box.classList.add('dragging');
    });
    box.addEventListener('dragleave', () => box.classList.remove('dragging'));
    box.addEventListener('drop', async (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      box.classList.remove('dragging');
      if (ev.dataTransfer) set((await fromDataTransfer(ev.dataTransfer)).items);
    });
    setters[side] = set;
    return box;
  };

  section.append(
    el('h2', { text: 'Compare' }),
    el('p', { class: 'muted', text: 'A baseline and a candidate of one kind: two torch_npu / MindSpore runs or jobs (folders or archives), two steps of a run (the same folder twice, with steps), or two SOMAS dumps of the same graph. What grew, and where.' }),
    el('div', { class: 'compare-sides' }, sideBox('base', 'Baseline'), sideBox('candidate', 'Candidate')),
    el('div', { class: 'compare-actions' }, el('label', {}, 'Baseline step ', baseStep), el('label', {}, 'Candidate step ', candidateStep), runButton),
    message,
    result,
    exports,
  );
  root.append(section);
  setMessage('empty', 'Choose a baseline and a candidate (files, a folder or an archive for each), then press Compare.');

  function setMessage(state, text) {
    section.dataset.state = state;
    message.textContent = text;
    message.classList.toggle('error-state', state === 'error');
  }

  let seq = 0;
  let overlay = null;
  const dropOverlay = () => {
    if (overlay) overlay.destroy();
    overlay = null;
  };
  const call = (name, args) => client.call(name, args);
  async function run() {
    const mine = ++seq;
    dropOverlay();
    clear(result);
    clear(exports);
    setMessage('loading', 'Comparing…');
    status('loading', 'comparing');
    const pack = (items) => ({
      files: items.filter((i) => i.file),
      unreadable: items.filter((i) => !i.file).map(({ path, size, error }) => ({ path, size, error })),
    });
    try {
      const answer = await client.call('compare.run', {
        base: pack(sides.base),
        candidate: pack(sides.candidate),
        baseStep: baseStep.value,
        candidateStep: candidateStep.value,
      });
      if (mine !== seq) return;
      const c = JSON.parse(answer.json);
      section.dataset.family = c.family;
      section.dataset.differences = String(c.differences);
      if (c.family === 'profiler') showProfiler(c);
      else showSomas(c);
      showExports(answer.files, answer.json);
      setMessage('ready', c.differences ? `${plural(c.differences, 'difference')} found.` : 'No difference: the two compare equal.');
      const what = c.family === 'profiler' ? plural(c.pairs.length, 'rank pair') : 'two SOMAS dumps';
      status('ready', `compared ${what}: ${c.differences ? plural(c.differences, 'difference') : 'no difference'}`);
    } catch (err) {
      if (mine !== seq) return;
      setMessage('error', err.message);
      status('error', 'compare failed');
    }
  }

  function showExports(names, json) {
    exports.append(
      el('span', { class: 'muted', text: 'Export (as memlens compare --out writes them): ' }),
      ...names.map((name) =>
        el('button', {
          type: 'button',
          text: name,
          data: { testid: `compare-export-${name}` },
          on: {
            click: async () => {
              // summary.json is the JSON already here; the CSV files come from the worker.
              const data = name === 'summary.json' ? json : await client.call('compare.export', { name });
              download(name, data, name.endsWith('.json') ? 'application/json' : 'text/csv;charset=utf-8');
            },
          },
        }),
      ),
    );
  }

  function showProfiler(c) {
    const detail = el('div', { class: 'compare-detail', data: { testid: 'compare-detail' } });
    result.append(el('p', { text: `${plural(c.pairs.length, 'rank pair')} compared (${c.mode === 'steps' ? 'steps' : 'whole runs'}).` }));
    for (const n of c.notes) result.append(el('p', { class: 'muted', text: `Note: ${n}` }));
    for (const [list, side] of [
      [c.only_base_ranks, 'baseline'],
      [c.only_candidate_ranks, 'candidate'],
    ]) {
      for (const k of list) result.append(el('p', { class: 'muted', data: { testid: 'compare-unmatched' }, text: `Only in the ${side}: ${rankText(k)}` }));
    }
    if (!c.pairs.length) {
      result.append(el('p', { class: 'muted', text: 'No rank pair to compare.' }));
      return;
    }
    const rows = c.pairs.map((p, i) => ({
      pair: p,
      data: {
        index: i,
        role: p.key.role,
        rank: p.key.rank === null ? '' : p.key.rank,
        basePeak: p.base.peak_allocated_bytes,
        candidatePeak: p.candidate.peak_allocated_bytes,
        delta: p.peak_allocated_delta_bytes,
        reservedDelta: p.peak_reserved_delta_bytes,
        differences: p.differences,
      },
      cells: [
        rankText(p.key),
        { text: bytes(p.base.peak_allocated_bytes), title: exactBytes(p.base.peak_allocated_bytes) },
        { text: bytes(p.candidate.peak_allocated_bytes), title: exactBytes(p.candidate.peak_allocated_bytes) },
        { text: signed(p.peak_allocated_delta_bytes), title: exactBytes(p.peak_allocated_delta_bytes) },
        pct(p.peak_allocated_growth_percent),
        signed(p.peak_reserved_delta_bytes),
        int(p.new_unreleased.reduce((s, u) => s + u.new_count, 0)),
        int(p.differences),
      ],
    }));
    const select = (r, tr) => {
      for (const x of tr.parentNode.children) x.setAttribute('aria-selected', String(x === tr));
      showPair(detail, r.pair, r.data.index, c.mode);
    };
    const t = table(
      'compare-pair',
      [{ text: 'Rank' }, { text: 'Baseline peak', num: true }, { text: 'Candidate peak', num: true }, { text: 'Δ peak', num: true }, { text: 'Growth', num: true }, { text: 'Δ reserved', num: true }, { text: 'New unreleased', num: true }, { text: 'Differences', num: true }],
      rows,
      select,
    );
    result.append(block('Rank pairs (peak allocated)', t), detail);
    // The pair that grew most is shown first.
    let best = 0;
    c.pairs.forEach((p, i) => {
      if (p.peak_allocated_delta_bytes > c.pairs[best].peak_allocated_delta_bytes) best = i;
    });
    select(rows[best], t.tBodies[0].children[best]);
  }

  function showPair(detail, p, index, mode) {
    dropOverlay();
    clear(detail);
    detail.dataset.rank = p.key.rank === null ? '' : String(p.key.rank);
    detail.dataset.role = p.key.role;
    detail.append(
      el('h3', { text: `${rankText(p.key)}: peak ${bytes(p.base.peak_allocated_bytes)} → ${bytes(p.candidate.peak_allocated_bytes)} (${signed(p.peak_allocated_delta_bytes)})` }),
      el('p', { class: 'compare-open-line' }, el('span', { class: 'muted', text: 'Open this rank at its peak in its own view: ' }), openButtons(open, 'rank', { pair: index }, { pair: index })),
    );
    overlay = mountOverlay(detail, call, { family: 'profiler', pair: index, steps: mode === 'steps' });
    const changed = p.live_at_peak.filter((f) => f.delta_bytes !== 0 || f.base_count !== f.candidate_count);
    detail.append(
      block(
        `Live at the peak by top user frame (${int(changed.length)} changed of ${int(p.live_at_peak.length)})`,
        table(
          'compare-frame',
          [{ text: 'Frame' }, { text: 'Baseline', num: true }, { text: 'Candidate', num: true }, { text: 'Δ', num: true }, { text: 'Blocks', num: true }, { text: 'Open at the peak' }],
          p.live_at_peak.map((f) => ({
            data: { frame: f.frame, base: f.base_bytes, candidate: f.candidate_bytes, delta: f.delta_bytes },
            cells: [{ text: f.frame, title: f.frame }, bytes(f.base_bytes), bytes(f.candidate_bytes), signed(f.delta_bytes), `${int(f.base_count)} → ${int(f.candidate_count)}`, openButtons(open, 'frame at the rank’s peak', f.base_count ? { pair: index, frame: f.frame } : null, f.candidate_count ? { pair: index, frame: f.frame } : null)],
          })),
        ),
      ),
    );
    for (const [title, list, side] of [
      ['Allocated only in the candidate', p.only_candidate_allocations, 'candidate'],
      ['Allocated only in the baseline', p.only_base_allocations, 'baseline'],
    ]) {
      detail.append(
        block(
          `${title} (${int(list.length)})`,
          list.length
            ? table(
                'compare-only',
                [{ text: 'Op' }, { text: 'Frame' }, { text: 'Blocks', num: true }, { text: 'Bytes', num: true }],
                list.map((g) => ({ data: { side, name: g.name, bytes: g.bytes }, cells: [g.name, { text: g.frame, title: g.frame }, int(g.count), bytes(g.bytes)] })),
              )
            : el('p', { class: 'muted', text: 'none' }),
        ),
      );
    }
    detail.append(
      block(
        `Unreleased blocks new in the candidate (${int(p.new_unreleased.length)})`,
        p.new_unreleased.length
          ? table(
              'compare-unreleased',
              [{ text: 'Op' }, { text: 'Frame' }, { text: 'Size', num: true }, { text: 'Blocks', num: true }, { text: 'New bytes', num: true }],
              p.new_unreleased.map((u) => ({ data: { name: u.name, size: u.size, newCount: u.new_count }, cells: [u.name, { text: u.frame, title: u.frame }, bytes(u.size), `${int(u.base_count)} → ${int(u.candidate_count)}`, bytes(u.new_bytes)] })),
            )
          : el('p', { class: 'muted', text: 'none' }),
      ),
    );
  }

  function showSomas(c) {
    const b = c.base;
    const d = c.candidate;
    const fig = (label, x, y, fmt = bytes) => ({ data: { figure: label }, cells: [label, fmt(x), fmt(y), typeof x === 'number' && typeof y === 'number' && fmt === bytes ? signed(y - x) : ''] });
    const rows = [
      fig('peak in-use', b.peak_in_use, d.peak_in_use),
      { data: { figure: 'peak node' }, cells: ['peak node', { text: b.peak_node, title: b.peak_node }, { text: d.peak_node, title: d.peak_node }, ''] },
      fig('upper bound', b.upper_bound, d.upper_bound),
      fig('after reuse', b.reused, d.reused),
      fig('static', b.static_bytes, d.static_bytes),
      fig('stacked lifelong', b.lifelong_stacked, d.lifelong_stacked),
      ...b.ratios.map(([name, v], i) => {
        const w = d.ratios[i] ? d.ratios[i][1] : null;
        const f = (x) => (x === null || x === undefined ? '–' : `${(100 * x).toFixed(2)} %`);
        return { data: { figure: name }, cells: [name, f(v), f(w), ''] };
      }),
    ];
    result.append(
      el('p', { text: `${plural(c.nodes_matched, 'node')} matched (${int(c.nodes_matched_by_order)} by order among repeated names), ${int(c.only_base_nodes.length)} only in the baseline, ${int(c.only_candidate_nodes.length)} only in the candidate.` }),
      block('Figures', table('compare-figure', [{ text: '' }, { text: 'Baseline', num: true }, { text: 'Candidate', num: true }, { text: 'Δ', num: true }], rows)),
    );
    overlay = mountOverlay(result, call, { family: 'somas' });
    const LIMIT = 1000;
    const nodes = c.node_differences.slice(0, LIMIT);
    result.append(
      block(
        `Nodes whose in-use differs (${int(c.node_differences.length)}${c.node_differences.length > LIMIT ? `, first ${LIMIT} shown; all in compare_nodes.csv` : ''})`,
        nodes.length
          ? table(
              'compare-node',
              [{ text: 'Node' }, { text: 'Index', num: true }, { text: 'Baseline', num: true }, { text: 'Candidate', num: true }, { text: 'Δ', num: true }, { text: 'Open' }],
              nodes.map((n) => ({ data: { index: n.candidate_index, delta: n.delta_bytes }, cells: [{ text: n.name, title: n.name }, `${n.base_index} → ${n.candidate_index}`, bytes(n.base_in_use), bytes(n.candidate_in_use), signed(n.delta_bytes), openButtons(open, 'node', { node: n.base_index }, { node: n.candidate_index })] })),
            )
          : el('p', { class: 'muted', text: 'none' }),
      ),
    );
    const tensors = [...c.changed_tensors.map((t) => ['changed', t]), ...c.one_side_tensors.map((t) => [t.base_id === null ? 'candidate only' : 'baseline only', t])].slice(0, LIMIT);
    result.append(
      block(
        `Tensors changed or on one side (${int(c.changed_tensors.length)} changed, ${int(c.one_side_tensors.length)} on one side), by effect on the peak`,
        tensors.length
          ? table(
              'compare-tensor',
              [{ text: 'Change' }, { text: 'Source' }, { text: 'Slot' }, { text: 'Size', num: true }, { text: 'Lifetime' }, { text: 'At the peak', num: true }, { text: 'Open' }],
              tensors.map(([kind, t]) => ({
                data: { change: kind, id: t.candidate_id ?? t.base_id, sizeDelta: t.size_delta, effect: t.peak_effect_bytes },
                cells: [kind, { text: t.source, title: t.source }, t.slot, `${bytes(t.base_size)} → ${bytes(t.candidate_size)}`, `${t.base_life ? t.base_life.join('–') : '–'} → ${t.candidate_life ? t.candidate_life.join('–') : '–'}`, signed(t.peak_effect_bytes), openButtons(open, 'tensor', t.base_id === null ? null : { tensor: t.base_id }, t.candidate_id === null ? null : { tensor: t.candidate_id })],
              })),
            )
          : el('p', { class: 'muted', text: 'none' }),
      ),
    );
  }

  return {
    close() {
      if (section.dataset.state === 'empty') return;
      seq++;
      dropOverlay();
      clear(result);
      clear(exports);
      setMessage('empty', 'Both sides chosen: press Compare.');
      client.call('compare.close', {}).catch(() => {});
    },
    compare(base, candidate) {
      baseStep.value = '';
      candidateStep.value = '';
      setters.base(base.items, base.label);
      setters.candidate(candidate.items, candidate.label);
      return run();
    },
  };
}
