//! The job report: the document `memlens profiler --json` prints and the page's job summary reads
//! (one type for both, so they cannot disagree), with the job's totals computed here.

use crate::diag::{Diagnostic, Levels, Severity};
use crate::profiler::analysis::{JobAnalysis, MatrixCell, Outlier, RankReport};
use crate::profiler::discover::Job;
use crate::profiler::summary::RankOutcome;
use serde::Serialize;

/// The document `memlens profiler --json` prints and the page's job summary reads.
#[derive(Debug, Serialize)]
pub struct JobReport<'a> {
    /// Per-rank summaries, in discovery order, each with how its analysis came out.
    pub ranks: Vec<RankEntry<'a>>,
    /// The role × rank matrix of peaks.
    pub matrix: &'a [MatrixCell],
    /// Ranks that stand out from their role.
    pub outliers: &'a [Outlier],
    /// Files given that are not part of a run folder, with the reason.
    pub ignored: Vec<Ignored<'a>>,
    /// Every problem met (discovery, then each rank's files), errors and warnings.
    pub warnings: &'a [Diagnostic],
    /// Figures of the whole job.
    pub totals: JobTotals,
    /// How the job came out: the exit code `memlens profiler` gives it, and its problem in words.
    pub verdict: Verdict,
}

/// One rank of the report: its figures and, beside them, its outcome (`status`, `error`,
/// `no_data`: the keys a job summary's rank has), so that a rank without data reads the same
/// whether one reader analysed the job or a job summary was merged.
#[derive(Debug, Serialize)]
pub struct RankEntry<'a> {
    /// The rank's figures.
    #[serde(flatten)]
    pub report: &'a RankReport,
    /// How its analysis came out.
    #[serde(flatten)]
    pub outcome: RankOutcome,
}

/// A file that was given but not analysed.
#[derive(Debug, Serialize)]
pub struct Ignored<'a> {
    /// Its path, as listed.
    pub path: &'a str,
    /// Why it was not analysed.
    pub reason: &'a str,
}

/// The report of `analysis`, whose ranks were discovered as `job`.
pub fn job_report<'a>(analysis: &'a JobAnalysis, job: &'a Job) -> JobReport<'a> {
    let totals = job_totals(analysis, job);
    JobReport {
        ranks: analysis
            .ranks
            .iter()
            .map(|r| RankEntry {
                report: &r.summary,
                outcome: RankOutcome::of(r),
            })
            .collect(),
        matrix: &analysis.matrix,
        outliers: &analysis.outliers,
        ignored: job
            .ignored
            .iter()
            .map(|(p, r)| Ignored { path: p, reason: r })
            .collect(),
        warnings: &analysis.warnings,
        verdict: Verdict::of(&totals),
        totals,
    }
}

/// Figures of the whole job, summed over its ranks: of an analysed job ([`job_totals`]) and of a
/// job summary file (`profiler::summary_view::SummaryView::totals`), one type so the page and
/// scripts read one set of figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JobTotals {
    /// Ranks analysed.
    pub ranks: usize,
    /// Distinct roles among them.
    pub roles: usize,
    /// Allocation rows.
    pub rows: u64,
    /// … of them `cann::` (GE) rows.
    pub rows_ge: u64,
    /// Diagnostics of severity error (a file that could not be used, or only in part).
    pub errors: usize,
    /// Diagnostics of severity warning (rows skipped, files set aside, hints); errors are not
    /// counted here.
    pub warnings: usize,
    /// `errors` and `warnings` in words ("1 error, 2 warnings", "no errors or warnings"): the
    /// one text of the counts by level, which the page and the Python package show as is.
    pub levels: String,
    /// Files given but not analysed.
    pub ignored: usize,
    /// Files of the job that could not be read at all (an error about the file itself: not the
    /// expected table, unreadable), each counted once however many errors it has.
    pub rejected: usize,
    /// Ranks whose analysis did not run to its end where it ran (a job summary's rank whose
    /// task or node failed, a rank no reader of the page could read; their reasons are among
    /// the warnings). A rank analysed whose files were refused is not one: its files are counted
    /// in `rejected`, as an analysed job counts them, so one reader and many say the same.
    pub failed_ranks: usize,
    /// Ranks with something to draw: at least one allocation row or an allocator curve. When it
    /// is 0 the page shows why instead of an empty dashboard.
    pub ranks_with_data: usize,
    /// Bytes of allocations never released in the capture.
    pub unreleased_bytes: u64,
    /// Allocations never released in the capture.
    pub unreleased_rows: u64,
    /// The rank with the highest peak allocated among the ranks with data (its index in
    /// `ranks`; the first on a tie); `None` when no rank has data.
    pub peak_rank: Option<usize>,
    /// The highest peak allocated (bytes; 0 when no rank has data).
    pub peak_allocated_bytes: u64,
    /// The lowest peak allocated among the ranks with data (bytes; 0 when none has).
    pub min_peak_allocated_bytes: u64,
}

