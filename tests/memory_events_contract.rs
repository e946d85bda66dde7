//! `memory_events.csv` against the contract of the Python tool it replaces (RL-Insight's
//! `MemoryEventRow`): the first twelve columns, their names, order and types, cell by cell, on the
//! real two-rank sample, on generated jobs and on odd inputs (unknown rank, legacy release rows,
//! MindSpore's `N/A` cells).
//!
//! The types are those the tool's DataFrame holds: `rank_id` an integer, `size_kb`,
//! `start_time_ms`, `duration_ms` and the three totals floats in every row, the rest strings.
//! `duration_ms` is `0.0` for a block not released in the capture; `call_stack_top` is the first
//! line of `call_stack`. Expected values come from outside memlens: for the real sample from
//! `fixtures/contract/memory_events_expected.json` (written by the Python script beside it with
//! the tool's own conversions); for generated jobs from the generated `operator_memory.csv` files,
//! read here with the `csv` crate and converted the same way.
//!
//! The Python package's DataFrame (`events()`) is held to the same contract by its own test once
//! the package exists: it reads the same CSV with pandas and the same expectation file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The contract's columns, in order, with the type of each.
const CONTRACT: [(&str, Kind); 12] = [
    ("name", Kind::Str),
    ("role", Kind::Str),
    ("rank_id", Kind::Int),
    ("call_stack", Kind::Str),
    ("call_stack_top", Kind::Str),
    ("size_kb", Kind::Float),
    ("start_time_ms", Kind::Float),
    ("duration_ms", Kind::Float),
    ("total_allocated_mb", Kind::Float),
    ("total_reserved_mb", Kind::Float),
    ("total_active_mb", Kind::Float),
    ("device_type", Kind::Str),
];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Str,
    Int,
    Float,
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// Runs `memlens profiler INPUTS --out DIR` and returns the header and rows of memory_events.csv.
fn events(inputs: &[&Path]) -> (Vec<String>, Vec<csv::StringRecord>) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .arg("profiler")
        .args(inputs)
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
    let header = rdr.headers().unwrap().iter().map(str::to_string).collect();
    let rows = rdr.records().map(|r| r.unwrap()).collect();
    (header, rows)
}

/// A float cell as pandas reads it: a number, never empty, never NaN.
fn float(cell: &str, what: &str) -> f64 {
    let v: f64 = cell
        .parse()
        .unwrap_or_else(|_| panic!("{what}: {cell:?} is not a float"));
    assert!(v.is_finite(), "{what}: {cell:?}");
    v
}

/// A decimal number of milliseconds as exact nanoseconds (at most 6 decimals).
fn exact_ns(text: &str) -> i128 {
    exact(text, 6)
}

/// A decimal number with at most `places` decimals as an integer of units of 10^-places.
fn exact(text: &str, places: usize) -> i128 {
    let (neg, t) = text.strip_prefix('-').map_or((false, text), |t| (true, t));
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    assert!(frac.len() <= places, "{text}: more than {places} decimals");
    let frac = format!("{frac:0<places$}");
    let v =
        int.parse::<i128>().unwrap() * 10i128.pow(places as u32) + frac.parse::<i128>().unwrap();
    if neg {
        -v
    } else {
        v
    }
}

/// Checks every cell of the twelve columns against its type, and the rules that tie the columns
/// together: `call_stack_top` is the first line of `call_stack`; a block not released has
/// `duration_ms == 0.0`, an empty `release_time_ms` and `released == false`; a released one has a
/// release time. Returns the column index by name.
fn check_contract(header: &[String], rows: &[csv::StringRecord]) -> BTreeMap<String, usize> {
    let names: Vec<&str> = CONTRACT.iter().map(|c| c.0).collect();
    assert_eq!(
        &header[..12],
        names.as_slice(),
        "the contract's columns, in order"
    );
    let col: BTreeMap<String, usize> = header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.clone(), i))
        .collect();
    assert_eq!(col.len(), header.len(), "column names are unique");
    assert!(!rows.is_empty());
    for (n, r) in rows.iter().enumerate() {
        let line = n + 2;
        assert_eq!(r.len(), header.len(), "line {line}: every column present");
        for (i, (name, kind)) in CONTRACT.iter().enumerate() {
            let cell = &r[i];
            let what = format!("line {line}, {name}");
            match kind {
                Kind::Str => {}
                Kind::Int => {
                    cell.parse::<i64>()
                        .unwrap_or_else(|_| panic!("{what}: {cell:?} is not an integer"));
                }
                Kind::Float => {
                    float(cell, &what);
                }
            }
        }
        let stack = &r[3];
        let first = stack.split(";\r\n").next().unwrap_or("");
        assert_eq!(&r[4], first, "line {line}: call_stack_top = first line");
        let released = &r[col["released"]];
        let release = &r[col["release_time_ms"]];
        match released {
            "false" => {
                assert_eq!(float(&r[7], "duration_ms"), 0.0, "line {line}");
                assert!(release.is_empty(), "line {line}: {release:?}");
            }
            "true" => assert!(!release.is_empty(), "line {line}"),
            other => panic!("line {line}: released = {other:?}"),
        }
    }
    // Sorted by start time, then rank, as the Python tool's reducer sorts. Compared as exact
    // decimals: at 1.7e12 ms a float cannot tell two times a few hundred ns apart.
    let key = |r: &csv::StringRecord| (exact_ns(&r[6]), r[2].parse::<i64>().unwrap_or(0));
    assert!(
        rows.windows(2).all(|w| key(&w[0]) <= key(&w[1])),
        "rows sorted by start_time_ms, rank_id"
    );
    col
}

