//! A rank dropped without its trace_view.json (the largest file, often left out) has no call stack
//! at all: its live set at the peak and its leak candidates are grouped by op name instead of
//! collapsing into one "(no stack)" group. The expected groups are computed here from a plain line
//! split of operator_memory.csv, independently of the code under test.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::profiler::analysis::{
    analyze_job, AnalyzeOptions, GROUP_BY_FRAME, GROUP_BY_OP_NAME, GROUP_BY_SIZE_CLASS, NO_STACK,
    UNTRACKED,
};
use memlens::profiler::discover_job;
use std::collections::BTreeMap;
use std::path::Path;

const RUN: &str = "fixtures/torch_npu/msinsight-level0/text/rank0_ascend_pt";

/// `"1736405443871259.720"` (µs) → ns, by string splitting (the test's own parser).
fn ns(text: &str) -> i64 {
    let t = text.trim();
    let (i, f) = t.split_once('.').unwrap_or((t, ""));
    let mut frac: String = f.chars().take(3).collect();
    while frac.len() < 3 {
        frac.push('0');
    }
    i.parse::<i64>().unwrap() * 1000 + frac.parse::<i64>().unwrap()
}

/// The run folder copied without its trace.
fn run_without_trace(dir: &Path) -> std::path::PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(RUN);
    let to = dir.join("rank0_ascend_pt");
    for entry in walk(&from) {
        let rel = entry.strip_prefix(&from).unwrap();
        if rel.file_name().is_some_and(|n| n == "trace_view.json") {
            continue;
        }
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&entry, dest).unwrap();
    }
    to
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

struct Row {
    name: String,
    bytes: u64,
    alloc: i64,
    release: Option<i64>,
}

fn csv_rows(run: &Path) -> Vec<Row> {
    let csv =
        std::fs::read_to_string(run.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| h.trim() == n).unwrap();
    let (c_name, c_size, c_alloc, c_rel) = (
        col("Name"),
        col("Size(KB)"),
        col("Allocation Time(us)"),
        col("Release Time(us)"),
    );
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Row {
                name: f[c_name].to_string(),
                bytes: (f[c_size].parse::<f64>().unwrap() * 1024.0) as u64,
                alloc: ns(f[c_alloc]),
                release: Some(f[c_rel].trim()).filter(|s| !s.is_empty()).map(ns),
            }
        })
        .collect()
}

fn by_name<'a>(rows: impl Iterator<Item = &'a Row>) -> BTreeMap<String, (u64, u64)> {
    let mut m: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for r in rows {
        let g = m.entry(r.name.clone()).or_default();
        g.0 += r.bytes;
        g.1 += 1;
    }
    m
}

#[test]
fn without_a_trace_the_groups_are_op_names() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_without_trace(dir.path());
    let mut inputs = memlens::families::input_set_from_paths(std::slice::from_ref(&run));
    let job = discover_job(inputs.classify());
    let a = analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {});
    assert_eq!(a.ranks.len(), 1);
    let rank = &a.ranks[0];
    let s = &rank.summary;
    assert_eq!(s.group_by, GROUP_BY_OP_NAME);
    let rows = csv_rows(&run);
    assert_eq!(s.rows as usize, rows.len());

    // Live at the peak: PTA allocations (not cann::) made by then and not yet released.
    let t = s.peak_time_ns;
    let live = by_name(rows.iter().filter(|r| {
        !r.name.starts_with("cann::") && r.alloc <= t && r.release.is_none_or(|x| x > t)
    }));
    let got: BTreeMap<String, (u64, u64)> = s
        .live_at_peak
        .iter()
        .filter(|g| g.frame != UNTRACKED)
        .map(|g| (g.frame.clone(), (g.bytes, g.count)))
        .collect();
    assert!(
        live.len() > 1,
        "the sample has several op names alive at the peak"
    );
    assert_eq!(got, live);
    assert!(s.live_at_peak.iter().all(|g| g.frame != NO_STACK));

    // Never released in the capture: every row without a release time.
    let never = by_name(rows.iter().filter(|r| r.release.is_none()));
    let got: BTreeMap<String, (u64, u64)> = rank
        .unreleased_groups(None, None)
        .into_iter()
        .map(|g| (g.frame, (g.bytes, g.count)))
        .collect();
    assert_eq!(got, never);
}

#[test]
fn with_the_trace_the_groups_stay_frames() {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join(RUN);
    let mut inputs = memlens::families::input_set_from_paths(&[run]);
    let job = discover_job(inputs.classify());
    let a = analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {});
    assert_eq!(a.ranks[0].summary.group_by, GROUP_BY_FRAME);
    assert!(a.ranks[0]
        .summary
        .live_at_peak
        .iter()
        .any(|g| g.frame.contains("/imagenet_script/")));
}

