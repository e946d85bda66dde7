//! Every documented format variant, as small fixtures under `fixtures/ascend/`, with the rows they
//! must give. Expected values are written out by hand from the fixture text.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::diag::Severity;
use memlens::input::FileOpener;
use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::memory_record::{read_memory_record, Metric};
use memlens::profiler::module_mem::read_module_mem;
use memlens::profiler::operator_memory::{read_operator_memory, Layout, RowSource};
use memlens::profiler::trace::{read_trace, TraceOptions};
use memlens::profiler::{discover_job, Interner};
use memlens::source::PathSource;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ascend")
        .join(name)
}

fn src(name: &str) -> PathSource {
    PathSource::open(&fixture(name), name).expect("fixture exists")
}

#[test]
fn operator_memory_15_columns_crlf_unquoted_tab() {
    let mut s = Interner::new();
    let om = read_operator_memory(&src("operator_memory_15col_crlf.csv"), &mut s, None).unwrap();
    assert_eq!(om.layout, Layout::Current);
    assert!(om.warnings.is_empty(), "{:?}", om.warnings);
    assert_eq!(om.rows.len(), 3);
    let r = &om.rows[0];
    assert_eq!(s.get(r.name), "aten::empty_strided");
    assert_eq!(r.size, 18816 * 1024 + 512);
    assert_eq!(r.alloc_ns(), Some(1_736_405_443_871_259_720));
    assert_eq!(
        r.release_ns(),
        None,
        "unreleased keeps an empty release, not 0"
    );
    assert_eq!(r.alloc_total_allocated(), Some(1_000_729_600));
    assert_eq!(s.get(r.stream), "1431569360");
    let c = &om.rows[1];
    assert_eq!(c.release_ns(), Some(1_736_405_443_914_587_140));
    assert_eq!(c.active_release_ns(), Some(1_736_405_443_914_586_740));
    assert_eq!(c.duration_ns(), Some(34_742_240));
    assert_eq!(c.line, 3);
    let g = &om.rows[2];
    assert_eq!(g.source, RowSource::Ge);
    assert_eq!(g.duration_ns(), Some(115_970));
    assert_eq!(g.alloc_total_active(), None);
}

#[test]
fn operator_memory_legacy_10_columns_with_negative_row() {
    let mut s = Interner::new();
    let om = read_operator_memory(&src("operator_memory_10col_legacy.csv"), &mut s, None).unwrap();
    assert_eq!(om.layout, Layout::Legacy);
    assert_eq!(om.rows.len(), 3);
    assert_eq!(om.rows[0].alloc_ns(), Some(1_690_000_000_000_001_500));
    assert_eq!(om.rows[0].duration_ns(), Some(10_000));
    assert_eq!(om.rows[0].active_release_ns(), None);
    let neg = &om.rows[1];
    assert!(neg.negative);
    assert_eq!(neg.size, 512);
    assert_eq!(s.get(neg.name), "");
    assert_eq!(neg.alloc_ns(), None);
    assert_eq!(neg.time_ns(), Some(1_690_000_000_000_020_250));
    assert_eq!(om.rows[2].release_ns(), None);
    assert_eq!(om.rows[2].line, 4, "LF line numbers");
}

#[test]
fn operator_memory_mindspore_na_is_empty() {
    let mut s = Interner::new();
    let om = read_operator_memory(&src("operator_memory_mindspore_na.csv"), &mut s, None).unwrap();
    assert!(om.warnings.is_empty(), "{:?}", om.warnings);
    assert_eq!(om.rows.len(), 2);
    assert_eq!(om.rows[0].active_release_ns(), None);
    assert_eq!(om.rows[0].release_ns(), Some(1_736_405_443_000_011_000));
    assert_eq!(om.rows[1].release_ns(), None);
    assert_eq!(s.get(om.rows[1].stream), "");
    assert_eq!(s.get(om.rows[1].device), "NPU:3");
}

#[test]
fn operator_memory_quoted_tab_and_spreadsheet_numbers() {
    let mut s = Interner::new();
    let om =
        read_operator_memory(&src("operator_memory_quoted_spreadsheet.csv"), &mut s, None).unwrap();
    assert!(om.warnings.is_empty(), "{:?}", om.warnings);
    assert_eq!(om.rows.len(), 3);
    assert_eq!(om.rows[0].alloc_ns(), Some(1_779_785_515_604_664_200));
    assert_eq!(om.rows[0].alloc_total_reserved(), Some(21084 << 20));
    assert_eq!(om.rows[1].alloc_ns(), Some(1_779_785_515_604_670_420));
    assert_eq!(om.rows[1].release_ns(), Some(1_779_785_515_604_680_000));
    assert_eq!(om.rows[1].duration_ns(), Some(9_580));
    assert_eq!(om.rows[1].size, 1024 * 1024);
    // 19071.60547 MB, exactly rounded to bytes.
    assert_eq!(om.rows[1].alloc_total_allocated(), Some(19_998_027_777));
    assert_eq!(om.rows[2].alloc_ns(), Some(1_779_785_515_604_680_000));
}

