//! `memory_record.csv`: allocator totals over time, one series per component.
//!
//! torch_npu components are `PTA` (torch caching allocator), `GE` (CANN pool), `PTA+GE`, `APP`
//! (process-level, no Allocated value) and `WORKSPACE`; MindSpore writes `MindSpore`,
//! `MindSpore+GE`, `GE`, `APP`, and its "MB" columns are KB / 1000, not KB / 1024. msprof's own
//! `memory_record_*.csv` has its totals in KB (`Total Allocated(KB)`), read as such.
//! The framework allocator series (`PTA` or `MindSpore`) is the "memory over time" curve.

use super::csv_common::{
    component_and_time, field_eq, mb_read_kb, mb_u64_at, mb_u64_like, read_table, time_or_skip,
    totals_in_kb, HeaderMap, NumberMemo, Row, Warnings,
};
use crate::diag::Diagnostic;
use crate::source::Source;

/// A column of optional byte counts stored in 8 bytes a value (`u64::MAX` = empty), half the
/// size of `Vec<Option<u64>>`: memory_record files reach millions of rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptColumn(Vec<u64>);

const EMPTY: u64 = u64::MAX;

impl OptColumn {
    /// Appends a value.
    pub fn push(&mut self, v: Option<u64>) {
        // A real total never reaches 2^64 - 1 bytes; clamp so it cannot read as empty.
        self.0.push(v.map_or(EMPTY, |x| x.min(EMPTY - 1)));
    }
    /// The value at `i` (`None`: empty field, or out of range).
    pub fn get(&self, i: usize) -> Option<u64> {
        self.0.get(i).copied().filter(|&v| v != EMPTY)
    }
    /// Number of values (empty ones included).
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when there is no value at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The values in order.
    pub fn iter(&self) -> impl Iterator<Item = Option<u64>> + '_ {
        self.0.iter().map(|&v| (v != EMPTY).then_some(v))
    }
    /// The values as a vector of options (for tests and small series).
    pub fn to_vec(&self) -> Vec<Option<u64>> {
        self.iter().collect()
    }
    /// Appends all values of `other`.
    pub fn append(&mut self, other: &OptColumn) {
        self.0.extend_from_slice(&other.0);
    }
    /// Applies `f` to every non-empty value.
    pub fn map_values(&mut self, f: impl Fn(u64) -> u64) {
        for v in self.0.iter_mut().filter(|v| **v != EMPTY) {
            *v = f(*v).min(EMPTY - 1);
        }
    }
    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }
    /// Makes room for `n` more values at once (no doubling past what is needed).
    pub fn reserve(&mut self, n: usize) {
        self.0.reserve_exact(n);
    }
}

impl FromIterator<Option<u64>> for OptColumn {
    fn from_iter<I: IntoIterator<Item = Option<u64>>>(it: I) -> Self {
        let mut c = OptColumn::default();
        for v in it {
            c.push(v);
        }
        c
    }
}

/// One component's totals over time, in file order (sorted by time when read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Series {
    /// Component name as written (`PTA`, `GE`, `PTA+GE`, `APP`, `WORKSPACE`, `MindSpore`, …).
    pub component: String,
    /// Timestamps (ns).
    pub ts: Vec<i64>,
    /// Total allocated bytes (empty field, e.g. `APP`, reads as `None`).
    pub allocated: OptColumn,
    /// Total reserved bytes.
    pub reserved: OptColumn,
    /// Total active bytes.
    pub active: OptColumn,
}

/// The maximum of one metric of a series and when it was first reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Peak {
    /// Bytes at the peak.
    pub bytes: u64,
    /// First time the peak value was reached (ns).
    pub time_ns: i64,
}

/// Which total of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Total allocated.
    Allocated,
    /// Total reserved.
    Reserved,
    /// Total active.
    Active,
}

