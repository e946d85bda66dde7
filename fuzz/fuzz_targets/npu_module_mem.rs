//! `npu_module_mem.csv`: arbitrary bytes through the reader (both header variants); per-module
//! peaks. Nothing may panic; diagnostics name the file.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::profiler::module_mem;
use memlens::source::BytesSource;

const NAME: &str = "run/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv";

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let src = BytesSource::new(NAME, data.to_vec());
    match module_mem::read_module_mem(&src, None) {
        Ok(mm) => {
            for w in &mm.warnings {
                common::names_file(w, NAME);
            }
            // A row per record; records end at LF, CR or CRLF.
            let records = data.iter().filter(|&&b| b == b'\n' || b == b'\r').count() + 1;
            let points: usize = mm.modules.iter().map(|m| m.ts.len()).sum();
            assert!(points <= records);
            for m in &mm.modules {
                assert_eq!(m.ts.len(), m.reserved.len());
                if let Some((peak, _)) = m.peak() {
                    assert!(m.reserved.iter().flatten().all(|&v| v <= peak));
                }
            }
        }
        Err(d) => common::names_file(&d, NAME),
    }
}
