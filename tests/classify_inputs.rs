//! Input classification over the fixture job, the real and toy samples in `fixtures/` and synthetic edge cases.
//! Expectations come from the fixture's own layout (folder names, file names, JSON written by hand),
//! not from the classifier.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::families::{classify_paths, RECOGNIZERS};
use memlens::input::classify::classify;
use memlens::input::{Entry, Head, Inventory, Unit, UnknownFile};
use memlens::profiler::ProfilerRun;
use memlens::somas::recognize::{SomasFamily, SomasFile};
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn run<'a>(inv: &'a Inventory, path: &str) -> &'a ProfilerRun {
    inv.units_of::<ProfilerRun>()
        .find(|r| r.path == path)
        .unwrap_or_else(|| panic!("no run {path} in {:#?}", inv.units))
}

fn somas<'a>(inv: &'a Inventory, path: &str) -> &'a SomasFile {
    let u = kind_of(inv, path);
    u.get::<SomasFile>()
        .unwrap_or_else(|| panic!("{path}: not SOMAS: {u:?}"))
}

fn unknown<'a>(inv: &'a Inventory, path: &str) -> &'a UnknownFile {
    let u = kind_of(inv, path);
    u.get::<UnknownFile>()
        .unwrap_or_else(|| panic!("{path}: not unknown: {u:?}"))
}

fn kind_of<'a>(inv: &'a Inventory, path: &str) -> &'a Unit {
    inv.units
        .iter()
        .find(|u| u.path() == path)
        .unwrap_or_else(|| panic!("no unit {path}"))
}

#[test]
fn fixture_job_runs_have_rank_role_step_and_timestamp() {
    let inv = classify_paths(&[fixture("fixtures/classify/job")]);
    assert_eq!(inv.files, 27);
    assert_eq!(
        inv.units
            .iter()
            .filter(|u| u.kind() == "ascend-run")
            .count(),
        5
    );

    let a0 = run(
        &inv,
        "job/step1/actor_update/host-a_1001_20250101120000123_ascend_pt",
    );
    assert_eq!((a0.rank, a0.rank_source), (Some(0), "file-name"));
    assert_eq!(
        (a0.role.as_str(), a0.role_source),
        ("actor_update", "folder")
    );
    assert_eq!(a0.step, Some(1));
    assert_eq!(a0.worker.as_deref(), Some("host-a"));
    assert_eq!(a0.pid, Some(1001));
    assert_eq!(a0.timestamp.as_deref(), Some("20250101120000123"));
    assert!(a0
        .files
        .operator_memory
        .as_deref()
        .unwrap()
        .ends_with("ASCEND_PROFILER_OUTPUT/operator_memory.csv"));
    assert!(a0.files.memory_record.is_some() && a0.files.trace_view.is_some());
    assert!(a0.files.npu_module_mem.is_none());
    assert_eq!(a0.file_count, 5);

    // The metadata's "role" key wins over the folder name.
    let a1 = run(
        &inv,
        "job/step1/actor_update/host-a_1002_20250101120000456_ascend_pt",
    );
    assert_eq!(
        (a1.rank, a1.role.as_str(), a1.role_source),
        (Some(1), "actor", "metadata")
    );

    // profiler_info.json without rank_id: rank unknown, still listed, with a note.
    let r1 = run(
        &inv,
        "job/step1/ref/host_b.cluster_2001_20250101120100001_ascend_pt",
    );
    assert_eq!((r1.rank, r1.rank_source), (None, "none"));
    assert_eq!(r1.worker.as_deref(), Some("host_b.cluster"));
    assert!(r1.notes.iter().any(|n| n.contains("rank unknown")));

    // profiler_info.json with a string rank_id: the key gives the rank.
    let r2 = run(
        &inv,
        "job/step1/ref/host_b.cluster_2002_20250101120100002_ascend_pt",
    );
    assert_eq!((r2.rank, r2.rank_source), (Some(3), "rank_id"));

    // Legacy name without pid/timestamp, db-only export.
    let ro = run(&inv, "job/rollout/20260526_085155_ascend_pt");
    assert_eq!(
        (ro.rank, ro.role.as_str(), ro.step),
        (Some(2), "rollout", None)
    );
    assert_eq!(ro.timestamp, None);
    assert_eq!(ro.files.db.len(), 1);
    // A database export is complete input: no note asks for the text files.
    assert!(
        !ro.notes.iter().any(|n| n.contains("operator_memory")),
        "{:?}",
        ro.notes
    );
}

