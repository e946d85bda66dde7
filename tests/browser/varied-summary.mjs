// A job summary of many ranks whose figures vary over every size the rank table prints: rows and
// call-stack counts from 0 to tens of millions, bytes from a few B to TiB (with the values that
// round up to a longer text: 99.996 KiB → "100.00 KiB", 1023.96 KiB → "1024.0 KiB"; two ranks'
// call-stack counts of as many digits grouped differently, the wider one second), peak times
// from microseconds to hours (and just under a power of ten of ms), steps and no steps, a rank without a number, and a failed rank.
// Made from the sample summary's first rank (each copy its own role, rank and figures), with a
// deterministic generator so that two runs give the same file. Used by the rank table's test and
// its benchmark (scripts/bench-rank-table.mjs).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './harness.mjs';

const FIXTURE = path.join(root, 'fixtures', 'summary', 'msinsight-level0.memlens.json');

/** A small deterministic generator (mulberry32) of numbers in [0, 1). */
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Byte counts that print as the longest text of their unit, or round up to a longer one
 * (9.995 KiB → "10.00 KiB", 99.995 KiB → "100.00 KiB", 999.95 KiB → "1000.0 KiB").
 */
const EDGES = [1023, 10235, 102395, 1023949, 1048535, 99.996 * 2 ** 20, 1023.96 * 2 ** 30, 1000 * 2 ** 40 - 1];

/** Peak times (ns after the capture's start) just under a power of ten of ms, where the ms round up. */
const TIME_EDGES = [9_999_600, 99_999_999_700, 9_999_999_999_600];

/**
 * The call-stack counts of ranks 0 and 3 (both of the role 'critic', rank 0 first in any order):
 * the widest texts of their column, as many digits in all (36) but grouped differently, rank 3's
 * with two separators more ("1,000,000,000 direct · …" against "999,999,999 direct · …"). A fit
 * that took their shapes for one (the sum of the counts' digits) would measure rank 0's text only
 * and make the column too narrow for rank 3's.
 */
const STACK_PAIR = {
  0: { direct: 999_999_999, via_forward: 999_999_999, approximate: 999_999_999, none: 999_999_999 },
  3: { direct: 1_000_000_000, via_forward: 1_000_000_000, approximate: 1_000_000_000, none: 100_000 },
};

/**
 * `n` ranks in two roles (and a third role of three ranks with steps); returns `{ text, ranks }`:
 * the summary file's JSON text and its rank summaries.
 */
export function variedSummary(n, seed = 12) {
  const rnd = generator(seed);
  const base = JSON.parse(readFileSync(FIXTURE, 'utf8')).ranks[0];
  // A figure spread evenly over its orders of magnitude, from 0 to about 10^digits.
  const spread = (digits) => (rnd() < 0.03 ? 0 : Math.floor(10 ** (rnd() * digits)));
  const size = () => (rnd() < 0.02 ? EDGES[Math.floor(rnd() * EDGES.length)] : Math.floor(2 ** (rnd() * 43)));
  const origin = base.curve.t_ns[0];
  const ranks = [];
  for (let k = 0; k < n; k++) {
    const r = structuredClone(base);
    const role = k % 3 === 0 ? 'critic' : 'actor';
    const step = k >= n - 3 ? 100 + k : null;
    const rank = k === 5 ? null : k;
    const stacks = k in STACK_PAIR ? { ...STACK_PAIR[k] } : { direct: spread(7), via_forward: spread(7), approximate: spread(6), none: spread(6) };
    const rowsPta = spread(7);
    const rowsGe = spread(5);
    const peak = Math.round(size());
    const reserved = Math.round(peak + size());
    const figures = {
      role, rank: rank ?? 'unknown', step, rows: rowsPta + rowsGe, rows_pta: rowsPta, rows_ge: rowsGe, stacks,
      peak_allocated_bytes: peak, peak_reserved_bytes: reserved, fragmentation_bytes: Math.round(size()),
      unreleased_rows: spread(6), unreleased_bytes: Math.round(size()),
      // From a microsecond to about three hours after the capture's start.
      peak_time_ns: origin + (rnd() < 0.01 ? TIME_EDGES[Math.floor(rnd() * TIME_EDGES.length)] : Math.floor(10 ** (3 + rnd() * 10))),
      source: ['text', 'db', 'both'][k % 7 === 0 ? 1 : k % 11 === 0 ? 2 : 0],
    };
    Object.assign(r, { role, rank, step, run_dirs: [`job/${role}/rank${k}_ascend_pt`], peak_allocated_bytes: peak, peak_reserved_bytes: reserved });
    Object.assign(r.report, figures, { run_dirs: r.run_dirs });
    // Two columns of the curve are enough for the overview (and keep 4,096 ranks in a few MB).
    r.curve = { ...r.curve, t_ns: r.curve.t_ns.slice(0, 2), allocated_bytes: r.curve.allocated_bytes.slice(0, 2), reserved_bytes: r.curve.reserved_bytes.slice(0, 2) };
    ranks.push(r);
  }
  ranks.push({
    role: 'actor', rank: n, step: null, run_dirs: [`job/actor/rank${n}_ascend_pt`], status: 'error',
    error: `job/actor/rank${n}_ascend_pt/operator_memory.csv: line 3: expected 8 fields`, peak_allocated_bytes: 0,
    peak_reserved_bytes: 0, report: null, curve: { component: '', t_ns: [], allocated_bytes: [], reserved_bytes: [] },
    unreleased: [], warnings: [],
  });
  const text = JSON.stringify({ format: 'memlens-job-summary', version: 1, totals: {}, matrix: [], outliers: [], ranks });
  return { text, ranks };
}
