// "Compare these": when one drop holds two inputs of one kind that read as two versions of the
// same thing — two run folders of the same role and rank (two runs of one rank, not two ranks of
// one job), or two SOMAS dumps of the same kind — the page offers to compare them, with a choice
// of which is the baseline (and a swap). The files stay in the drop; the Compare mode gets the
// files under each input.
import { el } from '../ui/dom.js';

/** The two inputs of `inventory` worth offering to compare, with their files among `items`; or null. */
export function comparablePair(inventory, items) {
  const units = inventory.units || [];
  const runs = units.filter((u) => u.kind === 'ascend-run');
  const dumps = units.filter((u) => u.kind === 'somas');
  let pair = null;
  if (runs.length === 2 && dumps.length === 0) {
    const [a, b] = runs;
    if ((a.role || '') === (b.role || '') && (a.rank ?? null) === (b.rank ?? null)) pair = runs;
  } else if (dumps.length === 2 && runs.length === 0) {
    if (dumps[0].family === dumps[1].family) pair = dumps;
  }
  if (!pair) return null;
  const under = (u) => items.filter((i) => i.path === u.path || i.path.startsWith(`${u.path}/`));
  const sides = pair.map((u) => ({ label: u.path, items: under(u) }));
  return sides.every((s) => s.items.length) ? sides : null;
}

/**
 * Fills `box` with the offer for `pair` ([first, second] from comparablePair), or empties and hides
 * it; `onCompare(base, candidate)` runs the comparison.
 */
export function showOffer(box, pair, onCompare) {
  box.replaceChildren();
  box.hidden = !pair;
  if (!pair) return;
  let order = [0, 1];
  const baseName = el('code', { data: { testid: 'offer-base' } });
  const candidateName = el('code', { data: { testid: 'offer-candidate' } });
  const render = () => {
    baseName.textContent = pair[order[0]].label;
    candidateName.textContent = pair[order[1]].label;
    box.dataset.base = pair[order[0]].label;
  };
  render();
  box.append(
    el('span', { text: 'Two inputs of one kind: compare them? Baseline ' }),
    baseName,
    el('span', { text: ', candidate ' }),
    candidateName,
    el('button', {
      type: 'button',
      text: 'Swap',
      title: 'Make the other one the baseline',
      data: { testid: 'offer-swap' },
      on: {
        click: () => {
          order = [order[1], order[0]];
          render();
        },
      },
    }),
    el('button', {
      type: 'button',
      class: 'primary',
      text: 'Compare these',
      data: { testid: 'offer-compare' },
      on: { click: () => onCompare(pair[order[0]], pair[order[1]]) },
    }),
  );
}