/// One row as the Python tool's DataFrame holds it (call stacks aside), with the exact start time
/// in ns to pair rows by (the float alone cannot).
#[derive(Debug, Clone, PartialEq, PartialOrd)]
struct Expected {
    rank_id: i64,
    role: String,
    start_ns: i128,
    start_time_ms: f64,
    name: String,
    size_kb: f64,
    duration_ms: f64,
    total_allocated_mb: f64,
    total_reserved_mb: f64,
    total_active_mb: f64,
    device_type: String,
    released: bool,
}

impl Expected {
    fn from_csv(r: &csv::StringRecord, col: &BTreeMap<String, usize>) -> Self {
        let f = |name: &str| float(&r[col[name]], name);
        Expected {
            rank_id: r[2].parse().unwrap(),
            role: r[1].to_string(),
            start_ns: exact_ns(&r[col["start_time_ms"]]),
            start_time_ms: f("start_time_ms"),
            name: r[0].to_string(),
            size_kb: f("size_kb"),
            duration_ms: f("duration_ms"),
            total_allocated_mb: f("total_allocated_mb"),
            total_reserved_mb: f("total_reserved_mb"),
            total_active_mb: f("total_active_mb"),
            device_type: r[11].to_string(),
            released: &r[col["released"]] == "true",
        }
    }

    fn from_json(v: &serde_json::Value) -> Self {
        let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"));
        let s = |k: &str| v[k].as_str().unwrap().to_string();
        Expected {
            rank_id: v["rank_id"].as_i64().unwrap(),
            role: s("role"),
            start_ns: exact(&s("allocation_time_us_text"), 3),
            start_time_ms: f("start_time_ms"),
            name: s("name"),
            size_kb: f("size_kb"),
            duration_ms: f("duration_ms"),
            total_allocated_mb: f("total_allocated_mb"),
            total_reserved_mb: f("total_reserved_mb"),
            total_active_mb: f("total_active_mb"),
            device_type: s("device_type"),
            released: v["released"].as_bool().unwrap(),
        }
    }
}

/// Equal up to float rounding: memlens writes exact decimals, the Python tool divides floats.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// Compares two row sets as multisets (sorted by rank, role, exact time, then the rest), field by
/// field.
fn assert_same_rows(mut got: Vec<Expected>, mut want: Vec<Expected>) {
    assert_eq!(got.len(), want.len(), "row count");
    let by = |a: &Expected, b: &Expected| a.partial_cmp(b).unwrap();
    got.sort_by(by);
    want.sort_by(by);
    for (g, w) in got.iter().zip(&want) {
        let floats = [
            (g.start_time_ms, w.start_time_ms),
            (g.size_kb, w.size_kb),
            (g.duration_ms, w.duration_ms),
            (g.total_allocated_mb, w.total_allocated_mb),
            (g.total_reserved_mb, w.total_reserved_mb),
            (g.total_active_mb, w.total_active_mb),
        ];
        assert!(
            g.rank_id == w.rank_id
                && g.start_ns == w.start_ns
                && g.name == w.name
                && g.role == w.role
                && g.device_type == w.device_type
                && g.released == w.released
                && floats.iter().all(|&(a, b)| close(a, b)),
            "memlens row\n  {g:?}\nexpected\n  {w:?}"
        );
    }
}

#[test]
fn real_sample_meets_the_contract_row_by_row() {
    let (header, rows) = events(&[&fixture("torch_npu/msinsight-level0/text")]);
    let col = check_contract(&header, &rows);
    let doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture("contract/memory_events_expected.json")).unwrap(),
    )
    .unwrap();
    let want: Vec<Expected> = doc["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(Expected::from_json)
        .collect();
    assert_eq!(want.len() as u64, doc["rows"].as_u64().unwrap());
    let got: Vec<Expected> = rows.iter().map(|r| Expected::from_csv(r, &col)).collect();
    // The figures of the issue, from the expectation file: 368 rows, 24 unreleased per rank,
    // 114 rows whose source leaves the active total empty (0.0 in the contract column).
    assert_eq!(rows.len(), 368);
    for rank in ["0", "1"] {
        let n = rows
            .iter()
            .filter(|r| &r[2] == rank && &r[col["released"]] == "false")
            .count() as u64;
        assert_eq!(n, doc["unreleased_per_rank"][rank].as_u64().unwrap());
    }
    let zero_active = rows
        .iter()
        .filter(|r| &r[col["total_active_mb"]] == "0.0")
        .count() as u64;
    assert_eq!(zero_active, doc["empty_active_total"].as_u64().unwrap());
    assert_same_rows(got, want);
    // Where a stack was found, the user frame is one of its lines.
    for r in &rows {
        let user = &r[col["user_frame"]];
        assert!(r[3].split(";\r\n").any(|l| l == user) || r[3].is_empty());
    }
}

