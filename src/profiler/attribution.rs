//! Which op made an allocation, and which Python call stack to show for it.
//!
//! The join (described in `docs/formats-profiler.md`), for every PTA row of `operator_memory.csv`:
//! 1. the innermost `cpu_op` with the row's name whose `[ts, ts + dur]` contains the allocation
//!    time, in exact integer nanoseconds (torch_npu names a row after exactly that op);
//! 2. if that op has a call stack → [`StackSource::Direct`];
//! 3. else walk it and its enclosing ops on the same thread; the first with `Sequence number ≥ 0`
//!    is the autograd node; the forward op with the same sequence number that has a stack (the
//!    outermost of them) gives the stack → [`StackSource::ViaForward`];
//! 4. if no same-name op contains the time: the Python tool's rule (the last same-name op with a
//!    stack that starts at or before the time) → [`StackSource::Approximate`];
//! 5. else [`StackSource::None`]. `cann::` rows have no Python stack and are always `None`.
//!
//! The frame shown is the first *user* frame (outside site-packages, the Python standard library,
//! torch, torch_npu and `<string>`), not the innermost frame, which is almost always inside torch.

use super::operator_memory::{MemRow, RowSource};
use super::trace::Ops;
use super::Interner;
use crate::frames::is_library_path;
use rayon::prelude::*;
use std::cmp::Reverse;

/// The per-name index, keyed by interned name ids (given out by the interner, not read from a
/// file, so a fast fixed hasher cannot be led into collisions).
type NameMap = std::collections::HashMap<u32, ByName, foldhash::fast::FixedState>;

/// How a row got its call stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StackSource {
    /// The containing op has the stack.
    Direct,
    /// The containing op runs in backward; the stack is its forward op's.
    ViaForward,
    /// No same-name op contains the time; the Python tool's nearest-earlier rule.
    Approximate,
    /// No stack (`cann::` rows, backward ops without a forward match, no same-name op).
    None,
}

impl StackSource {
    /// The name used in JSON and CSV.
    pub fn label(self) -> &'static str {
        match self {
            StackSource::Direct => "direct",
            StackSource::ViaForward => "via_forward",
            StackSource::Approximate => "approximate",
            StackSource::None => "none",
        }
    }
}

/// The result of the join for one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attribution {
    /// The op containing the allocation time (innermost, same name), if any.
    pub op: Option<u32>,
    /// The op whose stack is used (the containing op, its forward op, or the approximate match).
    pub stack_op: Option<u32>,
    /// Interned call stack (0 = none).
    pub stack: u32,
    /// How the stack was found.
    pub source: StackSource,
}

const NONE: Attribution = Attribution {
    op: None,
    stack_op: None,
    stack: 0,
    source: StackSource::None,
};

/// Per-name lookup tables.
struct ByName {
    /// Op ids sorted by start.
    ids: Vec<u32>,
    /// Their starts.
    ts: Vec<i64>,
    /// Running maximum of their ends, so a backward scan can stop once nothing earlier reaches `t`.
    max_end: Vec<i64>,
    /// Starts and ids of the ops that have a stack (the Python tool's index).
    stack_ts: Vec<i64>,
    stack_ids: Vec<u32>,
}

/// Index over the ops of one trace, built once, queried per row (in parallel).
pub struct Joiner<'a> {
    ops: &'a Ops,
    by_name: NameMap,
    /// Enclosing op on the same thread (`u32::MAX` = none).
    parent: Vec<u32>,
    /// Forward ops with a stack, `(sequence number, id)` in order: an op's candidates are one run
    /// (sequence numbers are read from the file, so no hash map keyed by them).
    forward: Vec<(i64, u32)>,
}