#[test]
fn operator_memory_bad_rows_are_counted_not_fatal() {
    let mut s = Interner::new();
    let om = read_operator_memory(&src("operator_memory_bad_rows.csv"), &mut s, None).unwrap();
    let names: Vec<&str> = om.rows.iter().map(|r| s.get(r.name)).collect();
    assert_eq!(names, ["aten::ok", "aten::short"]);
    let size = om
        .warnings
        .iter()
        .find(|d| d.field.as_deref() == Some("Size(KB)"))
        .expect("size warning");
    assert_eq!(size.count, 2, "two bad sizes, one diagnostic");
    assert_eq!(size.line, Some(3));
    assert_eq!(size.byte, Some(364));
    assert_eq!(size.file, "operator_memory_bad_rows.csv");
    assert!(om.warnings.iter().any(|d| d.line == Some(4)
        && d.field.as_deref() == Some("Allocation Time(us)")
        && d.message.contains("\"yesterday\"")));
    assert!(om
        .warnings
        .iter()
        .any(|d| d.line == Some(6) && d.message.contains("fields")));
    assert!(om.warnings.iter().all(|d| d.severity == Severity::Warning));
}

#[test]
fn not_an_operator_memory_file_is_an_error_naming_the_header() {
    let mut s = Interner::new();
    let e = read_operator_memory(&src("memory_record_torch.csv"), &mut s, None).unwrap_err();
    assert!(e.is_error());
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("Name"), "{}", e.message);
}

#[test]
fn memory_record_torch_components() {
    let mr = read_memory_record(&src("memory_record_torch.csv"), None).unwrap();
    let comps: Vec<&str> = mr.series.iter().map(|s| s.component.as_str()).collect();
    assert_eq!(comps, ["APP", "PTA", "PTA+GE", "GE", "WORKSPACE"]);
    assert!(!mr.mindspore);
    let pta = mr.framework().unwrap();
    let p = pta.peak(Metric::Allocated).unwrap();
    assert_eq!(p.bytes, 1_049_100_288); // 1000.5 MB
    assert_eq!(p.time_ns, 1_736_405_443_890_000_000);
    assert_eq!(pta.peak(Metric::Reserved).unwrap().bytes, 1472 << 20);
    assert_eq!(mr.get("APP").unwrap().allocated.to_vec(), vec![None]);
    assert_eq!(mr.get("GE").unwrap().active.to_vec(), vec![None]);
}

#[test]
fn memory_record_mindspore_uses_kb_over_1000() {
    let mr = read_memory_record(&src("memory_record_mindspore.csv"), None).unwrap();
    assert!(mr.mindspore);
    let fw = mr.framework().unwrap();
    assert_eq!(fw.component, "MindSpore");
    // 1536 "MB" = 1536 × 1000 KB = 1,572,864,000 bytes.
    assert_eq!(fw.peak(Metric::Allocated).unwrap().bytes, 1_572_864_000);
    assert_eq!(mr.get("APP").unwrap().allocated.to_vec(), vec![None]);
}

#[test]
fn npu_module_mem_both_headers() {
    let old = read_module_mem(&src("npu_module_mem_old.csv"), None).unwrap();
    assert!(!old.has_device_id);
    let ge = old.modules.iter().find(|m| m.module == "GE").unwrap();
    assert_eq!(ge.peak(), Some((80 << 20, 1_736_405_443_859_340_640)));
    let new = read_module_mem(&src("npu_module_mem_new.csv"), None).unwrap();
    assert!(new.has_device_id);
    let hccl = new.modules.iter().find(|m| m.module == "HCCL").unwrap();
    assert_eq!(hccl.reserved, vec![None, Some(12 * 1048576 + 524288)]);
    assert_eq!(hccl.device, "NPU:6");
}

