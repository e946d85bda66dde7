//! `memlens inspect`: print the classification of the given paths.

use crate::ui::Ui;
use memlens::families;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Classifies `paths` and prints the units as a table or as JSON; exit 1 (with what was looked
/// for and found) when no unit can be analysed.
pub fn run(paths: &[PathBuf], ui: Ui) -> Result<ExitCode, String> {
    ui.check_paths(paths)?;
    let mut set = families::input_set_from_paths(paths);
    let inventory = set.classify().clone();
    let mut out = std::io::stdout().lock();
    if ui.json {
        let text = serde_json::to_string_pretty(&inventory).map_err(|e| e.to_string())?;
        writeln!(out, "{text}").map_err(|e| e.to_string())?;
    } else {
        writeln!(
            out,
            "{} files, {} bytes, {} units",
            inventory.files,
            inventory.bytes,
            inventory.units.len()
        )
        .map_err(|e| e.to_string())?;
        for unit in &inventory.units {
            let body = unit.body();
            writeln!(
                out,
                "{:<11} {}  {}",
                unit.kind(),
                unit.path(),
                body.summary()
            )
            .map_err(|e| e.to_string())?;
            for note in body.notes() {
                writeln!(out, "{:<11}   note: {note}", "").map_err(|e| e.to_string())?;
            }
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    let looking_for = set.recognizers();
    match set.nothing_to_analyse(looking_for, &|u| u.body().analysable()) {
        Some(nothing) => {
            ui.nothing(paths, &nothing, false);
            Ok(ExitCode::from(1))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}
