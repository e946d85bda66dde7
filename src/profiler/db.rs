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

use super::csv_common::Warnings;
use super::memory_record::{MemoryRecord, Series};
use super::module_mem::{ModuleMem, ModuleSeries};
use super::operator_memory::{
    Layout, MemRow, OperatorMemory, RowSource, MAX_BLOCK_BYTES, RELEASED_BEFORE_ALLOCATED,
};
use super::trace::{Ops, StepSpan, Trace};
use super::Interner;
use crate::diag::Diagnostic;
use crate::source::Source;
use crate::sqlite::{self, Database, DbError, Row, Table, Value};
use std::collections::{HashMap, HashSet};

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
struct Strings(HashMap<i64, Box<str>>);

impl Strings {
    fn get(&self, id: i64) -> Option<&str> {
        self.0.get(&id).map(|s| &**s)
    }
}

/// A value of the wrong kind, described for a message.
fn show(v: Value<'_>) -> String {
    match v {
        Value::Text(t) => format!(
            "text \"{}\"",
            String::from_utf8_lossy(t)
                .chars()
                .take(40)
                .collect::<String>()
        ),
        Value::Real(r) => format!("real {r}"),
        other => other.type_name().to_string(),
    }
}

/// An integer from an INTEGER column; whole reals and integer text (the export keeps some times
/// as TEXT) are accepted. `Err` describes what was found.
fn int(v: Value<'_>) -> Result<Option<i64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Integer(i) => Ok(Some(i)),
        Value::Real(r) if r.fract() == 0.0 && r.abs() < 9.0e18 => Ok(Some(r as i64)),
        Value::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .map(Some)
            .ok_or_else(|| show(v)),
        other => Err(show(other)),
    }
}

/// The columns of one table a reader needs, resolved by name once.
struct Cols<'t> {
    table: &'t Table,
    idx: Vec<Option<usize>>,
    names: &'static [&'static str],
}

impl<'t> Cols<'t> {
    /// Resolves `names`; the first `required` of them must exist.
    fn new(
        table: &'t Table,
        names: &'static [&'static str],
        required: usize,
    ) -> Result<Self, DbError> {
        let idx: Vec<Option<usize>> = names.iter().map(|n| table.column(n)).collect();
        let missing: Vec<&str> = names
            .iter()
            .zip(&idx)
            .take(required)
            .filter(|(_, i)| i.is_none())
            .map(|(n, _)| *n)
            .collect();
        if !missing.is_empty() {
            let have: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
            return Err(DbError::new(format!(
                "table {} has no column {} (its columns: {})",
                table.name,
                missing.join(", "),
                have.join(", ")
            )));
        }
        Ok(Cols { table, idx, names })
    }

    fn value<'r>(&self, row: &Row<'r>, k: usize) -> Value<'r> {
        match self.idx.get(k).copied().flatten() {
            Some(i) => row.get(i),
            None => Value::Null,
        }
    }

    /// `TABLE.column`, for messages.
    fn field(&self, k: usize) -> String {
        format!(
            "{}.{}",
            self.table.name,
            self.names.get(k).copied().unwrap_or("")
        )
    }

    /// Integer column `k`; a value of another kind is a keyed warning and reads as `None`.
    fn int(&self, row: &Row<'_>, k: usize, w: &mut Warnings, file: &str) -> Option<i64> {
        match int(self.value(row, k)) {
            Ok(v) => v,
            Err(found) => {
                let field = self.field(k);
                w.add_keyed_at_byte(
                    file,
                    row.offset(),
                    &field,
                    "not an integer",
                    &format!(
                        "rowid {}: expected an integer, found {found}; read as empty",
                        row.rowid()
                    ),
                );
                None
            }
        }
    }

    /// Non-negative byte count in column `k` (a negative one is a warning and reads as `None`).
    fn bytes(&self, row: &Row<'_>, k: usize, w: &mut Warnings, file: &str) -> Option<u64> {
        let v = self.int(row, k, w, file)?;
        match u64::try_from(v) {
            Ok(b) => Some(b),
            Err(_) => {
                w.add_keyed_at_byte(
                    file,
                    row.offset(),
                    &self.field(k),
                    "negative bytes",
                    &format!(
                        "rowid {}: expected a byte count, found {v}; read as empty",
                        row.rowid()
                    ),
                );
                None
            }
        }
    }

    /// The `STRING_IDS` text of the id in column `k` (`None` for NULL; an unknown id is a
    /// warning and reads as the empty string).
    fn string<'s>(
        &self,
        row: &Row<'_>,
        k: usize,
        strings: &'s Strings,
        w: &mut Warnings,
        file: &str,
    ) -> Option<(i64, &'s str)> {
        let id = self.int(row, k, w, file)?;
        match strings.get(id) {
            Some(s) => Some((id, s)),
            None => {
                w.add_keyed_at_byte(
                    file,
                    row.offset(),
                    &self.field(k),
                    "unknown string id",
                    &format!(
                        "rowid {}: string id {id} is not in STRING_IDS; read as empty",
                        row.rowid()
                    ),
                );
                Some((id, ""))
            }
        }
    }
}