#[test]
fn trace_trailing_comma_and_number_ts_and_big_ids() {
    let (mut n, mut st) = (Interner::new(), Interner::new());
    let t = read_trace(
        &src("trace_trailing_comma.json"),
        &mut n,
        &mut st,
        TraceOptions::default(),
        None,
    )
    .unwrap();
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    assert_eq!(t.events, 2);
    assert_eq!(t.ops.len(), 1);
    assert_eq!(t.ops.ts[0], 1_736_405_443_863_674_400);
    assert_eq!(
        st.get(t.ops.stack[0]),
        "/usr/lib/python3.9/site-packages/torch/_ops.py(692): __call__;\r\n/home/u/proj/train.py(42): step;\r\n<string>(1): <module>"
    );
    let (mut n, mut st) = (Interner::new(), Interner::new());
    let t = read_trace(
        &src("trace_number_ts.json"),
        &mut n,
        &mut st,
        TraceOptions::default(),
        None,
    )
    .unwrap();
    assert_eq!(t.ops.len(), 1);
    assert_eq!(t.ops.ts[0], 1_690_000_000_000_001_500);
    assert_eq!(t.ops.dur[0], 4_000);
    assert_eq!(t.ops.pid[0], 3_089_232_480);
    assert_eq!(t.ops.seq[0], 9_007_199_254_740_993, "above 2^53, exact");
    assert_eq!(t.queue.len(), 1);
    assert_eq!(t.queue[0].correlation_id, Some(18_446_744_073_709_551_000));
}

fn analyze(paths: &[PathBuf]) -> (memlens::profiler::Job, memlens::profiler::JobAnalysis) {
    let mut inputs = memlens::families::input_set_from_paths(paths);
    let job = memlens::profiler::job_of(&mut inputs);
    let a = analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {});
    (job, a)
}

#[test]
fn run_folders_ranks_from_file_name_rank_id_string_int_and_unknown() {
    let (job, a) = analyze(&[fixture("runs")]);
    let ranks: Vec<(String, Option<u32>, usize)> = job
        .ranks
        .iter()
        .map(|r| (r.role.clone(), r.rank, r.runs.len()))
        .collect();
    assert_eq!(
        ranks,
        [
            ("actor".to_string(), Some(3), 1),
            ("actor".to_string(), Some(5), 1),
            ("actor".to_string(), Some(7), 2),
            ("dbonly".to_string(), Some(0), 1),
            ("single".to_string(), None, 1),
        ]
    );
    // Two run folders of rank 7: timestamp order (b_…009 before a_…099), not name order.
    let r7 = &a.ranks[2].summary;
    assert_eq!(r7.run_dirs.len(), 2);
    assert!(r7.run_dirs[0].contains("b_14_20250101000000009"));
    assert_eq!(r7.rows, 2);
    // profiler_info.json without rank: loaded with rank unknown, and said so.
    assert_eq!(a.ranks[4].summary.rows, 1);
    assert!(a
        .warnings
        .iter()
        .any(|d| d.file.ends_with("host_11_20250101000000000_ascend_pt")
            && d.message.contains("rank unknown")));
    // A db-only export is a rank; this one is only the 16 magic bytes: an error naming the file.
    assert!(a.warnings.iter().any(|d| d.file.contains("dbonly")
        && d.file.ends_with("ascend_pytorch_profiler_0.db")
        && d.is_error()
        && d.message.contains("inside the 100-byte SQLite header")));
    assert!(!job.ignored.iter().any(|(p, _)| p.contains("dbonly")));
}

#[test]
fn archives_expand_to_the_same_ranks_and_refuse_escapes() {
    let (_, plain) = analyze(&[fixture("runs/actor")]);
    for name in ["job.zip", "job.tar", "job.tar.gz"] {
        let mut inputs =
            memlens::families::input_set_from_paths(&[fixture(&format!("archives/{name}"))]);
        let job = discover_job(inputs.classify());
        let a = analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {});
        let got: Vec<(Option<u32>, u64, usize)> = a
            .ranks
            .iter()
            .map(|r| (r.summary.rank, r.summary.rows, r.summary.run_dirs.len()))
            .collect();
        let want: Vec<(Option<u32>, u64, usize)> = plain
            .ranks
            .iter()
            .map(|r| (r.summary.rank, r.summary.rows, r.summary.run_dirs.len()))
            .collect();
        assert_eq!(got, want, "{name}");
        assert!(
            a.ranks[0].summary.run_dirs[0].starts_with(&format!("{name}/actor/")),
            "{:?}",
            a.ranks[0].summary.run_dirs
        );
        assert!(inputs
            .open(&format!(
                "{name}/actor/host_13_20250101000000002_ascend_pt/profiler_info.json"
            ))
            .is_ok());
        if name == "job.zip" {
            assert!(
                inputs
                    .warnings()
                    .iter()
                    .any(|d| d.message.contains("climbs out")),
                "{:?}",
                inputs.warnings()
            );
        }
    }
}
