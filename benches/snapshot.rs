//! Benchmark: reading and analysing a generated memory snapshot.
//!
//! Run with `cargo bench --bench snapshot` (optionally `-- MIB` for the file size, default 512;
//! under `cargo test` it runs 4 MiB). Writes the pickle to the temp folder with the generator,
//! then reports, in one run: the reader alone (MB/s), reader + analysis, the peak resident memory
//! of each as a fraction of the file size, the model's own heap bytes, and — when `python3` is on
//! the PATH and the file is at most 300 MB — `pickle.load` of the same file as the ratio
//! Python / memlens. Wall and CPU time are both printed, never asserted.
// A native benchmark: on wasm32 (`cargo clippy --all-targets --target wasm32-…`) it is empty.
#![cfg_attr(target_arch = "wasm32", no_main)]
#![cfg(not(target_arch = "wasm32"))]

use memlens::snapshot::generate::{generate, GenConfig, GenLayout};
use memlens::snapshot::{self, analysis};
use memlens::source::PathSource;
use std::time::Instant;

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn vm_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time of this thread so far, in seconds (Linux): on a shared machine the wall clock
/// counts the other processes too, so both are reported.
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

/// Resets the peak-RSS counter (`VmHWM`) so each phase reports its own peak (Linux ≥ 4.0).
fn reset_hwm() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let mib: f64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(if bench { 512.0 } else { 4.0 });
    let dir = std::env::temp_dir().join(format!("memlens-snapshot-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    for (label, layout, devices, expandable) in [
        (
            "current layout, 2 devices, expandable",
            GenLayout::Current,
            2,
            true,
        ),
        ("torch-2.0 layout, 1 device", GenLayout::Torch20, 1, false),
    ] {
        let path = dir.join("bench.pickle");
        let cfg = GenConfig {
            target_bytes: (mib * (1u64 << 20) as f64) as u64,
            devices,
            seed: 7,
            layout,
            protocol: 4,
            expandable,
            ooms: 2,
            max_depth: 300,
        };
        let t = Instant::now();
        let stats = match std::fs::File::create(&path)
            .and_then(|f| generate(&cfg, std::io::BufWriter::with_capacity(1 << 20, f)))
        {
            Ok(s) => s,
            Err(e) => {
                eprintln!("cannot write {}: {e}", path.display());
                return;
            }
        };
        let gen_s = t.elapsed().as_secs_f64();
        let mb = stats.bytes as f64 / 1e6;
        let entries: u64 = stats.devices.iter().map(|d| d.entries).sum();
        println!(
            "snapshot bench: {label}: {:.1} MB, {entries} trace entries (generated in {gen_s:.2} s)",
            mb
        );

        reset_hwm();
        let base_kib = vm_rss_kib().unwrap_or(0);
        let t = Instant::now();
        let c = cpu_s();
        let src = match PathSource::open(&path, "bench.pickle") {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return;
            }
        };
        let snap = match snapshot::read(&src) {
            Ok(s) => s,
            Err(d) => {
                eprintln!("{d}");
                return;
            }
        };
        let read_s = t.elapsed().as_secs_f64();
        let read_cpu = cpu_s() - c;
        let read_peak = vm_hwm_kib().unwrap_or(0).saturating_sub(base_kib);
        let t = Instant::now();
        let a = analysis::analyse(&snap);
        let analyse_s = t.elapsed().as_secs_f64();
        let total_peak = vm_hwm_kib().unwrap_or(0).saturating_sub(base_kib);
        let frac = |kib: u64| kib as f64 * 1024.0 / stats.bytes as f64;
        println!(
            "  read:            {read_s:.3} s = {:.0} MB/s (CPU {read_cpu:.3} s = {:.0} MB/s), peak RSS +{:.0} MiB = {:.2} × file",
            mb / read_s,
            mb / read_cpu.max(1e-9),
            read_peak as f64 / 1024.0,
            frac(read_peak)
        );
        println!(
            "  read + analyse:  {:.3} s = {:.0} MB/s, peak RSS +{:.0} MiB = {:.2} × file; model heap {:.0} MiB, {} elements",
            read_s + analyse_s,
            mb / (read_s + analyse_s),
            total_peak as f64 / 1024.0,
            frac(total_peak),
            snap.heap_bytes() as f64 / (1u64 << 20) as f64,
            a.devices.iter().map(|d| d.elements.len()).sum::<usize>()
        );
        drop(a);
        drop(snap);
        if mb > 300.0 {
            // pickle.load of a large snapshot takes several times the file size in memory.
            println!("  python3 pickle.load: skipped above 300 MB");
            let _ = std::fs::remove_file(&path);
            continue;
        }
        let t = Instant::now();
        let py = std::process::Command::new("python3")
            .arg("-c")
            .arg("import pickle,sys; pickle.load(open(sys.argv[1], 'rb'))")
            .arg(&path)
            .status();
        if let Ok(s) = py {
            if s.success() {
                let py_s = t.elapsed().as_secs_f64();
                println!(
                    "  python3 pickle.load of the same file: {py_s:.3} s ({:.1}× the memlens read)",
                    py_s / read_s
                );
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir(&dir);
}
