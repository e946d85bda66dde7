//! `task_info_graph_*.ir`: arbitrary bytes through the task-info parser, then matched against the
//! sample SOMAS dump (base address, task ranges, mismatches). Nothing may panic.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::somas;
use std::sync::OnceLock;

/// The toy dump every task-info input is matched against (the same graph as the seeds).
const DUMP: &[u8] =
    include_bytes!("../../fixtures/examples/somas-toy/Ascend_somas_tensor_offset_7.ir");

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    static MODEL: OnceLock<somas::SomasModel> = OnceLock::new();
    let model = MODEL.get_or_init(|| somas::parse_dump("dump.ir", DUMP).expect("toy dump parses"));
    match somas::parse_task_info("task_info_graph_7.ir", data) {
        Ok(task) => {
            for i in 0..task.len() {
                let _ = task.name(i);
            }
            let _ = task.address_range();
            common::exercise_somas(model, Some(&task));
        }
        Err(d) => common::names_file(&d, "task_info_graph_7.ir"),
    }
}
