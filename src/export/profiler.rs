//! CSV exports of a torch_npu job analysis.
//!
//! `memory_events.csv` starts with the 12 columns of the Python tool it replaces (RL-Insight's
//! `MemoryEventRow`, same names, same order, same types) so a consumer written against that tool
//! reads it unchanged, then adds what that tool lacks. The 12 columns follow the tool's contract:
//! every float column holds a number in every row (`duration_ms` is `0.0` for a block not released
//! in the capture, a total the source leaves empty is `0.0`), `rank_id` is always an integer (`-1`
//! when the folder names no rank), and `call_stack_top` is the first line of `call_stack`. The
//! honest values sit in the extras: `released`, `release_time_ms` (empty when never released) and
//! `user_frame` (the first frame of the user's own code). Numbers are exact decimals of the
//! integer ns and bytes.

#![warn(missing_docs)]

use super::columns::{Column, ColumnBuilder, Kind};
use crate::profiler::analysis::{JobAnalysis, RankAnalysis};
use crate::profiler::{bytes_to_unit_text, ns_to_ms_text};
use std::borrow::Cow;
use std::io::Write;

/// How many leading columns of [`MEMORY_EVENTS_COLUMNS`] are the Python tool's contract.
pub const CONTRACT_COLUMNS: usize = 12;

/// Columns of `memory_events.csv`: the Python tool's 12, then the extras.
pub const MEMORY_EVENTS_COLUMNS: [&str; 22] = [
    "name",
    "role",
    "rank_id",
    "call_stack",
    "call_stack_top",
    "size_kb",
    "start_time_ms",
    "duration_ms",
    "total_allocated_mb",
    "total_reserved_mb",
    "total_active_mb",
    "device_type",
    "released",
    "release_time_ms",
    "active_release_time_ms",
    "active_duration_ms",
    "stream",
    "source",
    "stack_source",
    "user_frame",
    "step",
    "run_dir",
];

fn opt_ms(v: Option<i64>) -> String {
    v.map(ns_to_ms_text).unwrap_or_default()
}

/// A contract float column of a time: `0.0` where the source is empty, as the Python tool writes.
fn ms_or_zero(v: Option<i64>) -> String {
    v.map_or_else(|| "0.0".to_string(), ns_to_ms_text)
}

/// A contract float column of a total: `0.0` where the source is empty, as the Python tool writes.
fn mb_or_zero(v: Option<u64>) -> String {
    v.map_or_else(
        || "0.0".to_string(),
        |b| bytes_to_unit_text(i128::from(b), 1 << 20),
    )
}

fn rank_text(r: &RankAnalysis) -> String {
    r.summary.rank.map(|r| r.to_string()).unwrap_or_default()
}

/// What `memlens profiler` prints without `--json`: ranks and warnings, one line per rank with
/// the three largest holders at its peak, then the outliers and the warnings.
pub fn report_text(analysis: &JobAnalysis) -> String {
    use std::fmt::Write as _;
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} rank(s), {} warning(s)",
        analysis.ranks.len(),
        analysis.warnings.len()
    );
    let _ = writeln!(
        o,
        "{:<24} {:>7} {:>7} {:>6} {:>7} {:>7} {:>6} {:>6} {:>11} {:>11} {:>10}",
        "role",
        "rank",
        "rows",
        "cann",
        "direct",
        "via_fwd",
        "approx",
        "none",
        "peak MiB",
        "reserv MiB",
        "unreleased"
    );
    for r in &analysis.ranks {
        let s = &r.summary;
        let role = if s.role.is_empty() { "-" } else { &s.role };
        let rank = s.rank.map_or("unknown".to_string(), |r| r.to_string());
        let _ = writeln!(
            o,
            "{:<24} {:>7} {:>7} {:>6} {:>7} {:>7} {:>6} {:>6} {:>11.1} {:>11.1} {:>10}",
            role,
            rank,
            s.rows,
            s.rows_ge,
            s.stacks.direct,
            s.stacks.via_forward,
            s.stacks.approximate,
            s.stacks.none,
            mib(s.peak_allocated_bytes),
            mib(s.peak_reserved_bytes),
            s.unreleased_rows
        );
        for g in s.live_at_peak.iter().take(3) {
            let _ = writeln!(
                o,
                "    at peak: {:>10.1} MiB in {:>5} blocks  {}",
                mib(g.bytes),
                g.count,
                g.frame
            );
        }
    }
    for out in &analysis.outliers {
        let _ = writeln!(
            o,
            "outlier: role {} rank {:?}: peak {:.1} MiB vs role median {:.1} MiB",
            out.role,
            out.rank,
            mib(out.peak_allocated_bytes),
            mib(out.role_median_bytes)
        );
    }
    for w in &analysis.warnings {
        let _ = writeln!(o, "{w}");
    }
    o
}

