// The time axis's tick labels (www/ui/plot.js `ticks` and `axisLabel`, www/format.js `timeMs`):
// every tick of an axis has its own label, whatever the span, from a capture of a few hundred
// nanoseconds (the hand-made msprof database's events are 100 ns apart, and its axes read "0 ms"
// at every tick before sub-millisecond units) to one of hours. Runs in Node: the plot module's
// drawing is not used (ui/dom.js listens for the colour scheme when loaded, stood in for here).
import { test } from 'node:test';
import assert from 'node:assert/strict';

globalThis.matchMedia ??= () => ({ addEventListener() {} });
const { ticks, axisLabel } = await import('../../www/ui/plot.js');

test('every tick of a time axis has its own label, from 300 ns to 5 hours', () => {
  // Spans in ms: 300 ns, 4 µs, 70 µs, 0.9 ms, 12 ms, 3 s, 7 min, 5 h; from 0 and from an offset.
  for (const span of [0.0003, 0.004, 0.07, 0.9, 12, 3000, 420000, 18000000]) {
    for (const start of [0, span * 3.7]) {
      // As many ticks as the page asks of plots 550 to 1430 px wide (one per 110 px).
      for (const n of [5, 9, 13]) {
        const vs = ticks(start, start + span, n, 'ms');
        assert.ok(vs.length >= 1, `span ${span} from ${start}: ${vs.length} ticks`);
        const labels = vs.map((v) => axisLabel(v, 'ms'));
        assert.equal(new Set(labels).size, labels.length, `span ${span} from ${start}, ${n} ticks: ${labels.join(', ')}`);
      }
    }
  }
});

test('times under a millisecond are written in µs or ns, others as before', () => {
  const cases = [
    [0, '0 ms'],
    [0.0001, '100 ns'],
    [0.0003, '300 ns'],
    [0.0005, '500 ns'],
    [0.001, '1 µs'],
    [0.0015, '1.5 µs'],
    [0.25, '250 µs'],
    [0.999, '999 µs'],
    [1, '1 ms'],
    [250, '250 ms'],
    [1500, '1.5 s'],
    [150000, '2.5 min'],
    [10800000, '3 h'],
    [-0.0002, '-200 ns'],
  ];
  for (const [v, text] of cases) assert.equal(axisLabel(v, 'ms'), text, `${v} ms`);
});
