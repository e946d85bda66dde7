//! The job summary file (`job.memlens.json`): a whole job in kilobytes per rank, made where the
//! data lies and merged anywhere. One [`RankSummary`] per rank (the per-rank `--json` object, the
//! allocator curve reduced to [`CURVE_COLUMNS`] columns, who holds memory at the peak, the
//! largest unreleased blocks, the rank's diagnostics, or the reason it failed) and a
//! [`JobSummary`] that merges any set of them: ranks in a fixed order, the role × rank matrix and
//! its outliers recomputed from the ranks. `memlens profiler ROOT --summary FILE` and the Python
//! package's Ray driver (one task per rank on the node holding its folders) both write it
//! through [`JobSummary::merge`], so one machine and a cluster produce the same file.
//!
//! Paths inside the file (run folders, the files diagnostics name) start at the job root's folder
//! name, as everywhere in memlens, so a job kept under different absolute paths on different
//! nodes summarises the same.
//! The format is versioned ([`FORMAT`], [`VERSION`]) and described in `docs/job-summary.md`.

use super::analysis::{matrix_outliers, JobAnalysis, MatrixCell, Outlier, RankAnalysis};
use super::memory_record::{allocator_series, Metric};
use super::no_data::NoData;
use super::queries::curve_window;
use crate::diag::Diagnostic;
use serde::{Deserialize, Serialize};

/// The value of the file's `format` key.
pub const FORMAT: &str = "memlens-job-summary";
/// The format's version. Version 2 keeps each rank's diagnostics as objects (level, file, line,
/// byte, field, message, count) where version 1 kept their printed lines; a reader reads both
/// and refuses any other.
pub const VERSION: u32 = 2;
/// The older version still read: its diagnostics are read back from their printed lines.
pub const OLDEST_READ: u32 = 1;
/// Columns the allocator curve is reduced to (each keeps its column's maximum, so the peak stays).
pub const CURVE_COLUMNS: usize = 256;
/// The largest unreleased blocks listed per rank.
pub const UNRELEASED_LISTED: usize = 20;
/// Diagnostics kept per rank (the count of the rest is said in a last line).
pub const WARNINGS_KEPT: usize = 20;

/// Whether a rank was summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RankStatus {
    /// The rank's files yielded data.
    Ok,
    /// No data: the files were damaged or missing, or the task analysing them failed.
    Error,
}

/// The framework allocator's allocated and reserved bytes over time, reduced to at most
/// [`CURVE_COLUMNS`] columns of equal width; each column holds its maximum.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Curve {
    /// Allocator component (`PTA`, `MindSpore`), empty when the rank has no curve.
    pub component: String,
    /// Start of each column (ns).
    pub t_ns: Vec<i64>,
    /// Largest allocated bytes in each column.
    pub allocated_bytes: Vec<u64>,
    /// Largest reserved bytes in each column.
    pub reserved_bytes: Vec<u64>,
}

/// One block not released within the capture (a leak candidate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unreleased {
    /// Op that allocated it.
    pub name: String,
    /// Bytes.
    pub size_bytes: u64,
    /// Allocation time (ns).
    pub time_ns: i64,
    /// Top user frame of its call stack (empty when none).
    pub frame: String,
}

/// The compact summary of one rank: the unit a node sends to the driver (kilobytes, not rows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    /// Role (empty when unknown).
    pub role: String,
    /// Rank (`null` when the folder names none).
    pub rank: Option<u32>,
    /// Step folder, if any.
    pub step: Option<u32>,
    /// The rank's run folders (paths start at the job root's folder name), in timestamp order.
    pub run_dirs: Vec<String>,
    /// `ok` or `error`.
    pub status: RankStatus,
    /// Why the rank has no data (`status` = `error`).
    pub error: Option<String>,
    /// Which kind of rank without data this is, in words ([`NoData`]); `null` for a rank with
    /// data. Added within version 2: a file written before it has none, and reading fills it in
    /// from the rank's `report` and `warnings` ([`RankSummary::fill_no_data`]).
    #[serde(default)]
    pub no_data: Option<NoData>,
    /// Peak allocated bytes of the framework allocator.
    pub peak_allocated_bytes: u64,
    /// Peak reserved bytes.
    pub peak_reserved_bytes: u64,
    /// The rank's object of `memlens profiler --json` (peaks, live set at the peak by user
    /// frame, step and module peaks, unreleased totals…); `null` for a failed rank.
    pub report: serde_json::Value,
    /// The allocator curve, reduced.
    pub curve: Curve,
    /// The largest unreleased blocks, largest first.
    pub unreleased: Vec<Unreleased>,
    /// The rank's diagnostics (errors and warnings, each with its place), at most
    /// [`WARNINGS_KEPT`] and then one that counts the rest. A version 1 file's printed lines are
    /// read back into diagnostics ([`Diagnostic::from_line`]).
    #[serde(deserialize_with = "diagnostics_of_either_version")]
    pub warnings: Vec<Diagnostic>,
}

