// Views 6 and 7: who holds memory at the peak (or at any clicked time), and what was never
// released in the window — allocations grouped by their top user frame (the source line in the
// user's code), as sorted bars with bytes and counts. Without call stacks the core groups by op
// name (or by size class when names are missing too), and the views offer size classes beside op
// names. Clicking a group filters the table to its allocations.
import { el } from '../ui/dom.js';
import { bytes, exactBytes, int, plural } from '../format.js';
import { ms, timeTitle, colors, section, rankLabel, shortFrame, exportNames } from './common.js';

const SHOWN = 15;

/** Renders groups as DOM bars (the largest `SHOWN`, or all when `all`); returns the rows. */
function bars(box, groups, { testid, selectedIndex, onPick, color, all, onShowAll }) {
  const maxBytes = Math.max(1, ...groups.map((g) => g.bytes));
  const total = groups.reduce((a, g) => a + g.bytes, 0);
  const shown = all ? groups.length : Math.max(SHOWN, selectedIndex + 1);
  box.dataset.groups = String(groups.length);
  const rows = groups.slice(0, shown).map((g, i) => {
    const pickable = g.count > 0;
    const bar = el('span', { class: 'group-bar' });
    bar.style.width = `${(100 * g.bytes) / maxBytes}%`;
    if (color) bar.style.background = color;
    const row = el('div', {
      class: `group-row${pickable ? '' : ' unpickable'}${i === selectedIndex ? ' selected' : ''}`,
      role: 'button',
      tabindex: '0',
      'data-testid': testid,
      'data-index': String(i),
      'data-bytes': String(g.bytes),
      'data-count': String(g.count),
      'aria-disabled': pickable ? 'false' : 'true',
      title: pickable
        ? `${g.frame}\n${exactBytes(g.bytes)} in ${plural(g.count, 'allocation')} — ${((100 * g.bytes) / Math.max(1, total)).toFixed(1)} %\nclick: show them in the table`
        : `${g.frame}\n${exactBytes(g.bytes)} counted by the allocator with no operator_memory row (allocated before the capture: weights, optimizer state…)`,
      on: {
        click: () => pickable && onPick(i, g),
        keydown: (ev) => {
          if (ev.key === 'Enter' || ev.key === ' ') {
            ev.preventDefault();
            if (pickable) onPick(i, g);
          } else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
            ev.preventDefault();
            const next = row[ev.key === 'ArrowDown' ? 'nextElementSibling' : 'previousElementSibling'];
            if (next && next.classList.contains('group-row')) next.focus();
          }
        },
      },
    },
    el('span', { class: 'group-track' }, bar),
    el('span', { class: 'group-frame', text: shortFrame(g.frame), 'data-frame': g.frame }),
    el('span', { class: 'num group-bytes', text: bytes(g.bytes) }),
    el('span', { class: 'num group-count', text: g.count ? `${int(g.count)}×` : '–' }));
    return row;
  });
  const kids = [...rows];
  if (groups.length > shown) {
    kids.push(el('div', { class: 'muted more' },
      `${plural(groups.length - shown, 'smaller group')} not shown `,
      el('button', { type: 'button', class: 'small', text: 'show all', 'data-testid': 'show-all-groups', on: { click: onShowAll } })));
  }
  box.replaceChildren(...kids);
  return rows;
}

/** The groups drawn on a canvas, for the PNG export. */
function groupsCanvas(title, groups, color) {
  const c = colors();
  const shown = groups.slice(0, SHOWN);
  const dpr = 2;
  const W = 900;
  const rowH = 22;
  const H = 40 + shown.length * rowH + 10;
  const canvas = document.createElement('canvas');
  canvas.width = W * dpr;
  canvas.height = H * dpr;
  const g = canvas.getContext('2d');
  g.scale(dpr, dpr);
  g.fillStyle = c.panel;
  g.fillRect(0, 0, W, H);
  g.fillStyle = c.text;
  g.font = '600 14px system-ui, sans-serif';
  g.textBaseline = 'middle';
  g.fillText(title, 10, 18);
  const maxBytes = Math.max(1, ...shown.map((x) => x.bytes));
  g.font = '12px system-ui, sans-serif';
  shown.forEach((x, i) => {
    const y = 40 + i * rowH;
    g.fillStyle = color;
    g.globalAlpha = 0.35;
    g.fillRect(10, y + 2, ((W - 200) * x.bytes) / maxBytes, rowH - 4);
    g.globalAlpha = 1;
    g.fillStyle = c.text;
    g.textAlign = 'left';
    let label = x.frame;
    while (label.length > 4 && g.measureText(label).width > W - 220) label = `${label.slice(0, -4)}…`;
    g.fillText(label, 14, y + rowH / 2);
    g.textAlign = 'right';
    g.fillText(`${bytes(x.bytes)}  ${x.count ? `${int(x.count)}×` : '–'}`, W - 10, y + rowH / 2);
  });
  return canvas;
}

