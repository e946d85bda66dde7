// View 5, the call stack of the selected allocation: every frame (innermost first, as torch_npu
// writes them), user frames emphasised and the top user frame marked, and how the stack was
// found, stated plainly.
import { el } from '../ui/dom.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { ms, duration, timeTitle, section, allocatorText, exportNames, STACK_SOURCE_TEXT } from './common.js';

export function callStack({ client, store, ranks, report, rendered }) {
  const copy = el('button', { type: 'button', class: 'small', text: 'Copy stack', title: 'Copy the frames as text', disabled: true });
  const { node, body } = section(5, 'stack', 'Call stack', {
    tools: [copy],
    help: 'Select an allocation in the table or the timeline to see where in the code it was made.',
  });
  const box = el('div', { class: 'stack-view', 'data-testid': 'ascend-stack' });
  body.append(box);
  let frames = [];
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(frames.join('\n'));
      copy.textContent = 'Copied';
    } catch {
      copy.textContent = 'Copy failed';
    }
    setTimeout(() => (copy.textContent = 'Copy stack'), 1500);
  });

  function empty(text) {
    frames = [];
    copy.disabled = true;
    box.dataset.row = '';
    box.dataset.stackSource = '';
    box.replaceChildren(el('div', { class: 'empty-state', text }));
    rendered('stack');
  }

  const op = (o) =>
    o ? `${o.name} on thread ${o.tid}, ${ms(o.start)} for ${duration(o.dur)}${o.seq >= 0 ? `, autograd sequence number ${o.seq}` : ''}` : null;

  async function show(s) {
    if (s.row === null) return empty('No allocation selected.');
    const rank = s.rank;
    let r;
    try {
      r = await client.call('ascend.row', { rank, row: s.row });
    } catch (err) {
      return empty(`This allocation cannot be shown: ${err.message}`);
    }
    if (store.get().row !== s.row || store.get().rank !== rank) return;
    const origin = ranks[rank].origin_ns;
    frames = r.frames.map((f) => f.text);
    copy.disabled = frames.length === 0;
    box.dataset.row = String(r.row);
    box.dataset.stackSource = r.stack_source;
    box.dataset.frames = String(r.frames.length);
    box.dataset.line = String(r.line);
    box.dataset.run = r.run_dir || '';
    const facts = el('dl', { class: 'facts' });
    const fact = (k, v, title) => facts.append(el('dt', { text: k }), el('dd', { text: v, title }));
    fact('name', r.name || '(no name)');
    fact('size', `${bytes(r.size)}${r.negative ? ' (a release: negative size in the file)' : ''}`, exactBytes(r.size));
    fact('allocated at', ms(r.alloc), timeTitle(origin, r.alloc));
    fact('released at', r.release === null ? 'not released in the capture' : ms(r.release), r.release === null ? '' : timeTitle(origin, r.release));
    if (r.duration !== null) fact('held for', duration(r.duration), `${int(r.duration)} ns`);
    fact('source', r.source === 'GE' ? 'GE (a cann:: row: CANN memory, no Python stack)' : allocatorText(report && report.ranks[rank]));
    if (r.step !== null) fact('step', String(r.step));
    box.dataset.runSource = r.run_source;
    fact('file', `${r.run_dir || ''} — ${exportNames(report && report.ranks[rank], r.run_source).row(r.line)}`);
    const sourceText = STACK_SOURCE_TEXT[r.stack_source] || r.stack_source;
    const how = el('div', { class: `stack-source ${r.stack_source}`, 'data-testid': 'stack-source' },
      el('strong', { text: 'Stack source: ' }), sourceText);
    const ops = el('ul', { class: 'ops' });
    const made = op(r.op);
    if (made) ops.append(el('li', { text: `allocated inside ${made}` }));
    if (r.stack_op && r.stack_source !== 'direct') {
      const from = op(r.stack_op);
      if (from) ops.append(el('li', { text: `${r.stack_source === 'via_forward' ? 'stack of the forward op' : 'stack taken from'} ${from}` }));
    }
    const list = el('ol', { class: 'frames' });
    for (const f of r.frames) {
      list.append(el('li', {
        class: `frame ${f.user ? 'user' : 'lib'}${f.top ? ' top-frame' : ''}`,
        'data-testid': 'stack-frame',
        'data-user': f.user ? '1' : '0',
        title: f.user ? (f.top ? 'top user frame: the first frame in your code' : 'your code') : 'library code (site-packages, torch, the standard library)',
      }, el('span', { class: 'frame-text', text: f.text }), f.top ? el('span', { class: 'badge-top', text: 'top user frame' }) : null));
    }
    const kids = [facts, how];
    if (ops.children.length) kids.push(ops);
    if (r.frames.length) kids.push(el('p', { class: 'muted small-print', text: `${plural(r.frames.length, 'frame')}, innermost first; user frames in bold.` }), list);
    else kids.push(el('div', { class: 'empty-state', text: r.source === 'GE' ? 'cann:: rows have no Python call stack.' : 'No call stack was found for this allocation.' }));
    box.replaceChildren(...kids);
    rendered('stack');
  }

  function update(s, changed) {
    if (changed.has('row') || changed.has('rank')) show(s);
  }
  show(store.get());
  return { node, update, focus: () => node.focus() };
}
