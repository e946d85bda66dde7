//! The snapshot views' questions and answers: one opened snapshot held by a front end, and plain
//! serde request and answer types with named fields. The wasm layer only converts them (and
//! turns the pixel arrays of [`Lod`] answers into typed arrays); every answer is computed here
//! and tested natively.
//!
//! Views: the summary (the `--json` object), the allocated and reserved curves over the trace
//! (min/max envelopes per pixel column), the stacked allocation timeline ([`super::timeline`]),
//! the allocator state at the snapshot ([`super::state`]), hit tests that return an allocation or
//! block with its stack, tables (groups by frame at the peak and at the snapshot, allocations,
//! segments, OOMs) through [`crate::table`] with the position of a selected row in them, and the
//! export files.
//!
//! Why one file of ~1,090 lines: about 260 are the request and answer types with their doc
//! comments; the rest is one [`SnapshotView`] whose methods share its per-device caches.

use super::analysis::{self, Analysis, DeviceAnalysis, Origin, NONE};
use super::model::{Action, Snapshot, NO_TIME};
use super::state::{place_segments, segment_bars, Placement, ROW, SEGMENT_ID};
use super::summary::{self, group_label, Summary};
use super::timeline::{Timeline, Window};
use crate::chart::{Lod, RectIndex, Viewport};
use crate::diag::Diagnostic;
use crate::frames::{is_library_path, is_python_source};
use crate::source::Source;
use crate::table::{Column, ColumnSpec, Page, Query, Table, TableView};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// Most rectangles drawn one by one in the allocator state view (the rest merge into runs).
pub const MAX_BAR_RECTS: usize = 20_000;

/// What the views know about one device before asking anything.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceInfo {
    /// Device id.
    pub device: i64,
    /// Trace entries.
    pub entries: u64,
    /// Allocations over the trace (timeline elements).
    pub allocations: usize,
    /// Highest stack of allocations over the trace (the timeline's y extent).
    pub max_stack_bytes: u64,
    /// Highest of the allocated and reserved curves (the curve chart's y extent).
    pub max_curve_bytes: u64,
    /// Segments.
    pub segments: usize,
    /// Rows of the allocator state view (segments packed by size).
    pub state_rows: u32,
    /// Largest segment (the width of a row of the allocator state view).
    pub max_segment_bytes: u64,
    /// Entry of the peak, if the trace has one.
    pub peak_trace_index: Option<u32>,
    /// Time of the first and last entries, if recorded.
    pub time_range: Option<(i64, i64)>,
}

/// The first answer: the summary and the devices.
#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    /// What `memlens snapshot --json` prints.
    pub summary: Summary,
    /// One per device, in the summary's order.
    pub devices: Vec<DeviceInfo>,
}

/// The curves over a window of entries.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct CurveRequest {
    /// Device id.
    pub device: i64,
    /// First entry coordinate.
    pub x0: f64,
    /// End entry coordinate.
    pub x1: f64,
    /// Pixel columns.
    pub columns: u32,
}

/// One curve reduced to pixel columns (bytes).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CurveColumns {
    /// Smallest value per column.
    pub min: Vec<f64>,
    /// Largest value per column.
    pub max: Vec<f64>,
    /// False where the curve has no value (outside the trace).
    pub defined: Vec<bool>,
}

/// The allocated and reserved curves of a window.
#[derive(Debug, Clone, Serialize)]
pub struct CurveAnswer {
    /// Allocated bytes (the replay of `alloc` and `free_completed`).
    pub allocated: CurveColumns,
    /// Reserved bytes (the replay of segment reserve, release, map and unmap).
    pub reserved: CurveColumns,
    /// `defined` of both curves as 0/1 bytes (for the typed-array answer).
    #[serde(skip)]
    defined_bytes: Vec<u8>,
}

/// Crosses to the page as `allocatedMin, allocatedMax, reservedMin, reservedMax` (f64) and
/// `defined` (u8; the two curves are defined on the same columns).
impl crate::bulk::Bulk for CurveAnswer {
    fn fields(&self) -> Vec<(&'static str, crate::bulk::Field<'_>)> {
        use crate::bulk::Field;
        vec![
            ("allocatedMin", Field::F64(&self.allocated.min)),
            ("allocatedMax", Field::F64(&self.allocated.max)),
            ("reservedMin", Field::F64(&self.reserved.min)),
            ("reservedMax", Field::F64(&self.reserved.max)),
            ("defined", Field::U8(&self.defined_bytes)),
        ]
    }
}

