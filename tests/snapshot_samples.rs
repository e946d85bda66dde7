//! The two real snapshots in `fixtures/snapshots/` against `expected.json`, which
//! `fixtures/snapshots/expectations.py` derives with Python's own `pickle` module from the
//! definitions (not from memlens).
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use memlens::snapshot::{self, analysis, summary};
use memlens::source::PathSource;
use serde_json::Value;
use std::path::Path;

const FILES: [&str; 2] = [
    "cs336_tiny_mem_snapshot.pickle",
    "cs336_medium_128_training_memory_snapshot.pickle",
];

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/snapshots"))
}

fn expected() -> Value {
    let text = std::fs::read_to_string(dir().join("expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("expected.json is JSON")
}

fn load(name: &str) -> (snapshot::Snapshot, Value) {
    let src = PathSource::open(&dir().join(name), name).expect("fixture present");
    let snap = snapshot::read(&src).unwrap_or_else(|d| panic!("{d}"));
    let a = analysis::analyse(&snap);
    let s = serde_json::to_value(summary::summary(&snap, &a)).expect("summary serialises");
    (snap, s)
}

#[test]
fn samples_match_the_python_expectations() {
    let exp = expected();
    for name in FILES {
        let (snap, got) = load(name);
        let e = &exp[name];
        assert!(snap.warnings.is_empty(), "{name}: {:?}", snap.warnings);
        assert_eq!(got["keys"], e["keys"], "{name}: keys");
        assert_eq!(got["layout"], "dict");
        assert_eq!(got["protocol"], 4, "{name}: protocol");
        assert_eq!(
            got["distinct_frames"], e["distinct_frames"],
            "{name}: frames"
        );
        assert_eq!(
            got["distinct_stacks"], e["distinct_stacks"],
            "{name}: stacks"
        );
        let ed = e["devices"].as_object().expect("devices");
        let gd = got["devices"].as_object().expect("devices");
        assert_eq!(
            gd.keys().collect::<Vec<_>>(),
            ed.keys().collect::<Vec<_>>(),
            "{name}: devices"
        );
        for (dev, ev) in ed {
            for f in common::SNAPSHOT_DEVICE_FIELDS {
                assert_eq!(gd[dev][f], ev[f], "{name} device {dev}: {f}");
            }
        }
    }
}

#[test]
fn the_curve_ends_at_the_snapshot_and_peaks_where_the_summary_says() {
    for name in FILES {
        let (snap, got) = load(name);
        let a = analysis::analyse(&snap);
        let d = &a.devices[0];
        let t = &snap.traces[d.trace.expect("trace")];
        let curve = analysis::allocated_curve(t, d.baseline_bytes);
        assert_eq!(*curve.last().unwrap(), d.allocated_bytes as i64, "{name}");
        let max = *curve.iter().max().unwrap();
        assert_eq!(max, d.peak_allocated_bytes, "{name}");
        let first = curve.iter().position(|&v| v == max).unwrap() as u32;
        assert_eq!(Some(first), d.peak_trace_index, "{name}");
        assert_eq!(got["devices"]["0"]["peak_allocated_bytes"], max);
    }
}

#[test]
fn stacks_keep_every_frame_in_order() {
    // The first trace entry of the tiny sample, frame by frame, as pickle.load shows it.
    let (snap, _) = load(FILES[0]);
    let t = &snap.traces[0];
    let frames: Vec<_> = snap.stack_frames(t.stack[0]).collect();
    assert_eq!(frames.len(), 41);
    let first = frames[0];
    assert_eq!(snap.strings.get(first.name), "torch::unwind::unwind()");
    assert_eq!(snap.strings.get(first.filename), "??");
    let main = frames
        .iter()
        .find(|f| snap.strings.get(f.name) == "main")
        .expect("a main frame");
    assert_eq!(
        snap.strings.get(main.filename),
        "/root/autodl-tmp/assignment2-systems/cs336_systems/trace_peak_memory.py"
    );
    assert_eq!(main.line, 35);
    assert_eq!(t.action[0], snapshot::model::Action::SegmentAlloc);
    assert_eq!(t.addr[0], 139_781_763_760_128);
    assert_eq!(t.size[0], 20_971_520);
    assert_eq!(t.time_us[0], 1_772_688_692_031_317);
    assert_eq!(snap.segments[0].pool_id, Some((0, 0)));
    assert_eq!(snap.segments[0].is_expandable, Some(false));
    assert_eq!(snap.annotations.len(), 0);
}

#[test]
fn classification_recognises_snapshots_by_content_whatever_their_name() {
    let inv = memlens::families::classify_paths(&[dir().to_path_buf()]);
    let kind_of = |name: &str| {
        inv.units
            .iter()
            .find(|u| u.path().ends_with(name))
            .map(|u| u.kind())
    };
    for name in FILES {
        assert_eq!(kind_of(name), Some("snapshot"), "{name}");
    }
    // A torch-2.0-layout pickle named .json.
    assert_eq!(kind_of("generated_torch20_p2.json"), Some("snapshot"));
    assert_eq!(kind_of("expected.json"), Some("unknown"));
    let s = inv
        .units_of::<memlens::snapshot::recognize::SnapshotFile>()
        .find(|s| s.path.ends_with("generated_torch20_p2.json"))
        .expect("listed");
    assert_eq!((s.protocol, s.layout), (2, "dict"));
    // A pickle of something else is explained, not just unknown.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("model.pkl"),
        b"\x80\x04}\x94\x8c\x01a\x94K\x01s.",
    )
    .unwrap();
    let inv = memlens::families::classify_paths(&[tmp.path().to_path_buf()]);
    let u = serde_json::to_value(&inv.units[0]).unwrap();
    assert_eq!(u["kind"], "unknown");
    assert_eq!(
        u["reason"],
        "a Python pickle, but not a memory snapshot (no 'segments' or 'device_traces' at its top)"
    );
}
