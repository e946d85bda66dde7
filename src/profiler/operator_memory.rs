//! `operator_memory.csv`: one row per allocator block (PTA rows) or CANN op allocation (`cann::`).
//!
//! Columns are mapped by header name, so the current 15-column layout, the legacy 10-column one
//! (torch_npu 5.0.x) and MindSpore's `N/A` variant all read the same way (the columns and row
//! shapes are described in `docs/formats-profiler.md`).

use super::csv_common::{
    opt_mb_u64, opt_time, parse_scaled_bytes, read_table, show_field, HeaderMap, Row, Warnings,
};
use super::Interner;
use crate::diag::Diagnostic;
use crate::source::Source;

/// The warning of a row whose release time is before its allocation time.
pub const RELEASED_BEFORE_ALLOCATED: &str = "release time is before the allocation time (the \
     block's lifetime ends before it starts); row kept as written";

/// Where a row comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum RowSource {
    /// The torch_npu caching allocator (PTA); named after the torch op that allocated.
    Pta,
    /// A CANN / Graph Engine op (`cann::` names); totals are the GE pool, no Python stack.
    Ge,
}

impl RowSource {
    /// `PTA` or `GE`, as in `memory_record.csv`.
    pub fn label(self) -> &'static str {
        match self {
            RowSource::Pta => "PTA",
            RowSource::Ge => "GE",
        }
    }
}

/// One row of `operator_memory.csv`. Times in ns, bytes exact; `None` = the field was empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemRow {
    /// Interned `Name` (may be the empty string: no op matched).
    pub name: u32,
    /// PTA or GE (`cann::` name).
    pub source: RowSource,
    /// Block size in bytes (absolute value of `Size(KB)` × 1024).
    pub size: u64,
    /// `Size(KB)` was negative: a release of memory allocated before the capture (legacy files and
    /// some `cann::` rows). Such a row frees memory, it is not an allocation.
    pub negative: bool,
    /// `Allocation Time(us)`.
    pub alloc_ns: Option<i64>,
    /// `Release Time(us)`; `None` = not released inside the capture window.
    pub release_ns: Option<i64>,
    /// `Active Release Time(us)` (block returned to the pool).
    pub active_release_ns: Option<i64>,
    /// `Duration(us)`.
    pub duration_ns: Option<i64>,
    /// `Active Duration(us)`.
    pub active_duration_ns: Option<i64>,
    /// `Allocation Total Allocated(MB)` in bytes.
    pub alloc_total_allocated: Option<u64>,
    /// `Allocation Total Reserved(MB)` in bytes.
    pub alloc_total_reserved: Option<u64>,
    /// `Allocation Total Active(MB)` in bytes.
    pub alloc_total_active: Option<u64>,
    /// `Release Total Allocated(MB)` in bytes.
    pub release_total_allocated: Option<u64>,
    /// `Release Total Reserved(MB)` in bytes.
    pub release_total_reserved: Option<u64>,
    /// `Release Total Active(MB)` in bytes.
    pub release_total_active: Option<u64>,
    /// Interned `Stream Ptr` (an opaque string: pointer in old versions, stream id in new ones).
    pub stream: u32,
    /// Interned `Device Type` (`NPU:0`).
    pub device: u32,
    /// 1-based line in the file.
    pub line: u64,
}

impl MemRow {
    /// The time the row stands at: allocation time, else (legacy negative rows) release time.
    pub fn time_ns(&self) -> Option<i64> {
        self.alloc_ns.or(self.release_ns)
    }

    /// Derives a missing release time from the duration, or a missing duration from the release
    /// time: old files and CANN rows sometimes give only one of them, and lifetimes need both.
    pub fn fill_lifetime(&mut self) {
        if self.release_ns.is_none() {
            if let (Some(a), Some(d)) = (self.alloc_ns, self.duration_ns) {
                self.release_ns = a.checked_add(d);
            }
        }
        if self.duration_ns.is_none() {
            if let (Some(a), Some(rel)) = (self.alloc_ns, self.release_ns) {
                self.duration_ns = rel.checked_sub(a);
            }
        }
    }

    /// True when the block is freed before it is allocated: a damaged row, kept as written (its
    /// totals still tell the allocator's state) but worth a warning.
    pub fn released_before_allocated(&self) -> bool {
        matches!((self.alloc_ns, self.release_ns), (Some(a), Some(rel)) if rel < a)
    }
}