/// A window of the stacked timeline or of the allocator state, in data coordinates.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct ViewRequest {
    /// Device id.
    pub device: i64,
    /// Left edge.
    pub x0: f64,
    /// Right edge.
    pub x1: f64,
    /// Bottom edge.
    pub y0: f64,
    /// Top edge.
    pub y1: f64,
    /// Canvas width in pixels.
    pub width: u32,
    /// Canvas height in pixels.
    pub height: u32,
    /// Frame id whose allocations are highlighted (a selected group).
    #[serde(default)]
    pub highlight: Option<u32>,
}

/// A point of a view, in data coordinates.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct HitRequest {
    /// Device id.
    pub device: i64,
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// Tolerance in x (data units), for the allocator state.
    #[serde(default)]
    pub dx: f64,
    /// Tolerance in y.
    #[serde(default)]
    pub dy: f64,
}

/// One frame of a stack as the views show it.
#[derive(Debug, Clone, Serialize)]
pub struct FrameRow {
    /// Function.
    pub name: String,
    /// File.
    pub filename: String,
    /// Line.
    pub line: i64,
    /// A Python frame of the user's own code.
    pub user: bool,
    /// The frame the allocation is grouped by.
    pub top: bool,
}

/// An allocation of the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct Allocation {
    /// Element index (stacking order).
    pub element: u32,
    /// Address, `0x…`.
    pub address: String,
    /// Bytes.
    pub size: u64,
    /// Entry of its `alloc` (`null`: before the trace).
    pub alloc_index: Option<u32>,
    /// Entry of its `free_completed` (`null`: still allocated at the snapshot).
    pub free_index: Option<u32>,
    /// Time of the alloc, if recorded.
    pub alloc_time_us: Option<i64>,
    /// Time of the free, if recorded.
    pub free_time_us: Option<i64>,
    /// `trace`, `before_trace_freed_in_it` or `before_trace_still_allocated`.
    pub origin: &'static str,
    /// Its group's frame id (`4294967295`: no Python frame, `4294967294`: no stack).
    pub group: u32,
    /// Its group's label.
    pub group_label: String,
    /// Its offset in the stack at the point asked (bytes), when it came from a hit test.
    pub offset: Option<u64>,
    /// Its stack, innermost first.
    pub stack: Vec<FrameRow>,
}

/// A block or segment of the allocator state.
#[derive(Debug, Clone, Serialize)]
pub struct BlockInfo {
    /// `block` or `segment`.
    pub kind: &'static str,
    /// Segment index (into the snapshot's segments).
    pub segment: u32,
    /// Block index, for a block.
    pub block: Option<u32>,
    /// Address, `0x…`.
    pub address: String,
    /// Bytes.
    pub size: u64,
    /// Bytes asked for (blocks).
    pub requested_size: Option<u64>,
    /// Block state, or the segment's type.
    pub state: &'static str,
    /// The segment's stream.
    pub stream: u64,
    /// Segment: allocated bytes in it.
    pub allocated: Option<u64>,
    /// Segment: largest free block.
    pub largest_free_block: Option<u64>,
    /// Its group's frame id.
    pub group: u32,
    /// Its group's label.
    pub group_label: String,
    /// Its stack.
    pub stack: Vec<FrameRow>,
}

/// A page of a table: which table, its query (columns by name) and the rows wanted.
#[derive(Debug, Clone, Deserialize)]
pub struct TableRequest {
    /// Device id.
    pub device: i64,
    /// `peak` (groups at the peak), `snapshot` (groups at the snapshot), `allocations`,
    /// `segments` or `ooms`.
    pub table: String,
    /// Sort, text filters and ranges, columns by name.
    #[serde(flatten)]
    pub query: Query,
    /// First row of the page.
    #[serde(default)]
    pub offset: usize,
    /// Rows of the page.
    #[serde(default = "default_limit")]
    pub limit: usize,
}

fn default_limit() -> usize {
    100
}

/// Where a selection sits in a table: the table and query of a [`TableRequest`] and the selected
/// row or group (exactly one of them).
#[derive(Debug, Clone, Deserialize)]
pub struct PositionRequest {
    /// Device id.
    pub device: i64,
    /// The table, as in [`TableRequest::table`].
    pub table: String,
    /// Sort, text filters and ranges, as the table's pages are asked with.
    #[serde(flatten)]
    pub query: Query,
    /// A row id: an allocation (its element index) in `allocations`, else the row's index in the
    /// unsorted table.
    #[serde(default)]
    pub row: Option<u32>,
    /// A group (frame id): its first row in the view (`peak` and `snapshot` hold one row per group).
    #[serde(default)]
    pub group: Option<u32>,
}

/// A page of a table.
#[derive(Debug, Clone, Serialize)]
pub struct TableAnswer<'a> {
    /// The shown columns (name and display kind), in order.
    pub specs: Vec<&'a ColumnSpec>,
    /// The rows asked for: cells by column name.
    pub page: Page<'a>,
    /// Per row of the page: the group (frame id) it belongs to, for linked selection.
    pub groups: Vec<u32>,
}

