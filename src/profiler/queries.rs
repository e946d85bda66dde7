//! Questions about one analysed rank: names and frames of a row, the live set at a time, leak
//! candidates, curves for a window, and the rows a view's filter keeps.

use super::analysis::{
    FrameGroup, RankAnalysis, GROUP_BY_OP_NAME, GROUP_BY_SIZE_CLASS, NO_NAME, NO_STACK, UNTRACKED,
};
use super::memory_record::{allocator_series, Metric, Series};
use super::operator_memory::RowSource;
use super::size_class::SizeClass;
use std::borrow::Cow;

/// Which allocation rows a view asks for, in the terms of the analysis (absolute ns). Text
/// filters and sorting are the table's ([`crate::table`]); this is what needs the rows' meaning.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowFilter {
    /// Window start (ns): rows allocated at or after it.
    pub start_ns: Option<i64>,
    /// Window end (ns): rows allocated at or before it.
    pub end_ns: Option<i64>,
    /// Only PTA allocations alive at this time (ns), as [`RankAnalysis::live_at`] counts them.
    pub live_at: Option<i64>,
    /// Only allocations not released by `end_ns` (or never, without `end_ns`): leak candidates.
    pub unreleased: bool,
    /// Only rows whose group ([`RankAnalysis::group_of`]: top user frame or [`NO_STACK`]) is this.
    pub top_frame: Option<String>,
    /// Smallest size in bytes.
    pub min_size: Option<u64>,
    /// Largest size in bytes.
    pub max_size: Option<u64>,
}

impl RankAnalysis {
    /// The allocator series the rank's peak comes from (`PTA`, `MindSpore`, reconstructed, or
    /// `GE` when there is no framework series: [`allocator_series`]).
    pub fn framework(&self) -> Option<&Series> {
        allocator_series(&self.memory)
    }

    /// The rows the allocator of [`RankAnalysis::framework`] made: GE rows when that is `GE`,
    /// else the framework's (PTA) rows.
    pub fn allocator_rows(&self) -> RowSource {
        match self.framework() {
            Some(s) if s.component == "GE" => RowSource::Ge,
            _ => RowSource::Pta,
        }
    }

    /// The top user frame of row `i` (empty when it has no stack).
    pub fn top_frame(&self, i: usize) -> &str {
        let s = self.attribution.get(i).map_or(0, |a| a.stack);
        let f = self.stack_frames.get(s as usize).map_or(0, |f| f.0);
        self.frames.get(f)
    }

    /// The innermost frame of row `i`.
    pub fn innermost_frame(&self, i: usize) -> &str {
        let s = self.attribution.get(i).map_or(0, |a| a.stack);
        let f = self.stack_frames.get(s as usize).map_or(0, |f| f.1);
        self.frames.get(f)
    }

    /// The full call stack of row `i` (frames separated by `;\r\n`, innermost first).
    pub fn stack(&self, i: usize) -> &str {
        self.stacks
            .get(self.attribution.get(i).map_or(0, |a| a.stack))
    }

    /// The name of row `i`.
    pub fn name(&self, i: usize) -> &str {
        self.names.get(self.rows.get(i).map_or(0, |r| r.name))
    }

    /// True when row `i` is a live allocation of the rank's allocator
    /// ([`RankAnalysis::allocator_rows`]) at `t`: allocated at or before `t`, not yet released
    /// (release time after `t`, or never).
    pub fn is_live(&self, i: usize, t: i64) -> bool {
        self.is_live_of(i, t, self.allocator_rows())
    }

    fn is_live_of(&self, i: usize, t: i64, source: RowSource) -> bool {
        let Some(r) = self.rows.get(i) else {
            return false;
        };
        r.source == source
            && !r.negative
            && r.alloc_ns().is_some_and(|a| a <= t)
            && r.release_ns().is_none_or(|rel| rel > t)
    }

    /// Allocations of the rank's allocator alive at `t`, grouped by top user frame, largest
    /// first.
    pub fn live_at(&self, t: i64) -> Vec<FrameGroup> {
        let source = self.allocator_rows();
        self.frame_groups((0..self.rows.len()).filter(|&i| self.is_live_of(i, t, source)))
    }

    /// The rows `ids` grouped by [`RankAnalysis::group_of`]: bytes (saturating) and count per
    /// group, largest first, ties by frame.
    pub fn frame_groups(&self, ids: impl Iterator<Item = usize>) -> Vec<FrameGroup> {
        self.groups_by(ids, self.summary.group_by)
    }