impl<'a> Joiner<'a> {
    /// Builds the indexes for `ops`.
    ///
    /// Each index comes from one sort of the ops' keys copied out of the columns (name, start, id;
    /// thread, start, end, id) whose runs of one name or thread are then taken in order: sorting
    /// every name's and thread's ids through the columns, stably, with the maps hashed by SipHash,
    /// was ~6 % of a rank's instructions (`callgrind`, the 2 × 2 job's rank: 42,478 ops).
    pub fn new(ops: &'a Ops) -> Self {
        let n = u32::try_from(ops.len()).unwrap_or(u32::MAX);
        let ts = |i: u32| ops.ts.get(i as usize).copied().unwrap_or(0);
        let end = |i: u32| ops.end(i as usize);
        let name = |i: u32| ops.name.get(i as usize).copied().unwrap_or(0);
        let has_stack = |i: u32| ops.stack.get(i as usize).copied().unwrap_or(0) != 0;
        let mut forward: Vec<(i64, u32)> = (0..n)
            .filter_map(|i| {
                let seq = ops.seq.get(i as usize).copied().unwrap_or(-1);
                (seq >= 0 && has_stack(i)).then_some((seq, i))
            })
            .collect();
        forward.sort_unstable();
        // By name, then start, then id: each name's ops in the order its index keeps.
        let mut named: Vec<(u32, i64, u32)> = (0..n).map(|i| (name(i), ts(i), i)).collect();
        named.sort_unstable();
        let by_name = named
            .chunk_by(|a, b| a.0 == b.0)
            .map(|g| {
                let mut max_end = Vec::with_capacity(g.len());
                let mut m = i64::MIN;
                for &(_, _, i) in g {
                    m = m.max(end(i));
                    max_end.push(m);
                }
                let (stack_ts, stack_ids) = g
                    .iter()
                    .filter(|&&(_, _, i)| has_stack(i))
                    .map(|&(_, t, i)| (t, i))
                    .unzip();
                let idx = ByName {
                    ids: g.iter().map(|&(_, _, i)| i).collect(),
                    ts: g.iter().map(|&(_, t, _)| t).collect(),
                    max_end,
                    stack_ts,
                    stack_ids,
                };
                (g.first().map_or(0, |f| f.0), idx)
            })
            .collect();
        // Nesting per thread: sorted by start, longer first, and for identical intervals the later
        // event in the file first (torch_npu writes children before parents); a stack sweep then
        // gives each op its innermost enclosing op.
        let mut nested: Vec<(i64, i64, Reverse<i64>, Reverse<u32>)> = (0..n)
            .map(|i| {
                let tid = ops.tid.get(i as usize).copied().unwrap_or(0);
                (tid, ts(i), Reverse(end(i)), Reverse(i))
            })
            .collect();
        nested.sort_unstable();
        let mut parent = vec![u32::MAX; n as usize];
        let mut open: Vec<(i64, u32)> = Vec::new();
        for g in nested.chunk_by(|a, b| a.0 == b.0) {
            open.clear();
            for &(_, _, Reverse(e), Reverse(id)) in g {
                while let Some(&(top_end, _)) = open.last() {
                    if top_end >= e {
                        break;
                    }
                    open.pop();
                }
                if let (Some(&(_, top)), Some(slot)) = (open.last(), parent.get_mut(id as usize)) {
                    *slot = top;
                }
                open.push((e, id));
            }
        }
        Joiner {
            ops,
            by_name,
            parent,
            forward,
        }
    }