#[test]
fn fixture_job_somas_task_info_and_unknown_files() {
    let inv = classify_paths(&[fixture("fixtures/classify/job")]);
    let plan = "job/graphs/rank_0/Ascend_somas_tensor_offset_7.ir";
    let s = somas(&inv, plan);
    assert_eq!(kind_of(&inv, plan).kind(), "somas");
    assert_eq!(s.family.id(), "somas-info");
    assert_eq!(s.version, "v2.0-2.3"); // %nCT control tensors, split names
    assert_eq!(s.stage.as_deref(), Some("tensor_offset"));
    assert_eq!(s.device.as_deref(), Some("Ascend"));
    assert_eq!(s.graph_id, Some(7));
    // Recognised by content under any name.
    let s = somas(&inv, "job/graphs/rank_0/plan_renamed.txt");
    assert_eq!((s.family.id(), s.stage.as_deref()), ("somas-info", None));
    let task = "job/graphs/rank_0/task_info_graph_7.ir";
    assert_eq!(kind_of(&inv, task).kind(), "task-info");
    let t = somas(&inv, task);
    assert_eq!((t.family, t.graph_id), (SomasFamily::TaskInfo, Some(7)));
    for (path, reason) in [
        ("job/empty.csv", "empty file"),
        ("job/notes.txt", "not a file of a torch_npu / MindSpore profiler run folder, a SOMAS dump, a task-info file, a memory snapshot or a memlens job summary"),
        ("job/graphs/rank_0/somas_input_graph_7.ir", "# IR entry"),
    ] {
        let u = unknown(&inv, path);
        assert!(u.reason.contains(reason), "{path}: {}", u.reason);
    }
}

#[test]
fn fixture_samples_classify_by_content() {
    let inv = classify_paths(&[fixture("fixtures/somas"), fixture("fixtures/torch_npu")]);
    let family = |name: &str| {
        let u = kind_of(&inv, &format!("somas/{name}"));
        match (u.get::<SomasFile>(), u.get::<UnknownFile>()) {
            (Some(s), _) => (s.family.id(), s.version.clone()),
            (_, Some(u)) => ("unknown", u.reason.clone()),
            _ => panic!("{u:?}"),
        }
    };
    // Each toy dump's layout, as fixtures/README.md lists it.
    assert_eq!(
        family("Ascend_somas_tensor_offset_1.ir"),
        ("somas-info", "v2.0-2.3".into())
    );
    assert_eq!(
        family("Ascend_somas_tensor_offset_1.v1_10.ir"),
        ("somas-info", "v1.10".into())
    );
    assert_eq!(
        family("Ascend_somas_tensor_offset_1.v2_4_fullname.ir"),
        ("somas-info", "v2.4+".into())
    );
    assert_eq!(family("somas_allocate_info_1.r1.ir").0, "somas-info-r1");
    assert_eq!(family("somas_mem_info_1.r1.ir").0, "mem-info-r1");
    assert_eq!(family("Ascend_somas_offline_log_1.ir").0, "offline-log");
    assert_eq!(family("task_info_graph_1.ir").0, "task-info");
    assert_eq!(family("somas_solver_input_1.ir").0, "unknown");

    let r0 = run(&inv, "torch_npu/msinsight-level0/text/rank0_ascend_pt");
    let r1 = run(&inv, "torch_npu/msinsight-level0/text/rank1_ascend_pt");
    assert_eq!((r0.rank, r1.rank), (Some(0), Some(1)));
    assert_eq!(r0.role, "text");
    for r in [r0, r1] {
        assert!(r.files.operator_memory.is_some() && r.files.memory_record.is_some());
        assert!(r.files.npu_module_mem.is_some() && r.files.trace_view.is_some());
    }
    let db = run(&inv, "torch_npu/msinsight-level0/db/rank0_ascend_pt");
    assert_eq!(db.files.db.len(), 1);
    assert!(db.notes.is_empty(), "{:?}", db.notes);
}

