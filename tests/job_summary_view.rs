//! Opening a job summary file as the page does (`profiler::summary_view`): recognised among the
//! inputs by its first bytes, its overview equal to what `memlens profiler --json` prints for the
//! raw job it summarises, its totals against sums computed here from the file's plain JSON, and
//! bad files refused with the file named.

use memlens::profiler::summary_view::{Request, SummaryView, MAX_SUMMARY_BYTES};
use memlens::source::{BytesSource, Source, SourceError};
use serde_json::{json, Value};
use std::process::Command;

const FILE: &str = "fixtures/summary/msinsight-level0.memlens.json";
const RAW: &str = "fixtures/torch_npu/msinsight-level0/text";

fn text() -> String {
    std::fs::read_to_string(FILE).unwrap()
}

fn overview(view: &mut SummaryView) -> Value {
    serde_json::from_str(&view.answer(&Request::Overview).unwrap()).unwrap()
}

#[test]
fn the_summary_file_is_recognised_among_other_files() {
    let mut set = memlens::families::input_set();
    set.add_bytes("drop/job.memlens.json", text().into_bytes());
    set.add_bytes(
        "drop/other.json",
        br#"{"format":"something else"}"#.to_vec(),
    );
    let inv = set.classify().clone();
    let kinds: Vec<(String, &str)> = inv
        .units
        .iter()
        .map(|u| {
            (
                serde_json::to_value(u).unwrap()["path"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                u.kind(),
            )
        })
        .collect();
    assert!(
        kinds.contains(&("drop/job.memlens.json".to_string(), "job-summary")),
        "{kinds:?}"
    );
    assert!(!kinds
        .iter()
        .any(|(p, k)| p == "drop/other.json" && *k == "job-summary"));
}

#[test]
fn overview_ranks_are_the_cli_report_of_the_raw_job() {
    let out = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["profiler", RAW, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut view = SummaryView::from_text(FILE, &text()).unwrap();
    let o = overview(&mut view);
    let ranks = o["ranks"].as_array().unwrap();
    let cli_ranks = cli["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), cli_ranks.len());
    for (r, c) in ranks.iter().zip(cli_ranks) {
        // Each rank says how it came out in the keys of a job summary's rank, as the CLI does.
        assert_eq!((&r["status"], &r["no_data"]), (&json!("ok"), &Value::Null));
        assert_eq!(r, c);
    }
    assert_eq!(o["matrix"], cli["matrix"]);
    assert_eq!(o["outliers"], cli["outliers"]);
    for key in [
        "ranks",
        "roles",
        "rows",
        "rows_ge",
        "unreleased_bytes",
        "unreleased_rows",
        "peak_rank",
        "peak_allocated_bytes",
        "min_peak_allocated_bytes",
    ] {
        assert_eq!(o["totals"][key], cli["totals"][key], "totals.{key}");
    }
    // One type of totals for both: the same keys, no failed rank in either.
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&o["totals"]), keys(&cli["totals"]));
    assert_eq!(o["totals"]["failed_ranks"], 0);
    assert_eq!(cli["totals"]["failed_ranks"], 0);
    assert_eq!(o["summary"]["file"], FILE);
    // The peak's time after the curve's start, from the file's own numbers.
    let file: Value = serde_json::from_str(&text()).unwrap();
    for (k, r) in file["ranks"].as_array().unwrap().iter().enumerate() {
        let origin = r["curve"]["t_ns"][0].as_i64().unwrap();
        let peak = r["report"]["peak_time_ns"].as_i64().unwrap();
        assert_eq!(o["times"][k]["origin_ns"], origin.to_string());
        assert_eq!(
            o["times"][k]["peak"].as_f64().unwrap(),
            (peak - origin) as f64
        );
    }
}

/// A job of many ranks made from the fixture's two: each copy with its own role, rank and peak,
/// one failed rank and one rank without a number.
fn many_ranks(n: usize) -> (String, Vec<Value>) {
    let file: Value = serde_json::from_str(&text()).unwrap();
    let base = file["ranks"].as_array().unwrap();
    let mut ranks = Vec::new();
    for k in 0..n {
        let mut r = base[k % base.len()].clone();
        let role = if k % 3 == 0 { "critic" } else { "actor" };
        let peak = 1_000_000_000u64 + (k as u64 * 7919) % 100_000_000;
        r["role"] = json!(role);
        r["rank"] = json!(k);
        r["report"]["role"] = json!(role);
        r["report"]["rank"] = json!(k);
        r["peak_allocated_bytes"] = json!(peak);
        r["report"]["peak_allocated_bytes"] = json!(peak);
        r["report"]["unreleased_bytes"] = json!(k as u64 * 1000);
        r["report"]["rows"] = json!(k as u64 + 5);
        ranks.push(r);
    }
    ranks.push(json!({
        "role": "actor", "rank": n, "step": null, "run_dirs": ["job/actor/broken_ascend_pt"],
        "status": "error", "error": "job/actor/broken_ascend_pt/operator_memory.csv: line 3: expected 8 fields",
        "peak_allocated_bytes": 0, "peak_reserved_bytes": 0, "report": null,
        "curve": {"component": "", "t_ns": [], "allocated_bytes": [], "reserved_bytes": []},
        "unreleased": [], "warnings": []
    }));
    // The file's head figures are stale on purpose: the view recomputes them from the ranks.
    let doc = json!({"format": "memlens-job-summary", "version": 1, "totals": {}, "matrix": [], "outliers": [], "ranks": ranks});
    (doc.to_string(), ranks)
}

#[test]
fn totals_of_a_thousand_ranks_are_the_sums_of_the_file() {
    let (doc, ranks) = many_ranks(1200);
    let mut view = SummaryView::from_text("job.memlens.json", &doc).unwrap();
    let o = overview(&mut view);
    let t = &o["totals"];
    let ok: Vec<&Value> = ranks.iter().filter(|r| r["status"] == "ok").collect();
    let max = ok
        .iter()
        .map(|r| r["peak_allocated_bytes"].as_u64().unwrap())
        .max()
        .unwrap();
    let min = ok
        .iter()
        .map(|r| r["peak_allocated_bytes"].as_u64().unwrap())
        .min()
        .unwrap();
    assert_eq!(t["ranks"], 1201);
    assert_eq!(t["ranks_with_data"], 1200);
    // The failed rank is a rank that failed, not a rejected file.
    assert_eq!(t["failed_ranks"], 1);
    assert_eq!(t["rejected"], 0);
    assert_eq!(t["roles"], 2);
    assert_eq!(t["peak_allocated_bytes"], max);
    assert_eq!(t["min_peak_allocated_bytes"], min);
    assert_eq!(
        t["unreleased_bytes"],
        (0..1200u64).map(|k| k * 1000).sum::<u64>()
    );
    assert_eq!(t["rows"], (0..1200u64).map(|k| k + 5).sum::<u64>());
    // Ranks ordered by role, then rank: critic's 400 after actor's 800 and the failed one.
    let out = o["ranks"].as_array().unwrap();
    assert_eq!(out[0]["role"], "actor");
    assert_eq!(out[801]["role"], "critic");
    let peak_idx = t["peak_rank"].as_u64().unwrap() as usize;
    assert_eq!(out[peak_idx]["peak_allocated_bytes"], max);
    // The matrix lists the ranks with data; the failed rank is an error naming its folder.
    assert_eq!(o["matrix"].as_array().unwrap().len(), 1200);
    let w = &o["warnings"][0];
    assert_eq!(w["severity"], "error");
    assert_eq!(w["file"], "job/actor/broken_ascend_pt");
    assert!(w["message"].as_str().unwrap().contains("line 3"));
    let failed = out.iter().find(|r| r["status"] == "error").unwrap();
    assert_eq!(failed["rank"], 1200);
    assert_eq!(failed["rows"], 0);
    // One rank's detail: the file's rank, whole.
    let r: Value =
        serde_json::from_str(&view.answer(&Request::Rank { rank: 801 }).unwrap()).unwrap();
    assert_eq!(r["role"], "critic");
    assert_eq!(r["rank"], 0);
    assert_eq!(r["curve"], ranks[0]["curve"]);
    assert!(view
        .answer(&Request::Rank { rank: 5000 })
        .unwrap_err()
        .contains("the summary holds 1201 ranks"));
}

#[test]
fn bad_summaries_are_refused_naming_the_file() {
    let e = SummaryView::from_text(
        "a.json",
        "{\"format\":\"memlens-job-summary\",\n\"version\":3,\"ranks\":[]}",
    )
    .err()
    .unwrap();
    assert_eq!(e.file, "a.json");
    assert!(e.message.contains("version"), "{}", e.message);
    let e = SummaryView::from_text(
        "b.json",
        "{\"format\":\"memlens-job-summary\",\n\"version\":1,\n\"ranks\":[{]}",
    )
    .err()
    .unwrap();
    assert_eq!((e.file.as_str(), e.line), ("b.json", Some(3)));
    let src = BytesSource::new("c.json", vec![0xff, 0xfe, b'{']);
    let e = SummaryView::open(&src).err().unwrap();
    assert_eq!((e.file.as_str(), e.byte), ("c.json", Some(0)));

    /// A source claiming more bytes than the page reads; never read.
    struct Huge;
    impl Source for Huge {
        fn name(&self) -> &str {
            "huge.memlens.json"
        }
        fn len(&self) -> u64 {
            MAX_SUMMARY_BYTES + 1
        }
        fn read_at(&self, _: u64, _: &mut [u8]) -> Result<usize, SourceError> {
            panic!("a file over the limit is not read")
        }
    }
    let e = SummaryView::open(&Huge).err().unwrap();
    assert_eq!(e.file, "huge.memlens.json");
    assert!(e.message.contains("at most"), "{}", e.message);
}
