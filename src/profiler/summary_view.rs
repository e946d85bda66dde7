//! The view model of a job summary file opened on the page: the job overview of thousands of
//! ranks from kilobytes per rank, and one rank's compact detail on demand. The overview answer
//! has the shape of `memlens profiler --json` (ranks, matrix, outliers, warnings, totals), so the
//! page draws it with the same job overview as an analysed job.

use super::discover::Discovery;
use super::summary::{read_ranks, JobSummary, RankStatus, RankSummary};
use super::summary_raw::{replace_ranks, RawRank};
use super::view::report::{peak_index, rejected_files, Verdict};
use super::view::JobTotals;
use crate::diag::{Diagnostic, Levels};
use crate::source::Source;
use serde::Deserialize;
use serde_json::{json, Value};

/// The largest summary file the page reads: at a few kilobytes per rank this is hundreds of
/// thousands of ranks, and it bounds the text and its parse to a fraction of wasm's memory.
pub const MAX_SUMMARY_BYTES: u64 = 256 << 20;

/// A question to an opened job summary.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "method", content = "params", rename_all = "camelCase")]
pub enum Request {
    /// The job overview (`memlens profiler --json`'s shape, plus `summary`).
    Overview,
    /// One rank's summary whole (curve, attribution at the peak, unreleased list, warnings).
    Rank {
        /// Index in the overview's `ranks`.
        rank: usize,
    },
    /// Ranks analysed from their raw run folders (`profiler::view::Request::RankSummaries`)
    /// take the place of the ranks they match; answers the overview, whose `raw` says what
    /// became of each.
    Raw {
        /// The raw ranks' summaries.
        ranks: Vec<RankSummary>,
    },
}

/// An opened job summary: the merged job (ranks ordered, matrix and outliers recomputed).
pub struct SummaryView {
    file: String,
    job: JobSummary,
    /// What the discovery of the job's drop said beside the ranks (a pooled load's; a summary
    /// file has none).
    discovery: Discovery,
    /// What became of the ranks opened from raw run folders, in the order given.
    raw: Vec<RawRank>,
}

fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A rank's per-rank report object: the one in the file, or (a failed rank) the same keys with
/// nothing measured, so the overview's table lists it.
fn rank_report(r: &RankSummary) -> Value {
    if r.report.is_object() {
        let mut v = r.report.clone();
        if let Some(o) = v.as_object_mut() {
            o.insert("status".into(), json!(r.status));
            o.insert("error".into(), json!(r.error));
            o.insert("no_data".into(), json!(r.no_data));
        }
        return v;
    }
    json!({
        "role": r.role,
        "rank": r.rank.map_or(json!("unknown"), |n| json!(n)),
        "step": r.step,
        "run_dirs": r.run_dirs,
        "rows": 0, "rows_pta": 0, "rows_ge": 0,
        "stacks": {"direct": 0, "via_forward": 0, "approximate": 0, "none": 0},
        "peak_allocated_bytes": r.peak_allocated_bytes,
        "peak_reserved_bytes": r.peak_reserved_bytes,
        "peak_active_bytes": 0,
        "peak_time_ns": 0,
        "peak_source": "none",
        "fragmentation_bytes": 0,
        "unreleased_rows": 0,
        "unreleased_bytes": 0,
        "group_by": "frame",
        "live_at_peak": [],
        "step_peaks": [],
        "module_peaks": [],
        "trace_ops": 0,
        "trace_events": 0,
        "source": "none",
        "framework": "",
        "device": null,
        "status": r.status,
        "error": r.error,
        "no_data": r.no_data,
    })
}

/// Where a rank's peak lies on its reduced curve: `origin_ns` (the curve's first column, as text
/// since nanoseconds since the epoch exceed a double's integers) and `peak` (ns after it; null
/// without a curve).
fn rank_times(r: &RankSummary) -> Value {
    let origin = r.curve.t_ns.first().copied();
    let peak_at = r.report.get("peak_time_ns").and_then(Value::as_i64);
    match (origin, peak_at) {
        (Some(o), Some(p)) if r.status == RankStatus::Ok => {
            json!({"origin_ns": o.to_string(), "peak": (i128::from(p) - i128::from(o)) as f64})
        }
        _ => json!({"origin_ns": "0", "peak": null}),
    }
}

