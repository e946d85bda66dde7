//! Goldens for every file in `fixtures/somas/`. The expected figures are worked out by
//! hand from the dump lines (the arithmetic is in the comments), never taken from the code under
//! test.

use memlens::somas::{self, analyze, summary::summary, DumpFamily, Lifelong};

const DIR: &str = "fixtures/somas";

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{name}")).expect("sample present")
}

fn load(name: &str) -> somas::SomasModel {
    somas::parse_dump(name, &read(name)).unwrap_or_else(|d| panic!("{d}"))
}

// Aligned sizes of the toy's data tensors, from the "All Tensors" lines (v1.10+ dumps):
// %0T 197120 GraphAll 0..1, %1T 512 GraphAll 0..11, %2T 1049088 1..2, %3T 1049088 2..3,
// %4T 263680 3..6, %5T 4608 3..3, %6T 263680 6..9, %7T 1024 9..10, %8T 1024 10..11,
// %9T 512 11..12, %10T 1024 11..11, %11T 2560 11..11, %12T 0, %13T 0. Nodes $0..$13.
// GraphAll widens %0T and %1T to 0..13: 197120 + 512 = 197632 at every node.
const LIFELONG: u64 = 197_120 + 512;
const IN_USE: [u64; 14] = [
    LIFELONG,                               // 0
    LIFELONG + 1_049_088,                   // 1: %2T
    LIFELONG + 2 * 1_049_088,               // 2: %2T %3T (the reference's 2295808)
    LIFELONG + 1_049_088 + 263_680 + 4_608, // 3: %3T %4T %5T
    LIFELONG + 263_680,                     // 4: %4T
    LIFELONG + 263_680,                     // 5: %4T
    LIFELONG + 263_680 + 263_680,           // 6: %4T %6T
    LIFELONG + 263_680,                     // 7: %6T
    LIFELONG + 263_680,                     // 8: %6T
    LIFELONG + 263_680 + 1_024,             // 9: %6T %7T
    LIFELONG + 1_024 + 1_024,               // 10: %7T %8T
    LIFELONG + 1_024 + 512 + 1_024 + 2_560, // 11: %8T %9T %10T %11T
    LIFELONG + 512,                         // 12: %9T
    LIFELONG,                               // 13
];
// Allocated without reuse up to each node (a tensor counts from its widened start).
const TOTAL: [u64; 14] = [
    LIFELONG,
    LIFELONG + 1_049_088,
    LIFELONG + 2_098_176,
    LIFELONG + 2_098_176 + 263_680 + 4_608,
    LIFELONG + 2_098_176 + 263_680 + 4_608,
    LIFELONG + 2_098_176 + 263_680 + 4_608,
    LIFELONG + 2_098_176 + 263_680 + 4_608 + 263_680,
    LIFELONG + 2_098_176 + 263_680 + 4_608 + 263_680,
    LIFELONG + 2_098_176 + 263_680 + 4_608 + 263_680,
    LIFELONG + 2_098_176 + 263_680 + 4_608 + 263_680 + 1_024,
    LIFELONG + 2_098_176 + 263_680 + 4_608 + 263_680 + 2_048,
    2_833_920,
    2_833_920,
    2_833_920,
];
// Parameters: 4608 + 81920 + 20 + 4 + 4.
const STATIC: u64 = 86_556;

#[test]
fn hand_figures_are_consistent_with_the_reference() {
    assert_eq!(&IN_USE[..5], &[197632, 1246720, 2295808, 1515008, 461312]);
    assert_eq!(TOTAL[13], 2_833_920);
}

