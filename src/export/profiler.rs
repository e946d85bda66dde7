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
        "{} rank(s), {}",
        analysis.ranks.len(),
        crate::diag::Levels::of(&analysis.warnings)
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
        // A rank without data has no peaks: a dash, not "0.0", and why on the line below.
        let no_data = crate::profiler::summary::RankOutcome::of(r).no_data;
        let peak = |b: u64| match no_data {
            Some(_) => "-".to_string(),
            None => format!("{:.1}", mib(b)),
        };
        let _ = writeln!(
            o,
            "{:<24} {:>7} {:>7} {:>6} {:>7} {:>7} {:>6} {:>6} {:>11} {:>11} {:>10}",
            role,
            rank,
            s.rows,
            s.rows_ge,
            s.stacks.direct,
            s.stacks.via_forward,
            s.stacks.approximate,
            s.stacks.none,
            peak(s.peak_allocated_bytes),
            peak(s.peak_reserved_bytes),
            s.unreleased_rows
        );
        if let Some(n) = &no_data {
            let _ = writeln!(o, "    no figures: {}", n.says);
        }
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
/// text whatever the number of rows. Each chunk of rows is formatted straight into one byte
/// buffer (numbers with `itoa` and the exact decimal formatters, text quoted as the `csv` crate
/// quotes it), without a `String` per cell.
pub fn write_memory_events<W: Write>(job: &JobAnalysis, mut out: W) -> std::io::Result<()> {
    use rayon::prelude::*;
    let order = event_order(job);
    super::write_csv(
        &mut out,
        &MEMORY_EVENTS_COLUMNS,
        std::iter::empty::<Vec<&str>>(),
    )?;
    for batch in order.chunks(8 * 1024) {
        let parts: Vec<Vec<u8>> = batch
            .par_chunks(1024)
            .map(|chunk| {
                let mut buf = Vec::with_capacity(chunk.len() * 512);
                for &(_, _, ri, i) in chunk {
                    if let Some(cells) = event_cells(job, ri as usize, i as usize) {
                        push_csv_row(&mut buf, &cells);
                    }
                }
                buf
            })
            .collect();
        for p in parts {
            out.write_all(&p)?;
        }
    }
    out.flush()
}

/// One cell of `memory_events.csv` before it is formatted: text as it is, numbers still numbers,
/// so the CSV writer formats them into its buffer and the columnar export parses nothing twice.
#[derive(Debug, Clone, Copy)]
enum Cell<'a> {
    /// Text, quoted in the CSV when it holds a comma, a quote or a line break.
    Text(&'a str),
    /// An integer.
    Int(i128),
    /// Nanoseconds, written as exact milliseconds.
    Ms(i64),
    /// Bytes, written as an exact decimal of `unit`-byte units.
    Units(i128, u32),
}

impl Cell<'_> {
    /// The cell's text (unquoted) appended to `out`.
    fn push_text(&self, out: &mut Vec<u8>) {
        match *self {
            Cell::Text(t) => out.extend_from_slice(t.as_bytes()),
            Cell::Int(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
            Cell::Ms(ns) => crate::profiler::push_ns_as_ms(out, ns),
            Cell::Units(b, unit) => crate::profiler::push_bytes_as_units(out, b, unit),
        }
    }
}

/// Appends one CSV row (LF-terminated) to `out`, quoting exactly as the `csv` crate's writer does
/// with the settings of [`super::csv_writer`]: a field holding `,`, `"`, CR or LF is put in quotes
/// with its quotes doubled; nothing else is quoted. Numbers never need quotes.
fn push_csv_row(out: &mut Vec<u8>, cells: &[Cell<'_>]) {
    for (k, c) in cells.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        match *c {
            Cell::Text(t) => push_csv_text(out, t.as_bytes()),
            _ => c.push_text(out),
        }
    }
    if cells.len() == 1 && matches!(cells.first(), Some(Cell::Text(""))) {
        // A record of one empty field would read back as a blank line.
        out.extend_from_slice(b"\"\"");
    }
    out.push(b'\n');
}

fn push_csv_text(out: &mut Vec<u8>, t: &[u8]) {
    let quote =
        memchr::memchr3(b',', b'"', b'\n', t).is_some() || memchr::memchr(b'\r', t).is_some();
    if !quote {
        out.extend_from_slice(t);
        return;
    }
    out.push(b'"');
    let mut rest = t;
    while let Some(q) = memchr::memchr(b'"', rest) {
        out.extend_from_slice(rest.get(..=q).unwrap_or(rest));
        out.push(b'"');
        rest = rest.get(q + 1..).unwrap_or(&[]);
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// A contract float column of a time: `0.0` where the source is empty, as the Python tool writes.
fn ms_or_zero(v: Option<i64>) -> Cell<'static> {
    v.map_or(Cell::Text("0.0"), Cell::Ms)
}

/// A contract float column of a total: `0.0` where the source is empty, as the Python tool writes.
fn mb_or_zero(v: Option<u64>) -> Cell<'static> {
    v.map_or(Cell::Text("0.0"), |b| Cell::Units(i128::from(b), 1 << 20))
}