/// Entries per block of the curve index.
const CURVE_BLOCK: usize = 256;

/// The allocated and reserved curves of a device without storing them: per block of
/// [`CURVE_BLOCK`] entries the value before the block and the block's minimum and maximum; a
/// column's envelope combines whole blocks and replays the trace over the partial ones. Exact, and
/// 40 bytes per 256 entries.
struct CurveIndex {
    /// Per block and curve (0 allocated, 1 reserved): value before the block, min, max.
    blocks: Vec<[(i64, i64, i64); 2]>,
    /// Values before the first entry.
    base: [i64; 2],
    entries: usize,
}

/// Change of (allocated, reserved) made by an entry.
fn delta(a: Action, s: u64) -> (i64, i64) {
    let s = s.min(i64::MAX as u64) as i64;
    match a {
        Action::Alloc => (s, 0),
        Action::FreeCompleted => (-s, 0),
        Action::SegmentAlloc | Action::SegmentMap => (0, s),
        Action::SegmentFree | Action::SegmentUnmap => (0, -s),
        _ => (0, 0),
    }
}

impl CurveIndex {
    fn new(t: &super::model::Trace, base: [i64; 2]) -> CurveIndex {
        let mut v = base;
        let mut blocks = Vec::with_capacity(t.len().div_ceil(CURVE_BLOCK));
        for chunk in t.action.chunks(CURVE_BLOCK).zip(t.size.chunks(CURVE_BLOCK)) {
            let start = v;
            let (mut lo, mut hi) = ([i64::MAX; 2], [i64::MIN; 2]);
            for (&a, &s) in chunk.0.iter().zip(chunk.1) {
                let (da, dr) = delta(a, s);
                v[0] = v[0].saturating_add(da);
                v[1] = v[1].saturating_add(dr);
                for k in 0..2 {
                    lo[k] = lo[k].min(v[k]);
                    hi[k] = hi[k].max(v[k]);
                }
            }
            blocks.push([(start[0], lo[0], hi[0]), (start[1], lo[1], hi[1])]);
        }
        CurveIndex {
            blocks,
            base,
            entries: t.len(),
        }
    }

    /// Min and max of both curves over entries `[a, b)` (values after each entry).
    fn range(&self, t: &super::model::Trace, a: usize, b: usize) -> [(i64, i64); 2] {
        let mut out = [(i64::MAX, i64::MIN); 2];
        let mut i = a;
        while i < b {
            let blk = i / CURVE_BLOCK;
            let bstart = blk * CURVE_BLOCK;
            let bend = (bstart + CURVE_BLOCK).min(self.entries);
            if i == bstart && bend <= b {
                for (k, o) in out.iter_mut().enumerate() {
                    let (_, lo, hi) = self.blocks[blk][k];
                    *o = (o.0.min(lo), o.1.max(hi));
                }
                i = bend;
                continue;
            }
            // Replay from the block's start to the end of the part asked.
            let mut v = [self.blocks[blk][0].0, self.blocks[blk][1].0];
            let stop = bend.min(b);
            for j in bstart..stop {
                let (da, dr) = delta(t.action[j], t.size[j]);
                v[0] = v[0].saturating_add(da);
                v[1] = v[1].saturating_add(dr);
                if j >= i {
                    for (k, o) in out.iter_mut().enumerate() {
                        *o = (o.0.min(v[k]), o.1.max(v[k]));
                    }
                }
            }
            i = stop;
        }
        out
    }

    fn max(&self) -> [i64; 2] {
        let mut m = self.base;
        for b in &self.blocks {
            m[0] = m[0].max(b[0].2);
            m[1] = m[1].max(b[1].2);
        }
        m
    }
}

#[derive(Default)]
struct DeviceCache {
    placement: Option<Arc<Placement>>,
    curves: Option<Arc<CurveIndex>>,
    timeline: Option<Arc<Timeline>>,
    bars: Option<(Option<u32>, Arc<RectIndex>)>,
}

/// A table as built for a device, with each row's group (`None`: the rows have none).
type Built = (Table<'static>, Option<Vec<u32>>);

/// An opened snapshot and what its views have asked so far.
pub struct SnapshotView {
    /// The model.
    pub snap: Snapshot,
    /// Its analysis.
    pub analysis: Analysis,
    summary: Summary,
    cache: Vec<DeviceCache>,
    tables: HashMap<(usize, String), Built>,
    views: HashMap<(usize, String), (String, TableView)>,
    timings: OpenTimings,
}

/// Where opening a snapshot spent its time (ms, by the front end's clock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct OpenTimings {
    /// The pickle machine, the source's reads included (see [`super::ReadTimings`]).
    pub parse_ms: f64,
    /// Building the model from the pickle's records.
    pub model_ms: f64,
    /// The analysis and the summary.
    pub analyse_ms: f64,
}

