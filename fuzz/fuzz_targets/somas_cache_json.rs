//! The SOMAS cache JSON (`somas_graph_<G>_<hash>.json`) through its parser directly, then the
//! analysis. Nothing may panic; an error names the file.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::somas;

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    match somas::parse_cache_json("somas_graph_1_1.json", data) {
        Ok(model) => common::exercise_somas(&model, None),
        Err(d) => common::names_file(&d, "somas_graph_1_1.json"),
    }
}
