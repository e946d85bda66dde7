//! The SOMAS views' questions: one loaded dump (with an optional task-info file) held in the
//! worker, and thin conversions of the core's answers for the page.
//!
//! Summary and query answers cross as the JSON the CLI prints (`memlens somas --json`), so the
//! page and the CLI cannot disagree. What the views ask for at every frame (curve envelopes,
//! visible rectangles, the memory frame strip) crosses as typed arrays instead: JSON would cost
//! more than the reduction itself. Tensors are named by their dump id (`%<id>T`) and nodes by
//! their execution index everywhere on the JavaScript side; rows stay in here.

use super::session::Session;
use crate::chart::{step_envelope, RectIndex, Viewport};
use crate::export::somas as out;
use crate::somas::analysis::{self, layout_class};
use crate::somas::model::NONE;
use crate::somas::queries::{self, SearchTarget};
use crate::somas::tables::{self, Table as SomasTable};
use crate::somas::{self, lex, summary, Analysis, SomasModel, TaskInfo};
use crate::table::{Query, Table, TableView};
use js_sys::{Float32Array, Float64Array, Object, Reflect, Uint32Array, Uint8Array};
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;
use wasm_bindgen::prelude::*;

/// A loaded SOMAS plan and everything derived from it, held between the views' questions.
#[wasm_bindgen]
pub struct SomasView {
    model: SomasModel,
    an: Analysis,
    summary_json: String,
    log: String,
    summary: summary::Summary,
    rects: RectIndex,
    in_conflict: Vec<bool>,
    /// Execution indices `0..=max_index` as the x of the curves' step functions.
    xs: Vec<i64>,
    tables: HashMap<&'static str, Table>,
    views: HashMap<String, (SomasTable, TableView)>,
    /// How long reading, parsing and analysing took in the browser (ms).
    timings: serde_json::Value,
}

fn err(msg: impl std::fmt::Display) -> JsError {
    JsError::new(&msg.to_string())
}

fn set(obj: &Object, key: &str, value: impl Into<JsValue>) {
    // Reflect::set on a plain object cannot fail.
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value.into());
}

fn table_kind(name: &str) -> Result<(SomasTable, &'static str), JsError> {
    match name {
        "tensors" => Ok((SomasTable::Tensors, "tensors")),
        "nodes" => Ok((SomasTable::Nodes, "nodes")),
        "parameters" => Ok((SomasTable::Parameters, "parameters")),
        "conflicts" => Ok((SomasTable::Conflicts, "conflicts")),
        _ => Err(err(format!(
            "no table {name}: expected tensors, nodes, parameters or conflicts"
        ))),
    }
}

fn address(text: &str) -> Result<u64, JsError> {
    lex::parse_user_address(text).ok_or_else(|| {
        err(format!(
            "{text}: expected a hex address such as 0x108830de2a00"
        ))
    })
}

/// Rows a table view is restricted to.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Subset {
    /// The memory frame of the node with this execution index (tensors table).
    Frame(u32),
    /// These data tensor ids (tensors table).
    Tensors(Vec<u32>),
    /// These node execution indices (nodes table).
    Nodes(Vec<u32>),
}

/// A table query as the page sends it.
#[derive(Deserialize, Default)]
#[serde(default)]
struct TableRequest {
    sort: Vec<(usize, bool)>,
    text: Option<String>,
    regex: bool,
    column: Option<usize>,
    ranges: Vec<(usize, Option<f64>, Option<f64>)>,
    subset: Option<Subset>,
}

/// The queries to include in an export, as the page sends them (addresses as hex text, so they
/// stay exact).
#[derive(Deserialize, Default)]
#[serde(default)]
struct ExportRequest {
    node: Option<u32>,
    tensor: Option<u32>,
    address: Option<String>,
    range: Option<(String, String)>,
}