/// A rank's diagnostics as either version of the file holds them: objects (version 2) or the
/// lines the CLI prints (version 1).
fn diagnostics_of_either_version<'de, D>(d: D) -> Result<Vec<Diagnostic>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Line(String),
        Object(Diagnostic),
    }
    let items: Vec<Either> = Vec::deserialize(d)?;
    Ok(items
        .into_iter()
        .map(|e| match e {
            Either::Line(text) => Diagnostic::from_line(&text),
            Either::Object(diag) => diag,
        })
        .collect())
}

/// A whole job: what the summary file holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobSummary {
    /// Always [`FORMAT`].
    pub format: &'static str,
    /// Always [`VERSION`].
    pub version: u32,
    /// Counts and the job's largest figures.
    pub totals: SummaryTotals,
    /// Role × rank peaks of the ranks with data.
    pub matrix: Vec<MatrixCell>,
    /// Ranks whose peak stands out from their role.
    pub outliers: Vec<Outlier>,
    /// Every rank, ordered by role, step, rank, run folders.
    pub ranks: Vec<RankSummary>,
}

/// The job's counts and largest figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SummaryTotals {
    /// Ranks in the file.
    pub ranks: u64,
    /// Ranks with data.
    pub ok: u64,
    /// Ranks without data.
    pub failed: u64,
    /// Largest peak allocated of any rank.
    pub max_peak_allocated_bytes: u64,
    /// Largest peak reserved of any rank.
    pub max_peak_reserved_bytes: u64,
    /// Unreleased bytes over all ranks.
    pub unreleased_bytes: u64,
}

/// The diagnostics a rank summary keeps: the first [`WARNINGS_KEPT`], then one standing for the
/// rest, as serious as the most serious of them and placed on the rank's first run folder.
fn kept_diagnostics(diags: &[Diagnostic], run_dirs: &[String]) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = diags.iter().take(WARNINGS_KEPT).cloned().collect();
    let rest = diags.get(WARNINGS_KEPT..).unwrap_or(&[]);
    if !rest.is_empty() {
        let levels = crate::diag::Levels::of(rest);
        let mut d = Diagnostic::warning(
            run_dirs.first().cloned().unwrap_or_default(),
            format!(
                "{} more diagnostics ({levels}) are not kept in the job summary; `memlens profiler` on the rank's run folders lists them",
                rest.len()
            ),
        );
        if levels.errors > 0 {
            d.severity = crate::diag::Severity::Error;
        }
        out.push(d);
    }
    out
}

fn reduced_curve(r: &RankAnalysis) -> Curve {
    let Some(component) = allocator_series(&r.memory).map(|s| s.component.as_str()) else {
        return Curve::default();
    };
    let (xs, _) = r.curve(component, Metric::Allocated);
    let (Some(&x0), Some(&x1)) = (xs.first(), xs.last()) else {
        return Curve::default();
    };
    let columns = CURVE_COLUMNS.min(xs.len()).max(1);
    let end = x1.saturating_add(1);
    let alloc = curve_window(&r.memory, component, Metric::Allocated, x0, end, columns);
    let res = curve_window(&r.memory, component, Metric::Reserved, x0, end, columns);
    let span = i128::from(end) - i128::from(x0);
    let mut c = Curve {
        component: component.to_string(),
        ..Curve::default()
    };
    for k in 0..columns {
        if !alloc.defined.get(k).copied().unwrap_or(false) {
            continue;
        }
        c.t_ns
            .push((i128::from(x0) + span * k as i128 / columns as i128) as i64);
        c.allocated_bytes
            .push(alloc.max.get(k).copied().unwrap_or(0));
        c.reserved_bytes.push(res.max.get(k).copied().unwrap_or(0));
    }
    c
}