fn check_v1_10_plus_toy(name: &str, version: &str, peak_name: &str) {
    let m = load(name);
    assert_eq!(m.format.family, DumpFamily::SomasInfo);
    assert_eq!(m.format.version, version);
    assert_eq!(
        (
            m.nodes.len(),
            m.tensors.len(),
            m.controls.id.len(),
            m.params.id.len()
        ),
        (14, 14, 14, 5)
    );
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let a = analyze(&m, None);
    assert_eq!(a.in_use, IN_USE);
    assert_eq!(a.total, TOTAL);
    let s = summary(&m, &a, None);
    let peak = s.peak.clone().expect("peak");
    assert_eq!((peak.node_index, peak.in_use_bytes), (2, 2_295_808));
    assert_eq!(peak.node_name, peak_name);
    assert_eq!(peak.in_use_with_static_bytes, 2_295_808 + STATIC);
    assert_eq!(peak.alive_tensors, 4);
    assert_eq!(s.reused_bytes, 2_295_808);
    assert_eq!(s.reused_bytes_source, "dump");
    assert_eq!(s.upper_bound_bytes, 2_833_920);
    assert_eq!(s.lifelong_bytes, LIFELONG);
    assert_eq!(s.static_bytes, STATIC);
    // Max end without GraphAll tensors: %3T at 1049088 + 1049088 (= 2295808 − 197632).
    let mx = s.max_address_without_lifelong.clone().expect("max address");
    assert_eq!((mx.end_bytes, mx.tensor_id), (2_098_176, 3));
    assert_eq!(mx.node_name, peak_name);
    assert_eq!((mx.node_index, mx.output_index), (Some(2), Some(0)));
    // Every trap (contiguous gap on %4T/%6T, GraphAll on top, zero-size %12T/%13T) is clean.
    assert!(s.conflicts_checked);
    assert!(s.conflicts.is_empty(), "{:?}", s.conflicts);
    assert_eq!(
        (s.union_groups, s.contiguous_lists, s.merged_blocks),
        (0, 2, 4)
    );
    // Ratios: 1 − 2295808/2833920; 1 − 2098176/2636288; 2295808/2295808.
    let r = |n: &str| a.ratio(n).expect(n);
    assert!((r("somas_tool_reuse_ratio") - (1.0 - 2_295_808.0 / 2_833_920.0)).abs() < 1e-12);
    assert!((r("reuse_ratio") - 0.189_885).abs() < 1e-5);
    assert!((r("reuse_ratio_without_lifelong") - (1.0 - 2_098_176.0 / 2_636_288.0)).abs() < 1e-12);
    assert!((r("solver_efficiency") - 1.0).abs() < 1e-12);
    // Ownership from the node lists: %10T is output 1 of $11, %5T the workspace of $3.
    let t10 = m.tensor_row(10).unwrap() as usize;
    assert_eq!(m.derived.owner[t10], 11);
    assert_eq!(m.derived.out_index[t10], 1);
    let t5 = m.tensor_row(5).unwrap() as usize;
    assert!(m.derived.is_workspace[t5]);
    assert_eq!(m.derived.consumers.row(1), &[11]);
    assert_eq!(m.tensors.lifelong[0], Lifelong::GraphAll);
    // The memory frame at the peak: %2T (offset 0), %3T (1049088), %0T, %1T — by offset.
    let frame: Vec<u32> = a
        .frame(&m, 2)
        .iter()
        .map(|&t| m.tensors.id[t as usize])
        .collect();
    assert_eq!(frame, vec![2, 3, 0, 1]);
}

#[test]
fn tensor_offset_v2_0() {
    check_v1_10_plus_toy("Ascend_somas_tensor_offset_1.ir", "v2.0-2.3", "ReLU-op3");
}

#[test]
fn tensor_offset_v1_10_control_tensors_as_t() {
    check_v1_10_plus_toy("Ascend_somas_tensor_offset_1.v1_10.ir", "v1.10", "ReLU-op3");
}

#[test]
fn tensor_offset_v2_4_full_names() {
    check_v1_10_plus_toy(
        "Ascend_somas_tensor_offset_1.v2_4_fullname.ir",
        "v2.4+",
        "Default/network-WithLossCell/_backbone-LeNetLike/relu-ReLU/ReLU-op3",
    );
    let m = load("Ascend_somas_tensor_offset_1.v2_4_fullname.ir");
    assert_eq!(m.find_node("ReLU-op3"), Some(2));
    assert_eq!(m.find_node("12"), Some(12));
}

#[test]
fn without_the_contiguous_lists_the_gap_would_be_a_false_conflict() {
    // %4T is a one-tensor contiguous list: offset 512 (+512 shift), aligned 263680 (gap included),
    // so its raw range [512, 264192) covers %5T's first 512 bytes [263680, …) at node 3. The
    // effective range [512, 263680) does not. Drop the list lines and the raw rule applies.
    let text = String::from_utf8(read("Ascend_somas_tensor_offset_1.ir")).unwrap();
    let edited = text.replace("contiguous tensors: [%4T ]\n", "");
    let m = somas::parse_dump("edited.ir", edited.as_bytes()).unwrap();
    let s = summary(&m, &analyze(&m, None), None);
    assert_eq!(s.conflicts, vec![[4, 5]]);
}

