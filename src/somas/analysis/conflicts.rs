//! Overwrite check: two data tensors conflict when their effective byte ranges and
//! their widened inclusive lifetimes both intersect and they are not members of one union group.
//!
//! Sweep line over execution order. Tensors that are alive together must be disjoint in a valid
//! plan, so the set of live tensors is small and mostly disjoint; it is kept in a max-end segment
//! tree over all tensors sorted by start offset. When a tensor starts, the tree reports the live
//! tensors with `start < its end` (a prefix of the leaf order) and `end > its start` (pruned by
//! the subtree maxima), so each query costs O((1 + reported) · log n) and the whole check
//! O(n log n + conflicts · log n), never all pairs.

use crate::somas::model::{SomasModel, NONE};
use serde::Serialize;

/// At most this many pairs are kept (a garbage plan could make every pair a conflict).
pub const DEFAULT_LIMIT: usize = 1_000_000;

/// Result of the overwrite check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Conflicts {
    /// Conflicting pairs of tensor rows `(a, b)` with `a < b`, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// False when the check was skipped (offsets not solved).
    pub checked: bool,
    /// True when more pairs existed than the limit allowed.
    pub truncated: bool,
}

/// Max-end segment tree over leaves in start-offset order; 0 marks an inactive leaf (an active
/// leaf always has end > 0, since only tensors with a non-empty range are inserted).
struct Tree {
    size: usize,
    max_end: Vec<u64>,
}

impl Tree {
    fn new(n: usize) -> Self {
        let size = n.next_power_of_two().max(1);
        Tree {
            size,
            max_end: vec![0; 2 * size],
        }
    }

    /// Activates `leaf` with `end`; stops climbing where an ancestor already holds a larger end.
    fn insert(&mut self, leaf: usize, end: u64) {
        let mut i = leaf + self.size;
        if let Some(x) = self.max_end.get_mut(i) {
            *x = end;
        }
        while i > 1 {
            i /= 2;
            match self.max_end.get_mut(i) {
                Some(x) if *x < end => *x = end,
                _ => break,
            }
        }
    }

    /// Deactivates `leaf`; stops climbing where an ancestor's maximum does not change.
    fn remove(&mut self, leaf: usize) {
        let mut i = leaf + self.size;
        let old = match self.max_end.get_mut(i) {
            Some(x) => std::mem::replace(x, 0),
            None => return,
        };
        while i > 1 {
            i /= 2;
            if self.max_end.get(i).copied().unwrap_or(0) > old {
                break;
            }
            let l = self.max_end.get(2 * i).copied().unwrap_or(0);
            let r = self.max_end.get(2 * i + 1).copied().unwrap_or(0);
            let new = l.max(r);
            if let Some(x) = self.max_end.get_mut(i) {
                *x = new;
            }
            if new == old {
                break;
            }
        }
    }

    /// Calls `hit(leaf)` for every active leaf in `[0, prefix)` whose end is above `above`.
    fn query(
        &self,
        prefix: usize,
        above: u64,
        stack: &mut Vec<(usize, usize, usize)>,
        mut hit: impl FnMut(usize),
    ) {
        if prefix == 0 {
            return;
        }
        stack.clear();
        stack.push((1, 0, self.size));
        while let Some((node, lo, hi)) = stack.pop() {
            if lo >= prefix || self.max_end.get(node).copied().unwrap_or(0) <= above {
                continue;
            }
            if hi - lo == 1 {
                hit(lo);
                continue;
            }
            let mid = (lo + hi) / 2;
            stack.push((2 * node + 1, mid, hi));
            stack.push((2 * node, lo, mid));
        }
    }
}

