//! Every unit's family analysis, one summary each: what `memlens PATH...` prints for any input.
//!
//! The inputs are classified once (like the page does); each family then analyses its units the
//! way its own command does — the profiler run folders together as one job (`memlens profiler`),
//! each SOMAS dump with the task-info file of its graph (`memlens somas`), each memory snapshot
//! on its own (`memlens snapshot`) — and the summary is
//! that command's `--json` document and text, so `memlens PATH` is the sum of the subcommands.
//! A new family is one more function here. One unit that fails to read never stops the others.

use crate::diag::Diagnostic;
use crate::export;
use crate::input::{InputSet, NothingToAnalyse};
use crate::profiler::analysis::{analyze_job_parallel, AnalyzeOptions};
use crate::profiler::discover::job_of;
use crate::profiler::run_folder::ProfilerRun;
use crate::snapshot::recognize::SnapshotFile;
use crate::somas::recognize::{task_info_in, SomasFile};
use serde::Serialize;

/// One family's analysis of some units.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The family: `profiler`, `somas` or `snapshot` (the subcommand that gives the same answer).
    pub family: &'static str,
    /// The units analysed together (run folders of a job; a dump and its task-info file).
    pub paths: Vec<String>,
    /// The family command's `--json` document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<serde_json::Value>,
    /// Why the units could not be analysed (the other summaries are unaffected).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Diagnostic>,
    /// Why the analysis is incomplete although it was made: some of the units' files could not
    /// be used (the profiler job's [`crate::profiler::view::Verdict`] with exit code 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The family command's text output.
    #[serde(skip)]
    pub text: String,
}

/// Every summary of one input set.
#[derive(Debug, Clone, Serialize)]
pub struct Summaries {
    /// One entry per family analysis, profiler job first, then the SOMAS dumps by path, then the
    /// memory snapshots by path.
    pub summaries: Vec<Summary>,
    /// Set when no unit could be analysed: what was looked for and found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nothing_to_analyse: Option<NothingToAnalyse>,
}

impl Summaries {
    /// Whether some unit could not be analysed, or some of its files could not be used.
    pub fn has_errors(&self) -> bool {
        self.summaries
            .iter()
            .any(|s| s.error.is_some() || s.problem.is_some())
    }
}

/// Bytes a summary's analysis reads, for a front end's progress: the plan of the profiler job and
/// every analysable SOMAS dump with its task-info file, every memory snapshot. Classifies `set`
/// first.
pub fn bytes_to_read(set: &mut InputSet) -> u64 {
    set.classify();
    let Some(inventory) = set.inventory() else {
        return 0;
    };
    let runs: u64 = inventory
        .units_of::<ProfilerRun>()
        .filter(|r| r.has_memory_files())
        .flat_map(crate::profiler::plan::run_plan)
        .map(|r| set.size(r.path))
        .sum();
    let dumps: u64 = inventory
        .units_of::<SomasFile>()
        .filter(|f| crate::input::UnitBody::analysable(*f))
        .map(|d| d.size + task_info_in(inventory, d).map_or(0, |t| t.size))
        .sum();
    let snapshots: u64 = inventory.units_of::<SnapshotFile>().map(|s| s.size).sum();
    runs + dumps + snapshots
}

/// The profiler job of `set`, as `memlens profiler` analyses it; `None` without a run folder
/// holding memory files.
fn profiler(set: &mut InputSet, progress: &(dyn Fn(u64) + Sync)) -> Option<Summary> {
    let job = job_of(set);
    if job.ranks.is_empty() {
        return None;
    }
    let analysis = analyze_job_parallel(&*set, &job, &AnalyzeOptions::default(), progress);
    let report = crate::profiler::view::job_report(&analysis, &job);
    let (summary, error) = match serde_json::to_value(&report) {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(Diagnostic::error("", e.to_string()))),
    };
    Some(Summary {
        family: "profiler",
        paths: job
            .ranks
            .iter()
            .flat_map(|r| r.runs.iter().map(|run| run.path.clone()))
            .collect(),
        summary,
        error,
        problem: (report.verdict.exit_code == 2)
            .then(|| report.verdict.problem.clone())
            .flatten(),
        text: export::profiler::report_text(&analysis),
    })
}