#[test]
fn result_does_not_depend_on_input_order_and_unreadable_files_stay_listed() {
    let somas = std::fs::read(fixture(
        "fixtures/examples/somas-toy/Ascend_somas_tensor_offset_7.ir",
    ))
    .unwrap();
    let entries = vec![
        Entry {
            path: "d/x_1_20250101120000000_ascend_pt/profiler_info_4.json".into(),
            size: 2,
        },
        Entry {
            path: "d/plan.ir".into(),
            size: somas.len() as u64,
        },
        Entry {
            path: "d/locked.ir".into(),
            size: 10,
        },
        Entry {
            path: "d/x_1_20250101120000000_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json".into(),
            size: 5,
        },
    ];
    let heads = vec![
        Head::Bytes(b"{}".to_vec()),
        Head::Bytes(somas),
        Head::Unreadable("permission denied".into()),
        Head::NotRead,
    ];
    let a = classify(&entries, &heads, RECOGNIZERS);
    let mut rev_e = entries.clone();
    let mut rev_h = heads.clone();
    rev_e.reverse();
    rev_h.reverse();
    let b = classify(&rev_e, &rev_h, RECOGNIZERS);
    assert_eq!(a, b);
    assert_eq!(a.units.len(), 3);
    assert_eq!(
        unknown(&a, "d/locked.ir").reason,
        "cannot be read: permission denied"
    );
    let r = run(&a, "d/x_1_20250101120000000_ascend_pt");
    assert_eq!(r.rank, Some(4));
    assert!(r.notes.iter().any(|n| n.contains("no operator_memory.csv")));
}

#[test]
fn cli_inspect_json_matches_the_library() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memlens"))
        .arg("inspect")
        .arg("--json")
        .arg(fixture("fixtures/classify/job"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lib = serde_json::to_value(classify_paths(&[fixture("fixtures/classify/job")])).unwrap();
    assert_eq!(cli, lib);
    assert_eq!(cli["units"].as_array().unwrap().len(), 11);
    // The kind names are an interface (the page and scripts read them): fixed strings, whatever
    // the Rust types are called.
    let mut kinds: Vec<&str> = cli["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["kind"].as_str().unwrap())
        .collect();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds, ["ascend-run", "somas", "task-info", "unknown"]);
}

#[test]
fn missing_paths_are_refused_by_the_cli_and_listed_as_unreadable_by_the_library() {
    let missing = "/nonexistent/memlens-test-path";
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["inspect", "--json", missing])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr)
        .starts_with(&format!("memlens: {missing}: no such file or directory")));
    // The library still lists what it could not read (one bad path never hides the others).
    let v = serde_json::to_value(memlens::families::classify_paths(&[missing.into()])).unwrap();
    let unit = &v["units"][0];
    assert_eq!(unit["kind"], "unknown");
    assert!(
        unit["reason"]
            .as_str()
            .unwrap()
            .starts_with("cannot be read"),
        "{unit}"
    );
}

#[test]
fn the_somas_cache_json_is_a_dump_and_a_json_of_that_name_that_is_not_a_cache_is_unknown() {
    // The fixture is a compact JSON object with "hash_id" and "tensors" (its first bytes say so);
    // its name carries graph 1. The SOMAS tab reads it (tensors and offsets, no nodes), so the
    // Inputs tab lists it as a dump too.
    let inv = classify_paths(&[fixture(
        "fixtures/somas/somas_graph_1_1234567890123456789.json",
    )]);
    let s = somas(&inv, "somas_graph_1_1234567890123456789.json");
    assert_eq!(kind_of(&inv, &s.path).kind(), "somas");
    assert_eq!(s.family, SomasFamily::CacheJson);
    assert_eq!(s.family.id(), "cache-json");
    assert_eq!((s.stage.as_deref(), s.graph_id), (Some("cache"), Some(1)));
    // The same name on something else: unknown, saying what a cache file holds.
    let mut set = memlens::families::input_set();
    set.add_bytes("somas_graph_2_99.json", b"{\"hello\": 1}".to_vec());
    let inv = set.classify();
    let u = unknown(inv, "somas_graph_2_99.json");
    assert!(u.reason.contains("not a SOMAS cache"), "{}", u.reason);
}

