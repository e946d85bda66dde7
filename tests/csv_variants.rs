//! The text tables of other writers and versions, read by the three CSV readers: each input is
//! written here by hand in a shape seen in a public repository (said beside it: repository, path,
//! commit), and every figure expected is worked out by hand from the bytes given.

mod common;

use memlens::profiler::memory_record::{read_memory_record, MemoryRecord};
use memlens::profiler::module_mem::{read_module_mem, ModuleMem};
use memlens::profiler::operator_memory::{read_operator_memory, MemRow, OperatorMemory};
use memlens::profiler::Interner;
use memlens::source::BytesSource;

const MB: u64 = 1 << 20;
const KB: u64 = 1 << 10;

fn operator_memory(text: &str) -> (OperatorMemory, Interner) {
    let mut names = Interner::new();
    let src = BytesSource::new("operator_memory.csv", text.as_bytes().to_vec());
    let om = read_operator_memory(&src, &mut names, None).expect("read");
    (om, names)
}

fn memory_record(text: &str) -> MemoryRecord {
    let src = BytesSource::new("memory_record.csv", text.as_bytes().to_vec());
    read_memory_record(&src, None).expect("read")
}

fn module_mem(text: &str) -> ModuleMem {
    let src = BytesSource::new("npu_module_mem.csv", text.as_bytes().to_vec());
    read_module_mem(&src, None).expect("read")
}

/// A row's six totals in the order of the file's columns (allocation's allocated, reserved,
/// active, then the release's).
fn totals(r: &MemRow) -> [Option<u64>; 6] {
    [
        r.alloc_total_allocated(),
        r.alloc_total_reserved(),
        r.alloc_total_active(),
        r.release_total_allocated(),
        r.release_total_reserved(),
        r.release_total_active(),
    ]
}

/// CANN's msprof `operator_memory_<device>_<model>_<time>.csv` given as `operator_memory.csv`: its
/// totals are in KB. Header: msprof's export configuration (Ascend/msprof,
/// analysis/msconfig/msprof_export_data_config.py, b3d3062: `Name,Size(KB),Allocation Time(us),
/// Duration(us),Allocation Total Allocated(KB),…,Device`), with the `Device_id` column CANN's
/// profiling guide shows first. The row's figures are those of torch_npu's own test of the bean
/// that converts this file (Ascend/pytorch, test/profiler/analysis/prof_bean/
/// test_ge_op_memory_bean.py, d217d46: 192 KB allocated = 0.1875 MB, 502336 KB reserved =
/// 490.5625 MB).
///
/// Seen failing before the change: the four KB totals read as empty (`[None; 6]`), silently.
#[test]
fn msprof_operator_memory_totals_are_read_in_kb() {
    let (om, names) = operator_memory(
        "Device_id,Name,Size(KB),Allocation Time(us),Duration(us),Allocation Total Allocated(KB),\
         Allocation Total Reserved(KB),Release Total Allocated(KB),Release Total Reserved(KB),\
         Device\r\n\
         0,Graph_21,192,16995.950\t,92.6,192,502336,0,502336,NPU:0\r\n\
         0,trans_TransData_0,50240.0,1736405443881360.630\t,115.97,50304.5,76544.0,,,NPU:0\r\n",
    );
    assert!(om.warnings.is_empty(), "{:?}", om.warnings);
    let [a, b] = om.rows.as_slice() else {
        panic!("two rows: {:?}", om.rows)
    };
    assert_eq!(names.get(a.name), "Graph_21");
    assert_eq!(a.size, 192 * KB);
    assert_eq!(a.alloc_ns(), Some(16_995_950));
    // Release = allocation + duration: 16995.950 + 92.6 µs.
    assert_eq!(a.release_ns(), Some(17_088_550));
    // 192 KB = 196608 bytes; 502336 KB = 490.5625 MB = 514392064 bytes.
    assert_eq!(
        totals(a),
        [
            Some(196_608),
            Some(514_392_064),
            None,
            Some(0),
            Some(514_392_064),
            None
        ]
    );
    assert_eq!(names.get(a.device), "NPU:0");
    // 50304.5 KB = 51511808 bytes, 76544 KB = 74.75 MB; no release totals.
    assert_eq!(
        totals(b),
        [
            Some(51_511_808),
            Some(74 * MB + 3 * MB / 4),
            None,
            None,
            None,
            None
        ]
    );
    assert_eq!(b.release_ns(), Some(1_736_405_443_881_476_600));
}