/// `[2^k, 2^(k+1) - 1]` holding `b` (`[0, 0]` for 0), by doubling.
fn class_of(b: u64) -> [u64; 2] {
    if b == 0 {
        return [0, 0];
    }
    let mut lo = 1u64;
    while lo <= b / 2 {
        lo *= 2;
    }
    [lo, lo * 2 - 1]
}

fn by_class<'a>(rows: impl Iterator<Item = &'a Row>) -> BTreeMap<[u64; 2], (u64, u64)> {
    let mut m: BTreeMap<[u64; 2], (u64, u64)> = BTreeMap::new();
    for r in rows {
        let g = m.entry(class_of(r.bytes)).or_default();
        g.0 += r.bytes;
        g.1 += 1;
    }
    m
}

fn classes(groups: &[memlens::profiler::analysis::FrameGroup]) -> BTreeMap<[u64; 2], (u64, u64)> {
    groups
        .iter()
        .filter(|g| g.frame != UNTRACKED)
        .map(|g| (g.size_range.expect("a size range"), (g.bytes, g.count)))
        .collect()
}

#[test]
fn size_classes_are_a_choice_beside_op_names() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_without_trace(dir.path());
    let mut inputs = memlens::families::input_set_from_paths(std::slice::from_ref(&run));
    let job = discover_job(inputs.classify());
    let a = analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {});
    let rank = &a.ranks[0];
    let s = &rank.summary;
    assert_eq!(s.group_by, GROUP_BY_OP_NAME);
    let rows = csv_rows(&run);
    let t = s.peak_time_ns;
    let live = by_class(rows.iter().filter(|r| {
        !r.name.starts_with("cann::") && r.alloc <= t && r.release.is_none_or(|x| x > t)
    }));
    let got = rank.live_groups_by(t, Some(s.peak_allocated_bytes), GROUP_BY_SIZE_CLASS);
    assert!(live.len() > 1, "several size classes alive at the peak");
    assert_eq!(classes(&got), live);
    // The groups still add up to the allocator's total at the peak.
    assert_eq!(
        got.iter().map(|g| g.bytes).sum::<u64>(),
        s.peak_allocated_bytes.max(live.values().map(|v| v.0).sum())
    );
    // Labels name the class in binary units, upper bound excluded.
    let one_mib = got
        .iter()
        .find(|g| g.size_range == Some([1 << 20, (2 << 20) - 1]));
    if let Some(g) = one_mib {
        assert_eq!(g.frame, "1 MiB – 2 MiB");
    }
    let never = by_class(rows.iter().filter(|r| r.release.is_none()));
    assert_eq!(
        classes(&rank.unreleased_groups_by(None, None, GROUP_BY_SIZE_CLASS)),
        never
    );
    // The default grouping is untouched by the choice, and op-name groups carry no size range.
    assert!(rank
        .unreleased_groups(None, None)
        .iter()
        .all(|g| g.size_range.is_none()));
}

#[test]
fn without_stacks_and_names_the_groups_are_size_classes() {
    // The run without its trace, with every op name blanked out (as a tool that drops names would).
    let dir = tempfile::tempdir().unwrap();
    let run = run_without_trace(dir.path());
    let p = run.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv");
    let text = std::fs::read_to_string(&p).unwrap();
    let blanked: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{l}\n")
            } else {
                let (_, rest) = l.split_once(',').unwrap_or(("", l));
                format!(",{rest}\n")
            }
        })
        .collect();
    std::fs::write(&p, blanked).unwrap();
    let mut inputs = memlens::families::input_set_from_paths(std::slice::from_ref(&run));
    let job = discover_job(inputs.classify());
    let a = analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {});
    let rank = &a.ranks[0];
    assert_eq!(rank.summary.group_by, GROUP_BY_SIZE_CLASS);
    let rows = csv_rows(&run);
    assert!(rows.iter().all(|r| r.name.is_empty()));
    assert_eq!(
        classes(&rank.unreleased_groups(None, None)),
        by_class(rows.iter().filter(|r| r.release.is_none()))
    );
    let t = rank.summary.peak_time_ns;
    // Without names, cann:: rows cannot be told apart by name: the live set is the PTA rows the
    // analysis read, so the check is on the unreleased groups above and on the labels here.
    for g in rank
        .summary
        .live_at_peak
        .iter()
        .filter(|g| g.frame != UNTRACKED)
    {
        let [lo, hi] = g.size_range.expect("a size range");
        assert_eq!(class_of(lo), [lo, hi]);
        assert!(g.frame.contains(" – ") || g.frame == "0 B", "{}", g.frame);
    }
    assert!(t > 0);
    // The group filter of the table keeps exactly a class's rows.
    let g = &rank.unreleased_groups(None, None)[0];
    let f = memlens::profiler::queries::RowFilter {
        unreleased: true,
        top_frame: Some(g.frame.clone()),
        ..Default::default()
    };
    assert_eq!(rank.rows_matching(&f).len() as u64, g.count);
}