function resolvePending(store, kind, groups, extra) {
  const s = store.get();
  if (s.group && s.group.pending && s.group.kind === kind) {
    // A group wanted by its frame (a link from the Compare mode) is found by it.
    const index = s.group.wantedFrame !== undefined ? groups.findIndex((x) => x.frame === s.group.wantedFrame) : s.group.index;
    const g = groups[index];
    store.set({ group: g && g.count > 0 ? { kind, index, frame: g.frame, size: g.size_range || null, ...extra } : null });
  }
}

/** How the groups of a rank are formed now: the core's choice, or size classes when picked. */
function groupingOf(summary, s) {
  return summary && summary.group_by === 'op_name' && s.groupBy === 'size_class' ? 'size_class' : summary ? summary.group_by : 'frame';
}

/** The `by` of a group request: only a choice the user made is sent. */
function byParam(summary, s) {
  return groupingOf(summary, s) === 'size_class' && summary.group_by !== 'size_class' ? { by: 'size_class' } : {};
}

/** What the groups of a rank are, in the words of a help line. */
function groupsInWords(summary, s) {
  const by = groupingOf(summary, s);
  if (by === 'size_class') return 'grouped by size class (power-of-two ranges of allocation sizes)';
  if (by === 'op_name') return 'grouped by the name of the operator that made them';
  return 'grouped by the first frame in your code';
}

/**
 * The names of the export a rank's stacks and live set come from: a rank with any database run in
 * msprof's layout (MindSpore's db) is spoken of as that db's, which holds no stacks and no
 * framework allocator records; the text export of the same run holds the stacks.
 */
function rankExport(summary) {
  return exportNames(summary, summary && summary.db_layout ? 'db' : summary && summary.source);
}

/**
 * Why the groups are not call-stack frames, when they are not: the rank has no call stack at all
 * (the core groups by op name then, or by size class when names are missing too, see `group_by`
 * in the job report). Empty otherwise.
 */
function groupNote(summary, s) {
  if (!summary || summary.group_by === 'frame') return null;
  const by = groupingOf(summary, s);
  const { noStacks: why, stacksFix: fix } = rankExport(summary);
  const text = summary.group_by === 'size_class'
    ? `No call stacks and no operator names in this rank: the groups are size classes (power-of-two ranges of allocation sizes). ${fix}`
    : by === 'size_class'
      ? `No call stacks in this rank (${why}): the groups are size classes, power-of-two ranges of allocation sizes. ${fix}`
      : `No call stacks in this rank (${why}): the groups are operator names. ${fix}`;
  return el('div', { class: 'group-note', 'data-testid': 'group-note', text });
}

/**
 * The choice "by operator / by size class" of a rank without call stacks that has op names; a
 * hidden node otherwise. Shared by both views through the store's `groupBy`.
 */
function groupChoice(store) {
  const button = (value, text, title) => el('button', {
    type: 'button',
    class: 'small',
    text,
    title,
    'data-by': value,
    on: { click: () => store.set({ groupBy: value === 'size_class' ? 'size_class' : null, group: null }) },
  });
  const box = el('span', { class: 'group-choice', role: 'group', 'aria-label': 'Group by', 'data-testid': 'group-choice', hidden: true },
    el('span', { class: 'muted', text: 'group by ' }),
    button('op_name', 'operator', 'Group by the name of the operator that made the allocation'),
    button('size_class', 'size class', 'Group by power-of-two ranges of allocation sizes'));
  return {
    node: box,
    /** Shows the choice for `summary` (only when it groups by op name) with the current value. */
    render(summary, s) {
      box.hidden = !summary || summary.group_by !== 'op_name';
      const by = groupingOf(summary, s);
      for (const b of box.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.by === by));
    },
  };
}

