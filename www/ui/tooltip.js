// One floating tooltip for the canvas views. Content is given as lines of text (never HTML).
import { el } from './dom.js';

let tip = null;

function node() {
  if (!tip) {
    // A layer of its own, placed by a transform: following the pointer then moves the layer
    // without laying out or repainting the page under it (a job's overview holds every view).
    tip = el('div', { class: 'tooltip', role: 'tooltip', 'data-testid': 'tooltip', style: { left: '0px', top: '0px', willChange: 'transform' } });
    tip.hidden = true;
    document.body.append(tip);
  }
  return tip;
}

// The lines shown and the tooltip's size: a pointer moving within one cell or bar only moves the
// tooltip, without building its lines again or measuring it (a forced layout on every move).
let shownKey = null;
let size = null;

/** Shows `lines` (strings, or [label, value] pairs) near the client point (x, y). */
export function showTooltip(x, y, lines) {
  const t = node();
  const key = JSON.stringify(lines);
  if (key !== shownKey || t.hidden) {
    t.replaceChildren(
      ...lines.map((l) =>
        Array.isArray(l) ? el('div', {}, el('span', { class: 'tip-label', text: l[0] }), ' ', el('span', { text: l[1] })) : el('div', { text: l }),
      ),
    );
    t.hidden = false;
    shownKey = key;
    const r = t.getBoundingClientRect();
    size = { width: r.width, height: r.height };
  }
  const pad = 14;
  const { innerWidth: w, innerHeight: h } = window;
  const left = Math.min(x + pad, w - size.width - 4);
  const top = y + pad + size.height > h ? y - size.height - pad : y + pad;
  t.style.transform = `translate(${left}px, ${top}px)`;
}

/** Hides the tooltip. */
export function hideTooltip() {
  if (tip) tip.hidden = true;
}
