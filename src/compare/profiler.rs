//! Comparing two torch_npu / MindSpore profiler jobs (or two steps of the same ranks).
//!
//! Ranks are paired by (role, rank, step folder). For each pair, each side is the whole capture
//! of the rank or, with [`CompareOptions`] steps, the span of one `ProfilerStep#N`. Of each side
//! we take the framework allocator's peak allocated and reserved (within the span), the live set
//! at the allocated peak grouped by top user frame (with the group of blocks allocated before the
//! capture, so the groups add up to the allocator's total), the allocations grouped by op name
//! and frame, and the blocks not released by the end of the span. Rows of two runs have no shared
//! identity, so blocks are matched by what describes them: (op name, frame) for allocations and
//! (op name, frame, size) for unreleased blocks, counted.

use super::{delta, growth_percent};
use crate::diag::Severity;
use crate::profiler::analysis::{JobAnalysis, RankAnalysis};
use crate::profiler::memory_record::Metric;
use crate::profiler::queries::RowFilter;
use serde::Serialize;
use std::collections::BTreeMap;

/// What to compare within each rank pair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompareOptions {
    /// Compare the baseline's `ProfilerStep#N` span (with `candidate_step`) instead of the
    /// whole capture.
    pub base_step: Option<u64>,
    /// The candidate's step.
    pub candidate_step: Option<u64>,
}

/// A rank's identity in a job.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct RankKey {
    /// Role (empty when unknown).
    pub role: String,
    /// Rank (`null` when unknown).
    pub rank: Option<u32>,
    /// Step folder (`null` when the run folder is not in one).
    pub step: Option<u32>,
}

/// The figures of one side of a rank pair.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SideFigures {
    /// The step compared (`null` = the whole capture).
    pub step: Option<u64>,
    /// Start of the compared span (ns): the capture start or the step start.
    pub start_ns: i64,
    /// End of the compared span (ns), when a step is compared.
    pub end_ns: Option<i64>,
    /// Peak of the allocator's allocated total within the span (bytes).
    pub peak_allocated_bytes: u64,
    /// When it was first reached (ns).
    pub peak_allocated_time_ns: i64,
    /// The same time relative to `start_ns` (runs start at different clock times).
    pub peak_allocated_offset_ns: i64,
    /// Peak of the allocator's reserved total within the span (bytes).
    pub peak_reserved_bytes: u64,
    /// When it was first reached (ns).
    pub peak_reserved_time_ns: i64,
    /// The same time relative to `start_ns`.
    pub peak_reserved_offset_ns: i64,
    /// Allocation rows in the span.
    pub allocations: u64,
    /// Bytes of those allocations.
    pub allocated_bytes: u64,
    /// Blocks allocated in the span and not released by its end.
    pub unreleased_blocks: u64,
    /// Their bytes.
    pub unreleased_bytes: u64,
    /// False when the rank has no allocator curve (nothing to take a peak of).
    pub has_curve: bool,
}

/// One top-user-frame group of the live set at the two peaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FrameDiff {
    /// Top user frame (or the no-stack / before-capture group).
    pub frame: String,
    /// Bytes alive at the baseline's peak.
    pub base_bytes: u64,
    /// Bytes alive at the candidate's peak.
    pub candidate_bytes: u64,
    /// `candidate_bytes − base_bytes`.
    pub delta_bytes: i64,
    /// Blocks alive at the baseline's peak.
    pub base_count: u64,
    /// Blocks alive at the candidate's peak.
    pub candidate_count: u64,
}

/// Allocations sharing an op name and top user frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AllocGroup {
    /// Op name of the rows.
    pub name: String,
    /// Top user frame (or the no-stack group).
    pub frame: String,
    /// Rows.
    pub count: u64,
    /// Bytes.
    pub bytes: u64,
}

/// Unreleased blocks of one description the candidate has more of than the baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewUnreleased {
    /// Op name.
    pub name: String,
    /// Top user frame (or the no-stack group).
    pub frame: String,
    /// Block size (bytes).
    pub size: u64,
    /// Such blocks not released in the baseline.
    pub base_count: u64,
    /// Such blocks not released in the candidate.
    pub candidate_count: u64,
    /// `candidate_count − base_count` (> 0).
    pub new_count: u64,
    /// `new_count × size`.
    pub new_bytes: u64,
}