/// msprof's `memory_record_*.csv` given as `memory_record.csv`: `Component,Timestamp(us),Total
/// Allocated(KB),Total Reserved(KB),Device` (Ascend/msprof's export configuration, as above; the
/// figures of torch_npu's test of its bean, test_ge_memory_record_bean.py, 32e32f2: GE at
/// 1699.550 µs, 192 KB = 0.1875 MB allocated, 502336 KB = 490.5625 MB reserved).
///
/// Seen failing before the change: both totals read as empty.
#[test]
fn msprof_memory_record_totals_are_read_in_kb() {
    let mr = memory_record(
        "Component,Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device\r\n\
         GE,1699.550\t,192,502336,NPU:0\r\n\
         GE,1700.000\t,0.5,502336,NPU:0\r\n",
    );
    assert!(mr.warnings.is_empty(), "{:?}", mr.warnings);
    let ge = mr.get("GE").expect("GE series");
    assert_eq!(ge.ts, [1_699_550, 1_700_000]);
    assert_eq!(ge.allocated.to_vec(), [Some(196_608), Some(512)]);
    assert_eq!(ge.reserved.to_vec(), [Some(514_392_064), Some(514_392_064)]);
    assert_eq!(ge.active.to_vec(), [None, None]);
}

/// npu_module_mem in KB without `Device_id` (msprof's export configuration, as above:
/// `Component,Timestamp(us),Total Reserved(KB),Device`) and with it (torch_npu's raw CANN input),
/// and MB as torch_npu writes it: one unit table reads all three.
#[test]
fn npu_module_mem_reads_kb_and_mb() {
    let kb = module_mem(
        "Component,Timestamp(us),Total Reserved(KB),Device\nHCCL,1736405443839379.660\t,2560,\
         NPU:0\nSLOG,1736405443839379.660\t,-1,NPU:0\n",
    );
    assert!(kb.kb);
    assert_eq!(kb.modules[0].reserved, [Some(2560 * KB)]);
    assert_eq!(kb.modules[1].reserved, [None], "-1 KB: only frees seen");
    let kb_id = module_mem(
        "Device_id,Component,Timestamp(us),Total Reserved(KB),Device\n0,APP,5.000\t,0.5,NPU:0\n",
    );
    assert!(kb_id.kb && kb_id.has_device_id);
    assert_eq!(kb_id.modules[0].reserved, [Some(512)]);
    let mb =
        module_mem("Component,Timestamp(us),Total Reserved(MB),Device\nGE,5.000\t,2.5,NPU:0\n");
    assert!(!mb.kb);
    assert_eq!(mb.modules[0].reserved, [Some(5 * MB / 2)]);
}

/// Totals in two units: no writer's file; refused in words naming the columns, not read half.
#[test]
fn totals_in_two_units_are_refused_in_words() {
    let mut names = Interner::new();
    let src = BytesSource::new(
        "operator_memory.csv",
        b"Name,Size(KB),Allocation Time(us),Allocation Total Allocated(MB),Allocation Total \
          Reserved(KB)\nop,1.0,1.000\t,1.0,1024\n"
            .to_vec(),
    );
    let e = read_operator_memory(&src, &mut names, None).unwrap_err();
    assert!(
        e.message.contains(
            "its totals are in two units, MB (Allocation Total Allocated(MB)) and KB (Allocation \
             Total Reserved(KB)), which no profiler writes"
        ),
        "{e}"
    );
    let src = BytesSource::new(
        "memory_record.csv",
        b"Component,Timestamp(us),Total Allocated(KB),Total Reserved(MB)\nGE,1.000\t,1,1\n"
            .to_vec(),
    );
    let e = read_memory_record(&src, None).unwrap_err();
    assert!(e.message.contains("two units"), "{e}");
}