fn unreleased(r: &RankAnalysis) -> Vec<Unreleased> {
    let mut rows: Vec<usize> = (0..r.rows.len())
        .filter(|&i| r.is_unreleased_by(i, None))
        .collect();
    rows.sort_by_key(|&i| {
        let row = &r.rows[i];
        (
            std::cmp::Reverse(row.size),
            row.time_ns().unwrap_or(i64::MIN),
            i,
        )
    });
    rows.iter()
        .take(UNRELEASED_LISTED)
        .map(|&i| Unreleased {
            name: r.name(i).to_string(),
            size_bytes: r.rows[i].size,
            time_ns: r.rows[i].time_ns().unwrap_or(0),
            frame: r.top_frame(i).to_string(),
        })
        .collect()
}

impl RankSummary {
    /// The summary of one analysed rank.
    pub fn of(r: &RankAnalysis) -> RankSummary {
        let facts = &r.summary;
        let warnings = kept_diagnostics(&r.warnings, &facts.run_dirs);
        let outcome = RankOutcome::of(r);
        RankSummary {
            role: facts.role.clone(),
            rank: facts.rank,
            step: facts.step,
            run_dirs: facts.run_dirs.clone(),
            status: outcome.status,
            error: outcome.error,
            no_data: outcome.no_data,
            peak_allocated_bytes: facts.peak_allocated_bytes,
            peak_reserved_bytes: facts.peak_reserved_bytes,
            report: serde_json::to_value(facts).unwrap_or(serde_json::Value::Null),
            curve: reduced_curve(r),
            unreleased: unreleased(r),
            warnings,
        }
    }

