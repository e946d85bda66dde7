//! What the views of a front end ask of a torch_npu / MindSpore profiler job, and the answers:
//! one [`JobView`] per loaded job, the requests as the serde type [`Request`] (named fields,
//! JSON `{"method": …, "params": {…}}`) answered by [`JobView::answer`], and the answers drawn at
//! every frame (curves, timeline bars) as [`crate::bulk::Bulk`] types.
//!
//! Times cross as nanoseconds *relative to the rank's capture start* (JavaScript numbers are exact
//! below 2^53 ns, 104 days): absolute torch_npu times have 19 digits and would lose precision.
//! Absolute origins cross as decimal strings.
//!
//! - [`report`]: the `--json` document with the job's totals;
//! - [`allocations`]: the allocation table (named columns over [`crate::table`]);
//! - [`layout`]: the allocation timeline's layout.

pub mod allocations;
pub mod layout;
pub mod report;
pub mod subset;

pub use layout::{lifetime_layout, LifetimeLayout};
pub use report::{job_report, job_totals, JobReport, JobTotals, Verdict};
pub use subset::RankPart;

use super::analysis::{
    analyze_job, try_analyze_job, AnalyzeOptions, JobAnalysis, RankAnalysis, NO_OP,
};
use super::attribution::{frames, is_library_frame};
use super::discover::{job_of, Job};
use super::memory_record::Metric;
use super::plan::{job_plan, PlannedFile};
use super::queries::curve_window;
use super::summary::rank_summaries;
use crate::bulk::{f64s, flags, Bulk, Field};
use crate::chart::{Lod, Viewport};
use crate::export::profiler as exp;
use crate::input::{FileOpener, InputSet};
use crate::source::Stopped;
use crate::table::TableView;
use allocations::{abs_ns, allocation_table, AllocationQuery};
use serde::{Deserialize, Serialize};

/// A question of the torch_npu views about a loaded job. Every variant has named fields (none for
/// some), so a request always carries a `params` object.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "method", content = "params", rename_all = "camelCase")]
pub enum Request {
    /// The files the analysis reads, in reading order ([`PlannedFile`]s).
    Plan {},
    /// The job summary: the document `memlens profiler --json` prints ([`JobReport`]).
    Report {},
    /// Per-rank facts for the views ([`RankInfo`]s).
    Ranks {},
    /// Each rank's compact summary, as a job summary file holds it
    /// ([`crate::profiler::summary::RankSummary`]s): what a job summary opened beside these run
    /// folders takes in their place.
    RankSummaries {},
    /// Extent of a rank's allocation timeline ([`TimelineInfo`]).
    TimelineInfo {
        /// Rank index.
        rank: usize,
    },
    /// The row whose bar is under a data point (relative ns, bytes), or -1.
    Hit {
        /// Rank index.
        rank: usize,
        /// Time.
        x: f64,
        /// Offset.
        y: f64,
    },
    /// A row's bar as `[x0, x1, y0, y1]` (relative ns, bytes), or `null` when it is not drawn.
    Rect {
        /// Rank index.
        rank: usize,
        /// Row.
        row: u32,
    },
    /// One page of the allocation table ([`crate::table::Page`]: cells by column name).
    Table {
        /// Rank index.
        rank: usize,
        /// What to show.
        #[serde(default)]
        query: AllocationQuery,
        /// First row of the page.
        offset: usize,
        /// Rows.
        limit: usize,
    },
    /// Where a row sits in the table view of a query, or -1.
    Position {
        /// Rank index.
        rank: usize,
        /// What to show.
        #[serde(default)]
        query: AllocationQuery,
        /// Row.
        row: u32,
    },
    /// Everything about one row ([`RowDetail`]).
    Row {
        /// Rank index.
        rank: usize,
        /// Row.
        row: u32,
    },
    /// PTA allocations alive at a time, grouped by top user frame, with the bytes no row
    /// explains as one more group; at the peak time this is the summary's `live_at_peak`.
    LiveAt {
        /// Rank index.
        rank: usize,
        /// Time.
        t: f64,
        /// How to group ([`crate::profiler::analysis::GROUP_BY_SIZE_CLASS`], …); the rank's own
        /// `group_by` when absent.
        #[serde(default)]
        by: Option<String>,
    },
    /// Allocations of a window not released by its end, grouped by top user frame.
    Unreleased {
        /// Rank index.
        rank: usize,
        /// Window start.
        #[serde(default)]
        start: Option<f64>,
        /// Window end.
        #[serde(default)]
        end: Option<f64>,
        /// How to group, as in [`Request::LiveAt`].
        #[serde(default)]
        by: Option<String>,
    },
}

