//! Catalogue of bad torch_npu database exports.
//!
//! Every case drops a job of two ranks: `job/good/rank0_ascend_pt` (the real text rank 0,
//! untouched) and `job/bad/rank0_ascend_pt` (the real db-only rank 0 with its database damaged,
//! most damage made with the SQLite library itself on a copy). Each case asserts the exact
//! diagnostics the user sees for the damaged file (file, byte offset, what was expected) and that
//! the good rank's figures equal those it has alone; where the damage leaves part of the db
//! usable, that the rest still gives its figures.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{json, load, run_folder, Loaded};
use rusqlite::Connection;
use std::path::Path;
use std::sync::OnceLock;

const BAD: &str = "job/bad/rank0_ascend_pt";
const DB: &str = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db";

fn sample_db() -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/torch_npu/msinsight-level0/db/rank0_ascend_pt")
        .join(DB);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn sample_info() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/torch_npu/msinsight-level0/db/rank0_ascend_pt/profiler_info_0.json"),
    )
    .unwrap()
}

/// The good rank analysed alone.
fn good_alone() -> &'static serde_json::Value {
    static V: OnceLock<serde_json::Value> = OnceLock::new();
    V.get_or_init(|| json(load(&run_folder("job/good", 0, &[])).rank("job/good/")))
}

/// The undamaged db rank analysed alone, under the bad rank's path.
fn db_alone() -> &'static serde_json::Value {
    static V: OnceLock<serde_json::Value> = OnceLock::new();
    V.get_or_init(|| json(load(&db_folder(sample_db(), &[])).rank(BAD)))
}

