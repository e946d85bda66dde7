// The overview (per-device figures as the CLI prints them), the selected allocation or block with
// its whole stack (user frames emphasised, the frame it is grouped by marked), and the export
// (summary.json = `memlens snapshot --json`, and the CSV files the CLI's --out writes).
import { el } from '../ui/dom.js';
import { download } from '../ui/download.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { section, button, stateLine } from './common.js';

const metric = (name, label, value, title) =>
  el('div', { class: 'metric', 'data-metric': name, 'data-value': String(value) },
    el('div', { class: 'label', text: label }), el('div', { class: 'value', text: typeof value === 'number' ? bytesOrInt(name, value) : value, title: title || '' }));
const bytesOrInt = (name, v) => (/-bytes$|-free-block$/.test(name) ? bytes(v) : int(v));

export function overviewView({ store, info, place }) {
  const { section: node, body } = section('overview', 'Overview', 'Figures per device, as `memlens snapshot --json` reports them.');
  place(node);
  function render() {
    const st = store.get();
    const d = info.summary.devices[String(st.device)];
    const s = info.summary;
    const metrics = el('div', { class: 'metrics' },
      metric('snapshot-reserved-bytes', 'Reserved', d.reserved_bytes, exactBytes(d.reserved_bytes)),
      metric('snapshot-allocated-bytes', 'Allocated at the snapshot', d.allocated_bytes, exactBytes(d.allocated_bytes)),
      metric('snapshot-peak-bytes', 'Peak allocated', d.peak_allocated_bytes, exactBytes(d.peak_allocated_bytes)),
      metric('snapshot-segments', 'Segments', d.segments),
      metric('snapshot-blocks', 'Blocks', d.blocks),
      metric('snapshot-entries', 'Trace entries', d.trace_entries),
      metric('snapshot-ooms', 'OOMs', d.oom_events),
      metric('snapshot-largest-free-block', 'Largest free block', d.largest_free_block, exactBytes(d.largest_free_block)));
    const peakAt = d.peak_trace_index === null ? 'before the first trace entry' : `after entry ${int(d.peak_trace_index)}${d.peak_time_us !== null ? ` (time_us ${d.peak_time_us})` : ''}`;
    const facts = el('dl', { class: 'facts' },
      el('dt', { text: 'file' }), el('dd', { text: `${s.file} — ${bytes(s.bytes)}, ${s.protocol ? `pickle protocol ${s.protocol}` : 'JSON'}, ${s.layout === 'dict' ? `keys ${s.keys.join(', ')}` : 'a bare list of segments'}` }),
      el('dt', { text: 'peak' }), el('dd', { text: peakAt }),
      el('dt', { text: 'actions' }), el('dd', { text: Object.entries(d.actions).filter(([, n]) => n > 0).map(([a, n]) => `${a} ${int(n)}`).join(', ') || 'none' }),
      el('dt', { text: 'stacks' }), el('dd', { text: `${int(s.distinct_frames)} distinct frames in ${int(s.distinct_stacks)} distinct stacks` }));
    const ooms = d.ooms.length
      ? el('ul', { class: 'snap-ooms', 'data-testid': 'snapshot-ooms' }, ...d.ooms.map((o) => el('li', { text: `OOM at entry ${int(o.trace_index)}: ${bytes(o.size)} requested, ${o.device_free === null ? 'free memory unknown' : `${bytes(o.device_free)} free on the device`}` })))
      : null;
    const warnings = s.warnings.length
      ? el('details', { class: 'warnings', 'data-testid': 'snapshot-warnings' }, el('summary', { text: `${plural(s.warnings.length, 'warning')} while reading` }),
        el('ul', {}, ...s.warnings.map((w) => el('li', { text: `${w.byte !== undefined ? `byte ${w.byte}: ` : ''}${w.message}${w.count > 1 ? ` (${w.count} times)` : ''}` }))))
      : null;
    body.replaceChildren(metrics, facts, ooms || '', warnings || '');
  }
  render();
  return { node, update: (st, changed) => changed.includes('device') && render(), destroy() {} };
}