/// Everything needed while one db is read.
struct Reader<'d, 's, 'p> {
    db: &'d Database<'s>,
    file: String,
    len: u64,
    progress: Option<&'p mut dyn FnMut(u64, u64)>,
    export: DbExport,
}

impl Reader<'_, '_, '_> {
    fn tick(&mut self) {
        let read = self.db.bytes_read().min(self.len);
        if let Some(p) = self.progress.as_mut() {
            p(read, self.len);
        }
    }

    /// The table `name`, or a note that it is absent (`why` says what is lost).
    fn table(&mut self, name: &str, why: &str) -> Option<Table> {
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
    fn scan(
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
    fn failed(&mut self, e: DbError) {
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
    let strings = read_strings(&mut r).map_err(|e| e.to_diagnostic(&file))?;
    read_rank(&mut r);
    read_op_memory(&mut r, &strings, names);
    read_memory_record(&mut r, &strings);
    read_module_mem(&mut r);
    read_ops(&mut r, &strings, names, stacks);
    Ok(r.export)
}

fn read_strings(r: &mut Reader<'_, '_, '_>) -> Result<Strings, DbError> {
    let t = r.db.table("STRING_IDS").ok_or_else(|| {
        DbError::new(
            "no STRING_IDS table: not a torch_npu profiler database (every name of the export \
             is an id into that table)",
        )
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

fn read_rank(r: &mut Reader<'_, '_, '_>) {
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

const OP_MEMORY_COLS: &[&str] = &[
    "name",
    "size",
    "allocationTime",
    "releaseTime",
    "activeReleaseTime",
    "duration",
    "activeDuration",
    "allocationTotalAllocated",
    "allocationTotalReserved",
    "allocationTotalActive",
    "releaseTotalAllocated",
    "releaseTotalReserved",
    "releaseTotalActive",
    "streamPtr",
    "deviceId",
];

/// The name ids of `NPU_OP_MEM.operatorName`: the GE rows' names.
fn ge_names(r: &mut Reader<'_, '_, '_>) -> HashSet<i64> {
    let mut set = HashSet::new();
    let Some(t) = r.table("NPU_OP_MEM", "") else {
        return set;
    };
    let c = match Cols::new(&t, &["operatorName"], 1) {
        Ok(c) => c,
        Err(e) => {
            r.failed(e);
            return set;
        }
    };
    let res = r.scan(&t, &mut |row| {
        if let Ok(Some(id)) = int(c.value(row, 0)) {
            set.insert(id);
        }
        Ok(())
    });
    if let Err(e) = res {
        r.failed(e.context("GE rows cannot be told from PTA rows"));
    }
    set
}

fn read_op_memory(r: &mut Reader<'_, '_, '_>, strings: &Strings, names: &mut Interner) {
    let ge = ge_names(r);
    let Some(t) = r.table(
        "OP_MEMORY",
        "no allocations (profile with profile_memory=True)",
    ) else {
        return;
    };
    let c = match Cols::new(&t, OP_MEMORY_COLS, 3) {
        Ok(c) => c,
        Err(e) => return r.failed(e),
    };
    let file = r.file.clone();
    let mut w = Warnings::default();
    let mut rows = Vec::new();
    let mut name_ids: HashMap<(i64, bool), u32> = HashMap::new();
    let mut numbers: HashMap<(u8, Option<i64>), u32> = HashMap::new();
    let res = r.scan(&t, &mut |row| {
        let field = |k: usize| c.field(k);
        let size = match int(c.value(row, 1)) {
            Ok(Some(size)) => size,
            Ok(None) => {
                w.add_keyed_at_byte(
                    &file,
                    row.offset(),
                    &field(1),
                    "empty size",
                    &format!("rowid {}: no size; row skipped", row.rowid()),
                );
                return Ok(());
            }
            Err(found) => {
                w.add_keyed_at_byte(
                    &file,
                    row.offset(),
                    &field(1),
                    "bad size",
                    &format!(
                        "rowid {}: expected an integer size, found {found}; row skipped",
                        row.rowid()
                    ),
                );
                return Ok(());
            }
        };
        if size.unsigned_abs() > MAX_BLOCK_BYTES {
            w.add_keyed_at_byte(
                &file,
                row.offset(),
                &field(1),
                "size out of range",
                &format!(
                    "rowid {}: expected a block size of at most 1 PiB, found {size} bytes; row \
                     skipped",
                    row.rowid()
                ),
            );
            return Ok(());
        }
        let alloc_ns = c.int(row, 2, &mut w, &file);
        let release_ns = c.int(row, 3, &mut w, &file);
        if alloc_ns.is_none() && release_ns.is_none() {
            w.add_keyed_at_byte(
                &file,
                row.offset(),
                &field(2),
                "no time",
                &format!(
                    "rowid {}: neither an allocation nor a release time; row skipped",
                    row.rowid()
                ),
            );
            return Ok(());
        }
        let name = c.string(row, 0, strings, &mut w, &file);
        let is_ge = name.is_some_and(|(id, _)| ge.contains(&id));
        // Names, streams and devices repeat: each text is made and interned once.
        let name_key = name.map_or(i64::MIN, |(id, _)| id);
        let name_id = *name_ids.entry((name_key, is_ge)).or_insert_with(|| {
            let text = name.map_or("", |(_, s)| s);
            if is_ge {
                names.intern(&format!("cann::{text}"))
            } else {
                names.intern(text)
            }
        });
        let stream = c.int(row, 13, &mut w, &file);
        let stream = *numbers
            .entry((0, stream))
            .or_insert_with(|| names.intern(&stream.map(|s| s.to_string()).unwrap_or_default()));
        let device = c.int(row, 14, &mut w, &file);
        let device = *numbers.entry((1, device)).or_insert_with(|| {
            names.intern(&device.map(|d| format!("NPU:{d}")).unwrap_or_default())
        });
        let mut m = MemRow {
            name: name_id,
            source: if is_ge { RowSource::Ge } else { RowSource::Pta },
            size: size.unsigned_abs(),
            negative: size < 0,
            alloc_ns,
            release_ns,
            active_release_ns: c.int(row, 4, &mut w, &file),
            duration_ns: c.int(row, 5, &mut w, &file),
            active_duration_ns: c.int(row, 6, &mut w, &file),
            alloc_total_allocated: c.bytes(row, 7, &mut w, &file),
            alloc_total_reserved: c.bytes(row, 8, &mut w, &file),
            alloc_total_active: c.bytes(row, 9, &mut w, &file),
            release_total_allocated: c.bytes(row, 10, &mut w, &file),
            release_total_reserved: c.bytes(row, 11, &mut w, &file),
            release_total_active: c.bytes(row, 12, &mut w, &file),
            stream,
            device,
            line: u64::try_from(row.rowid()).unwrap_or(0),
        };
        m.fill_lifetime();
        if m.released_before_allocated() {
            w.add_keyed_at_byte(
                &file,
                row.offset(),
                &field(3),
                "release before allocation",
                RELEASED_BEFORE_ALLOCATED,
            );
        }
        rows.push(m);
        Ok(())
    });
    match res {
        Ok(()) => {
            r.export.operator_memory = Some(OperatorMemory {
                rows,
                layout: Layout::Current,
                warnings: w.into_vec(),
            })
        }
        Err(e) => r.failed(e),
    }
}

/// The `APP` series of `NPU_MEM` (rows whose type is the string `app`; reserved = `hbm`).
fn app_series(r: &mut Reader<'_, '_, '_>, strings: &Strings, w: &mut Warnings) -> Option<Series> {
    let t = r.table("NPU_MEM", "")?;
    let c = match Cols::new(&t, &["type", "hbm", "timestampNs"], 3) {
        Ok(c) => c,
        Err(e) => {
            r.failed(e);
            return None;
        }
    };
    let file = r.file.clone();
    let mut s = Series {
        component: "APP".to_string(),
        ..Series::default()
    };
    let res = r.scan(&t, &mut |row| {
        let is_app = c
            .string(row, 0, strings, w, &file)
            .is_some_and(|(_, s)| s == "app");
        if !is_app {
            return Ok(());
        }
        let Some(ts) = c.int(row, 2, w, &file) else {
            return Ok(());
        };
        s.ts.push(ts);
        s.allocated.push(None);
        s.reserved.push(c.bytes(row, 1, w, &file));
        s.active.push(None);
        Ok(())
    });
    if let Err(e) = res {
        r.failed(e);
        return None;
    }
    (!s.ts.is_empty()).then_some(s)
}

fn read_memory_record(r: &mut Reader<'_, '_, '_>, strings: &Strings) {
    let mut w = Warnings::default();
    let mut series: Vec<Series> = app_series(r, strings, &mut w).into_iter().collect();
    let had_app = !series.is_empty();
    let Some(t) = r.table(
        "MEMORY_RECORD",
        "no allocator totals over time (the curve is rebuilt from OP_MEMORY)",
    ) else {
        if had_app {
            r.export.memory_record = Some(finish_series(series, w));
        }
        return;
    };
    let c = match Cols::new(
        &t,
        &[
            "component",
            "timestamp",
            "totalAllocated",
            "totalReserved",
            "totalActive",
        ],
        2,
    ) {
        Ok(c) => c,
        Err(e) => return r.failed(e),
    };
    let file = r.file.clone();
    let mut index: HashMap<i64, usize> = HashMap::new();
    let res = r.scan(&t, &mut |row| {
        let Some((id, component)) = c.string(row, 0, strings, &mut w, &file) else {
            return Ok(());
        };
        let Some(ts) = c.int(row, 1, &mut w, &file) else {
            return Ok(());
        };
        let k = match index.get(&id) {
            Some(&k) => k,
            None => {
                // The same text can have two ids; series are by text, as in the CSV.
                let k = match series.iter().position(|s| s.component == component) {
                    Some(k) => k,
                    None if series.len() >= super::memory_record::MAX_SERIES => {
                        return Ok(());
                    }
                    None => {
                        series.push(Series {
                            component: component.to_string(),
                            ..Series::default()
                        });
                        series.len() - 1
                    }
                };
                index.insert(id, k);
                k
            }
        };
        let ge = component == "GE";
        let active = c.bytes(row, 4, &mut w, &file).filter(|&a| !(ge && a == 0));
        if let Some(s) = series.get_mut(k) {
            s.ts.push(ts);
            s.allocated.push(c.bytes(row, 2, &mut w, &file));
            s.reserved.push(c.bytes(row, 3, &mut w, &file));
            s.active.push(active);
        }
        Ok(())
    });
    match res {
        Ok(()) => r.export.memory_record = Some(finish_series(series, w)),
        Err(e) => r.failed(e),
    }
}

fn finish_series(mut series: Vec<Series>, w: Warnings) -> MemoryRecord {
    for s in &mut series {
        s.sort_by_time();
        s.shrink_to_fit();
    }
    MemoryRecord {
        series,
        mindspore: false,
        warnings: w.into_vec(),
    }
}

fn read_module_mem(r: &mut Reader<'_, '_, '_>) {
    let Some(t) = r.table("NPU_MODULE_MEM", "") else {
        return;
    };
    let c = match Cols::new(
        &t,
        &["moduleId", "timestampNs", "totalReserved", "deviceId"],
        3,
    ) {
        Ok(c) => c,
        Err(e) => return r.failed(e),
    };
    let mut modules_by_id: HashMap<i64, String> = HashMap::new();
    if let Some(e) = r.table("ENUM_MODULE", "module names are shown as numbers") {
        if let Ok(ec) = Cols::new(&e, &["id", "name"], 2) {
            let res = r.scan(&e, &mut |row| {
                if let (Ok(Some(id)), Value::Text(n)) = (int(ec.value(row, 0)), ec.value(row, 1)) {
                    modules_by_id.insert(id, String::from_utf8_lossy(n).into_owned());
                }
                Ok(())
            });
            if let Err(e) = res {
                r.failed(e);
            }
        }
    }
    let file = r.file.clone();
    let mut w = Warnings::default();
    let mut out: Vec<ModuleSeries> = Vec::new();
    let mut index: HashMap<(i64, Option<i64>), usize> = HashMap::new();
    let res = r.scan(&t, &mut |row| {
        let (Some(id), Some(ts)) = (c.int(row, 0, &mut w, &file), c.int(row, 1, &mut w, &file))
        else {
            return Ok(());
        };
        let device = c.int(row, 3, &mut w, &file);
        // Negative: only frees were seen (-1 KB in the text export), unknown.
        let reserved = c
            .int(row, 2, &mut w, &file)
            .and_then(|v| u64::try_from(v).ok());
        let k = match index.get(&(id, device)) {
            Some(&k) => k,
            None if out.len() >= super::memory_record::MAX_SERIES => return Ok(()),
            None => {
                out.push(ModuleSeries {
                    module: modules_by_id
                        .get(&id)
                        .cloned()
                        .unwrap_or_else(|| id.to_string()),
                    device: device.map(|d| format!("NPU:{d}")).unwrap_or_default(),
                    ..ModuleSeries::default()
                });
                index.insert((id, device), out.len() - 1);
                out.len() - 1
            }
        };
        if let Some(m) = out.get_mut(k) {
            m.ts.push(ts);
            m.reserved.push(reserved);
        }
        Ok(())
    });
    match res {
        Ok(()) => {
            r.export.module_mem = Some(ModuleMem {
                modules: out,
                has_device_id: false,
                kb: false,
                warnings: w.into_vec(),
            })
        }
        Err(e) => r.failed(e),
    }
}

/// Frames kept of one call chain (real stacks have tens).
pub const MAX_FRAMES: usize = 4096;

/// Bytes kept of one call stack's text (the text trace bounds an event the same way).
pub const MAX_STACK_BYTES: usize = 1 << 20;

/// Call chains by id: their frames' string ids, innermost first; `None` when the table is
/// absent or unreadable (said once, not per op).
fn read_callchains(r: &mut Reader<'_, '_, '_>) -> Option<HashMap<i64, Vec<i64>>> {
    let mut rows: Vec<(i64, i64, i64)> = Vec::new();
    let t = r.table("PYTORCH_CALLCHAINS", "ops have no call stacks")?;
    let c = match Cols::new(&t, &["id", "stack", "stackDepth"], 3) {
        Ok(c) => c,
        Err(e) => {
            r.failed(e);
            return None;
        }
    };
    let res = r.scan(&t, &mut |row| {
        if let (Ok(Some(id)), Ok(Some(s)), Ok(Some(d))) = (
            int(c.value(row, 0)),
            int(c.value(row, 1)),
            int(c.value(row, 2)),
        ) {
            rows.push((id, d, s));
        }
        Ok(())
    });
    if let Err(e) = res {
        r.failed(e);
        return None;
    }
    rows.sort_unstable();
    let mut out: HashMap<i64, Vec<i64>> = HashMap::new();
    let mut cut = 0u64;
    for (id, _, s) in rows {
        let frames = out.entry(id).or_default();
        if frames.len() < MAX_FRAMES {
            frames.push(s);
        } else {
            cut += 1;
        }
    }
    if cut > 0 {
        r.export.warnings.push(Diagnostic::warning(
            &r.file,
            format!(
                "PYTORCH_CALLCHAINS: {cut} frame(s) beyond the first {MAX_FRAMES} of a call chain \
                 left out"
            ),
        ));
    }
    Some(out)
}

/// The id of the `op` type in `ENUM_API_TYPE`.
fn op_type(r: &mut Reader<'_, '_, '_>) -> Option<i64> {
    let t = r.table(
        "ENUM_API_TYPE",
        "op spans cannot be told from other PYTORCH_API rows; allocations get no call stack",
    )?;
    let c = match Cols::new(&t, &["id", "name"], 2) {
        Ok(c) => c,
        Err(e) => {
            r.failed(e);
            return None;
        }
    };
    let mut found = None;
    let res = r.scan(&t, &mut |row| {
        if c.value(row, 1) == Value::Text(b"op") {
            found = int(c.value(row, 0)).ok().flatten();
        }
        Ok(())
    });
    if let Err(e) = res {
        r.failed(e);
        return None;
    }
    if found.is_none() {
        r.export.warnings.push(Diagnostic::warning(
            &r.file,
            "ENUM_API_TYPE names no type \"op\": op spans cannot be told from other PYTORCH_API \
             rows; allocations get no call stack",
        ));
    }
    found
}

const API_COLS: &[&str] = &[
    "startNs",
    "endNs",
    "name",
    "type",
    "globalTid",
    "sequenceNumber",
    "fwdThreadId",
    "callchainId",
];

fn read_ops(
    r: &mut Reader<'_, '_, '_>,
    strings: &Strings,
    names: &mut Interner,
    stacks: &mut Interner,
) {
    let Some(t) = r.table(
        "PYTORCH_API",
        "no op spans (profile with with_stack=True); allocations get no call stack",
    ) else {
        return;
    };
    let c = match Cols::new(&t, API_COLS, 4) {
        Ok(c) => c,
        Err(e) => return r.failed(e),
    };
    let Some(op) = op_type(r) else { return };
    let chains = read_callchains(r);
    let file = r.file.clone();
    let mut w = Warnings::default();
    let mut trace = Trace::default();
    let mut chain_stack: HashMap<i64, u32> = HashMap::new();
    let mut name_ids: HashMap<i64, u32> = HashMap::new();
    let mut joined = String::new();
    let before = r.db.bytes_read();
    let res = r.scan(&t, &mut |row| {
        trace.events += 1;
        if int(c.value(row, 3)) != Ok(Some(op)) {
            return Ok(());
        }
        let (Some(start), Some(end)) = (c.int(row, 0, &mut w, &file), c.int(row, 1, &mut w, &file))
        else {
            w.add_keyed_at_byte(
                &file,
                row.offset(),
                &c.field(0),
                "no time",
                &format!(
                    "rowid {}: an op without start or end time; op skipped",
                    row.rowid()
                ),
            );
            return Ok(());
        };
        let name = c.string(row, 2, strings, &mut w, &file);
        let name_id = *name_ids
            .entry(name.map_or(i64::MIN, |(id, _)| id))
            .or_insert_with(|| names.intern(name.map_or("", |(_, s)| s)));
        let name = name.map_or("", |(_, s)| s);
        let gtid = c.int(row, 4, &mut w, &file).unwrap_or(0);
        let stack = match c.int(row, 7, &mut w, &file) {
            None => 0,
            Some(chain) => match chain_stack.get(&chain) {
                Some(&s) => s,
                None => {
                    let s = match chains.as_ref().map(|m| m.get(&chain)) {
                        // No chain table: already said once.
                        None => 0,
                        Some(Some(frames)) => {
                            joined.clear();
                            for (i, f) in frames.iter().enumerate() {
                                let frame = strings.get(*f).unwrap_or("");
                                if joined.len() + frame.len() + 3 > MAX_STACK_BYTES {
                                    w.add_keyed_at_byte(
                                        &file,
                                        row.offset(),
                                        &c.field(7),
                                        "long call stack",
                                        &format!(
                                            "rowid {}: call chain {chain} is longer than \
                                             {MAX_STACK_BYTES} bytes; its outer frames are left \
                                             out",
                                            row.rowid()
                                        ),
                                    );
                                    break;
                                }
                                if i > 0 {
                                    joined.push_str(";\r\n");
                                }
                                joined.push_str(frame);
                            }
                            stacks.intern(&joined)
                        }
                        Some(None) => {
                            w.add_keyed_at_byte(
                                &file,
                                row.offset(),
                                &c.field(7),
                                "unknown call chain",
                                &format!(
                                    "rowid {}: call chain {chain} is not in PYTORCH_CALLCHAINS; \
                                     the op has no call stack",
                                    row.rowid()
                                ),
                            );
                            0
                        }
                    };
                    chain_stack.insert(chain, s);
                    s
                }
            },
        };
        let dur = end.saturating_sub(start).max(0);
        let ops: &mut Ops = &mut trace.ops;
        ops.name.push(name_id);
        ops.pid.push(gtid >> 32);
        ops.tid.push(gtid & 0xffff_ffff);
        ops.ts.push(start);
        ops.dur.push(dur);
        ops.seq.push(c.int(row, 5, &mut w, &file).unwrap_or(-1));
        ops.fwd_tid.push(c.int(row, 6, &mut w, &file).unwrap_or(0));
        ops.stack.push(stack);
        if let Some(n) = name.strip_prefix("ProfilerStep#") {
            if let Ok(step) = n.trim().parse::<u64>() {
                trace.steps.push(StepSpan {
                    step,
                    ts: start,
                    end: start.saturating_add(dur),
                });
            }
        }
        Ok(())
    });
    match res {
        Ok(()) => {
            trace.bytes = r.db.bytes_read().saturating_sub(before);
            trace.warnings = w.into_vec();
            r.export.trace = Some(trace);
        }
        Err(e) => r.failed(e),
    }
}
