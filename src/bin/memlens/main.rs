//! The `memlens` command line: a thin layer over the library, printing what the core returns.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod inspect;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect { paths, json } => inspect::run(&paths, json),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("memlens: {message}");
            ExitCode::from(2)
        }
    }
}
