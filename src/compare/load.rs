//! Reading one side of a comparison from an input set (files on disk, bytes, browser files): the
//! profiler runs it holds, else its single SOMAS dump. Every front end loads sides through here,
//! so the CLI and a page compare the same things.

use super::profiler::{matched_ranks, RankKey};
use super::{compare_dumps, compare_jobs, CompareOptions, Comparison};
use crate::input::{FileOpener, InputSet};
use crate::profiler::analysis::{AnalyzeOptions, JobAnalysis};
use crate::profiler::job_of;
use crate::somas::recognize::{SomasFamily, SomasFile};
use crate::somas::{self, Analysis, SomasModel};

/// One analysed side.
#[derive(Debug, Clone)]
pub enum Side {
    /// The profiler job of the side's run folders.
    Profiler(JobAnalysis),
    /// The side's SOMAS dump and its analysis.
    Somas(Box<(SomasModel, Analysis)>),
}

/// Why a side could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The side holds nothing a comparison reads (no run folder, no SOMAS dump).
    Nothing(String),
    /// The side is ambiguous or cannot be read.
    Bad(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Nothing(m) | LoadError::Bad(m) => f.write_str(m),
        }
    }
}

/// Classifies `set` and analyses what it holds: its profiler run folders when it has any, else its
/// one SOMAS dump. `label` names the side in errors (`baseline /path/to/runs`).
pub fn load_side(set: &mut InputSet, label: &str) -> Result<Side, LoadError> {
    let dumps: Vec<String> = set
        .classify()
        .units_of::<SomasFile>()
        .filter(|f| f.family != SomasFamily::TaskInfo)
        .map(|f| f.path.clone())
        .collect();
    let job = job_of(set);
    if !job.ranks.is_empty() {
        #[cfg(not(target_arch = "wasm32"))]
        let a = crate::profiler::analysis::analyze_job_parallel(
            &*set,
            &job,
            &AnalyzeOptions::default(),
            &|_| {},
        );
        #[cfg(target_arch = "wasm32")]
        let a = crate::profiler::analysis::analyze_job(
            &*set,
            &job,
            &AnalyzeOptions::default(),
            &mut |_| {},
        );
        return Ok(Side::Profiler(a));
    }
    match dumps.as_slice() {
        [] => Err(LoadError::Nothing(format!(
            "{label}: no torch_npu / MindSpore run folder and no SOMAS dump found"
        ))),
        [path] => {
            let bad = |d: crate::diag::Diagnostic| LoadError::Bad(d.to_string());
            let src = set.open(path).map_err(bad)?;
            let model = somas::load_dump(src.as_ref(), None).map_err(bad)?;
            let an = somas::analyze(&model, None);
            Ok(Side::Somas(Box::new((model, an))))
        }
        many => Err(LoadError::Bad(format!(
            "{label}: holds {} SOMAS dumps ({}); give one dump to compare",
            many.len(),
            many.join(", ")
        ))),
    }
}

/// Compares two loaded sides of the same family.
pub fn compare_sides(
    base: &Side,
    candidate: &Side,
    opts: &CompareOptions,
) -> Result<Comparison, String> {
    match (base, candidate) {
        (Side::Profiler(b), Side::Profiler(c)) => {
            Ok(Comparison::Profiler(compare_jobs(b, c, opts)))
        }
        (Side::Somas(b), Side::Somas(c)) => {
            if opts.base_step.is_some() || opts.candidate_step.is_some() {
                return Err("steps apply to profiler runs, not SOMAS dumps".into());
            }
            Ok(Comparison::Somas(Box::new(compare_dumps(
                &b.0, &b.1, &c.0, &c.1,
            ))))
        }
        _ => Err(
            "the baseline and the candidate are of different families (profiler runs and a SOMAS \
             dump): nothing to compare"
                .into(),
        ),
    }
}

/// Where the rank pair `key` of a profiler comparison sits in each side's job: its position in
/// the baseline's and the candidate's `ranks` (the order a single-input view lists them in), as
/// [`compare_jobs`] pairs ranks. `None` when the sides are not profiler jobs or hold no such pair.
pub fn pair_positions(base: &Side, candidate: &Side, key: &RankKey) -> Option<(usize, usize)> {
    let (Side::Profiler(b), Side::Profiler(c)) = (base, candidate) else {
        return None;
    };
    let (_, rb, rc) = matched_ranks(b, c, &mut Vec::new())
        .into_iter()
        .find(|(k, _, _)| k == key)?;
    let at = |job: &JobAnalysis, r| job.ranks.iter().position(|x| std::ptr::eq(x, r));
    Some((at(b, rb)?, at(c, rc)?))
}
