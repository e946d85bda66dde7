//! Reading one run folder: its reading plan ([`super::plan::run_plan`]) executed file by file,
//! each through its reader, problems collected as diagnostics of that file.

use super::analysis::AnalyzeOptions;
use super::plan::{run_plan, text_plan, Read, Reader as Kind};
use super::run_folder::is_msprof_db_name;
use super::run_folder::ProfilerRun;
use super::{db, memory_record, module_mem, msprof_db, operator_memory, trace, Interner};
use crate::diag::Diagnostic;
use crate::input::FileOpener;

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
            // A member claimed by its name can be a Git LFS pointer: the reader's words on its
            // first bytes would not say so.
            warnings.push(crate::input::lfs::explain(src.as_ref(), d));
            None
        }
    }
}

/// A rank's files when any thread may open and read them (native), and where the bytes read are
/// reported from any thread: a run folder's CSV files are then read while its trace is scanned.
#[derive(Clone, Copy)]
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
pub(super) struct Shared<'a> {
    pub(super) files: &'a (dyn FileOpener + Sync),
    pub(super) progress: &'a (dyn Fn(u64) + Sync),
}

/// What one run folder gave, from its text files or its database.
pub(super) struct RunData {
    pub(super) trace: Option<trace::Trace>,
    pub(super) operator_memory: Option<operator_memory::OperatorMemory>,
    pub(super) memory_record: Option<memory_record::MemoryRecord>,
    pub(super) module_mem: Option<module_mem::ModuleMem>,
    /// The database export the run's plan chose to read and the reader its name chose, even
    /// when it could not be read; None when the plan read text files only.
    pub(super) db: Option<DbFile>,
    /// The rank the database names (`RANK_DEVICE_MAP`).
    pub(super) rank: Option<u32>,
}

/// `db` when a run's plan read the database export `db`, `text` when it read text files only.
pub fn source_name(db: Option<&DbFile>) -> &'static str {
    if db.is_some() {
        "db"
    } else {
        "text"
    }
}

/// A run's database export: its path and the layout its reader reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbFile {
    /// The db's path as the run folder lists it.
    pub path: String,
    /// Whose tables it holds.
    pub layout: DbLayout,
}

/// The two layouts of a profiler's database export, each read by its own reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbLayout {
    /// torch_npu's `ascend_pytorch_profiler_*.db`: MEMORY_RECORD and OP_MEMORY tables.
    TorchNpu,
    /// msprof's layout (MindSpore's `ascend_mindspore_profiler*.db`, `msprof_*.db`): NPU_MEM and
    /// NPU_OP_MEM tables.
    Msprof,
}

impl DbLayout {
    /// The layout of the db named `path` (its file name decides, as for every member of a run
    /// folder).
    fn of(path: &str) -> Self {
        if is_msprof_db_name(crate::input::paths::file_name(path)) {
            DbLayout::Msprof
        } else {
            DbLayout::TorchNpu
        }
    }

    /// What holds the memory records, and what holds the allocations, in words for a warning.
    pub fn tables(self) -> (&'static str, &'static str) {
        match self {
            DbLayout::TorchNpu => ("its MEMORY_RECORD table", "its OP_MEMORY table"),
            DbLayout::Msprof => ("its NPU_MEM and NPU_OP_MEM totals", "its NPU_OP_MEM events"),
        }
    }
}

impl RunData {
    /// A run with nothing read yet, from its text files (`db` None) or from `db`.
    fn empty(db: Option<DbFile>) -> Self {
        RunData {
            trace: None,
            operator_memory: None,
            memory_record: None,
            module_mem: None,
            db,
            rank: None,
        }
    }
}

