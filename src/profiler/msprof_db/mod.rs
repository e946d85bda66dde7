//! The database export in msprof's own layout: msprof's `msprof_{timestamp}.db`, which
//! MindSpore's profiler with `export_type` Db moves unchanged to
//! `ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler[_{rank}].db` (see
//! [`super::run_folder::is_msprof_db_name`]), read into the same rows and series as every other
//! profiler export.
//!
//! The layout, from the writer (Ascend/msprof,
//! `docs/en/user_guide/profile_data_file_references_db.md` at commit
//! 0290a4955e46818b989c8e411a90a9aa1780f8ef, and
//! `analysis/csrc/domain/data_process/system/npu_op_mem_processor.cpp` at commit
//! f9339ac170d47fe2723ab67b119a48485cbbc146): times are local Unix nanoseconds, memory is bytes,
//! every name is an id into `STRING_IDS`.
//!
//! - `NPU_OP_MEM (operatorName, addr, type, size, timestampNs, globalTid, totalAllocate,
//!   totalReserve, component, deviceId)`: one row per allocation or release of a CANN (GE)
//!   operator's memory. `type` is the string id of `allocate` or `release` (the writer gives a
//!   raw record of negative size `release` and stores the size's absolute value); `addr` is the
//!   block's address; `totalAllocate` / `totalReserve` are the GE allocator's totals after the
//!   event; `component` is the string id of `GE` (the writer's only one); `deviceId` comes from
//!   the record's `NPU:<n>` (65535 when it could not be parsed). An allocation is paired with the
//!   next release of the same address on the same device ([`pair`]): the pairs are the GE rows
//!   ([`RowSource::Ge`](super::operator_memory::RowSource), `cann::` names, as the text export
//!   writes them), the totals are the `GE` series of the memory records.
//! - `NPU_MEM` (the `APP` series) and `NPU_MODULE_MEM` are msprof's tables that torch_npu's db
//!   export copies: the same readers serve both ([`super::db::memory`]).
//! - `RANK_DEVICE_MAP`: msprof writes rank -1 (unknown), which gives no rank.
//!
//! Not in this export: the framework's own allocator records (MindSpore's `MindSpore` series comes
//! from its FRAMEWORK folder into the text export's `memory_record.csv` only) and op spans with
//! call stacks, so GE allocations have no stack and the rank's peak is the GE allocator's.

mod pair;

use super::db::columns::{int, Cols};
use super::db::memory::{app_series, finish_series, read_module_mem};
use super::db::{read_export, read_rank, DbExport, Reader, Strings};
use super::memory_record::Series;
use super::operator_memory::{Layout, OperatorMemory, MAX_BLOCK_BYTES};
use super::Interner;
use crate::diag::Diagnostic;
use crate::profiler::csv_common::Warnings;
use crate::source::Source;
use pair::{Event, Kind};

/// The columns of `NPU_OP_MEM` read, the first four required.
const OP_MEM_COLS: &[&str] = &[
    "addr",
    "type",
    "size",
    "timestampNs",
    "operatorName",
    "totalAllocate",
    "totalReserve",
    "component",
    "deviceId",
];

/// The `deviceId` msprof writes when the record's device could not be parsed (`UINT16_MAX`).
const NO_DEVICE: i64 = 65535;