#[test]
fn pre_processed_info_is_unplaced() {
    let m = load("Ascend_somas_pre_processed_info_1.ir");
    assert_eq!(m.format.version, "v2.0-2.3");
    assert!(!m.placed);
    let a = analyze(&m, None);
    assert_eq!(a.in_use, IN_USE);
    let s = summary(&m, &a, None);
    assert_eq!(s.reused_bytes, 0);
    assert!(!s.conflicts_checked);
    assert!(s.conflicts.is_empty());
    assert_eq!(s.merged_blocks, 0);
}

#[test]
fn r1_allocate_info_with_addresses() {
    let m = load("somas_allocate_info_1.r1.ir");
    assert_eq!(m.format.family, DumpFamily::SomasInfoR1);
    assert_eq!(m.format.version, "r1.x");
    assert_eq!(
        (
            m.nodes.len(),
            m.tensors.len(),
            m.controls.id.len(),
            m.params.id.len()
        ),
        (14, 14, 0, 5)
    );
    assert!(m.placed);
    let a = analyze(&m, None);
    // r1.x gives %12T (OutputOnly, 12..12) 512 bytes: node 12 holds %9T and %12T.
    let mut expected = IN_USE;
    expected[12] = LIFELONG + 512 + 512;
    assert_eq!(a.in_use, expected);
    let s = summary(&m, &a, None);
    assert_eq!(s.upper_bound_bytes, 2_833_920 + 512);
    // No total line in r1.x: the largest end is %1T at 2295296 + 512.
    assert_eq!(
        (s.reused_bytes, s.reused_bytes_source),
        (2_295_808, "max-end-offset")
    );
    // Base = addr − offset, e.g. %2T &0x108080000000 at offset 0.
    assert_eq!((s.base_address, s.base_source), (0x1080_8000_0000, "dump"));
    // Contiguous lists rebuilt from AllReduce-op7 (type 1): [%4T] and [%6T].
    assert_eq!(s.contiguous_lists, 2);
    assert!(s.conflicts.is_empty(), "{:?}", s.conflicts);
    assert_eq!(a.param_addr[0], 0x1080_c000_0200);
}

#[test]
fn r1_mem_info() {
    let m = load("somas_mem_info_1.r1.ir");
    assert_eq!(m.format.family, DumpFamily::MemInfoR1);
    assert_eq!(m.tensors.len(), 14);
    // Producers at life_start 0,1,2,3,6,9,10,11,12,13.
    assert_eq!(m.nodes.index, vec![0, 1, 2, 3, 6, 9, 10, 11, 12, 13]);
    assert_eq!(m.node_name(2), "ReLU-op3");
    let a = analyze(&m, None);
    let mut expected = IN_USE;
    expected[12] = LIFELONG + 512 + 512;
    assert_eq!(a.in_use, expected);
    let s = summary(&m, &a, None);
    assert_eq!(s.base_address, 0x1080_8000_0000);
    assert_eq!(s.reused_bytes, 2_295_808);
    assert!(s.conflicts_checked);
    assert!(s.conflicts.is_empty(), "{:?}", s.conflicts);
}

#[test]
fn offline_log_uses_original_sizes() {
    let m = load("Ascend_somas_offline_log_1.ir");
    assert_eq!(m.format.family, DumpFamily::OfflineLog);
    // tids 0,1,2,3,4,6,7,8,9,10 have lines (workspaces and graph outputs have none).
    assert_eq!(m.tensors.id, vec![0, 1, 2, 3, 4, 6, 7, 8, 9, 10]);
    assert_eq!(m.nodes.index, vec![0, 1, 2, 3, 6, 9, 10, 11, 12]);
    assert!(!m.placed && m.sizes_are_original);
    assert_eq!(m.contiguous.len(), 2);
    let a = analyze(&m, None);
    // lifelong=1 for tid 0 and 1: 196608 + 128 everywhere; node 2 adds 1048576 twice.
    assert_eq!(a.in_use[0], 196_608 + 128);
    assert_eq!(a.in_use[2], 196_608 + 128 + 2 * 1_048_576);
    assert_eq!(a.peak.unwrap().index, 2);
    assert!(!a.conflicts.checked);
}

