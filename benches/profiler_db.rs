//! Benchmark of the torch_npu database export: the db path against the text path on the same
//! job, and our SQLite reader against the SQLite library (`rusqlite`) on the same database.
//!
//! `cargo bench --bench profiler_db` generates (once, cached under `target/bench-profiler-db/`) one
//! rank with 50,000 operator_memory rows and a 1 GiB `trace_view.json`, as text and as a database
//! export (`memlens generate profiler --roles 1 --ranks 1 --trace-mb 1024 --rows 50000 --steps 4
//! --seed 1 [--export db]`; the db holds one `PYTORCH_API` row per event of that trace), then
//! measures, alternating the two so the machine's load moves both alike:
//! - end to end (discover, read, join, analyse), in child processes so each peak RSS (`VmHWM`) is
//!   the analysis alone;
//! - a full read of the tables memory analysis reads (every value of every row) with our reader and
//!   with rusqlite (bundled SQLite, `SELECT *`), on the generated db and on the real sample db.
//!
//! Environment: `MEMLENS_BENCH_RUNS` (default 3) repetitions.
// A native benchmark: on wasm32 (`cargo clippy --all-targets --target wasm32-…`) it is empty.
#![cfg_attr(target_arch = "wasm32", no_main)]
#![cfg(not(target_arch = "wasm32"))]

use memlens::profiler::analysis::{analyze_job_parallel, AnalyzeOptions};
use memlens::profiler::generate::{db::generate_db, generate, GenSpec};
use memlens::source::PathSource;
use memlens::sqlite::{Database, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const SPEC: GenSpec = GenSpec {
    roles: 1,
    ranks: 1,
    trace_bytes: 1 << 30,
    rows: 50_000,
    steps: 4,
    seed: 1,
    outlier: false,
};

/// The tables the db mapping reads.
const TABLES: [&str; 11] = [
    "STRING_IDS",
    "RANK_DEVICE_MAP",
    "NPU_OP_MEM",
    "OP_MEMORY",
    "NPU_MEM",
    "MEMORY_RECORD",
    "ENUM_MODULE",
    "NPU_MODULE_MEM",
    "ENUM_API_TYPE",
    "PYTORCH_CALLCHAINS",
    "PYTORCH_API",
];

fn vm_hwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn base() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-profiler-db")
}

/// Generates the job into `dir/job` as text or db, unless the marker says it is there.
fn ensure(dir: &Path, db: bool) {
    let marker = dir.join(".spec");
    let want = format!(
        "{SPEC:?} db={db} v{}",
        memlens::profiler::generate::GENERATOR_VERSION
    );
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(want.as_str()) {
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("bench folder");
    let job = dir.join("job");
    let t = Instant::now();
    let mut sink = |path: &str, bytes: Vec<u8>| {
        let p = job.join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, bytes)
    };
    if db {
        generate_db(&SPEC, dir, &mut sink).expect("generate the db job");
    } else {
        generate(&SPEC, &mut sink).expect("generate the text job");
    }
    std::fs::write(&marker, want).expect("write marker");
    eprintln!(
        "generated {} in {:.1} s",
        job.display(),
        t.elapsed().as_secs_f64()
    );
}

/// One end-to-end run (child process): prints `seconds rows source vmhwm_kb`.
fn child_e2e(dir: &Path) {
    let t = Instant::now();
    let mut inputs = memlens::families::input_set_from_paths(&[dir.to_path_buf()]);
    let job = memlens::profiler::job_of(&mut inputs);
    let a = analyze_job_parallel(&inputs, &job, &AnalyzeOptions::default(), &|_| {});
    let secs = t.elapsed().as_secs_f64();
    let rows: u64 = a.ranks.iter().map(|r| r.summary.rows).sum();
    let source = a.ranks.first().map_or("none", |r| r.summary.source);
    println!("{secs} {rows} {source} {}", vm_hwm_kb());
}

fn run_child(exe: &Path, dir: &Path) -> (f64, u64, String, u64) {
    let out = Command::new(exe)
        .args(["--child-e2e", &dir.to_string_lossy()])
        .output()
        .expect("run the child");
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<&str> = text.split_whitespace().collect();
    (
        f.first().and_then(|v| v.parse().ok()).unwrap_or(f64::NAN),
        f.get(1).and_then(|v| v.parse().ok()).unwrap_or(0),
        f.get(2).unwrap_or(&"?").to_string(),
        f.get(3).and_then(|v| v.parse().ok()).unwrap_or(0),
    )
}

