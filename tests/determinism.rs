//! Determinism, native half (issue 7, part 5): the same input gives byte-identical JSON and CSV
//! output with one thread and with two (`RAYON_NUM_THREADS`), and across repeated runs, for
//! `memlens somas --json/--out`, `memlens profiler --json/--out` and `memlens inspect --json`.
//!
//! Inputs are large enough for the parallel paths to cut them: a SOMAS dump of ~14 MB (parsed in
//! 4 MiB chunks), a job whose traces are ~10 MiB each (scanned in batches cut into pieces), plus
//! the real samples.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const CLI: &str = env!("CARGO_BIN_EXE_memlens");

/// stdout and every file written under `out`, from one run of the CLI with `threads` threads.
fn run(threads: usize, args: &[&str], out: Option<&Path>) -> (Vec<u8>, BTreeMap<String, Vec<u8>>) {
    if let Some(o) = out {
        let _ = std::fs::remove_dir_all(o);
    }
    let mut cmd = Command::new(CLI);
    cmd.args(args).env("RAYON_NUM_THREADS", threads.to_string());
    if let Some(o) = out {
        cmd.arg("--out").arg(o);
    }
    let r = cmd.output().expect("run memlens");
    assert!(
        r.status.success() || r.status.code() == Some(3),
        "memlens {args:?} failed: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let mut files = BTreeMap::new();
    if let Some(o) = out {
        collect(o, o, &mut files);
        assert!(!files.is_empty(), "nothing written to {}", o.display());
    }
    (r.stdout, files)
}

fn collect(base: &Path, dir: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(base, &p, files);
        } else {
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            files.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

/// Runs `args` with 1 thread, 2 threads, and 2 threads again; all outputs must be identical.
fn same_everywhere(args: &[&str], out: Option<&Path>) {
    let (a_out, a_files) = run(1, args, out);
    for (label, threads) in [
        ("2 threads", 2),
        ("2 threads, again", 2),
        ("1 thread, again", 1),
    ] {
        let (b_out, b_files) = run(threads, args, out);
        assert!(
            a_out == b_out,
            "{args:?}: stdout differs between 1 thread and {label}"
        );
        assert_eq!(
            a_files.keys().collect::<Vec<_>>(),
            b_files.keys().collect::<Vec<_>>(),
            "{args:?}: different files with {label}"
        );
        for (name, bytes) in &a_files {
            assert!(
                b_files[name] == *bytes,
                "{args:?}: {name} differs between 1 thread and {label}"
            );
        }
    }
    assert!(!a_out.is_empty() || !a_files.is_empty());
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A generated v2.4 dump of 25,000 nodes (~14 MB) with 3 injected conflicts, and its task-info.
fn big_dump(dir: &Path) -> (PathBuf, PathBuf) {
    use memlens::somas::generate::{generate, Flavor, GenConfig};
    let g = generate(&GenConfig {
        flavor: Flavor::V24,
        nodes: 25_000,
        seed: 11,
        inject_conflicts: 3,
        task_info: true,
    });
    assert!(g.dump.len() > 8 << 20, "dump of {} bytes", g.dump.len());
    let dump = dir.join("Ascend_somas_tensor_offset_1.ir");
    let task = dir.join("task_info_graph_1.ir");
    std::fs::write(&dump, &g.dump).unwrap();
    std::fs::write(&task, g.task_info.unwrap()).unwrap();
    (dump, task)
}

#[test]
fn somas_json_and_out_files_do_not_depend_on_threads_or_runs() {
    let dir = tmp();
    let (dump, task) = big_dump(dir.path());
    let out = dir.path().join("out");
    same_everywhere(
        &[
            "somas",
            s(&dump),
            "--task-info",
            s(&task),
            "--json",
            "--node",
            "7",
            "--tensor",
            "5",
            "--address-range",
            "0x0-0x100000",
        ],
        Some(&out),
    );
    // Every sample family too (small, but each takes its own parser).
    for f in [
        "Ascend_somas_tensor_offset_1.ir",
        "Ascend_somas_tensor_offset_1.v1_10.ir",
        "Ascend_somas_tensor_offset_1.v2_4_fullname.ir",
        "somas_allocate_info_1.r1.ir",
        "somas_mem_info_1.r1.ir",
        "Ascend_somas_offline_log_1.ir",
        "somas_graph_1_1234567890123456789.json",
    ] {
        let p = common::fixture(&format!("somas/{f}"));
        same_everywhere(&["somas", s(&p), "--json"], Some(&out));
    }
}

#[test]
fn profiler_json_and_out_files_do_not_depend_on_threads_or_runs() {
    use memlens::profiler::generate::{generate, GenSpec};
    let dir = tmp();
    let job = dir.path().join("job");
    generate(
        &GenSpec {
            roles: 2,
            ranks: 2,
            trace_bytes: 10 << 20,
            rows: 3000,
            steps: 3,
            seed: 5,
            outlier: false,
        },
        &mut |p, b| {
            let path = job.join(p);
            std::fs::create_dir_all(path.parent().unwrap())?;
            std::fs::write(path, b)
        },
    )
    .unwrap();
    let out = dir.path().join("out");
    same_everywhere(&["profiler", s(&job), "--json"], Some(&out));
    let real = common::fixture(common::REAL_TEXT);
    same_everywhere(&["profiler", s(&real), "--json"], Some(&out));
    // An archive of a job (members inflated in memory, same analysis).
    let zip = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/ascend/archives/job.zip");
    same_everywhere(&["profiler", s(&zip), "--json"], Some(&out));
}

#[test]
fn inspect_json_does_not_depend_on_threads_or_runs() {
    let classify = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/classify/job");
    let somas = common::fixture("somas");
    let npu = common::fixture("torch_npu");
    same_everywhere(
        &["inspect", s(&classify), s(&somas), s(&npu), "--json"],
        None,
    );
}
