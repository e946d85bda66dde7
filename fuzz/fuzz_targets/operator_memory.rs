//! `operator_memory.csv`: arbitrary bytes through the reader, then attribution (no trace) and the
//! allocator reconstruction. Nothing may panic; diagnostics name the file; every kept row sits on
//! its own line of the file, in order.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::profiler::{analysis, attribution, operator_memory, trace::Ops, Interner};
use memlens::source::BytesSource;

const NAME: &str = "run/ASCEND_PROFILER_OUTPUT/operator_memory.csv";

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let src = BytesSource::new(NAME, data.to_vec());
    let mut strings = Interner::new();
    match operator_memory::read_operator_memory(&src, &mut strings, None) {
        Ok(om) => {
            let lines = memchr_count(data) + 1;
            // A row per record; records end at LF, CR or CRLF.
            let records = data.iter().filter(|&&b| b == b'\n' || b == b'\r').count() as u64 + 1;
            assert!(om.rows.len() as u64 <= records);
            let mut last = 1;
            for r in &om.rows {
                // Non-decreasing, not increasing: a lone CR ends a CSV record inside a line (even
                // the header's: a CR-only file is all on line 1; its byte offsets still differ).
                assert!(
                    r.line >= last && r.line <= lines,
                    "row line {} after {last} of {lines}",
                    r.line
                );
                last = r.line;
            }
            for w in &om.warnings {
                common::names_file(w, NAME);
                assert!(w.line.is_some_and(|l| l <= lines + 1), "{w}");
            }
            let attr = attribution::attribute_rows(&om.rows, &Ops::default());
            assert_eq!(attr.len(), om.rows.len());
            let _ = analysis::reconstruct(&om.rows);
        }
        Err(d) => common::names_file(&d, NAME),
    }
}

fn memchr_count(data: &[u8]) -> u64 {
    data.iter().filter(|&&b| b == b'\n').count() as u64
}