/// The index of the highest of `peaks` (the first on a tie) among the ranks that have data (a
/// `None` is a rank without: a failed rank or one with no memory rows cannot be the job's
/// highest peak); `None` when no rank has data.
pub(crate) fn peak_index(peaks: impl Iterator<Item = Option<u64>>) -> Option<usize> {
    peaks
        .enumerate()
        .filter_map(|(i, p)| Some((i, p?)))
        .fold(None, |best: Option<(usize, u64)>, (i, p)| match best {
            Some((b, top)) if top >= p => Some((b, top)),
            _ => Some((i, p)),
        })
        .map(|(i, _)| i)
}

/// The files named by an error among `diags`, each counted once however many errors it has.
pub(crate) fn rejected_files<'a>(diags: impl IntoIterator<Item = &'a Diagnostic>) -> usize {
    diags
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.file.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// How a job's analysis came out, from its totals: the one rule that `memlens profiler`'s exit
/// code, `memlens PATH...`'s and the page's profiler tab follow. A job some of whose files could
/// not be used is exit 2 (bad input) even when the other ranks were read, so that a CI step can
/// rely on 0 meaning "every file read"; its results are given all the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// 0: every file was read; 1: no file was refused but no rank holds memory data; 2: some
    /// file could not be used, or a rank failed (the others' results are still given).
    pub exit_code: u8,
    /// Whether some rank has data to show. Without, the page's tab settles as an error.
    pub has_data: bool,
    /// What went wrong, in words, when `exit_code` is not 0.
    pub problem: Option<String>,
}

impl Verdict {
    /// The verdict on a job with `totals`.
    pub fn of(totals: &JobTotals) -> Verdict {
        let has_data = totals.ranks_with_data > 0;
        let mut unusable = Vec::new();
        if totals.failed_ranks > 0 {
            let n = totals.failed_ranks;
            unusable.push(format!("{n} rank{} failed", if n == 1 { "" } else { "s" }));
        }
        if totals.rejected > 0 {
            let n = totals.rejected;
            unusable.push(format!(
                "{n} file{} could not be used",
                if n == 1 { "" } else { "s" }
            ));
        }
        let (exit_code, problem) = match (unusable.is_empty(), has_data) {
            (true, true) => (0, None),
            // The warnings are pointed to only when there are some: folders whose tables hold
            // their headers alone warn of nothing, and "(see the warnings)" sent the user to an
            // empty list.
            (true, false) => (
                1,
                Some(format!(
                    "the run folders hold no memory rows and no allocator curve{}",
                    if totals.warnings > 0 {
                        " (see the warnings)"
                    } else {
                        ""
                    }
                )),
            ),
            (false, true) => (
                2,
                Some(format!(
                    "{}; the results are of the rest (see the errors)",
                    unusable.join(", ")
                )),
            ),
            (false, false) => (
                2,
                Some(format!(
                    "no rank could be read: {} (see the errors)",
                    unusable.join(", ")
                )),
            ),
        };
        Verdict {
            exit_code,
            has_data,
            problem,
        }
    }
}

/// The totals of `analysis` (ranks discovered as `job`).
pub fn job_totals(analysis: &JobAnalysis, job: &Job) -> JobTotals {
    let ranks: Vec<&RankReport> = analysis.ranks.iter().map(|r| &r.summary).collect();
    let peak_rank = peak_index(
        ranks
            .iter()
            .map(|r| r.has_data().then_some(r.peak_allocated_bytes)),
    );
    let levels = Levels::of(&analysis.warnings);
    JobTotals {
        ranks: ranks.len(),
        roles: ranks
            .iter()
            .map(|r| r.role.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        rows: ranks.iter().map(|r| r.rows).sum(),
        rows_ge: ranks.iter().map(|r| r.rows_ge).sum(),
        errors: levels.errors,
        warnings: levels.warnings,
        levels: levels.to_string(),
        ignored: job.ignored.len(),
        rejected: rejected_files(&analysis.warnings),
        failed_ranks: 0,
        ranks_with_data: ranks.iter().filter(|r| r.has_data()).count(),
        unreleased_bytes: ranks
            .iter()
            .fold(0u64, |a, r| a.saturating_add(r.unreleased_bytes)),
        unreleased_rows: ranks.iter().map(|r| r.unreleased_rows).sum(),
        peak_rank,
        peak_allocated_bytes: peak_rank.map_or(0, |i| ranks[i].peak_allocated_bytes),
        min_peak_allocated_bytes: ranks
            .iter()
            .filter(|r| r.has_data())
            .map(|r| r.peak_allocated_bytes)
            .min()
            .unwrap_or(0),
    }
}