/// The comparison of one rank pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankPairDiff {
    /// The pair's identity.
    pub key: RankKey,
    /// Baseline figures.
    pub base: SideFigures,
    /// Candidate figures.
    pub candidate: SideFigures,
    /// Candidate − baseline peak allocated (bytes).
    pub peak_allocated_delta_bytes: i64,
    /// Growth of the peak allocated in percent (`null` when the baseline's is 0).
    pub peak_allocated_growth_percent: Option<f64>,
    /// Candidate − baseline peak reserved (bytes).
    pub peak_reserved_delta_bytes: i64,
    /// Growth of the peak reserved in percent.
    pub peak_reserved_growth_percent: Option<f64>,
    /// Every frame group alive at either peak, by bytes gained (largest gain first), then frame.
    pub live_at_peak: Vec<FrameDiff>,
    /// Frame groups whose bytes or count differ.
    pub changed_frames: u64,
    /// (op name, frame) groups allocated only in the baseline, largest first.
    pub only_base_allocations: Vec<AllocGroup>,
    /// (op name, frame) groups allocated only in the candidate, largest first.
    pub only_candidate_allocations: Vec<AllocGroup>,
    /// Unreleased blocks the candidate has more of, most bytes first.
    pub new_unreleased: Vec<NewUnreleased>,
    /// Number of differences found: changed frames, one-side groups, new unreleased kinds, and
    /// one for each differing peak (allocated, reserved). 0 = the pair compares equal.
    pub differences: u64,
}

/// The comparison of two profiler jobs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfilerComparison {
    /// `runs` (whole captures) or `steps`.
    pub mode: &'static str,
    /// Rank pairs, in (role, rank, step) order.
    pub pairs: Vec<RankPairDiff>,
    /// Ranks of the baseline without a match in the candidate.
    pub only_base_ranks: Vec<RankKey>,
    /// Ranks of the candidate without a match in the baseline.
    pub only_candidate_ranks: Vec<RankKey>,
    /// What could not be compared, in words (a step missing on one side, a rank without curve).
    pub notes: Vec<String>,
    /// Sum of the pairs' differences plus the unmatched ranks.
    pub differences: u64,
}

impl ProfilerComparison {
    /// The pairs whose peak allocated grew by more than `percent` (a baseline peak of 0 that
    /// became positive counts as grown), largest growth first.
    pub fn grown_beyond(&self, percent: f64) -> Vec<&RankPairDiff> {
        let mut out: Vec<&RankPairDiff> = self
            .pairs
            .iter()
            .filter(|p| match p.peak_allocated_growth_percent {
                Some(g) => g > percent,
                None => p.peak_allocated_delta_bytes > 0,
            })
            .collect();
        out.sort_by(|a, b| {
            b.peak_allocated_delta_bytes
                .cmp(&a.peak_allocated_delta_bytes)
        });
        out
    }
}

/// One side of a pair: a rank, whole or within a step span.
struct Side<'a> {
    rank: &'a RankAnalysis,
    step: Option<u64>,
    window: Option<(i64, i64)>,
}

