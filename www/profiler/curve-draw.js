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
  let box = boxAt(sides[0], 4);
  search: for (let y = 4; y + LABEL_H <= p.height; y += 2) {
    for (const left of sides) {
      if (left < 0) continue;
      const b = boxAt(left, y);
      if (!avoid.some((e) => (e.box ? meets(e.box, b) : crosses(p, e, b)))) {
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
 * Whether the step line drawEnvelope draws for `e` ({ win, s, shift }) passes through `box`
 * (plot-area css px, with a pixel of margin): its vertical strokes at each column's left edge
 * (from the previous column's last value through the column's first, max, min and last) and its
 * horizontal stroke at the column's last value.
 */
function crosses(p, { win, s, shift = 0 }, box) {
  const n = s.min.length;
  const span = win.x1 - win.x0;
  const [x0, x1, y0, y1] = [box.x - 1, box.x + box.width + 1, box.y - 1, box.y + box.height + 1];
  let prev = null;
  for (let c = 0; c < n; c++) {
    if (!s.defined[c]) {
      prev = null;
      continue;
    }
    const xa = p.px((win.x0 + (c * span) / n - shift) / 1e6);
    const xb = p.px((win.x0 + ((c + 1) * span) / n - shift) / 1e6);
    const last = p.py(s.last[c]);
    if (xa >= x0 && xa <= x1) {
      const ys = [p.py(s.first[c]), p.py(s.max[c]), p.py(s.min[c]), last];
      if (prev !== null) ys.push(prev);
      if (Math.max(...ys) >= y0 && Math.min(...ys) <= y1) return true;
    }
    if (xb >= x0 && xa <= x1 && last >= y0 && last <= y1) return true;
    prev = last;
  }
  return false;
}
