//! `memlens PATH...`: classify whatever the paths hold, like the page, and print each unit's
//! family analysis — the same text and JSON as the family's own subcommand.

use crate::ui::{self, Ui};
use memlens::families;
use memlens::summaries::{bytes_to_read, summarise};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs every unit's analysis. Exit 0, 1 when nothing can be analysed, 2 when some unit failed
/// or some file of the profiler job could not be used (the rest is printed).
pub fn run(paths: &[PathBuf], ui: Ui) -> Result<ExitCode, String> {
    ui.check_paths(paths)?;
    let mut set = families::input_set_from_paths(paths);
    let total = bytes_to_read(&mut set);
    let bar = ui.progress(total, "reading");
    let all = summarise(&mut set, &|b| bar.inc(b));
    bar.finish_and_clear();
    let io = |e: std::io::Error| e.to_string();
    if ui.json {
        let mut text = serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?;
        text.push('\n');
        std::io::stdout().write_all(text.as_bytes()).map_err(io)?;
    } else {
        for (i, s) in all.summaries.iter().enumerate() {
            if i > 0 {
                println!();
            }
            let head = match s.family {
                "profiler" => format!(
                    "torch_npu / MindSpore profiler job: {} run folder(s) (memlens profiler)",
                    s.paths.len()
                ),
                "snapshot" => format!("memory snapshot {} (memlens snapshot)", s.paths.join("")),
                _ => format!("SOMAS dump {} (memlens somas)", s.paths.join(" with ")),
            };
            ui::title(&head);
            std::io::stdout().write_all(s.text.as_bytes()).map_err(io)?;
            if let Some(e) = &s.error {
                std::io::stdout().flush().map_err(io)?;
                ui::error(&e.to_string());
            }
            if let Some(p) = &s.problem {
                std::io::stdout().flush().map_err(io)?;
                ui::error(p);
            }
        }
    }
    std::io::stdout().flush().map_err(io)?;
    if let Some(nothing) = &all.nothing_to_analyse {
        ui.nothing(paths, nothing, false);
        return Ok(ExitCode::from(1));
    }
    if ui.json {
        for e in all.summaries.iter().filter_map(|s| s.error.as_ref()) {
            ui::error(&e.to_string());
        }
        for p in all.summaries.iter().filter_map(|s| s.problem.as_ref()) {
            ui::error(p);
        }
    }
    Ok(if all.has_errors() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
