//! Inputs of the shapes found in other projects' public repositories (round 28's search), opened
//! the way a user would. The inputs are written here by hand in those shapes (no third-party file
//! is copied); where each shape was seen is said beside it, and the expected texts and figures
//! are worked out by hand from the bytes given.

mod common;

use memlens::input::UnknownFile;
use memlens::source::BytesSource;

/// A Git LFS pointer as `git lfs` writes it. Seen in place of an 870 MB `trace_view.json` in a
/// public repository of torch_npu profiles (`OrangeRedeng/profile`, commit 0907491): every
/// large file of it is tracked by LFS, so a clone without LFS, or a download of the file from
/// the repository's web page, holds only these 131 bytes.
const POINTER: &[u8] = b"version https://git-lfs.github.com/spec/v1\n\
oid sha256:760b7f89de48e87cca2ef79508e042ac7408ca16d48eeddee11b7855177942b6\n\
size 870601265\n";

/// What every reader now says of it (the object's size is the pointer's `size` line).
const SAID: &str = "a Git LFS pointer, not the file itself: the 830.3 MiB file it stands \
                    for was never downloaded (run `git lfs pull` in the repository it came \
                    from, then open the file again)";

// Seen failing before the change: the trace reader said `expected a JSON array of trace events
// ('[' first), found "version https://git-lfs.github.c"`, the snapshot reader `expected a
// pickle of protocol 2 to 5 … found "version https:/"`, the SOMAS parser `wrong file type: not a
// SOMAS dump (first line: …)`, and a loose pointer was one of the "other files memlens does not
// read", with no reason given.
#[test]
fn a_git_lfs_pointer_in_place_of_an_input_is_said_to_be_one() {
    // The trace of a run folder: the error names the file and what it is; the run's other files
    // are still read (the real sample's 184 operator_memory rows).
    let files = common::run_folder(
        "job",
        0,
        &[(
            "ASCEND_PROFILER_OUTPUT/trace_view.json",
            Some(POINTER.to_vec()),
        )],
    );
    let loaded = common::load(&files);
    assert_eq!(
        loaded.diags("trace_view.json"),
        [format!(
            "job/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json: error: {SAID}"
        )]
    );
    assert_eq!(loaded.rank("rank0").rows, 184);
    // A CSV and the database export of a run folder alike (the db's refusal is a warning: the
    // run's text files are read instead).
    for rel in [
        "ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
    ] {
        let files = common::run_folder("job", 0, &[(rel, Some(POINTER.to_vec()))]);
        let diags = common::load(&files).diags(rel);
        assert_eq!(diags.len(), 1, "{rel}: {diags:?}");
        assert!(diags[0].contains(SAID), "{rel}: {}", diags[0]);
    }
    // A snapshot and a SOMAS dump read by their own commands.
    let snap = memlens::snapshot::read(&BytesSource::new("oom.pickle", POINTER.to_vec()));
    let Err(e) = snap else {
        panic!("a pointer is no snapshot")
    };
    assert_eq!(e.to_string(), format!("oom.pickle: error: {SAID}"));
    let e = memlens::somas::parse_dump("Ascend_somas_tensor_offset_1.ir", POINTER).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("Ascend_somas_tensor_offset_1.ir: error: {SAID}")
    );
    // Given loose, whatever its name: an unknown file whose reason says so.
    let mut set = memlens::families::input_set();
    set.add_bytes("oom.pickle", POINTER.to_vec());
    let reason = set
        .classify()
        .units_of::<UnknownFile>()
        .map(|u| u.reason.clone())
        .collect::<Vec<_>>();
    assert_eq!(reason, [SAID]);
}

