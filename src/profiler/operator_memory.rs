//! `operator_memory.csv`: one row per allocator block (PTA rows) or CANN op allocation (`cann::`).
//!
//! Columns are mapped by header name, so the current 15-column layout, the legacy 10-column one
//! (torch_npu 5.0.x), MindSpore's `N/A` variant and msprof's own with its totals in KB all read
//! the same way (the columns and row shapes are described in `docs/formats-profiler.md`).

use super::csv_common::{
    field_eq, mb_read_kb, mb_u64_at, mb_u64_like, read_table, show_field, time_at, totals_in_kb,
    HeaderMap, NumberMemo, Row, Warnings,
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
///
/// The eleven optional figures are stored without an `Option` each (an empty one is a value no
/// field can give: `i64::MIN` ns, `u64::MAX` bytes), which makes a row 120 bytes instead of 208: a
/// large file's rows are most of what a page holds for it. Read them through the methods named
/// after the columns.
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
    /// Allocation, release, active release, duration, active duration (ns; [`NO_TIME`]: empty).
    times: [i64; 5],
    /// The six allocator totals (bytes; [`NO_TOTAL`]: empty), in the order of [`Total`].
    totals: [u64; 6],
    /// Interned `Stream Ptr` (an opaque string: pointer in old versions, stream id in new ones).
    pub stream: u32,
    /// Interned `Device Type` (`NPU:0`).
    pub device: u32,
    /// 1-based line in the file.
    pub line: u64,
}

/// An empty time of a [`MemRow`] (no field gives it: a time of exactly `i64::MIN` ns is kept as
/// `i64::MIN + 1`).
const NO_TIME: i64 = i64::MIN;
/// An empty total of a [`MemRow`] (a total of `u64::MAX` bytes is kept as `u64::MAX - 1`).
const NO_TOTAL: u64 = u64::MAX;

const ALLOC_T: usize = 0;
const RELEASE_T: usize = 1;
const ACTIVE_RELEASE_T: usize = 2;
const DURATION_T: usize = 3;
const ACTIVE_DURATION_T: usize = 4;

/// The allocator totals a row records: at its allocation and at its release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Total {
    /// `Allocation Total Allocated(MB)`.
    AllocAllocated,
    /// `Allocation Total Reserved(MB)`.
    AllocReserved,
    /// `Allocation Total Active(MB)`.
    AllocActive,
    /// `Release Total Allocated(MB)`.
    ReleaseAllocated,
    /// `Release Total Reserved(MB)`.
    ReleaseReserved,
    /// `Release Total Active(MB)`.
    ReleaseActive,
}

impl Total {
    /// Every total, in the order of the file's columns.
    pub const ALL: [Total; 6] = [
        Total::AllocAllocated,
        Total::AllocReserved,
        Total::AllocActive,
        Total::ReleaseAllocated,
        Total::ReleaseReserved,
        Total::ReleaseActive,
    ];
}

fn pack_time(t: Option<i64>) -> i64 {
    t.map_or(NO_TIME, |v| v.max(NO_TIME + 1))
}

fn unpack_time(t: i64) -> Option<i64> {
    (t != NO_TIME).then_some(t)
}

impl MemRow {
    /// A row with every time and total empty.
    pub fn new(name: u32, source: RowSource, size: u64, negative: bool, line: u64) -> MemRow {
        MemRow {
            name,
            source,
            size,
            negative,
            times: [NO_TIME; 5],
            totals: [NO_TOTAL; 6],
            stream: 0,
            device: 0,
            line,
        }
    }