/// Per-rank facts the views need beyond the summary.
#[derive(Debug, Clone, Serialize)]
pub struct RankInfo {
    /// Index in the job.
    pub index: usize,
    /// Absolute capture start (ns) as a decimal string.
    pub origin_ns: String,
    /// Capture end, relative (ns).
    pub end: f64,
    /// First allocation row or framework-allocator record, relative (ns): where the views open
    /// (the capture often starts with process-level records long before the first allocation).
    pub active_start: f64,
    /// Allocated peak time, relative (ns).
    pub peak: Option<f64>,
    /// memory_record components with the metrics they have and their largest value.
    pub components: Vec<ComponentInfo>,
    /// Step spans, relative (ns).
    pub steps: Vec<StepInfo>,
    /// The memory records set aside on their own time range (they do not overlap the
    /// allocations), or null. Curves of them are asked for as `aside:component:metric`.
    pub records_aside: Option<AsideInfo>,
}

/// Memory records of a rank kept on their own time range ([`super::analysis::RecordsAside`]), for a chart of
/// their own: times relative to their first record.
#[derive(Debug, Clone, Serialize)]
pub struct AsideInfo {
    /// The file they came from.
    pub file: String,
    /// Absolute time of their first record (ns) as a decimal string: their origin.
    pub origin_ns: String,
    /// Their last record, relative (ns).
    pub end: f64,
    /// Their framework-allocator allocated peak, relative (ns), when they have one.
    pub peak: Option<f64>,
    /// Its bytes.
    pub peak_bytes: f64,
    /// Their components, as [`RankInfo::components`].
    pub components: Vec<ComponentInfo>,
}

/// A memory_record component.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentInfo {
    /// Its name (`PTA`, `GE`, `APP`, …).
    pub component: String,
    /// `[metric, max bytes]` for each metric with values.
    pub metrics: Vec<(Metric, f64)>,
    /// Points of the series.
    pub points: usize,
}

/// A step span.
#[derive(Debug, Clone, Serialize)]
pub struct StepInfo {
    /// `ProfilerStep#N`'s N.
    pub step: u64,
    /// Start, relative (ns).
    pub start: f64,
    /// End, relative (ns).
    pub end: f64,
}

/// Extent of a rank's allocation timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineInfo {
    /// Highest offset used (bytes).
    pub height: f64,
    /// Where unreleased bars end (relative ns).
    pub end: f64,
    /// Bars drawn.
    pub count: usize,
}

/// An op of the trace a row was joined to.
#[derive(Debug, Clone, Serialize)]
pub struct OpInfo<'a> {
    /// Op name.
    pub name: &'a str,
    /// Thread id (decimal text).
    pub tid: String,
    /// Start, relative (ns).
    pub start: f64,
    /// Duration (ns).
    pub dur: f64,
    /// Sequence number (-1 when none).
    pub seq: i64,
}

/// One frame of a call stack.
#[derive(Debug, Clone, Serialize)]
pub struct FrameInfo<'a> {
    /// The frame's text.
    pub text: &'a str,
    /// Not a library frame.
    pub user: bool,
    /// The row's top user frame.
    pub top: bool,
}

/// Everything about one allocation row (times relative ns).
#[derive(Debug, Clone, Serialize)]
pub struct RowDetail<'a> {
    /// The row.
    pub row: u32,
    /// Op name.
    pub name: &'a str,
    /// `PTA` or `GE`.
    pub source: &'static str,
    /// Size (bytes).
    pub size: f64,
    /// A legacy negative row (a release).
    pub negative: bool,
    /// Allocation time.
    pub alloc: Option<f64>,
    /// Release time.
    pub release: Option<f64>,
    /// Release of the active block.
    pub active_release: Option<f64>,
    /// Duration (ns).
    pub duration: Option<f64>,
    /// Active duration (ns).
    pub active_duration: Option<f64>,
    /// Allocator total allocated at the allocation.
    pub total_allocated: Option<f64>,
    /// … reserved.
    pub total_reserved: Option<f64>,
    /// … active.
    pub total_active: Option<f64>,
    /// Stream.
    pub stream: &'a str,
    /// Device.
    pub device: &'a str,
    /// Step containing the allocation.
    pub step: Option<u64>,
    /// The run folder the row came from.
    pub run_dir: Option<&'a String>,
    /// Line in operator_memory.csv, or the row's rowid in `OP_MEMORY` for a db run.
    pub line: u64,
    /// What the row's run folder was read from: `text` or `db`.
    pub run_source: &'static str,
    /// How the call stack was found.
    pub stack_source: &'static str,
    /// The first frame in user code.
    pub top_frame: &'a str,
    /// The innermost frame.
    pub innermost_frame: &'a str,
    /// Every frame, innermost first.
    pub frames: Vec<FrameInfo<'a>>,
    /// The op containing the allocation.
    pub op: Option<OpInfo<'a>>,
    /// The op whose stack is used.
    pub stack_op: Option<OpInfo<'a>>,
}

