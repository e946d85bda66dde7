// Saving results: text or blobs as files, canvases as PNG. Downloads are blob: URLs created in the
// page, so nothing is sent anywhere.

/** Offers `data` (string, Blob or Uint8Array) as a file named `name`. */
export function download(name, data, type = 'text/plain;charset=utf-8') {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/**
 * Saves a canvas as PNG (at its backing-store resolution). Charts are drawn on a transparent
 * canvas over the page's background, so the image gets that background (light or dark, as shown)
 * underneath; otherwise viewers would show the lines on white or on a checkerboard.
 */
export function downloadCanvas(canvas, name) {
  const out = document.createElement('canvas');
  out.width = canvas.width;
  out.height = canvas.height;
  const ctx = out.getContext('2d');
  ctx.fillStyle = backgroundOf(canvas);
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.drawImage(canvas, 0, 0);
  return new Promise((resolve, reject) => {
    out.toBlob((blob) => {
      if (!blob) return reject(new Error('the chart could not be encoded as PNG'));
      download(name, blob);
      resolve();
    }, 'image/png');
  });
}

/** The first opaque background colour behind `node` (the page's, at the latest). */
function backgroundOf(node) {
  for (let n = node; n && n.nodeType === 1; n = n.parentElement) {
    const c = getComputedStyle(n).backgroundColor;
    if (c && c !== 'transparent' && !/rgba\(.*,\s*0\)$/.test(c)) return c;
  }
  return matchMedia('(prefers-color-scheme: dark)').matches ? '#111' : '#fff';
}