/// The db run folder with `db` as its database and `extra` files beside it.
fn db_folder(db: Vec<u8>, extra: &[(&str, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![
        (format!("{BAD}/profiler_info_0.json"), sample_info()),
        (format!("{BAD}/{DB}"), db),
    ];
    for (rel, bytes) in extra {
        files.push((format!("{BAD}/{rel}"), bytes.clone()));
    }
    files
}

/// Loads the good rank next to the db rank holding `db`; asserts the good rank is untouched.
fn drop_db(db: Vec<u8>, extra: &[(&str, Vec<u8>)]) -> Loaded {
    let mut files = run_folder("job/good", 0, &[]);
    files.extend(db_folder(db, extra));
    let l = load(&files);
    assert_eq!(
        &json(l.rank("job/good/")),
        good_alone(),
        "the good rank changed next to the bad one"
    );
    assert!(
        l.diags("job/good/").is_empty(),
        "{:?}",
        l.diags("job/good/")
    );
    l
}

/// A copy of the sample changed by `sql` through the SQLite library.
fn with_sql(sql: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.db");
    std::fs::write(&p, sample_db()).unwrap();
    let con = Connection::open(&p).unwrap();
    con.execute_batch(sql).unwrap();
    con.close().unwrap();
    std::fs::read(&p).unwrap()
}

fn diags(l: &Loaded) -> Vec<String> {
    l.diags(BAD)
}

fn file() -> String {
    format!("{BAD}/{DB}")
}

/// Figures of the bad rank that come from OP_MEMORY.
fn row_figures(v: &serde_json::Value) -> [serde_json::Value; 5] {
    [
        v["rows"].clone(),
        v["rows_pta"].clone(),
        v["rows_ge"].clone(),
        v["unreleased_rows"].clone(),
        v["unreleased_bytes"].clone(),
    ]
}

/// Figures of the bad rank that come from MEMORY_RECORD.
fn record_figures(v: &serde_json::Value) -> [serde_json::Value; 4] {
    [
        v["peak_allocated_bytes"].clone(),
        v["peak_reserved_bytes"].clone(),
        v["peak_time_ns"].clone(),
        v["peak_source"].clone(),
    ]
}

#[test]
fn db_01_not_sqlite() {
    let l = drop_db(b"Name,Size(KB)\naten::add,1.0\n".to_vec(), &[]);
    assert_eq!(
        diags(&l),
        [format!(
            "{} (byte 0): error: not an SQLite 3 database: expected the header \"SQLite format \
             3\\x00\" at byte 0, found \"Name,Size(KB)\\nat\"… (12 more bytes)",
            file()
        )]
    );
    assert_eq!(l.rank(BAD).rows, 0);
}

#[test]
fn db_02_empty_file() {
    let l = drop_db(Vec::new(), &[]);
    assert_eq!(
        diags(&l),
        [format!(
            "{} (byte 0): error: empty file: not an SQLite database (expected the header \
             \"SQLite format 3\\x00\")",
            file()
        )]
    );
}

#[test]
fn db_03_truncated() {
    let db = sample_db();
    let l = drop_db(db[..300_000].to_vec(), &[]);
    assert_eq!(
        diags(&l),
        [format!(
            "{} (byte 300000): error: the file is truncated: its header says 166 pages of 4096 \
             bytes (679936 bytes), the file has 300000 bytes",
            file()
        )]
    );
}

/// `(root page, page size)` of `table`.
fn root_of(db: &[u8], table: &str) -> (u32, usize) {
    let src = memlens::source::BytesSource::new("x.db", db.to_vec());
    let d = memlens::sqlite::Database::open(&src).unwrap();
    (d.table(table).unwrap().root, d.header().page_size as usize)
}

#[test]
fn db_04_page_cycle_in_the_op_spans() {
    // PYTORCH_API's root points back at itself: that table is an error, allocations stay (with
    // no call stacks), and the allocator curve is intact.
    let mut db = sample_db();
    let (root, ps) = root_of(&db, "PYTORCH_API");
    let at = (root as usize - 1) * ps;
    assert_eq!(db[at], 5);
    db[at + 8..at + 12].copy_from_slice(&root.to_be_bytes());
    let l = drop_db(db, &[]);
    assert_eq!(
        diags(&l),
        [format!(
            "{} (byte {at}): error: table PYTORCH_API: page {root} points to page {root}, which \
             this table's b-tree reached before (a page cycle: the file is damaged)",
            file()
        )]
    );
    let v = json(l.rank(BAD));
    assert_eq!(row_figures(&v), row_figures(db_alone()));
    assert_eq!(record_figures(&v), record_figures(db_alone()));
    assert_eq!(v["stacks"]["direct"], 0);
    assert_eq!(v["trace_ops"], 0);
}

#[test]
fn db_05_absent_allocation_table() {
    let l = drop_db(with_sql("DROP TABLE OP_MEMORY;"), &[]);
    assert_eq!(
        diags(&l),
        [format!(
            "{}: warning: no OP_MEMORY table: no allocations (profile with profile_memory=True)",
            file()
        )]
    );
    let v = json(l.rank(BAD));
    assert_eq!(v["rows"], 0);
    assert_eq!(record_figures(&v), record_figures(db_alone()));
}

#[test]
fn db_06_absent_string_table_is_not_a_profiler_database() {
    let l = drop_db(with_sql("DROP TABLE STRING_IDS;"), &[]);
    assert_eq!(
        diags(&l),
        [format!(
            "{}: error: no STRING_IDS table: not a torch_npu profiler database (every name of \
             the export is an id into that table)",
            file()
        )]
    );
}

#[test]
fn db_07_unexpected_column_type() {
    // Two sizes are text: those rows are skipped, with one counted warning naming the first.
    let l = drop_db(
        with_sql("UPDATE OP_MEMORY SET size = 'big' WHERE rowid IN (3, 9);"),
        &[],
    );
    let d = diags(&l);
    assert_eq!(d.len(), 1, "{d:?}");
    let want = format!("{} (byte ", file());
    assert!(d[0].starts_with(&want), "{d:?}");
    assert!(
        d[0].ends_with(
            "): warning: OP_MEMORY.size: rowid 3: expected an integer size, found text \"big\"; \
             row skipped (first of 2 rows, at this place) (2 times)"
        ),
        "{d:?}"
    );
    assert_eq!(l.rank(BAD).rows, 182);
}

#[test]
fn db_08_missing_column() {
    let l = drop_db(
        with_sql("ALTER TABLE OP_MEMORY RENAME COLUMN allocationTime TO allocTime;"),
        &[],
    );
    assert_eq!(
        diags(&l),
        [format!(
            "{}: error: table OP_MEMORY has no column allocationTime (its columns: name, size, \
             allocTime, releaseTime, activeReleaseTime, duration, activeDuration, \
             allocationTotalAllocated, allocationTotalReserved, allocationTotalActive, \
             releaseTotalAllocated, releaseTotalReserved, releaseTotalActive, streamPtr, \
             deviceId)",
            file()
        )]
    );
    let v = json(l.rank(BAD));
    assert_eq!(v["rows"], 0);
    assert_eq!(record_figures(&v), record_figures(db_alone()));
}

/// The sample in WAL mode with `sql` committed to the log and not yet checkpointed: the db file
/// and its `-wal` as they lie on disk while the writer still has the database open.
fn with_wal(sql: &str) -> (Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.db");
    std::fs::write(&p, sample_db()).unwrap();
    let con = Connection::open(&p).unwrap();
    con.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    con.execute_batch(sql).unwrap();
    let db = std::fs::read(&p).unwrap();
    let wal = std::fs::read(dir.path().join("x.db-wal")).unwrap();
    drop(con);
    (db, wal)
}

#[test]
fn db_09_a_wal_file_with_newer_pages() {
    let (db, wal) = with_wal("DELETE FROM OP_MEMORY WHERE rowid > 100;");
    assert!(wal.len() > 4096);
    let wal_name = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db-wal";
    let l = drop_db(db.clone(), &[(wal_name, wal)]);
    let d = diags(&l);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].starts_with(&format!(
            "{BAD}/{wal_name}: error: the database {} is incomplete: this write-ahead log holds ",
            file()
        )),
        "{d:?}"
    );
    assert!(
        d[0].ends_with(
            "newer page(s) that are not in it yet. Open the database once with sqlite3 (which \
             moves them into the file), or copy it after the profiler has finished"
        ),
        "{d:?}"
    );
    assert_eq!(l.rank(BAD).rows, 0);
    // The same db with an empty -wal (what SQLite leaves after a clean close) reads normally.
    let l = drop_db(db, &[(wal_name, Vec::new())]);
    assert!(diags(&l).is_empty(), "{:?}", diags(&l));
    assert_eq!(l.rank(BAD).rows, 184);
}

