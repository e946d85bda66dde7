//! A database export the page cannot hold (over its per-file limit) is left out of the reading
//! plan when its run folder has the text files too (`JobView::leave_out_dbs`, which every page
//! worker applies with the same list): the rank is then read from its text files, exactly as
//! `memlens profiler --json` reads the same folder with the db removed. A run folder with a db
//! and no text file keeps its db (the page leaves such a rank out).
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::copy_dir;
use memlens::profiler::plan::Reader;
use memlens::profiler::view::{JobView, Request};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const TEXT: &str = "fixtures/torch_npu/msinsight-level0/text/rank0_ascend_pt";
const DB: &str =
    "fixtures/torch_npu/msinsight-level0/db/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db";
const DB_ONLY: &str = "fixtures/torch_npu/msinsight-level0/db/rank0_ascend_pt";

/// `root/job/rank0_ascend_pt`: the text export of rank 0, with the db export beside its text
/// files when `with_db`.
fn run_folder(root: &Path, with_db: bool) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"));
    let job = root.join("job");
    let run = job.join("rank0_ascend_pt");
    copy_dir(&fixtures.join(TEXT), &run);
    if with_db {
        std::fs::copy(
            fixtures.join(DB),
            run.join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"),
        )
        .unwrap();
    }
    job
}

fn cli_json(job: &Path) -> Value {
    serde_json::from_slice(&cli_bytes(job)).unwrap()
}

fn report(v: &mut JobView) -> Value {
    let r: Request = serde_json::from_value(json!({ "method": "report", "params": {} })).unwrap();
    serde_json::from_str(&v.answer(&r).unwrap()).unwrap()
}

/// The path the input set gives the db export of `job` (as the page's drop names it).
fn db_path(v: &JobView) -> String {
    v.plan()
        .iter()
        .find(|f| f.reader == Reader::Database)
        .map(|f| f.path.clone())
        .expect("the run folder's db is planned")
}

#[test]
fn a_db_left_out_is_read_from_its_text_files_as_the_cli_reads_the_folder_without_it() {
    let with = tempfile::tempdir().unwrap();
    let without = tempfile::tempdir().unwrap();
    let job = run_folder(with.path(), true);
    let plain = run_folder(without.path(), false);
    let want = cli_json(&plain);
    assert_eq!(want["ranks"][0]["source"], "text", "{want}");

    // Read as it is, the folder is read from its db: another report than the text files'.
    let as_is = cli_json(&job);
    assert_eq!(as_is["ranks"][0]["source"], "db", "{as_is}");
    assert_ne!(as_is["ranks"], want["ranks"]);

    let mut set = memlens::families::input_set_from_paths(std::slice::from_ref(&job));
    let mut v = JobView::open(&mut set);
    let db = db_path(&v);
    assert!(db.ends_with("/ascend_pytorch_profiler_0.db"), "{db}");
    // Files not in the job are passed over; the db is left out, and said so.
    let left = v.leave_out_dbs(&set, &["elsewhere/x.db".to_string(), db.clone()]);
    assert_eq!(left, vec![db.clone()]);
    let planned: Vec<(String, Reader)> = v
        .plan()
        .iter()
        .map(|f| (f.path.clone(), f.reader))
        .collect();
    assert!(
        planned
            .iter()
            .all(|(p, r)| *r != Reader::Database && p != &db),
        "{planned:?}"
    );
    assert_eq!(
        planned.iter().map(|(_, r)| *r).collect::<Vec<_>>(),
        vec![
            Reader::Trace,
            Reader::OperatorMemory,
            Reader::MemoryRecord,
            Reader::ModuleMem
        ]
    );
    // The parts the page shares among its readers weigh the text files, not the db.
    let text_bytes: u64 = v.plan().iter().map(|f| f.bytes).sum();
    assert_eq!(v.parts(&set)[0].bytes, text_bytes);
    v.analyze(&set);
    assert_eq!(report(&mut v), want);
    // Byte for byte, too.
    assert_eq!(v.export("summary.json").unwrap(), cli_bytes(&plain));
}

fn cli_bytes(job: &Path) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_memlens"))
        .args(["profiler", job.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    out.stdout
}

#[test]
fn a_db_without_text_files_beside_it_is_kept() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(DB_ONLY);
    let mut set = memlens::families::input_set_from_paths(&[dir]);
    let mut v = JobView::open(&mut set);
    let db = db_path(&v);
    let before: Vec<_> = v.plan().to_vec();
    assert!(v.leave_out_dbs(&set, std::slice::from_ref(&db)).is_empty());
    assert_eq!(v.plan(), &before[..]);
}