    /// The rows `ids` grouped as `by` says ([`GROUP_BY_FRAME`](super::analysis::GROUP_BY_FRAME),
    /// [`GROUP_BY_OP_NAME`] or [`GROUP_BY_SIZE_CLASS`]; anything else: the rank's own
    /// `group_by`), largest first, ties by label. Size-class groups carry their size range, so a
    /// view filters the table to a group with the size filter.
    pub fn groups_by(&self, ids: impl Iterator<Item = usize>, by: &str) -> Vec<FrameGroup> {
        let by = match by {
            GROUP_BY_OP_NAME | GROUP_BY_SIZE_CLASS | super::analysis::GROUP_BY_FRAME => by,
            _ => self.summary.group_by,
        };
        let mut groups: std::collections::HashMap<Cow<'_, str>, (u64, u64, Option<SizeClass>)> =
            Default::default();
        for i in ids {
            let size = self.rows.get(i).map_or(0, |r| r.size);
            let (label, class) = if by == GROUP_BY_SIZE_CLASS {
                let c = SizeClass::of(size);
                (Cow::Owned(c.label()), Some(c))
            } else {
                (self.group_label(i, by), None)
            };
            let g = groups.entry(label).or_insert((0, 0, class));
            g.0 = g.0.saturating_add(size);
            g.1 += 1;
        }
        let mut out: Vec<FrameGroup> = groups
            .into_iter()
            .map(|(frame, (bytes, count, class))| FrameGroup {
                frame: frame.into_owned(),
                bytes,
                count,
                size_range: class.map(|c| [c.min, c.max]),
            })
            .collect();
        out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.frame.cmp(&b.frame)));
        out
    }

    /// [`RankAnalysis::live_at`] plus, when the allocator's total at `t` (`allocated`) exceeds
    /// what the live rows add up to, one [`UNTRACKED`] group for the difference: blocks allocated
    /// before the capture started (weights, optimizer state) have no operator_memory row, and
    /// with this group the groups add up to the allocator's total.
    pub fn live_groups(&self, t: i64, allocated: Option<u64>) -> Vec<FrameGroup> {
        self.live_groups_by(t, allocated, self.summary.group_by)
    }

    /// [`RankAnalysis::live_groups`] grouped as `by` says (see [`RankAnalysis::groups_by`]).
    pub fn live_groups_by(&self, t: i64, allocated: Option<u64>, by: &str) -> Vec<FrameGroup> {
        let source = self.allocator_rows();
        let mut live = self.groups_by(
            (0..self.rows.len()).filter(|&i| self.is_live_of(i, t, source)),
            by,
        );
        let seen = live.iter().fold(0u64, |a, g| a.saturating_add(g.bytes));
        if let Some(total) = allocated.filter(|&v| v > seen) {
            live.push(FrameGroup {
                frame: UNTRACKED.to_string(),
                bytes: total - seen,
                count: 0,
                size_range: None,
            });
            live.sort_by(|x, y| y.bytes.cmp(&x.bytes).then(x.frame.cmp(&y.frame)));
        }
        live
    }

    /// Points `(ts, bytes)` of `metric` of `component` (for curves; reduce them to a pixel width
    /// with the chart module's step envelope).
    pub fn curve(&self, component: &str, metric: Metric) -> (Vec<i64>, Vec<u64>) {
        points_of(&self.memory, component, metric)
    }

    /// True when row `i` is an allocation (not a legacy negative row) still held at `end`:
    /// released after `end`, or never released in the capture (`end = None`: never).
    pub fn is_unreleased_by(&self, i: usize, end: Option<i64>) -> bool {
        self.rows.get(i).is_some_and(|r| {
            !r.negative
                && match (r.release_ns(), end) {
                    (None, _) => true,
                    (Some(rel), Some(e)) => rel > e,
                    (Some(_), None) => false,
                }
        })
    }

    /// The group label of row `i` in live-set and unreleased groupings, as the rank's
    /// `group_by` says: its top user frame, or [`NO_STACK`]; its op name (or [`NO_NAME`]) when
    /// the rank groups by op name ([`GROUP_BY_OP_NAME`]: no row has a stack); its size class
    /// when it groups by size class ([`GROUP_BY_SIZE_CLASS`]: no stack and no op name either).
    pub fn group_of(&self, i: usize) -> Cow<'_, str> {
        self.group_label(i, self.summary.group_by)
    }

    /// The group label of row `i` when grouped as `by` says.
    fn group_label(&self, i: usize, by: &str) -> Cow<'_, str> {
        match by {
            GROUP_BY_OP_NAME => {
                let n = self.name(i);
                Cow::Borrowed(if n.is_empty() { NO_NAME } else { n })
            }
            GROUP_BY_SIZE_CLASS => {
                Cow::Owned(SizeClass::of(self.rows.get(i).map_or(0, |r| r.size)).label())
            }
            _ => {
                let f = self.top_frame(i);
                Cow::Borrowed(if f.is_empty() { NO_STACK } else { f })
            }
        }
    }

    /// The start of the rank's capture: the earliest time among its allocation rows, allocator
    /// records, module records and step spans (0 when it has none). Views show times relative to
    /// it, as MindStudio Insight does ("ms since capture start").
    pub fn capture_start_ns(&self) -> i64 {
        let rows = self
            .rows
            .iter()
            .flat_map(|r| [r.alloc_ns(), r.release_ns(), r.active_release_ns()])
            .flatten();
        let memory = self.memory.iter().filter_map(|s| s.ts.first().copied());
        let modules = self
            .modules
            .iter()
            .filter_map(|m| m.ts.iter().min().copied());
        let steps = self.steps.iter().map(|s| s.ts);
        rows.chain(memory)
            .chain(modules)
            .chain(steps)
            .min()
            .unwrap_or(0)
    }

    /// Leak candidates of a window, grouped by top user frame like [`RankAnalysis::live_at`]:
    /// rows allocated in `[start, end]` (either bound optional) and not released by `end` (never
    /// released, without `end`). The rows are exactly those [`RankAnalysis::rows_matching`] keeps for the
    /// same window and `unreleased`, so a group's count is what the filtered table lists.
    pub fn unreleased_groups(&self, start: Option<i64>, end: Option<i64>) -> Vec<FrameGroup> {
        self.unreleased_groups_by(start, end, self.summary.group_by)
    }

    /// [`RankAnalysis::unreleased_groups`] grouped as `by` says (see [`RankAnalysis::groups_by`]).
    pub fn unreleased_groups_by(
        &self,
        start: Option<i64>,
        end: Option<i64>,
        by: &str,
    ) -> Vec<FrameGroup> {
        let f = RowFilter {
            start_ns: start,
            end_ns: end,
            unreleased: true,
            ..RowFilter::default()
        };
        self.groups_by(self.rows_matching(&f).into_iter().map(|i| i as usize), by)
    }

    /// The rows `f` keeps, in row order: the part of the allocation table's filter that needs
    /// the analysis (time window, live set, leak candidates, frame group, size range).
    pub fn rows_matching(&self, f: &RowFilter) -> Vec<u32> {
        let source = self.allocator_rows();
        (0..self.rows.len() as u32)
            .filter(|&i| {
                let idx = i as usize;
                let Some(r) = self.rows.get(idx) else {
                    return false;
                };
                let t = r.time_ns().unwrap_or(i64::MIN);
                f.live_at.is_none_or(|at| self.is_live_of(idx, at, source))
                    && (!f.unreleased || self.is_unreleased_by(idx, f.end_ns))
                    && f.top_frame
                        .as_deref()
                        .is_none_or(|g| self.group_of(idx) == g)
                    && f.min_size.is_none_or(|m| r.size >= m)
                    && f.max_size.is_none_or(|m| r.size <= m)
                    && f.start_ns.is_none_or(|s| t >= s)
                    && f.end_ns.is_none_or(|e| t <= e)
            })
            .collect()
    }
}

/// Points `(ts, bytes)` of `metric` of `component` among `memory`.
fn points_of(memory: &[Series], component: &str, metric: Metric) -> (Vec<i64>, Vec<u64>) {
    memory
        .iter()
        .find(|s| s.component == component)
        .map(|s| s.points(metric))
        .unwrap_or_default()
}

/// The curve of `metric` of `component` among `memory` (a rank's series,
/// [`RankAnalysis::memory`], or those set aside, [`RankAnalysis::memory_aside`]) over
/// `[x_start, x_end)` reduced to `columns` pixel columns (min/max/first/last per column), for
/// drawing.
pub fn curve_window(
    memory: &[Series],
    component: &str,
    metric: Metric,
    x_start: i64,
    x_end: i64,
    columns: usize,
) -> crate::chart::Envelope {
    let (xs, ys) = points_of(memory, component, metric);
    crate::chart::step_envelope(&xs, &ys, x_start, x_end, columns)
}