// Seen failing before the change: each warning printed as `: warning: no profiler_info*.json in
// the run folder; rank unknown` — the run folder's path, empty when the files are given
// directly, was the only place named.
#[test]
fn warnings_of_files_given_directly_name_the_files() {
    let om = common::npu(0, "ASCEND_PROFILER_OUTPUT/operator_memory.csv");
    let loaded = common::load(&[("operator_memory.csv".to_string(), om)]);
    let said: Vec<String> = loaded
        .analysis
        .warnings
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert_eq!(
        said,
        [
            "operator_memory.csv: warning: no profiler_info*.json in the run folder; rank unknown",
            "operator_memory.csv: warning: no trace_view.json: allocations get no call stack",
        ]
    );
    // Two files given: both named.
    let files = [
        (
            "operator_memory.csv".to_string(),
            common::npu(0, "ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
        ),
        (
            "trace_view.json".to_string(),
            common::npu(0, "ASCEND_PROFILER_OUTPUT/trace_view.json"),
        ),
    ];
    let loaded = common::load(&files);
    let places: Vec<&str> = loaded
        .analysis
        .warnings
        .iter()
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(places, ["operator_memory.csv, trace_view.json"]);
}

/// The header of CANN's own operator memory summary, as msprof writes it into
/// `PROF_*/mindstudio_profiler_output/operator_memory_<device>_<model>_<time>.csv` (its export
/// configuration and the CANN profiling guide's "operator_memory" page name these columns; the
/// rows are written here by hand).
const CANN_OPERATOR_MEMORY: &[u8] = b"Device_id,Name,Size(KB),Allocation Time(us),Duration(us),\
Allocation Total Allocated(KB),Allocation Total Reserved(KB),Release Total Allocated(KB),\
Release Total Reserved(KB),Device\r\n0,trans_TransData_0,50240.0,1736405443881360.630\t,115.97,\
50304.0,76544.0,74752.0,76544.0,NPU:0\r\n";

/// MindSpore's memory tracker's `operator_memory_<rank>.csv` (its `DumpProfilingMemInfo`, read in
/// mindspore's mem_tracker.cc: every field followed by a comma, the pool's name as `Device`).
const MS_TRACKER: &[u8] = b"Name,Size(KB),Allocation Time(us),Duration(us),Allocation Total \
Allocated(MB),Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total \
Reserved(MB),Device,\nDefault/Conv2D-op1,4,1748750400871259,10,1,2,0.5,2,Ascend,\n";

// Seen failing before the change: both were "1 other file memlens does not read" (2 for the
// folder), with no word of what they are.
#[test]
fn memory_summaries_of_other_tools_are_named_when_nothing_else_is_given() {
    let nothing = |files: &[(&str, &[u8])]| {
        let mut set = memlens::families::input_set();
        for (path, bytes) in files {
            set.add_bytes(path, bytes.to_vec());
        }
        set.nothing_analysable().expect("nothing to analyse")
    };
    let of_its_own = "of CANN's own profiler (msprof) or of MindSpore's memory tracker, in \
                      columns of its own (msprof's totals are in KB), not the analysed framework \
                      output memlens reads";
    let hint = "give the run folder (*_ascend_pt / *_ascend_ms) whose ASCEND_PROFILER_OUTPUT \
                holds operator_memory.csv and memory_record.csv; a CANN application profiled with \
                msprof alone has no such folder, and memlens does not read msprof's summaries";
    // Given directly: one finding each, nothing left over.
    let n = nothing(&[
        (
            "operator_memory_0_1_20250109145043.csv",
            CANN_OPERATOR_MEMORY,
        ),
        ("operator_memory_0.csv", MS_TRACKER),
    ]);
    let found: Vec<(&str, &str)> = n
        .found
        .iter()
        .map(|f| (f.path.as_str(), f.what.as_str()))
        .collect();
    let what = format!("a memory summary {of_its_own}");
    assert_eq!(
        found,
        [
            ("operator_memory_0.csv", what.as_str()),
            ("operator_memory_0_1_20250109145043.csv", what.as_str()),
        ]
    );
    assert!(n.found.iter().all(|f| f.hint.as_deref() == Some(hint)));
    assert_eq!(n.more, 0);
    // Their folder given (mindstudio_profiler_output copied out of its PROF_* folder): one
    // finding, naming the first file and counting the others.
    let n = nothing(&[
        (
            "mindstudio_profiler_output/operator_memory_0_1_20250109145043.csv",
            CANN_OPERATOR_MEMORY,
        ),
        (
            "mindstudio_profiler_output/memory_record_0_1_20250109145043.csv",
            b"Device_id,Component,Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device\r\n",
        ),
        ("mindstudio_profiler_output/README.txt", b"summary files"),
    ]);
    assert_eq!(n.found.len(), 1);
    assert_eq!(n.found[0].path, "mindstudio_profiler_output");
    assert_eq!(
        n.found[0].what,
        format!("memory summaries (memory_record_0_1_20250109145043.csv and 1 more) {of_its_own}")
    );
    assert_eq!(n.more, 0, "the folder's other file is said by its finding");
    // Inside their PROF_* folder they are raw CANN data, said as before (one finding).
    let n = nothing(&[(
        "PROF_000001_20250109145043_ABC/mindstudio_profiler_output/operator_memory_0_1_2025.csv",
        CANN_OPERATOR_MEMORY,
    )]);
    assert_eq!(n.found.len(), 1);
    assert_eq!(n.found[0].path, "PROF_000001_20250109145043_ABC");
}

// Seen failing before the change: the message ended at the quoted header ("…Device Type"), the
// one column it found, with no word of the semicolons.
#[test]
fn a_table_saved_with_semicolons_or_tabs_is_said_to_be_one() {
    use memlens::profiler::memory_record::read_memory_record;
    use memlens::profiler::operator_memory::read_operator_memory;
    // operator_memory.csv re-saved by a spreadsheet in a language with decimal commas (the
    // re-saved shape seen in verl-project/rl-insight's memory fixture, f7736ca: quoted times, 21084
    // for 21084.0; here with the separators such a save writes).
    let semi = "\u{feff}Name;Size(KB);Allocation Time(us);Release Time(us);Active Release \
                Time(us);Duration(us);Active Duration(us);Allocation Total Allocated(MB);\
                Allocation Total Reserved(MB);Allocation Total Active(MB);Release Total \
                Allocated(MB);Release Total Reserved(MB);Release Total Active(MB);Stream Ptr;\
                Device Type\r\naten::embedding;8192,5;\"1779785515604664,200\t\";;;;;\
                19079,60595703125;21084;19079,60595703125;;;;6;NPU:0\r\n";
    let src = BytesSource::new("operator_memory.csv", semi.as_bytes().to_vec());
    let mut names = memlens::profiler::Interner::new();
    let e = read_operator_memory(&src, &mut names, None).unwrap_err();
    assert!(
        e.message.ends_with(
            "(107 more bytes), names separated by semicolons, not commas: a spreadsheet's save \
             (in a language whose numbers have decimal commas, or as tab-delimited text); save it \
             again as comma-separated CSV with decimal points, or give the profiler's original \
             file)"
        ),
        "{e}"
    );
    // memory_record.csv saved as tab-delimited text.
    let tabs = "Component\tTimestamp(us)\tTotal Allocated(MB)\tTotal Reserved(MB)\tTotal \
                Active(MB)\tStream Ptr\tDevice Type\r\nPTA\t1736405443870818.960\t935.5\t1452.0\t\
                935.5\t6\tNPU:0\r\n";
    let src = BytesSource::new("memory_record.csv", tabs.as_bytes().to_vec());
    let e = read_memory_record(&src, None).unwrap_err();
    assert!(
        e.message.contains("names separated by tabs, not commas"),
        "{e}"
    );
    // A comma-separated header that is simply wrong says nothing of separators.
    let src = BytesSource::new("memory_record.csv", b"a;b,c\r\n1,2,3\r\n".to_vec());
    let e = read_memory_record(&src, None).unwrap_err();
    assert!(!e.message.contains("separated by"), "{e}");
}
