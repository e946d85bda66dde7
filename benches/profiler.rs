//! Benchmark of the torch_npu pipeline against the Python tool it replaces.
//!
//! `cargo bench --bench profiler` generates (once, cached under `target/bench-profiler/`) a job of
//! 2 roles × 2 ranks, a 100 MiB `trace_view.json` and 50,000 operator_memory rows per rank
//! (`memlens generate profiler --roles 2 --ranks 2 --trace-mb 100 --rows 50000 --seed 1`), then
//! measures:
//! - end to end (discover, read, join, analyse, write `memory_events.csv`), in a child process so
//!   its peak RSS (`VmHWM`) is the analysis alone, not the generator's;
//! - trace scanning speed with 1 thread (with each structural scan: blocks with AVX2, the same
//!   without the cursor that keeps a block's masks between events, blocks with SSE2, the scalar
//!   reference) and with all threads;
//! - the CLI itself, `memlens profiler JOB --json` and `--out DIR`, wall time and peak RSS (GNU
//!   `time`), as a user runs it;
//! - the Python re-implementation `benches/rl_insight_memory_parser.py` on the same job, in the
//!   same run (needs `pip install ijson`; pandas optional), so the speed-up is a same-machine ratio.
//!
//! Environment: `MEMLENS_BENCH_RUNS` (default 3) end-to-end repetitions.
// A native benchmark: on wasm32 (`cargo clippy --all-targets --target wasm32-…`) it is empty.
#![cfg_attr(target_arch = "wasm32", no_main)]
#![cfg(not(target_arch = "wasm32"))]

use memlens::jsonscan::blocks::{use_kernel, Kernel};
use memlens::profiler::analysis::{analyze_job_parallel, AnalyzeOptions};
use memlens::profiler::generate::{generate, GenSpec};
use memlens::profiler::trace::{read_trace, TraceOptions};
use memlens::profiler::{discover_job, Interner};
use memlens::source::PathSource;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const SPEC: GenSpec = GenSpec {
    roles: 2,
    ranks: 2,
    trace_bytes: 100 << 20,
    rows: 50_000,
    steps: 4,
    seed: 1,
    outlier: false,
};

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

/// CPU time of this process so far, all its threads, in seconds (Linux): on a shared machine the
/// wall clock counts the other processes too, so the scan reports both. From `/proc/self/stat`
/// (user + system time in the kernel's fixed 100 Hz ticks), which keeps the time of threads that
/// have ended: each scan's thread pool is dropped after it, and a sum over the live threads' own
/// counters then loses their time and can go backwards.
fn process_cpu_s() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // The fields after the command name (which may hold blanks, so split after its closing `)`).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // `rest` starts at field 3, the state, which is not a number and drops out: fields 14 and
    // 15 are then at indexes 10 and 11.
    let ticks = f.get(10).copied().unwrap_or(0.0) + f.get(11).copied().unwrap_or(0.0);
    ticks / 100.0
}

fn job_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-profiler/job")
}

fn ensure_job(dir: &Path) {
    let marker = dir.join(".spec");
    let want = format!(
        "{SPEC:?} v{}",
        memlens::profiler::generate::GENERATOR_VERSION
    );
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(want.as_str()) {
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
    let t = Instant::now();
    generate(&SPEC, &mut |path, bytes| {
        let p = dir.join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, bytes)
    })
    .expect("generate the benchmark job");
    std::fs::write(&marker, want).expect("write marker");
    eprintln!(
        "generated {} in {:.1} s",
        dir.display(),
        t.elapsed().as_secs_f64()
    );
}

