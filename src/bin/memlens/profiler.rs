//! `memlens profiler` (alias `ascend`): analyse torch_npu / MindSpore profiler output (run folders, whole jobs, archives).

use memlens::export::profiler as exp;
use memlens::families;
use memlens::profiler::analysis::{analyze_job_parallel, AnalyzeOptions};
use memlens::profiler::job_of;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn write_file(
    dir: &Path,
    name: &str,
    f: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let path = dir.join(name);
    let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    f(&mut w)
        .and_then(|_| w.flush())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the analysis of `paths`; writes CSVs to `out`, prints JSON or a table.
pub fn run(paths: &[PathBuf], out: Option<&Path>, json: bool) -> Result<ExitCode, String> {
    let mut inputs = families::input_set_from_paths(paths);
    let job = job_of(&mut inputs);
    let total = inputs.bytes();
    let tty = std::io::stderr().is_terminal();
    let done = AtomicU64::new(0);
    let last = Mutex::new(Instant::now());
    let progress = |b: u64| {
        let d = done.fetch_add(b, Ordering::Relaxed) + b;
        if !tty {
            return;
        }
        if let Ok(mut l) = last.lock() {
            if l.elapsed() >= Duration::from_millis(200) {
                *l = Instant::now();
                eprint!(
                    "\rread {:.1} / {:.1} MB",
                    d as f64 / 1e6,
                    total as f64 / 1e6
                );
            }
        }
    };
    let analysis = analyze_job_parallel(&inputs, &job, &AnalyzeOptions::default(), &progress);
    if tty {
        eprint!("\r\x1b[K");
    }
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        write_file(dir, "memory_events.csv", &|w| {
            exp::write_memory_events(&analysis, w)
        })?;
        write_file(dir, "rank_summary.csv", &|w| {
            exp::write_rank_summary(&analysis, w)
        })?;
        write_file(dir, "peak_attribution.csv", &|w| {
            exp::write_peak_attribution(&analysis, w)
        })?;
        write_file(dir, "step_peaks.csv", &|w| {
            exp::write_step_peaks(&analysis, w)
        })?;
    }
    let mut stdout = std::io::stdout().lock();
    let io = |e: std::io::Error| e.to_string();
    if json {
        let text = exp::report_json(&analysis, &job).map_err(|e| e.to_string())?;
        stdout.write_all(text.as_bytes()).map_err(io)?;
    } else {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        writeln!(
            stdout,
            "{} rank(s), {} warning(s)",
            analysis.ranks.len(),
            analysis.warnings.len()
        )
        .map_err(io)?;
        writeln!(
            stdout,
            "{:<24} {:>7} {:>7} {:>6} {:>7} {:>7} {:>6} {:>6} {:>11} {:>11} {:>10}",
            "role",
            "rank",
            "rows",
            "cann",
            "direct",
            "via_fwd",
            "approx",
            "none",
            "peak MiB",
            "reserv MiB",
            "unreleased"
        )
        .map_err(io)?;
        for r in &analysis.ranks {
            let s = &r.summary;
            let role = if s.role.is_empty() { "-" } else { &s.role };
            let rank = s.rank.map_or("unknown".to_string(), |r| r.to_string());
            writeln!(
                stdout,
                "{:<24} {:>7} {:>7} {:>6} {:>7} {:>7} {:>6} {:>6} {:>11.1} {:>11.1} {:>10}",
                role,
                rank,
                s.rows,
                s.rows_ge,
                s.stacks.direct,
                s.stacks.via_forward,
                s.stacks.approximate,
                s.stacks.none,
                mib(s.peak_allocated_bytes),
                mib(s.peak_reserved_bytes),
                s.unreleased_rows
            )
            .map_err(io)?;
            for g in s.live_at_peak.iter().take(3) {
                writeln!(
                    stdout,
                    "    at peak: {:>10.1} MiB in {:>5} blocks  {}",
                    mib(g.bytes),
                    g.count,
                    g.frame
                )
                .map_err(io)?;
            }
        }
        for o in &analysis.outliers {
            writeln!(
                stdout,
                "outlier: role {} rank {:?}: peak {:.1} MiB vs role median {:.1} MiB",
                o.role,
                o.rank,
                mib(o.peak_allocated_bytes),
                mib(o.role_median_bytes)
            )
            .map_err(io)?;
        }
        for w in &analysis.warnings {
            writeln!(stdout, "{w}").map_err(io)?;
        }
    }
    let has_data = analysis
        .ranks
        .iter()
        .any(|r| r.summary.rows > 0 || r.summary.peak_source != "none");
    Ok(if has_data {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
