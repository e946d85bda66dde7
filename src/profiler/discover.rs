//! From classified inputs to a job: ranks grouped by (role, step, rank) with their run folders
//! ordered by timestamp.
//!
//! Run folders are found by [`super::run_folder::RunFolders`] when the input set is classified;
//! this module only groups them.

use super::run_folder::ProfilerRun;
use crate::diag::Diagnostic;
use crate::input::{InputSet, Inventory, UnknownFile};
use std::collections::BTreeMap;

/// Classifies `set` (once; archives expanded) and groups its run folders into a job. Problems of
/// listing and expanding the inputs come first among the job's warnings.
pub fn job_of(set: &mut InputSet) -> Job {
    let mut job = discover_job(set.classify());
    job.warnings.splice(0..0, set.warnings().iter().cloned());
    job
}

/// One run folder of a rank.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunInput {
    /// The run folder as classified.
    pub run: ProfilerRun,
}

/// The run folders of one (role, step, rank) that sit in one directory, in timestamp order (the
/// captures of one run; see [`discover_job`] for run folders of the rank found elsewhere).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RankInput {
    /// Role (empty when unknown).
    pub role: String,
    /// Rank; `None` = unknown (`profiler_info.json` without rank).
    pub rank: Option<u32>,
    /// Step, from a step folder.
    pub step: Option<u32>,
    /// Run folders ordered by their 17-digit timestamp (folders without one last, by path).
    pub runs: Vec<ProfilerRun>,
}

/// A job: every rank found, and what could not be used.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Job {
    /// Ranks sorted by role, step, rank (unknown rank last).
    pub ranks: Vec<RankInput>,
    /// Files that are not part of any run folder and that no family analyses (with the reason):
    /// a unit another family analyses (a memory snapshot, a SOMAS dump, a job summary) has its
    /// own analysis and is not listed, nor is a file read beside such a unit (a task-info file
    /// with its dump, [`crate::input::Inventory::used_with`]).
    pub ignored: Vec<(String, String)>,
    /// Notes and problems of discovery (db-only runs, unknown ranks, archive problems).
    pub warnings: Vec<Diagnostic>,
}

/// What discovery says of a job beside its ranks: its own diagnostics (listing, archives, run
/// folders' notes, runs set aside) and the files not analysed. A job read rank by rank by several
/// readers (the page's worker pool) takes them from the one discovery of the whole drop, so its
/// overview says what a one-reader load says.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Discovery {
    /// The job's diagnostics of discovery ([`Job::warnings`]).
    pub warnings: Vec<Diagnostic>,
    /// The files not analysed, with the reason ([`Job::ignored`]).
    pub ignored: Vec<(String, String)>,
}

impl Job {
    /// What discovery says beside the ranks.
    pub fn discovery(&self) -> Discovery {
        Discovery {
            warnings: self.warnings.clone(),
            ignored: self.ignored.clone(),
        }
    }
}

/// Groups the run folders of `inventory` into ranks.
///
/// A rank's run folders in one directory are captures of one run (torch_npu writes each
/// profiling cycle of a process as its own folder beside the others) and are read as one rank.
/// Run folders of the same (role, step, rank) in another directory are another run of that rank
/// — two runs dropped together — and merging them would mix two captures into one curve: the
/// directory of the earliest folder is kept, the others are set aside (listed in `ignored` with a
/// warning that names the kept one), and the two runs can be compared instead.
pub fn discover_job(inventory: &Inventory) -> Job {
    let mut groups: BTreeMap<(String, Option<u32>, u32), Vec<ProfilerRun>> = BTreeMap::new();
    let mut job = Job::default();
    for unit in &inventory.units {
        if let Some(run) = unit.get::<ProfilerRun>() {
            for note in &run.notes {
                job.warnings
                    .push(Diagnostic::warning(run.place(), note.clone()));
            }
            if !run.has_memory_files() {
                // Nothing to analyse (analysis never run): the note above says what to do; the
                // folder is not a rank of the job.
                job.ignored.push((
                    run.path.clone(),
                    "run folder without operator_memory.csv, memory_record.csv, trace_view.json \
                     or ascend_pytorch_profiler_*.db"
                        .to_string(),
                ));
                continue;
            }
            // Unknown ranks sort after known ones.
            let key = (run.role.clone(), run.step, run.rank.unwrap_or(u32::MAX));
            groups.entry(key).or_default().push(run.clone());
        } else if let Some(u) = unit.get::<UnknownFile>() {
            job.ignored.push((u.path.clone(), u.reason.clone()));
        } else if !unit.body().analysable() && !inventory.is_used_with_another(unit.path()) {
            // A unit read beside another (a task-info file with its SOMAS dump) is analysed with
            // it; one given without that other unit is not, and its family says why.
            let reason = unit
                .body()
                .alone()
                .unwrap_or_else(|| format!("{} file: not torch_npu profiler output", unit.kind()));
            job.ignored.push((unit.path().to_string(), reason));
        }
    }
    for ((role, step, _), mut runs) in groups {
        runs.sort_by(|a, b| match (&a.timestamp, &b.timestamp) {
            (Some(x), Some(y)) => x.cmp(y).then(a.path.cmp(&b.path)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.path.cmp(&b.path),
        });
        set_aside_other_runs(&mut runs, &mut job);
        let rank = runs.first().and_then(|r| r.rank);
        job.ranks.push(RankInput {
            role,
            rank,
            step,
            runs,
        });
    }
    job
}

/// Keeps the run folders of `runs` (sorted) that share the first one's directory; moves the others
/// to `job.ignored` with a warning each.
fn set_aside_other_runs(runs: &mut Vec<ProfilerRun>, job: &mut Job) {
    let dir = |r: &ProfilerRun| r.path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let Some(first) = runs.first() else { return };
    let (kept_dir, kept_path) = (dir(first), first.path.clone());
    let (kept, other): (Vec<ProfilerRun>, Vec<ProfilerRun>) =
        runs.drain(..).partition(|r| dir(r) == kept_dir);
    *runs = kept;
    for r in other {
        let rank = r.rank.map_or("unknown".to_string(), |n| n.to_string());
        let who = match r.role.as_str() {
            "" => format!("rank {rank}"),
            role => format!("{role} rank {rank}"),
        };
        let reason = format!(
            "another run of {who}, in another directory than {kept_path}: set aside (one rank is \
             one run); compare the two runs instead (memlens compare, or Compare these on the page)"
        );
        job.warnings
            .push(Diagnostic::warning(&r.path, reason.clone()));
        job.ignored.push((r.path, reason));
    }
}