    /// A rank that could not be summarised (its task or node failed), with the reason.
    pub fn failed(
        role: String,
        rank: Option<u32>,
        step: Option<u32>,
        run_dirs: Vec<String>,
        reason: String,
    ) -> RankSummary {
        RankSummary {
            role,
            rank,
            step,
            run_dirs,
            status: RankStatus::Error,
            no_data: Some(NoData::failed(&reason)),
            error: Some(reason),
            peak_allocated_bytes: 0,
            peak_reserved_bytes: 0,
            report: serde_json::Value::Null,
            curve: Curve::default(),
            unreleased: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Whether the rank's analysis did not run to its end (its task, node or reader failed): it
    /// has no report. A rank analysed whose files gave no data has its report and its
    /// diagnostics, which say why (a refused file is counted as such); it is not counted again
    /// as a failed rank, so that a job says the same of it whether one reader analysed it or a
    /// summary of its ranks was merged.
    pub fn failed_where_it_ran(&self) -> bool {
        self.status == RankStatus::Error && !self.report.is_object()
    }

    /// Sets [`RankSummary::no_data`] of a rank without data whose file kept none (written
    /// before the key): a rank with no report failed where it ran, one with its report was
    /// refused or empty as its diagnostics say.
    pub fn fill_no_data(&mut self) {
        if self.status == RankStatus::Ok || self.no_data.is_some() {
            return;
        }
        self.no_data = Some(if self.failed_where_it_ran() {
            NoData::failed(self.error.as_deref().unwrap_or("no reason given"))
        } else {
            NoData::of_analysed(&self.warnings)
        });
    }

    fn order_key(&self) -> (&str, Option<u32>, u32, &[String]) {
        (
            &self.role,
            self.step,
            self.rank.unwrap_or(u32::MAX),
            &self.run_dirs,
        )
    }
}

/// How the analysis of one rank came out, as every view of the rank says it: its status, the
/// reason in the diagnostics' lines (`error`) and which kind of rank without data it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RankOutcome {
    /// `ok` when the rank has figures.
    pub status: RankStatus,
    /// The rank's kept diagnostics as the CLI prints them, one a line, for a rank without data.
    pub error: Option<String>,
    /// Why the rank has no figures.
    pub no_data: Option<NoData>,
}

impl RankOutcome {
    /// The outcome of an analysed rank.
    pub fn of(r: &RankAnalysis) -> RankOutcome {
        if r.summary.has_data() {
            return RankOutcome {
                status: RankStatus::Ok,
                error: None,
                no_data: None,
            };
        }
        let kept = kept_diagnostics(&r.warnings, &r.summary.run_dirs);
        let error = if kept.is_empty() {
            "no memory data in the rank's run folders".to_string()
        } else {
            let lines: Vec<String> = kept.iter().map(|d| d.to_string()).collect();
            lines.join("\n")
        };
        RankOutcome {
            status: RankStatus::Error,
            error: Some(error),
            no_data: Some(NoData::of_analysed(&r.warnings)),
        }
    }
}

/// The rank summaries of an analysed job.
pub fn rank_summaries(analysis: &JobAnalysis) -> Vec<RankSummary> {
    analysis.ranks.iter().map(RankSummary::of).collect()
}

impl JobSummary {
    /// Merges rank summaries (from one machine or many) into the job summary: ranks ordered by
    /// role, step, rank and run folders; matrix, outliers and totals computed from them.
    pub fn merge(mut ranks: Vec<RankSummary>) -> JobSummary {
        // Ranks from a file or a node of an older memlens say why they have no data too.
        ranks.iter_mut().for_each(RankSummary::fill_no_data);
        ranks.sort_by(|a, b| a.order_key().cmp(&b.order_key()));
        let cells: Vec<MatrixCell> = ranks
            .iter()
            .filter(|r| r.status == RankStatus::Ok)
            .map(|r| MatrixCell {
                role: r.role.clone(),
                rank: r.rank,
                step: r.step,
                peak_allocated_bytes: r.peak_allocated_bytes,
                peak_reserved_bytes: r.peak_reserved_bytes,
            })
            .collect();
        let (matrix, outliers) = matrix_outliers(cells);
        let ok = ranks.iter().filter(|r| r.status == RankStatus::Ok).count() as u64;
        let totals = SummaryTotals {
            ranks: ranks.len() as u64,
            ok,
            failed: ranks.len() as u64 - ok,
            max_peak_allocated_bytes: ranks
                .iter()
                .map(|r| r.peak_allocated_bytes)
                .max()
                .unwrap_or(0),
            max_peak_reserved_bytes: ranks
                .iter()
                .map(|r| r.peak_reserved_bytes)
                .max()
                .unwrap_or(0),
            unreleased_bytes: ranks
                .iter()
                .filter_map(|r| r.report.get("unreleased_bytes")?.as_u64())
                .fold(0u64, u64::saturating_add),
        };
        JobSummary {
            format: FORMAT,
            version: VERSION,
            totals,
            matrix,
            outliers,
            ranks,
        }
    }

    /// The file's text: compact JSON with the job's keys on the first line and then one rank
    /// per line, ending with a line feed. Compact because pretty-printing puts every number of
    /// the curves on its own indented line and makes the file about 1.7 times larger; one rank a
    /// line keeps it readable with line tools (`grep`, `head`) and diffs.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        #[derive(Serialize)]
        struct Head<'a> {
            format: &'a str,
            version: u32,
            totals: &'a SummaryTotals,
            matrix: &'a [MatrixCell],
            outliers: &'a [Outlier],
        }
        let head = serde_json::to_string(&Head {
            format: self.format,
            version: self.version,
            totals: &self.totals,
            matrix: &self.matrix,
            outliers: &self.outliers,
        })?;
        let mut text = head.strip_suffix('}').unwrap_or(&head).to_string();
        text.push_str(",\"ranks\":[");
        for (k, r) in self.ranks.iter().enumerate() {
            text.push_str(if k == 0 { "\n" } else { ",\n" });
            text.push_str(&serde_json::to_string(r)?);
        }
        text.push_str("\n]}\n");
        Ok(text)
    }
}