#[wasm_bindgen]
impl SomasView {
    /// Reads the dump at `dump` (a path of the session) and, when given, the task-info file at
    /// `task_info`, then analyses them. `progress(done, total, label)` follows the reading.
    pub fn open(
        session: &Session,
        dump: &str,
        task_info: Option<String>,
        progress: &js_sys::Function,
    ) -> Result<SomasView, JsError> {
        let report = |label: &str, done: u64, total: u64| {
            let _ = progress.call3(
                &JsValue::NULL,
                &(done as f64).into(),
                &(total as f64).into(),
                &label.into(),
            );
        };
        let now = js_sys::Date::now;
        let t0 = now();
        // Both files are read here (a browser File can only be read on this thread), then parsed
        // side by side: the task-info parser is sequential, the dump's runs in parallel chunks.
        let src = session.source(dump).map_err(err)?;
        let label = format!("reading {dump}");
        let buf = somas::read_source(src.as_ref(), Some(&mut |d, t| report(&label, d, t)))
            .map_err(|d| err(d.to_string()))?;
        let task_buf = match &task_info {
            Some(path) => {
                let src = session.source(path).map_err(err)?;
                let label = format!("reading {path}");
                Some((
                    path.clone(),
                    somas::read_source(src.as_ref(), Some(&mut |d, t| report(&label, d, t)))
                        .map_err(|d| err(d.to_string()))?,
                ))
            }
            None => None,
        };
        let t1 = now();
        report("parsing", 0, 0);
        let (model, task) = rayon::join(
            || somas::parse_dump(dump, &buf),
            || {
                task_buf
                    .as_ref()
                    .map(|(path, b)| somas::parse_task_info(path, b))
                    .transpose()
            },
        );
        let model = model.map_err(|d| err(d.to_string()))?;
        let task = task.map_err(|d| err(d.to_string()))?;
        drop(buf);
        drop(task_buf);
        let t2 = now();
        report("analysing", 0, 0);
        let mut view = SomasView::new(model, task);
        let t3 = now();
        view.timings = json!({
            "read_ms": t1 - t0,
            "parse_ms": t2 - t1,
            "analyse_ms": t3 - t2,
        });
        Ok(view)
    }

    /// The summary: the object `memlens somas FILE --json` prints (without query keys).
    pub fn summary(&self) -> String {
        self.summary_json.clone()
    }

    /// What the views need besides the summary: the axes, the base address, the legend and the
    /// node owning the max address.
    pub fn info(&self) -> String {
        let m = &self.model;
        let bounds = self.rects.set().bounds();
        let max_addr_node = self
            .an
            .max_address_without_lifelong
            .and_then(|a| m.nodes.index.get(a.node_row as usize).copied());
        json!({
            "max_index": self.an.max_index,
            "layout": bounds.map(|b| json!({"x0": b.x0, "x1": b.x1, "y0": b.y0, "y1": b.y1})),
            "rects": self.rects.len(),
            "reused_bytes": self.an.reused,
            "static_bytes": self.an.static_bytes,
            "base_address": self.an.base,
            "base_source": self.an.base_source,
            "has_task": self.an.task.is_some(),
            "placed": m.placed,
            "peak_index": self.an.peak.map(|p| p.index),
            "max_address_node_index": max_addr_node,
            "legend": layout_class::NAMES,
            "timings": self.timings,
            "conflict_marks": self.conflict_marks(),
            "somas_range": self.an.somas_range.map(|(a, b)| [a, b]),
            "param_range": self.an.param_range(m).map(|(a, b, sum)| [a, b, sum]),
        })
        .to_string()
    }

    /// The in-use and total curves (static memory excluded) over execution indices `[x0, x1)`,
    /// reduced to at most `columns` columns (exactly one per index when the window holds fewer):
    /// `{x_start, x_end, columns, use_min, use_max, use_argmax, total_min, total_max, alive_max,
    /// defined}`, numbers as Float64Array (exact below 2^53 bytes).
    pub fn curves(&self, x0: f64, x1: f64, columns: u32) -> Object {
        let len = self.xs.len() as i64;
        let start = (x0.floor() as i64).clamp(0, len.max(1) - 1);
        let end = (x1.ceil() as i64).clamp(start + 1, len.max(start + 1));
        let cols = (columns.max(1) as i64).min(end - start) as usize;
        let use_env = step_envelope(&self.xs, &self.an.in_use, start, end, cols);
        let total_env = step_envelope(&self.xs, &self.an.total, start, end, cols);
        let alive: Vec<u64> = self.an.alive.iter().map(|&a| u64::from(a)).collect();
        let alive_env = step_envelope(&self.xs, &alive, start, end, cols);
        let f = |v: &[u64]| {
            Float64Array::from(v.iter().map(|&x| x as f64).collect::<Vec<_>>().as_slice())
        };
        let o = Object::new();
        set(&o, "x_start", start as f64);
        set(&o, "x_end", end as f64);
        set(&o, "columns", cols as f64);
        set(&o, "use_min", f(&use_env.min));
        set(&o, "use_max", f(&use_env.max));
        set(
            &o,
            "use_argmax",
            Float64Array::from(
                use_env
                    .argmax
                    .iter()
                    .map(|&x| x as f64)
                    .collect::<Vec<_>>()
                    .as_slice(),
            ),
        );
        set(&o, "total_min", f(&total_env.min));
        set(&o, "total_max", f(&total_env.max));
        set(&o, "alive_max", f(&alive_env.max));
        set(
            &o,
            "defined",
            Uint8Array::from(
                use_env
                    .defined
                    .iter()
                    .map(|&d| u8::from(d))
                    .collect::<Vec<_>>()
                    .as_slice(),
            ),
        );
        o
    }

