//! The SOMAS view model as the page uses it: a session opened through an input set, asked with
//! the same JSON requests the worker sends. Answers are checked against the CLI run on the same
//! files (its `--json` bytes and the CSV files of `--out`) and against the toy dump's own lines
//! (`somas_samples.rs` lists its tensors by hand).

use memlens::chart::Viewport;
use memlens::somas::view::{ExportRequest, Request, SomasSession};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const DIR: &str = "fixtures/somas";
const DUMP: &str = "Ascend_somas_tensor_offset_1.ir";
const TASK: &str = "task_info_graph_1.ir";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn session() -> SomasSession {
    let mut set = memlens::families::input_set();
    for name in [DUMP, TASK] {
        set.add_bytes(name, std::fs::read(root().join(DIR).join(name)).unwrap());
    }
    let mut labels = Vec::new();
    let s = SomasSession::open(
        &set,
        DUMP,
        Some(TASK),
        &mut |label, _, _| labels.push(label.to_string()),
        &|| 0.0,
    )
    .unwrap();
    assert!(labels.iter().any(|l| l == &format!("reading {DUMP}")));
    assert!(labels.iter().any(|l| l == &format!("reading {TASK}")));
    s
}

fn ask(s: &mut SomasSession, method: &str, params: Value) -> Result<Value, String> {
    let r: Request = serde_json::from_value(json!({ "method": method, "params": params })).unwrap();
    s.answer(&r).map(|t| serde_json::from_str(&t).unwrap())
}