#[test]
fn cache_json() {
    let m = load("somas_graph_1_1234567890123456789.json");
    assert_eq!(m.format.family, DumpFamily::CacheJson);
    assert_eq!(m.tensors.len(), 14);
    let a = analyze(&m, None);
    // The JSON has no nodes: the time axis is 0..=max life_end = 13, same sizes as v2.x.
    assert_eq!(a.in_use, IN_USE);
    let s = summary(&m, &a, None);
    assert_eq!(s.reused_bytes, 2_295_808);
    assert_eq!(s.upper_bound_bytes, 2_833_920);
    assert!(s.conflicts.is_empty(), "{:?}", s.conflicts);
}

#[test]
fn task_info_matches_every_layout() {
    let ti = somas::parse_task_info("task_info_graph_1.ir", &read("task_info_graph_1.ir")).unwrap();
    assert_eq!(ti.len(), 14);
    assert_eq!(ti.version, "r1.x-2.2");
    for name in [
        "Ascend_somas_tensor_offset_1.ir",
        "Ascend_somas_tensor_offset_1.v1_10.ir",
        "Ascend_somas_tensor_offset_1.v2_4_fullname.ir",
        "somas_allocate_info_1.r1.ir",
    ] {
        let m = load(name);
        let a = analyze(&m, Some(&ti));
        let s = summary(&m, &a, Some(&ti));
        let t = s.task.clone().unwrap();
        assert_eq!(t.unmatched_records, 0, "{name}");
        // Every SOMAS output address minus its offset is 0x108080000000.
        assert_eq!(t.base_address, Some(0x1080_8000_0000), "{name}");
        // r1.x gives %12T 512 bytes at offset 0 (&0x108080000000), but the task file (written
        // for the 2.x layout, where %12T is a zero-size graph output) puts ReduceMean-op13's
        // output at 0x1080c0400000: a real disagreement between the two files.
        let expected: Vec<u32> = if name.contains("r1") {
            vec![12]
        } else {
            vec![]
        };
        assert_eq!(s.task_mismatches, expected, "{name}");
        // Lowest address 0x108080000000; highest 0x1080c0400000 + 4 (ReduceMean's output).
        assert_eq!(t.address_min, Some(0x1080_8000_0000));
        assert_eq!(t.address_max, Some(0x1080_c040_0004));
        // %1P is MatMul-op10's second input: 0x1080c0001600.
        assert_eq!(a.param_addr[1], 0x1080_c000_1600, "{name}");
        // %4T keeps its +512 shift in the task address: 0x108080000200.
        let m = &m;
        let r = m.tensor_row(4).unwrap() as usize;
        assert_eq!(a.task.as_ref().unwrap().tensor_addr[r], 0x1080_8000_0200);
    }
}

#[test]
fn task_info_mismatch_is_reported() {
    // MatMul-op10's output %7T (offset 0) moved by 0x200 in the task file.
    let text = String::from_utf8(read("task_info_graph_1.ir")).unwrap();
    let edited = text.replace(
        "output address:0x108080000000(640)",
        "output address:0x108080000200(640)",
    );
    let ti = somas::parse_task_info("t.ir", edited.as_bytes()).unwrap();
    let m = load("Ascend_somas_tensor_offset_1.ir");
    let a = analyze(&m, Some(&ti));
    assert_eq!(summary(&m, &a, Some(&ti)).task_mismatches, vec![7]);
}

#[test]
fn solver_logs_are_refused_with_a_pointer_to_the_right_file() {
    for name in ["somas_solver_input_1.ir", "somas_solver_output_1.ir"] {
        let e = somas::parse_dump(name, &read(name)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{name}:1: error: wrong file type: this is a SOMAS solver log (somas_solver_input/output or \
                 somas_tensor_relation), not a memory plan; open the *_somas_tensor_offset_*.ir dump"
            )
        );
    }
}

#[test]
fn crlf_and_a_final_newline_change_nothing() {
    let text = String::from_utf8(read("Ascend_somas_tensor_offset_1.ir")).unwrap();
    let crlf = text.replace('\n', "\r\n") + "\r\n";
    let m = somas::parse_dump("crlf.ir", crlf.as_bytes()).unwrap();
    let a = analyze(&m, None);
    assert_eq!(a.in_use, IN_USE);
    assert_eq!(m.reused_total, Some(2_295_808));
    assert_eq!(m.node_name(2), "ReLU-op3");
}