/// MindSpore's memory tracker's `operator_memory_<rank>.csv` given as `operator_memory.csv`:
/// every field, the header's last name too, followed by a comma (mindspore's mem_tracker.cc,
/// `DumpProfilingMemInfo`, as real28 read it: `block_file << … << ","` after each field), times as
/// integer µs, sizes and totals as C++ stream floats (`4`, `0.5`, `1.5e+06`), the pool's name as
/// `Device`, and an unreleased block's `Duration(us)` empty.
#[test]
fn the_mindspore_tracker_csv_whose_lines_end_in_a_comma_reads() {
    let (om, names) = operator_memory(
        "Name,Size(KB),Allocation Time(us),Duration(us),Allocation Total Allocated(MB),Allocation \
         Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB),Device,\n\
         Default/Conv2D-op1,4,1748750400871259,10,1,2,0.5,2,Ascend,\n\
         Default/MatMul-op2,1.5e+06,1748750400871300,,1466.5,2048,,,Ascend,\n",
    );
    assert!(om.warnings.is_empty(), "{:?}", om.warnings);
    let [a, b] = om.rows.as_slice() else {
        panic!("two rows: {:?}", om.rows)
    };
    assert_eq!(names.get(a.name), "Default/Conv2D-op1");
    assert_eq!(a.size, 4 * KB);
    assert_eq!(a.alloc_ns(), Some(1_748_750_400_871_259_000));
    assert_eq!(a.release_ns(), Some(1_748_750_400_871_269_000));
    assert_eq!(
        totals(a),
        [
            Some(MB),
            Some(2 * MB),
            None,
            Some(MB / 2),
            Some(2 * MB),
            None
        ]
    );
    assert_eq!(names.get(a.device), "Ascend");
    // 1.5e+06 KB = 1536000000 bytes; 1466.5 MB = 1537736704 bytes.
    assert_eq!(b.size, 1_536_000_000);
    assert_eq!(b.release_ns(), None);
    assert_eq!(
        totals(b),
        [Some(1_537_736_704), Some(2048 * MB), None, None, None, None]
    );
}

/// MindSpore's text tables: times as Python `Decimal` texts with 0 to 3 decimals and no TAB
/// (mindspore-ai/mindspore, mindspore/python/mindspore/profiler/parser/ascend_memory_generator.py,
/// 194120f: `Decimal(ns) / 1000` written with `str`, which drops the trailing zeros: `…259`,
/// `…259.7`, `…259.72`), with the TAB (`….720\t`, the msprof GE rows' own text) or as a float
/// (`1736405443871259.8`), `N/A` for empty, and `APP` rows whose totals are `0.0`, not empty.
/// MindSpore's "MB" is KB / 1000 (the same file: `KB_TO_MB = 1000`), 1,024,000 bytes.
#[test]
fn mindspore_times_of_any_decimals_and_app_rows_at_zero_read() {
    let mr = memory_record(
        "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Device \
         Type\r\n\
         APP,1736405443871259,0.0,3000.0,0.0,NPU:1\r\n\
         MindSpore,1736405443871259.7,1.5,2.0,1.5,NPU:1\r\n\
         MindSpore,1736405443871259.72,2.0,2.0,N/A,NPU:1\r\n\
         MindSpore,1736405443871259.720\t,0.001,2.0,0.001,NPU:1\r\n\
         MindSpore,1736405443871259.8,0.0,2.0,0.0,NPU:1\r\n",
    );
    assert!(mr.warnings.is_empty(), "{:?}", mr.warnings);
    assert!(mr.mindspore);
    let app = mr.get("APP").expect("APP");
    assert_eq!(app.ts, [1_736_405_443_871_259_000]);
    assert_eq!(app.allocated.to_vec(), [Some(0)]);
    assert_eq!(app.reserved.to_vec(), [Some(3_072_000_000)]);
    let ms = mr.get("MindSpore").expect("MindSpore");
    assert_eq!(
        ms.ts,
        [
            1_736_405_443_871_259_700,
            1_736_405_443_871_259_720,
            1_736_405_443_871_259_720,
            1_736_405_443_871_259_800
        ]
    );
    assert_eq!(
        ms.allocated.to_vec(),
        [Some(1_536_000), Some(2_048_000), Some(1_024), Some(0)]
    );
    assert_eq!(
        ms.active.to_vec(),
        [Some(1_536_000), None, Some(1_024), Some(0)]
    );
}