/// Whether the analysis found any memory data (a rank with rows, or a curve to take a peak from).
pub fn has_data(analysis: &JobAnalysis) -> bool {
    analysis
        .ranks
        .iter()
        .any(|r| r.summary.rows > 0 || r.summary.peak_source != "none")
}

/// The contract's `rank_id` is an integer; the Python tool's own marker for a folder without a
/// rank is `-1` (it skips such folders; memlens keeps their rows).
fn rank_id(r: &RankAnalysis) -> String {
    r.summary
        .rank
        .map_or_else(|| "-1".to_string(), |r| r.to_string())
}

/// The first line of a `;\r\n`-separated stack, as the Python tool takes `call_stack_top`.
pub fn first_stack_line(stack: &str) -> &str {
    stack.split(";\r\n").next().unwrap_or("")
}

/// The document `memlens profiler --json` prints for a job: [`crate::profiler::view::job_report`]
/// pretty-printed, ending with a line feed. The page's "summary.json" download is the same bytes.
pub fn report_json(
    analysis: &JobAnalysis,
    job: &crate::profiler::discover::Job,
) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(&crate::profiler::view::job_report(analysis, job))?;
    text.push('\n');
    Ok(text)
}

/// The rows of `memory_events.csv` in their order: (start time, rank, rank index, row index),
/// sorted by start time, then rank, then role and file order.
fn event_order(job: &JobAnalysis) -> Vec<(i64, u32, u32, u32)> {
    use rayon::prelude::*;
    let mut order: Vec<(i64, u32, u32, u32)> = Vec::new();
    for (ri, r) in job.ranks.iter().enumerate() {
        for (i, row) in r.rows.iter().enumerate() {
            order.push((
                row.time_ns().unwrap_or(i64::MIN),
                r.summary.rank.unwrap_or(u32::MAX),
                ri as u32,
                i as u32,
            ));
        }
    }
    order.par_sort_unstable();
    order
}

/// Writes `memory_events.csv`: one row per operator_memory row of every rank, sorted by start
/// time, then rank, then role and file order.
///
/// Rows are formatted in parallel, a bounded batch at a time, so memory stays at one batch of
/// text whatever the number of rows.
pub fn write_memory_events<W: Write>(job: &JobAnalysis, mut out: W) -> std::io::Result<()> {
    use rayon::prelude::*;
    let order = event_order(job);
    super::write_csv(
        &mut out,
        &MEMORY_EVENTS_COLUMNS,
        std::iter::empty::<Vec<&str>>(),
    )?;
    for batch in order.chunks(8 * 1024) {
        let parts: Vec<std::io::Result<Vec<u8>>> = batch
            .par_chunks(1024)
            .map(|chunk| {
                let mut w = csv::WriterBuilder::new()
                    .has_headers(false)
                    .terminator(csv::Terminator::Any(b'\n'))
                    .from_writer(Vec::with_capacity(chunk.len() * 512));
                for &(_, _, ri, i) in chunk {
                    write_event(&mut w, job, ri as usize, i as usize)?;
                }
                w.into_inner()
                    .map_err(|e| std::io::Error::other(e.to_string()))
            })
            .collect();
        for p in parts {
            out.write_all(&p?)?;
        }
    }
    out.flush()
}

