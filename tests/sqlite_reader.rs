//! The SQLite file reader against SQLite itself: every row of every table of a synthetic
//! database (small pages, deep b-trees, overflow chains, every serial type, a rowid alias, a
//! column added later) and of the real torch_npu export, compared with what Python's `sqlite3`
//! read from the same files (`fixtures/sqlite/make.py` wrote the expectations).

use memlens::source::BytesSource;
use memlens::sqlite::{Database, Value};
use serde_json::Value as J;
use std::path::Path;

fn fixture(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn expected(rel: &str) -> J {
    serde_json::from_slice(&fixture(rel)).unwrap()
}

/// The canonical row text of `make.py` (see there).
fn canon(out: &mut Vec<u8>, rowid: i64, values: &[Value<'_>]) {
    out.extend_from_slice(rowid.to_string().as_bytes());
    for v in values {
        out.push(b'|');
        match v {
            Value::Null => out.push(b'N'),
            Value::Integer(i) => out.extend_from_slice(format!("i{i}").as_bytes()),
            Value::Real(r) => out.extend_from_slice(format!("r{:016x}", r.to_bits()).as_bytes()),
            Value::Text(t) => {
                out.extend_from_slice(format!("t{}:", t.len()).as_bytes());
                out.extend_from_slice(t);
            }
            Value::Blob(b) => {
                out.push(b'b');
                for x in *b {
                    out.extend_from_slice(format!("{x:02x}").as_bytes());
                }
            }
        }
    }
    out.push(b'\n');
}

fn fnv(h: u64, data: &[u8]) -> u64 {
    data.iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100000001B3))
}

