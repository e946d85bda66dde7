//! The reading plan of a job: which files each rank reads, in which order, with which reader.
//!
//! The analysis executes this plan ([`super::analysis::analyze_rank`]) and front ends show it
//! (the page lists the files with their progress before reading starts), so both follow one
//! order by construction.

use super::discover::{Job, RankInput};
use super::run_folder::ProfilerRun;
use crate::input::InputSet;
use serde::Serialize;

/// The reader a planned file goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reader {
    /// `trace_view.json`: ops, steps and call stacks, read first because rows join against it.
    Trace,
    /// `operator_memory.csv`: the allocation rows.
    OperatorMemory,
    /// `memory_record.csv`: the allocators' curves.
    MemoryRecord,
    /// `npu_module_mem.csv`: per-module device memory.
    ModuleMem,
    /// `ascend_pytorch_profiler_<rank>.db`: everything the four text files hold, in one file;
    /// or, in a run folder with no other memory file, a db in msprof's layout
    /// (`ascend_mindspore_profiler_<rank>.db`, `msprof_<timestamp>.db`): CANN's operator memory.
    Database,
}

/// One file of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read<'a> {
    /// Path in the input set.
    pub path: &'a str,
    /// How it is read.
    pub reader: Reader,
}

/// The files of one run folder in reading order: its database export when it has one, else its
/// text files (see [`super::run`] for why the db is preferred, and for the fallback to
/// [`text_plan`] when the db cannot be read at all), else its db in msprof's layout. That one
/// comes last because it holds only CANN's share of what the framework's exports hold: a
/// MindSpore run that exported both keeps its text files' `MindSpore` allocator records.
pub fn run_plan(run: &ProfilerRun) -> Vec<Read<'_>> {
    let db = |path| {
        vec![Read {
            path,
            reader: Reader::Database,
        }]
    };
    if let Some(path) = run.files.db.first() {
        return db(path);
    }
    let text = text_plan(run);
    match run.files.msprof_db.first() {
        Some(path) if text.is_empty() => db(path),
        _ => text,
    }
}

/// The text files of one run folder in reading order (the trace first: rows join against it).
pub fn text_plan(run: &ProfilerRun) -> Vec<Read<'_>> {
    let f = &run.files;
    [
        (&f.trace_view, Reader::Trace),
        (&f.operator_memory, Reader::OperatorMemory),
        (&f.memory_record, Reader::MemoryRecord),
        (&f.npu_module_mem, Reader::ModuleMem),
    ]
    .into_iter()
    .filter_map(|(path, reader)| path.as_deref().map(|path| Read { path, reader }))
    .collect()
}

/// Leaves the database exports among `dbs` out of `run`'s plan where its text files can be read
/// instead (the run folder has at least one of them), and returns the exports it left out.
///
/// The page cannot hold a db export over its per-file limit, but the same run's text files may
/// fit: a run that keeps such a db is read from its text files, as if the db were not there (the
/// way [`run_plan`] plans a folder without one). A run with no text file keeps its db: it has
/// nothing else to read, and the page leaves the rank out instead.
pub fn leave_out_dbs(run: &mut ProfilerRun, dbs: &[String]) -> Vec<String> {
    if text_plan(run).is_empty() {
        return Vec::new();
    }
    let (out, kept) = std::mem::take(&mut run.files.db)
        .into_iter()
        .partition(|p| dbs.contains(p));
    run.files.db = kept;
    out
}

/// The files of one rank in reading order: its run folders one after the other.
pub fn rank_plan(rank: &RankInput) -> Vec<Read<'_>> {
    rank.runs.iter().flat_map(run_plan).collect()
}

/// A file of a job's plan with its size, for a front end's progress list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedFile {
    /// Path in the input set.
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// The reader.
    pub reader: Reader,
}

/// Every file the analysis of `job` reads, rank after rank, with the sizes `set` knows.
pub fn job_plan(job: &Job, set: &InputSet) -> Vec<PlannedFile> {
    job.ranks
        .iter()
        .flat_map(rank_plan)
        .map(|r| PlannedFile {
            path: r.path.to_string(),
            bytes: set.size(r.path),
            reader: r.reader,
        })
        .collect()
}
