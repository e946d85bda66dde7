// Overview: everything somas_tool's overview.txt says, as figures with exact values on hover and
// the formulas of the reuse ratios, plus counts, conflicts and task mismatches. Figures carry
// data-metric / data-value hooks for automated checks.
import { el } from '../ui/dom.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { section, button, hex } from './common.js';

const RATIO_TITLES = {
  somas_tool_reuse_ratio: "somas_tool's reuse ratio",
  reuse_ratio: 'reuse ratio (MindSpore figures)',
  reuse_ratio_without_lifelong: 'reuse ratio without lifelong',
  solver_efficiency: 'solver efficiency',
};

export class Overview {
  constructor(app, parent) {
    this.app = app;
    const { section: s, body, tools } = section('overview', 'Overview', { help: "somas_tool's overview.txt, readable" });
    this.section = s;
    // In the document before any chart is made, so charts start at their real size.
    parent.append(s);
    const sm = app.summary;
    const info = app.info;
    const base = info.base_address;
    const addr = (off) => hex(base + off);

    const metric = (label, value, opts = {}) => {
      const v = el('div', { class: 'value', text: opts.text !== undefined ? opts.text : bytes(value) });
      const card = el('div', { class: `metric ${opts.cls || ''}` }, el('div', { class: 'label', text: label }), v);
      card.title = opts.title !== undefined ? opts.title : exactBytes(value);
      if (opts.metric) {
        card.dataset.metric = opts.metric;
        card.dataset.value = String(value);
      }
      if (opts.sub) card.append(el('div', { class: 'sub' }, ...[].concat(opts.sub)));
      return card;
    };
    const link = (text, fn, title) => button(text, fn, { class: 'link', title });

    const peak = sm.peak;
    const cards = [];
    if (peak) {
      cards.push(
        metric('Peak in-use (alive tensors)', peak.in_use_bytes, {
          metric: 'somas-peak-bytes',
          title: `${exactBytes(peak.in_use_bytes)} — the lower bound of any plan (Theoretical Optimal Size). With static memory: ${exactBytes(peak.in_use_with_static_bytes)}`,
          sub: `with static memory ${bytes(peak.in_use_with_static_bytes)}`,
        }),
        metric('Peak node', peak.node_index, {
          metric: 'somas-peak-node-index',
          text: `$${int(peak.node_index)}`,
          title: `execution index ${peak.node_index}; ${plural(peak.alive_tensors, 'tensor')} alive there`,
          sub: [link(peak.node_name || `index ${peak.node_index}`, () => app.select({ node: peak.node_index }), 'Select the peak node (p)')],
        }),
      );
    }
    cards.push(
      metric('Reused total (SOMAS block)', sm.reused_bytes, {
        metric: 'somas-reused-bytes',
        title: `${exactBytes(sm.reused_bytes)} — ${sm.reused_bytes_source === 'dump' ? "the dump's Total Memory Size after reused" : 'largest end offset (the dump has no total line)'}`,
        sub: sm.reused_bytes_source === 'dump' ? 'Total Memory Size after reused' : 'largest end offset',
      }),
      metric('Upper bound (no reuse)', sm.upper_bound_bytes, {
        metric: 'somas-upper-bound-bytes',
        title: `${exactBytes(sm.upper_bound_bytes)} — sum of aligned sizes of data tensors, union groups once (Max Total Tensor Memory Size). With static memory: ${exactBytes(sm.upper_bound_bytes + sm.static_bytes)}`,
        sub: `with static memory ${bytes(sm.upper_bound_bytes + sm.static_bytes)}`,
      }),
      metric('Lifelong (stacked on top)', sm.lifelong_bytes, {
        metric: 'somas-lifelong-bytes',
        title: `${exactBytes(sm.lifelong_bytes)} — non-contiguous LifeLongGraphAll tensors. GraphAll ${exactBytes(sm.lifelong.graph_all)}, GraphStart ${exactBytes(sm.lifelong.graph_start)}, GraphEnd ${exactBytes(sm.lifelong.graph_end)}`,
        sub: `GraphAll ${bytes(sm.lifelong.graph_all)} · Start ${bytes(sm.lifelong.graph_start)} · End ${bytes(sm.lifelong.graph_end)}`,
      }),
      metric('Static memory (parameters)', sm.static_bytes, { title: `${exactBytes(sm.static_bytes)} — Graph Total Input Static Memory Size: sum of parameter sizes` }),
    );
    const ma = sm.max_address_without_lifelong;
    if (ma) {
      cards.push(
        metric('Max address without lifelong', ma.end_bytes, {
          title: `end offset ${exactBytes(ma.end_bytes)}, address ${hex(ma.end_address)}`,
          sub: [
            `%${ma.tensor_id}T of `,
            link(ma.node_name || '(no node)', () => app.select({ node: ma.node_index, tensor: ma.tensor_id }), 'Select this tensor and its node (m selects the node)'),
            ma.output_index !== null ? ` output ${ma.output_index}` : '',
          ],
        }),
      );
    }
    const conflicts = sm.conflicts.length;
    cards.push(
      metric('Overwrite conflicts', conflicts, {
        metric: 'somas-conflicts',
        cls: conflicts ? 'bad' : sm.conflicts_checked ? 'good' : '',
        text: sm.conflicts_checked ? `${int(conflicts)}${sm.conflicts_truncated ? '+' : ''}` : 'not checked',
        title: sm.conflicts_checked
          ? 'pairs of data tensors whose memory and lifetimes overlap outside union groups (Ascend gap, unions and clean ops excluded)'
          : 'offsets are not solved in this dump (a stage before the solver): nothing to check',
        sub: conflicts ? [link('show the first (c)', () => app.stepConflict(1), 'Select the next conflict: c')] : sm.conflicts_checked ? 'no overlap in space and time' : '',
      }),
    );
    if (sm.task) {
      cards.push(
        metric('Task address mismatches', sm.task_mismatches.length, {
          metric: 'somas-task-mismatches',
          cls: sm.task_mismatches.length ? 'bad' : 'good',
          text: int(sm.task_mismatches.length),
          title: 'tensors whose task address (task_info) is not base + offset',
          sub: [
            `${int(sm.task.records)} task records, ${int(sm.task.unmatched_records)} unmatched`,
            sm.task_mismatches.length ? ' · ' : '',
            sm.task_mismatches.length
              ? link('list them', () => app.showList(`${plural(sm.task_mismatches.length, 'tensor')} whose task address is not base + offset`, sm.task_mismatches, 'mismatches'), 'in the query panel')
              : '',
          ],
        }),
      );
    }
    cards.push(
      metric('Data tensors', sm.tensors, { metric: 'somas-tensors', text: int(sm.tensors), title: `${sm.tensors} data tensors, ${sm.control_tensors} control tensors` , sub: `${int(sm.control_tensors)} control` }),
      metric('Nodes', sm.nodes, { metric: 'somas-nodes', text: int(sm.nodes), title: `${sm.nodes} nodes (execution indices 0–${info.max_index})`, sub: `${plural(sm.parameters, 'parameter')}` }),
      metric('Unions · contiguous lists', sm.union_groups, {
        text: `${int(sm.union_groups)} · ${int(sm.contiguous_lists)}`,
        title: `${sm.union_groups} union groups (members share memory by design), ${sm.contiguous_lists} original contiguous lists, ${sm.merged_blocks} merged blocks`,
        sub: `${int(sm.merged_blocks)} merged blocks`,
      }),
    );
    for (const r of sm.ratios) {
      const pct = r.value === null ? 'n/a' : `${(r.value * 100).toFixed(2)}%`;
      cards.push(
        metric(RATIO_TITLES[r.name] || r.name, r.value, {
          text: pct,
          title: `${r.name} = ${r.formula}${r.value === null ? ' (a denominator is 0)' : ` = ${r.value}`}`,
          sub: r.formula,
          cls: 'ratio',
        }),
      );
    }
    body.append(el('div', { class: 'metrics' }, ...cards));

    // Address ranges and the format.
    const facts = el('dl', { class: 'somas-facts' });
    const fact = (k, v, title) => facts.append(el('dt', { text: k }), el('dd', { text: v, title: title || v }));
    fact('Format', `${sm.format.family} ${sm.format.version}`);
    fact('File', sm.file);
    if (sm.task) fact('Task info', `${sm.task.file} (${sm.task.version})`);
    fact('Base address', info.base_source === 'none' ? 'none (offsets shown)' : `${hex(base)} (from ${info.base_source})`);
    if (sm.task && sm.task.address_min !== null) fact('Task tensor addresses', `${hex(sm.task.address_min)} – ${hex(sm.task.address_max)}`);
    if (info.somas_range) {
      const [lo, hi] = info.somas_range;
      fact('SOMAS tensor addresses', `${addr(lo)} – ${addr(hi)} (${bytes(hi - lo)})`, `${addr(lo)} – ${addr(hi)}, ${exactBytes(hi - lo)}`);
    }
    if (info.param_range) {
      const [lo, hi, sum] = info.param_range;
      fact('Parameters & value nodes', `${hex(lo)} – ${hex(hi)} (${bytes(sum)})`, `${hex(lo)} – ${hex(hi)}, ${exactBytes(sum)}`);
    }
    body.append(facts);

    const notes = [...sm.notes.map((n) => ['note', n]), ...sm.warnings.map((w) => ['warning', formatDiag(w)])];
    if (notes.length) {
      const list = el('ul', { class: 'somas-notes' });
      for (const [kind, text] of notes.slice(0, 200)) list.append(el('li', { class: kind, text: `${kind}: ${text}` }));
      if (notes.length > 200) list.append(el('li', { class: 'muted', text: `… ${int(notes.length - 200)} more in MemoryAnalyze.log (Export)` }));
      body.append(list);
    }

    // somas_tool's own text, for users who know it.
    const pre = el('pre', { class: 'somas-overview-text', data: { testid: 'somas-overview-text' } });
    const details = el('details', {}, el('summary', { text: "overview.txt as somas_tool writes it" }), pre);
    details.addEventListener('toggle', async () => {
      if (!details.open || pre.textContent) return;
      try {
        const bytesOut = await app.call('exportFile', { request: {}, path: 'StatisticInfo/overview.txt' });
        pre.textContent = new TextDecoder().decode(bytesOut);
      } catch (err) {
        pre.textContent = err.message;
      }
    });
    body.append(details);
    tools.append(el('span', { class: 'muted', text: `${plural(sm.nodes, 'node')} · ${plural(sm.tensors, 'tensor')}` }));
  }
}

function formatDiag(d) {
  let s = d.file;
  if (d.line) s += `:${d.line}`;
  s += `: ${d.field ? `${d.field}: ` : ''}${d.message}`;
  if (d.count > 1) s += ` (×${d.count})`;
  return s;
}
