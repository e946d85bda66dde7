//! Memory snapshot pickles through the sniffer and the reader directly, then the analysis, the
//! summary and every export. Nothing may panic; an error names the file; a model is consistent.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::snapshot;
use memlens::source::BytesSource;

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let _ = snapshot::sniff(data);
    match snapshot::read(&BytesSource::new("snap.pickle", data.to_vec())) {
        Ok(snap) => common::exercise_snapshot(&snap),
        Err(d) => common::names_file(&d, "snap.pickle"),
    }
}