#[test]
fn names_with_brackets() {
    // A user Cell name with brackets in the node and tensor name fields.
    let text = String::from_utf8(read("Ascend_somas_tensor_offset_1.v2_4_fullname.ir")).unwrap();
    let edited = text.replace("relu-ReLU/", "relu[0]-ReLU]/");
    let m = somas::parse_dump("b.ir", edited.as_bytes()).unwrap();
    assert_eq!(
        m.node_name(2),
        "Default/network-WithLossCell/_backbone-LeNetLike/relu[0]-ReLU]/ReLU-op3"
    );
    assert_eq!(m.nodes.outputs.row(2), &[3]);
    assert!(m.warnings.is_empty());
}

#[test]
fn table_pages_sort_and_filter_like_the_page_will() {
    use memlens::somas::tables::{to_table, Table};
    use memlens::table::{Cell, Query, TextFilter};
    let m = load("Ascend_somas_tensor_offset_1.ir");
    let a = analyze(&m, None);
    let t = to_table(&m, &a, Table::Tensors);
    assert_eq!(t.rows(), 14);
    // Tensors whose source node name contains "softmax": %9T (512), %10T (1024), %11T (2560).
    let v = t
        .view(&Query {
            sort: vec![("AlignSize".into(), true)],
            text: vec![TextFilter {
                column: Some("SourceNodeName".into()),
                pattern: "softmax".into(),
                ..TextFilter::default()
            }],
            ..Query::default()
        })
        .unwrap();
    let p = v.page(&t, 0, 2);
    assert_eq!(p.total, 3);
    assert_eq!(p.ids, vec![11, 10]);
    let first = |name: &str| p.column(name).expect(name)[0];
    assert_eq!(first("AlignSize"), Cell::U(2560));
    assert_eq!(first("TensorType"), Cell::S("Workspace"));
    assert_eq!(
        first("SourceNodeName"),
        Cell::S("SoftmaxCrossEntropyWithLogits-op12")
    );
    // Nodes by in-use memory, largest first: ReLU-op3 (2295808) then MaxPool-op4 (1515008).
    let n = to_table(&m, &a, Table::Nodes);
    let v = n
        .view(&Query {
            sort: vec![("AliveTensorsSize".into(), true)],
            ..Query::default()
        })
        .unwrap();
    assert_eq!(&v.ids()[..2], &[2, 3]);
    assert_eq!(to_table(&m, &a, Table::Parameters).rows(), 5);
    assert_eq!(to_table(&m, &a, Table::Conflicts).rows(), 0);
}

#[test]
fn queries_answer_like_somas_tool() {
    use memlens::somas::queries::{self, Role, Target};
    let m = load("Ascend_somas_tensor_offset_1.ir");
    let a = analyze(&m, None);
    // MaxPool-op4 ($3): input %3T, output %4T, workspace %5T; alive at 3: %3T %4T %5T %0T %1T.
    let r = queries::node_query(&m, &a, m.find_node("MaxPool-op4").unwrap());
    let io: Vec<(Role, Target)> = r.io.iter().map(|i| (i.role, i.target)).collect();
    assert_eq!(
        io,
        vec![
            (Role::Input, Target::Tensor(3)),
            (Role::Output, Target::Tensor(4)),
            (Role::Workspace, Target::Tensor(5))
        ]
    );
    assert_eq!(r.frame, vec![4, 5, 3, 0, 1]);
    // %4T (3..6) has the effective range [512, 263680). It meets %2T [0, 1049088) (1..2),
    // %7T [0, 1024) (9..10), %8T [2560, 3584) (10..11), %9T [4608, 5120) (11..12),
    // %10T [3584, 4608) (11) and %11T [0, 2560) (11): none is alive during 3..6.
    let t4 = queries::tensor_query(&m, &a, 4);
    let ids: Vec<u32> = t4.overlapping.iter().map(|o| o.tensor_row).collect();
    assert_eq!(ids, vec![2, 7, 8, 9, 10, 11]);
    assert!(t4
        .overlapping
        .iter()
        .all(|o| !o.conflict && !o.lifetime_overlap));
    assert_eq!(t4.nodes, vec![(3, Role::Output), (6, Role::Input)]);
    // No task-info: addresses are offsets. Offset 263680 is %5T's first byte (and inside
    // %2T [0, 1049088)), not %4T's: its effective range ends there.
    assert_eq!(queries::address_query(&m, &a, 263_680), vec![2, 5]);
    assert_eq!(queries::range_query(&m, &a, 2_295_296, 2_295_808), vec![1]);
}

