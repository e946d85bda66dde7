//! The two sides' curves on one axis, and their difference: for a profiler rank pair the framework
//! allocator's total (allocated or reserved) over time, lined up at each side's start or at the
//! first step both sides hold; for two SOMAS dumps the in-use bytes along the candidate's execution
//! order, each node against its matched baseline node.
//!
//! Both curves are step functions (a value holds until the next record), so the exact overlay is
//! the union of the two sides' change points with each side's value in force at each. Long curves
//! are reduced to at most `max_points` buckets keeping each side's maximum and the difference of
//! largest magnitude within the bucket, so a peak or a spike of the difference never vanishes.

use super::delta;
use super::profiler::{describe, matched_ranks, CompareOptions, RankKey};
use crate::profiler::memory_record::Metric;
use crate::profiler::{JobAnalysis, RankAnalysis};
use crate::somas::{Analysis, SomasModel};

/// Where the two time axes are lined up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    /// Each side's start (its capture start, or its step's start when steps are compared).
    #[default]
    Start,
    /// The start of the first `ProfilerStep#N` both sides hold (the lowest common N).
    Step,
}

/// Two curves on one axis and their difference (`candidate − baseline`), point by point.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Overlay {
    /// What `x` counts: `"ns"` (time since the alignment origin) or `"index"` (execution order).
    pub x_kind: &'static str,
    /// How the profiler sides were lined up (SOMAS: `start`, the first node).
    pub align: Align,
    /// The baseline's origin (ns; `x` = 0 there); 0 for SOMAS.
    pub base_origin_ns: i64,
    /// The candidate's origin (ns); 0 for SOMAS.
    pub candidate_origin_ns: i64,
    /// Points of the overlay, ascending.
    pub x: Vec<i64>,
    /// The baseline's value at each point (`None` outside its span or where it has no match).
    pub base: Vec<Option<u64>>,
    /// The candidate's value at each point.
    pub candidate: Vec<Option<u64>>,
    /// `candidate − baseline` where both have a value.
    pub delta: Vec<Option<i64>>,
    /// True when the exact overlay had more points than asked for and was reduced to buckets.
    pub reduced: bool,
    /// Points of the exact overlay (before any reduction).
    pub exact_points: u64,
    /// What the reader should know (e.g. no common step: lined up at the start instead).
    pub notes: Vec<String>,
}

/// One side's step function: change points (offset from its origin) and values, and its span.
struct Steps {
    xs: Vec<i64>,
    ys: Vec<u64>,
    span: (i64, i64),
}

impl Steps {
    /// The value in force at `x` (`None` before the first point or outside the span).
    fn at(&self, x: i64) -> Option<u64> {
        if x < self.span.0 || x > self.span.1 {
            return None;
        }
        let i = self.xs.partition_point(|&p| p <= x);
        i.checked_sub(1).and_then(|j| self.ys.get(j).copied())
    }
}

/// Points of an overlay: x, the baseline's and the candidate's values.
type Points = (Vec<i64>, Vec<Option<u64>>, Vec<Option<u64>>);

fn overlay(b: &Steps, c: &Steps) -> Points {
    let mut x: Vec<i64> = b.xs.iter().chain(c.xs.iter()).copied().collect();
    x.sort_unstable();
    x.dedup();
    let base = x.iter().map(|&p| b.at(p)).collect();
    let candidate = x.iter().map(|&p| c.at(p)).collect();
    (x, base, candidate)
}

fn finish(
    x_kind: &'static str,
    align: Align,
    origins: (i64, i64),
    (x, base, candidate): Points,
    max_points: usize,
    notes: Vec<String>,
) -> Overlay {
    let diff = |b: Option<u64>, c: Option<u64>| Some(delta(b?, c?));
    let exact_points = x.len() as u64;
    let max_points = max_points.max(2);
    if x.len() <= max_points {
        let d = base
            .iter()
            .zip(&candidate)
            .map(|(&b, &c)| diff(b, c))
            .collect();
        return Overlay {
            x_kind,
            align,
            base_origin_ns: origins.0,
            candidate_origin_ns: origins.1,
            x,
            base,
            candidate,
            delta: d,
            reduced: false,
            exact_points,
            notes,
        };
    }
    // Equal-width buckets over the x range; a bucket without points is left out.
    let (lo, hi) = (
        x.first().copied().unwrap_or(0),
        x.last().copied().unwrap_or(0),
    );
    let width = ((i128::from(hi) - i128::from(lo)) / max_points as i128).max(1);
    let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut cur: Option<i128> = None;
    for (k, &p) in x.iter().enumerate() {
        let bucket = (i128::from(p) - i128::from(lo)) / width;
        let (b, c) = (
            base.get(k).copied().flatten(),
            candidate.get(k).copied().flatten(),
        );
        let d = diff(b, c);
        if cur != Some(bucket) {
            cur = Some(bucket);
            out.0.push(p);
            out.1.push(b);
            out.2.push(c);
            out.3.push(d);
            continue;
        }
        let max = |slot: Option<&mut Option<u64>>, v: Option<u64>| {
            if let Some(s) = slot {
                *s = (*s).max(v);
            }
        };
        max(out.1.last_mut(), b);
        max(out.2.last_mut(), c);
        if let (Some(slot), Some(v)) = (out.3.last_mut(), d) {
            if slot.is_none_or(|s: i64| v.unsigned_abs() > s.unsigned_abs()) {
                *slot = Some(v);
            }
        }
    }
    Overlay {
        x_kind,
        align,
        base_origin_ns: origins.0,
        candidate_origin_ns: origins.1,
        x: out.0,
        base: out.1,
        candidate: out.2,
        delta: out.3,
        reduced: true,
        exact_points,
        notes,
    }
}

