//! The torch_npu database export (`ascend_pytorch_profiler_{rank}.db`), read into exactly the
//! rows, series, ops and stacks the text readers produce, so attribution, peaks, live sets,
//! fragmentation, step peaks, the job matrix and every export run unchanged on a db run.
//!
//! What comes from where (the export's tables; every name is an id into `STRING_IDS`):
//! - `OP_MEMORY` → the operator_memory rows ([`MemRow`]): bytes and integer nanoseconds, NULL
//!   release when never freed; `streamPtr` as its decimal text, `deviceId` as `NPU:<id>` (what
//!   the text export writes). A row is a GE (CANN) row when its name id is an `operatorName` of
//!   `NPU_OP_MEM`: torch_npu builds those rows from that table, with the CANN side's string ids
//!   (below 2^28), while it interns the names of its own (PTA) rows itself (ids from 2^28 up).
//!   The text export writes GE names with a `cann::` prefix; the db stores the bare kernel name,
//!   so the prefix is added here.
//! - `MEMORY_RECORD` → the memory_record series by component (`PTA`, `GE`, `PTA+GE`), preceded
//!   by the `APP` series the text export takes from `NPU_MEM` rows of type `app` (reserved =
//!   `hbm`). GE rows carry `totalActive` 0 where the text export leaves the field empty: read as
//!   unknown, as in the text.
//! - `NPU_MODULE_MEM` (module names from `ENUM_MODULE`) → the npu_module_mem series; a negative
//!   reserved value means "only frees seen", as -1 KB does in the text.
//! - `PYTORCH_API` rows of type `op` (`ENUM_API_TYPE`) → the `cpu_op` events: `startNs`/`endNs`
//!   (stored as TEXT, parsed exactly), `globalTid` = pid · 2^32 + tid, `sequenceNumber`,
//!   `fwdThreadId`, and the call stack of `callchainId`: the `PYTORCH_CALLCHAINS` frames of that
//!   id, innermost (`stackDepth` 0) first, joined with `;\r\n` — the text export's "Call stack"
//!   string, so the same stacks and top user frames come out. `ProfilerStep#N` ops are the steps.
//! - `RANK_DEVICE_MAP` → the rank, for a run folder whose `profiler_info` names none.
//!
//! Only these tables are read, page by page through [`crate::sqlite`]; a large db's other tables
//! (device tasks, communication) are never touched. A table that is absent is like a text file
//! that is absent (a warning, the rest is read); a damaged table is an error for that table.
//!
//! The work is split by table group: [`columns`] (typed access to a table's columns),
//! [`memory`] (allocations, allocator totals, module memory) and [`ops`] (op spans and stacks).

pub(super) mod columns;
pub(super) mod memory;
mod ops;

pub use ops::{MAX_FRAMES, MAX_STACK_BYTES};

use super::memory_record::MemoryRecord;
use super::module_mem::ModuleMem;
use super::operator_memory::OperatorMemory;
use super::trace::Trace;
use super::Interner;
use crate::diag::Diagnostic;
use crate::source::Source;
use crate::sqlite::{self, Database, DbError, Row, Table, Value};
use columns::{int, Cols};
use std::collections::HashMap;

/// What a db export holds for memory analysis, in the text readers' types.
#[derive(Debug, Default)]
pub struct DbExport {
    /// `OP_MEMORY` as operator_memory rows; `None` when the table is absent or unreadable.
    pub operator_memory: Option<OperatorMemory>,
    /// The `op` rows of `PYTORCH_API` as trace ops; `None` when absent or unreadable.
    pub trace: Option<Trace>,
    /// `NPU_MEM` (`APP`) and `MEMORY_RECORD` as memory_record series; `None` when both are absent.
    pub memory_record: Option<MemoryRecord>,
    /// `NPU_MODULE_MEM` as module series; `None` when absent or unreadable.
    pub module_mem: Option<ModuleMem>,
    /// The rank of `RANK_DEVICE_MAP` (when it holds exactly one).
    pub rank: Option<u32>,
    /// Absent tables and damaged tables (errors), in reading order.
    pub warnings: Vec<Diagnostic>,
}

/// Strings of `STRING_IDS` by id.
pub(super) struct Strings(HashMap<i64, Box<str>>);

impl Strings {
    pub(super) fn get(&self, id: i64) -> Option<&str> {
        self.0.get(&id).map(|s| &**s)
    }
}

/// Everything needed while one db is read.
pub(super) struct Reader<'d, 's, 'p> {
    pub(super) db: &'d Database<'s>,
    pub(super) file: String,
    pub(super) len: u64,
    pub(super) progress: Option<&'p mut dyn FnMut(u64, u64)>,
    pub(super) export: DbExport,
}

impl Reader<'_, '_, '_> {
    pub(super) fn tick(&mut self) {
        let read = self.db.bytes_read().min(self.len);
        if let Some(p) = self.progress.as_mut() {
            p(read, self.len);
        }
    }

    /// The table `name`, or a note that it is absent (`why` says what is lost).
    pub(super) fn table(&mut self, name: &str, why: &str) -> Option<Table> {
        match self.db.table(name) {
            Some(t) => Some(t.clone()),
            None => {
                if !why.is_empty() {
                    self.export.warnings.push(Diagnostic::warning(
                        &self.file,
                        format!("no {name} table: {why}"),
                    ));
                }
                None
            }
        }
    }

    /// Scans `table`, calling `f` per row and reporting progress every few thousand rows.
    pub(super) fn scan(
        &mut self,
        table: &Table,
        f: &mut dyn FnMut(&Row<'_>) -> Result<(), DbError>,
    ) -> Result<(), DbError> {
        let mut n = 0u32;
        let db = self.db;
        let mut progress = self.progress.take();
        let len = self.len;
        let r = db.scan(table, &mut |row| {
            n = n.wrapping_add(1);
            if n % 4096 == 0 {
                if let Some(p) = progress.as_mut() {
                    p(db.bytes_read().min(len), len);
                }
            }
            f(row)
        });
        self.progress = progress;
        self.tick();
        r
    }

    /// Records a damaged table as an error of this file.
    pub(super) fn failed(&mut self, e: DbError) {
        self.export.warnings.push(e.to_diagnostic(&self.file));
    }
}

