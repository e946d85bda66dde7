//! A rank's raw run folders opened beside the job summary that lists it: the rank analysed from
//! its folders takes the place of its compact summary (matched by role, step and rank), and what
//! became of each folder is said — which rank it replaced, the figures on which the two disagree,
//! or that it matches no rank of the summary.

use super::summary::{RankStatus, RankSummary};
use serde::Serialize;
use serde_json::Value;

/// A figure on which a rank's raw folders and its summary disagree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    /// The figure's key (`status`, `peak_allocated_bytes`, or a key of the rank's report).
    pub figure: &'static str,
    /// Its value in the summary.
    pub summary: Value,
    /// Its value from the raw folders.
    pub raw: Value,
}

/// What became of one rank analysed from its raw run folders.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RawRank {
    /// Its role (the summary's when the folders name none and the rank matched).
    pub role: String,
    /// Its rank.
    pub rank: Option<u32>,
    /// Its step.
    pub step: Option<u32>,
    /// Its run folders, as dropped.
    pub run_dirs: Vec<String>,
    /// `replaced` (it took the place of the summary's rank), `unmatched` (no rank of the
    /// summary has its role, step and rank — or, when its folders name no role, its number and
    /// run folder names), `ambiguous` (its folders name no role and several ranks of the summary
    /// have its number and folder names) or `failed` (its folders hold no memory data; the
    /// summary's rank is kept).
    pub outcome: &'static str,
    /// Why, in words (the raw rank's error for `failed`; the candidates for `ambiguous`).
    pub detail: Option<String>,
    /// Figures on which the replaced summary and the raw folders disagree.
    pub disagreements: Vec<Disagreement>,
    /// Its index in the job's ranks once replaced (set by the caller after ordering).
    pub index: Option<usize>,
}

/// The figures compared: the rank's own, then keys of its report.
const TOP: [&str; 3] = ["status", "peak_allocated_bytes", "peak_reserved_bytes"];
const REPORT: [&str; 6] = [
    "rows",
    "rows_ge",
    "peak_time_ns",
    "fragmentation_bytes",
    "unreleased_rows",
    "unreleased_bytes",
];

fn disagreements(summary: &RankSummary, raw: &RankSummary) -> Vec<Disagreement> {
    let top = |r: &RankSummary, key: &str| match key {
        "status" => serde_json::to_value(r.status).unwrap_or(Value::Null),
        "peak_allocated_bytes" => Value::from(r.peak_allocated_bytes),
        _ => Value::from(r.peak_reserved_bytes),
    };
    let mut out: Vec<Disagreement> = TOP
        .iter()
        .filter(|k| top(summary, k) != top(raw, k))
        .map(|k| Disagreement {
            figure: k,
            summary: top(summary, k),
            raw: top(raw, k),
        })
        .collect();
    // A failed summary rank has no report to compare with.
    if summary.status == RankStatus::Ok {
        let of = |r: &RankSummary, k: &str| r.report.get(k).cloned().unwrap_or(Value::Null);
        out.extend(
            REPORT
                .iter()
                .filter(|k| of(summary, k) != of(raw, k))
                .map(|k| Disagreement {
                    figure: k,
                    summary: of(summary, k),
                    raw: of(raw, k),
                }),
        );
    }
    out
}

/// The last component of each run folder: `{host}_{pid}_{timestamp}_ascend_pt`, the run's own
/// name wherever the folder lies.
fn folder_names(dirs: &[String]) -> Vec<&str> {
    dirs.iter()
        .map(|d| d.trim_end_matches('/').rsplit('/').next().unwrap_or(d))
        .collect()
}

/// The summary ranks a raw rank stands for: the same role, step and rank; or, when its folders
/// name no role (a run folder dropped alone), the ranks of its number whose run folders have
/// its folders' names.
fn candidates(ranks: &[RankSummary], raw: &RankSummary) -> Vec<usize> {
    let exact: Vec<usize> = (0..ranks.len())
        .filter(|&i| {
            ranks[i].role == raw.role && ranks[i].step == raw.step && ranks[i].rank == raw.rank
        })
        .collect();
    if !exact.is_empty() || !raw.role.is_empty() {
        return exact;
    }
    let names = folder_names(&raw.run_dirs);
    (0..ranks.len())
        .filter(|&i| {
            ranks[i].rank == raw.rank
                && (raw.step.is_none() || ranks[i].step == raw.step)
                && folder_names(&ranks[i].run_dirs) == names
        })
        .collect()
}

/// Puts each rank of `raw` in the place of the rank of `ranks` it matches; says what became of
/// each (indices are left for the caller, who orders the ranks).
pub fn replace_ranks(ranks: &mut [RankSummary], raw: Vec<RankSummary>) -> Vec<RawRank> {
    raw.into_iter()
        .map(|mut r| {
            let found = candidates(ranks, &r);
            let mut out = RawRank {
                role: r.role.clone(),
                rank: r.rank,
                step: r.step,
                run_dirs: r.run_dirs.clone(),
                outcome: "unmatched",
                detail: None,
                disagreements: Vec::new(),
                index: None,
            };
            match found.as_slice() {
                [] => {}
                [_, _, ..] => {
                    out.outcome = "ambiguous";
                    let roles: Vec<&str> = found.iter().map(|&i| ranks[i].role.as_str()).collect();
                    out.detail = Some(format!(
                        "its folders name no role, and the summary has this rank and run folder in the roles {}",
                        roles.join(", ")
                    ));
                }
                [_] if r.status == RankStatus::Error => {
                    out.outcome = "failed";
                    out.detail = r.error.clone();
                }
                [i] => {
                    let held = &mut ranks[*i];
                    // Folders that name no role or step take the summary's: the rank is the same.
                    if r.role.is_empty() {
                        r.role = held.role.clone();
                        if let Some(o) = r.report.as_object_mut() {
                            o.insert("role".into(), Value::from(r.role.clone()));
                        }
                    }
                    if r.step.is_none() && held.step.is_some() {
                        r.step = held.step;
                        if let Some(o) = r.report.as_object_mut() {
                            o.insert("step".into(), Value::from(r.step));
                        }
                    }
                    out.role = r.role.clone();
                    out.step = r.step;
                    out.outcome = "replaced";
                    out.disagreements = disagreements(held, &r);
                    *held = r;
                }
            }
            out
        })
        .collect()
}
