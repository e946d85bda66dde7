//! The snapshot shapes of torch 1.x to 2.6 and torch_npu (`fixtures/snapshot-shapes/make.py`
//! writes each, after its producer's code, as a pickle and as its `json.dump`) against figures
//! worked out by hand, and the JSON form against the pickle.
//!
//! Every shape holds one 2 MiB segment (device 0) cut into blocks of 1024 B (requested 1000) and
//! 512 B (requested 500), both allocated, and an inactive rest of 2 MiB - 1536 B. Where a trace is
//! kept its allocations run: segment_alloc, alloc 1024, alloc 512, alloc 2048, free_requested
//! 2048, free_completed 2048, then (torch26, npu) segment_map, segment_unmap, oom, and (torch26)
//! user_defined. The allocated curve starts at 1536 - (1024 + 512 + 2048 - 2048) = 0 and reads
//! 0, 1024, 1536, 3584, 3584, 1536, …: its peak is 3584 B, reached after entry 3.
//!
//! Seen failing on the old code (the tests before the JSON decoder): every `.json` case was
//! refused ("not a pickle"), the float setting read `0` where Python prints `0.0`.
// Reads files on disk: not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use memlens::snapshot::{self, analysis, model::NO_TIME, summary};
use memlens::source::{BytesSource, PathSource};
use serde_json::{json, Value};
use std::path::Path;

const MIB2: u64 = 2 << 20;
const ADDR: u64 = 0x7F00_0000_0000;

fn path(name: &str) -> std::path::PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/snapshot-shapes"
    ))
    .join(name)
}

fn load(name: &str) -> (snapshot::Snapshot, Value) {
    let src = PathSource::open(&path(name), name).expect("fixture present");
    let snap = snapshot::read(&src).unwrap_or_else(|d| panic!("{name}: {d}"));
    let a = analysis::analyse(&snap);
    let s = serde_json::to_value(summary::summary(&snap, &a)).expect("summary serialises");
    (snap, s)
}

/// What each shape must read to, by hand: top-level keys (None: a bare list), requested bytes,
/// trace entries, OOMs, whether the trace runs the allocations.
struct Shape {
    name: &'static str,
    keys: Option<&'static [&'static str]>,
    requested: u64,
    entries: u64,
    ooms: u64,
    traced: bool,
}

const SHAPES: [Shape; 5] = [
    Shape {
        name: "torch26",
        keys: Some(&[
            "segments",
            "device_traces",
            "allocator_settings",
            "external_annotations",
        ]),
        requested: 1500,
        entries: 10,
        ooms: 1,
        traced: true,
    },
    Shape {
        name: "torch20",
        keys: Some(&["segments", "device_traces"]),
        // From each block's first history entry (`real_size`).
        requested: 1500,
        entries: 6,
        ooms: 0,
        traced: true,
    },
    Shape {
        name: "npu",
        keys: Some(&["segments", "device_traces"]),
        requested: 1500,
        entries: 9,
        ooms: 1,
        traced: true,
    },
    Shape {
        name: "bare_list",
        keys: None,
        // No requested size anywhere: a block counts its size.
        requested: 1536,
        entries: 0,
        ooms: 0,
        traced: false,
    },
    Shape {
        name: "traces_off",
        keys: Some(&["segments", "device_traces"]),
        requested: 1500,
        entries: 0,
        ooms: 0,
        traced: false,
    },
];