#[test]
fn tensor_rectangles_for_the_views() {
    use memlens::somas::analysis::{rect_class, tensor_rects};
    let m = load("Ascend_somas_tensor_offset_1.ir");
    let a = analyze(&m, None);
    let rects = tensor_rects(&m, &a);
    // 12 tensors with aligned > 0 (%12T and %13T are zero-size).
    assert_eq!(rects.len(), 12);
    // At node 2, offset 1049088 + 10 is inside %3T [1049088, 2098176) alive 2..3.
    assert_eq!(rects.hit(2.5, 1_049_098.0), Some(3));
    // GraphAll %1T spans every node at [2295296, 2295808).
    assert_eq!(rects.hit(12.5, 2_295_300.0), Some(1));
    let _ = rect_class::CONFLICT;
}

#[test]
fn union_clean_op_and_repeated_node_traps_in_an_edited_toy() {
    use memlens::somas::queries::{tensor_nodes, Role};
    let text = String::from_utf8(read("Ascend_somas_tensor_offset_1.ir")).unwrap();
    let edited = text
        // Union: %8T (BiasAdd, 10..11) becomes a ref of %7T (MatMul, 9..10); both sit at 2560
        // [2560, 3584), where nothing else lives during 9..11.
        .replace(
            "%7T\t#1024S\t#640S\t&0\tCommon",
            "%7T\t#1024S\t#640S\t&2560\tUnion",
        )
        .replace(
            "%8T\t#1024S\t#640S\t&2560\tCommon",
            "%8T\t#1024S\t#640S\t&2560\tUnion",
        )
        .replace(
            "All Union Tensors Info:\n\n",
            "All Union Tensors Info:\n\nunion tensors: [%7T %8T ]\n",
        )
        // Clean op: $4 clears %6T, which AllReduce-op7 ($6) produces later.
        .replace(
            "$4\tStreamSend-op5\t0\tinputs[]",
            "$4\tAtomicAddrClean-op5\t0\tinputs[%6T, ]",
        )
        // Repeated node: $7 runs AllReduce-op7 again (same tensors); %4T now ends at 7.
        .replace(
            "$7\tStreamSend-op8\t0\tinputs[]\toutputs[]",
            "$7\tAllReduce-op7\t1\tinputs[%4T, ]\toutputs[%6T, ]",
        )
        .replace(
            "\tLifeLongNone\t3\t6\tMaxPool-op4",
            "\tLifeLongNone\t3\t7\tMaxPool-op4",
        );
    let m = somas::parse_dump("edited.ir", edited.as_bytes()).unwrap();
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let a = analyze(&m, None);
    let s = summary(&m, &a, None);
    assert!(s.conflicts.is_empty(), "{:?}", s.conflicts);
    assert_eq!(s.union_groups, 1);
    // The union group counts once (1024 over 9..11); %4T (263680) is alive at 7 too.
    let mut expected = IN_USE;
    expected[7] = LIFELONG + 263_680 + 263_680;
    expected[10] = LIFELONG + 1_024;
    assert_eq!(a.in_use, expected);
    assert_eq!(s.upper_bound_bytes, 2_833_920 - 1_024);
    // %6T is owned by the first run ($6, its life_start), listed again by $7.
    let t6 = m.tensor_row(6).unwrap();
    assert_eq!(m.derived.owner[t6 as usize], 6);
    assert_eq!(
        tensor_nodes(&m, t6),
        vec![
            (4, Role::Input),
            (6, Role::Output),
            (7, Role::Output),
            (9, Role::Input)
        ]
    );
    // The same read by an ordinary node is a counted warning, not an error.
    let plain = edited.replace("AtomicAddrClean-op5", "StreamSend-op5");
    let m = somas::parse_dump("plain.ir", plain.as_bytes()).unwrap();
    let line = plain.lines().position(|l| l.starts_with("$4\t")).unwrap() + 1;
    assert_eq!(
        m.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        vec![format!(
            "plain.ir:{line}: warning: inputs: nodes that read a tensor outside its lifetime (first: \
             node $4 reads %6T, which lives 6..9)"
        )]
    );
    // And without the union list, %7T and %8T (same bytes, both alive at 10) conflict.
    let no_union = edited.replace("union tensors: [%7T %8T ]\n", "");
    let m = somas::parse_dump("nu.ir", no_union.as_bytes()).unwrap();
    assert_eq!(
        summary(&m, &analyze(&m, None), None).conflicts,
        vec![[7, 8]]
    );
}
