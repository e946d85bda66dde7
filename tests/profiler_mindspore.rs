//! A MindSpore run folder (`*_ascend_ms`) is labelled as MindSpore's, and a rank whose
//! `profiler_info` names no rank number is told apart by the device its rows name. The expected
//! device is read here from the CSV by a plain line split, independently of the reader.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::copy_dir;
use memlens::profiler::analysis::{analyze_job, AnalyzeOptions, RankAnalysis};
use memlens::profiler::discover_job;
use std::path::{Path, PathBuf};

const MS_RUN: &str = "fixtures/ascend/mindspore/worker0_20250101000000123_ascend_ms";
const PT_RUN: &str = "fixtures/torch_npu/msinsight-level0/text/rank0_ascend_pt";

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn analyse(run: &Path) -> Vec<RankAnalysis> {
    let mut inputs = memlens::families::input_set_from_paths(&[run.to_path_buf()]);
    let job = discover_job(inputs.classify());
    analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {}).ranks
}

/// The distinct last fields (`Device Type`) of the data lines of operator_memory.csv.
fn devices(run: &Path) -> Vec<String> {
    let text =
        std::fs::read_to_string(run.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv")).unwrap();
    let mut out: Vec<String> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim_end().rsplit(',').next().unwrap().to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn a_mindspore_run_without_a_rank_number_is_named_by_its_device_and_framework() {
    let run = fixture(MS_RUN);
    let ranks = analyse(&run);
    assert_eq!(ranks.len(), 1);
    let s = &ranks[0].summary;
    assert_eq!(s.rank, None, "profiler_info.json names no rank");
    let devs = devices(&run);
    assert_eq!(devs.len(), 1, "every row of the fixture names one device");
    let expected: u32 = devs[0].strip_prefix("NPU:").unwrap().parse().unwrap();
    assert_eq!(s.device, Some(expected));
    assert_eq!(s.framework, "MindSpore");
    // No memory_record.csv: the rebuilt allocator curve carries MindSpore's component name.
    let components: Vec<&str> = ranks[0]
        .memory
        .iter()
        .map(|m| m.component.as_str())
        .collect();
    assert_eq!(components, ["MindSpore"]);
    assert_eq!(s.peak_source, "operator_memory");
    let json = serde_json::to_value(s).unwrap();
    assert_eq!(json["rank"], "unknown");
    assert_eq!(json["device"], expected);
    assert_eq!(json["framework"], "MindSpore");
}

#[test]
fn rows_naming_two_devices_give_no_device() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("worker0_20250101000000123_ascend_ms");
    copy_dir(&fixture(MS_RUN), &run);
    let csv = run.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    // The last data line moves to another device.
    let cut = text.trim_end().rfind("NPU:3").unwrap();
    let changed = format!("{}NPU:4\r\n", &text[..cut]);
    std::fs::write(&csv, changed).unwrap();
    assert_eq!(devices(&run).len(), 2);
    let ranks = analyse(&run);
    assert_eq!(ranks[0].summary.device, None);
    assert_eq!(ranks[0].summary.framework, "MindSpore");
}

#[test]
fn a_torch_npu_run_keeps_its_names() {
    let run = fixture(PT_RUN);
    let ranks = analyse(&run);
    let s = &ranks[0].summary;
    assert_eq!(s.framework, "torch_npu");
    assert_eq!(s.rank, Some(0));
    let devs = devices(&run);
    let expected = (devs.len() == 1)
        .then(|| {
            devs[0]
                .strip_prefix("NPU:")
                .and_then(|d| d.parse::<u32>().ok())
        })
        .flatten();
    assert_eq!(s.device, expected);
    assert!(ranks[0].memory.iter().any(|m| m.component == "PTA"));
    assert!(!ranks[0].memory.iter().any(|m| m.component == "MindSpore"));
}