    /// The tensor rectangles visible in `[x0, x1) × [y0, y1)` (execution index × offset) on a
    /// `px_w × px_h` canvas: `{x, y, w, h}` in pixels (Float32Array), `cls` (Uint8Array, the
    /// layout classes of `info().legend`), `id` (Uint32Array: tensor ids, 0xFFFFFFFF for runs
    /// merging sub-pixel tensors), and the counts `visible`, `individual`, `merged`.
    #[allow(clippy::too_many_arguments)]
    pub fn rects(
        &self,
        x0: f64,
        x1: f64,
        y0: f64,
        y1: f64,
        px_w: u32,
        px_h: u32,
        max_rects: u32,
    ) -> Object {
        let lod = self
            .rects
            .visible(&Viewport { x0, x1, y0, y1 }, px_w, px_h, max_rects as usize);
        let ids: Vec<u32> = lod
            .id
            .iter()
            .map(|&r| if r == u32::MAX { r } else { self.tensor_id(r) })
            .collect();
        let o = Object::new();
        set(&o, "x", Float32Array::from(lod.x.as_slice()));
        set(&o, "y", Float32Array::from(lod.y.as_slice()));
        set(&o, "w", Float32Array::from(lod.w.as_slice()));
        set(&o, "h", Float32Array::from(lod.h.as_slice()));
        set(&o, "cls", Uint8Array::from(lod.class.as_slice()));
        set(&o, "id", Uint32Array::from(ids.as_slice()));
        set(&o, "visible", lod.visible as f64);
        set(&o, "individual", lod.individual as f64);
        set(&o, "merged", lod.merged as f64);
        o
    }

    /// The tensor id under the layout point `(x, y)`, or within `dx`, `dy` of it.
    pub fn hit(&self, x: f64, y: f64, dx: f64, dy: f64) -> Option<u32> {
        self.rects.hit_near(x, y, dx, dy).map(|r| self.tensor_id(r))
    }

