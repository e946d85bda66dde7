// Queries: somas_tool's -cn / -ct / -ca / -car on the page. The search box takes a node name or
// index, a tensor id (%12T or 12), an address (0x…) or a range (0x…-0x…); the answer is the JSON
// `memlens somas --json` prints for --node / --tensor / --address / --address-range, shown here.
// The panel also follows the selection made in the other views (the last thing selected).
import { el } from '../ui/dom.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { section, button, hex, stateLine } from './common.js';
import { Grid, COMPACT } from './grid.js';

const ROLE = { input: 'Input', output: 'Output', workspace: 'Workspace' };
// Stage dumps before the solver give every tensor offset 0: overlaps there mean nothing.
const UNPLACED = () => el('p', { class: 'warn-note', text: 'Offsets are not solved in this dump (a stage before the solver): every tensor sits at offset 0, so the overlaps and conflicts below mean nothing. Open the *_somas_tensor_offset_* dump.' });

export class QueryView {
  constructor(app, parent) {
    this.app = app;
    const { section: s, body } = section('query', 'Query', {
      help: 'type in the search box above (/): a node name or index ($12), a tensor id (%12T or 12), an address (0x…) or a range (0x…-0x…)',
    });
    this.section = s;
    // In the document before any chart is made, so charts start at their real size.
    parent.append(s);
    this.note = el('div', { class: 'somas-query-note' });
    this.result = el('div', { class: 'somas-query-result', data: { testid: 'somas-query-result', kind: 'none' } });
    this.gridBox = el('div', { class: 'somas-query-grid' });
    body.append(this.note, this.result, this.gridBox);
    this.grid = new Grid(this.gridBox, {
      app,
      view: 'query',
      show: COMPACT,
      table: 'tensors',
      label: 'tensors of the query answer',
      isSelected: (row) => this.sel.tensor !== null && row.TensorId === this.sel.tensor,
      onRowClick: (row) => app.select({ tensor: row.TensorId }),
      empty: 'no tensor',
    });
    this.sel = app.store.get();
    this.seq = 0;
    // Searches asked so far: only the last one's answer may select.
    this.asked = 0;
    // Searches answered so far: what the result shows says which search it follows (data-searches).
    this.searches = 0;
    this.hint();
    app.store.on((st, changed) => {
      this.sel = st;
      // Follow the last thing selected: a range, a tensor, or a node.
      if (changed.has('range') && st.range) this.show({ kind: st.range.single ? 'address' : 'range', ...st.range });
      else if (changed.has('tensor') && st.tensor !== null) this.show({ kind: 'tensor', id: st.tensor });
      else if (changed.has('node') && st.node !== null) this.show({ kind: 'node', index: st.node });
      else this.grid.reveal(st.tensor);
    });
  }

  hint() {
    const sm = this.app.summary;
    const examples = [];
    if (sm.peak && sm.peak.node_name) examples.push(sm.peak.node_name);
    if (sm.tensors) examples.push('%0T');
    if (sm.base_address) examples.push(`${hex(sm.base_address)}-${hex(sm.base_address + 0x1000)}`);
    this.result.replaceChildren(
      stateLine('empty', 'Type a node name or index, a tensor id, an address or a range in the search box (/), or select something in a view.'),
      el('div', { class: 'somas-examples' }, ...examples.map((t) => button(t, () => this.app.search(t), { class: 'link' }))),
    );
  }

  /**
   * Runs the search box text: resolves it in the worker and selects the first thing it names —
   * unless the user selected something meanwhile (the answer then only says what it names, with
   * links to select it: see `late`), or searched again (the newer search answers).
   */
  async run(text) {
    this.note.replaceChildren();
    this.app.focusView('query');
    const mine = ++this.asked;
    const current = this.app.ask();
    const res = await this.app.call('search', { text });
    this.searches += 1;
    if (mine !== this.asked) return;
    if (!current()) return this.late(text, res);
    if (res.error) {
      this.result.dataset.kind = 'error';
      this.result.dataset.searches = String(this.searches);
      this.result.replaceChildren(el('div', { class: 'error-state', data: { testid: 'somas-query-error' }, text: res.error }));
      this.gridBox.hidden = true;
      return;
    }
    const [first, ...others] = res.targets;
    if (others.length) {
      this.note.append(
        el('span', { class: 'muted', text: `${text.trim()} also names: ` }),
        ...others.map((t) => button(describe(t), () => this.apply(t), { class: 'link' })),
      );
    }
    this.apply(first);
  }