fn hex(v: u64) -> String {
    format!("0x{v:x}")
}

fn opt_index(v: u32) -> Option<u32> {
    (v != NONE).then_some(v)
}

impl SnapshotView {
    /// Reads and analyses the snapshot in `source`.
    ///
    /// A load that may be stopped (a browser `File`) is asked between the read, the steps of
    /// each device's analysis ([`analysis::analyse_with`]) and the summary, and ends with the
    /// stop error at the file's end rather than going on with the next step.
    pub fn open(source: &dyn Source) -> Result<SnapshotView, Diagnostic> {
        Self::open_timed(source, &|| 0.0)
    }

    /// [`SnapshotView::open`], timing its steps with `clock()` (ms; see [`Self::timings`]).
    pub fn open_timed(
        source: &dyn Source,
        clock: &dyn Fn() -> f64,
    ) -> Result<SnapshotView, Diagnostic> {
        let (snap, read) = super::read_timed(source, clock)?;
        let t0 = clock();
        let stop = || source.check_stop(source.len()).map_err(Diagnostic::from);
        stop()?;
        let analysis = if source.may_stop() {
            analysis::analyse_with(&snap, &mut || stop())?
        } else {
            analysis::analyse(&snap)
        };
        stop()?;
        let mut view = SnapshotView::analysed(snap, analysis);
        view.timings = OpenTimings {
            parse_ms: read.parse_ms,
            model_ms: read.model_ms,
            analyse_ms: clock() - t0,
        };
        Ok(view)
    }

    /// Where [`Self::open_timed`] spent its time (zeros after [`Self::open`]).
    pub fn timings(&self) -> OpenTimings {
        self.timings
    }

    /// The overview as every front end answers it (JSON): [`Self::overview`] with the open's
    /// `read_ms` and its `timings` ([`Self::timings`] and the overview's own `overview_ms`, timed
    /// by `clock()`, ms).
    pub fn overview_answer(
        &mut self,
        read_ms: f64,
        clock: &dyn Fn() -> f64,
    ) -> Result<String, serde_json::Error> {
        let t0 = clock();
        let overview = self.overview();
        let overview_ms = clock() - t0;
        let mut v = serde_json::to_value(overview)?;
        v["read_ms"] = read_ms.into();
        v["timings"] = serde_json::to_value(self.timings)?;
        v["timings"]["overview_ms"] = overview_ms.into();
        Ok(v.to_string())
    }

    /// Analyses an already read snapshot.
    pub fn new(snap: Snapshot) -> SnapshotView {
        let analysis = analysis::analyse(&snap);
        SnapshotView::analysed(snap, analysis)
    }

    /// The view of `snap` with its `analysis`.
    fn analysed(snap: Snapshot, analysis: Analysis) -> SnapshotView {
        let summary = summary::summary(&snap, &analysis);
        let cache = analysis
            .devices
            .iter()
            .map(|_| DeviceCache::default())
            .collect();
        SnapshotView {
            snap,
            analysis,
            summary,
            cache,
            tables: HashMap::new(),
            views: HashMap::new(),
            timings: OpenTimings::default(),
        }
    }

    /// `summary.json`, exactly as `memlens snapshot --json` prints it.
    pub fn summary_json(&self) -> String {
        summary::to_json(&self.summary)
    }

    fn device(&self, device: i64) -> Result<usize, String> {
        self.analysis
            .devices
            .iter()
            .position(|d| d.device == device)
            .ok_or_else(|| format!("no device {device} in {}", self.snap.file))
    }

    fn trace_len(&self, d: &DeviceAnalysis) -> usize {
        d.trace.map_or(0, |t| self.snap.traces[t].len())
    }

    /// The summary and the devices.
    pub fn overview(&mut self) -> Overview {
        let devices = (0..self.analysis.devices.len())
            .map(|k| {
                let tl = self.timeline(k);
                let curves = self.curves(k);
                let place = self.placement(k);
                let d = &self.analysis.devices[k];
                let m = curves.max();
                let max_curve = m[0].max(m[1]).max(0) as u64;
                DeviceInfo {
                    device: d.device,
                    entries: d.trace_entries,
                    allocations: d.elements.len(),
                    max_stack_bytes: tl.max_total(),
                    max_curve_bytes: max_curve.max(d.reserved_bytes),
                    segments: d.segments.len(),
                    state_rows: place.rows,
                    max_segment_bytes: place.width,
                    peak_trace_index: d.peak_trace_index,
                    time_range: d.time_range,
                }
            })
            .collect();
        Overview {
            summary: self.summary.clone(),
            devices,
        }
    }