impl Series {
    /// The values of `metric`.
    pub fn values(&self, metric: Metric) -> &OptColumn {
        match metric {
            Metric::Allocated => &self.allocated,
            Metric::Reserved => &self.reserved,
            Metric::Active => &self.active,
        }
    }

    /// The peak of `metric` (first time reached), `None` if the series has no value for it.
    pub fn peak(&self, metric: Metric) -> Option<Peak> {
        let mut best: Option<Peak> = None;
        for (&t, v) in self.ts.iter().zip(self.values(metric).iter()) {
            if let Some(v) = v {
                if best.is_none_or(|b| v > b.bytes) {
                    best = Some(Peak {
                        bytes: v,
                        time_ns: t,
                    });
                }
            }
        }
        best
    }

    /// The value of `metric` in force at `t` (last point at or before `t`).
    pub fn value_at(&self, metric: Metric, t: i64) -> Option<u64> {
        let i = self.ts.partition_point(|&x| x <= t);
        let vals = self.values(metric);
        (0..i).rev().find_map(|j| vals.get(j))
    }

    /// Makes room for `n` more points in every column at once.
    pub fn reserve(&mut self, n: usize) {
        self.ts.reserve_exact(n);
        self.allocated.reserve(n);
        self.reserved.reserve(n);
        self.active.reserve(n);
    }

    /// Releases spare capacity (series are kept for the whole session).
    pub fn shrink_to_fit(&mut self) {
        self.ts.shrink_to_fit();
        self.allocated.shrink_to_fit();
        self.reserved.shrink_to_fit();
        self.active.shrink_to_fit();
    }

    /// Sorts by time, stably (rows with equal times keep file order).
    pub fn sort_by_time(&mut self) {
        sort_series(self);
    }

    /// Points `(ts, value)` of `metric` where it is defined, for curves.
    pub fn points(&self, metric: Metric) -> (Vec<i64>, Vec<u64>) {
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for (&t, v) in self.ts.iter().zip(self.values(metric).iter()) {
            if let Some(v) = v {
                xs.push(t);
                ys.push(v);
            }
        }
        (xs, ys)
    }
}

/// A parsed `memory_record.csv`.
#[derive(Debug, Clone, Default)]
pub struct MemoryRecord {
    /// One series per component, in order of first appearance.
    pub series: Vec<Series>,
    /// True for MindSpore output (components `MindSpore…`; its "MB" is KB / 1000, converted here).
    pub mindspore: bool,
    /// Skipped rows and bad values, counted.
    pub warnings: Vec<Diagnostic>,
}

impl MemoryRecord {
    /// The series of `component`.
    pub fn get(&self, component: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.component == component)
    }

    /// The framework allocator's series: `PTA` (torch_npu) or `MindSpore` (see
    /// [`allocator_series`]).
    pub fn framework(&self) -> Option<&Series> {
        allocator_series(&self.series)
    }
}

/// The components whose series gives a rank's peak, in order of preference: the framework's
/// allocator (`PTA`, `MindSpore`), else CANN's `GE`, the only allocator a database export in
/// msprof's layout records (see [`crate::profiler::msprof_db`]).
pub const ALLOCATOR_COMPONENTS: [&str; 3] = ["PTA", "MindSpore", "GE"];

/// The series of the first of [`ALLOCATOR_COMPONENTS`] that `series` holds.
pub fn allocator_series(series: &[Series]) -> Option<&Series> {
    ALLOCATOR_COMPONENTS
        .iter()
        .find_map(|c| series.iter().find(|s| s.component == *c))
}

// Places in [`COLUMNS`] (and so in the header map's `index`), not in the file.
const COMPONENT: usize = 0;
const TIMESTAMP: usize = 1;
const ALLOCATED: usize = 2;
const RESERVED: usize = 3;
const ACTIVE: usize = 4;
/// The columns read, each with its accepted spellings.
const COLUMNS: [&[&str]; 5] = [
    // `Tag`: the first torch_npu's `memory_view_line_chart.csv`.
    &["Component", "Tag"],
    &["Timestamp(us)"],
    &["Total Allocated(MB)"],
    &["Total Reserved(MB)"],
    &["Total Active(MB)"],
];