impl SummaryView {
    /// Reads the job summary in `src` (at most [`MAX_SUMMARY_BYTES`]).
    pub fn open(src: &dyn Source) -> Result<SummaryView, Diagnostic> {
        let file = src.name().to_string();
        if src.len() > MAX_SUMMARY_BYTES {
            return Err(Diagnostic::error(
                &file,
                format!(
                    "the job summary is {} bytes; the page reads summaries of at most {} bytes (hundreds of thousands of ranks) — split the job by role or step",
                    src.len(),
                    MAX_SUMMARY_BYTES
                ),
            ));
        }
        let bytes = src.read_all(MAX_SUMMARY_BYTES)?;
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            Diagnostic::error(&file, "not UTF-8 text; a job summary is JSON")
                .at_byte(e.valid_up_to() as u64)
        })?;
        SummaryView::from_text(&file, text)
    }

    /// Reads a job summary from its text (`file` names it in diagnostics).
    pub fn from_text(file: &str, text: &str) -> Result<SummaryView, Diagnostic> {
        let ranks = read_ranks(file, text)?;
        Ok(SummaryView::from_ranks(file, ranks))
    }

    /// A job of rank summaries already at hand (the page's parallel readers each send the
    /// summaries of their ranks; `file` names the job in diagnostics). The order they come in
    /// does not matter: the merge orders the ranks.
    pub fn from_ranks(file: &str, ranks: Vec<RankSummary>) -> SummaryView {
        SummaryView::from_parts(file, ranks, Discovery::default())
    }

    /// [`SummaryView::from_ranks`] with what the discovery of the whole drop said beside the
    /// ranks (its diagnostics come first among the job's, its files not analysed are the job's),
    /// so that a job read by several readers is said as one reader says it.
    pub fn from_parts(file: &str, ranks: Vec<RankSummary>, discovery: Discovery) -> SummaryView {
        SummaryView {
            file: file.to_string(),
            job: JobSummary::merge(ranks),
            raw: Vec::new(),
            discovery,
        }
    }

    /// The merged job.
    pub fn job(&self) -> &JobSummary {
        &self.job
    }

    /// Puts ranks analysed from their raw run folders in the place of the ranks they match (by
    /// role, step and rank) and orders the job again; [`SummaryView::raw`] says what became of
    /// each. Ranks replaced earlier stay replaced.
    pub fn open_raw(&mut self, raw: Vec<RankSummary>) {
        let mut ranks = std::mem::take(&mut self.job.ranks);
        let mut outcomes = replace_ranks(&mut ranks, raw);
        self.job = JobSummary::merge(ranks);
        for o in &mut outcomes {
            if o.outcome == "replaced" {
                o.index = self.job.ranks.iter().position(|r| {
                    r.role == o.role
                        && r.step == o.step
                        && r.rank == o.rank
                        && r.run_dirs == o.run_dirs
                });
            }
        }
        self.raw = outcomes;
    }

    /// What became of the ranks last opened from raw run folders.
    pub fn raw(&self) -> &[RawRank] {
        &self.raw
    }

    /// The job's totals, from the summaries alone: rows and unreleased figures are sums of the
    /// ranks' reports, errors and warnings are counted by level over [`SummaryView::warnings`],
    /// the files rejected are those the errors of discovery and of the ranks name, the files
    /// ignored are discovery's (a summary file has none: it lists ranks only), the ranks that
    /// failed where they ran ([`RankSummary::failed_where_it_ran`]) are `failed_ranks`, and the
    /// peaks are of the ranks with data (`status` `ok`).
    pub fn totals(&self) -> JobTotals {
        let ranks = &self.job.ranks;
        let levels = Levels::of(&self.warnings());
        let peak_rank = peak_index(
            ranks
                .iter()
                .map(|r| (r.status == RankStatus::Ok).then_some(r.peak_allocated_bytes)),
        );
        let ok: Vec<&RankSummary> = ranks
            .iter()
            .filter(|r| r.status == RankStatus::Ok)
            .collect();
        JobTotals {
            ranks: ranks.len(),
            roles: ranks
                .iter()
                .map(|r| r.role.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            rows: ranks.iter().map(|r| u64_of(&r.report, "rows")).sum(),
            rows_ge: ranks.iter().map(|r| u64_of(&r.report, "rows_ge")).sum(),
            errors: levels.errors,
            warnings: levels.warnings,
            levels: levels.to_string(),
            ignored: self.discovery.ignored.len(),
            rejected: rejected_files(
                self.discovery
                    .warnings
                    .iter()
                    .chain(ranks.iter().flat_map(|r| &r.warnings)),
            ),
            failed_ranks: ranks.iter().filter(|r| r.failed_where_it_ran()).count(),
            ranks_with_data: ok.len(),
            unreleased_bytes: ranks
                .iter()
                .map(|r| u64_of(&r.report, "unreleased_bytes"))
                .fold(0u64, u64::saturating_add),
            unreleased_rows: ranks
                .iter()
                .map(|r| u64_of(&r.report, "unreleased_rows"))
                .sum(),
            peak_rank,
            peak_allocated_bytes: peak_rank.map_or(0, |i| ranks[i].peak_allocated_bytes),
            min_peak_allocated_bytes: ok.iter().map(|r| r.peak_allocated_bytes).min().unwrap_or(0),
        }
    }

    /// The diagnostics of the job: discovery's first, then rank by rank: the reason of a rank
    /// that failed where it ran as an error on its first run folder — unless its own
    /// diagnostics hold the errors that made it fail, which then say it, each at its place —
    /// and each rank's diagnostics as the file keeps them, with their level and place. A rank
    /// analysed without data has only its own diagnostics, as one reader lists them.
    pub fn warnings(&self) -> Vec<Diagnostic> {
        let place = |r: &RankSummary| {
            r.run_dirs
                .first()
                .cloned()
                .unwrap_or_else(|| self.file.clone())
        };
        let mut out = self.discovery.warnings.clone();
        for r in &self.job.ranks {
            if r.failed_where_it_ran() && !r.warnings.iter().any(Diagnostic::is_error) {
                out.push(Diagnostic::error(
                    place(r),
                    r.error.clone().unwrap_or_else(|| "failed".to_string()),
                ));
            }
            out.extend(r.warnings.iter().cloned());
        }
        out
    }

    /// The overview: `memlens profiler --json`'s shape (ranks as their report objects, matrix,
    /// outliers, warnings, totals), `ignored` (discovery's files not analysed), `times` (per
    /// rank: its curve's start and the peak's time after it), `raw` (what became of the ranks
    /// opened from raw run folders) and `summary` naming the file.
    pub fn overview(&self) -> Value {
        let totals = self.totals();
        json!({
            "ranks": self.job.ranks.iter().map(rank_report).collect::<Vec<_>>(),
            "matrix": self.job.matrix,
            "outliers": self.job.outliers,
            "ignored": self.discovery.ignored.iter().map(|(path, reason)| json!({"path": path, "reason": reason})).collect::<Vec<_>>(),
            "warnings": self.warnings(),
            "totals": totals,
            "verdict": Verdict::of(&totals),
            "times": self.job.ranks.iter().map(rank_times).collect::<Vec<_>>(),
            "raw": self.raw,
            "summary": {
                "file": self.file,
                "format": self.job.format,
                "version": self.job.version,
                "ok": self.job.totals.ok,
                "failed": self.job.totals.failed,
            },
        })
    }

    /// One rank's summary, whole.
    pub fn rank(&self, index: usize) -> Result<&RankSummary, String> {
        self.job.ranks.get(index).ok_or_else(|| {
            let n = self.job.ranks.len();
            let unit = if n == 1 { "rank" } else { "ranks" };
            format!("no rank {index}: the summary holds {n} {unit}")
        })
    }

    /// Answers a request with JSON text.
    pub fn answer(&mut self, request: &Request) -> Result<String, String> {
        let value = match request {
            Request::Overview => self.overview(),
            Request::Raw { ranks } => {
                self.open_raw(ranks.clone());
                self.overview()
            }
            Request::Rank { rank } => {
                let r = self.rank(*rank)?;
                let mut v = serde_json::to_value(r).map_err(|e| e.to_string())?;
                // The rank's diagnostics counted by level, in the one text of the counts.
                if let Some(o) = v.as_object_mut() {
                    o.insert("levels".into(), Levels::of(&r.warnings).to_string().into());
                }
                v
            }
        };
        serde_json::to_string(&value).map_err(|e| e.to_string())
    }
}
