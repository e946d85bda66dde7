//! A rank's raw run folder opened beside the job summary that lists it, as the page does it: the
//! folder analysed by the torch_npu view model (`rankSummaries`), then given to the summary's view
//! (`raw`). The replaced rank's figures are those `memlens profiler --json` prints for the folder;
//! a summary whose figures differ says on which, with both values; a folder whose rank the
//! summary lacks is said to match no rank, and the summary's ranks stay as they were. A folder
//! dropped alone names no role: it matches by its number and its folder's name.

mod common;

use memlens::profiler::summary_view::{Request, SummaryView};
use memlens::profiler::view::{JobView, Request as JobRequest};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const FILE: &str = "fixtures/summary/msinsight-level0.memlens.json";
const RANK1: &str = "fixtures/torch_npu/msinsight-level0/text/rank1_ascend_pt";

/// The rank summaries of the run folder `RANK1` dropped under the path `prefix`.
fn raw_ranks(prefix: &str) -> Value {
    let mut set = memlens::families::input_set();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(RANK1);
    for (rel, bytes) in common::files_under(&root) {
        set.add_bytes(&format!("{prefix}{rel}"), bytes);
    }
    set.classify();
    let mut v = JobView::open(&mut set);
    v.analyze(&set);
    let r: JobRequest =
        serde_json::from_value(json!({ "method": "rankSummaries", "params": {} })).unwrap();
    serde_json::from_str(&v.answer(&r).unwrap()).unwrap()
}

/// The CLI's report object of the folder's one rank.
fn cli_rank() -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["profiler", RANK1, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ranks"].as_array().unwrap().len(), 1);
    v["ranks"][0].clone()
}

fn open_raw(view: &mut SummaryView, ranks: Value) -> Value {
    let r: Request =
        serde_json::from_value(json!({ "method": "raw", "params": { "ranks": ranks } })).unwrap();
    serde_json::from_str(&view.answer(&r).unwrap()).unwrap()
}

/// The figures of a report object that do not depend on where the folder lies.
fn figures(r: &Value) -> Value {
    let keys = [
        "rank",
        "rows",
        "rows_pta",
        "rows_ge",
        "peak_allocated_bytes",
        "peak_reserved_bytes",
        "peak_time_ns",
        "fragmentation_bytes",
        "unreleased_rows",
        "unreleased_bytes",
        "live_at_peak",
        "step_peaks",
    ];
    Value::Object(keys.iter().map(|k| (k.to_string(), r[k].clone())).collect())
}

fn text() -> String {
    std::fs::read_to_string(FILE).unwrap()
}

#[test]
fn a_dropped_rank_folder_takes_its_ranks_place_with_the_clis_figures() {
    let cli = cli_rank();
    // Dropped inside its role's folder, and alone (its folders then name no role): both match.
    for prefix in ["text/rank1_ascend_pt/", "rank1_ascend_pt/"] {
        let mut view = SummaryView::from_text(FILE, &text()).unwrap();
        let o = open_raw(&mut view, raw_ranks(prefix));
        let raw = o["raw"].as_array().unwrap();
        assert_eq!(raw.len(), 1, "{prefix}: {raw:?}");
        assert_eq!(raw[0]["outcome"], "replaced", "{prefix}");
        assert_eq!(raw[0]["role"], "text", "{prefix}");
        assert_eq!(raw[0]["rank"], 1);
        let dir = prefix.trim_end_matches('/');
        assert_eq!(raw[0]["run_dirs"], json!([dir]), "{prefix}");
        // Summarised from the same files: the figures agree.
        assert_eq!(raw[0]["disagreements"], json!([]), "{prefix}");
        let i = raw[0]["index"].as_u64().unwrap() as usize;
        let r = &o["ranks"][i];
        assert_eq!(figures(r), figures(&cli), "{prefix}");
        assert_eq!(r["role"], "text");
        assert_eq!(r["run_dirs"], json!([dir]));
        assert_eq!(o["ranks"].as_array().unwrap().len(), 2);
        assert_eq!(o["totals"]["ranks"], 2);
    }
}