fn write_event(
    w: &mut csv::Writer<Vec<u8>>,
    job: &JobAnalysis,
    ri: usize,
    i: usize,
) -> std::io::Result<()> {
    let Some(cells) = event_cells(job, ri, i) else {
        return Ok(());
    };
    w.write_record(cells.iter().map(|c| c.as_bytes()))
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// The 22 cells of one `memory_events.csv` row (row `i` of rank `ri`), as text: the one place
/// that says what each column holds, for the CSV and for the columnar export alike.
fn event_cells(job: &JobAnalysis, ri: usize, i: usize) -> Option<[Cow<'_, str>; 22]> {
    let r = job.ranks.get(ri)?;
    let row = r.rows.get(i)?;
    let attr = r.attribution.get(i)?;
    let signed = if row.negative {
        -i128::from(row.size)
    } else {
        i128::from(row.size)
    };
    let run = r
        .row_run
        .get(i)
        .and_then(|&k| r.summary.run_dirs.get(k as usize))
        .map_or("", |s| s.as_str());
    let step = r
        .row_step
        .get(i)
        .copied()
        .flatten()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let stack = r.stack(i);
    // Rows without any time are never read (the reader skips them), so `time_ns` is set here.
    Some([
        Cow::Borrowed(r.name(i)),
        Cow::Borrowed(r.summary.role.as_str()),
        Cow::Owned(rank_id(r)),
        Cow::Borrowed(stack),
        Cow::Borrowed(first_stack_line(stack)),
        Cow::Owned(bytes_to_unit_text(signed, 1024)),
        Cow::Owned(ms_or_zero(row.time_ns())),
        Cow::Owned(ms_or_zero(row.duration_ns)),
        Cow::Owned(mb_or_zero(row.alloc_total_allocated)),
        Cow::Owned(mb_or_zero(row.alloc_total_reserved)),
        Cow::Owned(mb_or_zero(row.alloc_total_active)),
        Cow::Borrowed(r.names.get(row.device)),
        Cow::Borrowed(if row.release_ns.is_some() {
            "true"
        } else {
            "false"
        }),
        Cow::Owned(opt_ms(row.release_ns)),
        Cow::Owned(opt_ms(row.active_release_ns)),
        Cow::Owned(opt_ms(row.active_duration_ns)),
        Cow::Borrowed(r.names.get(row.stream)),
        Cow::Borrowed(row.source.label()),
        Cow::Borrowed(attr.source.label()),
        Cow::Borrowed(r.top_frame(i)),
        Cow::Owned(step),
        Cow::Borrowed(run),
    ])
}

/// The type of each column of [`MEMORY_EVENTS_COLUMNS`] in a typed (columnar) export: the
/// contract's twelve never have an empty cell; the extras' empty cells are missing values.
pub const MEMORY_EVENTS_KINDS: [Kind; 22] = [
    Kind::Str,
    Kind::Str,
    Kind::Int,
    Kind::Str,
    Kind::Str,
    Kind::Float,
    Kind::Float,
    Kind::Float,
    Kind::Float,
    Kind::Float,
    Kind::Float,
    Kind::Str,
    Kind::Bool,
    Kind::Float,
    Kind::Float,
    Kind::Float,
    Kind::Str,
    Kind::Str,
    Kind::Str,
    Kind::Str,
    Kind::Int,
    Kind::Str,
];

/// `memory_events.csv` as typed columns (same rows, order and values as the CSV: each cell is
/// the CSV's text parsed once, numbers rounded correctly), for front ends that hand tables on
/// without text, such as the Python package's DataFrame and Arrow table.
pub fn memory_events_columns(job: &JobAnalysis) -> Vec<Column> {
    let order = event_order(job);
    let mut cols: Vec<ColumnBuilder> = MEMORY_EVENTS_COLUMNS
        .iter()
        .zip(MEMORY_EVENTS_KINDS)
        .map(|(name, kind)| ColumnBuilder::new(name, kind, order.len()))
        .collect();
    for &(_, _, ri, i) in &order {
        if let Some(cells) = event_cells(job, ri as usize, i as usize) {
            for (b, c) in cols.iter_mut().zip(cells.iter()) {
                b.push(c);
            }
        }
    }
    cols.into_iter().map(ColumnBuilder::finish).collect()
}

/// Columns of `rank_summary.csv`.
pub const RANK_SUMMARY_COLUMNS: [&str; 22] = [
    "role",
    "rank",
    "step",
    "run_dirs",
    "rows",
    "rows_pta",
    "rows_ge",
    "direct",
    "via_forward",
    "approximate",
    "none",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "peak_active_bytes",
    "peak_time_ns",
    "peak_source",
    "fragmentation_bytes",
    "unreleased_rows",
    "unreleased_bytes",
    "trace_ops",
    "trace_events",
    "outlier",
];

/// Writes `rank_summary.csv`: one row per rank.
pub fn write_rank_summary<W: Write>(job: &JobAnalysis, out: W) -> std::io::Result<()> {
    let rows = job.ranks.iter().map(|r| {
        let s = &r.summary;
        let outlier = job
            .outliers
            .iter()
            .any(|o| o.role == s.role && o.rank == s.rank && o.step == s.step);
        vec![
            s.role.clone(),
            rank_text(r),
            s.step.map(|x| x.to_string()).unwrap_or_default(),
            s.run_dirs.join(";"),
            s.rows.to_string(),
            s.rows_pta.to_string(),
            s.rows_ge.to_string(),
            s.stacks.direct.to_string(),
            s.stacks.via_forward.to_string(),
            s.stacks.approximate.to_string(),
            s.stacks.none.to_string(),
            s.peak_allocated_bytes.to_string(),
            s.peak_reserved_bytes.to_string(),
            s.peak_active_bytes.to_string(),
            s.peak_time_ns.to_string(),
            s.peak_source.to_string(),
            s.fragmentation_bytes.to_string(),
            s.unreleased_rows.to_string(),
            s.unreleased_bytes.to_string(),
            s.trace_ops.to_string(),
            s.trace_events.to_string(),
            if outlier { "yes" } else { "" }.to_string(),
        ]
    });
    super::write_csv(out, &RANK_SUMMARY_COLUMNS, rows)
}

/// Columns of `peak_attribution.csv`.
pub const PEAK_ATTRIBUTION_COLUMNS: [&str; 7] = [
    "role",
    "rank",
    "step",
    "peak_time_ns",
    "frame",
    "bytes",
    "count",
];

/// Writes `peak_attribution.csv`: per rank, the allocations alive at its peak grouped by top user
/// frame, largest first.
pub fn write_peak_attribution<W: Write>(job: &JobAnalysis, out: W) -> std::io::Result<()> {
    let rows = job.ranks.iter().flat_map(|r| {
        let s = &r.summary;
        s.live_at_peak.iter().map(move |g| {
            vec![
                s.role.clone(),
                rank_text(r),
                s.step.map(|x| x.to_string()).unwrap_or_default(),
                s.peak_time_ns.to_string(),
                g.frame.clone(),
                g.bytes.to_string(),
                g.count.to_string(),
            ]
        })
    });
    super::write_csv(out, &PEAK_ATTRIBUTION_COLUMNS, rows)
}

/// Columns of `step_peaks.csv`.
pub const STEP_PEAKS_COLUMNS: [&str; 8] = [
    "role",
    "rank",
    "step_folder",
    "profiler_step",
    "start_ns",
    "end_ns",
    "peak_allocated_bytes",
    "peak_time_ns",
];

/// Writes `step_peaks.csv`: per rank and `ProfilerStep#N`, the peak allocated bytes.
pub fn write_step_peaks<W: Write>(job: &JobAnalysis, out: W) -> std::io::Result<()> {
    let rows = job.ranks.iter().flat_map(|r| {
        let s = &r.summary;
        s.step_peaks.iter().map(move |p| {
            vec![
                s.role.clone(),
                rank_text(r),
                s.step.map(|x| x.to_string()).unwrap_or_default(),
                p.step.to_string(),
                p.start_ns.to_string(),
                p.end_ns.to_string(),
                p.peak_allocated_bytes.to_string(),
                p.peak_time_ns.to_string(),
            ]
        })
    });
    super::write_csv(out, &STEP_PEAKS_COLUMNS, rows)
}