  /**
   * The answer of a search that came after the user selected something else: what the views show
   * stays the user's pick (every view follows one selection, this panel too), and the note says
   * what the search names, each a link that selects it, or why it failed.
   */
  late(text, res) {
    const what = `“${text.trim()}”`;
    const line = el('p', { class: 'somas-query-late', data: { testid: 'somas-query-late', searches: String(this.searches) } });
    if (res.error) line.append(el('span', { class: 'muted', text: `${what}: ${res.error}` }));
    else {
      line.append(
        el('span', { class: 'muted', text: `${what} names ` }),
        ...res.targets.flatMap((t, i) => [...(i ? [', '] : []), button(describe(t), () => this.apply(t), { class: 'link', title: 'select it' })]),
        el('span', { class: 'muted', text: ': not selected, since you selected something else before the answer came.' }),
      );
    }
    this.note.replaceChildren(line);
  }

  apply(t) {
    let changed = false;
    if (t.kind === 'node') changed = this.app.select({ node: t.index, tensor: null, range: null, pair: null });
    else if (t.kind === 'tensor') changed = this.app.select({ tensor: t.id, range: null, pair: null });
    else if (t.kind === 'address') changed = this.app.select({ range: { start: t.address, end: hex(BigInt(t.address) + 1n), single: true }, tensor: null, pair: null });
    else if (t.kind === 'range') changed = this.app.select({ range: { start: t.start, end: t.end }, tensor: null, pair: null });
    // Selecting what is already selected changes nothing, so the store says nothing: show it.
    if (!changed) this.show(t.kind === 'address' ? { kind: 'address', start: t.address } : t);
  }

  async show(q) {
    const seq = ++this.seq;
    // The searches answered when this answer was asked for: once shown, the result follows them
    // (for the tests: a result shown before a search's answer does not speak for that search).
    const searches = this.searches;
    try {
      let body;
      if (q.kind === 'node') body = await this.node(q.index);
      else if (q.kind === 'tensor') body = await this.tensor(q.id);
      else body = await this.addresses(q);
      if (seq !== this.seq) return;
      if (!this.app.info.placed && q.kind !== 'node') body.nodes.unshift(UNPLACED());
      else if (!this.app.info.placed && body.data.alive) body.nodes.splice(1, 0, UNPLACED());
      this.result.replaceChildren(...body.nodes);
      const data = { ...body.data, searches: String(searches) };
      Object.assign(this.result.dataset, data);
      for (const k of Object.keys(this.result.dataset)) if (!(k in data) && k !== 'testid') delete this.result.dataset[k];
      this.gridBox.hidden = !body.grid;
      if (body.grid) {
        await this.grid.query({ rows: { tensors: body.grid } });
        this.grid.reveal(this.sel.tensor);
      }
    } catch (err) {
      if (seq !== this.seq) return;
      this.result.dataset.kind = 'error';
      this.result.dataset.searches = String(searches);
      this.result.replaceChildren(el('div', { class: 'error-state', text: err.message }));
      this.gridBox.hidden = true;
    }
  }

  /** Shows a list of tensors under a title (e.g. the task-address mismatches). */
  async showList(title, ids, testid) {
    const seq = ++this.seq;
    this.app.focusView('query');
    this.result.replaceChildren(el('h3', { text: title }));
    for (const k of Object.keys(this.result.dataset)) if (k !== 'testid') delete this.result.dataset[k];
    Object.assign(this.result.dataset, { kind: testid || 'list', tensors: ids.join(',') });
    this.gridBox.hidden = false;
    await this.grid.query({ rows: { tensors: ids } });
    if (seq === this.seq) this.grid.reveal(this.sel.tensor);
  }