    /// The innermost op named `name` whose `[ts, ts + dur]` contains `t`.
    pub fn containing(&self, name: u32, t: i64) -> Option<u32> {
        let idx = self.by_name.get(&name)?;
        let mut k = idx.ts.partition_point(|&x| x <= t);
        let mut best: Option<(i64, i64, u32)> = None; // (dur, -ts, id): smallest dur, latest start
        while k > 0 {
            k -= 1;
            if idx.max_end.get(k).is_none_or(|&m| m < t) {
                break;
            }
            let Some(&id) = idx.ids.get(k) else { break };
            if self.ops.end(id as usize) >= t {
                let dur = self.ops.dur.get(id as usize).copied().unwrap_or(0);
                let key = (dur, -idx.ts.get(k).copied().unwrap_or(0), id);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        }
        best.map(|b| b.2)
    }

    /// The Python tool's match: the last op named `name` with a stack starting at or before `t`.
    pub fn python_rule(&self, name: u32, t: i64) -> Option<u32> {
        let idx = self.by_name.get(&name)?;
        let k = idx.stack_ts.partition_point(|&x| x <= t);
        k.checked_sub(1).and_then(|k| idx.stack_ids.get(k).copied())
    }

    /// The forward op (with a stack) of the backward op `op`, if `op` or an op enclosing it on its
    /// thread is an autograd node (`Sequence number ≥ 0`).
    pub fn forward_of(&self, op: u32) -> Option<u32> {
        let mut cur = op;
        let mut guard = 0;
        let seq = loop {
            let s = self.ops.seq.get(cur as usize).copied().unwrap_or(-1);
            if s >= 0 {
                break s;
            }
            cur = *self.parent.get(cur as usize)?;
            guard += 1;
            if cur == u32::MAX || guard > 10_000 {
                return None;
            }
        };
        let from = self.forward.partition_point(|&(s, _)| s < seq);
        let to = self.forward.partition_point(|&(s, _)| s <= seq);
        let cands = || {
            self.forward
                .get(from..to)
                .unwrap_or_default()
                .iter()
                .map(|&(_, i)| i)
        };
        let t = self.ops.ts.get(op as usize).copied().unwrap_or(0);
        let ts = |i: u32| self.ops.ts.get(i as usize).copied().unwrap_or(0);
        // The forward pass runs before its backward: take the latest candidate starting before
        // the backward op (any candidate if none does), then the outermost same-sequence op
        // enclosing it, whose stack is the user's call.
        let anchor = cands()
            .filter(|&c| c != cur && ts(c) <= t)
            .max_by_key(|&c| (ts(c), c))
            .or_else(|| cands().filter(|&c| c != cur).min_by_key(|&c| (ts(c), c)))?;
        let (a0, a1) = (ts(anchor), self.ops.end(anchor as usize));
        cands()
            .filter(|&c| c != cur && ts(c) <= a0 && self.ops.end(c as usize) >= a1)
            .max_by_key(|&c| {
                (
                    self.ops.dur.get(c as usize).copied().unwrap_or(0),
                    Reverse(c),
                )
            })
    }

    /// [`Joiner::containing`] for every row that is joined (PTA, not negative, with an
    /// allocation time), in one sweep per name: rows by time, ops entering a heap keyed like
    /// `containing` (shortest, then latest start, then lowest id) as their start passes, and
    /// leaving it for good once they end before the row (times only grow). O((ops + rows) log ops)
    /// whatever the trace — the backward scan of `containing` is linear per row when one long op
    /// (a damaged `dur`) keeps the running maximum of ends high.
    pub fn containing_all(&self, rows: &[MemRow]) -> Vec<Option<u32>> {
        use std::collections::BinaryHeap;
        let mut todo: Vec<(u32, i64, usize)> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.source == RowSource::Pta && !r.negative)
            .filter_map(|(i, r)| Some((r.name, r.alloc_ns()?, i)))
            .collect();
        todo.sort_unstable();
        let groups: Vec<&[(u32, i64, usize)]> = todo.chunk_by(|a, b| a.0 == b.0).collect();
        let found: Vec<Vec<(usize, u32)>> = groups
            .par_iter()
            .map(|g| {
                let mut out = Vec::new();
                let Some(idx) = g.first().and_then(|f| self.by_name.get(&f.0)) else {
                    return out;
                };
                let mut heap: BinaryHeap<Reverse<(i64, i64, u32)>> = BinaryHeap::new();
                let mut p = 0;
                for &(_, t, row) in g.iter() {
                    while let (Some(&ts), Some(&id)) = (idx.ts.get(p), idx.ids.get(p)) {
                        if ts > t {
                            break;
                        }
                        let dur = self.ops.dur.get(id as usize).copied().unwrap_or(0);
                        heap.push(Reverse((dur, -ts, id)));
                        p += 1;
                    }
                    while let Some(Reverse((_, _, id))) = heap.peek() {
                        if self.ops.end(*id as usize) >= t {
                            break;
                        }
                        heap.pop();
                    }
                    if let Some(Reverse((_, _, id))) = heap.peek() {
                        out.push((row, *id));
                    }
                }
                out
            })
            .collect();
        let mut result = vec![None; rows.len()];
        for (row, id) in found.into_iter().flatten() {
            if let Some(slot) = result.get_mut(row) {
                *slot = Some(id);
            }
        }
        result
    }