    /// The curve index of device `k`.
    fn curves(&mut self, k: usize) -> Arc<CurveIndex> {
        if let Some(c) = &self.cache[k].curves {
            return c.clone();
        }
        let d = &self.analysis.devices[k];
        let empty = Default::default();
        let t = d.trace.map_or(&empty, |i| &self.snap.traces[i]);
        // Reserved replays segment actions back from the snapshot's figure, as allocated does.
        let net: i128 = t
            .action
            .iter()
            .zip(&t.size)
            .map(|(&a, &s)| i128::from(delta(a, s).1))
            .sum();
        let reserved_base =
            (d.reserved_bytes as i128 - net).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let c = Arc::new(CurveIndex::new(t, [d.baseline_bytes, reserved_base]));
        self.cache[k].curves = Some(c.clone());
        c
    }

    fn timeline(&mut self, k: usize) -> Arc<Timeline> {
        if let Some(t) = &self.cache[k].timeline {
            return t.clone();
        }
        let d = &self.analysis.devices[k];
        let group = d.elements.iter().map(|e| self.group_of(e.stack)).collect();
        let n = self.trace_len(d) as u32;
        let t = Arc::new(Timeline::new(&d.elements, n, group));
        self.cache[k].timeline = Some(t.clone());
        t
    }

    fn group_of(&self, stack: u32) -> u32 {
        self.analysis
            .top_frame
            .get(stack as usize)
            .copied()
            .unwrap_or(NONE)
    }

    /// The curves of a window, reduced to pixel columns (see [`super::timeline::column_entries`]
    /// for which entries a column covers); each entry's value is the value after it.
    pub fn curve(&mut self, req: &CurveRequest) -> Result<CurveAnswer, String> {
        let k = self.device(req.device)?;
        let c = self.curves(k);
        let d = &self.analysis.devices[k];
        let empty = Default::default();
        let t = d.trace.map_or(&empty, |i| &self.snap.traces[i]);
        let cols = req.columns.min(16_384) as usize;
        let mut out = [CurveColumns::default(), CurveColumns::default()];
        let span = req.x1 - req.x0;
        for col in 0..cols {
            let xa = req.x0 + span * col as f64 / cols as f64;
            let xb = req.x0 + span * (col + 1) as f64 / cols as f64;
            let (a, b) = super::timeline::column_entries(xa, xb, c.entries);
            let defined = span > 0.0 && a < b;
            let r = if defined {
                c.range(t, a, b)
            } else {
                [(0, 0); 2]
            };
            for (k, o) in out.iter_mut().enumerate() {
                o.min.push(r[k].0.max(0) as f64);
                o.max.push(r[k].1.max(0) as f64);
                o.defined.push(defined);
            }
        }
        let [allocated, reserved] = out;
        let defined_bytes = crate::bulk::flags(&allocated.defined);
        Ok(CurveAnswer {
            allocated,
            reserved,
            defined_bytes,
        })
    }

    /// The stacked timeline of a window.
    pub fn timeline_view(&mut self, req: &ViewRequest) -> Result<Lod, String> {
        let k = self.device(req.device)?;
        let t = self.timeline(k);
        Ok(t.view(
            &Window {
                x0: req.x0,
                x1: req.x1,
                y0: req.y0,
                y1: req.y1,
                width: req.width.min(16_384),
                height: req.height.min(16_384),
            },
            req.highlight,
        ))
    }

    fn frames_of(&self, stack: u32) -> Vec<FrameRow> {
        let top = self.group_of(stack);
        self.snap
            .stacks
            .get(stack)
            .iter()
            .filter_map(|&f| self.snap.frames.get(f).map(|fr| (f, fr)))
            .map(|(f, fr)| {
                let file = self.snap.strings.get(fr.filename);
                FrameRow {
                    name: self.snap.strings.get(fr.name).to_string(),
                    filename: file.to_string(),
                    line: fr.line,
                    user: is_python_source(file) && !is_library_path(file),
                    top: f == top,
                }
            })
            .collect()
    }

