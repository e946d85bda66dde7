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

/** Saves a canvas as PNG (at its backing-store resolution). */
export function downloadCanvas(canvas, name) {
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => {
      if (!blob) return reject(new Error('the chart could not be encoded as PNG'));
      download(name, blob);
      resolve();
    }, 'image/png');
  });
}
