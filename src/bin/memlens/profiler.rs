//! `memlens profiler` (alias `ascend`): analyse torch_npu / MindSpore profiler output (run folders, whole jobs, archives).

use crate::ui::Ui;
use memlens::export::profiler as exp;
use memlens::families;
use memlens::profiler::analysis::{analyze_job_parallel, AnalyzeOptions};
use memlens::profiler::job_of;
use memlens::profiler::plan::job_plan;
use memlens::profiler::run_folder::{ProfilerRun, RunFolders};
use memlens::profiler::summary::{rank_summaries, JobSummary};
use memlens::profiler::view::{job_totals, Verdict};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn write_file(
    dir: &Path,
    name: &str,
    f: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let path = dir.join(name);
    let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    f(&mut w)
        .and_then(|_| w.flush())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the analysis of `paths`; writes CSVs to `out` and the job summary file to `summary`,
/// prints JSON or a table. Exit 1 when no run folder holds memory data (with what was looked for
/// and found), 2 when some file could not be used (the results of the rest are still printed
/// and written): the core's [`Verdict`].
pub fn run(
    paths: &[PathBuf],
    out: Option<&Path>,
    summary: Option<&Path>,
    ui: Ui,
) -> Result<ExitCode, String> {
    ui.check_paths(paths)?;
    let mut inputs = families::input_set_from_paths(paths);
    let job = job_of(&mut inputs);
    if job.ranks.is_empty() {
        let nothing = inputs.nothing_to_analyse(&[&RunFolders], &|u| {
            u.get::<ProfilerRun>()
                .is_some_and(ProfilerRun::has_memory_files)
        });
        if let Some(nothing) = nothing {
            if ui.json {
                // Scripts still get the document (no ranks, the ignored files and why).
                let analysis = analyze_job_parallel(&inputs, &job, &Default::default(), &|_| {});
                let text = exp::report_json(&analysis, &job).map_err(|e| e.to_string())?;
                std::io::stdout()
                    .write_all(text.as_bytes())
                    .map_err(|e| e.to_string())?;
            }
            // Inputs of another family: `memlens PATH` would analyse them.
            let others = inputs.inventory().is_some_and(|inv| {
                inv.units
                    .iter()
                    .any(|u| u.get::<ProfilerRun>().is_none() && u.body().analysable())
            });
            ui.nothing(paths, &nothing, others);
            return Ok(ExitCode::from(1));
        }
    }
    let total: u64 = job_plan(&job, &inputs).iter().map(|f| f.bytes).sum();
    let bar = ui.progress(total, "reading");
    let analysis = analyze_job_parallel(&inputs, &job, &AnalyzeOptions::default(), &|b| bar.inc(b));
    bar.finish_and_clear();
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        write_file(dir, "memory_events.csv", &|w| {
            exp::write_memory_events(&analysis, w)
        })?;
        write_file(dir, "rank_summary.csv", &|w| {
            exp::write_rank_summary(&analysis, w)
        })?;
        write_file(dir, "peak_attribution.csv", &|w| {
            exp::write_peak_attribution(&analysis, w)
        })?;
        write_file(dir, "step_peaks.csv", &|w| {
            exp::write_step_peaks(&analysis, w)
        })?;
        write_file(dir, "records_aside.csv", &|w| {
            exp::write_records_aside(&analysis, w)
        })?;
    }
    if let Some(file) = summary {
        let text = JobSummary::merge(rank_summaries(&analysis))
            .to_json()
            .map_err(|e| e.to_string())?;
        std::fs::write(file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let mut stdout = std::io::stdout().lock();
    let text = if ui.json {
        exp::report_json(&analysis, &job).map_err(|e| e.to_string())?
    } else {
        exp::report_text(&analysis)
    };
    stdout
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())?;
    // One rule for the exit code, the core's (the page's tab follows the same verdict).
    let verdict = Verdict::of(&job_totals(&analysis, &job));
    if let Some(problem) = &verdict.problem {
        ui.note(&format!("memlens: {problem}"));
    }
    Ok(ExitCode::from(verdict.exit_code))
}
