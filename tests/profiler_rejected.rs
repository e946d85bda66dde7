//! Files that cannot be read are counted as rejected in the job totals, and a job whose ranks hold
//! nothing to draw says so (`ranks_with_data` = 0) instead of passing for an analysis with a 0 B
//! peak. The files here are written by the test: two CSVs under the names the profiler reads, with
//! contents that are not its tables.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::profiler::view::JobView;
use std::path::Path;

fn totals(dir: &Path) -> serde_json::Value {
    let mut set = memlens::families::input_set_from_paths(&[dir.to_path_buf()]);
    let mut v = JobView::open(&mut set);
    v.analyze(&set);
    let report: serde_json::Value =
        serde_json::from_slice(&v.export("summary.json").unwrap()).unwrap();
    report["totals"].clone()
}

#[test]
fn two_garbage_csvs_are_two_rejected_files_and_no_data() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("operator_memory.csv"), "hello,world\n1,2\nfoo\n").unwrap();
    std::fs::write(run.join("memory_record.csv"), "x;y\n\u{1}garbage\n").unwrap();
    let t = totals(dir.path());
    assert_eq!(t["rejected"], 2, "{t}");
    assert_eq!(t["ranks_with_data"], 0, "{t}");
    assert_eq!(t["rows"], 0, "{t}");
}

#[test]
fn one_bad_file_beside_good_ones_is_one_rejected_file() {
    // The real rank-0 run with its memory_record.csv replaced by text that is not that table.
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/torch_npu/msinsight-level0/text/rank0_ascend_pt");
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("rank0_ascend_pt");
    std::fs::create_dir_all(to.join("ASCEND_PROFILER_OUTPUT")).unwrap();
    for name in ["profiler_info_0.json", "profiler_metadata.json"] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
    for name in [
        "operator_memory.csv",
        "trace_view.json",
        "npu_module_mem.csv",
    ] {
        let p = Path::new("ASCEND_PROFILER_OUTPUT").join(name);
        std::fs::copy(from.join(&p), to.join(&p)).unwrap();
    }
    std::fs::write(
        to.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"),
        "not,a,memory,record\n",
    )
    .unwrap();
    let t = totals(dir.path());
    assert_eq!(t["rejected"], 1, "{t}");
    assert_eq!(t["ranks_with_data"], 1, "{t}");
    // 184 rows: a plain line count of the fixture's operator_memory.csv (header excluded).
    let csv =
        std::fs::read_to_string(from.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv")).unwrap();
    let lines = csv.lines().skip(1).filter(|l| !l.trim().is_empty()).count();
    assert_eq!(t["rows"], lines as u64, "{t}");
}