/// Reads the msprof-layout db in `src` (`wal`, `names`, `progress` as for
/// [`super::db::read_db`]).
///
/// Returns `Err` when the file is not a readable SQLite database or has no `STRING_IDS`;
/// a missing or damaged table is a warning of the export, the rest is read.
pub fn read_msprof_db(
    src: &dyn Source,
    wal: Option<&dyn Source>,
    names: &mut Interner,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<DbExport, Diagnostic> {
    read_export(
        src,
        wal,
        progress,
        "a database export of msprof or MindSpore",
        &mut |r, strings, stop| {
            read_rank(r);
            stop(r.db)?;
            let mut w = Warnings::default();
            let app = app_series(r, strings, &mut w);
            stop(r.db)?;
            let ge = read_op_mem(r, strings, names);
            stop(r.db)?;
            if app.is_some() || ge.is_some() {
                let series: Vec<Series> = app.into_iter().chain(ge).collect();
                r.export.memory_record = Some(finish_series(series, w));
            }
            read_module_mem(r);
            stop(r.db)
        },
    )
}

/// Reads `NPU_OP_MEM` into the export's operator memory and returns the allocator's series.
fn read_op_mem(
    r: &mut Reader<'_, '_, '_>,
    strings: &Strings,
    names: &mut Interner,
) -> Option<Series> {
    let t = r.table(
        "NPU_OP_MEM",
        "no operator memory (profile with profile_memory=True; msprof: --task-memory=on)",
    )?;
    let c = match Cols::new(&t, OP_MEM_COLS, 4) {
        Ok(c) => c,
        Err(e) => {
            r.failed(e);
            return None;
        }
    };
    let file = r.file.clone();
    let mut w = Warnings::default();
    let mut events: Vec<Event> = Vec::new();
    let mut component: Option<String> = None;
    // Names repeat: each is made and interned once.
    let mut name_ids: std::collections::HashMap<i64, u32> = std::collections::HashMap::new();
    let res = r.scan(&t, &mut |row| {
        let skip = |w: &mut Warnings, k: usize, what: &str, why: &str| {
            w.add_keyed_at_byte(
                &file,
                row.offset(),
                &c.field(k),
                what,
                &format!("rowid {}: {why}; row skipped", row.rowid()),
            );
        };
        let kind = match c.string(row, 1, strings, &mut w, &file) {
            Some((_, "allocate")) => Kind::Alloc,
            Some((_, "release")) => Kind::Release,
            Some((_, other)) => {
                let why = format!(
                    "type {} is neither allocate nor release",
                    crate::quote::quote(other.as_bytes(), crate::quote::SHORT)
                );
                skip(&mut w, 1, "unknown type", &why);
                return Ok(());
            }
            None => {
                skip(&mut w, 1, "no type", "no type");
                return Ok(());
            }
        };
        let Some(addr) = c.int(row, 0, &mut w, &file) else {
            skip(&mut w, 0, "no address", "no address");
            return Ok(());
        };
        // The writer stores sizes as they are for both kinds: a negative one is damage.
        let size = match int(c.value(row, 2)) {
            Ok(Some(v)) if (0..=MAX_BLOCK_BYTES as i64).contains(&v) => v.unsigned_abs(),
            Ok(Some(v)) => {
                let why = format!("expected a block size of 0 to 1 PiB, found {v} bytes");
                skip(&mut w, 2, "size out of range", &why);
                return Ok(());
            }
            Ok(None) => {
                skip(&mut w, 2, "no size", "no size");
                return Ok(());
            }
            Err(found) => {
                let why = format!("expected an integer size, found {found}");
                skip(&mut w, 2, "bad size", &why);
                return Ok(());
            }
        };
        let Some(ts) = c.int(row, 3, &mut w, &file) else {
            skip(&mut w, 3, "no time", "no time");
            return Ok(());
        };
        if component.is_none() {
            if let Some((_, s)) = c.string(row, 7, strings, &mut w, &file) {
                component = Some(s.to_string());
            }
        }
        let name = c.string(row, 4, strings, &mut w, &file);
        let name = *name_ids
            .entry(name.map_or(i64::MIN, |n| n.0))
            .or_insert_with(|| names.intern(&format!("cann::{}", name.map_or("", |n| n.1))));
        let device = c.int(row, 8, &mut w, &file).filter(|&d| d != NO_DEVICE);
        events.push(Event {
            ts,
            rowid: row.rowid(),
            offset: row.offset(),
            kind,
            addr,
            device,
            size,
            name,
            allocated: c.bytes(row, 5, &mut w, &file),
            reserved: c.bytes(row, 6, &mut w, &file),
        });
        Ok(())
    });
    if let Err(e) = res {
        r.failed(e);
        return None;
    }
    let series_name = component.unwrap_or_else(|| "GE".to_string());
    let (rows, series) = pair::pair(events, series_name, names, &file, &mut w);
    r.export.operator_memory = Some(OperatorMemory {
        rows,
        layout: Layout::Other,
        warnings: w.into_vec(),
    });
    (!series.ts.is_empty()).then_some(series)
}
