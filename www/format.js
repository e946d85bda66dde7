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

/**
 * `a` and `b` (bytes) as `bytes` writes them, with more decimals when that alone would print the
 * two alike (a size just over a limit: "768.0 MiB … over 768.0 MiB"), and as exact bytes when four
 * decimals are not enough: returns `[text of a, text of b]`, two different texts unless a = b.
 */
export function bytesApart(a, b) {
  const [ta, tb] = [bytes(a), bytes(b)];
  if (ta !== tb || Number(a) === Number(b)) return [ta, tb];
  const unit = UNITS.indexOf(ta.slice(ta.lastIndexOf(' ') + 1));
  for (let d = 2; d <= 4 && unit > 0; d++) {
    const [x, y] = [a, b].map((n) => `${(Number(n) / 1024 ** unit).toFixed(d)} ${UNITS[unit]}`);
    if (x !== y) return [x, y];
  }
  return [exactBytes(a), exactBytes(b)];
}

// One formatter for every call: `toLocaleString` builds a new one each time, which cost ~0.1 ms a
// number, i.e. most of the time a virtual table spends drawing its rows.
const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

/** 1234567 → "1,234,567 bytes" (exact, for hover). */
export function exactBytes(n) {
  return `${GROUPED.format(Number(n))} bytes`;
}

/** Integer with thousands separators. */
export function int(n) {
  return GROUPED.format(Number(n));
}

/** 1 → "1 file", 3 → "3 files" (`many` for irregular plurals). */
export function plural(n, one, many = `${one}s`) {
  return `${int(n)} ${Number(n) === 1 ? one : many}`;
}

/**
 * A time in ms for an axis tick, in the unit that keeps it short: 250 ms, 1.5 s, 2.5 min, 3 h
 * (a capture of hours no longer reads "10000000 ms").
 */
export function timeMs(v) {
  const a = Math.abs(v);
  const num = (x) => String(+x.toFixed(3));
  if (a >= 3600000) return `${num(v / 3600000)} h`;
  if (a >= 60000) return `${num(v / 60000)} min`;
  if (a >= 1000) return `${num(v / 1000)} s`;
  return `${num(v)} ms`;
}
