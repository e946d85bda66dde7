// Number formatting shared by the views: binary units for bytes, exact values for tooltips.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** 1536 → "1.50 KiB"; values below 1 KiB stay exact. */
export function bytes(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '–';
  const neg = n < 0;
  let v = Math.abs(Number(n));
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u += 1;
  }
  const text = u === 0 ? String(v) : v.toFixed(v >= 100 ? 1 : 2);
  return `${neg ? '-' : ''}${text} ${UNITS[u]}`;
}

/** 1234567 → "1,234,567 bytes" (exact, for hover). */
export function exactBytes(n) {
  return `${Number(n).toLocaleString('en-US')} bytes`;
}

/** Integer with thousands separators. */
export function int(n) {
  return Number(n).toLocaleString('en-US');
}

/** 1 → "1 file", 3 → "3 files" (`many` for irregular plurals). */
export function plural(n, one, many = `${one}s`) {
  return `${int(n)} ${Number(n) === 1 ? one : many}`;
}