/// One curve of a rank over a window, reduced to pixel columns (exact min and max per column,
/// so peaks are never lost to sampling).
#[derive(Debug, Clone, PartialEq)]
pub struct CurveAnswer {
    /// Component.
    pub component: String,
    /// Metric (`allocated`, `reserved`, `active`).
    pub metric: String,
    /// Least per column.
    pub min: Vec<f64>,
    /// Most per column.
    pub max: Vec<f64>,
    /// First value per column.
    pub first: Vec<f64>,
    /// Last value per column.
    pub last: Vec<f64>,
    /// Columns holding a point.
    pub defined: Vec<u8>,
}

impl Bulk for CurveAnswer {
    fn fields(&self) -> Vec<(&'static str, Field<'_>)> {
        vec![
            ("component", Field::Text(&self.component)),
            ("metric", Field::Text(&self.metric)),
            ("min", Field::F64(&self.min)),
            ("max", Field::F64(&self.max)),
            ("first", Field::F64(&self.first)),
            ("last", Field::F64(&self.last)),
            ("defined", Field::U8(&self.defined)),
        ]
    }
}

/// A job loaded from an input set, analysed, and the state its views keep between questions
/// (timeline layouts, the last table query's rows).
#[derive(Default)]
pub struct JobView {
    job: Job,
    plan: Vec<PlannedFile>,
    analysis: JobAnalysis,
    origins: Vec<i64>,
    layouts: Vec<Option<LifetimeLayout>>,
    /// The last table query's matching rows, so scrolling pages through them without refiltering.
    table_cache: Option<(usize, AllocationQuery, TableView)>,
}

fn rel(origin: i64, t: i64) -> f64 {
    t.saturating_sub(origin) as f64
}

fn json_text(v: &impl Serialize) -> Result<String, String> {
    serde_json::to_string(v).map_err(|e| e.to_string())
}

impl JobView {
    /// Groups the run folders of `set` (classified once) into ranks and plans their reading.
    pub fn open(set: &mut InputSet) -> JobView {
        let job = job_of(set);
        let plan = job_plan(&job, set);
        JobView {
            job,
            plan,
            ..JobView::default()
        }
    }

    /// The files the analysis reads, in reading order.
    pub fn plan(&self) -> &[PlannedFile] {
        &self.plan
    }

    /// Reads and analyses every rank through `files`.
    pub fn analyze(&mut self, files: &dyn FileOpener) {
        let analysis = analyze_job(files, &self.job, &AnalyzeOptions::default(), &mut |_| {});
        self.take(analysis);
    }

    /// [`JobView::analyze`] for a load that may be stopped ([`FileOpener::stopped`]): ends with
    /// [`Stopped`] and keeps nothing of the stopped load (see [`try_analyze_job`]).
    pub fn try_analyze(&mut self, files: &dyn FileOpener) -> Result<(), Stopped> {
        self.take(JobAnalysis::default());
        let analysis = try_analyze_job(files, &self.job, &AnalyzeOptions::default(), &mut |_| {})?;
        self.take(analysis);
        Ok(())
    }

    /// Makes `analysis` the one the views answer from.
    fn take(&mut self, analysis: JobAnalysis) {
        self.analysis = analysis;
        self.origins = self
            .analysis
            .ranks
            .iter()
            .map(RankAnalysis::capture_start_ns)
            .collect();
        self.layouts = vec![None; self.analysis.ranks.len()];
        self.table_cache = None;
    }

