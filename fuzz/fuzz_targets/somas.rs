//! SOMAS dumps and task-info files: arbitrary bytes through the sniffing entry point
//! (`parse_dump`, every family), the analysis, the summary, every query and the CSV export.
//! Nothing may panic; an error names the file; a parsed model must be consistent.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::somas;

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let task = match somas::parse_task_info("t.ir", data) {
        Ok(t) => Some(t),
        Err(d) => {
            common::names_file(&d, "t.ir");
            None
        }
    };
    match somas::parse_dump("f.ir", data) {
        Ok(model) => common::exercise_somas(&model, task.as_ref()),
        Err(d) => common::names_file(&d, "f.ir"),
    }
}