    /// `Allocation Time(us)`.
    pub fn alloc_ns(&self) -> Option<i64> {
        unpack_time(self.times[ALLOC_T])
    }
    /// `Release Time(us)`; `None` = not released inside the capture window.
    pub fn release_ns(&self) -> Option<i64> {
        unpack_time(self.times[RELEASE_T])
    }
    /// `Active Release Time(us)` (block returned to the pool).
    pub fn active_release_ns(&self) -> Option<i64> {
        unpack_time(self.times[ACTIVE_RELEASE_T])
    }
    /// `Duration(us)`.
    pub fn duration_ns(&self) -> Option<i64> {
        unpack_time(self.times[DURATION_T])
    }
    /// `Active Duration(us)`.
    pub fn active_duration_ns(&self) -> Option<i64> {
        unpack_time(self.times[ACTIVE_DURATION_T])
    }
    /// Sets the allocation time.
    pub fn set_alloc_ns(&mut self, t: Option<i64>) {
        self.times[ALLOC_T] = pack_time(t);
    }
    /// Sets the release time.
    pub fn set_release_ns(&mut self, t: Option<i64>) {
        self.times[RELEASE_T] = pack_time(t);
    }
    /// Sets the active release time.
    pub fn set_active_release_ns(&mut self, t: Option<i64>) {
        self.times[ACTIVE_RELEASE_T] = pack_time(t);
    }
    /// Sets the duration.
    pub fn set_duration_ns(&mut self, t: Option<i64>) {
        self.times[DURATION_T] = pack_time(t);
    }
    /// Sets the active duration.
    pub fn set_active_duration_ns(&mut self, t: Option<i64>) {
        self.times[ACTIVE_DURATION_T] = pack_time(t);
    }

    /// One of the allocator totals, in bytes.
    pub fn total(&self, which: Total) -> Option<u64> {
        let v = self.totals[which as usize];
        (v != NO_TOTAL).then_some(v)
    }
    /// Sets one of the allocator totals.
    pub fn set_total(&mut self, which: Total, v: Option<u64>) {
        self.totals[which as usize] = v.map_or(NO_TOTAL, |x| x.min(NO_TOTAL - 1));
    }
    /// `Allocation Total Allocated(MB)` in bytes.
    pub fn alloc_total_allocated(&self) -> Option<u64> {
        self.total(Total::AllocAllocated)
    }
    /// `Allocation Total Reserved(MB)` in bytes.
    pub fn alloc_total_reserved(&self) -> Option<u64> {
        self.total(Total::AllocReserved)
    }
    /// `Allocation Total Active(MB)` in bytes.
    pub fn alloc_total_active(&self) -> Option<u64> {
        self.total(Total::AllocActive)
    }
    /// `Release Total Allocated(MB)` in bytes.
    pub fn release_total_allocated(&self) -> Option<u64> {
        self.total(Total::ReleaseAllocated)
    }
    /// `Release Total Reserved(MB)` in bytes.
    pub fn release_total_reserved(&self) -> Option<u64> {
        self.total(Total::ReleaseReserved)
    }
    /// `Release Total Active(MB)` in bytes.
    pub fn release_total_active(&self) -> Option<u64> {
        self.total(Total::ReleaseActive)
    }

    /// The time the row stands at: allocation time, else (legacy negative rows) release time.
    pub fn time_ns(&self) -> Option<i64> {
        self.alloc_ns().or(self.release_ns())
    }

    /// Derives a missing release time from the duration, or a missing duration from the release
    /// time: old files and CANN rows sometimes give only one of them, and lifetimes need both.
    pub fn fill_lifetime(&mut self) {
        if self.release_ns().is_none() {
            if let (Some(a), Some(d)) = (self.alloc_ns(), self.duration_ns()) {
                self.set_release_ns(a.checked_add(d));
            }
        }
        if self.duration_ns().is_none() {
            if let (Some(a), Some(rel)) = (self.alloc_ns(), self.release_ns()) {
                self.set_duration_ns(rel.checked_sub(a));
            }
        }
    }