    /// Allocation `element` of device `device` (its stack included).
    pub fn allocation(&mut self, device: i64, element: u32) -> Result<Allocation, String> {
        let k = self.device(device)?;
        let d = &self.analysis.devices[k];
        let e = d
            .elements
            .get(element as usize)
            .ok_or_else(|| format!("no allocation {element} on device {device}"))?;
        let time = |i: u32| -> Option<i64> {
            let t = &self.snap.traces[d.trace?];
            t.time_us.get(i as usize).copied().filter(|&x| x != NO_TIME)
        };
        let group = self.group_of(e.stack);
        Ok(Allocation {
            element,
            address: hex(e.addr),
            size: e.size,
            alloc_index: opt_index(e.start),
            free_index: opt_index(e.end),
            alloc_time_us: opt_index(e.start).and_then(time),
            free_time_us: opt_index(e.end).and_then(time),
            origin: match e.origin {
                Origin::Alloc => "trace",
                Origin::FreeOnly => "before_trace_freed_in_it",
                Origin::Block => "before_trace_still_allocated",
            },
            group,
            group_label: group_label(&self.snap, group),
            offset: None,
            stack: self.frames_of(e.stack),
        })
    }

    /// The allocation under a point of the timeline, if any.
    pub fn timeline_hit(&mut self, req: &HitRequest) -> Result<Option<Allocation>, String> {
        let k = self.device(req.device)?;
        let t = self.timeline(k);
        let Some((element, offset)) = t.hit(req.x, req.y) else {
            return Ok(None);
        };
        let mut a = self.allocation(req.device, element)?;
        a.offset = Some(offset);
        Ok(Some(a))
    }

    /// Where the allocator state view puts each segment of `device`.
    pub fn state_layout(&mut self, device: i64) -> Result<Placement, String> {
        let k = self.device(device)?;
        Ok((*self.placement(k)).clone())
    }

    fn placement(&mut self, k: usize) -> Arc<Placement> {
        if let Some(p) = &self.cache[k].placement {
            return p.clone();
        }
        let p = Arc::new(place_segments(&self.snap, &self.analysis.devices[k]));
        self.cache[k].placement = Some(p.clone());
        p
    }

    fn bars(&mut self, k: usize, highlight: Option<u32>) -> Arc<RectIndex> {
        if let Some((h, b)) = &self.cache[k].bars {
            if *h == highlight {
                return b.clone();
            }
        }
        let place = self.placement(k);
        let b = Arc::new(segment_bars(
            &self.snap,
            &self.analysis.devices[k],
            &place,
            &self.analysis.top_frame,
            highlight,
        ));
        self.cache[k].bars = Some((highlight, b.clone()));
        b
    }

    /// The allocator state view of a window (x: bytes into the segment, y: row × 10).
    pub fn state_view(&mut self, req: &ViewRequest) -> Result<Lod, String> {
        let k = self.device(req.device)?;
        let b = self.bars(k, req.highlight);
        Ok(b.visible(
            &Viewport {
                x0: req.x0,
                x1: req.x1,
                y0: req.y0,
                y1: req.y1,
            },
            req.width.min(16_384),
            req.height.min(16_384),
            MAX_BAR_RECTS,
        ))
    }

    /// The block (or, between blocks, the segment) under a point of the allocator state view.
    pub fn state_hit(&mut self, req: &HitRequest) -> Result<Option<BlockInfo>, String> {
        let k = self.device(req.device)?;
        let b = self.bars(k, None);
        // Blocks lie on their segment's bar: prefer a block under the point.
        let place = self.placement(k);
        let row = (req.y / ROW as f64).floor();
        if row < 0.0 || row >= f64::from(place.rows) {
            return Ok(None);
        }
        let d = &self.analysis.devices[k];
        let found = d.segments.iter().enumerate().find(|&(j, &si)| {
            let (r, x0) = place.at[j];
            let size = self.snap.segments[si as usize].total_size as f64;
            f64::from(r) == row && x0 as f64 - req.dx <= req.x && req.x < x0 as f64 + size + req.dx
        });
        let Some((j, &si)) = found else {
            return Ok(None);
        };
        let s = &self.snap.segments[si as usize];
        let x = req.x - place.at[j].1 as f64;
        let block = self
            .snap
            .blocks_of(s)
            .iter()
            .enumerate()
            .find(|(_, bl)| {
                let off = bl.address.saturating_sub(s.address) as f64;
                off - req.dx <= x && x < off + bl.size as f64 + req.dx
            })
            .map(|(i, _)| s.first_block + i as u32);
        let hit_any = b.hit_near(req.x, req.y, req.dx, req.dy).is_some();
        if block.is_none() && !hit_any {
            return Ok(None);
        }
        Ok(Some(match block {
            Some(bi) => self.block(req.device, bi)?,
            None => self.segment_info(k, si),
        }))
    }

