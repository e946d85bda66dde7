//! The torch_npu view model as the page uses it: a job opened from an input set, asked with the
//! worker's JSON requests. Checked against the CLI on the same files (`--json` bytes, `--out`
//! files) and against sums and lookups done here over the report's own ranks.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::profiler::view::{JobView, Request};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn job_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/torch_npu/msinsight-level0")
}

fn view() -> JobView {
    let mut set = memlens::families::input_set_from_paths(&[job_dir()]);
    let mut v = JobView::open(&mut set);
    v.analyze(&set);
    v
}

fn ask(v: &mut JobView, method: &str, params: Value) -> Result<Value, String> {
    let r: Request = serde_json::from_value(json!({ "method": method, "params": params })).unwrap();
    v.answer(&r).map(|t| serde_json::from_str(&t).unwrap())
}

fn cli(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn report_and_exports_are_the_cli_s_and_the_totals_add_up() {
    let mut v = view();
    let dir = job_dir();
    let dir = dir.to_str().unwrap();
    let want = cli(&["profiler", dir, "--json"]);
    assert_eq!(v.export("summary.json").unwrap(), want);
    let out = tempfile::tempdir().unwrap();
    cli(&["profiler", dir, "--out", out.path().to_str().unwrap()]);
    for name in [
        "memory_events.csv",
        "rank_summary.csv",
        "peak_attribution.csv",
        "step_peaks.csv",
    ] {
        let file = std::fs::read(out.path().join(name)).unwrap();
        assert_eq!(v.export(name).unwrap(), file, "{name}");
    }
    assert!(v.export("nope.csv").is_err());

    let report = ask(&mut v, "report", json!({})).unwrap();
    let cli_report: Value = serde_json::from_slice(&want).unwrap();
    assert_eq!(report, cli_report);
    // Totals, summed here over the report's ranks.
    let ranks = report["ranks"].as_array().unwrap();
    let sum = |k: &str| ranks.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    let t = &report["totals"];
    assert_eq!(t["ranks"], ranks.len());
    assert_eq!(t["rows"], sum("rows"));
    assert_eq!(t["rows_ge"], sum("rows_ge"));
    assert_eq!(t["unreleased_bytes"], sum("unreleased_bytes"));
    assert_eq!(t["unreleased_rows"], sum("unreleased_rows"));
    assert_eq!(t["warnings"], report["warnings"].as_array().unwrap().len());
    assert_eq!(t["ignored"], report["ignored"].as_array().unwrap().len());
    let peaks: Vec<u64> = ranks
        .iter()
        .map(|r| r["peak_allocated_bytes"].as_u64().unwrap())
        .collect();
    let top = *peaks.iter().max().unwrap();
    assert_eq!(t["peak_allocated_bytes"], top);
    assert_eq!(t["min_peak_allocated_bytes"], *peaks.iter().min().unwrap());
    assert_eq!(
        t["peak_rank"],
        peaks.iter().position(|&p| p == top).unwrap()
    );
    let mut roles: Vec<&str> = ranks.iter().map(|r| r["role"].as_str().unwrap()).collect();
    roles.sort();
    roles.dedup();
    assert_eq!(t["roles"], roles.len());
}

#[test]
fn ranks_rows_live_sets_and_curves_answer_in_relative_time() {
    let mut v = view();
    let report = ask(&mut v, "report", json!({})).unwrap();
    let ranks = ask(&mut v, "ranks", json!({})).unwrap();
    let plan = ask(&mut v, "plan", json!({})).unwrap();
    // 4 files for each of the two text ranks; the db-only rank reads its database alone.
    let readers: Vec<&str> = plan
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["reader"].as_str().unwrap())
        .collect();
    assert_eq!(readers.len(), 9, "{readers:?}");
    assert_eq!(readers[0], "database");
    for (k, info) in ranks.as_array().unwrap().iter().enumerate() {
        let s = &report["ranks"][k];
        let origin: i64 = info["origin_ns"].as_str().unwrap().parse().unwrap();
        // The peak, relative to the origin, is the summary's absolute peak time.
        let peak = info["peak"].as_f64().unwrap();
        assert_eq!(origin + peak as i64, s["peak_time_ns"].as_i64().unwrap());
        // The live set at the peak is the summary's, and adds up to the peak.
        let live = ask(&mut v, "liveAt", json!({"rank": k, "t": peak})).unwrap();
        assert_eq!(live, s["live_at_peak"]);
        let bytes: u64 = live
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(bytes, s["peak_allocated_bytes"].as_u64().unwrap());
        // The allocated curve over the whole capture peaks at the summary's peak.
        let end = info["end"].as_f64().unwrap();
        let curves = v
            .curves(k, 0.0, end + 1.0, 300, "PTA:allocated,PTA:reserved")
            .unwrap();
        assert_eq!(curves.len(), 2);
        let top = curves[0].max.iter().copied().fold(0.0, f64::max);
        assert_eq!(top, s["peak_allocated_bytes"].as_f64().unwrap());
        assert!(v.curves(k, 0.0, 1.0, 10, "PTA").is_err());
        // A row's detail agrees with its table cells; its frames spell its stack.
        let page = ask(
            &mut v,
            "table",
            json!({"rank": k, "offset": 0, "limit": 3, "query": {"sort": "size", "descending": true}}),
        )
        .unwrap();
        let row = page["ids"][0].as_u64().unwrap();
        let detail = ask(&mut v, "row", json!({"rank": k, "row": row})).unwrap();
        assert_eq!(detail["name"], page["columns"]["name"][0]);
        assert_eq!(
            detail["size"].as_f64().unwrap(),
            page["columns"]["size"][0].as_f64().unwrap()
        );
        assert_eq!(detail["top_frame"], page["columns"]["top_frame"][0]);
        assert_eq!(
            detail["alloc"].as_f64(),
            page["columns"]["start"][0].as_f64()
        );
        let unreleased = ask(&mut v, "unreleased", json!({"rank": k})).unwrap();
        let count: u64 = unreleased
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["count"].as_u64().unwrap())
            .sum();
        assert_eq!(count, s["unreleased_rows"].as_u64().unwrap());
        // The timeline: its info, and the bar of a drawn row contains the point that hits it.
        let tl = ask(&mut v, "timelineInfo", json!({"rank": k})).unwrap();
        assert!(tl["count"].as_u64().unwrap() > 0);
        let rect = ask(&mut v, "rect", json!({"rank": k, "row": row})).unwrap();
        if let Some(r) = rect.as_array() {
            let (x, y) = (
                (r[0].as_f64().unwrap() + r[1].as_f64().unwrap()) / 2.0,
                (r[2].as_f64().unwrap() + r[3].as_f64().unwrap()) / 2.0,
            );
            let hit = ask(&mut v, "hit", json!({"rank": k, "x": x, "y": y})).unwrap();
            assert_eq!(hit, row);
        }
    }
    assert!(ask(&mut v, "row", json!({"rank": 9, "row": 0})).is_err());
}
