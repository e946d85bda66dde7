// Drawing of memory curves on a plot, shared by the memory chart and the chart of memory records
// kept on their own range: envelopes reduced per pixel column in Rust, and marker lines.

/**
 * Draws one curve envelope (min/max/first/last per column over `win`, ns) as a step line; `shift`
 * (ns) moves it left, for a compared rank aligned on another.
 */
export function drawEnvelope(g, p, win, s, color, dash, shift = 0) {
  const n = s.min.length;
  if (!n) return;
  const span = win.x1 - win.x0;
  g.strokeStyle = color;
  g.lineWidth = 1.5;
  g.setLineDash(dash || []);
  g.beginPath();
  let started = false;
  for (let c = 0; c < n; c++) {
    if (!s.defined[c]) {
      started = false;
      continue;
    }
    const xa = p.px((win.x0 + (c * span) / n - shift) / 1e6);
    const xb = p.px((win.x0 + ((c + 1) * span) / n - shift) / 1e6);
    if (!started) g.moveTo(xa, p.py(s.first[c]));
    else g.lineTo(xa, p.py(s.first[c]));
    started = true;
    // The column's whole range, so an instantaneous peak still shows.
    g.lineTo(xa, p.py(s.max[c]));
    g.lineTo(xa, p.py(s.min[c]));
    g.lineTo(xa, p.py(s.last[c]));
    g.lineTo(xb, p.py(s.last[c]));
  }
  g.stroke();
  g.setLineDash([]);
}

/**
 * A vertical line at `xNs` with an optional label near its top. The label sits beside the line
 * (right, or left at the right edge), as high as it can without crossing any curve of `avoid`
 * ([{ win, s, shift }] as drawEnvelope takes them) or meeting any label box of it ([{ box }], a
 * box vline returned). Returns the label's box in the plot area's css px ({ x, y, width, height }),
 * or null without a label or off the view.
 */
export function vline(g, p, xNs, color, dash, label, avoid = []) {
  const x = Math.round(p.px(xNs / 1e6)) + 0.5;
  if (x < -1 || x > p.width + 1) return null;
  g.strokeStyle = color;
  g.lineWidth = 1;
  g.setLineDash(dash || []);
  g.beginPath();
  g.moveTo(x, 0);
  g.lineTo(x, p.height);
  g.stroke();
  g.setLineDash([]);
  if (!label) return null;
  g.fillStyle = color;
  g.font = `${LABEL_PX}px system-ui, sans-serif`;
  g.textBaseline = 'top';
  const width = g.measureText(label).width;
  const sides = x + 4 + width > p.width ? [x - 4 - width] : [x + 4, x - 4 - width];
  const boxAt = (left, y) => ({ x: left, y, width, height: LABEL_H });
  // What each side's column of candidate boxes would meet: the curves' vertical extents within its
  // x range (found once per side, not once per candidate) and the boxes.
  const boxes = avoid.filter((e) => e.box);
  const taken = sides.map((left) => (left < 0 ? null : avoid.flatMap((e) => (e.box ? [] : extents(p, e, left - 1, left + width + 1)))));
  let box = boxAt(sides[0], 4);
  search: for (let y = 4; y + LABEL_H <= p.height; y += 2) {
    const [y0, y1] = [y - 1, y + LABEL_H + 1];
    for (let k = 0; k < sides.length; k++) {
      if (!taken[k]) continue;
      const b = boxAt(sides[k], y);
      if (!taken[k].some(([lo, hi]) => hi >= y0 && lo <= y1) && !boxes.some((e) => meets(e.box, b))) {
        box = b;
        break search;
      }
    }
  }
  g.textAlign = 'left';
  g.fillText(label, box.x, box.y);
  return box;
}

// The label's font size and the height of its box (the glyphs' ascent and descent, css px).
const LABEL_PX = 11;
const LABEL_H = 14;

/** Whether two label boxes overlap or come within 2 px of each other. */
function meets(a, b) {
  return a.x < b.x + b.width + 2 && b.x < a.x + a.width + 2 && a.y < b.y + b.height + 2 && b.y < a.y + a.height + 2;
}

/**
 * The vertical extents ([top, bottom], plot-area css px) of the step line drawEnvelope draws for
 * `e` ({ win, s, shift }) between x0 and x1: its vertical stroke at each column's left edge inside
 * that range (from the previous column's last value through the column's first, max, min and
 * last) and its horizontal stroke at the column's last value wherever the column's span meets the
 * range. A label box of that x range crosses the curve exactly when its y range (with a pixel of
 * margin) meets one of them. Only the columns that reach the range are visited: the columns'
 * edges grow with their index, so the first is found by bisection.
 */
function extents(p, { win, s, shift = 0 }, x0, x1) {
  const n = s.min.length;
  const span = win.x1 - win.x0;
  const edge = (c) => p.px((win.x0 + (c * span) / n - shift) / 1e6);
  const out = [];
  // The first column whose right edge reaches x0 (the edges are in order when span > 0).
  let lo = 0;
  if (span > 0) {
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (edge(mid + 1) >= x0) hi = mid;
      else lo = mid + 1;
    }
  }
  for (let c = lo; c < n; c++) {
    const xa = edge(c);
    if (span > 0 && xa > x1) break;
    if (!s.defined[c]) continue;
    const xb = edge(c + 1);
    const last = p.py(s.last[c]);
    if (xa >= x0 && xa <= x1) {
      const ys = [p.py(s.first[c]), p.py(s.max[c]), p.py(s.min[c]), last];
      if (c > 0 && s.defined[c - 1]) ys.push(p.py(s.last[c - 1]));
      out.push([Math.min(...ys), Math.max(...ys)]);
    }
    if (xb >= x0 && xa <= x1) out.push([last, last]);
  }
  return out;
}
