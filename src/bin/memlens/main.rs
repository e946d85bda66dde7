//! The `memlens` command line: a thin layer over the library, printing what the core returns.

// The CLI is native only: on wasm32 (`cargo clippy --all-targets --target wasm32-…`) it is empty.
#![cfg_attr(target_arch = "wasm32", no_main)]
#![cfg(not(target_arch = "wasm32"))]

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod any;
mod compare;
mod generate;
mod inspect;
mod profiler;
mod serve;
mod snapshot;
mod somas;
mod ui;

/// `0.1.0 (<commit>)`: the commit comes from the build script (`unknown` outside a checkout).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("MEMLENS_COMMIT"), ")");

/// The exit codes, the same for every subcommand (shown by `--help`, listed in the README).
const EXIT_CODES: &str = "\
Exit codes (the same for every subcommand):
  0  done
  1  nothing to analyse: the paths exist but hold nothing the command reads (the message says
     what was looked for, how deep, and the closest things found)
  2  bad input or usage: a path that does not exist or cannot be read, a file that cannot be
     parsed, a wrong option. `profiler`, `compare` and `memlens PATH...` give 2 as soon as one
     file given could not be used (a damaged db or CSV of one rank), and still print and write
     the results of the rest; 0 means every file was read
  3  `somas --fail-on-conflict` found overwrite conflicts; `compare --fail-if-peak-grows PCT`
     found a peak grown by more than PCT percent";

/// Memory analyzer for Ascend NPU training jobs (torch_npu / MindSpore profiler output,
/// MindSpore SOMAS dumps, PyTorch / torch_npu memory snapshots).
///
/// `memlens PATH...` classifies the paths like the page does and runs the right analysis for
/// each unit found; the subcommands do one family's analysis, for scripts.
#[derive(Parser)]
#[command(
    name = "memlens",
    version = VERSION,
    about,
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Files, folders or archives to analyse, whatever they hold (when no subcommand is given).
    paths: Vec<PathBuf>,
    /// Print one JSON document on stdout instead of text (profiler: ranks, matrix, outliers,
    /// ignored files, warnings, job totals).
    #[arg(long, global = true)]
    json: bool,
    /// No progress bar and no notes on stderr (errors are still printed).
    #[arg(long, short, global = true)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Classify files and folders: SOMAS dumps, task-info files, torch_npu run folders, unknown files.
    Inspect {
        /// Files or folders to look at.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Analyse torch_npu / MindSpore profiler memory: run folders, role/step folders, whole jobs,
    /// or .zip/.tar/.tar.gz archives (`ascend` is the same command under its former name).
    #[command(visible_alias = "ascend")]
    Profiler {
        /// Files, folders or archives to analyse.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Write memory_events.csv, rank_summary.csv, peak_attribution.csv, step_peaks.csv and
        /// records_aside.csv here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write the job summary file (compact rank summaries, docs/job-summary.md) here.
        #[arg(long, value_name = "FILE")]
        summary: Option<PathBuf>,
    },
    /// Analyse a MindSpore SOMAS dump (any version): overview, curves, peak, overwrite conflicts,
    /// task-info address check, node / tensor / address queries; --out writes somas_tool's files.
    Somas(somas::Args),
    /// Analyse a PyTorch / torch_npu memory snapshot (torch.cuda/npu.memory._dump_snapshot):
    /// reserved and allocated memory per device, the allocated curve over the trace and its peak,
    /// who holds memory at the peak and at the snapshot, OOMs, fragmentation.
    Snapshot(snapshot::Args),
    /// Compare a baseline and a candidate of one family: two profiler runs or jobs (or two
    /// steps), or two SOMAS dumps of the same graph — what grew, and where (exit 3: a peak grew
    /// beyond --fail-if-peak-grows).
    Compare(compare::Args),
    /// Write deterministic synthetic inputs for tests, examples and benchmarks.
    Generate {
        #[command(subcommand)]
        what: generate::What,
    },
    /// Serve the page and a native engine that analyses the files under PATH where they are
    /// (open the printed URL; on a remote node, forward the port with `ssh -L`).
    Serve(serve::Args),
    /// Print a shell completion script (e.g. `memlens completions bash > /etc/bash_completion.d/memlens`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let ui = ui::Ui {
        json: cli.json,
        quiet: cli.quiet,
    };
    let result = match cli.command {
        None if cli.paths.is_empty() => {
            let _ = Cli::command().print_help();
            return ExitCode::from(2);
        }
        None => any::run(&cli.paths, ui),
        Some(Command::Inspect { paths }) => inspect::run(&paths, ui),
        Some(Command::Profiler {
            paths,
            out,
            summary,
        }) => profiler::run(&paths, out.as_deref(), summary.as_deref(), ui),
        Some(Command::Somas(args)) => somas::run(&args, ui),
        Some(Command::Snapshot(args)) => snapshot::run(&args, ui),
        Some(Command::Compare(args)) => compare::run(&args, ui),
        Some(Command::Generate { what }) => generate::run(what, ui),
        Some(Command::Serve(args)) => serve::run(&args, ui),
        Some(Command::Completions { shell }) => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "memlens",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            ui::error(&message);
            ExitCode::from(2)
        }
    }
}
