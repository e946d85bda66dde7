//! SOMAS dumps and task-info files: arbitrary bytes through the parsers, the analysis, the
//! summary, every query and the CSV export. Nothing may panic; a parsed model must be consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memlens::export::somas::{file_set, log, write_file, QuerySet};
use memlens::somas::{self, queries, summary::summary};

fuzz_target!(|data: &[u8]| {
    let task = somas::parse_task_info("t.ir", data).ok();
    let Ok(model) = somas::parse_dump("f.ir", data) else {
        return;
    };
    // Every cross reference resolves to a row.
    let nt = model.tensors.len() as u32;
    for r in 0..model.nodes.len() {
        assert!(model.nodes.outputs.row(r).iter().all(|&t| t < nt));
    }
    let an = somas::analyze(&model, task.as_ref());
    assert_eq!(an.in_use.len(), model.max_index() as usize + 1);
    let s = summary(&model, &an, task.as_ref());
    for t in 0..nt.min(64) {
        let _ = queries::tensor_query(&model, &an, t);
    }
    for n in 0..(model.nodes.len() as u32).min(64) {
        let _ = queries::node_query(&model, &an, n);
    }
    let _ = queries::range_query(&model, &an, 0, u64::MAX);
    let q = QuerySet {
        node: (!model.nodes.is_empty()).then_some(0),
        tensor: (nt > 0).then_some(0),
        address: Some(0x200),
        range: Some((0, 0x1000)),
    };
    for f in file_set(&model, &an, &s, &q, &log(&model, &an, &s)) {
        let _ = write_file(&f, &model, &an, std::io::sink());
    }
});