/// Reads the db export in `src`.
///
/// `wal` is the `-wal` file beside it, if any: when it holds committed pages the database file
/// alone is incomplete, and the read stops with an error naming that file. `names` and `stacks`
/// receive op names and call stacks as the text readers intern them.
///
/// Returns `Err` when the file is not a readable SQLite database at all (or `STRING_IDS`, which
/// every other table refers to, is missing or damaged); problems of single tables are in the
/// export's warnings.
pub fn read_db(
    src: &dyn Source,
    wal: Option<&dyn Source>,
    names: &mut Interner,
    stacks: &mut Interner,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<DbExport, Diagnostic> {
    read_export(
        src,
        wal,
        progress,
        "a torch_npu profiler database",
        &mut |r, strings, stop| {
            read_rank(r);
            stop(r.db)?;
            memory::read_op_memory(r, strings, names);
            stop(r.db)?;
            memory::read_memory_record(r, strings);
            stop(r.db)?;
            memory::read_module_mem(r);
            stop(r.db)?;
            ops::read_ops(r, strings, names, stacks);
            stop(r.db)
        },
    )
}

/// Asks after each table whether the load was stopped (see [`read_export`]).
pub(super) type Stop<'a> = dyn Fn(&Database<'_>) -> Result<(), Diagnostic> + 'a;

/// The frame of every database export's read: opens `src` (refusing it when its `-wal` holds
/// pages the file lacks), reads `STRING_IDS` (`what` names the export in the message when that
/// table is missing), then lets `body` read its tables, calling `stop` after each.
pub(super) fn read_export(
    src: &dyn Source,
    wal: Option<&dyn Source>,
    progress: Option<&mut dyn FnMut(u64, u64)>,
    what: &str,
    body: &mut dyn FnMut(&mut Reader<'_, '_, '_>, &Strings, &Stop<'_>) -> Result<(), Diagnostic>,
) -> Result<DbExport, Diagnostic> {
    let file = src.name().to_string();
    let db = Database::open(src).map_err(|e| e.to_diagnostic(&file))?;
    if let Some(wal) = wal {
        let frames = sqlite::wal_frames(wal).map_err(|e| e.to_diagnostic(wal.name()))?;
        if frames > 0 {
            return Err(Diagnostic::error(
                wal.name(),
                format!(
                    "the database {file} is incomplete: this write-ahead log holds {frames} \
                     newer page(s) that are not in it yet. Open the database once with sqlite3 \
                     (which moves them into the file), or copy it after the profiler has \
                     finished"
                ),
            ));
        }
    }
    let mut r = Reader {
        db: &db,
        file: file.clone(),
        len: src.len(),
        progress,
        export: DbExport::default(),
    };
    // A stop seen inside a table (the pager asks every MiB of pages) ends that table's scan,
    // which on its own would only be a damaged table among the warnings: asked again after
    // each table, it ends the whole read, never with the tables read so far as the export.
    let stop = |db: &Database<'_>| src.check_stop(db.position()).map_err(Diagnostic::from);
    let strings = read_strings(&mut r, what);
    stop(&db)?;
    let strings = strings.map_err(|e| e.to_diagnostic(&file))?;
    body(&mut r, &strings, &stop)?;
    Ok(r.export)
}

fn read_strings(r: &mut Reader<'_, '_, '_>, what: &str) -> Result<Strings, DbError> {
    let t = r.db.table("STRING_IDS").ok_or_else(|| {
        DbError::new(format!(
            "no STRING_IDS table: not {what} (every name of the export is an id into that table)"
        ))
    })?;
    let t = t.clone();
    let c = Cols::new(&t, &["id", "value"], 2)?;
    let mut map = HashMap::new();
    r.scan(&t, &mut |row| {
        if let (Ok(Some(id)), Value::Text(s)) = (int(c.value(row, 0)), c.value(row, 1)) {
            map.insert(id, Box::from(String::from_utf8_lossy(s).as_ref()));
        }
        Ok(())
    })?;
    Ok(Strings(map))
}

/// The rank of `RANK_DEVICE_MAP`, when the table holds exactly one that is not negative.
pub(super) fn read_rank(r: &mut Reader<'_, '_, '_>) {
    let Some(t) = r.table("RANK_DEVICE_MAP", "") else {
        return;
    };
    let Ok(c) = Cols::new(&t, &["rankId"], 1) else {
        return;
    };
    let mut ranks = Vec::new();
    let res = r.scan(&t, &mut |row| {
        if let Ok(Some(k)) = int(c.value(row, 0)) {
            ranks.push(k);
        }
        Ok(())
    });
    if let Err(e) = res {
        r.failed(e);
        return;
    }
    ranks.sort_unstable();
    ranks.dedup();
    if let [one] = ranks[..] {
        r.export.rank = u32::try_from(one).ok();
    }
}
