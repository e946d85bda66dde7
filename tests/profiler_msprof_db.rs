//! The database export in msprof's layout (MindSpore's `ascend_mindspore_profiler_{rank}.db`,
//! msprof's `msprof_*.db`) read as a rank, on the hand-made dbs of `fixtures/msprof_db/` (written
//! by `make.py` there with Python's `sqlite3`, in the writer's tables and columns).
//!
//! The figures are worked out by hand from the fixture's `NPU_OP_MEM` rows (T = 1736405443000000000
//! ns; totals are the GE allocator's after each event):
//!
//! | time  | event                          | totalAllocate |
//! |-------|--------------------------------|---------------|
//! | T+100 | allocate MatMul 1000 @0x1000   | 1000          |
//! | T+200 | allocate Add 3000 @0x2000      | 4000          |
//! | T+250 | release Old 500 @0x9000 (no allocation in the capture; the table's last row) | 3500 |
//! | T+300 | release MatMul @0x1000         | 2500          |
//! | T+400 | allocate Cast 2000 @0x3000     | 4500 (peak)   |
//! | T+500 | release Add @0x2000            | 1500          |
//!
//! So: 4 GE rows (3 allocations, 1 release of memory allocated before the capture), peak 4500
//! bytes at T+400 with 8192 reserved (3692 bytes of fragmentation), Add (3000) and Cast (2000)
//! alive at the peak, Cast never released (1 row, 2000 bytes), one warning for the release without
//! an allocation. `NPU_MODULE_MEM` peaks at 16384 bytes for GE; `NPU_MEM`'s `app` rows give the
//! APP series (12000 bytes at most; the `device` row is not APP).
//!
//! On main before this reader, the run folder was not analysed at all ("nothing to analyse": the
//! db was no file memlens read), so each of these tests failed there.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use memlens::diag::Severity;
use memlens::profiler::analysis::JobAnalysis;
use memlens::profiler::memory_record::Metric;

const T: i64 = 1_736_405_443_000_000_000;
const RUN: &str = "msprof_db/w_1_20250101000000000_ascend_ms";
const DB: &str = "ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler_3.db";

use common::{analyze_path, fixture};

