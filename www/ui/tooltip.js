// One floating tooltip for the canvas views. Content is given as lines of text (never HTML).
import { el } from './dom.js';

let tip = null;

function node() {
  if (!tip) {
    tip = el('div', { class: 'tooltip', role: 'tooltip', 'data-testid': 'tooltip' });
    tip.hidden = true;
    document.body.append(tip);
  }
  return tip;
}

/** Shows `lines` (strings, or [label, value] pairs) near the client point (x, y). */
export function showTooltip(x, y, lines) {
  const t = node();
  t.replaceChildren(
    ...lines.map((l) =>
      Array.isArray(l) ? el('div', {}, el('span', { class: 'tip-label', text: l[0] }), ' ', el('span', { text: l[1] })) : el('div', { text: l }),
    ),
  );
  t.hidden = false;
  const pad = 14;
  const { innerWidth: w, innerHeight: h } = window;
  const r = t.getBoundingClientRect();
  t.style.left = `${Math.min(x + pad, w - r.width - 4)}px`;
  t.style.top = `${y + pad + r.height > h ? y - r.height - pad : y + pad}px`;
}

/** Hides the tooltip. */
export function hideTooltip() {
  if (tip) tip.hidden = true;
}