/// Where the columns a row is read from are in the file (`None`: not in its header), located
/// once per file from the header.
struct Cols {
    /// The first torch_npu's `memory_view_line_chart.csv` (its first column is `Tag`), whose
    /// `APP` rows were written short on purpose: see [`app_row_written_short`].
    line_chart: bool,
    component: Option<usize>,
    timestamp: Option<usize>,
    allocated: Option<usize>,
    reserved: Option<usize>,
    active: Option<usize>,
}

impl Cols {
    /// The places of [`COLUMNS`] in the header `h`, each named by the column it holds.
    fn locate(h: &HeaderMap) -> Self {
        let at = |c: usize| h.index.get(c).copied().flatten();
        Cols {
            line_chart: at(COMPONENT)
                .and_then(|i| h.names.get(i))
                .is_some_and(|n| n == "Tag"),
            component: at(COMPONENT),
            timestamp: at(TIMESTAMP),
            allocated: at(ALLOCATED),
            reserved: at(RESERVED),
            active: at(ACTIVE),
        }
    }
}

/// Fields of an `APP` row of the first torch_npu's `memory_view_line_chart.csv`: its writer
/// (Ascend/pytorch, `torch_npu/profiler/analysis/prof_view/memory_view_parser.py` of 2023, with the
/// `NpuMemoryBean` of `prof_bean/npu_mem_bean.py` whose `SHOW_HEADERS` were `event`,
/// `timestamp(us)`, `memory(KB)`) copied CANN's three `npu_mem.csv` fields under the five-column
/// header `Tag,Timestamp(us),Total Reserved(KB),Total Allocated(KB),Device Type`: the app's memory
/// lands under Total Reserved, and there is no allocated total and no device.
const LINE_CHART_APP_FIELDS: usize = 3;

/// True for a row of the shape that writer wrote short on purpose (an `APP` row of exactly
/// [`LINE_CHART_APP_FIELDS`] fields in a line chart): read without a short-row warning, its
/// missing totals empty. Any other short row is still counted.
fn app_row_written_short(cols: &Cols, row: &Row<'_>) -> bool {
    cols.line_chart
        && row.record.len() == LINE_CHART_APP_FIELDS
        && row.get_bytes(cols.component) == Some(b"APP".as_slice())
}

/// Most components (series) one file may have: real files have `PTA`, `GE`, `PTA+GE`, `APP`,
/// `WORKSPACE` (or MindSpore's few); a bound keeps memory and the per-series work of the analysis
/// in check on damaged files.
pub const MAX_SERIES: usize = 1024;

