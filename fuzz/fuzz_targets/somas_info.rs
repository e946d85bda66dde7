//! SomasInfo v1.10+ dumps (*_somas_tensor_offset_*, stage dumps) through their parser directly (no sniffing), then the analysis, summary, queries and
//! exports. Nothing may panic; an error names the file; a model is consistent.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::somas;
use memlens::somas::recognize::SomasFamily;

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    match somas::parse_family("dump.ir", data, SomasFamily::SomasInfo) {
        Ok(model) => common::exercise_somas(&model, None),
        Err(d) => common::names_file(&d, "dump.ir"),
    }
}
