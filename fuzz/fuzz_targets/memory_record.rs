//! `memory_record.csv`: arbitrary bytes through the reader; every series has one value per time
//! in each column; peaks and curves computed. Nothing may panic; diagnostics name the file.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::profiler::memory_record::{self, Metric};
use memlens::source::BytesSource;

const NAME: &str = "run/ASCEND_PROFILER_OUTPUT/memory_record.csv";

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let src = BytesSource::new(NAME, data.to_vec());
    match memory_record::read_memory_record(&src, None) {
        Ok(mut mr) => {
            // A row per record; records end at LF, CR or CRLF.
            let records = data.iter().filter(|&&b| b == b'\n' || b == b'\r').count() + 1;
            let points: usize = mr.series.iter().map(|s| s.ts.len()).sum();
            assert!(points <= records);
            for w in &mr.warnings {
                common::names_file(w, NAME);
            }
            for s in &mut mr.series {
                let n = s.ts.len();
                assert_eq!(s.allocated.len(), n);
                assert_eq!(s.reserved.len(), n);
                assert_eq!(s.active.len(), n);
                s.sort_by_time();
                assert!(s.ts.windows(2).all(|w| w[0] <= w[1]));
                for m in [Metric::Allocated, Metric::Reserved, Metric::Active] {
                    if let Some(p) = s.peak(m) {
                        assert!(s.values(m).iter().flatten().all(|v| v <= p.bytes));
                    }
                    let (t, v) = s.points(m);
                    assert_eq!(t.len(), v.len());
                    let _ = s.value_at(m, 0);
                }
            }
            let _ = mr.framework();
        }
        Err(d) => common::names_file(&d, NAME),
    }
}
