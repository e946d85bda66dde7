//! The `memlens` command line: a thin layer over the library, printing what the core returns.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod generate;
mod inspect;
mod profiler;
mod somas;

/// Memory analyzer for Ascend NPU training jobs (torch_npu profiler output, MindSpore SOMAS dumps).
#[derive(Parser)]
#[command(name = "memlens", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Classify files and folders: SOMAS dumps, task-info files, torch_npu run folders, unknown files.
    Inspect {
        /// Files or folders to look at.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Analyse torch_npu / MindSpore profiler memory: run folders, role/step folders, whole jobs,
    /// or .zip/.tar/.tar.gz archives (`ascend` is the same command under its former name).
    #[command(visible_alias = "ascend")]
    Profiler {
        /// Files, folders or archives to analyse.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Write memory_events.csv, rank_summary.csv, peak_attribution.csv and step_peaks.csv here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print one JSON object (ranks, matrix, outliers, ignored files, warnings, job totals).
        #[arg(long)]
        json: bool,
    },
    /// Analyse a MindSpore SOMAS dump (any version): overview, curves, peak, overwrite conflicts,
    /// task-info address check, node / tensor / address queries; --out writes somas_tool's files.
    ///
    /// Exit codes: 0 success (conflicts are results), 2 bad input, 3 conflicts with
    /// --fail-on-conflict.
    Somas(somas::Args),
    /// Write deterministic synthetic inputs for tests, examples and benchmarks.
    Generate {
        #[command(subcommand)]
        what: generate::What,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect { paths, json } => inspect::run(&paths, json),
        Command::Profiler { paths, out, json } => profiler::run(&paths, out.as_deref(), json),
        Command::Somas(args) => somas::run(&args),
        Command::Generate { what } => generate::run(what),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("memlens: {message}");
            ExitCode::from(2)
        }
    }
}
