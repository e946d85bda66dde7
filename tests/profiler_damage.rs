//! Damaged input never panics and never stops the other files: every reader is run on truncated
//! and byte-flipped copies of real files (deterministic mutations), and a job with one bad file
//! still analyses its good files.

use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::memory_record::read_memory_record;
use memlens::profiler::module_mem::read_module_mem;
use memlens::profiler::operator_memory::read_operator_memory;
use memlens::profiler::trace::{read_trace, TraceOptions};
use memlens::profiler::{discover_job, Interner};
use memlens::source::BytesSource;
use std::path::Path;

fn real(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/torch_npu/msinsight-level0/text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT")
        .join(name);
    std::fs::read(p).unwrap()
}

/// Truncations at many offsets, and copies with bytes replaced by structural characters.
fn mutations(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let n = bytes.len();
    for k in 0..24 {
        out.push(bytes[..n * k / 24 + (k % 7)].to_vec());
    }
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for round in 0..24 {
        let mut m = bytes.to_vec();
        for _ in 0..(1 + round * 3) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = (x as usize) % n.max(1);
            const CHARS: &[u8] = b"\",{}[]:\\\n\r\t0.-eN\x00\xff";
            m[at] = CHARS[(x >> 40) as usize % CHARS.len()];
        }
        out.push(m);
    }
    out
}

#[test]
fn readers_survive_truncation_and_flipped_bytes() {
    let om = real("operator_memory.csv");
    for m in mutations(&om) {
        let mut s = Interner::new();
        let _ = read_operator_memory(&BytesSource::new("om.csv", m), &mut s, None);
    }
    let mr = real("memory_record.csv");
    for m in mutations(&mr) {
        let _ = read_memory_record(&BytesSource::new("mr.csv", m), None);
    }
    let mm = real("npu_module_mem.csv");
    for m in mutations(&mm) {
        let _ = read_module_mem(&BytesSource::new("mm.csv", m), None);
    }
    // The trace is large: mutate its first 200 KB and scan with small batches and many pieces.
    let tv = real("trace_view.json");
    let head = &tv[..200_000];
    for m in mutations(head) {
        for opts in [
            TraceOptions {
                batch: 64 << 10,
                pieces: 4,
            },
            TraceOptions::default(),
        ] {
            let (mut n, mut s) = (Interner::new(), Interner::new());
            let _ = read_trace(
                &BytesSource::new("tv.json", m.clone()),
                &mut n,
                &mut s,
                opts,
                None,
            );
        }
    }
}

#[test]
fn one_bad_file_does_not_stop_the_others() {
    let base = "job/actor/host_1_20250101000000000_ascend_pt";
    let mut set = memlens::families::input_set();
    set.add_bytes(&format!("{base}/profiler_info_0.json"), b"{}".to_vec());
    set.add_bytes(
        &format!("{base}/ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
        real("operator_memory.csv"),
    );
    set.add_bytes(
        &format!("{base}/ASCEND_PROFILER_OUTPUT/memory_record.csv"),
        b"this is not a csv header\n1,2,3\n".to_vec(),
    );
    set.add_bytes(
        &format!("{base}/ASCEND_PROFILER_OUTPUT/trace_view.json"),
        b"{\"not\": \"a trace\"}".to_vec(),
    );
    let job = discover_job(set.classify());
    let a = analyze_job(&set, &job, &AnalyzeOptions::default(), &mut |_| {});
    let s = &a.ranks[0].summary;
    assert_eq!(s.rows, 184, "operator_memory still read");
    assert_eq!(
        s.peak_source, "operator_memory",
        "peak rebuilt from operator_memory"
    );
    assert!(s.peak_allocated_bytes > 0);
    let errors: Vec<_> = a.warnings.iter().filter(|d| d.is_error()).collect();
    assert!(errors
        .iter()
        .any(|d| d.file.ends_with("memory_record.csv") && d.message.contains("Component")));
    assert!(errors
        .iter()
        .any(|d| d.file.ends_with("trace_view.json") && d.message.contains("traceEvents")));
}