    /// True when the block is freed before it is allocated: a damaged row, kept as written (its
    /// totals still tell the allocator's state) but worth a warning.
    pub fn released_before_allocated(&self) -> bool {
        matches!((self.alloc_ns(), self.release_ns()), (Some(a), Some(rel)) if rel < a)
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
    // `Operator`: the first torch_npu's `memory_view_form.csv`.
    &["Name", "Operator"],
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
    // The columns' places, located once from the header (the fields are then read by index).
    let locate = |h: &HeaderMap| {
        let cols: Cols = std::array::from_fn(|c| h.index.get(c).copied().flatten());
        let missing: Vec<&str> = [NAME, SIZE, ALLOC]
            .iter()
            .filter(|&&c| cols[c].is_none())
            .filter_map(|&c| COLUMNS.get(c).and_then(|a| a.first().copied()))
            .collect();
        if missing.is_empty() {
            totals_in_kb(h, &[A_ALLOC, A_RES, A_ACT, R_ALLOC, R_RES, R_ACT])
                .map_err(|why| format!("not an operator_memory.csv this reads: {why}"))?;
            Ok(cols)
        } else {
            Err(format!(
                "not an operator_memory.csv header: missing column(s) {}; expected \
                 Name,Size(KB),Allocation Time(us),Release Time(us),… (found: {})",
                missing.join(", "),
                h.shown()
            ))
        }
    };
    let total = src.len();
    let mut last = [LastText::default(), LastText::default()];
    // The last allocation reserved total read (reserved totals change rarely).
    let mut reserved = NumberMemo::default();
    let on_row = |h: &HeaderMap, cols: &Cols, row: &Row<'_>, w: &mut Warnings| {
        if let Some(r) = parse_row(
            (h, cols),
            row,
            w,
            &file,
            strings,
            (&mut last, &mut reserved),
        ) {
            if rows.len() == rows.capacity() {
                grow(&mut rows, row.byte, total);
            }
            rows.push(r);
        }
    };
    let header = read_table(
        src,
        &COLUMNS,
        locate,
        on_row,
        |_, _| false,
        &mut warnings,
        progress,
    )?;
    // Located once already (a file with totals in two units did not get here).
    if totals_in_kb(&header, &[A_ALLOC, A_RES, A_ACT, R_ALLOC, R_RES, R_ACT]).unwrap_or(false) {
        for r in &mut rows {
            for t in Total::ALL {
                r.set_total(t, r.total(t).map(mb_read_kb));
            }
        }
    }
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

/// Rows read before the capacity is estimated from the file's size.
const SAMPLE_ROWS: usize = 4096;

/// Makes room in the full `rows` (read up to byte `at` of a file of `total` bytes). A row takes
/// about as much memory as its text (more than 200 bytes), so the doubling of a plain `push`
/// could leave nearly a file's size unused, and a copying reallocation holds the old and the new
/// block at once (WebAssembly memory never shrinks: a page keeps that peak). After a sample of
/// rows, room is made for the rows the rest of the file holds at the sample's bytes per row, plus
/// a sixteenth; past the estimate, an eighth more at a time.
fn grow(rows: &mut Vec<MemRow>, at: u64, total: u64) {
    let n = rows.len();
    if n < SAMPLE_ROWS {
        rows.reserve(SAMPLE_ROWS.max(n * 2) - n);
        return;
    }
    let per_row = (at / n as u64).max(1);
    let expected = usize::try_from(total / per_row).unwrap_or(usize::MAX);
    let want = expected.saturating_add(expected / 16).max(n + n / 8 + 1);
    rows.reserve_exact(want - n);
}

/// The last text interned for a column whose rows repeat one value (`Stream Ptr`, `Device
/// Type`): its trimmed bytes and id, kept only when it was valid UTF-8.
#[derive(Default)]
struct LastText {
    bytes: Vec<u8>,
    id: u32,
}

impl LastText {
    /// The interned text of the field at `col` (empty when missing or null), as
    /// `strings.intern(&row.text(..).unwrap_or_default())` gives it: a field whose bytes are the
    /// last valid text's takes its id without the UTF-8 check and the hash (`callgrind`: ~140
    /// instructions a field). The comparison is inlined into the row's code and the rest kept out
    /// of line: as one call, `callgrind` counted ~97 instructions a field, nearly all of them for
    /// fields that repeat the last text.
    #[inline(always)]
    fn intern(
        &mut self,
        row: &Row<'_>,
        col: Option<usize>,
        text: (&mut Warnings, &str, &str),
        strings: &mut Interner,
    ) -> u32 {
        if let Some(b) = row.get_bytes(col) {
            if !self.bytes.is_empty() && field_eq(b, &self.bytes) {
                return self.id;
            }
        }
        self.intern_new(row, col, text, strings)
    }

