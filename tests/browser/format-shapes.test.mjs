// The shapes the formatters give of their figures (www/format.js `fixedShape`, `bytesShape`,
// `countShape`; www/profiler/common.js `msShape`), which the rank table's column fit trusts in
// place of writing every rank's text: two figures of one shape must be written with the same
// characters besides their digits, and as many digits. Checked here against the texts the
// formatters write, over figures around every place where a text gains a digit, a unit or a sign
// (each power of ten in every unit, the rounding steps below them, the unit changes at 1024) and
// over random ones. Runs in Node: the formatters touch no DOM (common.js's module, through
// ui/dom.js, listens for the colour scheme when loaded, so that one call is stood in for).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bytes, bytesShape, countShape, int } from '../../www/format.js';

globalThis.matchMedia ??= () => ({ addEventListener() {} });
const { ms, msShape } = await import('../../www/profiler/common.js');

/** A text's characters other than digits, and its number of digits. */
function skeleton(text) {
  const rest = text.replace(/[0-9]/g, '');
  return `${rest}|${text.length - rest.length}`;
}

/**
 * Asserts that every figure of `values` whose shape is a number shares its text's skeleton with
 * every other figure of that shape, and that a shape given as text is the figure's text. Returns
 * the share of figures whose shape is a number (the cheap path).
 */
function checkShapes(name, values, format, shape) {
  const seen = new Map();
  let numeric = 0;
  for (const v of values) {
    const text = format(v);
    const s = shape(v);
    if (typeof s !== 'number') {
      assert.equal(s, text, `${name}(${v}): a shape given as text is the text`);
      continue;
    }
    numeric++;
    const k = skeleton(text);
    const first = seen.get(s);
    if (!first) seen.set(s, { v, k, text });
    else {
      assert.equal(k, first.k, `${name}: ${v} ("${text}") and ${first.v} ("${first.text}") share shape ${s} but not their text's characters besides digits`);
    }
  }
  return numeric / values.length;
}

/** A seeded random source (mulberry32), so a failure names figures that come back. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Figures around `x`: a few steps of `step` either side of it, and the nearest doubles. */
function around(x, step) {
  const out = [];
  for (let k = -3; k <= 3; k++) out.push(x + k * step);
  out.push(x * (1 - Number.EPSILON), x * (1 + Number.EPSILON));
  return out;
}

test('bytesShape: one shape, one skeleton, at every unit, digit and rounding edge', () => {
  const values = [0, 1, -1, 1023, 1024, -1024, 1025];
  for (let u = 0; u <= 5; u++) {
    const unit = 1024 ** u;
    for (let k = 0; k <= 4; k++) {
      const p = 10 ** k;
      // The edges a size's text turns at: a power of ten, the rounding steps below it for 2 and
      // 1 decimals, and the unit's end at 1024 (as fractions of the unit and as whole bytes).
      for (const m of [p, p - 0.005, p - 0.05, p - 0.0049, p - 0.0051, p - 0.049, p - 0.051, 1024, 1023.95, 1023.995]) {
        for (const x of around(m * unit, unit / 1e4)) values.push(x, Math.round(x), -Math.round(x));
      }
    }
  }
  const r = random(7);
  for (let i = 0; i < 100000; i++) values.push(Math.floor(2 ** (r() * 53)) * (r() < 0.05 ? -1 : 1));
  for (let i = 0; i < 20000; i++) values.push(r() * 2 ** (r() * 50));
  const cheap = checkShapes('bytes', values, bytes, bytesShape);
  assert.ok(cheap > 0.9, `most sizes have a numeric shape (${cheap})`);
});

test('msShape: one shape, one skeleton, at every digit and rounding edge', () => {
  const values = [0, -1, 1, 499, 500, -500, 999999, 1000000];
  for (let k = -3; k <= 13; k++) {
    const p = 10 ** k * 1e6; // 10^k ms in ns
    for (const x of around(p, 1)) values.push(x, Math.round(x), -Math.round(x));
    for (const x of around(p - 500, 1)) values.push(x, Math.round(x), -Math.round(x));
    for (const x of around(p - 1000, 1)) values.push(x, Math.round(x));
  }
  const r = random(11);
  for (let i = 0; i < 100000; i++) values.push(Math.floor(2 ** (r() * 62)) * (r() < 0.05 ? -1 : 1));
  const cheap = checkShapes('ms', values, ms, msShape);
  assert.ok(cheap > 0.9, `most times have a numeric shape (${cheap})`);
});

test('countShape: one shape, one skeleton, for int and String', () => {
  const values = [0, -1, 1.5, 2 ** 53, 1e15, -1e15, NaN];
  for (let k = 0; k <= 15; k++) for (const x of around(10 ** k, 1)) values.push(Math.round(x), -Math.round(x));
  const r = random(13);
  for (let i = 0; i < 100000; i++) values.push(Math.floor(2 ** (r() * 50)));
  const asCount = (n) => (typeof countShape(n) === 'number' ? countShape(n) : `#${n}`);
  for (const [name, format] of [['int', int], ['String', String]]) {
    // A count's shape given as text is `#` and its figure, not the text int writes.
    const shape = (n) => (typeof asCount(n) === 'number' ? asCount(n) : format(n));
    const cheap = checkShapes(name, values, format, shape);
    assert.ok(cheap > 0.9, `most counts have a numeric shape (${cheap})`);
  }
});

test('the shapes tell apart the texts the fit must measure apart', () => {
  // Another unit, another sign or one digit more is another shape (the fit measures each).
  assert.notEqual(bytesShape(1023), bytesShape(1024));
  assert.notEqual(bytesShape(5 * 2 ** 20), bytesShape(-5 * 2 ** 20));
  assert.notEqual(bytesShape(9.5 * 2 ** 20), bytesShape(10.5 * 2 ** 20));
  assert.notEqual(msShape(9e6), msShape(10e6));
  assert.notEqual(msShape(5e6), msShape(-5e6));
  assert.notEqual(countShape(999), countShape(1000));
  // Within a rounding step below a power of ten the text is the shape (it may carry a digit).
  assert.equal(bytesShape(9.996 * 2 ** 10), '10.00 KiB');
  assert.equal(msShape(9999.9996e6), '10000.000 ms');
});