/// MindSpore 2.5's `trace_view.json` pretty-printed (`json.dump(…, indent=4)`: every member on a
/// line of its own) with `ts` and `dur` as strings, read as the compact array torch_npu writes.
#[test]
fn a_pretty_printed_trace_with_string_durations_reads() {
    use memlens::profiler::trace::{read_trace, TraceOptions};
    let text = "[\n    {\n        \"ph\": \"X\",\n        \"name\": \"aten::add\",\n        \"pid\": 7,\n        \
                \"tid\": 7,\n        \"ts\": \"1736405443863674.400\",\n        \"dur\": \"162.66\",\n        \
                \"cat\": \"cpu_op\",\n        \"args\": {\n            \"Sequence number\": 12\n        }\n    },\n    \
                {\n        \"ph\": \"X\",\n        \"name\": \"ProfilerStep#3\",\n        \"pid\": 7,\n        \
                \"tid\": 7,\n        \"ts\": \"1736405443863600.5\",\n        \"dur\": \"1000\",\n        \
                \"cat\": \"cpu_op\",\n        \"args\": {}\n    }\n]\n";
    let src = BytesSource::new("trace_view.json", text.as_bytes().to_vec());
    let (mut names, mut stacks) = (Interner::new(), Interner::new());
    let t = read_trace(&src, &mut names, &mut stacks, TraceOptions::default(), None).unwrap();
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    // Both are CPU ops; the step is also a step.
    assert_eq!(t.ops.len(), 2);
    assert_eq!(names.get(t.ops.name[0]), "aten::add");
    assert_eq!(t.ops.dur[1], 1_000_000);
    assert_eq!(t.ops.ts[0], 1_736_405_443_863_674_400);
    assert_eq!(t.ops.dur[0], 162_660);
    assert_eq!(t.ops.seq[0], 12);
    assert_eq!(t.steps.len(), 1);
    assert_eq!(
        (t.steps[0].step, t.steps[0].ts, t.steps[0].end),
        (3, 1_736_405_443_863_600_500, 1_736_405_443_864_600_500)
    );
}

/// The first torch_npu profiler analysis's two memory tables (Ascend/pytorch,
/// torch_npu/profiler/analysis/prof_view/memory_view_parser.py in an early 2023 version
/// (its `HEADERS_FORM` and `HEADERS_LINE_CHART`; the commit is not named by the index, whose
/// latest version, bfa652d, writes operator_memory.csv and memory_record.csv)), written into the run folder: `Tag` for the
/// component, `Operator` for the name, totals in KB with reserved before allocated, times and
/// durations as Python floats (`time_ns / 1000.0`).
///
/// Seen failing before the change: the run had no memory file (the two were "other files memlens
/// does not read") and no rows.
#[test]
fn the_first_torch_npu_memory_view_files_are_read() {
    let form =
        b"Tag,Operator,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Device Type\r\n\
PTA,aten::empty,1024.0,1699876543210123.5,,,NPU:0\r\n\
PTA,aten::add,2048.0,1699876543210200.25,1699876543210300.0,99.75,NPU:0\r\n";
    let chart = b"Tag,Timestamp(us),Total Reserved(KB),Total Allocated(KB),Device Type\r\n\
PTA,1699876543210123.5,20480.0,1024.0,NPU:0\r\n\
PTA,1699876543210200.25,20480.0,3072.0,NPU:0\r\n\
PTA,1699876543210300.0,20480.0,1024.0,NPU:0\r\n";
    let files = common::run_folder(
        "job",
        0,
        &[
            ("ASCEND_PROFILER_OUTPUT/operator_memory.csv", None),
            ("ASCEND_PROFILER_OUTPUT/memory_record.csv", None),
            ("memory_view_form.csv", Some(form.to_vec())),
            ("memory_view_line_chart.csv", Some(chart.to_vec())),
        ],
    );
    let loaded = common::load(&files);
    assert_eq!(loaded.diags("memory_view"), Vec::<String>::new());
    let r = loaded.rank("rank0");
    assert_eq!(r.rows, 2);
    // 3072 KB allocated at 1699876543210200.25 µs; 20480 KB = 20 MiB reserved.
    assert_eq!(r.peak_allocated_bytes, 3 * MB);
    assert_eq!(r.peak_time_ns, 1_699_876_543_210_200_250);
    assert_eq!(r.peak_reserved_bytes, 20 * MB);
}