    /// [`LastText::intern`] of a field that is not the last text: read as text (counting bytes
    /// that are not UTF-8), interned, and kept when valid.
    #[inline(never)]
    fn intern_new(
        &mut self,
        row: &Row<'_>,
        col: Option<usize>,
        (w, file, field): (&mut Warnings, &str, &str),
        strings: &mut Interner,
    ) -> u32 {
        let text = row.text(col, w, file, field);
        let id = strings.intern(text.as_deref().unwrap_or_default());
        if let Some(std::borrow::Cow::Borrowed(t)) = text {
            self.bytes.clear();
            self.bytes.extend_from_slice(t.as_bytes());
            self.id = id;
        }
        id
    }
}

/// The place of each of [`COLUMNS`] in the file (`None`: not in its header).
type Cols = [Option<usize>; 15];

/// One row as a [`MemRow`], its fields read from the columns located in `cols`, its totals read
/// as MB (a file with them in KB is rescaled once read: [`mb_read_kb`]); `None` for a row skipped
/// (counted in `w`).
#[inline(always)]
fn parse_row(
    (h, cols): (&HeaderMap, &Cols),
    row: &Row<'_>,
    w: &mut Warnings,
    file: &str,
    strings: &mut Interner,
    ([stream, device], reserved): (&mut [LastText; 2], &mut NumberMemo),
) -> Option<MemRow> {
    let col = |c: usize| cols.get(c).copied().flatten();
    // A name whose bytes were interned already (nearly every row's: ops repeat) is that string,
    // valid UTF-8 and counting no warning, so its id is taken without the check; any other name
    // is read as text (counting what is not UTF-8) and interned once the row is kept.
    let known = row
        .get_bytes(col(NAME))
        .and_then(|b| Some((strings.lookup_bytes(b)?, b.starts_with(b"cann::"))));
    let name = match known {
        Some(_) => Default::default(),
        None => row.text(col(NAME), w, file, "Name").unwrap_or_default(),
    };
    let size_bytes = match row.scaled(col(SIZE), 0, 1024) {
        Some((v, t)) => match v {
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
    let alloc_ns = time_at(row, h, col(ALLOC), w, file);
    let release_ns = time_at(row, h, col(RELEASE), w, file);
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
    let (name, cann) = match known {
        Some(k) => k,
        None => (strings.intern(&name), name.starts_with("cann::")),
    };
    let source = if cann { RowSource::Ge } else { RowSource::Pta };
    let mut r = MemRow::new(
        name,
        source,
        size_bytes.unsigned_abs(),
        size_bytes < 0,
        row.line,
    );
    r.set_alloc_ns(alloc_ns);
    r.set_release_ns(release_ns);
    r.set_active_release_ns(time_at(row, h, col(ACTIVE_RELEASE), w, file));
    r.set_duration_ns(time_at(row, h, col(DURATION), w, file));
    r.set_active_duration_ns(time_at(row, h, col(ACTIVE_DURATION), w, file));
    // torch_npu writes most totals twice: active as allocated (no block waits to be reused), the
    // release's reserved as the allocation's, and reserved as in the row before; a field whose
    // bytes repeat one already read takes its value.
    let a_alloc = mb_u64_at(row, h, col(A_ALLOC), w, file, None);
    let a_res = mb_u64_at(row, h, col(A_RES), w, file, Some(reserved));
    let a_act = mb_u64_like(row, h, col(A_ACT), w, file, (col(A_ALLOC), a_alloc));
    let r_alloc = mb_u64_at(row, h, col(R_ALLOC), w, file, None);
    let r_res = mb_u64_like(row, h, col(R_RES), w, file, (col(A_RES), a_res));
    let r_act = mb_u64_like(row, h, col(R_ACT), w, file, (col(R_ALLOC), r_alloc));
    r.set_total(Total::AllocAllocated, a_alloc);
    r.set_total(Total::AllocReserved, a_res);
    r.set_total(Total::AllocActive, a_act);
    r.set_total(Total::ReleaseAllocated, r_alloc);
    r.set_total(Total::ReleaseReserved, r_res);
    r.set_total(Total::ReleaseActive, r_act);
    r.stream = stream.intern(row, col(STREAM), (w, file, "Stream Ptr"), strings);
    r.device = device.intern(row, col(DEVICE), (w, file, "Device Type"), strings);
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
        assert_eq!(r0.release_ns(), None);
        assert_eq!(r0.size, 18816 * 1024 + 512);
        assert_eq!(om.rows[2].source, RowSource::Ge);
        assert_eq!(om.rows[2].duration_ns(), Some(115_970));
        assert_eq!(std::mem::size_of::<MemRow>(), 120);
        assert_eq!(om.rows[1].line, 3);
    }

    #[test]
    fn empty_figures_read_back_as_none_and_extremes_stay_values() {
        let mut r = MemRow::new(0, RowSource::Pta, 1, false, 1);
        assert_eq!((r.alloc_ns(), r.total(Total::ReleaseActive)), (None, None));
        r.set_alloc_ns(Some(i64::MIN));
        r.set_release_ns(Some(i64::MAX));
        r.set_total(Total::ReleaseActive, Some(u64::MAX));
        r.set_total(Total::AllocAllocated, Some(0));
        assert_eq!(r.alloc_ns(), Some(i64::MIN + 1));
        assert_eq!(r.release_ns(), Some(i64::MAX));
        assert_eq!(r.release_total_active(), Some(u64::MAX - 1));
        assert_eq!(r.alloc_total_allocated(), Some(0));
        assert_eq!(r.duration_ns(), None);
    }

    #[test]
    fn rows_take_room_for_the_file_not_a_doubling() {
        // Rows of one length, and rows of two lengths with the shorter ones late in the file (the
        // estimate from the first rows is then short, and the rest grows by eighths).
        for (n, late) in [(20_000usize, 0usize), (50_000, 10_000), (3_000, 0)] {
            let mut text = String::from("Name,Size(KB),Allocation Time(us),Release Time(us)\n");
            for i in 0..n {
                let name = if i + late >= n {
                    "aten::mm"
                } else {
                    "aten::a_much_longer_operator_name_here"
                };
                text.push_str(&format!(
                    "{name},{}.5,{}.0,{}.0\n",
                    i % 977,
                    1_000 + i,
                    2_000 + i
                ));
            }
            let src = BytesSource::new("om.csv", text.into_bytes());
            let om = read_operator_memory(&src, &mut Interner::new(), None).unwrap();
            assert_eq!(om.rows.len(), n);
            let spare = om.rows.capacity() - n;
            assert!(
                spare <= n / 8 + SAMPLE_ROWS,
                "{n} rows in room for {}",
                om.rows.capacity()
            );
        }
    }

    /// Streams and devices that repeat, change back and forth, are empty, `N/A`, padded with
    /// blanks or not UTF-8 intern to the texts the rows hold, each row's own, and every row with
    /// bad bytes is counted (the last id is reused only for bytes already read as valid text).
    #[test]
    fn repeated_streams_and_devices_intern_as_written() {
        let head = "Name,Size(KB),Allocation Time(us),Stream Ptr,Device Type\n";
        let cells: [(&[u8], &str); 9] = [
            (b"7,NPU:0", "7|NPU:0"),
            (b"7,NPU:0", "7|NPU:0"),
            (b" 7 ,NPU:0\t", "7|NPU:0"),
            (b"8,NPU:1", "8|NPU:1"),
            (b"7,NPU:0", "7|NPU:0"),
            (b",N/A", "|"),
            (b"\xff7,NPU:0", "\u{fffd}7|NPU:0"),
            (b"\xff7,NPU:0", "\u{fffd}7|NPU:0"),
            (b"7,NPU:0", "7|NPU:0"),
        ];
        let mut text = head.as_bytes().to_vec();
        for (k, (c, _)) in cells.iter().enumerate() {
            text.extend_from_slice(format!("aten::op{k},1.0,{}.0,", 100 + k).as_bytes());
            text.extend_from_slice(c);
            text.push(b'\n');
        }
        let src = BytesSource::new("om.csv", text);
        let mut s = Interner::new();
        let om = read_operator_memory(&src, &mut s, None).unwrap();
        let got: Vec<String> = om
            .rows
            .iter()
            .map(|r| format!("{}|{}", s.get(r.stream), s.get(r.device)))
            .collect();
        let want: Vec<&str> = cells.iter().map(|(_, w)| *w).collect();
        assert_eq!(got, want);
        let bad: Vec<&Diagnostic> = om
            .warnings
            .iter()
            .filter(|d| d.message.contains("UTF-8"))
            .collect();
        assert_eq!(bad.len(), 1, "{:?}", om.warnings);
        assert_eq!(bad[0].count, 2);
        assert_eq!(bad[0].line, Some(8));
    }

    /// Names that repeat (read back through the interner by their bytes), are new, padded, empty,
    /// `N/A`, `cann::` (GE rows) or not UTF-8, some interned before the file by another reader,
    /// some on rows skipped for a bad size: each kept row names the text written (trimmed, bad
    /// bytes as U+FFFD) with the source its text gives, and every row whose name is not UTF-8 is
    /// counted, kept or not. The expectation is built from the texts written.
    #[test]
    fn names_intern_as_written_and_bad_ones_count_on_every_row() {
        let mut rng = fastrand::Rng::with_seed(24);
        let pool: [&[u8]; 9] = [
            b"aten::empty",
            b"cann::trans_TransData_0",
            b" aten::empty\t",
            b"cann::\xffbad",
            b"aten::\xff",
            b"",
            b"N/A",
            b"pre::interned",
            b"\xe6\xbc\xa2::op",
        ];
        for _ in 0..50 {
            let mut text = b"Name,Size(KB),Allocation Time(us)\n".to_vec();
            let mut want = Vec::new();
            let mut bad_names = 0;
            for k in 0..rng.usize(1..40) {
                let name = pool[rng.usize(..pool.len())];
                let kept = rng.u8(..5) != 0;
                text.extend_from_slice(name);
                let size = if kept { "1.5" } else { "x" };
                text.extend_from_slice(format!(",{size},{}.0\n", 100 + k).as_bytes());
                let shown = String::from_utf8_lossy(name).trim().to_string();
                let shown = if shown == "N/A" { String::new() } else { shown };
                bad_names += usize::from(std::str::from_utf8(name).is_err());
                if kept {
                    let source = if shown.starts_with("cann::") {
                        RowSource::Ge
                    } else {
                        RowSource::Pta
                    };
                    want.push((shown, source));
                }
            }
            let src = BytesSource::new("om.csv", text);
            let mut s = Interner::new();
            s.intern("pre::interned");
            let om = read_operator_memory(&src, &mut s, None).unwrap();
            let got: Vec<(String, RowSource)> = om
                .rows
                .iter()
                .map(|r| (s.get(r.name).to_string(), r.source))
                .collect();
            assert_eq!(got, want);
            let counted: u64 = om
                .warnings
                .iter()
                .filter(|d| d.field.as_deref() == Some("Name"))
                .map(|d| d.count)
                .sum();
            assert_eq!(counted, bad_names as u64, "{:?}", om.warnings);
        }
    }

    /// The columns in any order, with columns the reader does not read between them and optional
    /// ones missing: every field lands in the figure its header names, and bad ones are counted
    /// per column with the first row's line. The expectation is built from the values written.
    #[test]
    fn columns_in_any_order_read_as_their_names_say() {
        let mut rng = fastrand::Rng::with_seed(23);
        for _ in 0..200 {
            // `Some(c)`: the reader's column `c` (of COLUMNS); `None`: one it does not read.
            let mut cols: Vec<Option<usize>> = (0..15)
                .filter(|&c| c <= ALLOC || rng.u8(..4) != 0)
                .map(Some)
                .collect();
            for _ in 0..rng.usize(0..3) {
                cols.push(None);
            }
            rng.shuffle(&mut cols);
            let has = |c: usize| cols.contains(&Some(c));
            let header: Vec<&str> = cols
                .iter()
                .map(|c| c.map_or("Other", |c| COLUMNS[c][0]))
                .collect();
            let mut text = header.join(",");
            text.push('\n');
            type Want = (
                String,
                u64,
                [Option<i64>; 5],
                [Option<u64>; 6],
                String,
                String,
            );
            let mut want: Vec<Want> = Vec::new();
            let mut warned: Vec<(&str, u64, u64)> = Vec::new();
            let mut warn = |field: &'static str, line: u64| match warned
                .iter_mut()
                .find(|(f, _, _)| *f == field)
            {
                Some((_, n, _)) => *n += 1,
                None => warned.push((field, 1, line)),
            };
            // The row before's allocation reserved field, and what it reads as.
            let mut prev_reserved: Option<(String, Option<u64>, bool)> = None;
            for r in 0..rng.usize(1..25) {
                let line = r as u64 + 2;
                let mut f: [String; 15] = Default::default();
                let name = ["aten::mm", "cann::add", "aten::empty_strided"][rng.usize(..3)];
                f[NAME] = name.to_string();
                let kb = rng.u64(..1_000_000);
                let bad_size = rng.u8(..12) == 0;
                f[SIZE] = if bad_size {
                    "x".into()
                } else {
                    format!("{kb}.5")
                };
                // Times: allocation, duration and release = allocation + duration, each written
                // or left empty.
                let alloc = 1_736_405_443_000_000_000 + rng.i64(0..1_000_000_000);
                let dur = rng.i64(0..1_000_000_000);
                let us = |ns: i64| format!("{}.{:03}\t", ns / 1000, ns % 1000);
                let [a_on, r_on, d_on] = [rng.u8(..6) != 0, rng.bool(), rng.bool()];
                let bad_active = rng.u8(..8) == 0;
                f[ALLOC] = if a_on { us(alloc) } else { String::new() };
                f[RELEASE] = if r_on { us(alloc + dur) } else { String::new() };
                f[DURATION] = if d_on { us(dur) } else { String::new() };
                f[ACTIVE_RELEASE] = if bad_active {
                    "soon".into()
                } else {
                    us(alloc + 1)
                };
                f[ACTIVE_DURATION] = us(1);
                let mut totals = [None; 6];
                let mut bad_totals = [false; 6];
                for (t, total) in totals.iter_mut().enumerate() {
                    let mb = rng.u64(..100_000);
                    f[A_ALLOC + t] = match rng.u8(..8) {
                        0 => String::new(),
                        1 => {
                            bad_totals[t] = true;
                            "1e".into()
                        }
                        _ => {
                            *total = Some((mb << 20) + (1 << 18));
                            format!("{mb}.25")
                        }
                    };
                }
                // As torch_npu writes them, half the time: active as allocated, the release's
                // reserved as the allocation's, and that as in the row before (bad and empty
                // fields included; the reader parses such a repeat once).
                if let Some((text, total, bad)) = prev_reserved.clone().filter(|_| rng.bool()) {
                    f[A_RES] = text;
                    (totals[1], bad_totals[1]) = (total, bad);
                }
                for (from, to) in [(0, 2), (1, 4), (3, 5)] {
                    if rng.bool() {
                        f[A_ALLOC + to] = f[A_ALLOC + from].clone();
                        (totals[to], bad_totals[to]) = (totals[from], bad_totals[from]);
                    }
                }
                prev_reserved = Some((f[A_RES].clone(), totals[1], bad_totals[1]));
                f[STREAM] = format!("{}", 100 + rng.u8(..2));
                f[DEVICE] = "NPU:0".into();
                let row: Vec<&str> = cols
                    .iter()
                    .map(|c| c.map_or("zz", |c| f[c].as_str()))
                    .collect();
                text.push_str(&row.join(","));
                text.push('\n');
                if bad_size {
                    warn("Size(KB)", line);
                    continue;
                }
                let (r_on, d_on) = (r_on && has(RELEASE), d_on && has(DURATION));
                if !a_on && !r_on {
                    warn("Allocation Time(us)", line);
                    continue;
                }
                let alloc_t = a_on.then_some(alloc);
                let release = (r_on || (a_on && d_on)).then_some(alloc + dur);
                let duration = (d_on || (a_on && r_on)).then_some(dur);
                let active_release = (has(ACTIVE_RELEASE) && !bad_active).then_some(alloc + 1);
                if has(ACTIVE_RELEASE) && bad_active {
                    warn("Active Release Time(us)", line);
                }
                let active_duration = has(ACTIVE_DURATION).then_some(1);
                let mut got_totals = [None; 6];
                for t in 0..6 {
                    if has(A_ALLOC + t) {
                        if bad_totals[t] {
                            warn(COLUMNS[A_ALLOC + t][0], line);
                        }
                        got_totals[t] = totals[t];
                    }
                }
                let text_of = |c: usize| if has(c) { f[c].clone() } else { String::new() };
                want.push((
                    name.to_string(),
                    kb * 1024 + 512,
                    [alloc_t, release, active_release, duration, active_duration],
                    got_totals,
                    text_of(STREAM),
                    text_of(DEVICE),
                ));
            }
            let src = BytesSource::new("om.csv", text.clone().into_bytes());
            let mut s = Interner::new();
            let om = read_operator_memory(&src, &mut s, None).unwrap();
            let got: Vec<Want> = om
                .rows
                .iter()
                .map(|r| {
                    (
                        s.get(r.name).to_string(),
                        r.size,
                        [
                            r.alloc_ns(),
                            r.release_ns(),
                            r.active_release_ns(),
                            r.duration_ns(),
                            r.active_duration_ns(),
                        ],
                        [
                            Total::AllocAllocated,
                            Total::AllocReserved,
                            Total::AllocActive,
                            Total::ReleaseAllocated,
                            Total::ReleaseReserved,
                            Total::ReleaseActive,
                        ]
                        .map(|t| r.total(t)),
                        s.get(r.stream).to_string(),
                        s.get(r.device).to_string(),
                    )
                })
                .collect();
            assert_eq!(got, want, "{text}");
            let got = crate::profiler::csv_common::warning_counts(&om.warnings);
            let expect: Vec<(String, u64, u64)> = warned
                .iter()
                .map(|(f, n, l)| (f.to_string(), *n, *l))
                .collect();
            assert_eq!(got, expect, "{text}");
        }
    }
}
