//! `profiler_info.json` and `profiler_metadata.json` (rank and role) through classification:
//! arbitrary bytes as both files of one run folder. Nothing may panic; the folder is always one
//! run unit with all three files; a rank only ever comes from a well-formed `rank_id`.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::families::RECOGNIZERS;
use memlens::input::classify::{classify, Entry, Head};
use memlens::profiler::ProfilerRun;

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    // "<profiler_info.json bytes>\xFF<profiler_metadata.json bytes>"
    let (info, meta) = match data.iter().position(|&b| b == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let root = "job/actor/host_1_20250101000000000_ascend_pt";
    let entries = [
        Entry {
            path: format!("{root}/profiler_info.json"),
            size: info.len() as u64,
        },
        Entry {
            path: format!("{root}/profiler_metadata.json"),
            size: meta.len() as u64,
        },
        Entry {
            path: format!("{root}/ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
            size: 10,
        },
    ];
    let heads = [
        Head::Bytes(info.to_vec()),
        Head::Bytes(meta.to_vec()),
        Head::NotRead,
    ];
    let inv = classify(&entries, &heads, RECOGNIZERS);
    assert_eq!(inv.files, 3);
    assert_eq!(inv.units.len(), 1, "{:?}", inv.units);
    let Some(run) = inv.units[0].get::<ProfilerRun>() else {
        panic!("{:?}", inv.units[0])
    };
    assert_eq!(run.path, root);
    assert_eq!(run.file_count, 3);
    match run.rank {
        Some(_) => assert_eq!(run.rank_source, "rank_id"),
        None => assert_ne!(run.rank_source, "rank_id"),
    }
    if run.role_source == "metadata" {
        assert!(!run.role.is_empty() && run.role == run.role.trim());
    } else {
        assert_eq!(run.role, "actor");
    }
    let _ = serde_json::to_string(&inv).expect("inventory serialises");
}