#[test]
fn every_shape_reads_to_the_hand_figures_in_both_forms() {
    for shape in &SHAPES {
        for (ext, protocol) in [
            (
                "pickle",
                if shape.name == "torch26" || shape.name == "traces_off" {
                    4
                } else {
                    2
                },
            ),
            ("json", 0),
        ] {
            let name = format!("{}.{ext}", shape.name);
            let (snap, s) = load(&name);
            assert!(snap.warnings.is_empty(), "{name}: {:?}", snap.warnings);
            assert_eq!(s["protocol"], protocol, "{name}");
            match shape.keys {
                Some(keys) => {
                    assert_eq!(s["layout"], "dict", "{name}");
                    assert_eq!(s["keys"], json!(keys), "{name}");
                }
                None => assert_eq!(s["layout"], "segment_list", "{name}"),
            }
            let d = &s["devices"]["0"];
            assert_eq!(d["segments"], 1, "{name}");
            assert_eq!(d["reserved_bytes"], MIB2, "{name}");
            assert_eq!(d["allocated_bytes"], 1536, "{name}");
            assert_eq!(d["requested_bytes"], shape.requested, "{name}");
            assert_eq!(d["blocks"], 3, "{name}");
            let by_state = &d["blocks_by_state"];
            assert_eq!(
                by_state["active_allocated"],
                json!({"count": 2, "bytes": 1536})
            );
            assert_eq!(
                by_state["inactive"],
                json!({"count": 1, "bytes": MIB2 - 1536})
            );
            assert_eq!(d["free_in_segments_bytes"], MIB2 - 1536, "{name}");
            assert_eq!(d["largest_free_block"], MIB2 - 1536, "{name}");
            assert_eq!(d["trace_entries"], shape.entries, "{name}");
            assert_eq!(d["oom_events"], shape.ooms, "{name}");
            if shape.traced {
                assert_eq!(d["baseline_allocated_bytes"], 0, "{name}");
                assert_eq!(d["peak_allocated_bytes"], 3584, "{name}");
                assert_eq!(d["peak_trace_index"], 3, "{name}");
                assert_eq!(d["actions"]["alloc"], 3, "{name}");
                assert_eq!(d["actions"]["free_completed"], 1, "{name}");
            } else {
                assert_eq!(d["baseline_allocated_bytes"], 1536, "{name}");
                assert_eq!(d["peak_allocated_bytes"], 1536, "{name}");
                assert_eq!(d["peak_trace_index"], Value::Null, "{name}");
            }
            // The blocks' addresses: given (2.1+), or each block after the one before (2.0, 1.x).
            let blocks: Vec<u64> = snap.blocks.iter().map(|b| b.address).collect();
            assert_eq!(blocks, [ADDR, ADDR + 1024, ADDR + 1536], "{name}");
        }
    }
}

#[test]
fn the_json_form_reads_to_the_pickles_summary() {
    for shape in &SHAPES {
        let (_, mut p) = load(&format!("{}.pickle", shape.name));
        let (_, mut j) = load(&format!("{}.json", shape.name));
        for s in [&mut p, &mut j] {
            s["protocol"] = Value::Null;
            s["file"] = Value::Null;
            s["bytes"] = Value::Null;
        }
        assert_eq!(j, p, "{}", shape.name);
    }
}