fn cli(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .current_dir(root().join(DIR))
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
fn summary_json_is_the_cli_json_byte_for_byte_with_and_without_queries() {
    let mut s = session();
    let plain = Request::SummaryJson {
        request: ExportRequest::default(),
    };
    let want = cli(&["somas", DUMP, "--task-info", TASK, "--json"]);
    assert_eq!(s.answer(&plain).unwrap().as_bytes(), &want[..]);
    let with = Request::SummaryJson {
        request: ExportRequest {
            tensor: Some(10),
            node: Some(2),
            ..ExportRequest::default()
        },
    };
    let want = cli(&[
        "somas",
        DUMP,
        "--task-info",
        TASK,
        "--tensor",
        "10",
        "--node",
        "2",
        "--json",
    ]);
    assert_eq!(s.answer(&with).unwrap().as_bytes(), &want[..]);
    // The summary the views open with is the same document without query keys.
    let summary = ask(&mut s, "summary", json!({})).unwrap();
    let cli_doc: Value =
        serde_json::from_slice(&cli(&["somas", DUMP, "--task-info", TASK, "--json"])).unwrap();
    assert_eq!(summary["nodes"], cli_doc["nodes"]);
    assert_eq!(summary["tensors"], cli_doc["tensors"]);
}

#[test]
fn table_pages_cross_by_column_name_and_match_the_cli_csv() {
    let mut s = session();
    let dir = tempfile::tempdir().unwrap();
    cli(&[
        "somas",
        DUMP,
        "--task-info",
        TASK,
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(dir.path().join("graph_tensors.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    // CSV rows by tensor id: AlignSize and LifeStart as somas_tool writes them.
    let by_id: Vec<(u64, u64, u64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(), // the unnamed first column is the tensor id
                f[col("AlignSize")].parse().unwrap(),
                f[col("LifeStart")].parse().unwrap(),
            )
        })
        .collect();
    let answer = ask(
        &mut s,
        "table",
        json!({"view": "t", "table": "tensors", "request": {"sort": [["AlignSize", true]]}}),
    )
    .unwrap();
    assert_eq!(answer["total"], by_id.len());
    assert!(answer["columns"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["name"] == "TensorId" && c["kind"] == "int"));
    let page = ask(
        &mut s,
        "page",
        json!({"view": "t", "offset": 0, "limit": 100}),
    )
    .unwrap();
    let ids = page["columns"]["TensorId"].as_array().unwrap();
    let sizes = page["columns"]["AlignSize"].as_array().unwrap();
    let starts = page["columns"]["LifeStart"].as_array().unwrap();
    assert_eq!(ids.len(), by_id.len());
    for k in 0..ids.len() {
        let id = ids[k].as_u64().unwrap();
        let row = by_id.iter().find(|r| r.0 == id).unwrap();
        assert_eq!(
            (sizes[k].as_u64().unwrap(), starts[k].as_u64().unwrap()),
            (row.1, row.2)
        );
    }
    assert!(sizes.windows(2).all(|w| w[0].as_u64() >= w[1].as_u64()));
    // Filter by name in one column; the position of a tensor is its place on the page.
    ask(
        &mut s,
        "table",
        json!({"view": "soft", "table": "tensors", "request": {
            "sort": [["AlignSize", true]],
            "text": [{"column": "SourceNodeName", "pattern": "softmax"}]}}),
    )
    .unwrap();
    let page = ask(
        &mut s,
        "page",
        json!({"view": "soft", "offset": 0, "limit": 10}),
    )
    .unwrap();
    // %9T (512), %10T (1024), %11T (2560): the toy's softmax tensors.
    assert_eq!(page["columns"]["TensorId"], json!([11, 10, 9]));
    assert_eq!(
        ask(&mut s, "position", json!({"view": "soft", "key": 10})).unwrap(),
        1
    );
    assert_eq!(
        ask(&mut s, "position", json!({"view": "soft", "key": 1})).unwrap(),
        -1
    );
    // A subset named in the page's terms: the frame of node $2.
    let frame = s.frame(2);
    ask(
        &mut s,
        "table",
        json!({"view": "f", "table": "tensors", "request": {"rows": {"frame": 2}}}),
    )
    .unwrap();
    let page = ask(
        &mut s,
        "page",
        json!({"view": "f", "offset": 0, "limit": 100}),
    )
    .unwrap();
    let mut got: Vec<u64> = page["columns"]["TensorId"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let mut want: Vec<u64> = frame.ids.iter().map(|&i| u64::from(i)).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    // Columns are named; a wrong name says which exist.
    let bad = ask(
        &mut s,
        "table",
        json!({"view": "x", "table": "tensors", "request": {"sort": [["Nope", false]]}}),
    )
    .unwrap_err();
    assert!(
        bad.contains("no column \"Nope\"") && bad.contains("TensorId"),
        "{bad}"
    );
    assert!(ask(&mut s, "table", json!({"view": "x", "table": "nope"})).is_err());
}

#[test]
fn points_frames_curves_and_search_agree() {
    let mut s = session();
    let info = ask(&mut s, "info", json!({})).unwrap();
    let max_index = info["max_index"].as_u64().unwrap() as u32;
    // One column per index: each column is that index's value.
    let c = s.curves(0.0, f64::from(max_index) + 1.0, max_index + 1);
    assert_eq!(c.columns as u32, max_index + 1);
    for index in 0..=max_index {
        let at = ask(&mut s, "nodeAt", json!({"index": index})).unwrap();
        assert_eq!(at["in_use"].as_f64().unwrap(), c.use_max[index as usize]);
        assert_eq!(at["total"].as_f64().unwrap(), c.total_max[index as usize]);
    }
    // Every tensor of a frame is hit at its own place in the layout.
    let peak = info["peak_index"].as_u64().unwrap() as u32;
    let f = s.frame(peak);
    assert!(!f.ids.is_empty());
    for k in 0..f.ids.len() {
        let mid = (f.start[k] + f.end[k]) / 2.0;
        let hit = ask(
            &mut s,
            "hit",
            json!({"x": f64::from(peak) + 0.5, "y": mid, "dx": 0.0, "dy": 0.0}),
        )
        .unwrap();
        assert_eq!(hit["id"], f.ids[k], "tensor at offset {mid}");
    }
    // The layout's rectangles fill the whole canvas's worth of tensors.
    let b = &info["layout"];
    let v = Viewport {
        x0: b["x0"].as_f64().unwrap(),
        x1: b["x1"].as_f64().unwrap(),
        y0: b["y0"].as_f64().unwrap(),
        y1: b["y1"].as_f64().unwrap(),
    };
    let r = s.rects(&v, 800, 400, 100_000);
    assert_eq!(r.visible as u64, info["rects"].as_u64().unwrap());
    assert_eq!(r.x.len(), r.id.len());
    // Search: a node by name, a tensor by id.
    let found = ask(&mut s, "search", json!({"text": "ReLU-op3"})).unwrap();
    assert_eq!(found["targets"][0]["kind"], "node");
    assert_eq!(found["targets"][0]["index"], 2);
    let t = ask(&mut s, "search", json!({"text": "%3T"})).unwrap();
    assert_eq!(t["targets"][0], json!({"kind": "tensor", "id": 3}));
    assert!(ask(&mut s, "tensor", json!({"id": 99999})).is_err());
    // Exports: the zip and one file as the CLI writes them.
    let dir = tempfile::tempdir().unwrap();
    cli(&[
        "somas",
        DUMP,
        "--task-info",
        TASK,
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let list = ask(&mut s, "exportList", json!({})).unwrap();
    let first = list[0].as_str().unwrap().to_string();
    let bytes = s.export_file(&ExportRequest::default(), &first).unwrap();
    assert_eq!(bytes, std::fs::read(dir.path().join(&first)).unwrap());
    assert!(s
        .export_zip(&ExportRequest::default())
        .unwrap()
        .starts_with(b"PK"));
}
