//! operator_memory.csv and memory_record.csv of one run that cover disjoint time ranges (copied
//! together from different runs) are detected: a warning names both ranges, the records are set
//! aside and the time axis spans the allocations only; the records are kept and drawn on their own
//! range, with their own peak. The run is the real rank-0 sample with its
//! memory_record.csv shifted by 10,000 s here, by rewriting the timestamp column as text.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::discover_job;
use std::path::Path;

const RUN: &str = "fixtures/torch_npu/msinsight-level0/text/rank0_ascend_pt";
const SHIFT_US: i64 = 10_000_000_000;

/// `"1736405443871259.720"` (µs) → ns, by string splitting.
fn ns(text: &str) -> i64 {
    let t = text.trim();
    let (i, f) = t.split_once('.').unwrap_or((t, ""));
    let mut frac: String = f.chars().take(3).collect();
    while frac.len() < 3 {
        frac.push('0');
    }
    i.parse::<i64>().unwrap() * 1000 + frac.parse::<i64>().unwrap()
}

fn copy_run(to: &Path, shift_record: bool) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(RUN);
    std::fs::create_dir_all(to.join("ASCEND_PROFILER_OUTPUT")).unwrap();
    for name in ["profiler_info_0.json", "profiler_metadata.json"] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
    for name in [
        "operator_memory.csv",
        "npu_module_mem.csv",
        "trace_view.json",
    ] {
        let p = Path::new("ASCEND_PROFILER_OUTPUT").join(name);
        std::fs::copy(from.join(&p), to.join(&p)).unwrap();
    }
    let p = Path::new("ASCEND_PROFILER_OUTPUT/memory_record.csv");
    let text = std::fs::read_to_string(from.join(p)).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let mut f: Vec<String> = line.split(',').map(str::to_string).collect();
        if i > 0 && shift_record && f.len() > 1 {
            let t = f[1].trim();
            let (int, frac) = t.split_once('.').unwrap_or((t, ""));
            f[1] = format!("{}.{frac}", int.parse::<i64>().unwrap() + SHIFT_US);
        }
        out.push_str(&f.join(","));
        out.push('\n');
    }
    std::fs::write(to.join(p), out).unwrap();
}

/// First and last allocation/release time of the rows of operator_memory.csv (ns).
fn rows_span() -> (i64, i64) {
    let csv = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(RUN)
            .join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
    )
    .unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| h.trim() == n).unwrap();
    let (ca, cr) = (col("Allocation Time(us)"), col("Release Time(us)"));
    let times: Vec<i64> = lines
        .filter(|l| !l.trim().is_empty())
        .flat_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            [f[ca], f[cr]]
                .into_iter()
                .filter(|t| !t.trim().is_empty())
                .map(ns)
                .collect::<Vec<_>>()
        })
        .collect();
    (*times.iter().min().unwrap(), *times.iter().max().unwrap())
}

/// First and last timestamp of every record of the shifted memory_record.csv, and the highest
/// `Total Allocated(MB)` of its `PTA` rows (bytes, MB = 2^20 bytes) with the first time it is
/// reached (ns), all read by a plain line split.
fn shifted_records(run: &Path) -> ((i64, i64), (u64, i64)) {
    let csv =
        std::fs::read_to_string(run.join("ASCEND_PROFILER_OUTPUT/memory_record.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| h.trim() == n).unwrap();
    let (cc, ct, ca) = (
        col("Component"),
        col("Timestamp(us)"),
        col("Total Allocated(MB)"),
    );
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    let mut peak: Option<(u64, i64)> = None;
    for l in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = l.split(',').collect();
        let t = ns(f[ct]);
        lo = lo.min(t);
        hi = hi.max(t);
        if f[cc].trim() == "PTA" && !f[ca].trim().is_empty() {
            let b = (f[ca].trim().parse::<f64>().unwrap() * 1048576.0).round() as u64;
            if peak.is_none_or(|p| b > p.0) {
                peak = Some((b, t));
            }
        }
    }
    ((lo, hi), peak.unwrap())
}

fn analyse(dir: &Path) -> memlens::profiler::analysis::JobAnalysis {
    let mut inputs = memlens::families::input_set_from_paths(&[dir.to_path_buf()]);
    let job = discover_job(inputs.classify());
    analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {})
}