/// Which header layout a file had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// 15 columns (torch_npu 6.0.RC1 and later, MindSpore).
    Current,
    /// 10 columns (torch_npu 5.0.x): no Active* or Stream columns.
    Legacy,
    /// Any other set of columns that still has the required ones.
    Other,
}

/// A parsed `operator_memory.csv`.
#[derive(Debug, Clone)]
pub struct OperatorMemory {
    /// Rows in file order.
    pub rows: Vec<MemRow>,
    /// Header layout.
    pub layout: Layout,
    /// Skipped rows and bad values, counted.
    pub warnings: Vec<Diagnostic>,
}

/// The largest block a row may hold: 1 PiB, far beyond any device. A larger `Size(KB)` is not a
/// size (a shifted column, another file's timestamp) and would overflow the sums made of sizes.
pub const MAX_BLOCK_BYTES: u64 = 1 << 50;

const NAME: usize = 0;
const SIZE: usize = 1;
const ALLOC: usize = 2;
const RELEASE: usize = 3;
const ACTIVE_RELEASE: usize = 4;
const DURATION: usize = 5;
const ACTIVE_DURATION: usize = 6;
const A_ALLOC: usize = 7;
const A_RES: usize = 8;
const A_ACT: usize = 9;
const R_ALLOC: usize = 10;
const R_RES: usize = 11;
const R_ACT: usize = 12;
const STREAM: usize = 13;
const DEVICE: usize = 14;

/// The columns read, each with its accepted spellings.
const COLUMNS: [&[&str]; 15] = [
    &["Name"],
    &["Size(KB)"],
    &["Allocation Time(us)"],
    &["Release Time(us)"],
    &["Active Release Time(us)"],
    &["Duration(us)"],
    &["Active Duration(us)"],
    &["Allocation Total Allocated(MB)"],
    &["Allocation Total Reserved(MB)"],
    &["Allocation Total Active(MB)"],
    &["Release Total Allocated(MB)"],
    &["Release Total Reserved(MB)"],
    &["Release Total Active(MB)"],
    &["Stream Ptr"],
    &["Device Type", "Device"],
];

/// Reads `operator_memory.csv` from `src`, interning names, streams and devices into `strings`.
///
/// Returns `Err` when the file cannot be used at all (unreadable, no `Name`/`Size(KB)`/
/// `Allocation Time(us)` header); bad rows are skipped and counted in the warnings.
pub fn read_operator_memory(
    src: &dyn Source,
    strings: &mut Interner,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<OperatorMemory, Diagnostic> {
    let file = src.name().to_string();
    let mut rows = Vec::new();
    let mut warnings = Warnings::default();
    let mut check = |h: &HeaderMap| {
        let missing: Vec<&str> = [NAME, SIZE, ALLOC]
            .iter()
            .filter(|&&c| h.index.get(c).copied().flatten().is_none())
            .filter_map(|&c| COLUMNS.get(c).and_then(|a| a.first().copied()))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "not an operator_memory.csv header: missing column(s) {}; expected \
                 Name,Size(KB),Allocation Time(us),Release Time(us),… (found: {})",
                missing.join(", "),
                h.shown()
            ))
        }
    };
    let mut on_row = |h: &HeaderMap, row: &Row<'_>, w: &mut Warnings| {
        if let Some(r) = parse_row(h, row, w, &file, strings) {
            rows.push(r);
        }
    };
    let header = read_table(
        src,
        &COLUMNS,
        &mut check,
        &mut on_row,
        &mut warnings,
        progress,
    )?;
    let has = |c: usize| header.index.get(c).copied().flatten().is_some();
    let layout = if (0..15).all(has) {
        Layout::Current
    } else if header.names.len() == 10 && !has(ACTIVE_RELEASE) && !has(STREAM) {
        Layout::Legacy
    } else {
        Layout::Other
    };
    Ok(OperatorMemory {
        rows,
        layout,
        warnings: warnings.into_vec(),
    })
}

