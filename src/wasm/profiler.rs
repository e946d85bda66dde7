//! torch_npu memory for the page: a job loaded from the files of a drop (archives included), then
//! the questions the views ask — all answered by the core's functions, this file only converts.
//!
//! Times cross the boundary as nanoseconds *relative to the rank's capture start* in an `f64`
//! (exact below 2^53 ns, 104 days): absolute torch_npu times have 19 digits and would lose
//! precision as JavaScript numbers. Absolute origins cross as decimal strings. Bulk numbers
//! (curves, rectangles) are typed arrays; everything else is JSON text.

use super::session::Session;
use crate::chart::Viewport;
use crate::export::profiler as exp;
use crate::input::CountingOpener;
use crate::profiler::analysis::{
    analyze_job, AnalyzeOptions, JobAnalysis, RankAnalysis, SortKey, TableQuery, NO_OP,
};
use crate::profiler::attribution::{frames, is_library_frame};
use crate::profiler::memory_record::Metric;
use crate::profiler::plan::{job_plan, PlannedFile};
use crate::profiler::view::{job_report, lifetime_layout, LifetimeLayout};
use crate::profiler::{job_of, Job};
use js_sys::{
    Array, Float32Array, Float64Array, Function, Object, Reflect, Uint32Array, Uint8Array,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use wasm_bindgen::prelude::*;

/// Per-rank facts the views need beyond the summary.
#[derive(Serialize)]
struct RankInfo {
    index: usize,
    /// Absolute capture start (ns) as a decimal string.
    origin_ns: String,
    /// Capture end, relative (ns).
    end: f64,
    /// First allocation row or framework-allocator record, relative (ns): where the views open
    /// (the capture often starts with process-level records long before the first allocation).
    active_start: f64,
    /// Allocated peak time, relative (ns).
    peak: Option<f64>,
    /// memory_record components with the metrics they have and their largest value.
    components: Vec<ComponentInfo>,
    /// Step spans, relative (ns).
    steps: Vec<StepInfo>,
}

#[derive(Serialize)]
struct ComponentInfo {
    component: String,
    /// `[metric, max bytes]` for each metric with values.
    metrics: Vec<(Metric, f64)>,
    points: usize,
}

#[derive(Serialize)]
struct StepInfo {
    step: u64,
    start: f64,
    end: f64,
}

/// A page request from the allocation table. Times are relative ns; the rest maps onto the
/// core's [`TableQuery`].
#[derive(Deserialize, Default, PartialEq, Clone)]
#[serde(default)]
struct PageQuery {
    name: Option<String>,
    stack: Option<String>,
    min_size: Option<f64>,
    max_size: Option<f64>,
    start: Option<f64>,
    end: Option<f64>,
    live_at: Option<f64>,
    unreleased: bool,
    frame: Option<String>,
    sort: SortKey,
    descending: bool,
}

/// Relative ns (a JavaScript number) → absolute ns.
fn abs_ns(origin: i64, rel: f64) -> i64 {
    // `as` saturates for out-of-range floats and maps NaN to 0.
    origin.saturating_add(rel.round() as i64)
}

fn rel(origin: i64, t: i64) -> f64 {
    t.saturating_sub(origin) as f64
}

fn err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

fn to_json(v: &impl Serialize) -> Result<String, JsError> {
    serde_json::to_string(v).map_err(err)
}

fn set(obj: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(obj, &JsValue::from_str(key), value);
}

/// A torch_npu job loaded from a drop: construct, read [`ProfilerView::plan`], [`ProfilerView::analyze`],
/// then ask.
#[wasm_bindgen]
pub struct ProfilerView {
    job: Job,
    plan: Vec<PlannedFile>,
    analysis: JobAnalysis,
    origins: Vec<i64>,
    layouts: Vec<Option<LifetimeLayout>>,
    /// The last table query's matching rows, so scrolling pages through them without refiltering.
    table_cache: Option<(usize, PageQuery, Vec<u32>)>,
}

#[wasm_bindgen]
impl ProfilerView {
    /// Groups the run folders of `session` (classified when the files were dropped) into ranks.
    #[wasm_bindgen(constructor)]
    pub fn new(session: &mut Session) -> ProfilerView {
        let job = job_of(session.set_mut());
        let plan = job_plan(&job, session.set());
        ProfilerView {
            job,
            plan,
            analysis: JobAnalysis::default(),
            origins: Vec::new(),
            layouts: Vec::new(),
            table_cache: None,
        }
    }

    /// The files the analysis reads, in reading order: `[{path, bytes, reader}]`.
    pub fn plan(&self) -> Result<String, JsError> {
        to_json(&self.plan)
    }

    /// Reads and analyses every rank (`progress(path, done, total)` per chunk read).
    pub fn analyze(&mut self, session: &Session, progress: &Function) {
        let report = |path: &str, done: u64, total: u64| {
            let _ = progress.call3(
                &JsValue::NULL,
                &JsValue::from_str(path),
                &JsValue::from_f64(done as f64),
                &JsValue::from_f64(total as f64),
            );
        };
        let opener = CountingOpener::new(session.set(), &report);
        self.analysis = analyze_job(&opener, &self.job, &AnalyzeOptions::default(), &mut |_| {});
        self.origins = self
            .analysis
            .ranks
            .iter()
            .map(RankAnalysis::capture_start_ns)
            .collect();
        self.layouts = vec![None; self.analysis.ranks.len()];
        self.table_cache = None;
    }

    /// The job summary: the document `memlens profiler --json` prints for the same files.
    pub fn report(&self) -> Result<String, JsError> {
        to_json(&job_report(&self.analysis, &self.job))
    }

    /// Per-rank facts for the views: origin, end, peak time, components, steps.
    pub fn ranks(&self) -> Result<String, JsError> {
        let infos: Vec<RankInfo> = self
            .analysis
            .ranks
            .iter()
            .enumerate()
            .map(|(index, r)| {
                let origin = self.origins.get(index).copied().unwrap_or(0);
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
                    components: r
                        .memory
                        .iter()
                        .map(|m| ComponentInfo {
                            component: m.component.clone(),
                            metrics: [Metric::Allocated, Metric::Reserved, Metric::Active]
                                .into_iter()
                                .filter_map(|k| m.peak(k).map(|p| (k, p.bytes as f64)))
                                .collect(),
                            points: m.ts.len(),
                        })
                        .collect(),
                    steps: r
                        .steps
                        .iter()
                        .map(|st| StepInfo {
                            step: st.step,
                            start: rel(origin, st.ts),
                            end: rel(origin, st.end),
                        })
                        .collect(),
                }
            })
            .collect();
        to_json(&infos)
    }

    /// Curves of rank `rank` over `[x0, x1)` (relative ns) reduced to `columns` pixel columns.
    /// `spec` lists `component:metric` pairs, comma-separated (`PTA:allocated,GE:reserved`).
    /// Returns `[{component, metric, min, max, first, last (Float64Array), defined (Uint8Array)}]`;
    /// min and max are exact per column, so peaks are never lost to sampling.
    pub fn curves(
        &self,
        rank: usize,
        x0: f64,
        x1: f64,
        columns: u32,
        spec: &str,
    ) -> Result<Array, JsError> {
        let r = self.rank(rank)?;
        let origin = self.origins.get(rank).copied().unwrap_or(0);
        let (a, b) = (abs_ns(origin, x0), abs_ns(origin, x1));
        let out = Array::new();
        for item in spec.split(',').filter(|s| !s.is_empty()) {
            let (component, metric) = item
                .rsplit_once(':')
                .ok_or_else(|| err(format!("bad curve {item:?}: expected component:metric")))?;
            let m: Metric = serde_json::from_value(json!(metric)).map_err(err)?;
            let env = r.curve_window(component, m, a, b, columns.min(16_384) as usize);
            let f64s = |v: &[u64]| {
                let v: Vec<f64> = v.iter().map(|&x| x as f64).collect();
                Float64Array::from(&v[..])
            };
            let obj = Object::new();
            set(&obj, "component", &JsValue::from_str(component));
            set(&obj, "metric", &JsValue::from_str(metric));
            set(&obj, "min", &f64s(&env.min));
            set(&obj, "max", &f64s(&env.max));
            set(&obj, "first", &f64s(&env.first));
            set(&obj, "last", &f64s(&env.last));
            let defined: Vec<u8> = env.defined.iter().map(|&d| u8::from(d)).collect();
            set(&obj, "defined", &Uint8Array::from(&defined[..]));
            out.push(&obj);
        }
        Ok(out)
    }

    /// Extent of rank `rank`'s allocation timeline: `{height, end, count}` (bytes, relative ns,
    /// allocations drawn). Lays it out on first use.
    #[wasm_bindgen(js_name = timelineInfo)]
    pub fn timeline_info(&mut self, rank: usize) -> Result<String, JsError> {
        let l = self.layout(rank)?;
        to_json(&json!({
            "height": l.height as f64,
            "end": l.end as f64,
            "count": l.rects.len(),
        }))
    }

    /// The allocation bars the viewport `[x0, x1) × [y0, y1)` (relative ns × bytes) shows on a
    /// `px_w × px_h` canvas: `{x, y, w, h (Float32Array, pixels), class (Uint8Array), id
    /// (Uint32Array, row or 0xFFFFFFFF for merged sub-pixel runs), visible, individual, merged}`.
    #[allow(clippy::too_many_arguments)]
    pub fn timeline(
        &mut self,
        rank: usize,
        x0: f64,
        x1: f64,
        y0: f64,
        y1: f64,
        px_w: u32,
        px_h: u32,
        max_rects: u32,
    ) -> Result<Object, JsError> {
        let l = self.layout(rank)?;
        let lod = l.rects.visible(
            &Viewport { x0, x1, y0, y1 },
            px_w.min(16_384),
            px_h.min(16_384),
            max_rects as usize,
        );
        let obj = Object::new();
        set(&obj, "x", &Float32Array::from(&lod.x[..]));
        set(&obj, "y", &Float32Array::from(&lod.y[..]));
        set(&obj, "w", &Float32Array::from(&lod.w[..]));
        set(&obj, "h", &Float32Array::from(&lod.h[..]));
        set(&obj, "class", &Uint8Array::from(&lod.class[..]));
        set(&obj, "id", &Uint32Array::from(&lod.id[..]));
        set(&obj, "visible", &JsValue::from_f64(lod.visible as f64));
        set(
            &obj,
            "individual",
            &JsValue::from_f64(lod.individual as f64),
        );
        set(&obj, "merged", &JsValue::from_f64(lod.merged as f64));
        Ok(obj)
    }

    /// The row whose bar is under the data point `(x, y)` (relative ns, bytes), or -1.
    #[wasm_bindgen(js_name = timelineHit)]
    pub fn timeline_hit(&mut self, rank: usize, x: f64, y: f64) -> Result<i32, JsError> {
        let l = self.layout(rank)?;
        Ok(l.rects.hit(x, y).map_or(-1, |i| i as i32))
    }

    /// The bar of row `row` as `[x0, x1, y0, y1]` (relative ns, bytes), or `undefined` when the
    /// row is not drawn.
    #[wasm_bindgen(js_name = timelineRect)]
    pub fn timeline_rect(&mut self, rank: usize, row: u32) -> Result<Option<Vec<f64>>, JsError> {
        let origin = self.origins.get(rank).copied().unwrap_or(0);
        let end = self.rank(rank)?.capture_end_ns;
        let (offset, r) = {
            let l = self.layout(rank)?;
            let Some(Some(o)) = l.offsets.get(row as usize).copied() else {
                return Ok(None);
            };
            (o, row as usize)
        };
        let Some(m) = self.rank(rank)?.rows.get(r) else {
            return Ok(None);
        };
        let a = m.alloc_ns.unwrap_or(origin);
        let b = m.release_ns.unwrap_or(end).max(a);
        Ok(Some(vec![
            rel(origin, a),
            rel(origin, b),
            offset as f64,
            offset.saturating_add(m.size) as f64,
        ]))
    }

    /// One page of the allocation table of rank `rank` for `query` (JSON [`PageQuery`]):
    /// `{total, offset, ids, rows}`; each row is `[name, size, start, duration, release,
    /// total_allocated, total_reserved, total_active, stream, device, source, stack_source,
    /// top_frame, step, unreleased]` with times in relative ns and `null` for empty fields.
    #[wasm_bindgen(js_name = tablePage)]
    pub fn table_page(
        &mut self,
        rank: usize,
        query: &str,
        offset: u32,
        limit: u32,
    ) -> Result<String, JsError> {
        let ids = self.table_ids(rank, query)?;
        let total = ids.len();
        let page: Vec<u32> = ids
            .iter()
            .skip(offset as usize)
            .take(limit.clamp(1, 10_000) as usize)
            .copied()
            .collect();
        let r = self.rank(rank)?;
        let origin = self.origins.get(rank).copied().unwrap_or(0);
        let rows: Vec<serde_json::Value> = page
            .iter()
            .map(|&i| {
                let i = i as usize;
                let Some(m) = r.rows.get(i) else {
                    return serde_json::Value::Null;
                };
                let t = |v: Option<i64>| v.map(|t| rel(origin, t));
                let b = |v: Option<u64>| v.map(|x| x as f64);
                let signed = if m.negative {
                    -(m.size as f64)
                } else {
                    m.size as f64
                };
                json!([
                    r.name(i),
                    signed,
                    t(m.time_ns()),
                    m.duration_ns.map(|d| d as f64),
                    t(m.release_ns),
                    b(m.alloc_total_allocated),
                    b(m.alloc_total_reserved),
                    b(m.alloc_total_active),
                    r.names.get(m.stream),
                    r.names.get(m.device),
                    m.source.label(),
                    r.attribution.get(i).map_or("none", |a| a.source.label()),
                    r.top_frame(i),
                    r.row_step.get(i).copied().flatten(),
                    m.release_ns.is_none() && !m.negative,
                ])
            })
            .collect();
        to_json(&json!({ "total": total, "offset": offset, "ids": page, "rows": rows }))
    }

    /// Position of row `row` in the table view of `query`, or -1 when the query excludes it.
    #[wasm_bindgen(js_name = tablePosition)]
    pub fn table_position(&mut self, rank: usize, query: &str, row: u32) -> Result<i32, JsError> {
        let ids = self.table_ids(rank, query)?;
        Ok(ids.iter().position(|&i| i == row).map_or(-1, |p| p as i32))
    }

    /// Everything about row `row` of rank `rank`, with its call stack split into frames:
    /// `{row, name, source, size, …, stack_source, top_frame, innermost_frame, frames: [{text,
    /// user}], op, stack_op}` (ops: `{name, tid, start, dur, seq}`, times relative ns).
    pub fn row(&self, rank: usize, row: u32) -> Result<String, JsError> {
        let r = self.rank(rank)?;
        let i = row as usize;
        let m = r
            .rows
            .get(i)
            .ok_or_else(|| err(format!("rank {rank} has no row {row}")))?;
        let origin = self.origins.get(rank).copied().unwrap_or(0);
        let t = |v: Option<i64>| v.map(|t| rel(origin, t));
        let (op, stack_op) = r.row_ops.get(i).copied().unwrap_or((NO_OP, NO_OP));
        let op_json = |k: u32| {
            r.joined_ops.get(k as usize).map(|o| {
                json!({
                    "name": r.names.get(o.name),
                    "tid": o.tid.to_string(),
                    "start": rel(origin, o.ts),
                    "dur": o.dur as f64,
                    "seq": o.seq,
                })
            })
        };
        let top = r.top_frame(i);
        let frames: Vec<serde_json::Value> = frames(r.stack(i))
            .map(|f| json!({ "text": f, "user": !is_library_frame(f), "top": f == top }))
            .collect();
        let run = r
            .row_run
            .get(i)
            .and_then(|&k| r.summary.run_dirs.get(k as usize));
        let b = |v: Option<u64>| v.map(|x| x as f64);
        to_json(&json!({
            "row": row,
            "name": r.name(i),
            "source": m.source.label(),
            "size": m.size as f64,
            "negative": m.negative,
            "alloc": t(m.alloc_ns),
            "release": t(m.release_ns),
            "active_release": t(m.active_release_ns),
            "duration": m.duration_ns.map(|d| d as f64),
            "active_duration": m.active_duration_ns.map(|d| d as f64),
            "total_allocated": b(m.alloc_total_allocated),
            "total_reserved": b(m.alloc_total_reserved),
            "total_active": b(m.alloc_total_active),
            "stream": r.names.get(m.stream),
            "device": r.names.get(m.device),
            "step": r.row_step.get(i).copied().flatten(),
            "run_dir": run,
            "line": m.line,
            "run_source": r
                .row_run
                .get(i)
                .and_then(|&k| r.run_sources.get(k as usize))
                .copied()
                .unwrap_or("text"),
            "stack_source": r.attribution.get(i).map_or("none", |a| a.source.label()),
            "top_frame": top,
            "innermost_frame": r.innermost_frame(i),
            "frames": frames,
            "op": op_json(op),
            "stack_op": op_json(stack_op),
        }))
    }

    /// PTA allocations alive at `t` (relative ns), grouped by top user frame, with the bytes the
    /// allocator counted but no row explains as one more group: `[{frame, bytes, count}]`. At the
    /// rank's peak time this is the summary's `live_at_peak`.
    #[wasm_bindgen(js_name = liveAt)]
    pub fn live_at(&self, rank: usize, t: f64) -> Result<String, JsError> {
        let r = self.rank(rank)?;
        let origin = self.origins.get(rank).copied().unwrap_or(0);
        let at = abs_ns(origin, t);
        if r.summary.peak_source != "none" && at == r.summary.peak_time_ns {
            return to_json(&r.summary.live_at_peak);
        }
        let total = r
            .framework()
            .and_then(|s| s.value_at(Metric::Allocated, at));
        to_json(&r.live_groups(at, total))
    }

    /// Allocations of the window `[start, end]` (relative ns, either optional) not released by its
    /// end, grouped by top user frame: `[{frame, bytes, count}]`.
    pub fn unreleased(
        &self,
        rank: usize,
        start: Option<f64>,
        end: Option<f64>,
    ) -> Result<String, JsError> {
        let r = self.rank(rank)?;
        let origin = self.origins.get(rank).copied().unwrap_or(0);
        to_json(&r.unreleased_groups(
            start.map(|s| abs_ns(origin, s)),
            end.map(|e| abs_ns(origin, e)),
        ))
    }

    /// An export of the whole job, byte for byte what `memlens profiler --out` writes:
    /// `memory_events.csv`, `rank_summary.csv`, `peak_attribution.csv` or `step_peaks.csv`; or
    /// `summary.json`, what `memlens profiler --json` prints.
    pub fn export(&self, name: &str) -> Result<Vec<u8>, JsError> {
        let mut out = Vec::new();
        let a = &self.analysis;
        match name {
            "memory_events.csv" => exp::write_memory_events(a, &mut out),
            "rank_summary.csv" => exp::write_rank_summary(a, &mut out),
            "peak_attribution.csv" => exp::write_peak_attribution(a, &mut out),
            "step_peaks.csv" => exp::write_step_peaks(a, &mut out),
            "summary.json" => {
                return exp::report_json(a, &self.job)
                    .map(String::into_bytes)
                    .map_err(err)
            }
            other => return Err(err(format!("no export named {other:?}"))),
        }
        .map_err(err)?;
        Ok(out)
    }
}

