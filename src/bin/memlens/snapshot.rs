//! `memlens snapshot`: analyse a PyTorch / torch_npu memory snapshot (`_dump_snapshot` pickle).
//!
//! Exit codes: 0 success, 2 bad input.

use memlens::export::snapshot as exp;
use memlens::snapshot::{self, analysis, summary::group_label};
use memlens::source::PathSource;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `memlens snapshot`.
#[derive(clap::Args)]
pub struct Args {
    /// The snapshot pickle (any name: a `.json` file may be a pickle).
    pub file: PathBuf,
    /// Write summary.json and the CSV files (segments, blocks, allocations, groups by frame,
    /// OOMs) to this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print one JSON object (the same as summary.json) instead of text.
    #[arg(long)]
    pub json: bool,
}

fn write_file(
    dir: &Path,
    name: &str,
    f: &dyn Fn(&mut dyn Write) -> Option<std::io::Result<()>>,
) -> Result<(), String> {
    let path = dir.join(name);
    let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    f(&mut w)
        .unwrap_or(Ok(()))
        .and_then(|_| w.flush())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads, analyses and reports one snapshot.
pub fn run(args: &Args) -> Result<ExitCode, String> {
    let src =
        PathSource::open(&args.file, args.file.display().to_string()).map_err(|e| e.to_string())?;
    let snap = match snapshot::read(&src) {
        Ok(s) => s,
        Err(d) => {
            eprintln!("{d}");
            return Ok(ExitCode::from(2));
        }
    };
    let a = analysis::analyse(&snap);
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for name in exp::FILES {
            write_file(dir, name, &|w| exp::write_named(name, &snap, &a, w))?;
        }
    }
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| e.to_string();
    if args.json {
        out.write_all(exp::summary_json(&snap, &a).as_bytes())
            .map_err(io)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mib = |b: i64| b as f64 / (1u64 << 20) as f64;
    writeln!(
        out,
        "{}: pickle protocol {}, {} segments, {} frames, {} stacks",
        snap.file,
        snap.protocol,
        snap.segments.len(),
        snap.frames.len(),
        snap.stacks.len() - 1
    )
    .map_err(io)?;
    for d in &a.devices {
        writeln!(
            out,
            "device {}: reserved {:.1} MiB in {} segments, allocated {:.1} MiB in {} blocks; {} trace entries, {} OOMs",
            d.device,
            mib(d.reserved_bytes as i64),
            d.segments.len(),
            mib(d.allocated_bytes as i64),
            d.by_state[0].count,
            d.trace_entries,
            d.ooms.len()
        )
        .map_err(io)?;
        let at = match (d.peak_trace_index, d.peak_time_us) {
            (Some(i), Some(t)) => format!("at entry {i} (time_us {t})"),
            (Some(i), None) => format!("at entry {i}"),
            _ => "before the first entry".to_string(),
        };
        writeln!(
            out,
            "  peak allocated {:.1} MiB {at}",
            mib(d.peak_allocated_bytes)
        )
        .map_err(io)?;
        for g in d.live_at_peak.iter().take(5) {
            writeln!(
                out,
                "    at peak: {:>10.1} MiB in {:>6} allocations  {}",
                mib(g.bytes as i64),
                g.count,
                group_label(&snap, g.frame)
            )
            .map_err(io)?;
        }
        writeln!(
            out,
            "  free in segments {:.1} MiB, largest free block {:.1} MiB",
            mib(d.fragmentation.iter().map(|f| f.free as i64).sum()),
            mib(d.largest_free_block as i64)
        )
        .map_err(io)?;
        for o in &d.ooms {
            writeln!(
                out,
                "  OOM at entry {}: {:.1} MiB requested, {} free",
                o.index,
                mib(o.size as i64),
                o.device_free.map_or("unknown".to_string(), |f| format!(
                    "{:.1} MiB",
                    mib(f as i64)
                ))
            )
            .map_err(io)?;
        }
    }
    for w in &snap.warnings {
        writeln!(out, "{w}").map_err(io)?;
    }
    Ok(ExitCode::SUCCESS)
}
