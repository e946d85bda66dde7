//! A job split among parallel readers, as the page's worker pool reads it: every reader
//! classifies the whole drop, keeps the ranks it was given (`JobView::keep_ranks`) and sends their
//! summaries; the job overview is built from the summaries in whatever order they arrive
//! (`SummaryView::from_ranks`). The overview's ranks, matrix, outliers and totals are what
//! `memlens profiler --json` prints for the whole job read at once, and each part's bytes are the
//! sizes on disk of the files its reading plan names. What discovery says beside the ranks (its
//! warnings, the files not analysed) comes from the whole drop (`JobView::discovery`) and is the
//! one-reader report's: seen failing on main (546d10e), whose pooled overview had no discovery
//! warnings and an empty `ignored`.

mod common;

use memlens::input::InputSet;
use memlens::profiler::summary_view::{Request, SummaryView};
use memlens::profiler::view::{JobView, Request as JobRequest};
use serde_json::{json, Value};
use std::path::Path;

const RAW: &str = "fixtures/torch_npu/msinsight-level0/text";

fn dropped() -> InputSet {
    dropped_from(RAW, "text")
}

/// The files under `dir` (of the repository) dropped as the folder `name`.
fn dropped_from(dir: &str, name: &str) -> InputSet {
    let mut set = memlens::families::input_set();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    for (rel, bytes) in common::files_under(&root) {
        set.add_bytes(&format!("{name}/{rel}"), bytes);
    }
    set.classify();
    set
}

/// The summaries of the ranks with a run folder among `dirs`, read by a reader of its own.
fn summaries_of(dirs: &[String]) -> (Vec<String>, Vec<Value>) {
    summaries_in(dropped(), dirs)
}

/// [`summaries_of`] in the drop `set`.
fn summaries_in(mut set: InputSet, dirs: &[String]) -> (Vec<String>, Vec<Value>) {
    let mut v = JobView::open(&mut set);
    v.keep_ranks(&set, dirs);
    let planned = v.plan().iter().map(|f| f.path.clone()).collect();
    v.analyze(&set);
    let r: JobRequest =
        serde_json::from_value(json!({ "method": "rankSummaries", "params": {} })).unwrap();
    let ranks: Vec<Value> = serde_json::from_str(&v.answer(&r).unwrap()).unwrap();
    (planned, ranks)
}

#[test]
fn parts_name_each_rank_with_the_bytes_of_its_plan() {
    let mut set = dropped();
    let v = JobView::open(&mut set);
    let parts = v.parts(&set);
    assert_eq!(parts.len(), 2);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(RAW);
    for (k, p) in parts.iter().enumerate() {
        assert_eq!(p.rank, Some(k as u32));
        assert_eq!(p.run_dirs, vec![format!("text/rank{k}_ascend_pt")]);
        // The files the whole job's plan reads under this rank's folder, sized on disk.
        let on_disk: u64 = v
            .plan()
            .iter()
            .filter(|f| f.path.starts_with(&format!("{}/", p.run_dirs[0])))
            .map(|f| {
                let rel = f.path.strip_prefix("text/").unwrap();
                std::fs::metadata(root.join(rel)).unwrap().len()
            })
            .sum();
        assert!(on_disk > 0);
        assert_eq!(p.bytes, on_disk, "bytes of {}", p.run_dirs[0]);
    }
}

