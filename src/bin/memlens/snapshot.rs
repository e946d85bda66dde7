//! `memlens snapshot`: analyse a PyTorch / torch_npu memory snapshot (`_dump_snapshot` pickle).

use crate::ui::Ui;
use memlens::export::snapshot as exp;
use memlens::snapshot::{self, analysis};
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

/// Reads, analyses and reports one snapshot; `--json` prints `summary.json`'s bytes. Bad input
/// is an error naming the file and byte offset (exit code 2).
pub fn run(args: &Args, ui: Ui) -> Result<ExitCode, String> {
    ui.check_paths(std::slice::from_ref(&args.file))?;
    let src =
        PathSource::open(&args.file, args.file.display().to_string()).map_err(|e| e.to_string())?;
    let snap = snapshot::read(&src).map_err(|d| d.to_string())?;
    let a = analysis::analyse(&snap);
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for name in exp::FILES {
            write_file(dir, name, &|w| exp::write_named(name, &snap, &a, w))?;
        }
    }
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| e.to_string();
    if ui.json {
        out.write_all(exp::summary_json(&snap, &a).as_bytes())
            .map_err(io)?;
        return Ok(ExitCode::SUCCESS);
    }
    out.write_all(exp::report_text(&snap, &a).as_bytes())
        .map_err(io)?;
    Ok(ExitCode::SUCCESS)
}
