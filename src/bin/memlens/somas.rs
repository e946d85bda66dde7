//! `memlens somas`: analyse a SOMAS dump (optionally with its task-info file), print a summary or
//! JSON, write somas_tool's file set, answer node / tensor / address queries.
//!
//! Exit codes: 0 success (conflicts are results), 1 a folder without a SOMAS dump, 2 bad input,
//! 3 conflicts with `--fail-on-conflict`.

use crate::ui::Ui;
use memlens::diag::Diagnostic;
use memlens::export::somas::{self as out, QuerySet};
use memlens::families;
use memlens::input::FileOpener;
use memlens::somas::folder::{dump_in_folder, NoDump};
use memlens::somas::task_info::TaskInfo;
use memlens::somas::{self, lex, queries, summary, tables, SomasModel};
use memlens::source::{PathSource, Progress, Source};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `memlens somas`.
#[derive(clap::Args)]
pub struct Args {
    /// The dump: *_somas_tensor_offset_*.ir or any other SOMAS dump, or a folder holding one
    /// (its task-info file of the same graph is then used too).
    pub file: PathBuf,
    /// task_info_graph_*.ir of the same graph (real addresses).
    #[arg(long, value_name = "FILE")]
    pub task_info: Option<PathBuf>,
    /// Write somas_tool's file set to this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Inspect a node: name (full or after the last '/') or execution index.
    #[arg(long, value_name = "NAME|INDEX")]
    pub node: Option<String>,
    /// Inspect a data tensor by id.
    #[arg(long, value_name = "ID")]
    pub tensor: Option<u32>,
    /// List the tensors using this address.
    #[arg(long, value_name = "HEX")]
    pub address: Option<String>,
    /// List the tensors using addresses in [START, END).
    #[arg(long, value_name = "HEX-HEX")]
    pub address_range: Option<String>,
    /// Exit with code 3 when overwrite conflicts are found (for CI gates).
    #[arg(long)]
    pub fail_on_conflict: bool,
}