/// A side's window: its step span when steps are compared, else the whole run.
fn window(r: &RankAnalysis, step: Option<u64>) -> Option<(i64, i64)> {
    let n = step?;
    r.steps.iter().find(|s| s.step == n).map(|s| (s.ts, s.end))
}

fn side_steps(r: &RankAnalysis, metric: Metric, win: Option<(i64, i64)>, origin: i64) -> Steps {
    let Some(fw) = r.framework() else {
        return Steps {
            xs: Vec::new(),
            ys: Vec::new(),
            span: (0, -1),
        };
    };
    let (ts, vs) = fw.points(metric);
    let (s, e) = win.unwrap_or((
        ts.first().copied().unwrap_or(0),
        ts.last().copied().unwrap_or(-1),
    ));
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    // The value in force at a window's start holds from there.
    if win.is_some() {
        if let Some(v) = fw.value_at(metric, s) {
            xs.push(s.saturating_sub(origin));
            ys.push(v);
        }
    }
    for (&t, &v) in ts.iter().zip(&vs) {
        if t < s || t > e {
            continue;
        }
        let x = t.saturating_sub(origin);
        if xs.last() == Some(&x) {
            // Records at one time: the last holds.
            if let Some(y) = ys.last_mut() {
                *y = v;
            }
        } else {
            xs.push(x);
            ys.push(v);
        }
    }
    Steps {
        xs,
        ys,
        span: (s.saturating_sub(origin), e.saturating_sub(origin)),
    }
}

/// The framework allocator's `metric` curves of the rank pair `key` (as
/// [`super::compare_jobs`] pairs ranks with the same `opts`), overlaid; `None` when no such pair.
pub fn profiler_overlay(
    base: &JobAnalysis,
    candidate: &JobAnalysis,
    opts: &CompareOptions,
    key: &RankKey,
    metric: Metric,
    align: Align,
    max_points: usize,
) -> Option<Overlay> {
    let mut notes = Vec::new();
    let (_, b, c) = matched_ranks(base, candidate, &mut notes)
        .into_iter()
        .find(|(k, _, _)| k == key)?;
    let (bw, cw) = (window(b, opts.base_step), window(c, opts.candidate_step));
    let start =
        |r: &RankAnalysis, w: Option<(i64, i64)>| w.map_or_else(|| r.capture_start_ns(), |w| w.0);
    let mut origins = (start(b, bw), start(c, cw));
    let mut used = Align::Start;
    if align == Align::Step {
        if bw.is_some() || cw.is_some() {
            notes.push("steps are compared: each side starts at its step's start".to_string());
        } else {
            let common = b
                .steps
                .iter()
                .filter(|s| c.steps.iter().any(|t| t.step == s.step))
                .min_by_key(|s| s.step);
            match common.and_then(|s| Some((s, c.steps.iter().find(|t| t.step == s.step)?))) {
                Some((s, t)) => {
                    origins = (s.ts, t.ts);
                    used = Align::Step;
                    notes.push(format!("lined up at the start of ProfilerStep#{}", s.step));
                }
                None => notes.push(format!(
                    "{}: no step held by both sides; lined up at the start instead",
                    describe(key)
                )),
            }
        }
    }
    let bs = side_steps(b, metric, bw, origins.0);
    let cs = side_steps(c, metric, cw, origins.1);
    Some(finish(
        "ns",
        used,
        origins,
        overlay(&bs, &cs),
        max_points,
        notes,
    ))
}

/// In-use bytes along the candidate's execution order, each node against its matched baseline
/// node (nodes matched as [`super::compare_dumps`] matches them); a candidate node without a
/// match has no baseline value. `x` is the candidate's execution index.
pub fn somas_overlay(
    bm: &SomasModel,
    ba: &Analysis,
    cm: &SomasModel,
    ca: &Analysis,
    max_points: usize,
) -> Overlay {
    let mut rows: Vec<(i64, Option<u64>, Option<u64>)> = super::somas::matched_nodes(bm, cm)
        .iter()
        .enumerate()
        .map(|(j, matched)| {
            let cj = cm.nodes.index.get(j).copied().unwrap_or(0);
            let b = matched.map(|i| ba.in_use_at(bm.nodes.index.get(i).copied().unwrap_or(0)));
            (i64::from(cj), b, Some(ca.in_use_at(cj)))
        })
        .collect();
    rows.sort_by_key(|r| r.0);
    let x: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let base: Vec<Option<u64>> = rows.iter().map(|r| r.1).collect();
    let candidate: Vec<Option<u64>> = rows.iter().map(|r| r.2).collect();
    let unmatched = base.iter().filter(|b| b.is_none()).count();
    let mut notes = Vec::new();
    if unmatched > 0 {
        notes.push(format!(
            "{unmatched} candidate node(s) have no baseline node: no baseline value there"
        ));
    }
    finish(
        "index",
        Align::Start,
        (0, 0),
        (x, base, candidate),
        max_points,
        notes,
    )
}