    /// The analysis (after [`JobView::analyze`]).
    pub fn analysis(&self) -> &JobAnalysis {
        &self.analysis
    }

    /// Answers `request` with JSON text.
    pub fn answer(&mut self, request: &Request) -> Result<String, String> {
        match request {
            Request::Plan {} => json_text(&self.plan),
            Request::Report {} => json_text(&job_report(&self.analysis, &self.job)),
            Request::Ranks {} => json_text(&self.ranks()),
            Request::RankSummaries {} => json_text(&rank_summaries(&self.analysis)),
            Request::TimelineInfo { rank } => {
                let l = self.layout(*rank)?;
                json_text(&TimelineInfo {
                    height: l.height as f64,
                    end: l.end as f64,
                    count: l.rects.len(),
                })
            }
            Request::Hit { rank, x, y } => {
                let l = self.layout(*rank)?;
                Ok(l.rects.hit(*x, *y).map_or(-1, |i| i as i64).to_string())
            }
            Request::Rect { rank, row } => json_text(&self.rect(*rank, *row)?),
            Request::Table {
                rank,
                query,
                offset,
                limit,
            } => {
                self.cached_view(*rank, query)?;
                let origin = self.origin(*rank);
                let r = self.rank(*rank)?;
                let table = allocation_table(r, origin);
                let view = self.table_cache.as_ref().map(|c| &c.2);
                let view = view.ok_or("no table view")?;
                json_text(&view.page(&table, *offset, (*limit).clamp(1, 10_000)))
            }
            Request::Position { rank, query, row } => {
                let view = self.cached_view(*rank, query)?;
                Ok(view.position(*row).map_or(-1, |p| p as i64).to_string())
            }
            Request::Row { rank, row } => json_text(&self.row(*rank, *row)?),
            Request::LiveAt { rank, t, by } => {
                let r = self.rank(*rank)?;
                let by = by.as_deref().unwrap_or(r.summary.group_by);
                let at = abs_ns(self.origin(*rank), *t);
                if r.summary.peak_source != "none"
                    && at == r.summary.peak_time_ns
                    && by == r.summary.group_by
                {
                    return json_text(&r.summary.live_at_peak);
                }
                let total = r
                    .framework()
                    .and_then(|s| s.value_at(Metric::Allocated, at));
                json_text(&r.live_groups_by(at, total, by))
            }
            Request::Unreleased {
                rank,
                start,
                end,
                by,
            } => {
                let origin = self.origin(*rank);
                let r = self.rank(*rank)?;
                json_text(&r.unreleased_groups_by(
                    start.map(|s| abs_ns(origin, s)),
                    end.map(|e| abs_ns(origin, e)),
                    by.as_deref().unwrap_or(r.summary.group_by),
                ))
            }
        }
    }

    /// Per-rank facts for the views: origin, end, peak time, components, steps.
    pub fn ranks(&self) -> Vec<RankInfo> {
        self.analysis
            .ranks
            .iter()
            .enumerate()
            .map(|(index, r)| {
                let origin = self.origin(index);
                let s = &r.summary;
                RankInfo {
                    index,
                    origin_ns: origin.to_string(),
                    end: rel(origin, r.capture_end_ns.max(origin)),
                    active_start: r
                        .rows
                        .iter()
                        .filter_map(|m| m.time_ns())
                        .chain(r.framework().and_then(|f| f.ts.first().copied()))
                        .min()
                        .map_or(0.0, |t| rel(origin, t)),
                    peak: (s.peak_source != "none").then(|| rel(origin, s.peak_time_ns)),
                    components: component_infos(&r.memory),
                    steps: r
                        .steps
                        .iter()
                        .map(|st| StepInfo {
                            step: st.step,
                            start: rel(origin, st.ts),
                            end: rel(origin, st.end),
                        })
                        .collect(),
                    records_aside: s.records_aside.as_ref().map(|x| AsideInfo {
                        file: x.file.clone(),
                        origin_ns: x.start_ns.to_string(),
                        end: rel(x.start_ns, x.end_ns),
                        peak: (x.peak_allocated_bytes > 0).then(|| rel(x.start_ns, x.peak_time_ns)),
                        peak_bytes: x.peak_allocated_bytes as f64,
                        components: component_infos(&r.memory_aside),
                    }),
                }
            })
            .collect()
    }