    /// Block `block` (an index into [`Snapshot::blocks`]) of device `device`, with its stack.
    pub fn block(&mut self, device: i64, block: u32) -> Result<BlockInfo, String> {
        let k = self.device(device)?;
        let d = &self.analysis.devices[k];
        let si = d
            .segments
            .iter()
            .copied()
            .find(|&si| {
                let s = &self.snap.segments[si as usize];
                (s.first_block..s.first_block + s.block_count).contains(&block)
            })
            .ok_or_else(|| format!("no block {block} on device {device}"))?;
        let s = &self.snap.segments[si as usize];
        let bl = &self.snap.blocks[block as usize];
        let group = self.group_of(bl.stack);
        Ok(BlockInfo {
            kind: "block",
            segment: si,
            block: Some(block),
            address: hex(bl.address),
            size: bl.size,
            requested_size: Some(bl.requested_size),
            state: bl.state.label(),
            stream: s.stream,
            allocated: None,
            largest_free_block: None,
            group,
            group_label: group_label(&self.snap, group),
            stack: self.frames_of(bl.stack),
        })
    }

    fn segment_info(&self, k: usize, si: u32) -> BlockInfo {
        let d = &self.analysis.devices[k];
        let s = &self.snap.segments[si as usize];
        let f = d.fragmentation.iter().find(|f| f.segment == si);
        let group = self.group_of(s.stack);
        BlockInfo {
            kind: "segment",
            segment: si,
            block: None,
            address: hex(s.address),
            size: s.total_size,
            requested_size: None,
            state: s.segment_type.label(),
            stream: s.stream,
            allocated: f.map(|f| f.allocated),
            largest_free_block: f.map(|f| f.largest_free_block),
            group,
            group_label: group_label(&self.snap, group),
            stack: self.frames_of(s.stack),
        }
    }

    /// Builds table `name` of device `k`: the table and each row's group (none for the OOMs).
    fn build_table(&self, k: usize, name: &str) -> Result<Built, String> {
        let snap = &self.snap;
        let d = &self.analysis.devices[k];
        let label = |g: u32| -> Box<str> { group_label(snap, g).into() };
        let groups_table = |gs: &[analysis::FrameGroup]| {
            let file = |g: u32| -> Box<str> {
                snap.frames
                    .get(g)
                    .map_or("", |f| snap.strings.get(f.filename))
                    .into()
            };
            let t = Table::new()
                .with(
                    "frame",
                    "text",
                    Column::Text(gs.iter().map(|g| label(g.frame)).collect()),
                )
                .with(
                    "bytes",
                    "bytes",
                    Column::U64(gs.iter().map(|g| g.bytes).collect()),
                )
                .with(
                    "allocations",
                    "int",
                    Column::U64(gs.iter().map(|g| g.count).collect()),
                )
                .with(
                    "file",
                    "text",
                    Column::Text(gs.iter().map(|g| file(g.frame)).collect()),
                );
            (t, Some(gs.iter().map(|g| g.frame).collect()))
        };
        Ok(match name {
            "peak" => groups_table(&d.live_at_peak),
            "snapshot" => groups_table(&d.live_at_snapshot),
            "allocations" => {
                let es = &d.elements;
                let opt = |v: u32| opt_index(v).map(u64::from);
                let t = Table::new()
                    .with(
                        "address",
                        "hex",
                        Column::U64(es.iter().map(|e| e.addr).collect()),
                    )
                    .with(
                        "size",
                        "bytes",
                        Column::U64(es.iter().map(|e| e.size).collect()),
                    )
                    .with(
                        "alloc entry",
                        "int",
                        Column::OptU64(es.iter().map(|e| opt(e.start)).collect()),
                    )
                    .with(
                        "free entry",
                        "int",
                        Column::OptU64(es.iter().map(|e| opt(e.end)).collect()),
                    )
                    .with(
                        "frame",
                        "text",
                        Column::Text(es.iter().map(|e| label(self.group_of(e.stack))).collect()),
                    );
                (t, Some(es.iter().map(|e| self.group_of(e.stack)).collect()))
            }
            "segments" => {
                let fr = &d.fragmentation;
                let seg = |i: usize| &snap.segments[fr[i].segment as usize];
                let n = fr.len();
                let t = Table::new()
                    .with(
                        "address",
                        "hex",
                        Column::U64((0..n).map(|i| seg(i).address).collect()),
                    )
                    .with(
                        "reserved",
                        "bytes",
                        Column::U64(fr.iter().map(|f| f.reserved).collect()),
                    )
                    .with(
                        "allocated",
                        "bytes",
                        Column::U64(fr.iter().map(|f| f.allocated).collect()),
                    )
                    .with(
                        "free",
                        "bytes",
                        Column::U64(fr.iter().map(|f| f.free).collect()),
                    )
                    .with(
                        "largest free block",
                        "bytes",
                        Column::U64(fr.iter().map(|f| f.largest_free_block).collect()),
                    )
                    .with(
                        "blocks",
                        "int",
                        Column::U64((0..n).map(|i| u64::from(seg(i).block_count)).collect()),
                    )
                    .with(
                        "type",
                        "text",
                        Column::Text((0..n).map(|i| seg(i).segment_type.label().into()).collect()),
                    )
                    .with(
                        "frame",
                        "text",
                        Column::Text((0..n).map(|i| label(self.group_of(seg(i).stack))).collect()),
                    );
                (
                    t,
                    Some((0..n).map(|i| self.group_of(seg(i).stack)).collect()),
                )
            }
            "ooms" => {
                let os = &d.ooms;
                let t = Table::new()
                    .with(
                        "entry",
                        "int",
                        Column::U64(os.iter().map(|o| u64::from(o.index)).collect()),
                    )
                    .with(
                        "requested",
                        "bytes",
                        Column::U64(os.iter().map(|o| o.size).collect()),
                    )
                    .with(
                        "device free",
                        "bytes",
                        Column::OptU64(os.iter().map(|o| o.device_free).collect()),
                    )
                    .with(
                        "time (µs)",
                        "int",
                        Column::OptI64(os.iter().map(|o| o.time_us).collect()),
                    );
                // OOMs belong to no group.
                (t, None)
            }
            other => {
                return Err(format!(
                    "no table {other}: expected peak, snapshot, allocations, segments or ooms"
                ))
            }
        })
    }

