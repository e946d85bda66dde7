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

/** A vertical line at `xNs` with an optional label at its top. */
export function vline(g, p, xNs, color, dash, label) {
  const x = Math.round(p.px(xNs / 1e6)) + 0.5;
  if (x < -1 || x > p.width + 1) return;
  g.strokeStyle = color;
  g.lineWidth = 1;
  g.setLineDash(dash || []);
  g.beginPath();
  g.moveTo(x, 0);
  g.lineTo(x, p.height);
  g.stroke();
  g.setLineDash([]);
  if (label) {
    g.fillStyle = color;
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'top';
    const w = g.measureText(label).width;
    g.textAlign = x + 4 + w > p.width ? 'right' : 'left';
    g.fillText(label, g.textAlign === 'right' ? x - 4 : x + 4, 4);
  }
}