/// One SOMAS dump with the task-info file of its graph, as `memlens somas DUMP --task-info TASK`.
fn somas(
    set: &InputSet,
    dump: &SomasFile,
    task: Option<&SomasFile>,
    progress: &(dyn Fn(u64) + Sync),
) -> Summary {
    let mut paths = vec![dump.path.clone()];
    paths.extend(task.map(|t| t.path.clone()));
    let read = |path: &str| -> Result<Box<dyn crate::source::Source + '_>, Diagnostic> {
        use crate::input::FileOpener;
        set.open(path)
    };
    // Readers report the bytes of the file read so far; the progress hears the increments.
    let per_file = || {
        let mut last = 0u64;
        move |done: u64, _total: u64| {
            progress(done.saturating_sub(last));
            last = done;
        }
    };
    let result = (|| {
        let src = read(&dump.path)?;
        let model = crate::somas::load_dump(src.as_ref(), Some(&mut per_file()))?;
        let task = match task {
            Some(t) => {
                let src = read(&t.path)?;
                Some(crate::somas::load_task_info(
                    src.as_ref(),
                    Some(&mut per_file()),
                )?)
            }
            None => None,
        };
        let an = crate::somas::analyze(&model, task.as_ref());
        let s = crate::somas::summary::summary(&model, &an, task.as_ref());
        let json =
            export::somas::summary_json(&model, &an, &s, &export::somas::QuerySet::default())
                .map_err(|e| Diagnostic::error(&dump.path, e.to_string()))?;
        let value: serde_json::Value = serde_json::from_str(&json)
            .map_err(|e| Diagnostic::error(&dump.path, e.to_string()))?;
        Ok::<_, Diagnostic>((value, export::somas::report_text(&model, &an, &s)))
    })();
    match result {
        Ok((value, text)) => Summary {
            family: "somas",
            paths,
            summary: Some(value),
            error: None,
            problem: None,
            text,
        },
        Err(d) => Summary {
            family: "somas",
            paths,
            summary: None,
            text: String::new(),
            error: Some(d),
            problem: None,
        },
    }
}

/// One memory snapshot, as `memlens snapshot FILE`.
fn snapshot(set: &InputSet, file: &SnapshotFile, progress: &(dyn Fn(u64) + Sync)) -> Summary {
    use crate::input::{CountingOpener, FileOpener};
    // The reader reports the bytes of the file read so far; the progress hears the increments.
    let last = std::cell::Cell::new(0u64);
    let report = |_: &str, done: u64, _: u64| {
        progress(done.saturating_sub(last.get()));
        last.set(done);
    };
    let opener = CountingOpener::new(set, &report);
    let result = (|| {
        let src = opener.open(&file.path)?;
        let snap = crate::snapshot::read(src.as_ref())?;
        let an = crate::snapshot::analysis::analyse(&snap);
        let json = export::snapshot::summary_json(&snap, &an);
        let value: serde_json::Value = serde_json::from_str(&json)
            .map_err(|e| Diagnostic::error(&file.path, e.to_string()))?;
        Ok::<_, Diagnostic>((value, export::snapshot::report_text(&snap, &an)))
    })();
    let (summary, text, error) = match result {
        Ok((value, text)) => (Some(value), text, None),
        Err(d) => (None, String::new(), Some(d)),
    };
    Summary {
        family: "snapshot",
        paths: vec![file.path.clone()],
        summary,
        text,
        error,
        problem: None,
    }
}

/// Classifies `set` and runs every unit's family analysis; `progress(bytes)` hears of the bytes
/// read (their total is [`bytes_to_read`]).
pub fn summarise(set: &mut InputSet, progress: &(dyn Fn(u64) + Sync)) -> Summaries {
    if let Some(nothing) = set.nothing_analysable() {
        return Summaries {
            summaries: Vec::new(),
            nothing_to_analyse: Some(nothing),
        };
    }
    let mut summaries: Vec<Summary> = profiler(set, progress).into_iter().collect();
    let dumps: Vec<(SomasFile, Option<SomasFile>)> = set
        .inventory()
        .map(|inv| {
            inv.units_of::<SomasFile>()
                .filter(|f| crate::input::UnitBody::analysable(*f))
                .map(|d| (d.clone(), task_info_in(inv, d).cloned()))
                .collect()
        })
        .unwrap_or_default();
    for (dump, task) in &dumps {
        summaries.push(somas(set, dump, task.as_ref(), progress));
    }
    let snapshots: Vec<SnapshotFile> = set
        .inventory()
        .map(|inv| inv.units_of::<SnapshotFile>().cloned().collect())
        .unwrap_or_default();
    for file in &snapshots {
        summaries.push(snapshot(set, file, progress));
    }
    Summaries {
        summaries,
        nothing_to_analyse: None,
    }
}
