//! The core functions the SOMAS page stands on (search box, tensor details, query JSON, layout
//! classes, the export zip), on the toy sample, with answers worked out by hand from its lines
//! (see the table in `somas_samples.rs`: offsets, aligned sizes and lifetimes per tensor).

use memlens::export::somas as out;
use memlens::somas::analysis::{self, layout_class};
use memlens::somas::queries::{self, SearchTarget};
use memlens::somas::{self, analyze, summary::summary};
use serde_json::json;
use std::io::Read;

const DIR: &str = "fixtures/somas";

fn toy_text() -> String {
    std::fs::read_to_string(format!("{DIR}/Ascend_somas_tensor_offset_1.ir"))
        .expect("sample present")
}

fn toy() -> somas::SomasModel {
    somas::parse_dump("toy.ir", toy_text().as_bytes()).unwrap()
}

#[test]
fn search_names_nodes_tensors_addresses_and_ranges() {
    let m = toy();
    let s = |t: &str| queries::search(&m, t);
    // ReLU-op3 is $2 (row 2: node rows follow execution order in the toy).
    assert_eq!(s("ReLU-op3"), Ok(vec![SearchTarget::Node { row: 2 }]));
    assert_eq!(s("  $5 "), Ok(vec![SearchTarget::Node { row: 5 }]));
    assert_eq!(s("%3T"), Ok(vec![SearchTarget::Tensor { row: 3 }]));
    // A bare number: tensor %3T first, then node $3.
    assert_eq!(
        s("3"),
        Ok(vec![
            SearchTarget::Tensor { row: 3 },
            SearchTarget::Node { row: 3 }
        ])
    );
    assert_eq!(s("0x200"), Ok(vec![SearchTarget::Address { address: 512 }]));
    assert_eq!(
        s("0x10-0X20"),
        Ok(vec![SearchTarget::Range { start: 16, end: 32 }])
    );
    assert!(s("0x20-0x10").unwrap_err().contains("below its start"));
    assert!(s("%99T").unwrap_err().contains("no data tensor %99T"));
    assert!(s("20")
        .unwrap_err()
        .contains("no data tensor %20T and no node"));
    assert!(s("Nope-op1").unwrap_err().contains("no node of that name"));
    assert!(s("").is_err());
    assert!(s("0xzz").unwrap_err().contains("not a hex address"));
}

#[test]
fn tensor_info_of_a_gap_head_and_a_lifelong_tensor() {
    let m = toy();
    let an = analyze(&m, None);
    // %4T: MaxPool-op4's output, head of a one-tensor contiguous list: offset 512, aligned 263680
    // with the 512-byte gap, so the effective range is [512, 512 + 263680 − 512).
    let t = queries::tensor_info(&m, &an, 4);
    assert_eq!(t.id, 4);
    assert_eq!(t.node_name, "MaxPool-op4");
    assert_eq!((t.node_index, t.output_index), (Some(3), Some(0)));
    assert_eq!((t.kind, t.lifelong), ("Common", "LifeLongNone"));
    assert_eq!((t.size, t.aligned, t.offset), (262_144, 263_680, 512));
    assert_eq!(t.range, [512, 263_680]);
    assert_eq!((t.life, t.alive), ([3, 6], [3, 6]));
    assert!(t.contiguous && !t.union_group);
    assert!(t.conflicts_with.is_empty() && t.task.is_none() && !t.task_mismatch);
    // %0T: GraphAll, widened from 0..1 to the whole graph 0..13.
    let t = queries::tensor_info(&m, &an, 0);
    assert_eq!((t.life, t.alive), ([0, 1], [0, 13]));
    assert_eq!(t.lifelong, "LifeLongGraphAll");
    assert_eq!(t.range, [2_098_176, 2_098_176 + 197_120]);
}

