//! A whole torch_npu run folder from fuzzed files: `operator_memory.csv`, `trace_view.json`,
//! `memory_record.csv` and `npu_module_mem.csv` (the input split at 0xFF bytes), through
//! discovery, the join, the analysis, every query and every export. Nothing may panic; the rank's
//! stack counts add up to its rows; diagnostics name a file of the run.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::export::profiler as exp;
use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::discover_job;
use memlens::profiler::memory_record::Metric;
use memlens::profiler::queries::curve_window;
use memlens::profiler::trace::TraceOptions;
use memlens::profiler::view::allocations::{allocation_table, select, AllocationQuery, SortKey};

const RUN: &str = "job/actor/host_1_20250101000000000_ascend_pt";
const FILES: [&str; 4] = [
    "ASCEND_PROFILER_OUTPUT/operator_memory.csv",
    "ASCEND_PROFILER_OUTPUT/trace_view.json",
    "ASCEND_PROFILER_OUTPUT/memory_record.csv",
    "ASCEND_PROFILER_OUTPUT/npu_module_mem.csv",
];

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let mut set = memlens::families::input_set();
    set.add_bytes(&format!("{RUN}/profiler_info_3.json"), b"{}".to_vec());
    for (part, name) in data.split(|&b| b == 0xFF).zip(FILES) {
        set.add_bytes(&format!("{RUN}/{name}"), part.to_vec());
    }
    let job = discover_job(set.classify());
    let opts = AnalyzeOptions {
        trace: TraceOptions {
            batch: 97,
            pieces: 3,
        },
    };
    let a = analyze_job(&set, &job, &opts, &mut |_| {});
    for w in &a.warnings {
        assert!(w.file.starts_with(RUN), "{w}");
    }
    for r in &a.ranks {
        let s = &r.summary;
        let st = &s.stacks;
        assert_eq!(
            st.direct + st.via_forward + st.approximate + st.none,
            s.rows
        );
        assert_eq!(s.rows_pta + s.rows_ge, s.rows);
        let _ = serde_json::to_string(s).expect("summary serialises");
        for i in 0..r.rows.len().min(16) {
            let _ = (r.stack(i), r.top_frame(i), r.innermost_frame(i), r.name(i));
        }
        let _ = r.live_at(s.peak_time_ns);
        for m in [Metric::Allocated, Metric::Reserved, Metric::Active] {
            let _ = r.curve("PTA", m);
            let _ = curve_window(&r.memory, "PTA", m, i64::MIN, i64::MAX, 7);
        }
        let table = allocation_table(r, 0);
        for sort in [
            SortKey::Time,
            SortKey::Size,
            SortKey::Duration,
            SortKey::Name,
            SortKey::Release,
            SortKey::Frame,
        ] {
            let q = AllocationQuery {
                name: Some("a.*".into()),
                stack: Some("(".into()), // an invalid regex is an error, not a panic
                sort,
                descending: true,
                ..AllocationQuery::default()
            };
            let _ = select(r, &table, 0, &q);
            let view = select(
                r,
                &table,
                0,
                &AllocationQuery {
                    sort,
                    start: Some(0.0),
                    ..AllocationQuery::default()
                },
            )
            .expect("a plain query works");
            let page = view.page(&table, 0, 50);
            assert!(page.ids.len() <= page.total.min(50));
        }
    }
    exp::write_memory_events(&a, std::io::sink()).expect("memory_events");
    exp::write_rank_summary(&a, std::io::sink()).expect("rank_summary");
    exp::write_peak_attribution(&a, std::io::sink()).expect("peak_attribution");
    exp::write_step_peaks(&a, std::io::sink()).expect("step_peaks");
}