#[test]
fn disjoint_files_of_one_run_are_named_and_the_axis_stays_on_the_allocations() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(&dir.path().join("rank0_ascend_pt"), true);
    let a = analyse(dir.path());
    let r = &a.ranks[0];
    let named: Vec<&str> = a
        .warnings
        .iter()
        .filter(|d| d.message.contains("do not overlap"))
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(named.len(), 1, "{:?}", a.warnings);
    assert!(
        named[0].ends_with("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv"),
        "{named:?}"
    );
    let w: Vec<&str> = a
        .warnings
        .iter()
        .map(|d| d.message.as_str())
        .filter(|m| m.contains("do not overlap"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", a.warnings);
    let (lo, hi) = rows_span();
    // Both ranges are named, as the files write times (µs).
    assert!(
        w[0].contains(&format!("{}.{:03} us", lo / 1000, lo % 1000)),
        "{}",
        w[0]
    );
    assert!(
        w[0].contains(&format!("{}.{:03} us", hi / 1000, hi % 1000)),
        "{}",
        w[0]
    );
    assert_eq!(r.summary.peak_source, "operator_memory");
    // The axis: within the allocations and the module records of the same run, not 10,000 s.
    let width = r.capture_end_ns - r.capture_start_ns();
    assert!(width >= hi - lo, "{width}");
    assert!(width < SHIFT_US * 1000 / 100, "{width} ns");
    // Every part of the peak is within the rows' range.
    assert!(r.summary.peak_time_ns >= lo && r.summary.peak_time_ns <= hi);

    // The records are kept, on their own range, with their own peak.
    let ((rlo, rhi), (peak, peak_t)) = shifted_records(&dir.path().join("rank0_ascend_pt"));
    assert!(rlo > hi, "the fixture's records are after the rows");
    let aside = r
        .summary
        .records_aside
        .as_ref()
        .expect("records kept aside");
    assert!(aside.file.ends_with("memory_record.csv"), "{}", aside.file);
    assert_eq!((aside.start_ns, aside.end_ns), (rlo, rhi));
    assert_eq!(
        (aside.peak_allocated_bytes, aside.peak_time_ns),
        (peak, peak_t)
    );
    assert!(r.memory.iter().all(|s| s.ts.iter().all(|&t| t <= hi)));
}

#[test]
fn the_view_draws_the_records_aside_on_their_own_axis() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(&dir.path().join("rank0_ascend_pt"), true);
    let ((rlo, rhi), (peak, peak_t)) = shifted_records(&dir.path().join("rank0_ascend_pt"));
    let mut inputs = memlens::families::input_set_from_paths(&[dir.path().to_path_buf()]);
    let mut view = memlens::profiler::view::JobView::open(&mut inputs);
    view.analyze(&inputs);
    let info = &view.ranks()[0];
    let aside = info
        .records_aside
        .as_ref()
        .expect("records aside in the rank's facts");
    assert_eq!(aside.origin_ns, rlo.to_string());
    assert_eq!(aside.end, (rhi - rlo) as f64);
    assert_eq!(aside.peak, Some((peak_t - rlo) as f64));
    assert_eq!(aside.peak_bytes, peak as f64);
    // The main axis stays on the allocations.
    let (lo, hi) = rows_span();
    assert!(info.end < (hi - lo) as f64 * 100.0, "{}", info.end);
    // The curve of the records over their own range: its highest point is their peak, and one
    // column per pixel spans them all.
    let curves = view
        .curves(0, 0.0, aside.end + 1.0, 400, "aside:PTA:allocated")
        .unwrap();
    let top = curves[0]
        .max
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    assert_eq!(top, peak as f64);
}

