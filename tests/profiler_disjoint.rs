//! operator_memory.csv and memory_record.csv of one run that cover disjoint time ranges (copied
//! together from different runs) are detected: a warning names both ranges, the records are set
//! aside and the time axis spans the allocations only. The run is the real rank-0 sample with its
//! memory_record.csv shifted by 10,000 s here, by rewriting the timestamp column as text.

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
}