    /// The join for one row (see the module docs).
    pub fn attribute(&self, row: &MemRow) -> Attribution {
        let inner = row.alloc_ns().and_then(|t| self.containing(row.name, t));
        self.attribute_with(row, inner)
    }

    /// The join for one row whose innermost containing op (see [`Joiner::containing`]) is known.
    fn attribute_with(&self, row: &MemRow, inner: Option<u32>) -> Attribution {
        if row.source == RowSource::Ge || row.negative {
            return NONE;
        }
        let Some(t) = row.alloc_ns() else { return NONE };
        let stack_of = |i: u32| self.ops.stack.get(i as usize).copied().unwrap_or(0);
        match inner {
            Some(op) => {
                let s = stack_of(op);
                if s != 0 {
                    return Attribution {
                        op: Some(op),
                        stack_op: Some(op),
                        stack: s,
                        source: StackSource::Direct,
                    };
                }
                match self.forward_of(op) {
                    Some(f) => Attribution {
                        op: Some(op),
                        stack_op: Some(f),
                        stack: stack_of(f),
                        source: StackSource::ViaForward,
                    },
                    None => Attribution {
                        op: Some(op),
                        ..NONE
                    },
                }
            }
            None => match self.python_rule(row.name, t) {
                Some(op) => Attribution {
                    op: None,
                    stack_op: Some(op),
                    stack: stack_of(op),
                    source: StackSource::Approximate,
                },
                None => NONE,
            },
        }
    }
}

/// Joins every row to `ops` (in parallel over rows).
pub fn attribute_rows(rows: &[MemRow], ops: &Ops) -> Vec<Attribution> {
    let j = Joiner::new(ops);
    let inner = j.containing_all(rows);
    rows.par_iter()
        .zip(inner.par_iter())
        .map(|(r, &c)| j.attribute_with(r, c))
        .collect()
}

/// True for a frame inside a library: site-packages, the standard library, torch, torch_npu,
/// or a pseudo-file like `<string>` (the rule of [`crate::frames`], applied to the path before
/// the frame's `(line): name`).
pub fn is_library_frame(frame: &str) -> bool {
    let f = frame.trim();
    if f.starts_with('<') || f.is_empty() {
        return true;
    }
    is_library_path(f.split('(').next().unwrap_or(f))
}

/// The frames of a torch_npu call stack (separated by `;\r\n`, innermost first).
pub fn frames(stack: &str) -> impl Iterator<Item = &str> {
    stack.split(';').map(str::trim).filter(|f| !f.is_empty())
}

/// `(top user frame, innermost frame)` of a stack; the top falls back to the innermost frame when
/// every frame is library code.
pub fn stack_frames(stack: &str) -> (&str, &str) {
    let innermost = frames(stack).next().unwrap_or("");
    let top = frames(stack)
        .find(|f| !is_library_frame(f))
        .unwrap_or(innermost);
    (top, innermost)
}