/// Reads the ranks of a job summary file (`file` names it in diagnostics). Refuses another
/// format or version with a diagnostic saying what was expected.
pub fn read_ranks(file: &str, text: &str) -> Result<Vec<RankSummary>, Diagnostic> {
    #[derive(Deserialize)]
    struct Head {
        format: Option<String>,
        version: Option<u32>,
        #[serde(default)]
        ranks: Vec<RankSummary>,
    }
    let head: Head = serde_json::from_str(text).map_err(|e| {
        Diagnostic::error(file, format!("not a job summary: {e}")).at_line(e.line() as u64)
    })?;
    if head.format.as_deref() != Some(FORMAT) {
        return Err(Diagnostic::error(
            file,
            format!(
                "not a job summary: expected \"format\": \"{FORMAT}\", found {:?}",
                head.format
            ),
        ));
    }
    if !head
        .version
        .is_some_and(|v| (OLDEST_READ..=VERSION).contains(&v))
    {
        return Err(Diagnostic::error(
            file,
            format!(
                "job summary version {:?}: this memlens reads versions {OLDEST_READ} to {VERSION}",
                head.version
            ),
        ));
    }
    let mut ranks = head.ranks;
    ranks.iter_mut().for_each(RankSummary::fill_no_data);
    Ok(ranks)
}

/// Parses one rank summary given as JSON text (what a node sends to the driver).
pub fn parse_rank(text: &str) -> Result<RankSummary, String> {
    serde_json::from_str(text).map_err(|e| format!("not a rank summary: {e}"))
}

/// The run folders of one rank under a job root, as discovery finds them on one machine: the
/// unit of work of a distributed summary (one task per group, on the node that holds it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankGroup {
    /// Role.
    pub role: String,
    /// Rank.
    pub rank: Option<u32>,
    /// Step.
    pub step: Option<u32>,
    /// Run folders, named as in the summary (under the root folder's name).
    pub run_dirs: Vec<String>,
}

/// Finds the ranks under `root` on this machine (what `memlens profiler ROOT` would analyse),
/// with the diagnostics of discovery.
#[cfg(not(target_arch = "wasm32"))]
pub fn discover_groups(root: &std::path::Path) -> (Vec<RankGroup>, Vec<Diagnostic>) {
    let mut set = crate::families::input_set_from_paths(&[root.to_path_buf()]);
    let job = super::job_of(&mut set);
    let groups = job
        .ranks
        .iter()
        .map(|r| RankGroup {
            role: r.role.clone(),
            rank: r.rank,
            step: r.step,
            run_dirs: r.runs.iter().map(|x| x.path.clone()).collect(),
        })
        .collect();
    (groups, job.warnings)
}