#[test]
fn query_json_objects_by_hand() {
    let m = toy();
    let an = analyze(&m, None);
    // $1 Conv2D-op2: inputs %0T and %0P, output %2T. Alive at 1: %2T (offset 0), %0T (2098176),
    // %1T (2295296), by offset. %0T's range [2098176, 2295296) touches no other tensor; %2T's
    // [0, 1049088) holds every later short-lived tensor but %3T, none alive at 1..2.
    let node = queries::json::node(&m, &an, 1);
    let over = |ids: &[u32]| -> Vec<serde_json::Value> {
        ids.iter()
            .map(|&id| json!({"id": id, "lifetime_overlap": false, "conflict": false}))
            .collect()
    };
    assert_eq!(
        node,
        json!({
            "node_index": 1,
            "node_name": "Conv2D-op2",
            "alive_tensors": [2, 0, 1],
            "io": [
                {"role": "input", "position": 0, "kind": "tensor", "id": 0,
                 "related_nodes": ["GetNext-op1", "Conv2D-op2"], "overlapping_tensors": []},
                {"role": "input", "position": 1, "kind": "parameter", "id": 0,
                 "related_nodes": ["Conv2D-op2"], "overlapping_tensors": []},
                {"role": "output", "position": 0, "kind": "tensor", "id": 2,
                 "related_nodes": ["Conv2D-op2", "ReLU-op3"],
                 "overlapping_tensors": over(&[4, 5, 6, 7, 8, 9, 10, 11])},
            ],
        })
    );
    // %5T (MaxPool's workspace, [263680, 268288) at 3): %2T and %6T ([264192, 527360)) share
    // bytes with it at other times.
    let t = queries::json::tensor(&m, &an, 5);
    assert_eq!(
        t,
        json!({
            "tensor_id": 5,
            "nodes": [{"node": "MaxPool-op4", "role": "workspace"}],
            "overlapping_tensors": over(&[2, 6]),
        })
    );
    // Offset 512 lies in %2T [0, 1049088), %4T [512, …), %7T [0, 1024) and %11T [0, 2560).
    assert_eq!(
        queries::json::address(&m, &an, 512),
        json!({"address": 512, "tensors": [2, 4, 7, 11]})
    );
    // [0, 256) meets %2T, %7T and %11T.
    assert_eq!(
        queries::json::range(&m, &an, 0, 256),
        json!({"start": 0, "end": 256, "tensors": [2, 7, 11]})
    );
}

#[test]
fn layout_classes_follow_type_then_properties() {
    let m = toy();
    let an = analyze(&m, None);
    let class = |t: u32| analysis::layout_class_of(&m, t, false);
    assert_eq!(class(0), layout_class::LIFELONG); // GraphAll
    assert_eq!(class(2), layout_class::OUTPUT); // Common
    assert_eq!(class(4), layout_class::CONTIGUOUS); // HCCL input list
    assert_eq!(class(5), layout_class::WORKSPACE);
    assert_eq!(class(10), layout_class::OUTPUT_ONLY);
    assert_eq!(
        analysis::layout_class_of(&m, 2, true),
        layout_class::CONFLICT
    );
    // One rectangle per occupying tensor (%12T and %13T have aligned size 0), as tensor_rects.
    assert_eq!(analysis::layout_rects(&m, &an).len(), 12);
    assert_eq!(analysis::tensor_rects(&m, &an).len(), 12);
    assert_eq!(layout_class::NAMES.len(), 8);

    // Without %4T's contiguous list its raw range overlaps %5T at node 3: both are conflicts.
    let edited = toy_text().replace("contiguous tensors: [%4T ]\n", "");
    let m = somas::parse_dump("edited.ir", edited.as_bytes()).unwrap();
    let an = analyze(&m, None);
    let rows = analysis::conflict_rows(&m, &an);
    let marked: Vec<usize> = (0..rows.len()).filter(|&r| rows[r]).collect();
    assert_eq!(marked, vec![4, 5]);
    assert_eq!(queries::tensor_info(&m, &an, 5).conflicts_with, vec![4]);
}

/// Each rectangle's class by tensor row, read back through the view's own drawing list on a
/// canvas large enough that every rectangle is drawn one by one.
fn classes_by_row(rects: &memlens::chart::RectSet) -> std::collections::BTreeMap<u32, u8> {
    let view = rects.bounds().expect("rectangles");
    let lod = rects.visible(&view, 1 << 24, 1 << 24, usize::MAX);
    assert_eq!(lod.merged, 0, "every rectangle drawn alone");
    lod.id
        .iter()
        .copied()
        .zip(lod.class.iter().copied())
        .collect()
}