  async node(index) {
    const app = this.app;
    const at = await app.call('nodeAt', { index });
    if (at.name === null) {
      // Formats without a node list (cache JSON) or indices no node has: the frame still shows.
      const why = app.summary.nodes ? `No node has execution index ${index} in this dump.` : 'This dump has no node list (SOMAS cache JSON): node queries need the *_somas_tensor_offset_* dump; tensor and address queries work.';
      return { nodes: [stateLine('empty', why)], data: { kind: 'node', node: String(index), alive: '' }, grid: null };
    }
    const q = await app.call('nodeQuery', { index });
    const nodes = [
      el('h3', {}, el('span', { class: 'somas-node-name', text: q.node_name }), el('span', { class: 'muted', text: ` $${int(q.node_index)}` })),
      el('p', { class: 'muted', text: `${plural(q.alive_tensors.length, 'tensor')} alive when it runs (its memory frame, left). Inputs, outputs and workspaces:` }),
    ];
    const rows = q.io.map((io) => {
      const conflicts = io.overlapping_tensors.filter((o) => o.conflict);
      const ref = io.kind === 'tensor' ? `%${io.id}T` : `%${io.id}P`;
      const idCell = io.kind === 'tensor' ? button(ref, () => app.select({ tensor: io.id }), { class: 'link', title: 'select this tensor' }) : el('span', { text: ref });
      const related = io.related_nodes.slice(0, 4).join(', ') + (io.related_nodes.length > 4 ? ` +${io.related_nodes.length - 4}` : '');
      return el(
        'tr',
        {
          data: {
            testid: 'query-io',
            role: io.role,
            position: io.position,
            kind: io.kind,
            id: io.id,
            overlapping: io.overlapping_tensors.map((o) => o.id).join(','),
            conflicts: conflicts.map((o) => o.id).join(','),
          },
        },
        el('td', { text: `${ROLE[io.role] || io.role}${io.position}` }),
        el('td', {}, idCell),
        el('td', { class: 'somas-related', text: related, title: io.related_nodes.join('\n') }),
        el('td', { class: `num ${conflicts.length ? 'bad' : ''}`, text: io.kind === 'tensor' ? `${int(io.overlapping_tensors.length)} overlapping${conflicts.length ? `, ${conflicts.length} in conflict` : ''}` : '', title: io.overlapping_tensors.map((o) => `%${o.id}T${o.conflict ? ' CONFLICT' : o.lifetime_overlap ? ' (lifetimes overlap, union)' : ''}`).join('\n') }),
      );
    });
    nodes.push(
      el('table', { class: 'somas-io' }, el('thead', {}, el('tr', {}, ...['Role', 'Tensor', 'Related nodes', 'Same memory'].map((h) => el('th', { text: h })))), el('tbody', {}, ...rows)),
    );
    return { nodes, data: { kind: 'node', node: String(q.node_index), alive: q.alive_tensors.join(',') }, grid: null };
  }

