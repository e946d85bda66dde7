//! Comparing two inputs of one family: a baseline and a candidate (two runs or jobs, two steps of
//! one run, two SOMAS dumps of the same graph), answering "what grew, where".
//!
//! This is the one module that sees two analyses at once. It sits above the families: it reads
//! their analysis types ([`crate::profiler::RankAnalysis`], [`crate::somas::analysis::Analysis`])
//! and no family imports it. Each comparison is a plain serde value (the view model): the CLI
//! prints it with `--json`, the exports are written from it, and a page shows it, so every front
//! end presents the same figures.
//!
//! - [`profiler`]: rank pairs matched by role, rank and step; peaks; the live set at each peak by
//!   top user frame with the difference per frame; allocations by op name and frame found on one
//!   side only; unreleased blocks new in the candidate.
//! - [`somas`]: nodes matched by name (then by execution order among repeated names); peak
//!   in-use, reuse figures and upper bound side by side; the per-node in-use difference; tensors
//!   whose size or lifetime changed, or found on one side only, by their effect on the peak.

#![warn(missing_docs)]

pub mod curves;
pub mod load;
pub mod profiler;
pub mod somas;

pub use profiler::{compare_jobs, CompareOptions, ProfilerComparison};
pub use somas::{compare_dumps, SomasComparison};

/// A comparison of either family, as `--json` prints it (`family` names which).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "family", rename_all = "lowercase")]
pub enum Comparison {
    /// Two torch_npu / MindSpore profiler jobs, runs or steps.
    Profiler(ProfilerComparison),
    /// Two SOMAS dumps.
    Somas(Box<SomasComparison>),
}

impl Comparison {
    /// Number of differences found (0 = the inputs compare equal).
    pub fn differences(&self) -> u64 {
        match self {
            Comparison::Profiler(c) => c.differences,
            Comparison::Somas(c) => c.differences,
        }
    }

    /// The files a side could not use, in words (see [`ProfilerComparison::unusable_files`]); a
    /// SOMAS dump that cannot be read fails the whole comparison instead, so it has none.
    pub fn unusable_files(&self) -> &[String] {
        match self {
            Comparison::Profiler(c) => &c.unusable_files,
            Comparison::Somas(_) => &[],
        }
    }
}

/// `candidate − base` as a signed byte count (saturating at the `i64` range).
pub fn delta(base: u64, candidate: u64) -> i64 {
    let d = i128::from(candidate) - i128::from(base);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// Growth of `candidate` over `base` in percent (`None` when `base` is 0: no ratio exists).
pub fn growth_percent(base: u64, candidate: u64) -> Option<f64> {
    (base > 0).then(|| delta(base, candidate) as f64 * 100.0 / base as f64)
}
