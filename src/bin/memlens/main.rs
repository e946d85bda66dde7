//! The `memlens` command line: a thin layer over the library, printing what the core returns.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod generate;
mod inspect;
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
    /// Analyse a MindSpore SOMAS dump (any version): overview, curves, peak, overwrite conflicts,
    /// task-info address check, node / tensor / address queries; --out writes somas_tool's files.
    ///
    /// Exit codes: 0 success (conflicts are results), 2 bad input, 3 conflicts with
    /// --fail-on-conflict.
    Somas {
        /// The dump: *_somas_tensor_offset_*.ir or any other SOMAS dump.
        file: PathBuf,
        /// task_info_graph_*.ir of the same graph (real addresses).
        #[arg(long, value_name = "FILE")]
        task_info: Option<PathBuf>,
        /// Write somas_tool's file set to this folder.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Inspect a node: name (full or after the last '/') or execution index.
        #[arg(long, value_name = "NAME|INDEX")]
        node: Option<String>,
        /// Inspect a data tensor by id.
        #[arg(long, value_name = "ID")]
        tensor: Option<u32>,
        /// List the tensors using this address.
        #[arg(long, value_name = "HEX")]
        address: Option<String>,
        /// List the tensors using addresses in [START, END).
        #[arg(long, value_name = "HEX-HEX")]
        address_range: Option<String>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Exit with code 3 when overwrite conflicts are found (for CI gates).
        #[arg(long)]
        fail_on_conflict: bool,
    },
    /// Generate synthetic inputs for tests and benchmarks.
    Generate {
        #[command(subcommand)]
        what: generate::What,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect { paths, json } => inspect::run(&paths, json),
        Command::Somas {
            file,
            task_info,
            out,
            node,
            tensor,
            address,
            address_range,
            json,
            fail_on_conflict,
        } => somas::run(&somas::Args {
            file,
            task_info,
            out,
            node,
            tensor,
            address,
            address_range,
            json,
            fail_on_conflict,
        }),
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