/// Every warning and error of the job and its ranks (once each), as `severity file field:
/// message` lines.
fn messages(a: &JobAnalysis) -> Vec<String> {
    let mut out: Vec<String> = a
        .warnings
        .iter()
        .chain(a.ranks.iter().flat_map(|r| &r.warnings))
        .map(|d| {
            let field = d.field.as_deref().unwrap_or("-");
            format!("{:?} {} {field}: {}", d.severity, d.file, d.message)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_mindspore_db_gives_the_figures_worked_out_by_hand() {
    let a = analyze_path(&fixture(RUN));
    assert_eq!(a.ranks.len(), 1);
    let r = &a.ranks[0];
    let s = &r.summary;
    assert_eq!(s.source, "db");
    assert_eq!(s.framework, "MindSpore");
    assert_eq!(
        s.rank,
        Some(3),
        "from the db's name (RANK_DEVICE_MAP says -1)"
    );
    assert_eq!((s.rows, s.rows_ge, s.rows_pta), (4, 4, 0));
    assert_eq!(s.peak_source, "memory_record");
    assert_eq!(s.peak_allocated_bytes, 4500);
    assert_eq!(s.peak_time_ns, T + 400);
    assert_eq!(s.peak_reserved_bytes, 8192);
    assert_eq!(s.fragmentation_bytes, 8192 - 4500);
    assert_eq!((s.unreleased_rows, s.unreleased_bytes), (1, 2000));
    let groups = r.live_at(T + 400);
    let live: Vec<(&str, u64, u64)> = groups
        .iter()
        .map(|g| (g.frame.as_str(), g.bytes, g.count))
        .collect();
    assert_eq!(
        live,
        [("cann::Add-op2", 3000, 1), ("cann::Cast-op3", 2000, 1)]
    );
    // The release without an allocation is a row that frees, stands at its release time.
    let old = r
        .rows
        .iter()
        .find(|m| r.names.get(m.name) == "cann::Old-op0")
        .unwrap();
    assert!(old.negative);
    assert_eq!(
        (old.alloc_ns(), old.release_ns(), old.size),
        (None, Some(T + 250), 500)
    );
    let matmul = r
        .rows
        .iter()
        .find(|m| r.names.get(m.name) == "cann::MatMul-op1")
        .unwrap();
    assert_eq!(
        (matmul.alloc_ns(), matmul.release_ns(), matmul.duration_ns()),
        (Some(T + 100), Some(T + 300), Some(200))
    );
    assert_eq!(r.names.get(matmul.device), "NPU:0");
    // The allocator's totals as the curve, APP from NPU_MEM, modules from NPU_MODULE_MEM.
    let ge = r.memory.iter().find(|m| m.component == "GE").unwrap();
    assert_eq!(ge.ts.len(), 6);
    let app = r.memory.iter().find(|m| m.component == "APP").unwrap();
    assert_eq!(app.peak(Metric::Reserved).map(|p| p.bytes), Some(12000));
    assert_eq!(app.ts.len(), 2, "the device row is not APP");
    let modules: Vec<(&str, u64)> = s
        .module_peaks
        .iter()
        .map(|m| (m.module.as_str(), m.peak_reserved_bytes))
        .collect();
    assert_eq!(modules, [("GE", 16384)]);
    // One warning for the release without an allocation, at the db and its column.
    let msgs = messages(&a);
    let free: Vec<&String> = msgs
        .iter()
        .filter(|m| m.contains("not allocated in the capture"))
        .collect();
    assert_eq!(free.len(), 1, "{msgs:#?}");
    assert!(
        free[0].contains(DB) && free[0].contains("NPU_OP_MEM.addr"),
        "{free:?}"
    );
}

#[test]
fn the_cli_json_gives_the_same_numbers() {
    let j = common::profiler_json(&[fixture(RUN)]);
    let r = &j["ranks"][0];
    assert_eq!(r["rank"], 3);
    assert_eq!(r["source"], "db");
    assert_eq!(r["rows"], 4);
    assert_eq!(r["rows_ge"], 4);
    assert_eq!(r["peak_allocated_bytes"], 4500);
    assert_eq!(r["peak_time_ns"], T + 400);
    assert_eq!(r["peak_reserved_bytes"], 8192);
    assert_eq!(r["unreleased_rows"], 1);
    assert_eq!(r["unreleased_bytes"], 2000);
    let live: Vec<(String, u64)> = r["live_at_peak"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["frame"].as_str().unwrap().to_string(),
                g["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        live,
        [
            ("cann::Add-op2".to_string(), 3000),
            ("cann::Cast-op3".to_string(), 2000)
        ]
    );
}

#[test]
fn a_db_without_npu_op_mem_says_so_and_keeps_the_device_memory() {
    let a = analyze_path(&fixture("msprof_db/bad/no_op_mem"));
    let msgs = messages(&a);
    assert!(
        msgs.iter()
            .any(|m| m.contains("msprof_20250101000000.db") && m.contains("no NPU_OP_MEM table")),
        "{msgs:#?}"
    );
    let r = &a.ranks[0];
    assert_eq!(r.summary.rows, 0);
    assert!(r.memory.iter().any(|m| m.component == "APP"));
    assert_eq!(r.summary.module_peaks.len(), 1);
}

#[test]
fn a_table_without_a_needed_column_is_an_error_naming_the_table_and_column() {
    let a = analyze_path(&fixture("msprof_db/bad/no_type_column"));
    let msgs = messages(&a);
    assert!(
        msgs.iter().any(|m| m.starts_with("Error ")
            && m.contains("msprof_20250101000000.db")
            && m.contains("table NPU_OP_MEM has no column type")),
        "{msgs:#?}"
    );
    assert_eq!(a.ranks[0].summary.rows, 0);
}

#[test]
fn a_size_of_the_wrong_type_skips_its_row_with_a_warning_naming_the_column() {
    let a = analyze_path(&fixture("msprof_db/bad/text_size"));
    let msgs = messages(&a);
    assert!(
        msgs.iter().any(|m| m.contains("msprof_20250101000000.db")
            && m.contains("NPU_OP_MEM.size")
            && m.contains("rowid 4")),
        "{msgs:#?}"
    );
    // Without Cast's allocation (and its total), the peak is Add's: 4000 at T+200, and nothing
    // is left unreleased.
    let s = &a.ranks[0].summary;
    assert_eq!(
        (s.rows, s.peak_allocated_bytes, s.peak_time_ns),
        (3, 4000, T + 200)
    );
    assert_eq!(s.unreleased_rows, 0);
}

#[test]
fn a_truncated_db_is_an_error_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(fixture(RUN).join(DB)).unwrap();
    let db = tmp.path().join("ascend_mindspore_profiler_3.db");
    std::fs::write(&db, &bytes[..bytes.len() / 3]).unwrap();
    let a = analyze_path(tmp.path());
    let errors: Vec<String> = a
        .warnings
        .iter()
        .chain(a.ranks.iter().flat_map(|r| &r.warnings))
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {}", d.file, d.message))
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("ascend_mindspore_profiler_3.db")),
        "{:#?}",
        messages(&a)
    );
}

/// The rank says which database layout it was read from, so the page names the tables it read:
/// `db_layout` is `msprof` for MindSpore's db and absent for torch_npu's db and for the text
/// export (their outputs unchanged).
#[test]
fn the_rank_names_the_msprof_layout_and_no_other() {
    let json = |rel: &str| {
        let a = analyze_path(&fixture(rel));
        assert_eq!(a.ranks.len(), 1, "{rel}");
        common::json(&a.ranks[0].summary)
    };
    let ms = json(RUN);
    assert_eq!(ms["source"], "db");
    assert_eq!(ms["db_layout"], "msprof");
    for other in [
        "ascend/runs/dbonly/host_16_20250101000000003_ascend_pt",
        "torch_npu/msinsight-level0/db/rank0_ascend_pt",
        "torch_npu/msinsight-level0/text/rank0_ascend_pt",
    ] {
        let j = json(other);
        assert_ne!(j["source"], "none", "{other}");
        assert!(
            j.as_object().unwrap().get("db_layout").is_none(),
            "{other}: {j}"
        );
    }
}