    /// Table `name` of device `device` under `query`: the table, each row's group (`None`: the
    /// rows have none) and the view (the matching rows in display order). Built once per
    /// table and ordered once per query; [`Self::table`] and [`Self::position`] both read it, so a
    /// position is always where the pages show the row.
    fn table_view(
        &mut self,
        device: i64,
        name: &str,
        query: &Query,
    ) -> Result<(&Table<'static>, Option<&[u32]>, &TableView), String> {
        let k = self.device(device)?;
        let key = (k, name.to_string());
        if !self.tables.contains_key(&key) {
            let t = self.build_table(k, name)?;
            self.tables.insert(key.clone(), t);
        }
        let qkey = format!("{query:?}");
        if self.views.get(&key).is_none_or(|(q, _)| *q != qkey) {
            let v = self.tables[&key].0.view(query)?;
            self.views.insert(key.clone(), (qkey, v));
        }
        let (table, groups) = &self.tables[&key];
        Ok((table, groups.as_deref(), &self.views[&key].1))
    }

    /// A page of a table, sorted and filtered as asked.
    pub fn table(&mut self, req: &TableRequest) -> Result<TableAnswer<'_>, String> {
        let (table, groups, view) = self.table_view(req.device, &req.table, &req.query)?;
        let page = view.page(table, req.offset, req.limit.min(10_000));
        let row_groups = page
            .ids
            .iter()
            .map(|&i| groups.and_then(|g| g.get(i as usize)).map_or(NONE, |&g| g))
            .collect();
        Ok(TableAnswer {
            specs: table.specs(),
            page,
            groups: row_groups,
        })
    }

    /// Where the selected row or group sits in a table under the query (its index in the order
    /// [`Self::table`] pages through), `None` when the query's filters hide it or, for a group,
    /// when the table holds none of its rows. A row the table does not have, or a group asked of a
    /// table without groups, is an error.
    pub fn position(&mut self, req: &PositionRequest) -> Result<Option<usize>, String> {
        let (table, groups, view) = self.table_view(req.device, &req.table, &req.query)?;
        let name = &req.table;
        match (req.row, req.group) {
            (Some(row), None) if (row as usize) < table.rows() => Ok(view.position(row)),
            (Some(row), None) => Err(format!(
                "no row {row} in table {name} of device {}: it has {} rows",
                req.device,
                table.rows()
            )),
            (None, Some(g)) => {
                let groups = groups.ok_or_else(|| format!("table {name} has no groups"))?;
                Ok(view
                    .ids()
                    .iter()
                    .position(|&r| groups.get(r as usize) == Some(&g)))
            }
            _ => Err("a position asks for a row or a group (one of them)".to_string()),
        }
    }

    /// The export file `name` (see [`crate::export::snapshot::FILES`]).
    pub fn export(&self, name: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        match crate::export::snapshot::write_named(name, &self.snap, &self.analysis, &mut out) {
            Some(Ok(())) => Ok(out),
            Some(Err(e)) => Err(format!("{name}: {e}")),
            None => Err(format!(
                "no export {name}: expected one of {}",
                crate::export::snapshot::FILES.join(", ")
            )),
        }
    }

    /// Ids of segment bars in [`ViewRequest`] answers of the state view have this bit set.
    pub const SEGMENT_ID: u32 = SEGMENT_ID;
}