/** View 6: the live set at the peak or at the clicked time. */
export function liveSet({ client, store, ranks, report, show, rendered }) {
  const back = el('button', { type: 'button', class: 'small', text: 'Back to the peak', title: 'Show the live set at the rank’s peak (p)', hidden: true, on: { click: () => store.set({ at: null, group: null }) } });
  const choice = groupChoice(store);
  const helpText = (summary, s) => `Allocations of ${rankExport(summary).liveAllocations} alive at that moment, ${groupsInWords(summary, s)}. Click a time on the memory chart to see another moment; click a group to list its allocations in the table.`;
  const { node, body, titleNode, helpNode } = section(6, 'live', 'At the peak', {
    tools: [choice.node, back],
    help: helpText(report.ranks[store.get().rank], store.get()),
  });
  helpNode.dataset.testid = 'live-help';
  const caption = el('div', { class: 'chart-caption' });
  const box = el('div', { class: 'groups', 'data-testid': 'live-groups' });
  body.append(caption, box);
  let groups = [];
  let title = '';
  let showAll = false;

  async function load(s) {
    const info = ranks[s.rank];
    const t = s.at ?? info.peak;
    back.hidden = s.at === null;
    helpNode.textContent = helpText(report.ranks[s.rank], s);
    if (t === null) {
      titleNode.textContent = 'At the peak';
      caption.textContent = '';
      groups = [];
      box.replaceChildren(el('div', { class: 'empty-state', text: 'This rank has no allocator data, so no peak. Click a time on the memory chart to see what was alive then.' }));
      return;
    }
    const rank = s.rank;
    const by = byParam(report.ranks[rank], s);
    choice.render(report.ranks[rank], s);
    box.dataset.state = 'loading';
    const result = await client.call('ascend.liveAt', { rank, t, ...by });
    if (store.get().rank !== rank || (store.get().at ?? info.peak) !== t || store.get().groupBy !== s.groupBy) return;
    groups = result;
    showAll = false;
    const total = groups.reduce((a, g) => a + g.bytes, 0);
    const count = groups.reduce((a, g) => a + g.count, 0);
    const tracked = groups.filter((g) => g.count > 0).reduce((a, g) => a + g.bytes, 0);
    const summary = report.ranks[rank];
    title = s.at === null ? `At the peak — ${rankLabel(summary)}` : `Live at ${ms(t)} — ${rankLabel(summary)}`;
    titleNode.textContent = title;
    // replaceChildren writes a null as the text "null": the optional parts are filtered out.
    caption.replaceChildren(...[
      el('span', { text: `${bytes(total)} allocated at `, title: exactBytes(total) }),
      el('span', { text: ms(t), title: timeTitle(info.origin_ns, t), class: 'time' }),
      s.at === null ? el('span', { class: 'muted', text: ' (the peak)' }) : null,
      el('span', {
        text: `: ${bytes(tracked)} in ${plural(count, 'allocation')} of the capture${total > tracked ? `, ${bytes(total - tracked)} allocated before it` : ''}.`,
        title: `${exactBytes(tracked)} in allocation rows`,
      }),
      groupNote(summary, s),
    ].filter(Boolean));
    box.dataset.time = String(t);
    box.dataset.by = groupingOf(summary, s);
    box.dataset.totalBytes = String(total);
    box.dataset.state = 'ready';
    resolvePending(store, 'live', groups, { t });
    render(store.get());
    // Brought into view by a chart click before its groups arrived: again at its real size.
    if (rendered) rendered('live');
  }

  function render(s) {
    if (!groups.length) {
      box.replaceChildren(el('div', { class: 'empty-state', text: 'Nothing was alive at that time.' }));
      return;
    }
    const sel = s.group && s.group.kind === 'live' ? s.group.index : -1;
    const t = s.at ?? ranks[s.rank].peak;
    bars(box, groups, {
      testid: 'live-group',
      selectedIndex: sel,
      color: colors().allocated,
      onPick: (i, g) => {
        store.set({ group: { kind: 'live', index: i, frame: g.frame, size: g.size_range || null, t } });
        show('table');
      },
      all: showAll,
      onShowAll: () => {
        showAll = true;
        render(store.get());
      },
    });
  }

  function update(s, changed) {
    if (changed.has('rank') || changed.has('at') || changed.has('groupBy')) load(s);
    else if (changed.has('group')) render(s);
  }
  const ready = load(store.get());
  return { node, update, ready, canvas: () => groupsCanvas(title, groups, colors().allocated), focus: () => (box.querySelector('.group-row') || node).focus() };
}