/// Reads `memory_record.csv` from `src`.
pub fn read_memory_record(
    src: &dyn Source,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<MemoryRecord, Diagnostic> {
    let file = src.name().to_string();
    let mut out = MemoryRecord::default();
    let mut warnings = Warnings::default();
    // The columns' places, located once from the header (the fields are then read by index).
    let locate = |h: &HeaderMap| {
        let cols = Cols::locate(h);
        if cols.component.is_some() && cols.timestamp.is_some() {
            Ok(cols)
        } else {
            Err(format!(
                "not a memory_record.csv header: expected Component,Timestamp(us),Total Allocated(MB),\
                 Total Reserved(MB),… (found: {})",
                h.shown()
            ))
        }
    };
    // Values are parsed as torch_npu MB (2^20 bytes) and rescaled at the end for MindSpore, whose
    // "MB" is KB / 1000; whether a file is MindSpore's shows only in its component names.
    // A handful of keys looked up once per row: a fast fixed hasher (no DoS concern: the key
    // count is capped at MAX_SERIES).
    let mut index: std::collections::HashMap<String, usize, foldhash::fast::FixedState> =
        Default::default();
    // The series the last row went to: rows name a handful of components, often in turn.
    let mut last = 0;
    // The last time and reserved total read: a combined series' row (`PTA+GE`) is written at the
    // time of the row before it, and reserved totals change rarely.
    let (mut time_memo, mut reserved_memo) = (NumberMemo::default(), NumberMemo::default());
    let on_row = |h: &HeaderMap, cols: &Cols, row: &Row<'_>, w: &mut Warnings| {
        // A component whose bytes are a series' name is that series: valid UTF-8 (no warning to
        // count) and not empty, so the checked text and the map would find the same series; the
        // bytes are compared instead (`callgrind`: the UTF-8 check and the hash were ~5 % of the
        // CSV readers' instructions).
        let known = row
            .get_bytes(cols.component)
            .and_then(|b| known_series(&out.series, last, b));
        let (component, ts) = match known {
            Some(_) => (
                None,
                time_or_skip(row, h, cols.timestamp, w, &file, Some(&mut time_memo)),
            ),
            None => match component_and_time(row, h, (cols.component, cols.timestamp), w, &file) {
                Some((c, ts)) => (Some(c), Some(ts)),
                None => (None, None),
            },
        };
        let Some(ts) = ts else {
            return;
        };
        // Read as MB whatever the unit: a KB file is rescaled once read.
        let allocated = mb_u64_at(row, h, cols.allocated, w, &file, None);
        let reserved = mb_u64_at(row, h, cols.reserved, w, &file, Some(&mut reserved_memo));
        // Active is allocated in most rows (no block waits to be reused), written alike.
        let active = mb_u64_like(row, h, cols.active, w, &file, (cols.allocated, allocated));
        let component = component.unwrap_or_default();
        let at = match known.or_else(|| index.get(component.as_ref()).copied()) {
            Some(i) => i,
            None if out.series.len() >= MAX_SERIES => {
                w.add_keyed(
                    &file,
                    row.line,
                    row.byte,
                    "Component",
                    "too many components",
                    &format!(
                        "more than {MAX_SERIES} different components (real files have a handful); \
                         rows of further components skipped"
                    ),
                );
                return;
            }
            None => {
                out.series.push(Series {
                    component: component.to_string(),
                    ..Series::default()
                });
                index.insert(component.to_string(), out.series.len() - 1);
                out.series.len() - 1
            }
        };
        last = at;
        if let Some(s) = out.series.get_mut(at) {
            s.ts.push(ts);
            s.allocated.push(allocated);
            s.reserved.push(reserved);
            s.active.push(active);
        }
    };
    let header = read_table(
        src,
        &COLUMNS,
        locate,
        on_row,
        app_row_written_short,
        &mut warnings,
        progress,
    )?;
    // The unit is asked after the rows, not in `locate`: there it changed the compiled row loop
    // (`callgrind`: ~9 instructions and a copy more a row). A file refused for it is read for
    // nothing, and no writer's file is.
    let kb = totals_in_kb(&header, &[ALLOCATED, RESERVED, ACTIVE]).map_err(|why| {
        Diagnostic::error(&file, format!("not a memory_record.csv this reads: {why}"))
            .at_line(1)
            .at_byte(0)
    })?;
    out.mindspore = out
        .series
        .iter()
        .any(|s| s.component.starts_with("MindSpore"));
    for s in &mut out.series {
        if kb {
            // Read as MB: 1024 times the bytes of a KB total.
            s.allocated.map_values(mb_read_kb);
            s.reserved.map_values(mb_read_kb);
            s.active.map_values(mb_read_kb);
        } else if out.mindspore {
            // MindSpore's "MB"; its KB (1024 bytes, as msprof's) needs no more.
            // value_bytes = MB_ms × 1000 × 1024 = (bytes_pta / 2^20) × 1_024_000.
            let rescale = |v: u64| ((u128::from(v) * 1_024_000 + (1 << 19)) >> 20) as u64;
            s.allocated.map_values(rescale);
            s.reserved.map_values(rescale);
            s.active.map_values(rescale);
        }
        sort_series(s);
        s.shrink_to_fit();
    }
    out.warnings = warnings.into_vec();
    Ok(out)
}

