//! The torch_npu database export from fuzzed bytes: the SQLite reader over every table of the
//! schema (every value of every row), then the bytes as the db of a run folder through the
//! mapping, the join, the analysis and every export. Nothing may panic or run away; diagnostics
//! name the db file; the rank's stack counts add up to its rows.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::discover_job;
use memlens::source::BytesSource;
use memlens::sqlite::Database;

const RUN: &str = "job/actor/host_1_20250101000000000_ascend_pt";
const DB: &str = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_3.db";

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let src = BytesSource::new("x.db", data.to_vec());
    if let Ok(db) = Database::open(&src) {
        assert!(db.header().page_count as u64 * db.header().page_size as u64 <= data.len() as u64);
        for t in db.tables().to_vec() {
            let mut rows = 0u64;
            let r = db.scan(&t, &mut |row| {
                for i in 0..=t.columns.len() {
                    let _ = row.get(i).type_name();
                }
                rows += 1;
                Ok(())
            });
            if let Err(e) = r {
                assert!(!e.message.is_empty());
                assert!(e.offset.is_none_or(|o| o <= data.len() as u64), "{e}");
            }
            // A row takes at least a cell pointer and two varints: no table holds more rows
            // than its file has bytes.
            assert!(rows <= data.len() as u64);
        }
    }
    let mut set = memlens::families::input_set();
    set.add_bytes(&format!("{RUN}/profiler_info_3.json"), b"{}".to_vec());
    set.add_bytes(&format!("{RUN}/{DB}"), data.to_vec());
    let job = discover_job(&set.classify());
    let a = analyze_job(&set, &job, &AnalyzeOptions::default(), &mut |_| {});
    for w in &a.warnings {
        common::names_file(w, &format!("{RUN}/{DB}"));
    }
    for r in &a.ranks {
        assert_eq!(r.summary.rows_pta + r.summary.rows_ge, r.summary.rows);
    }
    common::exercise_db_job(&a);
}