#[test]
fn figures_that_differ_from_the_summary_are_named_with_both_values() {
    let cli = cli_rank();
    let mut file: Value = serde_json::from_str(&text()).unwrap();
    let stale = 1_000_000u64;
    let held = &mut file["ranks"][1];
    assert_eq!(held["rank"], 1);
    held["peak_allocated_bytes"] = json!(stale);
    held["report"]["unreleased_bytes"] = json!(7);
    let mut view = SummaryView::from_text("job.memlens.json", &file.to_string()).unwrap();
    let o = open_raw(&mut view, raw_ranks("text/rank1_ascend_pt/"));
    let d = &o["raw"][0]["disagreements"];
    assert_eq!(
        d,
        &json!([
            {"figure": "peak_allocated_bytes", "summary": stale, "raw": cli["peak_allocated_bytes"]},
            {"figure": "unreleased_bytes", "summary": 7, "raw": cli["unreleased_bytes"]},
        ])
    );
    // The overview shows the folder's figures, not the summary's.
    let i = o["raw"][0]["index"].as_u64().unwrap() as usize;
    assert_eq!(
        o["ranks"][i]["peak_allocated_bytes"],
        cli["peak_allocated_bytes"]
    );

    // A failed rank of the summary opened from its folder: the status differs, and it has data.
    let mut file: Value = serde_json::from_str(&text()).unwrap();
    let held = &mut file["ranks"][1];
    held["status"] = json!("error");
    held["error"] = json!("the node was lost");
    held["report"] = Value::Null;
    held["peak_allocated_bytes"] = json!(0);
    held["peak_reserved_bytes"] = json!(0);
    let mut view = SummaryView::from_text("job.memlens.json", &file.to_string()).unwrap();
    assert_eq!(open_raw(&mut view, json!([]))["totals"]["failed_ranks"], 1);
    let o = open_raw(&mut view, raw_ranks("text/rank1_ascend_pt/"));
    assert_eq!(o["totals"]["failed_ranks"], 0);
    let figures: Vec<&str> = o["raw"][0]["disagreements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["figure"].as_str().unwrap())
        .collect();
    assert_eq!(
        figures,
        ["status", "peak_allocated_bytes", "peak_reserved_bytes"]
    );
}

#[test]
fn a_folder_the_summary_lacks_matches_no_rank_and_changes_nothing() {
    let mut file: Value = serde_json::from_str(&text()).unwrap();
    file["ranks"].as_array_mut().unwrap().truncate(1);
    let mut view = SummaryView::from_text("job.memlens.json", &file.to_string()).unwrap();
    let before = open_raw(&mut view, json!([]));
    let o = open_raw(&mut view, raw_ranks("rank1_ascend_pt/"));
    assert_eq!(o["raw"][0]["outcome"], "unmatched");
    assert_eq!(o["raw"][0]["index"], Value::Null);
    assert_eq!(o["ranks"], before["ranks"]);
    assert_eq!(o["totals"], before["totals"]);

    // A role-less folder whose number two roles of the summary have: ambiguous, both named.
    let mut file: Value = serde_json::from_str(&text()).unwrap();
    let mut other = file["ranks"][1].clone();
    other["role"] = json!("critic");
    other["report"]["role"] = json!("critic");
    file["ranks"].as_array_mut().unwrap().push(other);
    let mut view = SummaryView::from_text("job.memlens.json", &file.to_string()).unwrap();
    let o = open_raw(&mut view, raw_ranks("rank1_ascend_pt/"));
    assert_eq!(o["raw"][0]["outcome"], "ambiguous");
    let detail = o["raw"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("critic") && detail.contains("text"),
        "{detail}"
    );
    // The folder's name tells the two apart: the critic's rank 1 ran in another folder.
    file["ranks"][2]["run_dirs"] = json!(["critic/rank1_other_ascend_pt"]);
    let mut view = SummaryView::from_text("job.memlens.json", &file.to_string()).unwrap();
    let o = open_raw(&mut view, raw_ranks("rank1_ascend_pt/"));
    assert_eq!(o["raw"][0]["outcome"], "replaced");
    assert_eq!(o["raw"][0]["role"], "text");
    // A role-less folder of another name matches nothing, even where its number is unique.
    file["ranks"].as_array_mut().unwrap().remove(1);
    let mut view = SummaryView::from_text("job.memlens.json", &file.to_string()).unwrap();
    let o = open_raw(&mut view, raw_ranks("rank1_ascend_pt/"));
    assert_eq!(o["raw"][0]["outcome"], "unmatched");
}