/// One end-to-end run (child process): prints `seconds rows vmhwm_kb`. With `csv`, the run also
/// writes `memory_events.csv` (as `memlens profiler --out` does).
fn child_e2e(dir: &Path, out: &Path, csv: bool) {
    let t = Instant::now();
    let mut inputs = memlens::families::input_set_from_paths(&[dir.to_path_buf()]);
    let job = discover_job(inputs.classify());
    let a = analyze_job_parallel(&inputs, &job, &AnalyzeOptions::default(), &|_| {});
    if csv {
        let f = std::fs::File::create(out).expect("create csv");
        memlens::export::profiler::write_memory_events(&a, std::io::BufWriter::new(f))
            .expect("write csv");
    }
    let rows: u64 = a.ranks.iter().map(|r| r.summary.rows).sum();
    println!("{} {} {}", t.elapsed().as_secs_f64(), rows, vm_hwm_kb());
}

/// The numbers of `line`, split at blanks.
fn numbers(line: &str) -> Vec<f64> {
    line.split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect()
}

/// Calls `once` `runs` times (at least once); the runs that gave a result, sorted by their wall
/// seconds (the first element), so `[0]` is the best and `[len / 2]` the median.
fn timed_runs<T>(runs: usize, mut once: impl FnMut() -> Option<(f64, T)>) -> Vec<(f64, T)> {
    let mut v: Vec<(f64, T)> = (0..runs.max(1)).filter_map(|_| once()).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// The best and the median run.
fn best_and_median<T: Copy + Default>(v: &[(f64, T)]) -> ((f64, T), (f64, T)) {
    (
        v.first().copied().unwrap_or_default(),
        v.get(v.len() / 2).copied().unwrap_or_default(),
    )
}

/// One in-process run: wall seconds, (rows, VmHWM KiB).
type E2eRun = (f64, (u64, u64));

/// Runs `exe` `runs` times in child mode; the best and the median run.
fn e2e_runs(exe: &Path, runs: usize, csv: bool) -> (E2eRun, E2eRun) {
    let v = timed_runs(runs, || {
        let o = Command::new(exe)
            .env("MEMLENS_BENCH_CHILD", if csv { "csv" } else { "analyze" })
            .output()
            .ok()?;
        let [s, rows, kb] = numbers(&String::from_utf8_lossy(&o.stdout))[..] else {
            return None;
        };
        Some((s, (rows as u64, kb as u64)))
    });
    best_and_median(&v)
}

/// Runs the CLI (`memlens profiler DIR ARGS`, stdout discarded) `runs` times under GNU `time`;
/// the median by wall time of (wall seconds, (peak RSS KiB, CPU seconds: user + system)), or
/// `None` without `/usr/bin/time` or on failure.
fn cli_runs(dir: &Path, args: &[&std::ffi::OsStr], runs: usize) -> Option<(f64, (u64, f64))> {
    let v = timed_runs(runs, || {
        let t = Instant::now();
        let o = Command::new("/usr/bin/time")
            .args(["-f", "%U %S %M", env!("CARGO_BIN_EXE_memlens"), "profiler"])
            .arg(dir)
            .args(args)
            .stdout(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let secs = t.elapsed().as_secs_f64();
        let [user, sys, kb] = numbers(String::from_utf8_lossy(&o.stderr).lines().last()?)[..]
        else {
            return None;
        };
        Some((secs, (kb as u64, user + sys)))
    });
    // Every run must have succeeded for the figure to stand.
    if v.len() < runs.max(1) {
        return None;
    }
    v.get(v.len() / 2).copied()
}

/// Runs the Python re-implementation; returns (seconds, (rows, peak RSS KiB, pandas)).
fn python(script: &Path, dir: &Path, out: &Path, write: bool) -> Option<(f64, (u64, u64, bool))> {
    let mut cmd = Command::new("python3");
    cmd.arg(script).arg(dir).arg(out);
    if !write {
        cmd.arg("--no-write");
    }
    let o = cmd.output().ok().filter(|o| o.status.success())?;
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).ok()?;
    let rss = v["maxrss_self_kb"].as_u64()? + v["maxrss_children_kb"].as_u64()?;
    Some((
        v["seconds"].as_f64()?,
        (v["rows"].as_u64()?, rss, v["pandas"].as_bool()?),
    ))
}

/// One line of ratios against the Python tool: its time over ours (speed-up) and our peak RSS
/// over its, for the two runs named in `what` (each a pair of wall seconds and peak RSS KiB).
fn vs_python(what: &str, python: [(f64, u64); 2], ours: [(f64, u64); 2]) {
    let speed = |k: usize| python[k].0 / ours[k].0.max(1e-9);
    let rss = |k: usize| ours[k].1 as f64 / python[k].1.max(1) as f64;
    println!(
        "{what}: {:.1}x and {:.1}x faster; peak RSS {:.2}x and {:.2}x of python's",
        speed(0),
        speed(1),
        rss(0),
        rss(1)
    );
}

fn main() {
    let dir = job_dir();
    let out = dir.parent().unwrap_or(&dir).join("memory_events.csv");
    if let Ok(mode) = std::env::var("MEMLENS_BENCH_CHILD") {
        child_e2e(&dir, &out, mode == "csv");
        return;
    }
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench binaries without `--bench`: this benchmark takes
        // minutes and gigabytes, so it runs only under `cargo bench`.
        println!("profiler benchmark: run it with `cargo bench --bench profiler`");
        return;
    }
    ensure_job(&dir);
    let exe = std::env::current_exe().expect("own path");
    let runs: usize = std::env::var("MEMLENS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // `MEMLENS_BENCH_ONLY=scan`: only the trace scans (a minute, where the whole bench with the
    // Python stand-in takes several), to weigh a change of the scan before and after.
    let scan_only = std::env::var("MEMLENS_BENCH_ONLY").is_ok_and(|v| v == "scan");
    let (best, median) = if scan_only {
        Default::default()
    } else {
        e2e_runs(&exe, runs, false)
    };
    let (best_csv, median_csv) = if scan_only {
        Default::default()
    } else {
        e2e_runs(&exe, runs, true)
    };

    // Trace scanning: one 100 MiB trace, 1 thread, then all threads.
    let mut inputs = memlens::families::input_set_from_paths(std::slice::from_ref(&dir));
    let inv = inputs.classify();
    let job = discover_job(inv);
    let trace = job
        .ranks
        .first()
        .and_then(|r| r.runs.first())
        .and_then(|r| r.files.trace_view.clone())
        .expect("a trace");
    let disk = dir.parent().unwrap_or(&dir).join(&trace);
    // (best wall seconds, bytes, CPU seconds of that run)
    let scan = |threads: usize| -> (f64, u64, f64) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        pool.install(|| {
            let (mut best, mut cpu) = (f64::MAX, 0.0);
            let mut bytes = 0;
            for _ in 0..3 {
                let src = PathSource::open(&disk, trace.clone()).expect("open trace");
                let (mut n, mut s) = (Interner::new(), Interner::new());
                let c = process_cpu_s();
                let t = Instant::now();
                let tr =
                    read_trace(&src, &mut n, &mut s, TraceOptions::default(), None).expect("scan");
                let wall = t.elapsed().as_secs_f64();
                if wall < best {
                    (best, cpu) = (wall, process_cpu_s() - c);
                }
                bytes = tr.bytes;
            }
            (best, bytes, cpu)
        })
    };
    let threads = rayon::current_num_threads();
    let (t1, bytes, c1) = scan(1);
    use_kernel(Kernel::Uncached);
    let (t1_uncached, _, c1_uncached) = scan(1);
    use_kernel(Kernel::NoAvx2);
    let (t1_sse2, _, c1_sse2) = scan(1);
    use_kernel(Kernel::Scalar);
    let (t1_scalar, _, c1_scalar) = scan(1);
    use_kernel(Kernel::Best);
    let (tn, _, cn) = scan(threads);

    let mbs = |t: f64| bytes as f64 / 1e6 / t;
    let print_scan = || {
        println!(
            "trace scan: {:.0} MB/s with 1 thread; {:.0} MB/s with {} threads ({:.0} MB/s per core)",
            mbs(t1),
            mbs(tn),
            threads,
            mbs(tn) / threads as f64
        );
        println!(
            "trace scan, 1 thread, by structural scan: blocks (best: AVX2 where the processor has it) {:.0} MB/s, blocks each classified from the event's start (no cursor) {:.0} MB/s ({:.2}x), blocks SSE2 {:.0} MB/s, scalar reference {:.0} MB/s ({:.2}x)",
            mbs(t1),
            mbs(t1_uncached),
            t1_uncached / t1.max(1e-9),
            mbs(t1_sse2),
            mbs(t1_scalar),
            t1_scalar / t1.max(1e-9)
        );
        println!(
            "trace scan per CPU second (the same runs): AVX2 {:.0} MB/s, no cursor {:.0} MB/s, SSE2 {:.0} MB/s, scalar {:.0} MB/s; {} threads {:.0} MB/s per CPU second",
            mbs(c1),
            mbs(c1_uncached),
            mbs(c1_sse2),
            mbs(c1_scalar),
            threads,
            mbs(cn)
        );
    };
    if scan_only {
        println!(
            "load average {}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim()
        );
        print_scan();
        return;
    }

    // The CLI as a user runs it, same job.
    let cli_out = dir.parent().unwrap_or(&dir).join("cli-out");
    let cli_json = cli_runs(&dir, &["--json".as_ref()], runs);
    let cli_csv = cli_runs(&dir, &["--out".as_ref(), cli_out.as_os_str()], runs);

    // The Python re-implementation, same job, same machine, same run; best of two each.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/rl_insight_memory_parser.py");
    let py_out = dir
        .parent()
        .unwrap_or(&dir)
        .join("python_memory_events.csv");
    let best_of = |write: bool| {
        timed_runs(2, || python(&script, &dir, &py_out, write))
            .into_iter()
            .next()
    };
    let py_mem = best_of(false);
    let py_csv = best_of(true);

    let mb = |kb: u64| kb as f64 / 1024.0;
    println!("memlens profiler benchmark: 2 roles x 2 ranks, 100 MiB trace_view.json + 50,000 rows per rank");
    println!(
        "machine: {} threads, load average {}",
        threads,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "memlens to in-memory result: best {:.3} s, median {:.3} s over {runs} runs ({} rows), peak RSS {:.1} MB",
        best.0, median.0, best.1 .0, mb(median.1 .1)
    );
    println!(
        "memlens incl. writing memory_events.csv: best {:.3} s, median {:.3} s, peak RSS {:.1} MB",
        best_csv.0,
        median_csv.0,
        mb(median_csv.1 .1)
    );
    print_scan();
    for (what, r) in [("--json", cli_json), ("--out DIR", cli_csv)] {
        match r {
            Some((s, (kb, cpu))) => println!(
                "CLI memlens profiler JOB {what}: median {s:.3} s over {runs} runs (CPU {cpu:.3} s), peak RSS {:.1} MB",
                mb(kb)
            ),
            None => println!("CLI memlens profiler JOB {what}: not run (needs /usr/bin/time, GNU time)"),
        }
    }
    match (py_mem, py_csv) {
        (Some(m), Some(c)) => {
            println!(
                "python re-implementation to DataFrame: {:.2} s, {} rows, peak RSS {:.1} MB (parent + largest worker), pandas {}",
                m.0, m.1 .0, mb(m.1 .1), m.1 .2
            );
            println!(
                "python re-implementation incl. CSV: {:.2} s, peak RSS {:.1} MB",
                c.0,
                mb(c.1 .1)
            );
            let py = [(m.0, m.1 .1), (c.0, c.1 .1)];
            vs_python(
                "speed-up (median): to the in-memory result, incl. CSV",
                py,
                [(median.0, median.1 .1), (median_csv.0, median_csv.1 .1)],
            );
            if let (Some(j), Some(o)) = (cli_json, cli_csv) {
                vs_python(
                    "CLI vs python: --json, --out",
                    py,
                    [(j.0, j.1 .0), (o.0, o.1 .0)],
                );
            }
        }
        _ => println!(
            "python re-implementation: not run (needs python3 with ijson: pip install ijson; pandas optional)"
        ),
    }
}