    /// Curves of rank `rank` over `[x0, x1)` (relative ns) reduced to `columns` pixel columns.
    /// `spec` lists `component:metric` pairs, comma-separated (`PTA:allocated,GE:reserved`);
    /// `aside:component:metric` is a curve of the records set aside, its times relative to their
    /// own first record ([`RankInfo::records_aside`]).
    pub fn curves(
        &self,
        rank: usize,
        x0: f64,
        x1: f64,
        columns: u32,
        spec: &str,
    ) -> Result<Vec<CurveAnswer>, String> {
        let r = self.rank(rank)?;
        let origin = self.origin(rank);
        let (a, b) = (abs_ns(origin, x0), abs_ns(origin, x1));
        spec.split(',')
            .filter(|s| !s.is_empty())
            .map(|item| {
                let (component, metric) = item
                    .rsplit_once(':')
                    .ok_or_else(|| format!("bad curve {item:?}: expected component:metric"))?;
                let m: Metric = serde_json::from_value(serde_json::Value::from(metric))
                    .map_err(|e| e.to_string())?;
                let columns = columns.min(16_384) as usize;
                let env = match (component.strip_prefix("aside:"), &r.summary.records_aside) {
                    (Some(c), Some(x)) => {
                        let (a, b) = (abs_ns(x.start_ns, x0), abs_ns(x.start_ns, x1));
                        curve_window(&r.memory_aside, c, m, a, b, columns)
                    }
                    (Some(_), None) => return Err(format!("rank {rank} has no records aside")),
                    _ => curve_window(&r.memory, component, m, a, b, columns),
                };
                Ok(CurveAnswer {
                    component: component.to_string(),
                    metric: metric.to_string(),
                    min: f64s(&env.min),
                    max: f64s(&env.max),
                    first: f64s(&env.first),
                    last: f64s(&env.last),
                    defined: flags(&env.defined),
                })
            })
            .collect()
    }

    /// The allocation bars of rank `rank` the viewport (relative ns × bytes) shows on a
    /// `px_w × px_h` canvas, at most `max_rects` one by one: the chart's own level of detail, so
    /// the timeline crosses to the page in the same fields as every other drawn rectangle set
    /// (classes: released PTA, released GE, unreleased; ids: rows).
    pub fn timeline(
        &mut self,
        rank: usize,
        viewport: &Viewport,
        px_w: u32,
        px_h: u32,
        max_rects: usize,
    ) -> Result<Lod, String> {
        let l = self.layout(rank)?;
        Ok(l.rects
            .visible(viewport, px_w.min(16_384), px_h.min(16_384), max_rects))
    }

    /// An export of the whole job, byte for byte what `memlens profiler --out` writes:
    /// `memory_events.csv`, `rank_summary.csv`, `peak_attribution.csv`, `step_peaks.csv` or
    /// `records_aside.csv`; or
    /// `summary.json`, what `memlens profiler --json` prints.
    pub fn export(&self, name: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let a = &self.analysis;
        match name {
            "memory_events.csv" => exp::write_memory_events(a, &mut out),
            "rank_summary.csv" => exp::write_rank_summary(a, &mut out),
            "peak_attribution.csv" => exp::write_peak_attribution(a, &mut out),
            "step_peaks.csv" => exp::write_step_peaks(a, &mut out),
            "records_aside.csv" => exp::write_records_aside(a, &mut out),
            "summary.json" => {
                return exp::report_json(a, &self.job)
                    .map(String::into_bytes)
                    .map_err(|e| e.to_string())
            }
            other => return Err(format!("no export named {other:?}")),
        }
        .map_err(|e| e.to_string())?;
        Ok(out)
    }

    fn origin(&self, rank: usize) -> i64 {
        self.origins.get(rank).copied().unwrap_or(0)
    }

    fn rank(&self, rank: usize) -> Result<&RankAnalysis, String> {
        self.analysis
            .ranks
            .get(rank)
            .ok_or_else(|| format!("no rank {rank} in this job"))
    }

    fn layout(&mut self, rank: usize) -> Result<&LifetimeLayout, String> {
        let origin = self.origin(rank);
        let r = self
            .analysis
            .ranks
            .get(rank)
            .ok_or_else(|| format!("no rank {rank} in this job"))?;
        let slot = self
            .layouts
            .get_mut(rank)
            .ok_or_else(|| format!("no rank {rank} in this job"))?;
        Ok(slot.get_or_insert_with(|| lifetime_layout(r, origin)))
    }