impl Side<'_> {
    fn figures(&self) -> SideFigures {
        let r = self.rank;
        let start = self.window.map_or_else(|| r.capture_start_ns(), |w| w.0);
        let mut f = SideFigures {
            step: self.step,
            start_ns: start,
            end_ns: self.window.map(|w| w.1),
            ..SideFigures::default()
        };
        if let Some(fw) = r.framework() {
            let peak = |metric: Metric| -> Option<(u64, i64)> {
                match self.window {
                    None => fw.peak(metric).map(|p| (p.bytes, p.time_ns)),
                    Some((s, e)) => {
                        // The value in force at the start counts: a peak held into the span.
                        let mut best = fw.value_at(metric, s).map(|v| (v, s));
                        let k0 = fw.ts.partition_point(|&t| t < s);
                        let k1 = fw.ts.partition_point(|&t| t <= e);
                        for k in k0..k1 {
                            if let (Some(&t), Some(v)) = (fw.ts.get(k), fw.values(metric).get(k)) {
                                if best.is_none_or(|b| v > b.0) {
                                    best = Some((v, t));
                                }
                            }
                        }
                        best
                    }
                }
            };
            if let Some((b, t)) = peak(Metric::Allocated) {
                f.has_curve = true;
                f.peak_allocated_bytes = b;
                f.peak_allocated_time_ns = t;
                f.peak_allocated_offset_ns = t.saturating_sub(start);
            }
            if let Some((b, t)) = peak(Metric::Reserved) {
                f.peak_reserved_bytes = b;
                f.peak_reserved_time_ns = t;
                f.peak_reserved_offset_ns = t.saturating_sub(start);
            }
        }
        for i in self.allocation_rows() {
            f.allocations += 1;
            f.allocated_bytes = f
                .allocated_bytes
                .saturating_add(r.rows.get(i).map_or(0, |x| x.size));
        }
        for i in self.unreleased_rows() {
            f.unreleased_blocks += 1;
            f.unreleased_bytes = f
                .unreleased_bytes
                .saturating_add(r.rows.get(i).map_or(0, |x| x.size));
        }
        f
    }

    fn filter(&self) -> RowFilter {
        RowFilter {
            start_ns: self.window.map(|w| w.0),
            end_ns: self.window.map(|w| w.1),
            ..RowFilter::default()
        }
    }

    /// Allocation rows of the span (legacy negative rows are releases, not allocations).
    fn allocation_rows(&self) -> Vec<usize> {
        let r = self.rank;
        r.rows_matching(&self.filter())
            .into_iter()
            .map(|i| i as usize)
            .filter(|&i| r.rows.get(i).is_some_and(|x| !x.negative))
            .collect()
    }

    /// Rows allocated in the span and not released by its end.
    fn unreleased_rows(&self) -> Vec<usize> {
        let f = RowFilter {
            unreleased: true,
            ..self.filter()
        };
        self.rank
            .rows_matching(&f)
            .into_iter()
            .map(|i| i as usize)
            .collect()
    }

    /// The live set at the allocated peak by frame group: bytes and count per group.
    fn live_at_peak(&self, fig: &SideFigures) -> BTreeMap<String, (u64, u64)> {
        if !fig.has_curve {
            return BTreeMap::new();
        }
        self.rank
            .live_groups(fig.peak_allocated_time_ns, Some(fig.peak_allocated_bytes))
            .into_iter()
            .map(|g| (g.frame, (g.bytes, g.count)))
            .collect()
    }

    /// Allocations by (op name, frame group): count and bytes.
    fn alloc_groups(&self) -> BTreeMap<(String, String), (u64, u64)> {
        let r = self.rank;
        let mut out: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
        for i in self.allocation_rows() {
            let g = out
                .entry((r.name(i).to_string(), r.group_of(i).to_string()))
                .or_default();
            g.0 += 1;
            g.1 = g.1.saturating_add(r.rows.get(i).map_or(0, |x| x.size));
        }
        out
    }

    /// Unreleased blocks by (op name, frame group, size): count.
    fn unreleased_groups(&self) -> BTreeMap<(String, String, u64), u64> {
        let r = self.rank;
        let mut out: BTreeMap<(String, String, u64), u64> = BTreeMap::new();
        for i in self.unreleased_rows() {
            let size = r.rows.get(i).map_or(0, |x| x.size);
            *out.entry((r.name(i).to_string(), r.group_of(i).to_string(), size))
                .or_default() += 1;
        }
        out
    }
}

fn key_of(r: &RankAnalysis) -> RankKey {
    RankKey {
        role: r.summary.role.clone(),
        rank: r.summary.rank,
        step: r.summary.step,
    }
}

