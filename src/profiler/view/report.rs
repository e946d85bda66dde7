//! The job report: the document `memlens profiler --json` prints and the page's job summary reads
//! (one type for both, so they cannot disagree), with the job's totals computed here.

use crate::diag::{Diagnostic, Severity};
use crate::profiler::analysis::{JobAnalysis, MatrixCell, Outlier, RankReport};
use crate::profiler::discover::Job;
use serde::Serialize;

/// The document `memlens profiler --json` prints and the page's job summary reads.
#[derive(Debug, Serialize)]
pub struct JobReport<'a> {
    /// Per-rank summaries, in discovery order.
    pub ranks: Vec<&'a RankReport>,
    /// The role × rank matrix of peaks.
    pub matrix: &'a [MatrixCell],
    /// Ranks that stand out from their role.
    pub outliers: &'a [Outlier],
    /// Files given that are not part of a run folder, with the reason.
    pub ignored: Vec<Ignored<'a>>,
    /// Every problem met (discovery, then each rank's files).
    pub warnings: &'a [Diagnostic],
    /// Figures of the whole job.
    pub totals: JobTotals,
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
    JobReport {
        ranks: analysis.ranks.iter().map(|r| &r.summary).collect(),
        matrix: &analysis.matrix,
        outliers: &analysis.outliers,
        ignored: job
            .ignored
            .iter()
            .map(|(p, r)| Ignored { path: p, reason: r })
            .collect(),
        warnings: &analysis.warnings,
        totals: job_totals(analysis, job),
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
    /// Problems met.
    pub warnings: usize,
    /// Files given but not analysed.
    pub ignored: usize,
    /// Files of the job that could not be read at all (an error about the file itself: not the
    /// expected table, unreadable), each counted once however many errors it has.
    pub rejected: usize,
    /// Ranks whose analysis failed where it ran: a job summary's ranks with `status` `error`
    /// (their reasons are among the warnings). An analysed job has none: its failures are the
    /// files it rejected.
    pub failed_ranks: usize,
    /// Ranks with something to draw: at least one allocation row or an allocator curve. When it
    /// is 0 the page shows why instead of an empty dashboard.
    pub ranks_with_data: usize,
    /// Bytes of allocations never released in the capture.
    pub unreleased_bytes: u64,
    /// Allocations never released in the capture.
    pub unreleased_rows: u64,
    /// The rank with the highest peak allocated (its index in `ranks`; the first on a tie).
    pub peak_rank: Option<usize>,
    /// The highest peak allocated (bytes).
    pub peak_allocated_bytes: u64,
    /// The lowest peak allocated among the ranks (bytes).
    pub min_peak_allocated_bytes: u64,
}

/// The index of the highest of `peaks` (the first on a tie); `None` when there are none.
pub(crate) fn peak_index(peaks: impl Iterator<Item = u64>) -> Option<usize> {
    peaks
        .enumerate()
        .fold(None, |best: Option<(usize, u64)>, (i, p)| match best {
            Some((b, top)) if top >= p => Some((b, top)),
            _ => Some((i, p)),
        })
        .map(|(i, _)| i)
}

/// The totals of `analysis` (ranks discovered as `job`).
pub fn job_totals(analysis: &JobAnalysis, job: &Job) -> JobTotals {
    let ranks: Vec<&RankReport> = analysis.ranks.iter().map(|r| &r.summary).collect();
    let peak_rank = peak_index(ranks.iter().map(|r| r.peak_allocated_bytes));
    JobTotals {
        ranks: ranks.len(),
        roles: ranks
            .iter()
            .map(|r| r.role.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        rows: ranks.iter().map(|r| r.rows).sum(),
        rows_ge: ranks.iter().map(|r| r.rows_ge).sum(),
        warnings: analysis.warnings.len(),
        ignored: job.ignored.len(),
        rejected: analysis
            .warnings
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.file.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        failed_ranks: 0,
        ranks_with_data: ranks
            .iter()
            .filter(|r| r.rows > 0 || matches!(r.peak_source, "memory_record" | "operator_memory"))
            .count(),
        unreleased_bytes: ranks
            .iter()
            .fold(0u64, |a, r| a.saturating_add(r.unreleased_bytes)),
        unreleased_rows: ranks.iter().map(|r| r.unreleased_rows).sum(),
        peak_rank,
        peak_allocated_bytes: peak_rank.map_or(0, |i| ranks[i].peak_allocated_bytes),
        min_peak_allocated_bytes: ranks
            .iter()
            .map(|r| r.peak_allocated_bytes)
            .min()
            .unwrap_or(0),
    }
}