    /// Everything about data tensor `id` (JSON), or an error when there is no such tensor.
    pub fn tensor(&self, id: u32) -> Result<String, JsError> {
        let row = self.tensor_row(id)?;
        let info = queries::tensor_info(&self.model, &self.an, row);
        let mut v = serde_json::to_value(&info).map_err(err)?;
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "class".into(),
                json!(analysis::layout_class_of(
                    &self.model,
                    row,
                    self.in_conflict.get(row as usize).copied().unwrap_or(false)
                )),
            );
        }
        Ok(v.to_string())
    }

    /// The node at execution index `index` and the curves there (JSON; `name` is null when no
    /// node has that index).
    #[wasm_bindgen(js_name = nodeAt)]
    pub fn node_at(&self, index: u32) -> String {
        let m = &self.model;
        let row = m.nodes.row_of_index(index);
        json!({
            "index": index,
            "name": row.map(|r| m.node_name(r)),
            "stream": row.and_then(|r| m.nodes.stream.get(r as usize)),
            "in_use": self.an.in_use_at(index),
            "total": self.an.total_at(index),
            "alive": self.an.alive.get(index as usize).copied().unwrap_or(0),
            "static": self.an.static_bytes,
        })
        .to_string()
    }

    /// The memory frame at execution index `index`: the tensors alive there sorted by offset,
    /// as `{index, ids (Uint32Array), start, end (Float64Array, effective offsets), cls
    /// (Uint8Array)}`.
    pub fn frame(&self, index: u32) -> Object {
        let rows = self.an.frame(&self.model, index);
        let mut ids = Vec::with_capacity(rows.len());
        let mut start = Vec::with_capacity(rows.len());
        let mut end = Vec::with_capacity(rows.len());
        let mut cls = Vec::with_capacity(rows.len());
        for &t in &rows {
            let (s, e) = self.model.effective_range(t);
            ids.push(self.tensor_id(t));
            start.push(s as f64);
            end.push(e as f64);
            cls.push(analysis::layout_class_of(
                &self.model,
                t,
                self.in_conflict.get(t as usize).copied().unwrap_or(false),
            ));
        }
        let o = Object::new();
        set(&o, "index", index);
        set(&o, "ids", Uint32Array::from(ids.as_slice()));
        set(&o, "start", Float64Array::from(start.as_slice()));
        set(&o, "end", Float64Array::from(end.as_slice()));
        set(&o, "cls", Uint8Array::from(cls.as_slice()));
        o
    }

    /// What the search box text names (JSON `{targets: [...]}` or `{error}`): nodes as
    /// `{kind: "node", index, name}`, tensors as `{kind: "tensor", id}`, addresses as
    /// `{kind: "address", address}` and ranges as `{kind: "range", start, end}` (hex text).
    pub fn search(&self, text: &str) -> String {
        match queries::search(&self.model, text) {
            Ok(targets) => {
                let list: Vec<serde_json::Value> = targets
                    .iter()
                    .map(|t| match *t {
                        SearchTarget::Node { row } => json!({
                            "kind": "node",
                            "index": self.model.nodes.index.get(row as usize),
                            "name": self.model.node_name(row),
                        }),
                        SearchTarget::Tensor { row } => {
                            json!({"kind": "tensor", "id": self.tensor_id(row)})
                        }
                        SearchTarget::Address { address } => {
                            json!({"kind": "address", "address": tables::hex(address)})
                        }
                        SearchTarget::Range { start, end } => json!({
                            "kind": "range",
                            "start": tables::hex(start),
                            "end": tables::hex(end),
                        }),
                    })
                    .collect();
                json!({ "targets": list }).to_string()
            }
            Err(e) => json!({ "error": e }).to_string(),
        }
    }

    /// `node_query` of the CLI's `--json` for the node at execution index `index`.
    #[wasm_bindgen(js_name = nodeQuery)]
    pub fn node_query(&self, index: u32) -> Result<String, JsError> {
        let row = self
            .model
            .nodes
            .row_of_index(index)
            .ok_or_else(|| err(format!("no node with execution index {index}")))?;
        Ok(queries::json::node(&self.model, &self.an, row).to_string())
    }

    /// `tensor_query` of the CLI's `--json` for data tensor `id`.
    #[wasm_bindgen(js_name = tensorQuery)]
    pub fn tensor_query(&self, id: u32) -> Result<String, JsError> {
        let row = self.tensor_row(id)?;
        Ok(queries::json::tensor(&self.model, &self.an, row).to_string())
    }

    /// `address_query` of the CLI's `--json` for the address `addr` (hex text).
    #[wasm_bindgen(js_name = addressQuery)]
    pub fn address_query(&self, addr: &str) -> Result<String, JsError> {
        Ok(queries::json::address(&self.model, &self.an, address(addr)?).to_string())
    }

    /// `address_range_query` of the CLI's `--json` for `[start, end)` (hex text).
    #[wasm_bindgen(js_name = rangeQuery)]
    pub fn range_query(&self, start: &str, end: &str) -> Result<String, JsError> {
        let (lo, hi) = (address(start)?, address(end)?);
        if hi < lo {
            return Err(err(format!(
                "{start}-{end}: the end of the range is below its start"
            )));
        }
        Ok(queries::json::range(&self.model, &self.an, lo, hi).to_string())
    }

    /// Sorts and filters `table` (`tensors`, `nodes`, `parameters`, `conflicts`) as `request`
    /// (JSON: `{sort: [[col, desc]], text, regex, column, ranges: [[col, min, max]], subset}`)
    /// says, and keeps the result under the name `view` for [`SomasView::table_page`]. Returns
    /// `{total, columns}`.
    #[wasm_bindgen(js_name = tableQuery)]
    pub fn table_query(
        &mut self,
        view: &str,
        table: &str,
        request: &str,
    ) -> Result<String, JsError> {
        let (kind, key) = table_kind(table)?;
        let req: TableRequest = if request.trim().is_empty() {
            TableRequest::default()
        } else {
            serde_json::from_str(request).map_err(|e| err(format!("bad table request: {e}")))?
        };
        let subset = match req.subset {
            None => None,
            Some(Subset::Frame(index)) => Some(self.an.frame(&self.model, index)),
            Some(Subset::Tensors(ids)) => Some(
                ids.iter()
                    .filter_map(|&id| self.model.tensor_row(id))
                    .collect(),
            ),
            Some(Subset::Nodes(indices)) => Some(
                indices
                    .iter()
                    .filter_map(|&i| self.model.nodes.row_of_index(i))
                    .collect(),
            ),
        };
        let query = Query {
            sort: req.sort,
            text: req.text,
            regex: req.regex,
            text_column: req.column,
            ranges: req.ranges,
            subset,
        };
        let t = self.table(kind, key);
        let v = t.view(&query).map_err(err)?;
        let out = json!({ "total": v.len(), "columns": t.specs() }).to_string();
        self.views.insert(view.to_string(), (kind, v));
        Ok(out)
    }

    /// Rows `[offset, offset + limit)` of the view named `view` (JSON `{total, offset, ids,
    /// rows}`: ids are table rows, cells in column order).
    #[wasm_bindgen(js_name = tablePage)]
    pub fn table_page(&mut self, view: &str, offset: u32, limit: u32) -> Result<String, JsError> {
        let kind = self
            .views
            .get(view)
            .map(|v| v.0)
            .ok_or_else(|| err(format!("no table view {view}")))?;
        let key = match kind {
            SomasTable::Tensors => "tensors",
            SomasTable::Nodes => "nodes",
            SomasTable::Parameters => "parameters",
            SomasTable::Conflicts => "conflicts",
        };
        self.table(kind, key);
        let (Some((_, v)), Some(t)) = (self.views.get(view), self.tables.get(key)) else {
            return Err(err(format!("no table view {view}")));
        };
        serde_json::to_string(&v.page(t, offset as usize, limit as usize)).map_err(err)
    }

    /// Where the row of `key` (a tensor id, a node index, a parameter id, or a conflict's first
    /// tensor id) sits in view `view`, or -1.
    #[wasm_bindgen(js_name = tablePosition)]
    pub fn table_position(&self, view: &str, key: u32) -> i32 {
        let Some((kind, v)) = self.views.get(view) else {
            return -1;
        };
        let row = match kind {
            SomasTable::Tensors => self.model.tensor_row(key),
            SomasTable::Nodes => self.model.nodes.row_of_index(key),
            SomasTable::Parameters => self.model.param_row(key),
            SomasTable::Conflicts => self.model.tensor_row(key).and_then(|t| {
                self.an
                    .conflicts
                    .pairs
                    .iter()
                    .position(|&(a, b)| a == t || b == t)
                    .map(|p| p as u32)
            }),
        };
        row.and_then(|r| v.position(r))
            .map_or(-1, |p| i32::try_from(p).unwrap_or(-1))
    }

    /// The paths of the export for `request` (JSON `{node, tensor, address, range}`): somas_tool's
    /// file set as `memlens somas --out` writes it.
    #[wasm_bindgen(js_name = exportList)]
    pub fn export_list(&self, request: &str) -> Result<String, JsError> {
        let files = self.files(request)?;
        serde_json::to_string(&files.iter().map(|f| &f.path).collect::<Vec<_>>()).map_err(err)
    }

    /// The whole export for `request` as one zip archive.
    #[wasm_bindgen(js_name = exportZip)]
    pub fn export_zip(&self, request: &str) -> Result<Uint8Array, JsError> {
        let files = self.files(request)?;
        let buf = out::write_zip(
            &files,
            &self.model,
            &self.an,
            std::io::Cursor::new(Vec::new()),
        )
        .map_err(err)?
        .into_inner();
        Ok(Uint8Array::from(buf.as_slice()))
    }

    /// The summary with the queries of `request`, as `memlens somas --json` prints it byte for
    /// byte (the "summary.json" download).
    #[wasm_bindgen(js_name = summaryJson)]
    pub fn summary_json(&self, request: &str) -> Result<String, JsError> {
        let q = self.queries(request)?;
        out::summary_json(&self.model, &self.an, &self.summary, &q).map_err(err)
    }

    /// One file of the export for `request`, by its path in [`SomasView::export_list`].
    #[wasm_bindgen(js_name = exportFile)]
    pub fn export_file(&self, request: &str, path: &str) -> Result<Uint8Array, JsError> {
        let files = self.files(request)?;
        let f = files
            .iter()
            .find(|f| f.path == path)
            .ok_or_else(|| err(format!("{path}: not in this export")))?;
        let mut buf = Vec::new();
        out::write_file(f, &self.model, &self.an, &mut buf).map_err(err)?;
        Ok(Uint8Array::from(buf.as_slice()))
    }
}