/// Runs `load` over `src` with a progress bar of its bytes (on a terminal only).
fn with_bar<T>(
    ui: Ui,
    src: &dyn Source,
    load: impl FnOnce(&dyn Source, Option<Progress<'_>>) -> Result<T, Diagnostic>,
) -> Result<T, String> {
    let bar = ui.progress(src.len(), "reading");
    let result = load(src, Some(&mut |done, _| bar.set_position(done)));
    bar.finish_and_clear();
    result.map_err(|d| d.to_string())
}

fn open(path: &Path) -> Result<PathSource, String> {
    PathSource::open(path, path.display().to_string()).map_err(|e| e.to_string())
}

fn resolve(model: &SomasModel, args: &Args) -> Result<QuerySet, String> {
    let mut q = QuerySet::default();
    if let Some(n) = &args.node {
        q.node = Some(model.find_node(n).ok_or_else(|| {
            format!(
                "--node {n}: no node with that name or execution index in {}",
                model.file
            )
        })?);
    }
    if let Some(t) = args.tensor {
        q.tensor = Some(
            model
                .tensor_row(t)
                .ok_or_else(|| format!("--tensor {t}: no data tensor %{t}T in {}", model.file))?,
        );
    }
    if let Some(a) = &args.address {
        q.address = Some(lex::parse_user_address(a).ok_or_else(|| {
            format!("--address {a}: expected a hex address such as 0x108830de2a00")
        })?);
    }
    if let Some(r) = &args.address_range {
        let parsed = r
            .split_once('-')
            .and_then(|(a, b)| Some((lex::parse_user_address(a)?, lex::parse_user_address(b)?)));
        let (lo, hi) = parsed.ok_or_else(|| {
            format!("--address-range {r}: expected HEX-HEX such as 0x108830de2a20-0x108830de4a20")
        })?;
        if hi < lo {
            return Err(format!("--address-range {r}: the end is below the start"));
        }
        q.range = Some((lo, hi));
    }
    Ok(q)
}

/// The one SOMAS dump under the folder `args.file` (the core's search), with `--task-info` or
/// else the task-info file of its graph found beside it; `Err(code)` once the user was told there
/// is none.
fn from_folder(
    args: &Args,
    ui: Ui,
) -> Result<Result<(SomasModel, Option<TaskInfo>), ExitCode>, String> {
    let roots = [args.file.clone()];
    let mut set = families::input_set_from_paths(&roots);
    let found = match dump_in_folder(&mut set, &args.file.display().to_string()) {
        Ok(found) => found,
        Err(NoDump::Nothing {
            nothing,
            other_families,
        }) => {
            ui.nothing(&roots, &nothing, other_families);
            return Ok(Err(ExitCode::from(1)));
        }
        Err(several) => return Err(several.to_string()),
    };
    let src = set.open(&found.dump.path).map_err(|d| d.to_string())?;
    let model = with_bar(ui, src.as_ref(), somas::load_dump)?;
    let task = match (&args.task_info, &found.task_info) {
        (Some(p), _) => Some(with_bar(ui, &open(p)?, somas::load_task_info)?),
        (None, Some(t)) => {
            let src = set.open(&t.path).map_err(|d| d.to_string())?;
            ui.note(&format!(
                "memlens: {}: with the task-info file {}",
                found.dump.path, t.path
            ));
            Some(with_bar(ui, src.as_ref(), somas::load_task_info)?)
        }
        (None, None) => None,
    };
    Ok(Ok((model, task)))
}

/// Runs the command.
pub fn run(args: &Args, ui: Ui) -> Result<ExitCode, String> {
    let mut given = vec![args.file.clone()];
    given.extend(args.task_info.clone());
    ui.check_paths(&given)?;
    let (model, task) = if args.file.is_dir() {
        match from_folder(args, ui)? {
            Ok(loaded) => loaded,
            Err(code) => return Ok(code),
        }
    } else {
        let model = with_bar(ui, &open(&args.file)?, somas::load_dump)?;
        let task = match &args.task_info {
            Some(p) => Some(with_bar(ui, &open(p)?, somas::load_task_info)?),
            None => None,
        };
        (model, task)
    };
    let q = resolve(&model, args)?;
    let an = somas::analyze(&model, task.as_ref());
    let s = summary::summary(&model, &an, task.as_ref());

    if let Some(dir) = &args.out {
        let log = out::log(&model, &an, &s);
        for f in out::file_set(&model, &an, &s, &q, &log) {
            let path = dir.join(&f.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
            let file = std::fs::File::create(&path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            out::write_file(&f, &model, &an, std::io::BufWriter::new(file))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }

    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    if ui.json {
        let text = out::summary_json(&model, &an, &s, &q).map_err(|e| e.to_string())?;
        w.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    } else {
        let text = out::report_text(&model, &an, &s);
        write!(w, "{text}").map_err(|e| e.to_string())?;
        print_queries(&mut w, &model, &an, &q).map_err(|e| e.to_string())?;
        if let Some(dir) = &args.out {
            writeln!(w, "files written to {}", dir.display()).map_err(|e| e.to_string())?;
        }
    }
    w.flush().map_err(|e| e.to_string())?;
    if args.fail_on_conflict && !s.conflicts.is_empty() {
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_queries(
    w: &mut impl Write,
    model: &SomasModel,
    an: &somas::Analysis,
    q: &QuerySet,
) -> std::io::Result<()> {
    let list = |w: &mut dyn Write, title: &str, rows: &[u32]| -> std::io::Result<()> {
        writeln!(w, "{title}: {} tensors", rows.len())?;
        let table = tables::Table::Tensors;
        for &t in rows.iter().take(50) {
            let cells = out::row_text(model, an, table, t);
            let cell = |name: &str| {
                table
                    .column(name)
                    .and_then(|c| cells.get(c))
                    .map_or("", String::as_str)
            };
            writeln!(
                w,
                "  %{}T {} [{} .. {}) life {}..{} {}",
                cell("TensorId"),
                cell("SourceNodeName"),
                cell("StartAddrHex"),
                cell("EndAddrHex"),
                cell("LifeStart"),
                cell("LifeEnd"),
                cell("TensorType")
            )?;
        }
        Ok(())
    };
    if let Some(node) = q.node {
        let rep = queries::node_query(model, an, node);
        list(
            w,
            &format!(
                "node {} (${}) alive tensors",
                model.node_name(node),
                model.nodes.index.get(node as usize).copied().unwrap_or(0)
            ),
            &rep.frame,
        )?;
        for io in &rep.io {
            if let queries::Target::Tensor(t) = io.target {
                let rows: Vec<u32> = io.overlapping.iter().map(|o| o.tensor_row).collect();
                list(
                    w,
                    &format!(
                        "{:?}{} %{}T overlapping",
                        io.role,
                        io.position,
                        model.tensors.id.get(t as usize).copied().unwrap_or(0)
                    ),
                    &rows,
                )?;
            }
        }
    }
    if let Some(t) = q.tensor {
        let rep = queries::tensor_query(model, an, t);
        writeln!(
            w,
            "tensor %{}T used by:",
            model.tensors.id.get(t as usize).copied().unwrap_or(0)
        )?;
        for (n, role) in &rep.nodes {
            writeln!(w, "  {} ({:?})", model.node_name(*n), role)?;
        }
        let rows: Vec<u32> = rep.overlapping.iter().map(|o| o.tensor_row).collect();
        list(w, "overlapping", &rows)?;
    }
    if let Some(a) = q.address {
        list(
            w,
            &format!("address {}", tables::hex(a)),
            &queries::address_query(model, an, a),
        )?;
    }
    if let Some((lo, hi)) = q.range {
        list(
            w,
            &format!("address range {}-{}", tables::hex(lo), tables::hex(hi)),
            &queries::range_query(model, an, lo, hi),
        )?;
    }
    Ok(())
}
