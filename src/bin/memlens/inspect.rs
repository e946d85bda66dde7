//! `memlens inspect`: print the classification of the given paths.

use memlens::classify::{classify_paths, Unit};
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
        let detail = match unit {
            Unit::Somas(s) | Unit::TaskInfo(s) => format!("{} {}", s.family.id(), s.version),
            Unit::ProfilerRun(r) => {
                let rank = r.rank.map_or("rank ?".to_string(), |r| format!("rank {r}"));
                let step = r.step.map(|s| format!(" step {s}")).unwrap_or_default();
                let role = if r.role.is_empty() { "-" } else { &r.role };
                format!("{rank} role {role}{step}")
            }
            Unit::Unknown(u) => u.reason.clone(),
        };
        writeln!(out, "{:<11} {}  {}", unit.kind(), unit.path(), detail)
            .map_err(|e| e.to_string())?;
        if let Unit::ProfilerRun(r) = unit {
            for note in &r.notes {
                writeln!(out, "{:<11}   note: {note}", "").map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
