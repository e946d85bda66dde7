//! `memlens profiler PATH --summary FILE` on the real two-rank sample, against figures derived
//! from the input files by other means (fixtures/contract/memory_events_expected.json, written by
//! a standalone Python script from operator_memory.csv), and on a job with a damaged rank.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const SAMPLE: &str = "fixtures/torch_npu/msinsight-level0/text";

fn summary_of(path: &Path, dir: &Path) -> (Value, std::process::Output) {
    let file = dir.join("job.memlens.json");
    let out = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .arg("profiler")
        .arg(path)
        .arg("--summary")
        .arg(&file)
        .output()
        .expect("memlens runs");
    let text = std::fs::read_to_string(&file).expect("the summary file is written");
    assert!(text.ends_with("}\n"));
    (
        serde_json::from_str(&text).expect("the summary is JSON"),
        out,
    )
}

#[test]
fn sample_summary_matches_the_python_expectations() {
    let dir = tempfile::tempdir().unwrap();
    let (s, out) = summary_of(Path::new(SAMPLE), dir.path());
    assert!(out.status.success(), "{out:?}");
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string("fixtures/contract/memory_events_expected.json").unwrap(),
    )
    .unwrap();
    assert_eq!(s["format"], "memlens-job-summary");
    assert_eq!(s["version"], 2);
    assert_eq!(s["totals"]["ranks"], 2);
    assert_eq!(s["totals"]["failed"], 0);
    let ranks = s["ranks"].as_array().unwrap();
    for (k, r) in ranks.iter().enumerate() {
        assert_eq!(r["rank"], k as u64);
        assert_eq!(r["status"], "ok");
        assert_eq!(
            r["run_dirs"],
            serde_json::json!([format!("text/rank{k}_ascend_pt")])
        );
        // The unreleased count and the 20 largest unreleased blocks, from the Python script's rows.
        let mut sizes: Vec<u64> = expected["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["rank_id"] == k as u64 && e["released"] == false)
            .map(|e| (e["size_kb"].as_f64().unwrap() * 1024.0) as u64)
            .collect();
        assert_eq!(
            r["report"]["unreleased_rows"],
            expected["unreleased_per_rank"][k.to_string()]
        );
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        sizes.truncate(20);
        let listed: Vec<u64> = r["unreleased"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["size_bytes"].as_u64().unwrap())
            .collect();
        assert_eq!(listed, sizes);
        // The reduced curve keeps the peak exactly.
        let curve = r["curve"]["allocated_bytes"].as_array().unwrap();
        assert!(!curve.is_empty() && curve.len() <= 256);
        let top = curve.iter().filter_map(Value::as_u64).max();
        assert_eq!(top, r["peak_allocated_bytes"].as_u64());
        assert_eq!(
            r["report"]["peak_allocated_bytes"],
            r["peak_allocated_bytes"]
        );
    }
    assert_eq!(s["matrix"].as_array().unwrap().len(), 2);
}

#[test]
fn a_damaged_rank_is_in_the_summary_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    for k in 0..2 {
        let from = Path::new(SAMPLE).join(format!("rank{k}_ascend_pt"));
        let to = job.join(format!("rank{k}_ascend_pt"));
        for f in [
            "profiler_info_0.json",
            "profiler_info_1.json",
            "profiler_metadata.json",
            "ASCEND_PROFILER_OUTPUT/operator_memory.csv",
            "ASCEND_PROFILER_OUTPUT/memory_record.csv",
        ] {
            if from.join(f).exists() {
                std::fs::create_dir_all(to.join(f).parent().unwrap()).unwrap();
                std::fs::copy(from.join(f), to.join(f)).unwrap();
            }
        }
    }
    let bad = job.join("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::write(bad.join("operator_memory.csv"), b"garbage\n").unwrap();
    std::fs::write(bad.join("memory_record.csv"), b"\xff\xfe\n").unwrap();
    // Files that could not be used: exit 2 (the README's rule), the summary still written.
    let (s, out) = summary_of(&job, dir.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(s["totals"]["ok"], 1);
    assert_eq!(s["totals"]["failed"], 1);
    let r1 = &s["ranks"][1];
    assert_eq!(r1["status"], "error");
    let why = r1["error"].as_str().unwrap();
    assert!(
        why.contains("job/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv:1"),
        "{why}"
    );
    assert!(why.contains("memory_record.csv"), "{why}");
    // The rank's diagnostics keep their level and place: both files as errors.
    let errors: Vec<&str> = r1["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["severity"] == "error")
        .map(|w| w["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        errors,
        [
            "job/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
            "job/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv"
        ]
    );
    assert_eq!(s["ranks"][0]["status"], "ok");
    assert_eq!(s["matrix"].as_array().unwrap().len(), 1);
}