impl ProfilerView {
    fn rank(&self, rank: usize) -> Result<&RankAnalysis, JsError> {
        self.analysis
            .ranks
            .get(rank)
            .ok_or_else(|| err(format!("no rank {rank} in this job")))
    }

    fn layout(&mut self, rank: usize) -> Result<&LifetimeLayout, JsError> {
        let origin = self.origins.get(rank).copied().unwrap_or(0);
        let r = self
            .analysis
            .ranks
            .get(rank)
            .ok_or_else(|| err(format!("no rank {rank} in this job")))?;
        let slot = self
            .layouts
            .get_mut(rank)
            .ok_or_else(|| err(format!("no rank {rank} in this job")))?;
        Ok(slot.get_or_insert_with(|| lifetime_layout(r, origin)))
    }

    fn table_ids(&mut self, rank: usize, query: &str) -> Result<&[u32], JsError> {
        let q: PageQuery = serde_json::from_str(query).map_err(err)?;
        let hit = matches!(&self.table_cache, Some((k, cq, _)) if *k == rank && *cq == q);
        if !hit {
            let r = self.rank(rank)?;
            let origin = self.origins.get(rank).copied().unwrap_or(0);
            let size = |v: Option<f64>| v.map(|x| x.max(0.0).round() as u64);
            let core = TableQuery {
                name: q.name.clone(),
                stack: q.stack.clone(),
                min_size: size(q.min_size),
                max_size: size(q.max_size),
                start_ns: q.start.map(|s| abs_ns(origin, s)),
                end_ns: q.end.map(|e| abs_ns(origin, e)),
                overlap: false,
                live_at: q.live_at.map(|t| abs_ns(origin, t)),
                unreleased: q.unreleased,
                top_frame: q.frame.clone(),
                sort: q.sort,
                descending: q.descending,
                offset: 0,
                limit: 0,
            };
            let ids = r.table_ids(&core).map_err(err)?;
            self.table_cache = Some((rank, q, ids));
        }
        Ok(self
            .table_cache
            .as_ref()
            .map_or(&[][..], |(_, _, ids)| &ids[..]))
    }
}

/// Bytes of linear memory the WebAssembly instance holds now. Memory only grows, so after a load
/// this is the peak the load needed.
#[wasm_bindgen(js_name = memoryBytes)]
pub fn memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) as f64) * 65536.0
}
