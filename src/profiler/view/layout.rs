//! The allocation timeline's layout: one bar per allocation, placed so that bars whose lifetimes
//! overlap never overlap on screen.

use crate::chart::RectSet;
use crate::profiler::analysis::RankAnalysis;
use crate::profiler::operator_memory::RowSource;
use std::collections::{BTreeMap, BTreeSet};

/// Class of a released PTA allocation in [`LifetimeLayout::rects`].
pub const CLASS_PTA: u8 = 0;
/// Class of a released `cann::` (GE) allocation.
pub const CLASS_GE: u8 = 1;
/// Class of an allocation not released in the capture (drawn to the capture end, marked); the
/// highest class, so it wins where merged pixel runs meet.
pub const CLASS_UNRELEASED: u8 = 2;

/// The allocation timeline: one rectangle per allocation, x from allocation to release (ns
/// relative to `origin`), y an offset in bytes chosen so that allocations whose lifetimes overlap
/// never overlap on screen, height = size.
#[derive(Debug, Clone, Default)]
pub struct LifetimeLayout {
    /// The rectangles; ids are row indices.
    pub rects: RectSet,
    /// Per row, its y offset (`None`: not drawn — legacy negative rows, rows without a time).
    pub offsets: Vec<Option<u64>>,
    /// Highest y used (bytes).
    pub height: u64,
    /// The time x = 0 stands for (ns).
    pub origin: i64,
    /// x where unreleased allocations end: the capture end relative to `origin`.
    pub end: i64,
}

/// Free space of the layout: best fit with coalescing, like a caching allocator, so the picture
/// stays as compact as the allocator's own memory would be.
#[derive(Default)]
struct BestFit {
    by_offset: BTreeMap<u64, u64>,
    by_size: BTreeSet<(u64, u64)>,
    top: u64,
    high: u64,
}

impl BestFit {
    fn insert_gap(&mut self, offset: u64, size: u64) {
        self.by_offset.insert(offset, size);
        self.by_size.insert((size, offset));
    }

    fn remove_gap(&mut self, offset: u64, size: u64) {
        self.by_offset.remove(&offset);
        self.by_size.remove(&(size, offset));
    }

    fn alloc(&mut self, size: u64) -> u64 {
        if size == 0 {
            return self.top;
        }
        if let Some(&(gap, offset)) = self.by_size.range((size, 0)..).next() {
            self.remove_gap(offset, gap);
            if gap > size {
                self.insert_gap(offset + size, gap - size);
            }
            return offset;
        }
        let offset = self.top;
        self.top = self.top.saturating_add(size);
        self.high = self.high.max(self.top);
        offset
    }

    fn free(&mut self, offset: u64, size: u64) {
        if size == 0 {
            return;
        }
        let (mut start, mut len) = (offset, size);
        if let Some((&po, &ps)) = self.by_offset.range(..offset).next_back() {
            if po.saturating_add(ps) == offset {
                self.remove_gap(po, ps);
                start = po;
                len += ps;
            }
        }
        let next = offset.saturating_add(size);
        if let Some(&ns) = self.by_offset.get(&next) {
            self.remove_gap(next, ns);
            len += ns;
        }
        if start.saturating_add(len) >= self.top {
            self.top = start;
        } else {
            self.insert_gap(start, len);
        }
    }
}

