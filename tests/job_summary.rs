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

// Seen failing on main (45f92bb): `--json` had no `no_data` (nor `status`), the summary file's
// rank none either, and the table printed the refused rank's peaks as "0.0" with no word of why.
#[test]
fn a_rank_whose_file_was_refused_is_said_the_same_by_the_table_the_json_and_the_summary() {
    let job = Path::new("fixtures/classify/job");
    let dir = tempfile::tempdir().unwrap();
    let (summary, out) = summary_of(job, dir.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let json = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["profiler", "fixtures/classify/job", "--json", "-q"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    let rollout = |v: &Value| {
        v["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["role"] == "rollout")
            .cloned()
            .unwrap()
    };
    let said = rollout(&json)["no_data"].clone();
    assert_eq!(said["kind"], "refused");
    let db = said["files"][0]["file"].as_str().unwrap().to_string();
    assert!(db.starts_with("job/rollout/"), "{db}");
    // The summary file's rank keeps the same fact.
    assert_eq!(rollout(&summary)["no_data"], said);
    assert_eq!(rollout(&summary)["status"], "error");
    // The table: the rank's peaks are dashes, and the line under it says why, in those words.
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("rollout "))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[8..10], ["-", "-"], "{row}");
    let says = format!("    no figures: {}", said["says"].as_str().unwrap());
    assert!(text.lines().any(|l| l == says), "{text}");
    // The file is named with the place the reader's error gives (the db's header, at a byte
    // offset), in the words of that error's own line among the warnings. Seen failing before the
    // place was kept: the line said "{db}: page size 0 …", the byte offset only in the warnings.
    let error = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["severity"] == "error" && w["file"] == db.as_str())
        .unwrap_or_else(|| panic!("{json}"));
    let byte = error["byte"]
        .as_u64()
        .expect("the db's error names its byte");
    let message = error["message"].as_str().unwrap();
    assert_eq!(
        said["says"],
        format!("its file was refused: {db} (byte {byte}): {message}")
    );
    assert!(
        text.lines()
            .any(|l| l == format!("{db} (byte {byte}): error: {message}")),
        "{text}"
    );
    // The other ranks print their peaks and no such line.
    assert_eq!(text.matches("no figures:").count(), 1, "{text}");
}

// A file written before `no_data` (its ranks have none) is read with the same fact, taken from
// its `report` and `warnings`; a rank with no report failed where it ran, with its `error`.
// Seen failing on main (45f92bb): the ranks read had no `no_data`.
#[test]
fn a_summary_written_before_no_data_is_read_with_it() {
    use memlens::profiler::summary::read_ranks;
    let dir = tempfile::tempdir().unwrap();
    let (summary, _) = summary_of(Path::new("fixtures/classify/job"), dir.path());
    let mut old = summary.clone();
    let ranks = old["ranks"].as_array_mut().unwrap();
    for r in ranks.iter_mut() {
        r.as_object_mut().unwrap().remove("no_data");
    }
    // A rank whose task failed on its node, as an older driver wrote it.
    let lost = ranks.iter_mut().find(|r| r["role"] == "ref").unwrap();
    let lost_dirs = lost["run_dirs"].clone();
    for (k, v) in [
        ("status", Value::from("error")),
        ("error", Value::from("the worker of this task died")),
        ("report", Value::Null),
    ] {
        lost[k] = v;
    }
    let read = read_ranks("old.memlens.json", &old.to_string()).unwrap();
    let read: Value = serde_json::to_value(read).unwrap();
    let of = |role: &str| -> Vec<&Value> {
        read.as_array()
            .unwrap()
            .iter()
            .filter(|r| r["role"] == role)
            .collect()
    };
    let rollout = summary["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "rollout")
        .unwrap();
    assert_eq!(of("rollout")[0]["no_data"], rollout["no_data"]);
    let lost = of("ref")
        .into_iter()
        .find(|r| r["run_dirs"] == lost_dirs)
        .unwrap();
    assert_eq!(lost["no_data"]["kind"], "failed");
    assert_eq!(
        lost["no_data"]["says"],
        "its analysis failed where it ran: the worker of this task died"
    );
    assert!(of("actor").iter().all(|r| r["no_data"].is_null()));
}