#[test]
fn fields_of_the_newer_and_older_versions() {
    for ext in ["pickle", "json"] {
        // torch 2.1+: the pool id (a tuple, a list in JSON), times, settings, annotations, the
        // user_defined entry counted by its word.
        let (snap, s) = load(&format!("torch26.{ext}"));
        assert_eq!(snap.segments[0].pool_id, Some((0, 0)), "{ext}");
        assert_eq!(snap.segments[0].is_expandable, Some(false), "{ext}");
        let t = &snap.traces[0];
        assert_eq!(t.time_us[3], 1003, "{ext}");
        assert_eq!(t.size[8], 4 << 20, "{ext}: the oom entry's size");
        assert_eq!(s["devices"]["0"]["actions"]["user_defined"], 1, "{ext}");
        assert_eq!(s["devices"]["0"]["actions"]["segment_map"], 1, "{ext}");
        let settings: Vec<(String, String)> = s["allocator_settings"]
            .as_array()
            .expect("settings")
            .iter()
            .map(|kv| {
                (
                    kv["key"].as_str().unwrap().to_string(),
                    kv["value"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let get = |k: &str| {
            settings
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(
            get("PYTORCH_CUDA_ALLOC_CONF"),
            Some("'expandable_segments:True'")
        );
        assert_eq!(get("max_split_size"), Some("-1"));
        assert_eq!(get("garbage_collection_threshold"), Some("0.0"), "{ext}");
        assert_eq!(get("expandable_segments"), Some("True"));
        assert_eq!(get("roundup_power2_divisions"), Some("{…}"));
        assert_eq!(snap.annotations.len(), 2, "{ext}");
        assert_eq!(snap.annotations[0].stage, "START");
        assert_eq!(snap.annotations[0].name, "forward");
        assert_eq!(snap.annotations[1].time_us, 1005);
        // The blocks' stacks, innermost frame first.
        let frames: Vec<(String, String, i64)> = snap
            .stack_frames(snap.blocks[0].stack)
            .map(|f| {
                (
                    snap.strings.get(f.name).to_string(),
                    snap.strings.get(f.filename).to_string(),
                    f.line,
                )
            })
            .collect();
        assert_eq!(frames.len(), 2, "{ext}");
        assert_eq!(
            frames[1],
            ("train_step".into(), "/home/user/train.py".into(), 42)
        );

        // torch_npu: no pool id, no times.
        let (snap, _) = load(&format!("npu.{ext}"));
        assert_eq!(snap.segments[0].pool_id, None, "{ext}");
        assert!(
            snap.traces[0].time_us.iter().all(|&t| t == NO_TIME),
            "{ext}"
        );

        // torch 2.0: the stack of the block's first history entry.
        let (snap, _) = load(&format!("torch20.{ext}"));
        assert_eq!(snap.stack_frames(snap.blocks[1].stack).count(), 2, "{ext}");
        assert_eq!(snap.blocks[1].requested_size, 500, "{ext}");
    }
}

fn read_bytes(name: &str, text: &str) -> Result<snapshot::Snapshot, memlens::diag::Diagnostic> {
    snapshot::read(&BytesSource::new(name, text.as_bytes().to_vec()))
}

#[test]
fn json_with_sorted_keys_and_a_bom_is_recognised_and_read() {
    // json.dump(sort_keys=True): the dict starts with allocator_settings, a segment with
    // active_size.
    let sorted = r#"{"allocator_settings": {}, "device_traces": [[]], "segments": [{"active_size": 0,
        "address": 4096, "allocated_size": 0, "blocks": [{"address": 4096, "size": 8192,
        "state": "inactive"}], "device": 1, "total_size": 8192}]}"#;
    assert!(snapshot::sniff(sorted.as_bytes()).is_some());
    let snap = read_bytes("sorted.json", sorted).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(snap.segments[0].device, 1);
    assert_eq!(snap.segments[0].total_size, 8192);
    let list = "\u{feff}[{\"active_size\": 0, \"address\": 0, \"total_size\": 512}]";
    assert_eq!(
        snapshot::sniff(list.as_bytes()),
        Some(snapshot::Sniffed {
            protocol: 0,
            dict: false
        })
    );
    let snap = read_bytes("list.json", list).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(snap.segments[0].total_size, 512);
    assert_eq!(snapshot::sniff(br#"{"traceEvents": []}"#), None);
    // An allocator with nothing reserved: read, not refused (the old code refused it as 'not a
    // pickle').
    let empty = read_bytes("empty.json", r#"{"segments": []}"#).unwrap_or_else(|d| panic!("{d}"));
    assert!(empty.segments.is_empty() && empty.warnings.is_empty());
}

#[test]
fn bad_json_is_refused_with_the_file_and_the_byte() {
    let whole = std::fs::read_to_string(path("torch26.json")).expect("fixture");
    let cut = &whole[..whole.len() / 2];
    let e = read_bytes("cut.json", cut).expect_err("a truncated file");
    assert!(e.is_error());
    assert_eq!(e.file, "cut.json");
    assert!(e.message.contains("ends inside its JSON"), "{}", e.message);
    let at = e.byte.expect("a byte offset");
    assert!(
        at + 2 >= cut.len() as u64 && at <= cut.len() as u64,
        "{at} vs {}",
        cut.len()
    );

    let e = read_bytes("bad.json", r#"{"segments": [1 2]}"#).expect_err("not JSON");
    assert!(e.message.starts_with("not valid JSON"), "{}", e.message);
    assert!(e.message.contains("line 1 column 17"), "{}", e.message);
    assert_eq!(e.byte, Some(16));

    let e = read_bytes("other.json", r#"{"traceEvents": []}"#).expect_err("not a snapshot");
    assert_eq!(
        e.message,
        "the JSON holds a dict without 'segments' or 'device_traces' (keys: traceEvents); not a memory snapshot"
    );

    // A field of the wrong type is a counted warning, as in a pickle.
    let snap = read_bytes("odd.json", r#"{"segments": 5, "device_traces": []}"#).expect("read");
    assert_eq!(snap.warnings.len(), 1);
    assert!(snap.warnings[0]
        .message
        .contains("field 'segments' of the top-level dict: expected a list of segments"));
}

#[test]
fn a_real_snapshot_in_json_form_reads_to_the_python_expectations() {
    // The tiny CS336 sample saved with json.dump (fixtures/snapshots/NOTICE.md); its figures are
    // expected.json's, derived from the pickle by Python.
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/snapshots"));
    let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
    let exp: Value = serde_json::from_str(&text).expect("expected.json is JSON");
    let e = &exp["cs336_tiny_mem_snapshot.pickle"];
    let name = "cs336_tiny_mem_snapshot.json";
    let src = PathSource::open(&dir.join(name), name).expect("fixture present");
    let snap = snapshot::read(&src).unwrap_or_else(|d| panic!("{d}"));
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
    let a = analysis::analyse(&snap);
    let got = serde_json::to_value(summary::summary(&snap, &a)).expect("summary serialises");
    assert_eq!(got["protocol"], 0);
    assert_eq!(got["keys"], e["keys"]);
    assert_eq!(got["distinct_frames"], e["distinct_frames"]);
    assert_eq!(got["distinct_stacks"], e["distinct_stacks"]);
    let (gd, ed) = (&got["devices"]["0"], &e["devices"]["0"]);
    for f in common::SNAPSHOT_DEVICE_FIELDS {
        assert_eq!(gd[f], ed[f], "{f}");
    }
    assert_eq!(snap.segments[0].pool_id, Some((0, 0)));
}