    /// The bar of row `row` as `[x0, x1, y0, y1]` (relative ns, bytes), `None` when not drawn.
    fn rect(&mut self, rank: usize, row: u32) -> Result<Option<[f64; 4]>, String> {
        let origin = self.origin(rank);
        let Some(Some(offset)) = self.layout(rank)?.offsets.get(row as usize).copied() else {
            return Ok(None);
        };
        let r = self.rank(rank)?;
        let Some(m) = r.rows.get(row as usize) else {
            return Ok(None);
        };
        let a = m.alloc_ns().unwrap_or(origin);
        let b = m.release_ns().unwrap_or(r.capture_end_ns).max(a);
        Ok(Some([
            rel(origin, a),
            rel(origin, b),
            offset as f64,
            offset.saturating_add(m.size) as f64,
        ]))
    }

    fn row(&self, rank: usize, row: u32) -> Result<RowDetail<'_>, String> {
        let r = self.rank(rank)?;
        let i = row as usize;
        let m = r
            .rows
            .get(i)
            .ok_or_else(|| format!("rank {rank} has no row {row}"))?;
        let origin = self.origin(rank);
        let t = |v: Option<i64>| v.map(|t| rel(origin, t));
        let b = |v: Option<u64>| v.map(|x| x as f64);
        let (op, stack_op) = r.row_ops.get(i).copied().unwrap_or((NO_OP, NO_OP));
        let op_info = |k: u32| {
            r.joined_ops.get(k as usize).map(|o| OpInfo {
                name: r.names.get(o.name),
                tid: o.tid.to_string(),
                start: rel(origin, o.ts),
                dur: o.dur as f64,
                seq: o.seq,
            })
        };
        let top = r.top_frame(i);
        Ok(RowDetail {
            row,
            name: r.name(i),
            source: m.source.label(),
            size: m.size as f64,
            negative: m.negative,
            alloc: t(m.alloc_ns()),
            release: t(m.release_ns()),
            active_release: t(m.active_release_ns()),
            duration: m.duration_ns().map(|d| d as f64),
            active_duration: m.active_duration_ns().map(|d| d as f64),
            total_allocated: b(m.alloc_total_allocated()),
            total_reserved: b(m.alloc_total_reserved()),
            total_active: b(m.alloc_total_active()),
            stream: r.names.get(m.stream),
            device: r.names.get(m.device),
            step: r.row_step.get(i).copied().flatten(),
            run_dir: r
                .row_run
                .get(i)
                .and_then(|&k| r.summary.run_dirs.get(k as usize)),
            line: m.line,
            run_source: crate::profiler::run::source_name(
                r.row_run
                    .get(i)
                    .and_then(|&k| r.run_dbs.get(k as usize))
                    .and_then(Option::as_ref),
            ),
            stack_source: r.attribution.get(i).map_or("none", |a| a.source.label()),
            top_frame: top,
            innermost_frame: r.innermost_frame(i),
            frames: frames(r.stack(i))
                .map(|f| FrameInfo {
                    text: f,
                    user: !is_library_frame(f),
                    top: f == top,
                })
                .collect(),
            op: op_info(op),
            stack_op: op_info(stack_op),
        })
    }

    /// The rows of `query` on rank `rank`, from the cache when it is the last query asked.
    fn cached_view(&mut self, rank: usize, query: &AllocationQuery) -> Result<&TableView, String> {
        let hit = matches!(&self.table_cache, Some((k, q, _)) if *k == rank && q == query);
        if !hit {
            let view = {
                let origin = self.origin(rank);
                let r = self.rank(rank)?;
                let table = allocation_table(r, origin);
                allocations::select(r, &table, origin, query)?
            };
            self.table_cache = Some((rank, query.clone(), view));
        }
        self.table_cache
            .as_ref()
            .map(|(_, _, v)| v)
            .ok_or_else(|| "no table view".to_string())
    }
}

/// [`ComponentInfo`]s of series.
fn component_infos(memory: &[crate::profiler::memory_record::Series]) -> Vec<ComponentInfo> {
    memory
        .iter()
        .map(|m| ComponentInfo {
            component: m.component.clone(),
            metrics: [Metric::Allocated, Metric::Reserved, Metric::Active]
                .into_iter()
                .filter_map(|k| m.peak(k).map(|p| (k, p.bytes as f64)))
                .collect(),
            points: m.ts.len(),
        })
        .collect()
}