/// Runs the check over `model` with widened lifetimes `lo`/`hi` (per tensor row), keeping at most
/// `limit` pairs.
pub fn check(model: &SomasModel, lo: &[u32], hi: &[u32], limit: usize) -> Conflicts {
    let nt = model.tensors.len();
    // Items: tensors with a non-empty effective range.
    let mut items: Vec<(u64, u64, u32)> = Vec::new();
    for t in 0..nt as u32 {
        if !model.occupies(t) {
            continue;
        }
        let (s, e) = model.effective_range(t);
        if e > s {
            items.push((s, e, t));
        }
    }
    items.sort_unstable();
    let n = items.len();
    // For each leaf, how many leaves start below its end (the query prefix): one sort of the
    // ends and a merge, instead of a cache-missing binary search per query.
    let mut prefix = vec![0u32; n];
    {
        let mut by_end: Vec<(u64, u32)> = items
            .iter()
            .enumerate()
            .map(|(leaf, it)| (it.1, leaf as u32))
            .collect();
        by_end.sort_unstable();
        let mut k = 0usize;
        for (e, leaf) in by_end {
            while items.get(k).is_some_and(|it| it.0 < e) {
                k += 1;
            }
            if let Some(p) = prefix.get_mut(leaf as usize) {
                *p = k as u32;
            }
        }
    }
    let max = lo.iter().chain(hi.iter()).copied().max().unwrap_or(0) as usize;
    // Buckets of leaves by lifetime start and end (counting sort over the time axis).
    let bucket = |key: &dyn Fn(u32) -> usize| -> (Vec<u32>, Vec<u32>) {
        let mut off = vec![0u32; max + 2];
        for it in &items {
            if let Some(x) = off.get_mut(key(it.2) + 1) {
                *x += 1;
            }
        }
        for i in 1..off.len() {
            off[i] += off[i - 1];
        }
        let mut fill = off.clone();
        let mut out = vec![0u32; n];
        for (leaf, it) in items.iter().enumerate() {
            let k = key(it.2);
            if let Some(pos) = fill.get_mut(k) {
                if let Some(slot) = out.get_mut(*pos as usize) {
                    *slot = leaf as u32;
                }
                *pos += 1;
            }
        }
        (off, out)
    };
    let lo_of = |t: u32| lo.get(t as usize).copied().unwrap_or(0) as usize;
    let hi_of = |t: u32| hi.get(t as usize).copied().unwrap_or(0) as usize;
    let (start_off, mut by_start) = bucket(&lo_of);
    let (end_off, by_end) = bucket(&hi_of);
    // Within a time step, insert in tensor-id order so the output does not depend on offsets.
    for w in start_off.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if let Some(slice) = by_start.get_mut(a..b) {
            slice.sort_unstable_by_key(|&leaf| items.get(leaf as usize).map_or(0, |i| i.2));
        }
    }

    let group = &model.derived.union_group;
    let same_group = |a: u32, b: u32| {
        let ga = group.get(a as usize).copied().unwrap_or(NONE);
        ga != NONE && Some(&ga) == group.get(b as usize)
    };
    let mut tree = Tree::new(n);
    let mut stack = Vec::new();
    let mut out = Conflicts {
        checked: true,
        ..Conflicts::default()
    };
    for time in 0..=max {
        let s0 = start_off.get(time).copied().unwrap_or(0) as usize;
        let s1 = start_off.get(time + 1).copied().unwrap_or(0) as usize;
        for &leaf in by_start.get(s0..s1).unwrap_or(&[]) {
            let Some(&(s, e, t)) = items.get(leaf as usize) else {
                continue;
            };
            let upto = prefix.get(leaf as usize).copied().unwrap_or(0) as usize;
            tree.query(upto, s, &mut stack, |other| {
                if let Some(&(_, _, u)) = items.get(other) {
                    if !same_group(t, u) {
                        if out.pairs.len() < limit {
                            out.pairs.push((t.min(u), t.max(u)));
                        } else {
                            out.truncated = true;
                        }
                    }
                }
            });
            tree.insert(leaf as usize, e);
        }
        let e0 = end_off.get(time).copied().unwrap_or(0) as usize;
        let e1 = end_off.get(time + 1).copied().unwrap_or(0) as usize;
        for &leaf in by_end.get(e0..e1).unwrap_or(&[]) {
            tree.remove(leaf as usize);
        }
    }
    out.pairs.sort_unstable();
    out.pairs.dedup();
    out
}
