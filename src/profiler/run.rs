//! Reading one run folder: which export (database or text) and in which order, and each file
//! through its reader, problems collected as diagnostics of that file.

use super::analysis::AnalyzeOptions;
use super::discover::FileOpener;
use super::{db, memory_record, module_mem, operator_memory, trace, Interner};
use crate::diag::Diagnostic;

/// A reader of one file: the source and its `(done, total)` progress callback.
type Reader<'r, T> =
    dyn FnMut(&dyn crate::source::Source, &mut dyn FnMut(u64, u64)) -> Result<T, Diagnostic> + 'r;

pub(super) fn open_and<T>(
    files: &dyn FileOpener,
    path: &str,
    warnings: &mut Vec<Diagnostic>,
    done: &mut dyn FnMut(u64),
    f: &mut Reader<'_, T>,
) -> Option<T> {
    let src = match files.open(path) {
        Ok(s) => s,
        Err(d) => {
            warnings.push(d);
            return None;
        }
    };
    let mut last = 0u64;
    let mut prog = |d: u64, _t: u64| {
        done(d.saturating_sub(last));
        last = d;
    };
    match f(src.as_ref(), &mut prog) {
        Ok(v) => Some(v),
        Err(d) => {
            warnings.push(d);
            None
        }
    }
}

/// The files [`crate::profiler::analysis::analyze_rank`] reads for one run folder, in reading order: its database export
/// when it has one (see `read_run` for why the db is preferred), else its text files, the trace
/// first (the rows are joined against it). Front ends list these to show progress per file.
pub fn run_reading_order(run: &crate::classify::ProfilerRun) -> Vec<&str> {
    let f = &run.files;
    match f.db.first() {
        Some(db) => vec![db.as_str()],
        None => [
            &f.trace_view,
            &f.operator_memory,
            &f.memory_record,
            &f.npu_module_mem,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect(),
    }
}

/// What one run folder gave, from its text files or its database.
pub(super) struct RunData {
    pub(super) trace: Option<trace::Trace>,
    pub(super) operator_memory: Option<operator_memory::OperatorMemory>,
    pub(super) memory_record: Option<memory_record::MemoryRecord>,
    pub(super) module_mem: Option<module_mem::ModuleMem>,
    /// `text` or `db`.
    pub(super) source: &'static str,
    /// The rank the database names (`RANK_DEVICE_MAP`).
    pub(super) rank: Option<u32>,
}

/// Reads one run folder: its database export when it has one, else its text files. The db is
/// preferred because it holds the same data with exact integer times (the text trace rounds op
/// durations to 10 ns) and reads much faster (no multi-gigabyte JSON scan); when it cannot be
/// read at all, the text files (if any) are read instead, with the db's error as a warning. One
/// run is never read twice.
pub(super) fn read_run(
    files: &dyn FileOpener,
    run: &crate::classify::ProfilerRun,
    opts: &AnalyzeOptions,
    (names, stacks): (&mut Interner, &mut Interner),
    warnings: &mut Vec<Diagnostic>,
    progress: &mut dyn FnMut(u64),
) -> RunData {
    let f = &run.files;
    let has_text =
        f.operator_memory.is_some() || f.memory_record.is_some() || f.trace_view.is_some();
    if let Some(db_path) = f.db.first() {
        for other in f.db.iter().skip(1) {
            warnings.push(Diagnostic::warning(
                other,
                format!(
                    "a second database export in the run folder; {db_path} is read, not this one"
                ),
            ));
        }
        // `<db>-wal` beside it: a write-ahead log whose pages the db file does not hold yet.
        let wal = files.open(&format!("{db_path}-wal")).ok();
        let mut db_warnings = Vec::new();
        let read = open_and(
            files,
            db_path,
            &mut db_warnings,
            progress,
            &mut |src, prog| db::read_db(src, wal.as_deref(), names, stacks, Some(prog)),
        );
        match read {
            Some(mut x) => {
                warnings.append(&mut db_warnings);
                warnings.append(&mut x.warnings);
                return RunData {
                    trace: x.trace,
                    operator_memory: x.operator_memory,
                    memory_record: x.memory_record,
                    module_mem: x.module_mem,
                    source: "db",
                    rank: x.rank,
                };
            }
            None if has_text => {
                for d in &mut db_warnings {
                    d.severity = crate::diag::Severity::Warning;
                    d.message = format!("{}; the text files are read instead", d.message);
                }
                warnings.append(&mut db_warnings);
            }
            None => {
                warnings.append(&mut db_warnings);
                return RunData {
                    trace: None,
                    operator_memory: None,
                    memory_record: None,
                    module_mem: None,
                    source: "db",
                    rank: None,
                };
            }
        }
    }
    // Trace first: the rows are joined against it.
    let mut trace = None;
    if let Some(p) = &f.trace_view {
        trace = open_and(files, p, warnings, progress, &mut |src, prog| {
            trace::read_trace(src, names, stacks, opts.trace, Some(prog))
        });
    } else if f.operator_memory.is_some() {
        warnings.push(Diagnostic::warning(
            &run.path,
            "no trace_view.json: allocations get no call stack",
        ));
    }
    let operator_memory = f.operator_memory.as_ref().and_then(|p| {
        open_and(files, p, warnings, progress, &mut |src, prog| {
            operator_memory::read_operator_memory(src, names, Some(prog))
        })
    });
    let memory_record = f.memory_record.as_ref().and_then(|p| {
        open_and(files, p, warnings, progress, &mut |src, prog| {
            memory_record::read_memory_record(src, Some(prog))
        })
    });
    let module_mem = f.npu_module_mem.as_ref().and_then(|p| {
        open_and(files, p, warnings, progress, &mut |src, prog| {
            module_mem::read_module_mem(src, Some(prog))
        })
    });
    RunData {
        trace,
        operator_memory,
        memory_record,
        module_mem,
        source: "text",
        rank: None,
    }
}
