//! A job split among parallel readers (the page's worker pool): its ranks as groups of run
//! folders with the bytes each reads, and a view kept to some of them. Every reader classifies the
//! whole drop, so a rank's role, step and folder names are the ones the whole job gives it; it
//! then reads only its own ranks' files.

use super::JobView;
use crate::input::InputSet;
use crate::profiler::discover::Discovery;
use crate::profiler::plan::{job_plan, leave_out_dbs, rank_plan};
use serde::Serialize;

/// One rank of a job as a unit of reading: who it is and what reading it costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RankPart {
    /// Role (empty when unknown).
    pub role: String,
    /// Rank; `None` when unknown.
    pub rank: Option<u32>,
    /// Step, from a step folder.
    pub step: Option<u32>,
    /// The rank's run folders (paths in the input set): what names it to a reader.
    pub run_dirs: Vec<String>,
    /// Bytes of the files its reading plan reads (to balance the readers).
    pub bytes: u64,
}

impl JobView {
    /// The job's ranks in discovery order, each with the bytes its plan reads.
    pub fn parts(&self, set: &InputSet) -> Vec<RankPart> {
        self.job
            .ranks
            .iter()
            .map(|r| RankPart {
                role: r.role.clone(),
                rank: r.rank,
                step: r.step,
                run_dirs: r.runs.iter().map(|x| x.path.clone()).collect(),
                bytes: rank_plan(r).iter().map(|f| set.size(f.path)).sum(),
            })
            .collect()
    }

    /// What discovery said of the whole job beside its ranks (before [`JobView::keep_ranks`]):
    /// the pooled overview's diagnostics of discovery and files not analysed.
    pub fn discovery(&self) -> Discovery {
        self.job.discovery()
    }

    /// Keeps the ranks that have a run folder among `run_dirs` (and the warnings and set-aside
    /// files under those folders), and plans their reading; call before [`JobView::analyze`].
    pub fn keep_ranks(&mut self, set: &InputSet, run_dirs: &[String]) {
        let mine = |path: &str| {
            run_dirs.iter().any(|d| {
                path == d
                    || path
                        .strip_prefix(d.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
        };
        let job = &mut self.job;
        job.ranks
            .retain(|r| r.runs.iter().any(|x| run_dirs.contains(&x.path)));
        job.warnings.retain(|d| mine(&d.file));
        job.ignored.retain(|(p, _)| mine(p));
        self.plan = job_plan(&self.job, set);
    }

    /// Reads the run folders that hold one of the database exports `dbs` from their text files
    /// instead, where they have any ([`leave_out_dbs`]), and plans the reading again; returns the
    /// exports left out, in the job's order. The page lists the exports over its per-file limit,
    /// and every worker that reads the drop applies the same list before [`JobView::analyze`], so
    /// that the worker pool and the page's one worker read such a rank alike.
    pub fn leave_out_dbs(&mut self, set: &InputSet, dbs: &[String]) -> Vec<String> {
        let out = self
            .job
            .ranks
            .iter_mut()
            .flat_map(|r| r.runs.iter_mut())
            .flat_map(|run| leave_out_dbs(run, dbs))
            .collect();
        self.plan = job_plan(&self.job, set);
        out
    }
}