  async tensor(id) {
    const app = this.app;
    const [t, q, lead] = await Promise.all([app.call('tensor', { id }), app.call('tensorQuery', { id }), app.call('tensorLead', { id })]);
    const base = app.info.base_source === 'none' ? 0 : app.info.base_address;
    const facts = el('dl', { class: 'somas-facts' });
    const fact = (k, v, title) => facts.append(el('dt', { text: k }), el('dd', { title: title || '' }, ...[].concat(v)));
    fact('Source node', [
      t.node_index !== null ? button(t.node_name, () => app.select({ node: t.node_index }), { class: 'link', title: 'select this node (n)' }) : el('span', { text: t.node_name }),
      t.node_index !== null ? ` $${int(t.node_index)}${t.output_index !== null ? `, output ${t.output_index}` : ''}` : '',
    ]);
    fact('Type', `${t.kind} · ${t.lifelong}${t.union_group ? ' · union group' : ''}${t.contiguous ? ' · contiguous list' : ''}`);
    fact('Size', `${bytes(t.aligned)} aligned, ${bytes(t.size)} original`, `${exactBytes(t.aligned)} aligned, ${exactBytes(t.size)} original`);
    fact(base ? 'Address' : 'Offset', `${hex(base + t.range[0])} – ${hex(base + t.range[1])}`, `offset ${t.offset}`);
    fact('Alive', `$${int(t.alive[0])} – $${int(t.alive[1])}`, `life_start ${t.life[0]}, life_end ${t.life[1]} as printed; widened for lifelong tensors (the layout marks it)`);
    if (t.task) fact('Task address', `${hex(t.task[0])} (${bytes(t.task[1])})${t.task_mismatch ? ' — mismatch: not base + offset' : ''}`);
    const users = el('ul', { class: 'somas-users' });
    for (const n of q.nodes) {
      users.append(el('li', { data: { testid: 'query-node', role: n.role } }, el('span', { class: 'muted', text: `${ROLE[n.role] || n.role}: ` }), button(n.node, () => app.search(n.node), { class: 'link', title: 'query this node' })));
    }
    // The answer first: who shares this memory while the tensor is alive (conflicts, then union
    // partners by design); the tensors that reuse it at other times are the sortable table below.
    const conflicts = lead.partners.filter((p) => p.conflict).length;
    const partnerHead = lead.partners.length
      ? `${conflicts ? `In conflict with ${plural(conflicts, 'tensor')}` : 'No conflict'}${lead.partners.length > conflicts ? `; ${plural(lead.partners.length - conflicts, 'union-group partner')} by design` : ''}`
      : 'No tensor shares its memory while it is alive';
    const nodes = [
      el('h3', { text: `Tensor %${q.tensor_id}T` }),
      el('h4', { class: conflicts ? 'bad' : '', data: { testid: 'query-lead' }, text: partnerHead }),
    ];
    if (lead.partners.length) {
      const rows = lead.partners.map((p) =>
        el(
          'tr',
          { class: p.conflict ? 'bad' : '', data: { testid: 'query-partner', id: p.id, conflict: p.conflict } },
          el('td', {}, button(`%${p.id}T`, () => app.select({ tensor: p.id }), { class: 'link', title: 'select this tensor' })),
          el('td', { text: p.conflict ? 'conflict' : 'union group' }),
          el('td', { class: 'somas-related', text: p.node_name, title: p.node_name }),
          el('td', { class: 'num', text: `${hex(base + p.shared[0])} – ${hex(base + p.shared[1])} (${bytes(p.shared[1] - p.shared[0])})` }),
          el('td', { class: 'num', text: `$${int(p.together[0])} – $${int(p.together[1])}` }),
        ),
      );
      nodes.push(el('table', { class: 'somas-io' }, el('thead', {}, el('tr', {}, ...['Tensor', 'Why', 'Source node', 'Shared memory', 'Both alive'].map((h) => el('th', { text: h })))), el('tbody', {}, ...rows)));
    }
    nodes.push(facts, el('h4', { text: `Used by ${plural(q.nodes.length, 'node')}` }), users);
    nodes.push(el('h4', { data: { testid: 'query-reuse' }, text: lead.reuse ? `${plural(lead.reuse, 'tensor')} ${lead.reuse === 1 ? 'reuses' : 'reuse'} its memory at other times: every tensor sharing its memory is in the table below (click a header to sort)` : 'No other tensor reuses its memory' }));
    return {
      nodes,
      data: { kind: 'tensor', tensor: String(q.tensor_id), overlapping: q.overlapping_tensors.map((o) => o.id).join(','), partners: lead.partners.map((p) => p.id).join(',') },
      grid: q.overlapping_tensors.length ? q.overlapping_tensors.map((o) => o.id) : null,
    };
  }

  async addresses(q) {
    const app = this.app;
    const single = q.kind === 'address';
    const ans = single ? await app.call('addressQuery', { address: q.start }) : await app.call('rangeQuery', { start: q.start, end: q.end });
    const what = single ? `address ${q.start}` : `range ${q.start} – ${q.end} (${bytes(Number(BigInt(q.end) - BigInt(q.start)))})`;
    const base = app.info.base_source === 'none' ? null : app.info.base_address;
    const nodes = [
      el('h3', { text: `${plural(ans.tensors.length, 'tensor')} ${ans.tensors.length === 1 ? 'uses' : 'use'} ${what}` }),
      el('p', {
        class: 'muted',
        text:
          base === null
            ? 'This dump has no base address (no task-info given, no address column): addresses are offsets from the SOMAS block.'
            : `SOMAS base ${hex(base)} (from ${app.info.base_source}). Their lifetimes tell whether reuse was right: the layout marks the range.`,
      }),
    ];
    return {
      nodes,
      data: { kind: single ? 'address' : 'range', tensors: ans.tensors.join(',') },
      grid: ans.tensors,
    };
  }
}

function describe(t) {
  if (t.kind === 'node') return `node $${t.index} ${t.name}`;
  if (t.kind === 'tensor') return `tensor %${t.id}T`;
  if (t.kind === 'address') return `address ${t.address}`;
  return `range ${t.start}-${t.end}`;
}
