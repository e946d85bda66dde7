//! The allocation rows (`OP_MEMORY`, GE names from `NPU_OP_MEM`), the allocator totals
//! (`NPU_MEM` for `APP`, then `MEMORY_RECORD`) and the module memory (`NPU_MODULE_MEM`).

use super::columns::{int, Cols};
use super::{Reader, Strings};
use crate::profiler::csv_common::Warnings;
use crate::profiler::memory_record::{MemoryRecord, Series};
use crate::profiler::module_mem::{ModuleMem, ModuleSeries};
use crate::profiler::operator_memory::{
    Layout, MemRow, OperatorMemory, RowSource, Total, MAX_BLOCK_BYTES, RELEASED_BEFORE_ALLOCATED,
};
use crate::profiler::Interner;
use crate::sqlite::Value;
use std::collections::{HashMap, HashSet};

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

pub(super) fn read_op_memory(r: &mut Reader<'_, '_, '_>, strings: &Strings, names: &mut Interner) {
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
        let mut m = MemRow::new(
            name_id,
            if is_ge { RowSource::Ge } else { RowSource::Pta },
            size.unsigned_abs(),
            size < 0,
            u64::try_from(row.rowid()).unwrap_or(0),
        );
        m.set_alloc_ns(alloc_ns);
        m.set_release_ns(release_ns);
        m.set_active_release_ns(c.int(row, 4, &mut w, &file));
        m.set_duration_ns(c.int(row, 5, &mut w, &file));
        m.set_active_duration_ns(c.int(row, 6, &mut w, &file));
        for (which, col) in [
            (Total::AllocAllocated, 7),
            (Total::AllocReserved, 8),
            (Total::AllocActive, 9),
            (Total::ReleaseAllocated, 10),
            (Total::ReleaseReserved, 11),
            (Total::ReleaseActive, 12),
        ] {
            m.set_total(which, c.bytes(row, col, &mut w, &file));
        }
        m.stream = stream;
        m.device = device;
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
pub(in crate::profiler) fn app_series(
    r: &mut Reader<'_, '_, '_>,
    strings: &Strings,
    w: &mut Warnings,
) -> Option<Series> {
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

pub(super) fn read_memory_record(r: &mut Reader<'_, '_, '_>, strings: &Strings) {
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
                    None if series.len() >= crate::profiler::memory_record::MAX_SERIES => {
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

pub(in crate::profiler) fn finish_series(mut series: Vec<Series>, w: Warnings) -> MemoryRecord {
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

pub(in crate::profiler) fn read_module_mem(r: &mut Reader<'_, '_, '_>) {
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
            None if out.len() >= crate::profiler::memory_record::MAX_SERIES => return Ok(()),
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