/// Reads one run folder by executing its plan: its database export when it has one, else its
/// text files. The db is preferred because it holds the same data with exact integer times (the
/// text trace rounds op durations to 10 ns) and reads much faster (only the pages of the tables
/// memory analysis needs, no multi-gigabyte JSON scan); when it cannot be read at all, the text
/// files (if any) are read instead, with the db's error as a warning. One run is never read
/// twice.
pub(super) fn read_run(
    files: &dyn FileOpener,
    shared: Option<Shared<'_>>,
    run: &ProfilerRun,
    opts: &AnalyzeOptions,
    (names, stacks): (&mut Interner, &mut Interner),
    warnings: &mut Vec<Diagnostic>,
    progress: &mut dyn FnMut(u64),
) -> RunData {
    let plan = run_plan(run);
    let Some(db_read) = plan.iter().find(|r| r.reader == Kind::Database) else {
        if let Some(sh) = shared {
            return read_text_shared(sh, run, &plan, opts, (names, stacks), warnings);
        }
        return read_text(files, run, &plan, opts, (names, stacks), warnings, progress);
    };
    let db_path = db_read.path;
    for other in run.files.db.iter().filter(|p| p.as_str() != db_path) {
        warnings.push(Diagnostic::warning(
            other,
            format!("a second database export in the run folder; {db_path} is read, not this one"),
        ));
    }
    // `<db>-wal` beside it: a write-ahead log whose pages the db file does not hold yet.
    let wal = files.open(&format!("{db_path}-wal")).ok();
    let layout = DbLayout::of(db_path);
    let file = DbFile {
        path: db_path.to_string(),
        layout,
    };
    let mut db_warnings = Vec::new();
    let read = open_and(
        files,
        db_path,
        &mut db_warnings,
        progress,
        &mut |src, prog| match layout {
            DbLayout::Msprof => msprof_db::read_msprof_db(src, wal.as_deref(), names, Some(prog)),
            DbLayout::TorchNpu => db::read_db(src, wal.as_deref(), names, stacks, Some(prog)),
        },
    );
    let text = text_plan(run);
    match read {
        Some(mut x) => {
            warnings.append(&mut db_warnings);
            warnings.append(&mut x.warnings);
            RunData {
                trace: x.trace,
                operator_memory: x.operator_memory,
                memory_record: x.memory_record,
                module_mem: x.module_mem,
                db: Some(file),
                rank: x.rank,
            }
        }
        None if !text.is_empty() => {
            for d in &mut db_warnings {
                d.severity = crate::diag::Severity::Warning;
                d.message = format!("{}; the text files are read instead", d.message);
            }
            warnings.append(&mut db_warnings);
            if let Some(sh) = shared {
                return read_text_shared(sh, run, &text, opts, (names, stacks), warnings);
            }
            read_text(files, run, &text, opts, (names, stacks), warnings, progress)
        }
        None => {
            warnings.append(&mut db_warnings);
            RunData::empty(Some(file))
        }
    }
}