export function detailView({ client, store, onError, place }) {
  const { section: node, body } = section('detail', 'Selected allocation', 'Click an allocation in the timeline or the table, or a block in the allocator state.');
  place(node);
  let token = 0;
  async function render(st) {
    const mine = ++token;
    if (st.element === null && st.block === null) {
      body.replaceChildren(stateLine('empty', 'Nothing selected: click an allocation in the timeline or the allocations table, or a block in the allocator state.'));
      return;
    }
    body.replaceChildren(stateLine('loading', 'Loading…'));
    let a;
    try {
      a = st.element !== null
        ? await client.call('snapshot.allocation', { device: st.device, element: st.element })
        : await blockInfo(st);
    } catch (err) {
      if (mine === token) body.replaceChildren(stateLine('error', `This selection cannot be shown: ${err.message}`));
      return;
    }
    if (mine !== token) return;
    if (!a) {
      body.replaceChildren(stateLine('empty', 'The selected block is not on this device.'));
      return;
    }
    const facts = el('dl', { class: 'facts' });
    const fact = (k, v, title) => facts.append(el('dt', { text: k }), el('dd', { text: v, title: title || '' }));
    fact('size', `${bytes(a.size)} (${exactBytes(a.size)})`);
    fact('address', a.address);
    if (a.kind === 'block') {
      fact('state', a.state);
      fact('requested', exactBytes(a.requested_size));
    } else {
      fact('allocated', a.alloc_index === null ? 'before the trace began' : `entry ${int(a.alloc_index)}${a.alloc_time_us !== null ? ` (time_us ${a.alloc_time_us})` : ''}`);
      fact('freed', a.free_index === null ? 'still allocated at the snapshot' : `entry ${int(a.free_index)}${a.free_time_us !== null ? ` (time_us ${a.free_time_us})` : ''}`);
      if (a.origin === 'before_trace_freed_in_it') fact('note', 'its alloc came before the trace began: the stack shown is the one of its free');
    }
    fact('grouped by', a.group_label);
    const list = el('ol', { class: 'frames' });
    for (const f of a.stack) {
      list.append(el('li', { class: `frame ${f.user ? 'user' : 'lib'}${f.top ? ' top-frame' : ''}`, 'data-testid': 'snapshot-frame', 'data-user': f.user ? '1' : '0' },
        el('span', { class: 'frame-text', text: `${f.filename}:${f.line} ${f.name}` }), f.top ? el('span', { class: 'badge-top', text: 'top user frame' }) : null));
    }
    body.replaceChildren(facts, a.stack.length
      ? el('div', {}, el('p', { class: 'muted small-print', text: `${plural(a.stack.length, 'frame')}, innermost first; your code in bold.` }), list)
      : stateLine('empty', 'No stack was recorded for this allocation (allocated before recording began).'));
    node.dataset.selected = a.address;
  }
  async function blockInfo(st) {
    return client.call('snapshot.blockInfo', { device: st.device, block: st.block });
  }
  render(store.get()).catch(onError);
  return { node, update: (st, changed) => (changed.includes('element') || changed.includes('block') || changed.includes('device')) && render(st).catch(onError), destroy() {} };
}

const FILES = ['summary.json', 'segments.csv', 'blocks.csv', 'allocations.csv', 'live_at_peak_by_frame.csv', 'live_at_snapshot_by_frame.csv', 'ooms.csv'];

export function exportView({ client, onError, place }) {
  const { section: node, body } = section('export', 'Export', 'The files `memlens snapshot FILE --out DIR` writes, byte for byte; summary.json is what --json prints.');
  place(node);
  const row = el('div', { class: 'snap-export', 'data-testid': 'snapshot-export' });
  for (const name of FILES) {
    row.append(button(name, async () => {
      try {
        const bytesOut = await client.call('snapshot.export', { name });
        download(name, bytesOut, name.endsWith('.json') ? 'application/json' : 'text/csv;charset=utf-8');
      } catch (err) {
        onError(err);
      }
    }, { 'data-file': name }));
  }
  body.append(row);
  return { node, update() {}, destroy() {} };
}
