// Painting an answer of a rectangle view (the worker's visible rectangles: SOMAS tensors,
// snapshot allocations and blocks) into RGBA pixels, in the worker: merged runs and individual
// rectangles by class (higher classes last, so on top), individual rectangles of at least 5 px
// with a border so neighbours stay apart. The page then draws one image per repaint, whatever the
// number of rectangles.

/**
 * `r`: the answer ({x, y, w, h, cls, id} in pixels of a W × H canvas); `fill`, `border`: one
 * 0xAABBGGRR word per class (little-endian RGBA). Returns the pixels as a Uint8ClampedArray.
 */
export function rasterize(r, W, H, fill, border) {
  const px = new Uint32Array(W * H);
  const { x, y, w, h, cls, id } = r;
  const lists = Array.from({ length: fill.length }, () => []);
  for (let i = 0; i < cls.length; i++) (lists[cls[i]] || lists[0]).push(i);
  for (let c = 0; c < lists.length; c++) {
    const f = fill[c] >>> 0;
    const b = border[c] >>> 0;
    for (const i of lists[c]) {
      const x0 = Math.max(0, Math.min(W - 1, Math.round(x[i])));
      const x1 = Math.max(x0 + 1, Math.min(W, Math.round(x[i] + w[i])));
      const y0 = Math.max(0, Math.min(H - 1, Math.round(y[i])));
      const y1 = Math.max(y0 + 1, Math.min(H, Math.round(y[i] + h[i])));
      for (let row = y0; row < y1; row++) px.fill(f, row * W + x0, row * W + x1);
      if (id[i] !== 0xffffffff && x1 - x0 >= 5 && y1 - y0 >= 5) {
        px.fill(b, y0 * W + x0, y0 * W + x1);
        px.fill(b, (y1 - 1) * W + x0, (y1 - 1) * W + x1);
        for (let row = y0; row < y1; row++) {
          px[row * W + x0] = b;
          px[row * W + x1 - 1] = b;
        }
      }
    }
  }
  return new Uint8ClampedArray(px.buffer);
}