#[test]
fn both_rectangle_sets_rank_conflict_lifelong_union_contiguous_over_the_type() {
    use memlens::somas::analysis::rect_class;
    let m = toy();
    let an = analyze(&m, None);
    let plain = classes_by_row(&analysis::tensor_rects(&m, &an));
    let typed = classes_by_row(&analysis::layout_rects(&m, &an));
    assert_eq!(plain.len(), 12);
    assert_eq!(typed.len(), 12);
    // %0T is GraphAll, %4T in the HCCL input list, %2T Common, %5T a workspace, %10T an output
    // nobody reads (the toy's own text says so).
    for (row, want_plain, want_typed) in [
        (0, rect_class::LIFELONG, layout_class::LIFELONG),
        (4, rect_class::CONTIGUOUS, layout_class::CONTIGUOUS),
        (2, rect_class::PLAIN, layout_class::OUTPUT),
        (5, rect_class::PLAIN, layout_class::WORKSPACE),
        (10, rect_class::PLAIN, layout_class::OUTPUT_ONLY),
    ] {
        assert_eq!(plain[&row], want_plain, "tensor_rects, %{row}T");
        assert_eq!(typed[&row], want_typed, "layout_rects, %{row}T");
    }

    // Without %4T's contiguous list, %4T and %5T overlap: the conflict outranks the rest.
    let edited = toy_text().replace("contiguous tensors: [%4T ]\n", "");
    let m = somas::parse_dump("edited.ir", edited.as_bytes()).unwrap();
    let an = analyze(&m, None);
    let plain = classes_by_row(&analysis::tensor_rects(&m, &an));
    let typed = classes_by_row(&analysis::layout_rects(&m, &an));
    for row in [4, 5] {
        assert_eq!(plain[&row], rect_class::CONFLICT, "tensor_rects, %{row}T");
        assert_eq!(typed[&row], layout_class::CONFLICT, "layout_rects, %{row}T");
    }
    assert_eq!(plain[&2], rect_class::PLAIN);
}

#[test]
fn export_zip_holds_the_file_set_and_is_deterministic() {
    let m = toy();
    let ti_bytes = std::fs::read(format!("{DIR}/task_info_graph_1.ir")).unwrap();
    let ti = somas::parse_task_info("task_info_graph_1.ir", &ti_bytes).unwrap();
    let an = analyze(&m, Some(&ti));
    let s = summary(&m, &an, Some(&ti));
    let q = out::QuerySet {
        node: Some(2),
        tensor: Some(4),
        address: Some(an.base + 512),
        range: Some((an.base, an.base + 4096)),
    };
    let log = out::log(&m, &an, &s);
    let files = out::file_set(&m, &an, &s, &q, &log);
    let zip = |files: &[out::OutFile]| {
        out::write_zip(files, &m, &an, std::io::Cursor::new(Vec::new()))
            .unwrap()
            .into_inner()
    };
    let bytes = zip(&files);
    assert_eq!(bytes, zip(&files), "same input, same bytes");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    assert_eq!(archive.len(), files.len());
    for (i, f) in files.iter().enumerate() {
        let mut entry = archive.by_index(i).unwrap();
        assert_eq!(entry.name(), f.path);
        let mut got = Vec::new();
        entry.read_to_end(&mut got).unwrap();
        let mut want = Vec::new();
        out::write_file(f, &m, &an, &mut want).unwrap();
        assert_eq!(got, want, "{}", f.path);
    }

    // The parameter address range of the overview, from the parameters table's own cells.
    let rows = memlens::somas::tables::Table::Parameters.rows(&m, &an);
    let mut lo = u64::MAX;
    let (mut hi, mut sum) = (0u64, 0u64);
    for r in 0..rows as u32 {
        let cell = |c| match memlens::somas::tables::cell(
            &m,
            &an,
            memlens::somas::tables::Table::Parameters,
            r,
            c,
        ) {
            memlens::somas::tables::Cell::Int(v) => Some(v),
            _ => None,
        };
        if let (Some(start), Some(end), Some(size)) = (cell(3), cell(6), cell(5)) {
            lo = lo.min(start);
            hi = hi.max(end);
            sum += size;
        }
    }
    assert!(lo < hi, "task-info gives parameter addresses");
    assert_eq!(an.param_range(&m), Some((lo, hi, sum)));
}
