//! `memlens generate`: deterministic synthetic inputs.

use clap::Subcommand;
use memlens::ascend::generate::{generate, GenSpec};
use std::path::PathBuf;
use std::process::ExitCode;

/// What to generate.
#[derive(Subcommand)]
pub enum What {
    /// A torch_npu job: ROLES × RANKS run folders with trace_view.json, operator_memory.csv,
    /// memory_record.csv, npu_module_mem.csv and profiler_info/metadata JSON.
    Ascend {
        /// Folder to write the job into (created).
        #[arg(long)]
        out: PathBuf,
        /// Number of roles (actor, ref, critic, rollout, …).
        #[arg(long, default_value_t = 1)]
        roles: u32,
        /// Ranks per role.
        #[arg(long, default_value_t = 2)]
        ranks: u32,
        /// Approximate trace_view.json size per rank, in MiB (fractions allowed).
        #[arg(long, default_value_t = 1.0)]
        trace_mb: f64,
        /// operator_memory.csv rows per rank.
        #[arg(long, default_value_t = 1000)]
        rows: u32,
        /// Profiler steps per run.
        #[arg(long, default_value_t = 2)]
        steps: u32,
        /// Seed of the pseudo-random choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// Runs the generator and writes its files.
pub fn run(what: What) -> Result<ExitCode, String> {
    match what {
        What::Ascend {
            out,
            roles,
            ranks,
            trace_mb,
            rows,
            steps,
            seed,
        } => {
            let spec = GenSpec {
                roles,
                ranks,
                trace_bytes: (trace_mb.max(0.0) * (1u64 << 20) as f64) as u64,
                rows,
                steps,
                seed,
            };
            let mut n = 0u64;
            generate(&spec, &mut |path, bytes| {
                let p = out.join(path);
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&p, bytes)?;
                n += 1;
                Ok(())
            })
            .map_err(|e| e.to_string())?;
            eprintln!("wrote {n} files under {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}
