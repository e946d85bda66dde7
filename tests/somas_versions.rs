//! SOMAS dump shapes of the MindSpore 2.4+ writer that the toy fixtures do not show, written by
//! hand from the toy's full-name dump (`fixtures/somas/Ascend_somas_tensor_offset_1.v2_4_fullname.ir`).
//! The shapes come from reading MindSpore's `somas.cc` (backend/common/somas) in the newest stored
//! version: with graph-output reuse on (ACL devices), `GraphOutputProcess` keeps a graph output's
//! size and marks it `LifeLongGraphEnd` instead of turning it into a zero-size `GraphOutput`; the
//! atomic-clean op is `MemSet` and carries its full scope name; and with the memory tracker on the
//! final `somas_tensor_offset` dump is written alone (no other SOMAS file beside it). Expected
//! figures are worked out by hand below, not taken from the code under test.

use std::process::Command;

use memlens::somas::{self, analyze, summary::summary, Lifelong, TensorKind};

const TOY: &str = "fixtures/somas/Ascend_somas_tensor_offset_1.v2_4_fullname.ir";

/// The toy with the v2.4+ ACL shapes: graph output `%12T` (ReduceMean, node 12, original 4 bytes)
/// kept at aligned 512, offset 0, `OutputOnly` (nothing consumes it) and `LifeLongGraphEnd`; node
/// `$4` is a full-name `MemSet` that clears `%6T`, which the AllReduce at node 6 produces later.
fn acl_toy() -> String {
    let text = std::fs::read_to_string(TOY).expect("toy present");
    let edited = text
        .replace(
            "%12T\t#0S\t#4S\t&0\tGraphOutput\tLifeLongNone\t12\t12",
            "%12T\t#512S\t#4S\t&0\tOutputOnly\tLifeLongGraphEnd\t12\t12",
        )
        .replace(
            "$4\tDefault/StreamSend-op5\t0\tinputs[]",
            "$4\tDefault/MemSet-op5\t0\tinputs[%6T, ]",
        );
    assert_ne!(edited, text, "the toy changed: the edits no longer apply");
    edited
}

#[test]
fn a_reused_graph_output_and_a_full_name_memset_read_right() {
    let text = acl_toy();
    let m = somas::parse_dump("acl.ir", text.as_bytes()).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(m.format.version, "v2.4+");
    // The MemSet reading a tensor produced later is the clean-op shape, not a warning.
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let t12 = m.tensor_row(12).unwrap() as usize;
    assert_eq!(m.tensors.lifelong[t12], Lifelong::GraphEnd);
    assert_eq!(m.tensors.kind[t12], TensorKind::OutputOnly);
    let a = analyze(&m, None);
    // GraphEnd widens %12T to 12..13 (13 is the last node). The toy's in-use at 12 is the two
    // GraphAll tensors (197120 + 512) and %9T (512); at 13 the GraphAll tensors alone. %12T adds
    // 512 to both and nothing before 12.
    let lifelong = 197_120 + 512;
    assert_eq!(a.in_use[11], lifelong + 1_024 + 512 + 1_024 + 2_560);
    assert_eq!(a.in_use[12], lifelong + 512 + 512);
    assert_eq!(a.in_use[13], lifelong + 512);
    let s = summary(&m, &a, None);
    // The toy's no-reuse total 2833920 plus %12T's 512; GraphEnd is not stacked on top, so the
    // stacked lifelong bytes stay the two GraphAll tensors.
    assert_eq!(s.upper_bound_bytes, 2_833_920 + 512);
    assert_eq!(s.lifelong.graph_end, 512);
    assert_eq!(s.lifelong.stacked, lifelong);
    // %12T at [0, 512) during 12..13 shares bytes only with tensors dead by then (%2T 1..2,
    // %7T 9..10, %11T 11..11): no conflict. Peak unchanged (node 2, 2295808).
    assert!(s.conflicts_checked);
    assert!(s.conflicts.is_empty(), "{:?}", s.conflicts);
    let peak = s.peak.expect("peak");
    assert_eq!((peak.node_index, peak.in_use_bytes), (2, 2_295_808));
}

#[test]
fn a_reused_graph_output_overlapping_a_live_tensor_is_a_conflict() {
    // Move %12T onto %9T's bytes [4608, 5120), alive 11..12: both live at 12, a real overwrite.
    // This shows the GraphEnd tensor takes part in the check (it is not skipped like GraphOutput).
    let text = acl_toy().replace("%12T\t#512S\t#4S\t&0\t", "%12T\t#512S\t#4S\t&4608\t");
    let m = somas::parse_dump("acl.ir", text.as_bytes()).unwrap_or_else(|d| panic!("{d}"));
    let s = summary(&m, &analyze(&m, None), None);
    assert_eq!(s.conflicts, vec![[9, 12]]);
}

#[test]
fn a_folder_holding_only_the_tensor_offset_dump_is_read() {
    // With the memory tracker on and save_graphs off, 2.4+ writes the final plan alone.
    let dir = tempfile::tempdir().unwrap();
    let rank = dir.path().join("rank_0");
    std::fs::create_dir(&rank).unwrap();
    std::fs::write(rank.join("Ascend_somas_tensor_offset_1.ir"), acl_toy()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["somas", rank.to_str().unwrap(), "--json", "-q"])
        .output()
        .expect("run memlens");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["format"]["version"], "v2.4+");
    assert_eq!(v["reused_bytes"], 2_295_808);
    assert_eq!(v["upper_bound_bytes"], 2_833_920 + 512);
    assert_eq!(v["warnings"], serde_json::json!([]));
}