/// Analyses the rank `group` names under `root` and summarises it. The whole root is listed
/// and classified (reading only the small JSON files) so the rank's role, step and folder names
/// are found exactly as on one machine; only the group's run folders are then read. When the
/// group's folders yield no rank, a failed summary says why.
#[cfg(not(target_arch = "wasm32"))]
pub fn summarize_group(root: &std::path::Path, group: &RankGroup) -> Vec<RankSummary> {
    use super::analysis::{analyze_job_parallel, AnalyzeOptions};
    let mut set = crate::families::input_set_from_paths(&[root.to_path_buf()]);
    let mut job = super::job_of(&mut set);
    let mine = |path: &str| {
        group
            .run_dirs
            .iter()
            .any(|d| path == d || path.starts_with(&format!("{d}/")))
    };
    job.ranks
        .retain(|r| r.runs.iter().any(|x| group.run_dirs.contains(&x.path)));
    job.warnings.retain(|d| mine(&d.file));
    job.ignored.retain(|(p, _)| mine(p));
    let analysis = analyze_job_parallel(&set, &job, &AnalyzeOptions::default(), &|_| {});
    let ranks = rank_summaries(&analysis);
    if !ranks.is_empty() {
        return ranks;
    }
    let mut reason: Vec<String> = job
        .ignored
        .iter()
        .map(|(p, why)| format!("{p}: {why}"))
        .collect();
    let kept = kept_diagnostics(&analysis.warnings, &group.run_dirs);
    reason.extend(kept.iter().map(|d| d.to_string()));
    if reason.is_empty() {
        reason.push(format!(
            "{}: no run folder found under {}",
            group.run_dirs.join(", "),
            root.display()
        ));
    }
    let mut failed = RankSummary::failed(
        group.role.clone(),
        group.rank,
        group.step,
        group.run_dirs.clone(),
        reason.join("\n"),
    );
    failed.warnings = kept;
    vec![failed]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_orders_ranks_and_counts_failures() {
        let ok = |role: &str, rank: u32, peak: u64| {
            let mut r = RankSummary::failed(
                role.into(),
                Some(rank),
                None,
                vec![format!("{role}/{rank}")],
                String::new(),
            );
            r.status = RankStatus::Ok;
            r.error = None;
            r.peak_allocated_bytes = peak;
            r
        };
        let failed = RankSummary::failed(
            "actor".into(),
            Some(1),
            None,
            vec!["actor/1".into()],
            "node lost".into(),
        );
        let s = JobSummary::merge(vec![
            ok("ref", 0, 5),
            ok("actor", 2, 7),
            failed,
            ok("actor", 0, 9),
        ]);
        let keys: Vec<(String, Option<u32>)> =
            s.ranks.iter().map(|r| (r.role.clone(), r.rank)).collect();
        assert_eq!(
            keys,
            vec![
                ("actor".into(), Some(0)),
                ("actor".into(), Some(1)),
                ("actor".into(), Some(2)),
                ("ref".into(), Some(0))
            ]
        );
        assert_eq!((s.totals.ranks, s.totals.ok, s.totals.failed), (4, 3, 1));
        assert_eq!(s.matrix.len(), 3);
        assert_eq!(s.totals.max_peak_allocated_bytes, 9);
        let text = s.to_json().unwrap();
        let back = read_ranks("job.memlens.json", &text).unwrap();
        assert_eq!(back, s.ranks);
        // One line for the job, one per rank, one closing line.
        assert_eq!(text.lines().count(), 1 + 4 + 1);
        let whole: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(whole, serde_json::to_value(&s).unwrap());
        let empty = JobSummary::merge(Vec::new()).to_json().unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&empty).unwrap()["ranks"],
            serde_json::json!([])
        );
    }

    #[test]
    fn the_diagnostics_past_the_kept_ones_are_counted_by_level_in_one_more() {
        let mut diags: Vec<Diagnostic> = (0..WARNINGS_KEPT + 2)
            .map(|k| Diagnostic::warning(format!("r/{k}.csv"), "skipped"))
            .collect();
        diags.push(Diagnostic::error("r/x.db", "truncated"));
        let kept = kept_diagnostics(&diags, &["job/r".to_string()]);
        assert_eq!(kept.len(), WARNINGS_KEPT + 1);
        assert_eq!(kept[..WARNINGS_KEPT], diags[..WARNINGS_KEPT]);
        let last = &kept[WARNINGS_KEPT];
        assert!(last.is_error(), "one of the 3 left out is an error");
        assert_eq!(last.file, "job/r");
        assert!(
            last.message
                .starts_with("3 more diagnostics (1 error, 2 warnings)"),
            "{}",
            last.message
        );
        // Without errors among them it is a warning.
        let quiet = kept_diagnostics(&diags[..WARNINGS_KEPT + 2], &[]);
        assert!(!quiet[WARNINGS_KEPT].is_error());
    }

    #[test]
    fn reading_refuses_other_files_with_the_reason() {
        let e = read_ranks("x.json", "{\"format\": \"other\"}").unwrap_err();
        assert!(e.to_string().contains("x.json"), "{e}");
        assert!(e.to_string().contains(FORMAT), "{e}");
        let e = read_ranks(
            "x.json",
            &format!("{{\"format\": \"{FORMAT}\", \"version\": 99}}"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("version"), "{e}");
        let e = read_ranks("x.json", "{\n\"format\": [").unwrap_err();
        assert!(e.to_string().contains("x.json:2"), "{e}");
    }
}