impl SomasView {
    /// Analyses `model` (with `task`) and prepares what every view needs first.
    pub fn new(model: SomasModel, task: Option<TaskInfo>) -> SomasView {
        let an = somas::analyze(&model, task.as_ref());
        // The summary and the layout index are independent: side by side on the threaded engine.
        let ((s, summary_json, log), (rects, in_conflict)) = rayon::join(
            || {
                let s = summary::summary(&model, &an, task.as_ref());
                let summary_json = serde_json::to_string(&s).unwrap_or_else(|e| {
                    json!({ "error": format!("cannot serialise the summary: {e}") }).to_string()
                });
                let log = out::log(&model, &an, &s);
                (s, summary_json, log)
            },
            || {
                (
                    RectIndex::new(analysis::layout_rects(&model, &an)),
                    analysis::conflict_rows(&model, &an),
                )
            },
        );
        let xs = (0..an.in_use.len() as i64).collect();
        SomasView {
            model,
            an,
            summary_json,
            log,
            summary: s,
            rects,
            in_conflict,
            xs,
            tables: HashMap::new(),
            views: HashMap::new(),
            timings: serde_json::Value::Null,
        }
    }

    /// Where each conflict (the first 2000) starts: `[first shared index, lowest shared offset,
    /// tensor a, tensor b]`, so the views can mark conflicts that are smaller than a pixel.
    fn conflict_marks(&self) -> Vec<[u64; 4]> {
        let (m, an) = (&self.model, &self.an);
        an.conflicts
            .pairs
            .iter()
            .take(2000)
            .map(|&(a, b)| {
                let lo = |t: u32| u64::from(an.lo.get(t as usize).copied().unwrap_or(0));
                let (sa, _) = m.effective_range(a);
                let (sb, _) = m.effective_range(b);
                [
                    lo(a).max(lo(b)),
                    sa.max(sb),
                    u64::from(self.tensor_id(a)),
                    u64::from(self.tensor_id(b)),
                ]
            })
            .collect()
    }