/// A folder is a run folder when it directly holds a memory file, whatever its name; the other
/// families' files beside that file (a memory snapshot, a SOMAS dump) and unrelated files are not
/// the run's: they are classified on their own, so a snapshot dropped next to operator_memory.csv
/// is analysed and a notes file is listed as not analysed. Seen failing before the run claimed
/// only its own files: `d` swallowed all five files (one unit), and a drop whose top held a memory
/// file swallowed every folder under it. A `-wal` beside the database stays the run's (it is read
/// with it), and a folder named like a run folder keeps all its files.
#[test]
fn a_run_folder_found_by_its_files_leaves_other_families_files_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("d");
    let put = |rel: &str, bytes: &[u8]| {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    };
    let om = std::fs::read(fixture(
        "fixtures/torch_npu/msinsight-level0/text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
    ))
    .unwrap();
    let snap = std::fs::read(fixture("fixtures/snapshots/cs336_tiny_mem_snapshot.pickle")).unwrap();
    let dump = std::fs::read(fixture(
        "fixtures/examples/somas-toy/Ascend_somas_tensor_offset_7.ir",
    ))
    .unwrap();
    put("operator_memory.csv", &om);
    put("ascend_pytorch_profiler_0.db-wal", b"");
    put("snap.pickle", &snap);
    put("notes.txt", b"what I changed\n");
    put("graphs/Ascend_somas_tensor_offset_7.ir", &dump);
    put(
        "x_1_20250101120000000_ascend_pt/profiler_info_3.json",
        b"{}",
    );
    put("x_1_20250101120000000_ascend_pt/readme.txt", b"kept\n");

    let inv = classify_paths(&[d]);
    assert_eq!(inv.files, 7);
    let r = run(&inv, "d");
    assert_eq!(
        r.files.operator_memory.as_deref(),
        Some("d/operator_memory.csv")
    );
    assert_eq!(r.file_count, 2, "the CSV and the -wal: {:#?}", inv.units);
    assert_eq!(kind_of(&inv, "d/snap.pickle").kind(), "snapshot");
    assert_eq!(
        somas(&inv, "d/graphs/Ascend_somas_tensor_offset_7.ir").family,
        SomasFamily::SomasInfo
    );
    assert!(unknown(&inv, "d/notes.txt")
        .reason
        .starts_with("not a file of"));
    let named = run(&inv, "d/x_1_20250101120000000_ascend_pt");
    assert_eq!((named.rank, named.file_count), (Some(3), 2));
    assert_eq!(inv.units.len(), 5, "{:#?}", inv.units);
}

/// A file tree under a temporary folder: `(relative path, bytes)`.
fn tree(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (rel, bytes) in files {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    tmp
}

// MindSpore's db export (export_type=Db without Text) leaves no text file: before the msprof
// layout was recognised, its db was no file of the run and the run's note said the memory files
// were missing ("profile with profile_memory=True"), which is not what happened.
#[test]
fn mindspore_db_export_is_a_file_of_its_run_and_names_the_rank() {
    let tmp = tree(&[
        ("w_1_20250101000000000_ascend_ms/profiler_info.json", b"{}"),
        ("w_1_20250101000000000_ascend_ms/FRAMEWORK/x.txt", b""),
        (
            "w_1_20250101000000000_ascend_ms/ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler_3.db",
            b"",
        ),
    ]);
    let inv = classify_paths(&[tmp.path().join("w_1_20250101000000000_ascend_ms")]);
    let r = run(&inv, "w_1_20250101000000000_ascend_ms");
    assert_eq!(
        r.files.msprof_db,
        ["w_1_20250101000000000_ascend_ms/ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler_3.db"]
    );
    assert!(r.files.db.is_empty());
    // profiler_info.json names no rank; the db's name does.
    assert_eq!((r.rank, r.rank_source), (Some(3), "db-file-name"));
    let notes = r.notes.join("\n");
    assert!(!notes.contains("profile_memory=True"), "{notes}");
    assert!(notes.contains("ascend_mindspore_profiler_3.db"), "{notes}");
    assert!(notes.contains("msprof's database layout"), "{notes}");
}

#[test]
fn msprof_layout_dbs_given_on_their_own_are_runs() {
    let tmp = tree(&[
        ("a/ascend_mindspore_profiler.db", b""),
        (
            "PROF_000001_20250101000000000_ABCDEF/msprof_20250101000000.db",
            b"",
        ),
        // Not msprof's name: the prefix alone, and another tool's db.
        ("c/ascend_mindspore_profiler_x.db", b""),
        ("c/msprof_.db", b""),
    ]);
    let inv = classify_paths(&[tmp.path().to_path_buf()]);
    let root = tmp.path().file_name().unwrap().to_str().unwrap();
    let a = run(&inv, &format!("{root}/a"));
    assert_eq!(
        a.files.msprof_db,
        [format!("{root}/a/ascend_mindspore_profiler.db")]
    );
    // Without a number, the name gives no rank (MindSpore writes it so for rank 0 and for none).
    assert_eq!((a.rank, a.rank_source), (None, "none"));
    let p = run(
        &inv,
        &format!("{root}/PROF_000001_20250101000000000_ABCDEF"),
    );
    assert_eq!(p.files.msprof_db.len(), 1);
    assert!(inv
        .units_of::<ProfilerRun>()
        .all(|r| !r.path.ends_with("/c")));
}
