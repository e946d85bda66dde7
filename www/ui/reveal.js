// Brings the answer of an action into view: when a click or a key changes a panel the user cannot
// see (a table filtered by a group, a call stack filled by a row, a tensor selected by "next
// conflict"), the panel is scrolled just enough to be seen below the sticky bars and flashes once,
// so the eye finds it. Nothing moves when it is already in view.

// Room kept between the answer and the edges of the viewport (CSS px).
const GAP = 8;

/** Bottom of the sticky bars stuck at the top of the viewport (the page header, a selection bar). */
export function stickyInset() {
  let inset = 0;
  for (const n of document.querySelectorAll('[data-sticky]')) {
    if (n.closest('[hidden]')) continue;
    const r = n.getBoundingClientRect();
    if (r.height && r.top <= inset + 1) inset = Math.max(inset, r.bottom);
  }
  return inset;
}

/**
 * Scrolls the window so that `node` lies inside the visible area (its top first when it is taller
 * than the viewport), then flashes it unless `flash` is false. `top: true` puts its top just below
 * the sticky bars whatever its size (a jump to a view by its number key).
 */
export function reveal(node, { flash = true, top: atTop = false } = {}) {
  if (!node || !node.isConnected || node.closest('[hidden]')) return;
  const r = node.getBoundingClientRect();
  const top = stickyInset() + GAP;
  const bottom = window.innerHeight - GAP;
  let dy = 0;
  if (atTop || r.top < top || r.height > bottom - top) dy = r.top - top;
  else if (r.bottom > bottom) dy = r.bottom - bottom;
  if (Math.abs(dy) >= 1) window.scrollBy({ top: dy, behavior: 'instant' });
  if (flash) {
    node.classList.remove('revealed');
    // Restarts the animation when the same panel is revealed twice in a row.
    void node.offsetWidth;
    node.classList.add('revealed');
    clearTimeout(node.revealTimer);
    node.revealTimer = setTimeout(() => node.classList.remove('revealed'), 1000);
  }
}