/// The rows the Python tool would make from every `operator_memory.csv` under `root`, read with
/// the csv crate: rank from `profiler_info_<rank>.json`, role from `profiler_metadata.json` or the folder above.
fn expected_from_files(root: &Path) -> Vec<Expected> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        let csv_path = dir.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv");
        if csv_path.is_file() {
            let rank: i64 = entries
                .iter()
                .filter_map(|p| p.file_name()?.to_str())
                .find_map(|n| n.strip_prefix("profiler_info_")?.strip_suffix(".json"))
                .map_or(-1, |r| r.parse().unwrap());
            // The metadata's "role" when it has one, else the name of the folder above the run.
            let meta: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.join("profiler_metadata.json")).unwrap())
                    .unwrap();
            let parent = dir.parent().and_then(|p| p.file_name()).unwrap();
            let role = meta["role"]
                .as_str()
                .map_or_else(|| parent.to_string_lossy().into_owned(), str::to_string);
            let mut rdr = csv::Reader::from_path(&csv_path).unwrap();
            let h = rdr.headers().unwrap().clone();
            let at = |name: &str| h.iter().position(|x| x == name).unwrap();
            for r in rdr.records() {
                let r = r.unwrap();
                let cell = |name: &str| r[at(name)].trim().to_string();
                let num = |name: &str| {
                    let c = cell(name);
                    if c.is_empty() {
                        0.0
                    } else {
                        c.parse::<f64>().unwrap()
                    }
                };
                out.push(Expected {
                    rank_id: rank,
                    role: role.clone(),
                    start_ns: exact(&cell("Allocation Time(us)"), 3),
                    start_time_ms: num("Allocation Time(us)") / 1000.0,
                    name: cell("Name"),
                    size_kb: num("Size(KB)"),
                    duration_ms: num("Duration(us)") / 1000.0,
                    total_allocated_mb: num("Allocation Total Allocated(MB)"),
                    total_reserved_mb: num("Allocation Total Reserved(MB)"),
                    total_active_mb: num("Allocation Total Active(MB)"),
                    device_type: cell("Device Type"),
                    released: !cell("Release Time(us)").is_empty()
                        || !cell("Duration(us)").is_empty(),
                });
            }
        } else {
            stack.extend(entries.into_iter().filter(|p| p.is_dir()));
        }
    }
    out
}

#[test]
fn generated_jobs_meet_the_contract() {
    for (seed, roles, ranks, rows) in [(3u32, 2u32, 2u32, 400u32), (11, 1, 3, 1500)] {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("job");
        let st = Command::new(env!("CARGO_BIN_EXE_memlens"))
            .args(["generate", "profiler", "--trace-mb", "0.1", "--steps", "2"])
            .args(["--seed", &seed.to_string(), "--roles", &roles.to_string()])
            .args(["--ranks", &ranks.to_string(), "--rows", &rows.to_string()])
            .arg("--out")
            .arg(&job)
            .output()
            .unwrap();
        assert!(st.status.success());
        let (header, got_rows) = events(&[&job]);
        let col = check_contract(&header, &got_rows);
        let want = expected_from_files(&job);
        // The generator writes unreleased blocks and CANN rows without an active total, so both
        // rules are exercised here.
        assert!(want.iter().any(|e| !e.released));
        assert!(got_rows.iter().any(|r| &r[col["total_active_mb"]] == "0.0"));
        let got = got_rows
            .iter()
            .map(|r| Expected::from_csv(r, &col))
            .collect();
        assert_same_rows(got, want);
    }
}

#[test]
fn odd_inputs_still_give_typed_cells() {
    // A run folder whose profiler_info.json names no rank, with the legacy 10-column layout (a
    // release row without allocation time or name) and one with MindSpore's N/A cells.
    let dir = tempfile::tempdir().unwrap();
    for (run, csv) in [
        (
            "legacy_ascend_pt",
            "ascend/operator_memory_10col_legacy.csv",
        ),
        (
            "mindspore_ascend_pt",
            "ascend/operator_memory_mindspore_na.csv",
        ),
    ] {
        let out = dir.path().join(run).join("ASCEND_PROFILER_OUTPUT");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::copy(fixture(csv), out.join("operator_memory.csv")).unwrap();
        std::fs::write(dir.path().join(run).join("profiler_info.json"), "{}").unwrap();
        let (header, rows) = events(&[&dir.path().join(run)]);
        let col = check_contract(&header, &rows);
        assert!(rows.iter().all(|r| &r[2] == "-1"), "{run}: unknown rank");
        assert!(rows.iter().any(|r| &r[col["released"]] == "false"), "{run}");
    }
}