#[test]
fn json_names_the_records_aside() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(&dir.path().join("rank0_ascend_pt"), true);
    let ((rlo, rhi), (peak, _)) = shifted_records(&dir.path().join("rank0_ascend_pt"));
    let v = common::profiler_json(&[dir.path()]);
    let aside = &v["ranks"][0]["records_aside"];
    assert_eq!(aside["start_ns"].as_i64(), Some(rlo));
    assert_eq!(aside["end_ns"].as_i64(), Some(rhi));
    assert_eq!(aside["peak_allocated_bytes"].as_u64(), Some(peak));
    assert_eq!(v["ranks"][0]["peak_source"], "operator_memory");
}

#[test]
fn the_unshifted_run_has_no_such_warning() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(&dir.path().join("rank0_ascend_pt"), false);
    let a = analyse(dir.path());
    assert!(a
        .warnings
        .iter()
        .all(|d| !d.message.contains("do not overlap")));
    assert_eq!(a.ranks[0].summary.peak_source, "memory_record");
    assert!(a.ranks[0].summary.records_aside.is_none());
    assert!(a.ranks[0].memory_aside.is_empty());
}

/// The components of the shifted memory_record.csv in first-seen order and how many rows it has,
/// by a plain line split.
fn shifted_components(run: &Path) -> (Vec<String>, usize) {
    let csv =
        std::fs::read_to_string(run.join("ASCEND_PROFILER_OUTPUT/memory_record.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cc = header.iter().position(|h| h.trim() == "Component").unwrap();
    let mut names: Vec<String> = Vec::new();
    let mut n = 0;
    for l in lines.filter(|l| !l.trim().is_empty()) {
        n += 1;
        let c = l.split(',').nth(cc).unwrap().trim().to_string();
        if !names.contains(&c) {
            names.push(c);
        }
    }
    (names, n)
}

fn out_dir(dir: &Path) -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["profiler", "--out"])
        .arg(out.path())
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

#[test]
fn out_writes_the_records_aside() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("rank0_ascend_pt");
    copy_run(&run, true);
    let ((rlo, rhi), (peak, peak_t)) = shifted_records(&run);
    let (mut components, count) = shifted_components(&run);
    let out = out_dir(dir.path());
    let text = std::fs::read_to_string(out.path().join("records_aside.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "role,rank,step,file,components,records,start_ns,end_ns,peak_allocated_bytes,\
             peak_time_ns,peak_reserved_bytes"
        )
    );
    let row: Vec<&str> = lines
        .next()
        .expect("one rank set aside")
        .split(',')
        .collect();
    assert_eq!(lines.next(), None, "{text}");
    assert_eq!(row.len(), 11, "{row:?}");
    assert_eq!(row[1], "0");
    assert!(row[3].ends_with("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    // The series are per component; the order of the list is not the file's, so compare sets.
    let mut written: Vec<&str> = row[4].split(';').collect();
    written.sort_unstable();
    components.sort_unstable();
    assert_eq!(written, components);
    assert_eq!(row[5], count.to_string());
    assert_eq!(
        row[6..10],
        [rlo, rhi, peak as i64, peak_t].map(|v| v.to_string())
    );
    // The allocations' own tables do not include them: the rank's peak is the allocations'.
    let summary = std::fs::read_to_string(out.path().join("rank_summary.csv")).unwrap();
    assert!(summary.contains(",operator_memory,"), "{summary}");
}

#[test]
fn out_writes_only_the_header_when_nothing_is_set_aside() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(&dir.path().join("rank0_ascend_pt"), false);
    let out = out_dir(dir.path());
    let text = std::fs::read_to_string(out.path().join("records_aside.csv")).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
}
