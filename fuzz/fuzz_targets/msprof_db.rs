//! The database export in msprof's layout from fuzzed bytes: the bytes as MindSpore's
//! `ascend_mindspore_profiler_3.db` in a run folder of their own, through the pairing of
//! `NPU_OP_MEM`'s allocations and releases, the analysis and every export. Nothing may panic or
//! run away; diagnostics name the db or its run folder (the run's note on what the
//! export holds names the folder); every row is a GE row and the rank's stack counts add
//! up to its rows (this export holds no call stack).
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::discover_job;

const RUN: &str = "job/w_1_20250101000000000_ascend_ms";
const DB: &str = "ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler_3.db";

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let mut set = memlens::families::input_set();
    set.add_bytes(&format!("{RUN}/{DB}"), data.to_vec());
    let job = discover_job(&set.classify());
    let a = analyze_job(&set, &job, &AnalyzeOptions::default(), &mut |_| {});
    for w in a
        .warnings
        .iter()
        .chain(a.ranks.iter().flat_map(|r| &r.warnings))
    {
        common::names_file(w, RUN);
    }
    for r in &a.ranks {
        assert_eq!(
            r.summary.rows_ge, r.summary.rows,
            "every row of this export is the GE allocator's"
        );
    }
    common::exercise_db_job(&a);
}