fn side<'a>(
    r: &'a RankAnalysis,
    step: Option<u64>,
    which: &str,
    notes: &mut Vec<String>,
) -> Option<Side<'a>> {
    let Some(n) = step else {
        return Some(Side {
            rank: r,
            step: None,
            window: None,
        });
    };
    match r.steps.iter().find(|s| s.step == n) {
        Some(s) => Some(Side {
            rank: r,
            step: Some(n),
            window: Some((s.ts, s.end)),
        }),
        None => {
            let k = key_of(r);
            notes.push(format!(
                "role {} rank {}: the {which} has no ProfilerStep#{n} (steps: {})",
                if k.role.is_empty() { "-" } else { &k.role },
                k.rank.map_or("unknown".to_string(), |x| x.to_string()),
                if r.steps.is_empty() {
                    "none".to_string()
                } else {
                    r.steps
                        .iter()
                        .map(|s| s.step.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ));
            None
        }
    }
}

fn compare_sides(key: RankKey, b: &Side<'_>, c: &Side<'_>) -> RankPairDiff {
    let bf = b.figures();
    let cf = c.figures();
    // Live set at each side's peak.
    let bl = b.live_at_peak(&bf);
    let cl = c.live_at_peak(&cf);
    let mut frames: Vec<FrameDiff> = Vec::new();
    let mut names: Vec<&String> = bl.keys().chain(cl.keys()).collect();
    names.sort();
    names.dedup();
    for f in names {
        let (bb, bc) = bl.get(f).copied().unwrap_or_default();
        let (cb, cc) = cl.get(f).copied().unwrap_or_default();
        frames.push(FrameDiff {
            frame: f.clone(),
            base_bytes: bb,
            candidate_bytes: cb,
            delta_bytes: delta(bb, cb),
            base_count: bc,
            candidate_count: cc,
        });
    }
    frames.sort_by(|x, y| {
        y.delta_bytes
            .cmp(&x.delta_bytes)
            .then(y.candidate_bytes.cmp(&x.candidate_bytes))
            .then(x.frame.cmp(&y.frame))
    });
    let changed_frames = frames
        .iter()
        .filter(|f| f.delta_bytes != 0 || f.base_count != f.candidate_count)
        .count() as u64;
    // Allocation groups on one side only.
    let ba = b.alloc_groups();
    let ca = c.alloc_groups();
    let only = |x: &BTreeMap<(String, String), (u64, u64)>,
                y: &BTreeMap<(String, String), (u64, u64)>| {
        let mut v: Vec<AllocGroup> = x
            .iter()
            .filter(|(k, _)| !y.contains_key(*k))
            .map(|((name, frame), &(count, bytes))| AllocGroup {
                name: name.clone(),
                frame: frame.clone(),
                count,
                bytes,
            })
            .collect();
        v.sort_by(|p, q| {
            q.bytes
                .cmp(&p.bytes)
                .then(p.name.cmp(&q.name))
                .then(p.frame.cmp(&q.frame))
        });
        v
    };
    let only_base_allocations = only(&ba, &ca);
    let only_candidate_allocations = only(&ca, &ba);
    // Unreleased blocks the candidate has more of.
    let bu = b.unreleased_groups();
    let cu = c.unreleased_groups();
    let mut new_unreleased: Vec<NewUnreleased> = cu
        .iter()
        .filter_map(|((name, frame, size), &cc)| {
            let bc = bu
                .get(&(name.clone(), frame.clone(), *size))
                .copied()
                .unwrap_or(0);
            (cc > bc).then(|| NewUnreleased {
                name: name.clone(),
                frame: frame.clone(),
                size: *size,
                base_count: bc,
                candidate_count: cc,
                new_count: cc - bc,
                new_bytes: (cc - bc).saturating_mul(*size),
            })
        })
        .collect();
    new_unreleased.sort_by(|p, q| {
        q.new_bytes
            .cmp(&p.new_bytes)
            .then(p.name.cmp(&q.name))
            .then(p.frame.cmp(&q.frame))
            .then(p.size.cmp(&q.size))
    });
    let pa = delta(bf.peak_allocated_bytes, cf.peak_allocated_bytes);
    let pr = delta(bf.peak_reserved_bytes, cf.peak_reserved_bytes);
    let differences = changed_frames
        + only_base_allocations.len() as u64
        + only_candidate_allocations.len() as u64
        + new_unreleased.len() as u64
        + u64::from(pa != 0)
        + u64::from(pr != 0);
    RankPairDiff {
        key,
        peak_allocated_delta_bytes: pa,
        peak_allocated_growth_percent: growth_percent(
            bf.peak_allocated_bytes,
            cf.peak_allocated_bytes,
        ),
        peak_reserved_delta_bytes: pr,
        peak_reserved_growth_percent: growth_percent(
            bf.peak_reserved_bytes,
            cf.peak_reserved_bytes,
        ),
        base: bf,
        candidate: cf,
        live_at_peak: frames,
        changed_frames,
        only_base_allocations,
        only_candidate_allocations,
        new_unreleased,
        differences,
    }
}

/// The rank pairs of two jobs by (role, rank, step folder), and the keys on one side only; two
/// single ranks with different keys are paired anyway, with a note.
type Matched<'a> = (
    Vec<(RankKey, &'a RankAnalysis, &'a RankAnalysis)>,
    Vec<RankKey>,
    Vec<RankKey>,
);