/// The first torch_npu's `memory_view_line_chart.csv` with its `APP` rows as its writer wrote
/// them: three fields under the five-column header. Ascend/pytorch,
/// torch_npu/profiler/analysis/prof_view/memory_view_parser.py in an early 2023 version (the one
/// with `HEADERS_LINE_CHART`; the index does not name its commit) keeps the rows of CANN's
/// `npu_mem.csv` whose event is `APP`, each as `NpuMemoryBean.row` of
/// torch_npu/profiler/analysis/prof_bean/npu_mem_bean.py of the same time, whose `SHOW_HEADERS`
/// were `event`, `timestamp(us)`, `memory(KB)`: `APP,<time>,<KB>`, the app's memory under Total
/// Reserved(KB), no allocated total, no device. Later versions of both files wrote full rows.
///
/// Seen failing before the change: one "short row" warning counted at every APP row (here 2).
/// A short row of any other shape is still counted.
#[test]
fn the_first_torch_npu_line_chart_app_rows_read_without_warnings() {
    let mr = memory_record(
        "Tag,Timestamp(us),Total Reserved(KB),Total Allocated(KB),Device Type\r\n\
         APP,1699876543210100.0,40960.0\r\n\
         PTA,1699876543210123.5,20480.0,1024.0,NPU:0\r\n\
         APP,1699876543210200.0,61440.0\r\n\
         PTA,1699876543210200.25,20480.0,3072.0,NPU:0\r\n",
    );
    assert!(mr.warnings.is_empty(), "{:?}", mr.warnings);
    let app = mr.get("APP").expect("APP");
    assert_eq!(
        app.ts,
        [1_699_876_543_210_100_000, 1_699_876_543_210_200_000]
    );
    // 40960 KB = 40 MiB, 61440 KB = 60 MiB reserved; no allocated total written.
    assert_eq!(app.reserved.to_vec(), [Some(40 * MB), Some(60 * MB)]);
    assert_eq!(app.allocated.to_vec(), [None, None]);
    let pta = mr.get("PTA").expect("PTA");
    assert_eq!(pta.allocated.to_vec(), [Some(KB * KB), Some(3 * KB * KB)]);

    // Not that writer's shape: a PTA row cut short, an APP row of four fields, and an APP row
    // of three fields in a memory_record.csv (whose writers wrote full APP rows).
    let mr = memory_record(
        "Tag,Timestamp(us),Total Reserved(KB),Total Allocated(KB),Device Type\r\n\
         PTA,1699876543210123.5,20480.0\r\n\
         APP,1699876543210100.0,40960.0,0.0\r\n",
    );
    let w: Vec<String> = mr.warnings.iter().map(|d| d.to_string()).collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("row has 3 fields, the header has 5"), "{w:?}");
    assert_eq!(mr.warnings[0].count, 2);
    let mr = memory_record(
        "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream \
         Ptr,Device Type\r\n\
         APP,1736405443756384.100\t,,2109.6015625\r\n",
    );
    assert_eq!(mr.warnings.len(), 1, "{:?}", mr.warnings);
}