    fn tensor_id(&self, row: u32) -> u32 {
        self.model
            .tensors
            .id
            .get(row as usize)
            .copied()
            .unwrap_or(NONE)
    }

    fn tensor_row(&self, id: u32) -> Result<u32, JsError> {
        self.model
            .tensor_row(id)
            .ok_or_else(|| err(format!("no data tensor %{id}T in this dump")))
    }

    /// The typed table, built on first use (the tensors table of a large dump takes a while).
    fn table(&mut self, kind: SomasTable, key: &'static str) -> &Table {
        let (model, an) = (&self.model, &self.an);
        self.tables
            .entry(key)
            .or_insert_with(|| tables::to_table(model, an, kind))
    }

    fn files(&self, request: &str) -> Result<Vec<out::OutFile>, JsError> {
        let q = self.queries(request)?;
        Ok(out::file_set(
            &self.model,
            &self.an,
            &self.summary,
            &q,
            &self.log,
        ))
    }

    /// The queries of an export request (JSON `{node, tensor, address, range}`).
    fn queries(&self, request: &str) -> Result<out::QuerySet, JsError> {
        let req: ExportRequest = if request.trim().is_empty() {
            ExportRequest::default()
        } else {
            serde_json::from_str(request).map_err(|e| err(format!("bad export request: {e}")))?
        };
        let q = out::QuerySet {
            node: match req.node {
                Some(i) => Some(
                    self.model
                        .nodes
                        .row_of_index(i)
                        .ok_or_else(|| err(format!("no node with execution index {i}")))?,
                ),
                None => None,
            },
            tensor: match req.tensor {
                Some(id) => Some(self.tensor_row(id)?),
                None => None,
            },
            address: req.address.as_deref().map(address).transpose()?,
            range: match &req.range {
                Some((a, b)) => Some((address(a)?, address(b)?)),
                None => None,
            },
        };
        Ok(q)
    }
}
