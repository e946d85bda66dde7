//! `memlens inspect`: print the classification of the given paths.

use memlens::families::classify_paths;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Classifies `paths` and prints the units as a table or as JSON.
pub fn run(paths: &[PathBuf], json: bool) -> Result<ExitCode, String> {
    let inventory = classify_paths(paths);
    let mut out = std::io::stdout().lock();
    if json {
        let text = serde_json::to_string_pretty(&inventory).map_err(|e| e.to_string())?;
        writeln!(out, "{text}").map_err(|e| e.to_string())?;
        return Ok(ExitCode::SUCCESS);
    }
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
    Ok(ExitCode::SUCCESS)
}