/// Every value of every row of `TABLES` with our reader: (seconds, rows, a checksum).
fn ours(path: &Path) -> (f64, u64, u64) {
    let t = Instant::now();
    let src = PathSource::open(path, "bench.db").expect("open");
    let db = Database::open(&src).expect("an SQLite file");
    let (mut rows, mut sum) = (0u64, 0u64);
    for name in TABLES {
        let Some(table) = db.table(name) else {
            continue;
        };
        let cols = table.columns.len();
        db.scan(table, &mut |row| {
            rows += 1;
            for i in 0..cols {
                sum = sum.wrapping_add(match row.get(i) {
                    Value::Integer(v) => v as u64,
                    Value::Real(v) => v.to_bits(),
                    Value::Text(b) | Value::Blob(b) => b.len() as u64,
                    Value::Null => 1,
                });
            }
            Ok(())
        })
        .expect("scan");
    }
    (t.elapsed().as_secs_f64(), rows, sum)
}

/// The same with the SQLite library: `SELECT *` of each table, every value read.
fn sqlite(path: &Path) -> (f64, u64, u64) {
    use rusqlite::types::ValueRef;
    let t = Instant::now();
    let con = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open");
    let (mut rows, mut sum) = (0u64, 0u64);
    for name in TABLES {
        let Ok(mut st) = con.prepare(&format!("SELECT * FROM \"{name}\"")) else {
            continue;
        };
        let cols = st.column_count();
        let mut q = st.query([]).expect("query");
        while let Some(row) = q.next().expect("row") {
            rows += 1;
            for i in 0..cols {
                sum = sum.wrapping_add(match row.get_ref(i).expect("value") {
                    ValueRef::Integer(v) => v as u64,
                    ValueRef::Real(v) => v.to_bits(),
                    ValueRef::Text(b) | ValueRef::Blob(b) => b.len() as u64,
                    ValueRef::Null => 1,
                });
            }
        }
    }
    (t.elapsed().as_secs_f64(), rows, sum)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn find_db(dir: &Path) -> PathBuf {
    let (files, _) = memlens::source::list_paths(&[dir.to_path_buf()]);
    files
        .into_iter()
        .find(|f| f.rel_path.ends_with(".db"))
        .map(|f| f.disk_path)
        .expect("a db in the job")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child-e2e") {
        child_e2e(Path::new(&args[i + 1]));
        return;
    }
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench binaries without `--bench`: this benchmark
        // generates and reads gigabytes, so it runs only under `cargo bench`.
        println!("profiler_db benchmark: run it with `cargo bench --bench profiler_db`");
        return;
    }
    let runs: usize = std::env::var("MEMLENS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let (text_dir, db_dir) = (base().join("text"), base().join("db"));
    ensure(&text_dir, false);
    ensure(&db_dir, true);
    let db_file = find_db(&db_dir);
    let size = |p: &Path| -> u64 {
        let (files, _) = memlens::source::list_paths(&[p.to_path_buf()]);
        files.iter().map(|f| f.size).sum()
    };
    println!(
        "job: 1 rank, 50,000 rows; text export {:.0} MiB, db export {:.0} MiB",
        size(&text_dir.join("job")) as f64 / (1 << 20) as f64,
        size(&db_dir.join("job")) as f64 / (1 << 20) as f64
    );
    let exe = std::env::current_exe().expect("own path");
    let (mut tt, mut td) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = run_child(&exe, &text_dir.join("job"));
        let d = run_child(&exe, &db_dir.join("job"));
        println!(
            "end to end: text {:.3} s ({} rows, {}, {} MiB peak RSS); db {:.3} s ({} rows, {}, {} MiB peak RSS)",
            t.0,
            t.1,
            t.2,
            t.3 / 1024,
            d.0,
            d.1,
            d.2,
            d.3 / 1024
        );
        tt.push(t.0);
        td.push(d.0);
    }
    let (mt, md) = (median(tt), median(td));
    println!(
        "end to end, median of {runs}: text {mt:.3} s, db {md:.3} s: db/text = {:.2}",
        md / mt
    );
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "fixtures/torch_npu/msinsight-level0/db/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
    );
    for (what, path, reps) in [
        ("generated db", &db_file, runs),
        ("real sample db", &sample, 50),
    ] {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut counts = (0, 0, 0, 0);
        for _ in 0..reps {
            let o = ours(path);
            let s = sqlite(path);
            counts = (o.1, s.1, o.2, s.2);
            a.push(o.0);
            b.push(s.0);
        }
        assert_eq!(counts.0, counts.1, "both read the same rows");
        let (ma, mb) = (median(a), median(b));
        println!(
            "full read of the {} tables memory analysis reads, {what} ({} rows; value checksums {}): ours {:.2} ms, SQLite (rusqlite) {:.2} ms: ours/SQLite = {:.2}",
            TABLES.len(),
            counts.0,
            if counts.2 == counts.3 { "equal" } else { "DIFFER" },
            ma * 1e3,
            mb * 1e3,
            ma / mb
        );
    }
}