/// Top and innermost frame of every interned stack, interned into `frames`.
///
/// Index = stack id; id 0 (no stack) maps to `(0, 0)`.
pub fn frame_table(stacks: &Interner, frames_out: &mut Interner) -> Vec<(u32, u32)> {
    (0..stacks.len())
        .map(|i| {
            let (top, inner) = stack_frames(stacks.get(i as u32));
            (frames_out.intern(top), frames_out.intern(inner))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_frame_skips_libraries() {
        let s = "/h/.local/lib/python3.9/site-packages/torch/_utils.py(180): _rebuild_tensor;\r\n/h/miniconda3/lib/python3.9/multiprocessing/queues.py(122): get;\r\n/h/imagenet_script/main.py(345): train;\r\n<string>(1): <module>";
        let (top, inner) = stack_frames(s);
        assert_eq!(top, "/h/imagenet_script/main.py(345): train");
        assert!(inner.ends_with("_rebuild_tensor"));
        assert_eq!(
            stack_frames("<string>(1): <module>").0,
            "<string>(1): <module>"
        );
    }

    fn ops(list: &[(u32, i64, i64, i64, i64, u32)]) -> Ops {
        // (name, tid, ts, dur, seq, stack)
        let mut o = Ops::default();
        for &(name, tid, ts, dur, seq, stack) in list {
            o.name.push(name);
            o.pid.push(1);
            o.tid.push(tid);
            o.ts.push(ts);
            o.dur.push(dur);
            o.seq.push(seq);
            o.fwd_tid.push(0);
            o.stack.push(stack);
        }
        o
    }

    #[test]
    fn direct_via_forward_approximate_none() {
        // names: 1 = aten::empty, 2 = MulBackward0, 3 = aten::mul
        let o = ops(&[
            (3, 1, 100, 50, 7, 11), // 0 forward op seq 7 with stack
            (1, 1, 110, 5, -1, 12), // 1 aten::empty in forward, stack
            (1, 2, 500, 5, -1, 0),  // 2 aten::empty in backward, no stack
            (2, 2, 490, 40, 7, 0),  // 3 MulBackward0 seq 7
            (1, 2, 900, 5, -1, 0),  // 4 aten::empty in backward, no node
        ]);
        let j = Joiner::new(&o);
        let row = row_at;
        let a = j.attribute(&row(1, 115));
        assert_eq!((a.source, a.stack), (StackSource::Direct, 12));
        let a = j.attribute(&row(1, 505)); // contained by op 2, boundary inclusive
        assert_eq!(
            (a.source, a.stack, a.op),
            (StackSource::ViaForward, 11, Some(2))
        );
        let a = j.attribute(&row(1, 903));
        assert_eq!((a.source, a.op), (StackSource::None, Some(4)));
        let a = j.attribute(&row(1, 300)); // no containing op: nearest earlier with stack
        assert_eq!((a.source, a.stack), (StackSource::Approximate, 12));
        let a = j.attribute(&row(1, 50));
        assert_eq!(a.source, StackSource::None);
    }

    fn row_at(name: u32, t: i64) -> MemRow {
        let mut r = MemRow::new(name, RowSource::Pta, 512, false, 0);
        r.set_alloc_ns(Some(t));
        r
    }

    #[test]
    fn the_sweep_finds_what_the_per_row_scan_finds() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for round in 0..40 {
            let n = 1 + next(300) as usize;
            let spec: Vec<(u32, i64, i64, i64, i64, u32)> = (0..n)
                .map(|_| {
                    let dur = if next(20) == 0 { next(5000) } else { next(50) };
                    (
                        1 + next(3) as u32,
                        next(2) as i64,
                        next(1000) as i64,
                        dur as i64,
                        -1,
                        next(2) as u32,
                    )
                })
                .collect();
            let o = ops(&spec);
            let j = Joiner::new(&o);
            let rows: Vec<MemRow> = (0..200)
                .map(|_| row_at(1 + next(4) as u32, next(1200) as i64 - 50))
                .collect();
            let all = j.containing_all(&rows);
            for (r, got) in rows.iter().zip(&all) {
                let want = j.containing(r.name, r.alloc_ns().unwrap_or(0));
                assert_eq!(*got, want, "round {round}, row at {:?}", r.alloc_ns());
            }
            let batch = attribute_rows(&rows, &o);
            for (r, a) in rows.iter().zip(&batch) {
                assert_eq!(*a, j.attribute(r));
            }
        }
    }

    /// The join's indexes against their definitions, checked op by op over all ops (no sort, no
    /// map): many ties in start, end, name, thread and sequence number, so every tie-break counts.
    #[test]
    fn the_indexes_answer_as_their_definitions() {
        let mut rng = fastrand::Rng::with_seed(21);
        for round in 0..300 {
            let n = rng.usize(1..60);
            let spec: Vec<(u32, i64, i64, i64, i64, u32)> = (0..n)
                .map(|_| {
                    (
                        rng.u32(1..5),
                        rng.i64(-2..2),
                        rng.i64(0..30),
                        rng.i64(0..12),
                        rng.i64(-2..4),
                        if rng.bool() { rng.u32(1..9) } else { 0 },
                    )
                })
                .collect();
            let o = ops(&spec);
            let j = Joiner::new(&o);
            let ts = |i: usize| spec[i].2;
            let end = |i: usize| spec[i].2 + spec[i].3;
            // Nesting: the op placed last before `i` on its thread (start, then longer, then the
            // later id first) among those that end no earlier than `i`.
            let place = |i: usize| (ts(i), std::cmp::Reverse(end(i)), std::cmp::Reverse(i));
            let parent: Vec<u32> = (0..n)
                .map(|i| {
                    (0..n)
                        .filter(|&k| spec[k].1 == spec[i].1 && place(k) < place(i))
                        .filter(|&k| end(k) >= end(i))
                        .max_by_key(|&k| place(k))
                        .map_or(u32::MAX, |k| k as u32)
                })
                .collect();
            assert_eq!(j.parent, parent, "round {round}");
            for name in 0..6u32 {
                for t in -2..45 {
                    let same = || (0..n).filter(|&k| spec[k].0 == name);
                    let inner = same()
                        .filter(|&k| ts(k) <= t && end(k) >= t)
                        .min_by_key(|&k| (spec[k].3, -ts(k), k))
                        .map(|k| k as u32);
                    assert_eq!(j.containing(name, t), inner, "round {round} {name} {t}");
                    let python = same()
                        .filter(|&k| spec[k].5 != 0 && ts(k) <= t)
                        .max_by_key(|&k| (ts(k), k))
                        .map(|k| k as u32);
                    assert_eq!(j.python_rule(name, t), python, "round {round} {name} {t}");
                }
            }
            for op in 0..n {
                // The autograd node: `op` or the nearest enclosing op with a sequence number.
                let mut cur = op;
                while spec[cur].4 < 0 && parent[cur] != u32::MAX {
                    cur = parent[cur] as usize;
                }
                let seq = spec[cur].4;
                let cands: Vec<usize> = (0..n)
                    .filter(|&c| c != cur && spec[c].4 == seq && spec[c].5 != 0)
                    .collect();
                let want = if seq < 0 {
                    None
                } else {
                    let t = ts(op);
                    let anchor = cands
                        .iter()
                        .copied()
                        .filter(|&c| ts(c) <= t)
                        .max_by_key(|&c| (ts(c), c))
                        .or_else(|| cands.iter().copied().min_by_key(|&c| (ts(c), c)));
                    anchor.and_then(|a| {
                        cands
                            .iter()
                            .copied()
                            .filter(|&c| ts(c) <= ts(a) && end(c) >= end(a))
                            .max_by_key(|&c| (spec[c].3, std::cmp::Reverse(c)))
                            .map(|c| c as u32)
                    })
                };
                assert_eq!(j.forward_of(op as u32), want, "round {round} op {op}");
            }
        }
    }

    #[test]
    fn one_endless_op_does_not_make_the_join_quadratic() {
        // Op 0 (a damaged dur) spans everything; 100,000 later ops of the same name each last 1 ns.
        // The per-row backward scan would visit all of them for every row; the sweep does not.
        let mut spec = vec![(1u32, 1i64, 0i64, i64::MAX / 4, -1i64, 5u32)];
        spec.extend((0..100_000).map(|k| (1, 1, 10 + 2 * k, 1, -1, 0)));
        let o = ops(&spec);
        let rows: Vec<MemRow> = (0..20_000).map(|k| row_at(1, 11 + 10 * k)).collect();
        let a = attribute_rows(&rows, &o);
        assert!(a
            .iter()
            .all(|x| x.source == StackSource::None || x.source == StackSource::Direct));
        // A row at an op's start is inside that op (shorter than op 0), which has no stack.
        assert_eq!(a[0].op, Some(1));
        assert_eq!(a[0].source, StackSource::None);
    }
}