#[test]
fn db_10_a_damaged_leaf_page() {
    // OP_MEMORY's first leaf (the left child of its interior root) says it holds more cells
    // than fit in a page: the table is an error, the allocator curve stays.
    let mut db = sample_db();
    let (root, ps) = root_of(&db, "OP_MEMORY");
    let at = (root as usize - 1) * ps;
    assert_eq!(db[at], 5, "the root of OP_MEMORY is an interior page");
    let cell = u16::from_be_bytes([db[at + 12], db[at + 13]]) as usize;
    let leaf = u32::from_be_bytes(db[at + cell..at + cell + 4].try_into().unwrap());
    let lat = (leaf as usize - 1) * ps;
    assert_eq!(db[lat], 13, "its first child is a leaf");
    db[lat + 3..lat + 5].copy_from_slice(&5000u16.to_be_bytes());
    let l = drop_db(db, &[]);
    assert_eq!(
        diags(&l),
        [format!(
            "{} (byte {}): error: table OP_MEMORY: leaf page {leaf}: 5000 cells do not fit in a \
             page of 4096 usable bytes",
            file(),
            lat + 3
        )]
    );
    let v = json(l.rank(BAD));
    assert_eq!(v["rows"], 0);
    assert_eq!(record_figures(&v), record_figures(db_alone()));
}

#[test]
fn db_11_a_db_and_text_in_one_run_folder_are_read_once() {
    // The text twin's files beside the db: the db is read, the rank is counted once.
    let mut files = run_folder("job/both", 0, &[]);
    files.push((format!("job/both/rank0_ascend_pt/{DB}"), sample_db()));
    let l = load(&files);
    assert_eq!(l.analysis.ranks.len(), 1);
    let s = &l.analysis.ranks[0].summary;
    assert_eq!((s.source, s.rows), ("db", 184));
    assert_eq!(json(s)["peak_time_ns"], db_alone()["peak_time_ns"]);
    // A db that cannot be read: the text files are read instead, and the user is told.
    let mut files = run_folder("job/both", 0, &[]);
    files.push((
        format!("job/both/rank0_ascend_pt/{DB}"),
        b"garbage".to_vec(),
    ));
    let l = load(&files);
    let s = &l.analysis.ranks[0].summary;
    assert_eq!((s.source, s.rows), ("text", 184));
    assert_eq!(&json(s)["peak_time_ns"], &good_alone()["peak_time_ns"]);
    assert_eq!(
        l.diags("job/both/"),
        [format!(
            "job/both/rank0_ascend_pt/{DB} (byte 0): warning: not an SQLite 3 database: expected \
             the header \"SQLite format 3\\x00\" at byte 0, found \"garbage\"; the text files are \
             read instead"
        )]
    );
}