/// Series compared by name before the map is asked: real files have five or fewer.
const SCANNED_SERIES: usize = 8;

/// The index of the series named `name` (bytes), trying `last` first, among the first
/// [`SCANNED_SERIES`]; `None` when none of those is (the caller then asks its map).
fn known_series(series: &[Series], last: usize, name: &[u8]) -> Option<usize> {
    if series
        .get(last)
        .is_some_and(|s| field_eq(s.component.as_bytes(), name))
    {
        return Some(last);
    }
    series
        .iter()
        .take(SCANNED_SERIES)
        .position(|s| field_eq(s.component.as_bytes(), name))
}

/// Sorts a series by time, stably (rows with equal times keep file order).
fn sort_series(s: &mut Series) {
    if s.ts.windows(2).all(|w| w[0] <= w[1]) {
        return;
    }
    let mut order: Vec<usize> = (0..s.ts.len()).collect();
    order.sort_by_key(|&i| s.ts.get(i).copied().unwrap_or(i64::MAX));
    let pick = |v: &OptColumn| order.iter().map(|&i| v.get(i)).collect();
    s.allocated = pick(&s.allocated);
    s.reserved = pick(&s.reserved);
    s.active = pick(&s.active);
    s.ts = order.iter().filter_map(|&i| s.ts.get(i).copied()).collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::BytesSource;

    #[test]
    fn reads_components_and_peaks() {
        let text = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\r\n\
APP,1736405443756384.100\t,,2109.6015625,,,NPU:0\r\n\
PTA,1736405443870818.960\t,935.9951171875,1452.0,935.9951171875,1431569360,NPU:0\r\n\
PTA+GE,1736405443870818.960\t,935.9951171875,1452.0,935.9951171875,1431569360,NPU:0\r\n\
PTA,1736405443870819.000\t,900.0,1452.0,900.0,1431569360,NPU:0\r\n\
GE,1736405443881360.630\t,49.125,74.75,,,NPU:0\r\n";
        let src = BytesSource::new("mr.csv", text.as_bytes().to_vec());
        let mr = read_memory_record(&src, None).unwrap();
        assert_eq!(mr.series.len(), 4);
        let pta = mr.framework().unwrap();
        let p = pta.peak(Metric::Allocated).unwrap();
        assert_eq!(p.time_ns, 1_736_405_443_870_818_960);
        assert_eq!(p.bytes, (935.9951171875 * 1048576.0) as u64);
        assert_eq!(mr.get("APP").unwrap().allocated.to_vec(), vec![None]);
        assert_eq!(
            pta.value_at(Metric::Allocated, 1_736_405_443_870_819_500),
            Some(900 << 20)
        );
    }

    /// Rows of components in turn, padded, not UTF-8 (counted at every row), empty (skipped) and
    /// more components than are compared by name (the map's): every point goes to the series of
    /// its own component, in the order of first appearance.
    #[test]
    fn rows_go_to_the_series_of_their_component() {
        let mut text = b"Component,Timestamp(us),Total Allocated(MB)\n".to_vec();
        let mut comps: Vec<Vec<u8>> = Vec::new();
        for k in 0..12 {
            comps.push(format!("C{k}").into_bytes());
        }
        comps.push(b"\xffX".to_vec());
        let mut want: Vec<(String, Vec<u64>)> = Vec::new();
        let mut row = 0u64;
        let mut bad = 0u64;
        for round in 0..3 {
            for (k, c) in comps.iter().enumerate() {
                if (k + round) % 3 == 0 && k > 0 {
                    continue;
                }
                row += 1;
                let pad = if row % 4 == 0 { " " } else { "" };
                text.extend_from_slice(pad.as_bytes());
                text.extend_from_slice(c);
                text.extend_from_slice(format!("{pad},{row}.000,{row}.0\n").as_bytes());
                let name = String::from_utf8_lossy(c).into_owned();
                bad += u64::from(c[0] == 0xff);
                match want.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, v)) => v.push(row << 20),
                    None => want.push((name, vec![row << 20])),
                }
            }
            text.extend_from_slice(b",1.000,1.0\n");
        }
        let src = BytesSource::new("mr.csv", text);
        let mr = read_memory_record(&src, None).unwrap();
        let got: Vec<(String, Vec<u64>)> = mr
            .series
            .iter()
            .map(|s| {
                let v = s.allocated.iter().map(|v| v.unwrap()).collect();
                (s.component.clone(), v)
            })
            .collect();
        assert_eq!(got, want);
        let count = |what: &str| {
            mr.warnings
                .iter()
                .find(|d| d.message.contains(what))
                .map_or(0, |d| d.count)
        };
        assert_eq!(count("UTF-8"), bad);
        assert_eq!(count("empty component"), 3);
    }

    /// The columns in any order, with columns the reader does not read between them and optional
    /// ones missing: every value lands in its own column of its component's series, and bad values
    /// are counted per column with the first row's line, in the order first met (a row's component,
    /// its time, then its totals as the reader lists them, whatever the file's order). The
    /// expectation is built from the values written, not by the reader.
    #[test]
    fn columns_in_any_order_read_as_their_names_say() {
        const NAMES: [&str; 5] = [
            "Component",
            "Timestamp(us)",
            "Total Allocated(MB)",
            "Total Reserved(MB)",
            "Total Active(MB)",
        ];
        // A series' points: time and the three totals; a warning's key: field and kind.
        type Points = Vec<(i64, [Option<u64>; 3])>;
        type Key = (String, &'static str);
        let mut rng = fastrand::Rng::with_seed(17);
        for _ in 0..300 {
            // `Some(c)`: the reader's column `c`; `None`: a column it does not read.
            let mut cols: Vec<Option<usize>> =
                (0..5).filter(|&c| c < 2 || rng.bool()).map(Some).collect();
            for _ in 0..rng.usize(0..3) {
                cols.push(None);
            }
            rng.shuffle(&mut cols);
            let header: Vec<&str> = cols
                .iter()
                .enumerate()
                .map(|(k, c)| c.map_or(["Stream Ptr", "Device Type", "Other"][k % 3], |c| NAMES[c]))
                .collect();
            let mut text = header.join(",");
            text.push_str(if rng.bool() { "\r\n" } else { "\n" });
            // Per component: times and the three totals (`None` for a column not in the file).
            let mut want: Vec<(String, Points)> = Vec::new();
            // (field, kind) → (count, first line), in the order first met.
            let mut warned: Vec<(Key, (u64, u64))> = Vec::new();
            let mut warn = |field: &str, kind: &'static str, line: u64| match warned
                .iter_mut()
                .find(|(k, _)| k.0 == field && k.1 == kind)
            {
                Some((_, (n, _))) => *n += 1,
                None => warned.push(((field.to_string(), kind), (1, line))),
            };
            // The row before's time, and its reserved field with what it reads as: rows often
            // repeat them (so does active the row's allocated), which the reader parses once.
            let mut prev_time = None;
            let mut prev_reserved: Option<(String, Option<u64>, Option<&str>)> = None;
            for r in 0..rng.usize(1..30) {
                let line = r as u64 + 2;
                let comp = ["PTA", "GE", "APP"][rng.usize(..3)];
                let (us, ms, bad_time) = match prev_time {
                    Some(t) if rng.bool() => t,
                    _ => (
                        1_736_405_443_000_000 + rng.u64(..1_000_000),
                        rng.u64(..1000),
                        rng.u8(..10) == 0,
                    ),
                };
                prev_time = Some((us, ms, bad_time));
                let mut fields = [
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ];
                fields[0] = comp.to_string();
                fields[1] = if bad_time {
                    "12:30".to_string()
                } else {
                    format!("{us}.{ms:03}\t")
                };
                let mut totals = [None; 3];
                let mut wrong: [Option<&str>; 3] = [None; 3];
                for (t, total) in totals.iter_mut().enumerate() {
                    let mb = rng.u64(..100_000);
                    let kb = rng.u64(..1024);
                    fields[2 + t] = match rng.u8(..10) {
                        0 => String::new(),
                        1 => "N/A".to_string(),
                        2 => {
                            wrong[t] = Some("bad MB");
                            "1.2.3".to_string()
                        }
                        3 => {
                            wrong[t] = Some("negative total read as empty");
                            format!("-{mb}.5")
                        }
                        _ => {
                            // `kb / 1024` MB is `kb × 9765625` ten-billionths: exact in the
                            // file, with its trailing zeros written or not.
                            *total = Some((mb << 20) + (kb << 10));
                            let frac = format!("{:010}", kb * 9_765_625);
                            let frac = if rng.bool() {
                                frac.trim_end_matches('0')
                            } else {
                                &frac
                            };
                            format!("{mb}.{frac}")
                        }
                    };
                }
                // Active written as allocated, reserved as in the row before, each half the time
                // (bad, negative, empty and null fields included).
                if rng.bool() {
                    fields[4] = fields[2].clone();
                    (totals[2], wrong[2]) = (totals[0], wrong[0]);
                }
                if let Some((text, total, bad)) = prev_reserved.clone().filter(|_| rng.bool()) {
                    (fields[3], totals[1], wrong[1]) = (text, total, bad);
                }
                prev_reserved = Some((fields[3].clone(), totals[1], wrong[1]));
                let row: Vec<&str> = cols
                    .iter()
                    .map(|c| c.map_or("7", |c| fields[c].as_str()))
                    .collect();
                text.push_str(&row.join(","));
                text.push('\n');
                if bad_time {
                    warn("Timestamp(us)", "bad time", line);
                    warn("Timestamp(us)", "no timestamp", line);
                    continue;
                }
                let mut got = [None; 3];
                for t in 0..3 {
                    if !cols.contains(&Some(2 + t)) {
                        continue;
                    }
                    if let Some(kind) = wrong[t] {
                        warn(NAMES[2 + t], kind, line);
                    }
                    got[t] = totals[t];
                }
                let ts = (us * 1000 + ms) as i64;
                match want.iter_mut().find(|(c, _)| c == comp) {
                    Some((_, v)) => v.push((ts, got)),
                    None => want.push((comp.to_string(), vec![(ts, got)])),
                }
            }
            let src = BytesSource::new("mr.csv", text.clone().into_bytes());
            let mr = read_memory_record(&src, None).unwrap();
            let got: Vec<(String, Points)> = mr
                .series
                .iter()
                .map(|s| {
                    let points = (0..s.ts.len())
                        .map(|i| {
                            let v = [s.allocated.get(i), s.reserved.get(i), s.active.get(i)];
                            (s.ts[i], v)
                        })
                        .collect();
                    (s.component.clone(), points)
                })
                .collect();
            for (_, v) in &mut want {
                v.sort_by_key(|p| p.0);
            }
            assert_eq!(got, want, "{text}");
            let got = crate::profiler::csv_common::warning_counts(&mr.warnings);
            let expect: Vec<(String, u64, u64)> = warned
                .iter()
                .map(|((f, _), (n, l))| (f.clone(), *n, *l))
                .collect();
            assert_eq!(got, expect, "{text}");
            for (d, ((_, kind), _)) in mr.warnings.iter().zip(&warned) {
                let what = match *kind {
                    "bad MB" => "expected a number like",
                    "bad time" => "expected a time in microseconds",
                    other => other,
                };
                assert!(d.message.starts_with(what), "{} for {kind}", d.message);
            }
        }
    }
}