/// Checks every table of `db_rel` against `exp_rel`; returns how many tables were compared.
fn compare(db_rel: &str, exp_rel: &str) -> usize {
    let bytes = fixture(db_rel);
    let exp = expected(exp_rel);
    assert_eq!(exp["size"].as_u64(), Some(bytes.len() as u64));
    let src = BytesSource::new(db_rel, bytes);
    let db = Database::open(&src).unwrap();
    let tables = exp["tables"].as_object().unwrap();
    let mut names: Vec<&str> = db.tables().iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    let mut want: Vec<&str> = tables.keys().map(|k| k.as_str()).collect();
    want.sort_unstable();
    assert_eq!(names, want, "{db_rel}: the tables of the schema");
    for (name, e) in tables {
        let t = db.table(name).unwrap();
        let cols: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        let want_cols: Vec<&str> = e["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(cols, want_cols, "{db_rel}: columns of {name}");
        if e["without_rowid"] == J::Bool(true) {
            let err = db.scan(t, &mut |_| Ok(())).unwrap_err();
            assert!(err.message.contains("WITHOUT ROWID"), "{err}");
            continue;
        }
        let mut h = 0xCBF29CE484222325u64;
        let mut n = 0u64;
        let mut line = Vec::new();
        let mut first: Vec<J> = Vec::new();
        db.scan(t, &mut |row| {
            let values: Vec<Value> = (0..t.columns.len()).map(|i| row.get(i)).collect();
            line.clear();
            canon(&mut line, row.rowid(), &values);
            h = fnv(h, &line);
            if n < 3 {
                let mut r = vec![J::from(row.rowid())];
                for v in &values {
                    r.push(match v {
                        Value::Null => J::Null,
                        Value::Integer(i) => J::from(*i),
                        Value::Real(x) => serde_json::json!({
                            "real_bits": format!("{:016x}", x.to_bits())
                        }),
                        Value::Text(t) if t.len() > 40 => serde_json::json!({
                            "text_len": t.len(),
                            "starts": String::from_utf8_lossy(t).chars().take(20).collect::<String>()
                        }),
                        Value::Text(t) => J::from(String::from_utf8_lossy(t).into_owned()),
                        Value::Blob(b) => serde_json::json!({
                            "blob": b.iter().map(|x| format!("{x:02x}")).collect::<String>()
                        }),
                    });
                }
                first.push(J::Array(r));
            }
            n += 1;
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{db_rel}: {name}: {e}"));
        assert_eq!(Some(n), e["rows"].as_u64(), "{db_rel}: rows of {name}");
        if let Some(f) = e.get("first") {
            assert_eq!(&J::Array(first), f, "{db_rel}: first rows of {name}");
        }
        assert_eq!(
            format!("{h:016x}"),
            e["fnv"].as_str().unwrap(),
            "{db_rel}: the rows of {name} differ from SQLite's"
        );
    }
    tables.len()
}

#[test]
fn reads_every_row_of_the_synthetic_database_as_sqlite_does() {
    assert_eq!(compare("sqlite/mixed.db", "sqlite/mixed.expected.json"), 4);
}

#[test]
fn reads_every_row_of_the_real_torch_npu_export_as_sqlite_does() {
    let n = compare(
        "torch_npu/msinsight-level0/db/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
        "sqlite/msinsight-level0.expected.json",
    );
    assert_eq!(n, 32);
}

#[test]
fn reads_pages_on_demand_not_the_whole_file() {
    let bytes = fixture(
        "torch_npu/msinsight-level0/db/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
    );
    // Pad the file far beyond its pages: a reader that copies the file would read all of it.
    let mut big = bytes.clone();
    big.resize(64 << 20, 0);
    let src = BytesSource::new("big.db", big);
    let db = Database::open(&src).unwrap();
    let t = db.table("OP_MEMORY").unwrap();
    let mut n = 0;
    db.scan(t, &mut |_| {
        n += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(n, 184);
    assert!(
        db.bytes_read() <= 2 << 20,
        "read {} bytes of a 64 MiB file for one small table",
        db.bytes_read()
    );
}

fn sample_db() -> Vec<u8> {
    fixture(
        "torch_npu/msinsight-level0/db/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
    )
}

/// `(root page, page size)` of `table` in `bytes`.
fn root_of(bytes: &[u8], table: &str) -> (u32, usize) {
    let src = BytesSource::new("x.db", bytes.to_vec());
    let db = Database::open(&src).unwrap();
    (
        db.table(table).unwrap().root,
        db.header().page_size as usize,
    )
}

fn scan_all(bytes: Vec<u8>, table: &str) -> Result<u64, memlens::sqlite::DbError> {
    let src = BytesSource::new("x.db", bytes);
    let db = Database::open(&src)?;
    let t = db.table(table).unwrap().clone();
    let mut n = 0;
    db.scan(&t, &mut |_| {
        n += 1;
        Ok(())
    })?;
    Ok(n)
}

#[test]
fn a_page_cycle_is_an_error_naming_the_pages() {
    let mut b = sample_db();
    let (root, ps) = root_of(&b, "PYTORCH_CALLCHAINS");
    let at = (root as usize - 1) * ps;
    assert_eq!(b[at], 5, "the root of a 4683-row table is an interior page");
    // The right-most child pointer now points back at the root.
    b[at + 8..at + 12].copy_from_slice(&root.to_be_bytes());
    let e = scan_all(b, "PYTORCH_CALLCHAINS").unwrap_err();
    assert!(e.message.contains("page cycle"), "{e}");
    assert!(
        e.message
            .contains(&format!("page {root} points to page {root}")),
        "{e}"
    );
    assert_eq!(e.offset, Some(at as u64));
}

#[test]
fn truncated_wrong_page_type_and_cut_overflow_chains_are_errors() {
    let b = sample_db();
    let e = scan_all(b[..b.len() - 4096].to_vec(), "OP_MEMORY").unwrap_err();
    assert!(e.message.contains("truncated"), "{e}");
    let mut w = b.clone();
    let (root, ps) = root_of(&w, "OP_MEMORY");
    w[(root as usize - 1) * ps] = 10; // an index leaf where a table page belongs
    let e = scan_all(w, "OP_MEMORY").unwrap_err();
    assert!(e.message.contains("page type 10"), "{e}");
    // mixed.db: a row with an overflow chain whose first overflow page number is zeroed.
    let m = fixture("sqlite/mixed.db");
    let src = BytesSource::new("mixed.db", m.clone());
    let db = Database::open(&src).unwrap();
    let t = db.table("mixed values").unwrap();
    let mut long_at = None;
    db.scan(t, &mut |row| {
        if let Value::Text(x) = row.get(3) {
            if x.len() > 2000 && long_at.is_none() {
                long_at = Some(row.offset());
            }
        }
        Ok(())
    })
    .unwrap();
    let cell = long_at.unwrap() as usize;
    // Cell: payload length varint, rowid varint, local payload, 4-byte overflow page number.
    let (len, n1) = memlens::sqlite::record::varint(&m, cell).unwrap();
    let (_, n2) = memlens::sqlite::record::varint(&m, cell + n1).unwrap();
    let u = 1024usize;
    let (max_local, min_local) = (u - 35, (u - 12) * 32 / 255 - 23);
    let k = min_local + (len as usize - min_local) % (u - 4);
    let local = if k <= max_local { k } else { min_local };
    let ptr = cell + n1 + n2 + local;
    let mut cut = m.clone();
    cut[ptr..ptr + 4].copy_from_slice(&0u32.to_be_bytes());
    let e = scan_all(cut, "mixed values").unwrap_err();
    assert!(e.message.contains("overflow chain ends"), "{e}");
}