fn parse_row(
    h: &HeaderMap,
    row: &Row<'_>,
    w: &mut Warnings,
    file: &str,
    strings: &mut Interner,
) -> Option<MemRow> {
    let col = |c: usize| h.index.get(c).copied().flatten();
    let name = row.text(col(NAME), w, file, "Name").unwrap_or_default();
    let size_bytes = match row.get_bytes(col(SIZE)) {
        Some(t) => match parse_scaled_bytes(t, 0, 1024) {
            Some(b) => b,
            None => {
                w.add_keyed(
                    file,
                    row.line,
                    row.byte,
                    "Size(KB)",
                    "bad size",
                    &format!(
                        "expected a size in KB like 18816.5, found {}; row skipped",
                        show_field(t)
                    ),
                );
                return None;
            }
        },
        None => {
            w.add(
                file,
                row.line,
                row.byte,
                "Size(KB)",
                "empty size; row skipped",
            );
            return None;
        }
    };
    if size_bytes.unsigned_abs() > MAX_BLOCK_BYTES {
        w.add_keyed(
            file,
            row.line,
            row.byte,
            "Size(KB)",
            "size out of range",
            &format!(
                "expected a block size of at most 1 PiB (1099511627776 KB), found {} KB; row skipped",
                show_field(row.get_bytes(col(SIZE)).unwrap_or_default())
            ),
        );
        return None;
    }
    let alloc_ns = opt_time(row, h, ALLOC, w, file);
    let release_ns = opt_time(row, h, RELEASE, w, file);
    if alloc_ns.is_none() && release_ns.is_none() {
        w.add(
            file,
            row.line,
            row.byte,
            "Allocation Time(us)",
            "neither an allocation nor a release time; row skipped",
        );
        return None;
    }
    let source = if name.starts_with("cann::") {
        RowSource::Ge
    } else {
        RowSource::Pta
    };
    let mut r = MemRow {
        name: strings.intern(&name),
        source,
        size: size_bytes.unsigned_abs(),
        negative: size_bytes < 0,
        alloc_ns,
        release_ns,
        active_release_ns: opt_time(row, h, ACTIVE_RELEASE, w, file),
        duration_ns: opt_time(row, h, DURATION, w, file),
        active_duration_ns: opt_time(row, h, ACTIVE_DURATION, w, file),
        alloc_total_allocated: opt_mb_u64(row, h, A_ALLOC, w, file),
        alloc_total_reserved: opt_mb_u64(row, h, A_RES, w, file),
        alloc_total_active: opt_mb_u64(row, h, A_ACT, w, file),
        release_total_allocated: opt_mb_u64(row, h, R_ALLOC, w, file),
        release_total_reserved: opt_mb_u64(row, h, R_RES, w, file),
        release_total_active: opt_mb_u64(row, h, R_ACT, w, file),
        stream: strings.intern(
            &row.text(col(STREAM), w, file, "Stream Ptr")
                .unwrap_or_default(),
        ),
        device: strings.intern(
            &row.text(col(DEVICE), w, file, "Device Type")
                .unwrap_or_default(),
        ),
        line: row.line,
    };
    r.fill_lifetime();
    if r.released_before_allocated() {
        w.add_keyed(
            file,
            row.line,
            row.byte,
            "Release Time(us)",
            "release before allocation",
            RELEASED_BEFORE_ALLOCATED,
        );
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::BytesSource;

    #[test]
    fn reads_the_three_real_row_shapes() {
        let text = "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type\r\n\
aten::empty_strided,18816.5,1736405443871259.720\t,,,,,954.3701171875,1452.0,954.3701171875,,,,1431569360,NPU:0\r\n\
aten::_convolution,25009.5,1736405443879844.900\t,1736405443914587.140\t,1736405443914586.740\t,34742.240\t,34741.840\t,978.7939453125,1452.0,978.7939453125,977.6123046875,1452.0,977.6123046875,1431569360,NPU:0\r\n\
cann::trans_TransData_0,50240.0,1736405443881360.630\t,1736405443881476.600\t,,115.97,,49.125,74.75,,73.0625,74.75,,,NPU:0\r\n";
        let src = BytesSource::new("om.csv", text.as_bytes().to_vec());
        let mut s = Interner::new();
        let om = read_operator_memory(&src, &mut s, None).unwrap();
        assert_eq!(om.layout, Layout::Current);
        assert_eq!(om.rows.len(), 3);
        assert!(om.warnings.is_empty(), "{:?}", om.warnings);
        let r0 = &om.rows[0];
        assert_eq!(r0.release_ns, None);
        assert_eq!(r0.size, 18816 * 1024 + 512);
        assert_eq!(om.rows[2].source, RowSource::Ge);
        assert_eq!(om.rows[2].duration_ns, Some(115_970));
        assert_eq!(om.rows[1].line, 3);
    }
}
