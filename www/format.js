// Number formatting shared by the views: binary units for bytes, exact values for tooltips.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/**
 * A size `n` (bytes) in the unit `bytes` writes it in: `[v, u]`, v = |n| ÷ 1024^u with u the
 * largest unit |n| reaches (exact: a division by a power of two), v below 1024 but in the last.
 */
function scaled(n) {
  let v = Math.abs(Number(n));
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u += 1;
  }
  return [v, u];
}

/** The decimals `bytes` gives a size of `v` in unit `u` (whole bytes below 1 KiB). */
const decimals = (v, u) => (u === 0 ? 0 : v >= 100 ? 1 : 2);

/** 1536 → "1.50 KiB"; values below 1 KiB stay exact. */
export function bytes(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '–';
  const [v, u] = scaled(n);
  const text = u === 0 ? String(v) : v.toFixed(decimals(v, u));
  return `${n < 0 ? '-' : ''}${text} ${UNITS[u]}`;
}

/**
 * The number of decimal digits of a whole `n` ≥ 0, without writing it (asked of every rank of a
 * table, in code that has run too little to be optimised: comparisons cost less than a text).
 */
function digitCount(n) {
  let d = 1;
  for (let p = 10; n >= p && d < 16; p *= 10) d++;
  return d;
}

/**
 * A figure's *shape* is what its text looks like besides the values of its digits, for fitting a
 * column to its widest text without writing every one (www/profiler/rank-table.js): two figures
 * of one shape are written with the same characters besides their digits and as many digits. It
 * is a number where it follows from the figure, else the text itself (rare: where rounding may
 * add a digit, or a figure no formatter expects). Each formatter's shape sits beside it and
 * shares its steps; tests/browser/format-shapes.test.mjs checks each against the texts.
 *
 * This is the shape of `v.toFixed(d)` for a finite `v` ≥ 0 (0–3 decimals): its number of digits,
 * or null where it does not follow from `v` — within a rounding step below a power of ten, where
 * rounding can carry into a new digit (9.996 → "10.00"), and from 10^15 on.
 */
export function fixedShape(v, d) {
  const whole = digitCount(Math.floor(v));
  if (whole >= 15 || (d > 0 && v >= 10 ** whole - 10 ** -d)) return null;
  return whole + d;
}

/** The shape of `bytes(n)`: its unit, its sign and its number of digits (else its text). */
export function bytesShape(n) {
  if (n === null || n === undefined || !Number.isFinite(Number(n))) return bytes(n);
  const [v, u] = scaled(n);
  const digits = u === 0 && !Number.isInteger(v) ? null : fixedShape(v, decimals(v, u));
  if (digits === null) return bytes(n);
  return (u * 32 + digits) * 2 + (n < 0 ? 1 : 0);
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

/**
 * The shape (see `fixedShape`) of a count as `int` or `String` write it ("1,234,567",
 * "1234567"): its number of digits, negative for a negative count (its grouping follows from
 * them). A number that is not a whole one, beyond 10^15 or -0 is a shape of its own: `#` and
 * its figure.
 */
export function countShape(n) {
  // -0 too: `int` writes it "-0", `String` "0".
  if (!Number.isSafeInteger(n) || Math.abs(n) >= 1e15 || Object.is(n, -0)) return `#${n}`;
  return n < 0 ? -digitCount(-n) : digitCount(n);
}

/** 1 → "1 file", 3 → "3 files" (`many` for irregular plurals). */
export function plural(n, one, many = `${one}s`) {
  return `${int(n)} ${Number(n) === 1 ? one : many}`;
}

/**
 * A time in ms for an axis tick, in the unit that keeps it short: 250 ms, 1.5 s, 2.5 min, 3 h
 * (a capture of hours no longer reads "10000000 ms"), 250 µs and 300 ns under a millisecond.
 */
export function timeMs(v) {
  const a = Math.abs(v);
  const num = (x) => String(+x.toFixed(3));
  if (a >= 3600000) return `${num(v / 3600000)} h`;
  if (a >= 60000) return `${num(v / 60000)} min`;
  if (a >= 1000) return `${num(v / 1000)} s`;
  if (a >= 1 || a === 0) return `${num(v)} ms`;
  // Under a millisecond, three decimals of ms would label ticks 100 ns apart all "0 ms".
  if (a >= 0.001) return `${num(v * 1e3)} µs`;
  return `${num(v * 1e6)} ns`;
}