#[test]
fn a_job_read_in_parts_has_the_overview_of_the_whole_job() {
    let cli = common::profiler_json(&[RAW]);

    let (plan0, mut ranks) = summaries_of(&["text/rank0_ascend_pt".to_string()]);
    let (plan1, ranks1) = summaries_of(&["text/rank1_ascend_pt".to_string()]);
    assert!(!plan0.is_empty() && !plan1.is_empty());
    assert!(
        plan0.iter().all(|p| p.starts_with("text/rank0_ascend_pt/")),
        "{plan0:?}"
    );
    assert!(
        plan1.iter().all(|p| p.starts_with("text/rank1_ascend_pt/")),
        "{plan1:?}"
    );
    assert_eq!((ranks.len(), ranks1.len()), (1, 1));
    // The second reader's answer arrives first.
    let mut all = ranks1;
    all.append(&mut ranks);
    let all = serde_json::from_value(Value::Array(all)).unwrap();
    let mut view = SummaryView::from_ranks("the dropped job", all);
    let o: Value = serde_json::from_str(&view.answer(&Request::Overview).unwrap()).unwrap();

    let ranks = o["ranks"].as_array().unwrap();
    let cli_ranks = cli["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), cli_ranks.len());
    for (k, (r, c)) in ranks.iter().zip(cli_ranks).enumerate() {
        // Each rank says how it came out in the keys of a job summary's rank, as the CLI does.
        assert_eq!((&r["status"], &r["no_data"]), (&json!("ok"), &Value::Null));
        let mut r = r.clone();
        let m = r.as_object_mut().unwrap();
        // The CLI names folders from the path it was given; the drop from its own root.
        let dirs = |v: &Value| -> Vec<String> {
            v["run_dirs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_str().unwrap().rsplit('/').next().unwrap().to_string())
                .collect()
        };
        let ours = m.remove("run_dirs").unwrap();
        // The page opens a rank of the overview by these folders (`JobView::keep_ranks`).
        assert_eq!(ours, json!([format!("text/rank{k}_ascend_pt")]));
        assert_eq!(dirs(&json!({ "run_dirs": ours })), dirs(c));
        let mut c = c.clone();
        c.as_object_mut().unwrap().remove("run_dirs");
        assert_eq!(r, c);
    }
    assert_eq!(o["matrix"], cli["matrix"]);
    assert_eq!(o["outliers"], cli["outliers"]);
    for key in [
        "ranks",
        "rows",
        "rows_ge",
        "unreleased_bytes",
        "peak_rank",
        "peak_allocated_bytes",
    ] {
        assert_eq!(o["totals"][key], cli["totals"][key], "totals.{key}");
    }
}

#[test]
fn a_job_read_in_parts_says_what_discovery_said_as_one_reader_does() {
    // A job with discovery warnings (a rank unknown, a run set aside, hints) and files not
    // analysed (an empty file, notes, a .ir file that is not a dump).
    let (o, one) = parts_and_one(|| dropped_from("fixtures/classify/job", "job"));
    assert!(!one["ignored"].as_array().unwrap().is_empty());
    assert!(one["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["message"].as_str().unwrap().contains("names no rank")));
    assert_eq!(o["ignored"], one["ignored"]);
    // The same diagnostics (the ranks come in the overview's order, so compared as sets).
    let sorted = |v: &Value| {
        let mut w: Vec<String> = v.as_array().unwrap().iter().map(Value::to_string).collect();
        w.sort();
        w
    };
    assert_eq!(sorted(&o["warnings"]), sorted(&one["warnings"]));
    // The rollout rank's only file (its db export) was refused: both count the file once and
    // no failed rank, and say it in the same words.
    assert_eq!(one["totals"]["rejected"], 1);
    assert_same_totals_and_verdict(&o, &one);
}

/// `parts` (the overview built from the readers' summaries) has `one`'s totals (the one-reader
/// report's) and verdict, key by key; the rank of the highest peak is compared by what it is,
/// since the overview orders the ranks by role and rank, the report by discovery.
fn assert_same_totals_and_verdict(parts: &Value, one: &Value) {
    let keys: Vec<&String> = one["totals"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        parts["totals"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );
    for key in keys.into_iter().filter(|k| *k != "peak_rank") {
        assert_eq!(parts["totals"][key], one["totals"][key], "totals.{key}");
    }
    let peak = |v: &Value| {
        v["totals"]["peak_rank"].as_u64().map(|i| {
            let r = &v["ranks"][i as usize];
            (r["role"].clone(), r["rank"].clone(), r["step"].clone())
        })
    };
    assert_eq!(peak(parts), peak(one), "totals.peak_rank");
    assert_eq!(parts["verdict"], one["verdict"]);
}

/// The overview read in parts (one reader per rank, answers in reverse order) and the one-reader
/// report of the job `set()` drops.
fn parts_and_one(set: impl Fn() -> InputSet) -> (Value, Value) {
    let mut whole_set = set();
    let mut whole = JobView::open(&mut whole_set);
    let parts = whole.parts(&whole_set);
    let discovery = whole.discovery();
    whole.analyze(&whole_set);
    let r: JobRequest =
        serde_json::from_value(json!({ "method": "report", "params": {} })).unwrap();
    let one: Value = serde_json::from_str(&whole.answer(&r).unwrap()).unwrap();
    let mut all = Vec::new();
    for p in parts.iter().rev() {
        all.extend(summaries_in(set(), &p.run_dirs).1);
    }
    let all = serde_json::from_value(Value::Array(all)).unwrap();
    let mut view = SummaryView::from_parts("the dropped job", all, discovery);
    let o: Value = serde_json::from_str(&view.answer(&Request::Overview).unwrap()).unwrap();
    (o, one)
}

/// The db export sample with its database cut to a hundredth: its one rank's only memory file
/// is refused.
fn truncated_db() -> InputSet {
    let mut set = memlens::families::input_set();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/torch_npu/msinsight-level0/db");
    for (rel, mut bytes) in common::files_under(&root) {
        if rel.ends_with(".db") {
            bytes.truncate(bytes.len() / 100);
        }
        set.add_bytes(&format!("db/{rel}"), bytes);
    }
    set.classify();
    set
}

// Seen failing on main (d675c5a): the parts counted the rank as failed ("no rank could be read:
// 1 rank failed, 1 file could not be used") where one reader said "1 file could not be used",
// and both named the rank without data as the job's highest peak (peak_rank 0).
#[test]
fn a_job_whose_every_file_was_refused_has_no_peak_and_the_same_verdict_read_in_parts() {
    let (parts, one) = parts_and_one(truncated_db);
    assert_eq!(one["ranks"].as_array().unwrap().len(), 1);
    assert_eq!(one["totals"]["peak_rank"], Value::Null);
    assert_eq!(one["totals"]["peak_allocated_bytes"], 0);
    assert_eq!(one["totals"]["failed_ranks"], 0);
    assert_eq!(
        one["verdict"]["problem"],
        "no rank could be read: 1 file could not be used (see the errors)"
    );
    assert_same_totals_and_verdict(&parts, &one);
}

#[test]
fn a_reader_given_no_known_folder_reads_nothing() {
    let (plan, ranks) = summaries_of(&["text/elsewhere".to_string()]);
    assert!(plan.is_empty());
    assert!(ranks.is_empty());
}

/// The rank `role` of a report or overview.
fn rank_of(v: &Value, role: &str) -> Value {
    v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == role)
        .cloned()
        .unwrap_or_else(|| panic!("no {role} rank in {v}"))
}

// Seen failing on main (45f92bb): one reader's rank had no `status` and no `no_data` (the page
// drew its zeros as figures) where the pool's said `status` `error` with its diagnostics as
// `error` (the page drew "failed" with dashes), and neither said which kind of rank without data
// it was.
#[test]
fn a_rank_whose_file_was_refused_says_so_in_the_same_words_read_by_one_reader_or_in_parts() {
    let (parts, one) = parts_and_one(|| dropped_from("fixtures/classify/job", "job"));
    let (p, o) = (rank_of(&parts, "rollout"), rank_of(&one, "rollout"));
    for key in ["status", "error", "no_data"] {
        assert_eq!(p[key], o[key], "{key}");
    }
    assert_eq!(o["status"], "error");
    // Its peak is no cell of the matrix, whoever read the job, and the outliers are the same.
    assert_eq!(parts["matrix"], one["matrix"]);
    assert_eq!(parts["outliers"], one["outliers"]);
    assert!(!one["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["role"] == "rollout"));
    // What the rank's files were, from the job's own diagnostics: the one error names its db.
    let errors: Vec<&Value> = one["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (file, message) = (
        errors[0]["file"].as_str().unwrap(),
        errors[0]["message"].as_str().unwrap(),
    );
    // The rank names the file with the place the error gives (the db header's byte).
    let place = format!("{file} (byte {})", errors[0]["byte"].as_u64().unwrap());
    assert!(
        file.starts_with("job/rollout/") && file.ends_with(".db"),
        "{file}"
    );
    assert_eq!(
        o["no_data"],
        json!({
            "kind": "refused",
            "files": [{ "file": file, "place": place, "reason": message }],
            "reason": null,
            "says": format!("its file was refused: {place}: {message}"),
        })
    );
    // The ranks with data say nothing of the kind, in both.
    for v in [&parts, &one] {
        let with_data: Vec<&Value> = v["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["role"] != "rollout")
            .collect();
        assert_eq!(with_data.len(), 4);
        assert!(with_data
            .iter()
            .all(|r| r["status"] == "ok" && r["no_data"].is_null() && r["error"].is_null()));
    }
}