/// Reads the text files of `plan` (the trace first, as planned).
fn read_text(
    files: &dyn FileOpener,
    run: &ProfilerRun,
    plan: &[Read<'_>],
    opts: &AnalyzeOptions,
    (names, stacks): (&mut Interner, &mut Interner),
    warnings: &mut Vec<Diagnostic>,
    progress: &mut dyn FnMut(u64),
) -> RunData {
    let mut data = RunData::empty(None);
    warn_without_trace(run, plan, warnings);
    for r in plan {
        if files.stopped() {
            // The load was stopped: the caller asks too, and ends ([`super::analysis::try_analyze_job`]).
            break;
        }
        let p = r.path;
        match r.reader {
            Kind::Trace => {
                data.trace = open_and(files, p, warnings, progress, &mut |src, prog| {
                    trace::read_trace(src, names, stacks, opts.trace, Some(prog))
                })
            }
            Kind::OperatorMemory => {
                data.operator_memory = open_and(files, p, warnings, progress, &mut |src, prog| {
                    operator_memory::read_operator_memory(src, names, Some(prog))
                })
            }
            Kind::MemoryRecord => {
                data.memory_record = open_and(files, p, warnings, progress, &mut |src, prog| {
                    memory_record::read_memory_record(src, Some(prog))
                })
            }
            Kind::ModuleMem => {
                data.module_mem = open_and(files, p, warnings, progress, &mut |src, prog| {
                    module_mem::read_module_mem(src, Some(prog))
                })
            }
            // A text plan holds no database.
            Kind::Database => {}
        }
    }
    data
}

/// The warning of a run folder whose allocations cannot get a call stack.
fn warn_without_trace(run: &ProfilerRun, plan: &[Read<'_>], warnings: &mut Vec<Diagnostic>) {
    let has = |k: Kind| plan.iter().any(|r| r.reader == k);
    if has(Kind::OperatorMemory) && !has(Kind::Trace) {
        warnings.push(Diagnostic::warning(
            run.place(),
            "no trace_view.json: allocations get no call stack",
        ));
    }
}

/// [`read_text`] with the trace scanned on this thread (its pieces in parallel, as always) while
/// the CSV files are read one after another on another thread of the pool: a rank's CSV files
/// no longer wait for its trace, so the pool's threads are busy when fewer ranks than threads are
/// left. The result is the same as [`read_text`]'s, ids included: the CSV reader interns into its
/// own interner, whose strings are interned into the rank's after the trace's, in the order they
/// were first met, which is the order the sequential reads gave them. Warnings are in plan order.
fn read_text_shared(
    sh: Shared<'_>,
    run: &ProfilerRun,
    plan: &[Read<'_>],
    opts: &AnalyzeOptions,
    (names, stacks): (&mut Interner, &mut Interner),
    warnings: &mut Vec<Diagnostic>,
) -> RunData {
    let mut data = RunData::empty(None);
    warn_without_trace(run, plan, warnings);
    // Each read's warnings, by its place in the plan.
    let mut per_read: Vec<Vec<Diagnostic>> = plan.iter().map(|_| Vec::new()).collect();
    let (trace_w, csv_w): (Vec<_>, Vec<_>) = per_read
        .iter_mut()
        .zip(plan)
        .partition(|(_, r)| r.reader == Kind::Trace);
    let mut csv_names = Interner::new();
    let mut trace = None;
    let (mut om, mut mr, mut mm) = (None, None, None);
    let files = sh.files;
    rayon::join(
        || {
            for (w, r) in trace_w {
                trace = open_and(
                    files,
                    r.path,
                    w,
                    &mut |b| (sh.progress)(b),
                    &mut |src, prog| trace::read_trace(src, names, stacks, opts.trace, Some(prog)),
                );
            }
        },
        || {
            for (w, r) in csv_w {
                let p = r.path;
                let done = &mut |b| (sh.progress)(b);
                match r.reader {
                    Kind::OperatorMemory => {
                        om = open_and(files, p, w, done, &mut |src, prog| {
                            operator_memory::read_operator_memory(src, &mut csv_names, Some(prog))
                        })
                    }
                    Kind::MemoryRecord => {
                        mr = open_and(files, p, w, done, &mut |src, prog| {
                            memory_record::read_memory_record(src, Some(prog))
                        })
                    }
                    Kind::ModuleMem => {
                        mm = open_and(files, p, w, done, &mut |src, prog| {
                            module_mem::read_module_mem(src, Some(prog))
                        })
                    }
                    Kind::Trace | Kind::Database => {}
                }
            }
        },
    );
    if let Some(om) = &mut om {
        let ids: Vec<u32> = (0..csv_names.len())
            .map(|k| names.intern(csv_names.get(k as u32)))
            .collect();
        let id = |k: u32| ids.get(k as usize).copied().unwrap_or(0);
        for row in &mut om.rows {
            row.name = id(row.name);
            row.stream = id(row.stream);
            row.device = id(row.device);
        }
    }
    for mut w in per_read {
        warnings.append(&mut w);
    }
    data.trace = trace;
    data.operator_memory = om;
    data.memory_record = mr;
    data.module_mem = mm;
    data
}