/// An optional time of the extras: empty where there is none.
fn opt_ms(v: Option<i64>) -> Cell<'static> {
    v.map_or(Cell::Text(""), Cell::Ms)
}

/// The 22 cells of one `memory_events.csv` row (row `i` of rank `ri`): the one place that says
/// what each column holds, for the CSV and for the columnar export alike.
fn event_cells(job: &JobAnalysis, ri: usize, i: usize) -> Option<[Cell<'_>; 22]> {
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
        .map_or(Cell::Text(""), |s| Cell::Int(i128::from(s)));
    // The contract's `rank_id` is an integer; the Python tool's own marker for a folder without a
    // rank is `-1` (it skips such folders; memlens keeps their rows).
    let rank_id = Cell::Int(r.summary.rank.map_or(-1, i128::from));
    let stack = r.stack(i);
    // Rows without any time are never read (the reader skips them), so `time_ns` is set here.
    Some([
        Cell::Text(r.name(i)),
        Cell::Text(r.summary.role.as_str()),
        rank_id,
        Cell::Text(stack),
        Cell::Text(first_stack_line(stack)),
        Cell::Units(signed, 1024),
        ms_or_zero(row.time_ns()),
        ms_or_zero(row.duration_ns()),
        mb_or_zero(row.alloc_total_allocated()),
        mb_or_zero(row.alloc_total_reserved()),
        mb_or_zero(row.alloc_total_active()),
        Cell::Text(r.names.get(row.device)),
        Cell::Text(if row.release_ns().is_some() {
            "true"
        } else {
            "false"
        }),
        opt_ms(row.release_ns()),
        opt_ms(row.active_release_ns()),
        opt_ms(row.active_duration_ns()),
        Cell::Text(r.names.get(row.stream)),
        Cell::Text(row.source.label()),
        Cell::Text(attr.source.label()),
        Cell::Text(r.top_frame(i)),
        step,
        Cell::Text(run),
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
    let mut text = Vec::new();
    for &(_, _, ri, i) in &order {
        if let Some(cells) = event_cells(job, ri as usize, i as usize) {
            for (b, c) in cols.iter_mut().zip(cells.iter()) {
                text.clear();
                c.push_text(&mut text);
                // Every cell is UTF-8: text cells are `str`, the others ASCII.
                b.push(std::str::from_utf8(&text).unwrap_or_default());
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

/// Columns of `records_aside.csv`.
pub const RECORDS_ASIDE_COLUMNS: [&str; 11] = [
    "role",
    "rank",
    "step",
    "file",
    "components",
    "records",
    "start_ns",
    "end_ns",
    "peak_allocated_bytes",
    "peak_time_ns",
    "peak_reserved_bytes",
];

/// Writes `records_aside.csv`: one row per rank whose memory records were set aside because they
/// cover a time range disjoint from its allocation rows (files copied together from different
/// runs), with the records' file, components (`;`-joined), count, range and framework-allocator
/// peaks. Only the header when no rank has records set aside.
pub fn write_records_aside<W: Write>(job: &JobAnalysis, out: W) -> std::io::Result<()> {
    let rows = job.ranks.iter().filter_map(|r| {
        let s = &r.summary;
        let a = s.records_aside.as_ref()?;
        let components: Vec<&str> = r
            .memory_aside
            .iter()
            .map(|x| x.component.as_str())
            .collect();
        let records: usize = r.memory_aside.iter().map(|x| x.ts.len()).sum();
        Some(vec![
            s.role.clone(),
            rank_text(r),
            s.step.map(|x| x.to_string()).unwrap_or_default(),
            a.file.clone(),
            components.join(";"),
            records.to_string(),
            a.start_ns.to_string(),
            a.end_ns.to_string(),
            a.peak_allocated_bytes.to_string(),
            a.peak_time_ns.to_string(),
            a.peak_reserved_bytes.to_string(),
        ])
    });
    super::write_csv(out, &RECORDS_ASIDE_COLUMNS, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row writer quotes exactly as the `csv` crate's writer (with the exports' settings) does,
    /// on fields made of the bytes that matter to quoting and a few that do not.
    #[test]
    fn rows_are_the_bytes_the_csv_crate_writes() {
        let alphabet = [
            ",", "\"", "\r", "\n", ";\r\n", "a", " ", "\t", "é", "'", "\\",
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..2_000 {
            let fields: Vec<String> = (0..1 + next(4))
                .map(|_| {
                    (0..next(6))
                        .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                        .collect()
                })
                .collect();
            let cells: Vec<Cell<'_>> = fields.iter().map(|f| Cell::Text(f)).collect();
            let mut ours = Vec::new();
            push_csv_row(&mut ours, &cells);
            let mut w = crate::export::csv_writer(Vec::new());
            w.write_record(&fields).unwrap();
            assert_eq!(ours, w.into_inner().unwrap(), "{fields:?}");
        }
    }

    #[test]
    fn number_cells_are_written_unquoted() {
        let mut out = Vec::new();
        push_csv_row(
            &mut out,
            &[
                Cell::Int(-1),
                Cell::Ms(-1_500_001),
                Cell::Units(1_000_729_600, 1 << 20),
                Cell::Text(""),
            ],
        );
        assert_eq!(out, b"-1,-1.500001,954.3701171875,\n");
    }
}