/// Lays out the allocations of `rank` for the timeline, times relative to `origin`.
///
/// Allocations are placed in time order (releases before allocations at equal times, as the
/// allocator's own totals count them) at the best-fitting free offset, so bars never overlap
/// and the height stays close to the peak of what the rows hold. `O(n log n)`.
pub fn lifetime_layout(rank: &RankAnalysis, origin: i64) -> LifetimeLayout {
    let end = rank.capture_end_ns;
    // (time, kind, row): kind 0 = release, 1 = allocation, 2 = release of a zero-length block
    // (after its own allocation).
    let mut events: Vec<(i64, u8, u32)> = Vec::with_capacity(rank.rows.len() * 2);
    for (i, r) in rank.rows.iter().enumerate() {
        let Some(a) = r.alloc_ns().filter(|_| !r.negative) else {
            continue;
        };
        events.push((a, 1, i as u32));
        if let Some(rel) = r.release_ns() {
            if rel > a {
                events.push((rel, 0, i as u32));
            } else {
                events.push((a, 2, i as u32));
            }
        }
    }
    events.sort_unstable();
    let mut fit = BestFit::default();
    let mut offsets: Vec<Option<u64>> = vec![None; rank.rows.len()];
    for (_, kind, i) in events {
        let i = i as usize;
        let Some(r) = rank.rows.get(i) else { continue };
        if kind == 1 {
            if let Some(o) = offsets.get_mut(i) {
                *o = Some(fit.alloc(r.size));
            }
        } else if let Some(Some(o)) = offsets.get(i) {
            fit.free(*o, r.size);
        }
    }
    let n = offsets.iter().filter(|o| o.is_some()).count();
    let mut rects = RectSet::with_capacity(n);
    for (i, (r, o)) in rank.rows.iter().zip(&offsets).enumerate() {
        let (Some(o), Some(a)) = (o, r.alloc_ns()) else {
            continue;
        };
        let stop = r.release_ns().unwrap_or(end).max(a);
        let class = if r.release_ns().is_none() {
            CLASS_UNRELEASED
        } else if r.source == RowSource::Ge {
            CLASS_GE
        } else {
            CLASS_PTA
        };
        rects.push(
            (a.saturating_sub(origin), stop.saturating_sub(origin)),
            (*o, o.saturating_add(r.size)),
            class,
            i as u32,
        );
    }
    LifetimeLayout {
        rects,
        offsets,
        height: fit.high,
        origin,
        end: end.saturating_sub(origin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::attribution::{Attribution, StackSource};
    use crate::profiler::operator_memory::MemRow;

    fn row(size: u64, alloc: i64, release: Option<i64>) -> MemRow {
        let mut r = MemRow::new(0, RowSource::Pta, size, false, 0);
        r.set_alloc_ns(Some(alloc));
        r.set_release_ns(release);
        r.set_duration_ns(release.map(|r| r - alloc));
        r
    }

    fn rank(rows: Vec<MemRow>) -> RankAnalysis {
        let end = rows
            .iter()
            .flat_map(|r| [r.alloc_ns(), r.release_ns()])
            .flatten()
            .max()
            .unwrap_or(0);
        RankAnalysis {
            attribution: vec![
                Attribution {
                    op: None,
                    stack_op: None,
                    stack: 0,
                    source: StackSource::None,
                };
                rows.len()
            ],
            rows,
            capture_end_ns: end,
            ..RankAnalysis::default()
        }
    }

    /// Brute force: no two rows whose lifetimes overlap share any byte of y.
    fn assert_disjoint(r: &RankAnalysis, l: &LifetimeLayout) {
        for i in 0..r.rows.len() {
            for j in i + 1..r.rows.len() {
                let (a, b) = (&r.rows[i], &r.rows[j]);
                let (Some(oa), Some(ob)) = (l.offsets[i], l.offsets[j]) else {
                    continue;
                };
                let life = |x: &MemRow| {
                    let s = x.alloc_ns().unwrap();
                    (s, x.release_ns().unwrap_or(i64::MAX))
                };
                let ((s1, e1), (s2, e2)) = (life(a), life(b));
                // Half-open lifetimes [alloc, release): a block freed at t can be reused at t.
                let overlap_t = s1 < e2 && s2 < e1 && a.size > 0 && b.size > 0;
                let overlap_y = oa < ob + b.size && ob < oa + a.size;
                assert!(
                    !(overlap_t && overlap_y),
                    "rows {i} and {j} overlap: {a:?} at {oa}, {b:?} at {ob}"
                );
            }
        }
    }

    #[test]
    fn layout_reuses_freed_space_and_never_overlaps() {
        let r = rank(vec![
            row(100, 0, Some(10)),
            row(50, 1, Some(20)),
            row(100, 10, None),
            row(30, 12, Some(15)),
            row(0, 13, Some(13)),
            row(70, 25, Some(30)),
        ]);
        let l = lifetime_layout(&r, 0);
        assert_disjoint(&r, &l);
        // Row 2 takes the space row 0 freed at the same instant.
        assert_eq!(l.offsets[2], Some(0));
        assert_eq!(l.height, 180);
        assert_eq!(l.rects.len(), 6);
        assert_eq!(l.rects.hit(11.0, 20.0), Some(2));
    }

    #[test]
    fn layout_of_a_pseudo_random_trace_is_disjoint() {
        let mut state = 7u64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        let mut rows = Vec::new();
        for k in 0..400 {
            let t = k as i64 * 3 + next(3) as i64;
            let release = if next(10) == 0 {
                None
            } else {
                Some(t + next(200) as i64)
            };
            rows.push(row(next(5000), t, release));
        }
        let r = rank(rows);
        let l = lifetime_layout(&r, 0);
        assert_disjoint(&r, &l);
    }

    #[test]
    fn unreleased_groups_match_the_table_filter() {
        let mut r = rank(vec![
            row(100, 0, Some(10)),
            row(50, 1, None),
            row(70, 5, Some(30)),
        ]);
        r.summary.unreleased_rows = 1;
        let all = r.unreleased_groups(None, None);
        assert_eq!(all.len(), 1);
        assert_eq!((all[0].bytes, all[0].count), (50, 1));
        // In [0, 20]: rows 1 (never) and 2 (released at 30, after the window).
        let w = r.unreleased_groups(Some(0), Some(20));
        assert_eq!((w[0].bytes, w[0].count), (120, 2));
        let f = crate::profiler::queries::RowFilter {
            start_ns: Some(0),
            end_ns: Some(20),
            unreleased: true,
            top_frame: Some(crate::profiler::analysis::NO_STACK.to_string()),
            ..Default::default()
        };
        assert_eq!(r.rows_matching(&f), vec![1, 2]);
    }
}