/** View 7: allocations of the window never released in it. */
export function unreleasedSet({ client, store, ranks, report, show }) {
  const choice = groupChoice(store);
  const helpText = (summary, s) => `Allocations made in the window (brushed on a chart; else the whole capture) and not released by its end: leak candidates, ${groupsInWords(summary, s)}.`;
  const { node, body, titleNode, helpNode } = section(7, 'unreleased', 'Unreleased', {
    tools: [choice.node],
    help: helpText(report.ranks[store.get().rank], store.get()),
  });
  helpNode.dataset.testid = 'unreleased-help';
  const caption = el('div', { class: 'chart-caption' });
  const box = el('div', { class: 'groups', 'data-testid': 'unreleased-groups' });
  body.append(caption, box);
  let groups = [];
  let title = '';
  let showAll = false;

  async function load(s) {
    const rank = s.rank;
    const win = s.window;
    const summary = report.ranks[rank];
    choice.render(summary, s);
    helpNode.textContent = helpText(summary, s);
    box.dataset.state = 'loading';
    const result = await client.call('ascend.unreleased', { rank, start: win ? win[0] : null, end: win ? win[1] : null, ...byParam(summary, s) });
    const now = store.get();
    if (now.rank !== rank || now.window !== win || now.groupBy !== s.groupBy) return;
    groups = result;
    showAll = false;
    const total = groups.reduce((a, g) => a + g.bytes, 0);
    const count = groups.reduce((a, g) => a + g.count, 0);
    title = `Unreleased ${win ? `in ${ms(win[0])} – ${ms(win[1])}` : 'in the capture'} — ${rankLabel(report.ranks[rank])}`;
    titleNode.textContent = title;
    caption.replaceChildren(el('span', {
      text: win
        ? `${plural(count, 'allocation')} made in the window and still held at its end: ${bytes(total)}`
        : `${plural(count, 'allocation')} never released in the capture: ${bytes(total)}`,
      title: exactBytes(total),
    }), ...[groupNote(summary, s)].filter(Boolean));
    box.dataset.by = groupingOf(summary, s);
    box.dataset.totalBytes = String(total);
    box.dataset.count = String(count);
    box.dataset.state = 'ready';
    resolvePending(store, 'unreleased', groups, { window: win });
    render(store.get());
  }

  function render(s) {
    if (!groups.length) {
      box.replaceChildren(el('div', { class: 'empty-state', text: s.window ? 'Everything allocated in the window was released in it.' : 'Every allocation was released within the capture.' }));
      return;
    }
    const sel = s.group && s.group.kind === 'unreleased' ? s.group.index : -1;
    bars(box, groups, {
      testid: 'unreleased-group',
      selectedIndex: sel,
      color: colors().unreleased,
      onPick: (i, g) => {
        store.set({ group: { kind: 'unreleased', index: i, frame: g.frame, size: g.size_range || null, window: s.window } });
        show('table');
      },
      all: showAll,
      onShowAll: () => {
        showAll = true;
        render(store.get());
      },
    });
  }

  function update(s, changed) {
    if (changed.has('rank') || changed.has('window') || changed.has('groupBy')) load(s);
    else if (changed.has('group')) render(s);
  }
  const ready = load(store.get());
  return { node, update, ready, canvas: () => groupsCanvas(title, groups, colors().unreleased), focus: () => (box.querySelector('.group-row') || node).focus() };
}
