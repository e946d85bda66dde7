//! Benchmark: parse + analysis + overwrite check of generated 200,000-node SOMAS dumps, and the
//! two PNG charts of `--out`.
//!
//! Run with `cargo bench --bench somas` (optionally `-- NODES`; under
//! `cargo test` it runs 2,000 nodes). Reports MB/s, seconds per phase and the peak resident memory
//! (`VmHWM`). Timings are printed, never asserted.
// A native benchmark: on wasm32 (`cargo clippy --all-targets --target wasm32-…`) it is empty.
#![cfg_attr(target_arch = "wasm32", no_main)]
#![cfg(not(target_arch = "wasm32"))]

use memlens::export::somas::{chart_bytes, Chart, Image};
use memlens::somas::generate::{generate, Flavor, GenConfig};
use memlens::somas::{self, conflicts};
use std::time::Instant;

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets the peak-RSS counter (`VmHWM`) so each phase reports its own peak (Linux ≥ 4.0).
fn reset_hwm() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this file too, without it:
    // then a small dump keeps the test run short while still exercising the code.
    let bench = std::env::args().any(|a| a == "--bench");
    let nodes: u32 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(if bench { 200_000 } else { 2_000 });
    println!(
        "somas bench: {nodes} nodes, {} rayon threads",
        rayon::current_num_threads()
    );
    for flavor in [Flavor::V24, Flavor::V20] {
        let t = Instant::now();
        let g = generate(&GenConfig {
            flavor,
            nodes,
            seed: 42,
            inject_conflicts: 10,
            task_info: false,
        });
        let gen_s = t.elapsed().as_secs_f64();
        let dir = std::env::temp_dir().join(format!("memlens-bench-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join(flavor.file_name());
        if let Err(e) = std::fs::write(&path, &g.dump) {
            eprintln!("cannot write {}: {e}", path.display());
            return;
        }
        let mb = g.dump.len() as f64 / 1e6;
        drop(g.dump);
        reset_hwm();
        let base_kib = vm_hwm_kib().unwrap_or(0);

        let t = Instant::now();
        let src = match memlens::source::PathSource::open(&path, "bench.ir") {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return;
            }
        };
        let buf = match somas::read_source(&src, None) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{e}");
                return;
            }
        };
        let read_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let model = match somas::parse_dump("bench.ir", &buf) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{e}");
                return;
            }
        };
        let parse_s = t.elapsed().as_secs_f64();
        drop(buf);
        let t = Instant::now();
        let an = somas::analyze(&model, None);
        let analyze_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let c = conflicts::check(&model, &an.lo, &an.hi, conflicts::DEFAULT_LIMIT);
        let conflict_s = t.elapsed().as_secs_f64();
        let total = read_s + parse_s + analyze_s;
        println!(
            "{flavor:?}: {mb:.1} MB, {} nodes, {} tensors, {} control tensors; generate {gen_s:.2} s",
            model.nodes.len(),
            model.tensors.len(),
            model.controls.id.len()
        );
        println!(
            "  read {read_s:.3} s, parse {parse_s:.3} s ({:.0} MB/s), analysis incl. conflict check {analyze_s:.3} s, \
             conflict check alone {conflict_s:.3} s ({} conflicts, {} injected)",
            mb / parse_s,
            c.pairs.len(),
            g.injected.len()
        );
        println!(
            "  end to end (read + parse + analysis): {total:.3} s = {:.0} MB/s; peak RSS while loading and \
             analysing {:.0} MiB (process before loading: {:.0} MiB)",
            mb / total,
            vm_hwm_kib().unwrap_or(0) as f64 / 1024.0,
            base_kib as f64 / 1024.0
        );
        let t = Instant::now();
        let png_bytes: usize = [Chart::InUse, Chart::Total]
            .into_iter()
            .map(|c| chart_bytes(&an, c, Image::Png).map_or(0, |b| b.len()))
            .sum();
        println!(
            "  InUseMemory.png + TotalMemory.png: {:.3} s, {png_bytes} bytes",
            t.elapsed().as_secs_f64()
        );
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_dir(&dir);
    }
}
