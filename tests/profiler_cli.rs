//! The `memlens profiler` and `memlens generate profiler` commands, run as a user would.

use std::path::{Path, PathBuf};
use std::process::Command;

fn memlens() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memlens"))
}

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/torch_npu/msinsight-level0")
}

#[test]
fn json_has_the_documented_shape() {
    let out = memlens()
        .arg("profiler")
        .arg(sample())
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ranks = v["ranks"].as_array().unwrap();
    // text ranks 0 and 1, and db rank 0 (the database export is a rank too).
    assert_eq!(ranks.len(), 3);
    for key in [
        "role",
        "rank",
        "step",
        "run_dirs",
        "rows",
        "rows_pta",
        "rows_ge",
        "stacks",
        "peak_allocated_bytes",
        "peak_reserved_bytes",
        "peak_time_ns",
        "unreleased_rows",
        "unreleased_bytes",
    ] {
        assert!(ranks[0].get(key).is_some(), "missing {key}");
    }
    for key in ["direct", "via_forward", "approximate", "none"] {
        assert!(ranks[0]["stacks"][key].is_u64(), "missing stacks.{key}");
    }
    let roles: Vec<(&str, u64, &str)> = ranks
        .iter()
        .map(|r| {
            (
                r["role"].as_str().unwrap(),
                r["rank"].as_u64().unwrap(),
                r["source"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        roles,
        [("db", 0, "db"), ("text", 0, "text"), ("text", 1, "text")]
    );
    for r in &ranks[..2] {
        assert_eq!(r["rows"], 184);
        assert_eq!(r["peak_allocated_bytes"], 1_245_688_832u64);
        assert!(r["peak_time_ns"].as_i64().unwrap() > 1_700_000_000_000_000_000);
    }
}

#[test]
fn out_writes_memory_events_with_the_python_columns_first() {
    let dir = tempfile::tempdir().unwrap();
    let out = memlens()
        .arg("profiler")
        .arg(sample().join("text"))
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rdr = csv::Reader::from_path(dir.path().join("memory_events.csv")).unwrap();
    let header: Vec<String> = rdr.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(
        &header[..12],
        [
            "name",
            "role",
            "rank_id",
            "call_stack",
            "call_stack_top",
            "size_kb",
            "start_time_ms",
            "duration_ms",
            "total_allocated_mb",
            "total_reserved_mb",
            "total_active_mb",
            "device_type"
        ]
    );
    for extra in [
        "release_time_ms",
        "active_duration_ms",
        "stream",
        "source",
        "stack_source",
        "released",
        "user_frame",
        "step",
        "run_dir",
    ] {
        assert!(header.iter().any(|h| h == extra), "missing {extra}");
    }
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 368);
    // Sorted by start time (exact decimal text compares as numbers of equal integer width), then rank.
    let key = |r: &csv::StringRecord| (r[6].to_string(), r[2].parse::<u32>().unwrap());
    assert!(rows.windows(2).all(|w| key(&w[0]) <= key(&w[1])));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    // Unreleased rows: duration 0.0 as the contract says, no release time, released false.
    let unreleased: Vec<_> = rows
        .iter()
        .filter(|r| &r[col("released")] == "false")
        .collect();
    assert_eq!(unreleased.len(), 48);
    assert!(unreleased
        .iter()
        .all(|r| &r[7] == "0.0" && r[col("release_time_ms")].is_empty()));
    // cann rows have no stack.
    assert!(rows
        .iter()
        .filter(|r| r[0].starts_with("cann::"))
        .all(|r| r[3].is_empty() && &r[col("source")] == "GE"));
    for name in ["rank_summary.csv", "peak_attribution.csv", "step_peaks.csv"] {
        assert!(dir.path().join(name).exists(), "{name}");
    }
    let summary = std::fs::read_to_string(dir.path().join("rank_summary.csv")).unwrap();
    assert!(
        summary
            .lines()
            .nth(1)
            .unwrap()
            .contains(",184,127,57,69,52,0,63,"),
        "{summary}"
    );
}

#[test]
fn generate_then_analyse() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    let st = memlens()
        .args([
            "generate",
            "profiler",
            "--roles",
            "1",
            "--ranks",
            "2",
            "--trace-mb",
            "0.1",
            "--rows",
            "200",
            "--seed",
            "3",
            "--out",
        ])
        .arg(&job)
        .status()
        .unwrap();
    assert!(st.success());
    let out = memlens()
        .arg("profiler")
        .arg(&job)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ranks"].as_array().unwrap().len(), 2);
    assert_eq!(v["ranks"][1]["rows"], 200);
    assert_eq!(v["ranks"][0]["role"], "actor_update");

    // `ascend`, the commands' former name, stays an alias for scripts: same job, same bytes.
    let job2 = dir.path().join("job2");
    let st = memlens()
        .args(["generate", "ascend", "--roles", "1", "--ranks", "2"])
        .args(["--trace-mb", "0.1", "--rows", "200", "--seed", "3", "--out"])
        .arg(&job2)
        .status()
        .unwrap();
    assert!(st.success());
    let json = |command: &str| {
        let o = memlens()
            .arg(command)
            .arg(&job2)
            .arg("--json")
            .output()
            .unwrap();
        assert!(o.status.success(), "{command}");
        o.stdout
    };
    assert_eq!(json("ascend"), json("profiler"));
    let files = |root: &Path| {
        let mut all = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(root).unwrap().to_path_buf();
                    all.push((rel, std::fs::read(&p).unwrap()));
                }
            }
        }
        all.sort();
        all
    };
    let (a, b) = (files(&job), files(&job2));
    assert!(a.len() > 10);
    assert!(
        a == b,
        "generate ascend and generate profiler wrote different jobs"
    );
}

#[test]
fn nothing_to_analyse_exits_non_zero_with_the_reason() {
    // A run folder whose analysis never ran: profiler_info only.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("host_1_20250101000000001_ascend_pt");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("profiler_info_0.json"), "{\"rank_id\": 0}").unwrap();
    let out = memlens()
        .arg("profiler")
        .arg(tmp.path())
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ranks"].as_array().unwrap().len(), 0);
    assert!(v["warnings"][0]["message"]
        .as_str()
        .unwrap()
        .contains("analyse("));
}