fn match_ranks<'a>(
    base: &'a JobAnalysis,
    candidate: &'a JobAnalysis,
    notes: &mut Vec<String>,
) -> Matched<'a> {
    let bmap: BTreeMap<RankKey, &RankAnalysis> =
        base.ranks.iter().map(|r| (key_of(r), r)).collect();
    let cmap: BTreeMap<RankKey, &RankAnalysis> =
        candidate.ranks.iter().map(|r| (key_of(r), r)).collect();
    let mut matched: Vec<(RankKey, &RankAnalysis, &RankAnalysis)> = bmap
        .iter()
        .filter_map(|(k, &b)| cmap.get(k).map(|&c| (k.clone(), b, c)))
        .collect();
    let mut only_base_ranks: Vec<RankKey> = bmap
        .keys()
        .filter(|k| !cmap.contains_key(*k))
        .cloned()
        .collect();
    let mut only_candidate_ranks: Vec<RankKey> = cmap
        .keys()
        .filter(|k| !bmap.contains_key(*k))
        .cloned()
        .collect();
    if matched.is_empty() && base.ranks.len() == 1 && candidate.ranks.len() == 1 {
        if let (Some(b), Some(c)) = (base.ranks.first(), candidate.ranks.first()) {
            let (kb, kc) = (key_of(b), key_of(c));
            notes.push(format!(
                "the single ranks were paired although they differ: baseline {}, candidate {}",
                describe(&kb),
                describe(&kc)
            ));
            matched.push((kb, b, c));
            only_base_ranks.clear();
            only_candidate_ranks.clear();
        }
    }
    (matched, only_base_ranks, only_candidate_ranks)
}

/// The matched rank pairs of two jobs, as [`compare_jobs`] pairs them (notes say what was paired
/// although its keys differ).
pub fn matched_ranks<'a>(
    base: &'a JobAnalysis,
    candidate: &'a JobAnalysis,
    notes: &mut Vec<String>,
) -> Vec<(RankKey, &'a RankAnalysis, &'a RankAnalysis)> {
    match_ranks(base, candidate, notes).0
}

/// Compares the ranks of `base` and `candidate`, pairing them by (role, rank, step folder).
///
/// When both jobs hold exactly one rank each and their keys differ (two single runs recorded on
/// different devices, or the same run under two roles), the two are paired anyway and a note says
/// so: comparing two single runs is what the user asked for.
pub fn compare_jobs(
    base: &JobAnalysis,
    candidate: &JobAnalysis,
    opts: &CompareOptions,
) -> ProfilerComparison {
    let mut notes = Vec::new();
    let (matched, only_base_ranks, only_candidate_ranks) = match_ranks(base, candidate, &mut notes);
    let mut pairs = Vec::new();
    for (key, b, c) in matched {
        // A file a side could not read is missing from its figures: without its error beside
        // them, a candidate whose files are broken reads as a run whose memory fell.
        for (which, r) in [("the baseline", b), ("the candidate", c)] {
            for d in r.warnings.iter().filter(|d| d.severity == Severity::Error) {
                notes.push(format!(
                    "{}: {which} could not use a file, its figures leave it out: {d}",
                    describe(&key)
                ));
            }
        }
        let (Some(sb), Some(sc)) = (
            side(b, opts.base_step, "baseline", &mut notes),
            side(c, opts.candidate_step, "candidate", &mut notes),
        ) else {
            continue;
        };
        if b.framework().is_none() || c.framework().is_none() {
            notes.push(format!(
                "{}: no allocator curve on {} (no memory_record and no operator_memory rows): \
                 peaks are 0",
                describe(&key),
                match (b.framework().is_none(), c.framework().is_none()) {
                    (true, true) => "either side",
                    (true, false) => "the baseline",
                    _ => "the candidate",
                }
            ));
        }
        pairs.push(compare_sides(key, &sb, &sc));
    }
    let differences = pairs.iter().map(|p| p.differences).sum::<u64>()
        + only_base_ranks.len() as u64
        + only_candidate_ranks.len() as u64;
    ProfilerComparison {
        mode: if opts.base_step.is_some() || opts.candidate_step.is_some() {
            "steps"
        } else {
            "runs"
        },
        pairs,
        only_base_ranks,
        only_candidate_ranks,
        notes,
        differences,
    }
}

/// `role R rank N [step S]`, as messages name a rank.
pub fn describe(k: &RankKey) -> String {
    let mut s = format!(
        "role {} rank {}",
        if k.role.is_empty() { "-" } else { &k.role },
        k.rank.map_or("unknown".to_string(), |x| x.to_string())
    );
    if let Some(st) = k.step {
        s.push_str(&format!(" step folder {st}"));
    }
    s
}
