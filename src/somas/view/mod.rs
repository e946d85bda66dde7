//! What the SOMAS views ask of an opened plan, and the answers: one [`SomasSession`] per opened
//! dump (with an optional task-info file), the requests as the serde type [`Request`] (named
//! fields, JSON `{"method": …, "params": {…}}`), and [`SomasSession::answer`] answering them.
//!
//! Summary and query answers are the JSON the CLI prints (`memlens somas --json`), so the page
//! and the CLI cannot disagree. What the views ask for at every frame (curve envelopes, visible
//! rectangles, the memory frame strip) are [`crate::bulk::Bulk`] answers instead. Tensors are
//! named by their dump id (`%<id>T`) and nodes by their execution index in every request and
//! answer; table rows are internal.
//!
//! Front ends only convert: the wasm layer passes request text in and answer text or typed
//! arrays out.

pub mod answers;
pub mod requests;

pub use answers::{
    Curves, Extent, Frame, Info, NodeAt, Partner, Rects, Search, TableAnswer, Target, TensorLead,
    Timings,
};
pub use requests::{ExportRequest, Request, Subset, TableRequest};

use super::analysis::{self, layout_class};
use super::model::NONE;
use super::queries::{self, SearchTarget};
use super::tables::{self, Table as SomasTable};
use super::{lex, summary, Analysis, SomasModel, TaskInfo};
use crate::bulk::{f64s, flags};
use crate::chart::{step_envelope, RectIndex, Viewport};
use crate::diag::Diagnostic;
use crate::export::somas as out;
use crate::input::FileOpener;
use crate::source::{Source, STOPPED};
use crate::table::{Query, Table, TableView};
use serde::Serialize;
use serde_json::json;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// A loaded SOMAS plan and everything derived from it, held between the views' questions.
pub struct SomasSession {
    model: SomasModel,
    an: Analysis,
    summary_json: String,
    log: String,
    summary: summary::Summary,
    rects: RectIndex,
    in_conflict: Vec<bool>,
    /// Execution indices `0..=max_index` as the x of the curves' step functions.
    xs: Vec<i64>,
    tables: HashMap<&'static str, Table<'static>>,
    views: HashMap<String, (SomasTable, TableView)>,
    timings: Timings,
}

fn table_kind(name: &str) -> Result<(SomasTable, &'static str), String> {
    match name {
        "tensors" => Ok((SomasTable::Tensors, "tensors")),
        "nodes" => Ok((SomasTable::Nodes, "nodes")),
        "parameters" => Ok((SomasTable::Parameters, "parameters")),
        "conflicts" => Ok((SomasTable::Conflicts, "conflicts")),
        _ => Err(format!(
            "no table {name}: expected tensors, nodes, parameters or conflicts"
        )),
    }
}

/// The parsers' stop question of a file: its source's answer ([`Source::check_stop`]), as a
/// parse error at the byte the parser is at.
fn stop_check(src: &dyn Source) -> impl Fn(u64) -> Result<(), lex::ParseError> + '_ {
    move |at| {
        src.check_stop(at)
            .map_err(|e| lex::ParseError::new(e.offset, "", e.message))
    }
}

/// Whether a load that may be stopped parses the dump and the task-info file side by side
/// ([`parse_side_by_side`]): only where this thread is not one of rayon's pool (it waits for the
/// task-info parser's questions after the dump is parsed; a pool thread waiting so might hold that
/// parse, not yet started, in its own queue) and the pool has two threads or more (the task-info
/// parse takes one for its whole length, the dump's rounds need another). The threaded page's
/// worker meets both; the single-threaded engine and a call made inside a pool do not, and parse
/// one file after the other.
pub fn parses_side_by_side() -> bool {
    rayon::current_thread_index().is_none() && rayon::current_num_threads() >= 2
}

/// What the task-info parser on the pool sends the thread that owns the files.
enum TaskMsg {
    /// A stop question at this byte of the task-info file.
    Ask(u64),
    /// The parse's result (boxed: a task-info file's model is large beside a question).
    Done(Box<Result<TaskInfo, Diagnostic>>),
}

/// Parses the dump `dump` (bytes `buf`) on this thread and the task-info file `task` (bytes
/// `task_buf`) on rayon's pool at the same time, for a load that may be stopped. A browser
/// `File` answers its stop question only on the thread that owns it, this one, so the task-info
/// parser sends its questions here and goes on without waiting: this thread answers them from
/// `task_src` whenever the dump's parser asks its own question (every MiB, between its rounds),
/// and once the dump is parsed, as they come until the task-info parse ends. An answer that says
/// stopped raises a flag the task-info parser reads at its next question (a MiB later at most),
/// where it ends with the stop error; and it ends the open with that error even when the parse
/// was over before it saw the flag. Each parser asks exactly the questions it asks one after the
/// other, of its own file. The dump's error comes first, as when the two are parsed in turn.
fn parse_side_by_side(
    dump: &str,
    buf: &[u8],
    dump_src: &dyn Source,
    task: &str,
    task_buf: &[u8],
    task_src: &dyn Source,
) -> Result<(SomasModel, TaskInfo), Diagnostic> {
    let (tx, rx) = mpsc::channel::<TaskMsg>();
    let raised = AtomicBool::new(false);
    // The first stop answer given to the task-info parser.
    let task_stopped = RefCell::new(None);
    let done = RefCell::new(None);
    let answer = |msg: TaskMsg| match msg {
        TaskMsg::Ask(at) => {
            if let Err(e) = task_src.check_stop(at) {
                raised.store(true, Ordering::Release);
                task_stopped.borrow_mut().get_or_insert(e);
            }
        }
        TaskMsg::Done(r) => *done.borrow_mut() = Some(*r),
    };
    let own_stop = stop_check(dump_src);
    let dump_stop = |at| {
        while let Ok(msg) = rx.try_recv() {
            answer(msg);
        }
        own_stop(at)
    };
    let model = rayon::in_place_scope(|s| {
        let raised = &raised;
        s.spawn(move |_| {
            let ask = |at: u64| {
                if raised.load(Ordering::Acquire) {
                    return Err(lex::ParseError::new(at, "", STOPPED));
                }
                // A question nobody takes (the owner gone) counts as a stop.
                tx.send(TaskMsg::Ask(at))
                    .map_err(|_| lex::ParseError::new(at, "", STOPPED))
            };
            let r = super::parse_task_info_with(task, task_buf, Some(&ask));
            let _ = tx.send(TaskMsg::Done(Box::new(r)));
        });
        let model = super::parse_dump_with(dump, buf, Some(&dump_stop));
        if model.is_err() {
            // The dump's error ends the open whatever the task-info parse gives: end that parse
            // at its next question rather than read the rest of its file for nothing.
            raised.store(true, Ordering::Release);
        }
        // The task-info parser's questions, until it ends (every sender gone ends it too: a
        // parser that panicked, whose panic the scope passes on).
        while done.borrow().is_none() {
            match rx.recv() {
                Ok(msg) => answer(msg),
                Err(_) => break,
            }
        }
        model
    })?;
    if let Some(e) = task_stopped.into_inner() {
        return Err(Diagnostic::from(e));
    }
    let task = done.into_inner().unwrap_or_else(|| {
        Err(Diagnostic::error(
            task,
            "the task-info parse ended without a result",
        ))
    })?;
    Ok((model, task))
}

fn address(text: &str) -> Result<u64, String> {
    lex::parse_user_address(text)
        .ok_or_else(|| format!("{text}: expected a hex address such as 0x108830de2a00"))
}

fn json_text(v: &impl Serialize) -> Result<String, String> {
    serde_json::to_string(v).map_err(|e| e.to_string())
}

impl SomasSession {
    /// Reads the dump at `dump` and, when given, the task-info file at `task_info` from `files`,
    /// then parses (side by side) and analyses them. `progress(label, done, total)` follows the
    /// reading; `clock()` (ms) times the steps, since only the front end knows the time.
    pub fn open(
        files: &dyn FileOpener,
        dump: &str,
        task_info: Option<&str>,
        progress: &mut dyn FnMut(&str, u64, u64),
        clock: &dyn Fn() -> f64,
    ) -> Result<SomasSession, Diagnostic> {
        let t0 = clock();
        // Both files are read first (a browser File can only be read on the thread that owns
        // it), then parsed side by side (the task-info parser is sequential, the dump's in
        // parallel chunks) where the engine has threads, else one after the other.
        let mut read = |path: &str| -> Result<(Box<dyn Source + '_>, Vec<u8>), Diagnostic> {
            let src = files.open(path)?;
            let label = format!("reading {path}");
            let buf = super::read_source(src.as_ref(), Some(&mut |d, t| progress(&label, d, t)))?;
            Ok((src, buf))
        };
        let (dump_src, buf) = read(dump)?;
        let (task_src, task_buf) = match task_info.map(|p| read(p).map(|(s, b)| (s, (p, b)))) {
            Some(r) => {
                let (s, b) = r?;
                (Some(s), Some(b))
            }
            None => (None, None),
        };
        let t1 = clock();
        progress("parsing", 0, 0);
        let side_by_side = task_src.is_some() && parses_side_by_side();
        let (model, task) = match (task_src.as_deref(), task_buf.as_ref()) {
            // A load that may be stopped (the page's Cancel, a new drop) on a threaded engine:
            // the task-info file is parsed on the pool while this thread parses the dump and
            // answers both parsers' stop questions.
            (Some(task_src), Some((path, b))) if dump_src.may_stop() && side_by_side => {
                let (model, task) =
                    parse_side_by_side(dump, &buf, dump_src.as_ref(), path, b, task_src)?;
                (model, Some(task))
            }
            _ => Self::parse_in_turn(
                dump,
                &buf,
                dump_src.as_ref(),
                task_src.as_deref(),
                task_buf.as_ref(),
            )?,
        };
        drop(buf);
        drop(task_buf);
        drop(task_src);
        let t2 = clock();
        progress("analysing", 0, 0);
        // Between the long steps: the analysis (curves, conflicts over the whole plan), then
        // the summary and the layout index.
        let stop = || {
            dump_src
                .check_stop(dump_src.len().saturating_sub(1))
                .map_err(Diagnostic::from)
        };
        stop()?;
        let an = super::analyze(&model, task.as_ref());
        stop()?;
        let mut session = SomasSession::analysed(model, task, an);
        stop()?;
        session.timings = Timings {
            read_ms: t1 - t0,
            parse_ms: t2 - t1,
            analyse_ms: clock() - t2,
        };
        Ok(session)
    }

    /// Parses the dump `dump` (bytes `buf`, source `dump_src`) and the task-info file, when
    /// given, without answering one parser's stop questions on behalf of the other: side by side
    /// when the load cannot be stopped (no question to answer), else one after the other on this
    /// thread, each parser asking its own file every MiB.
    fn parse_in_turn(
        dump: &str,
        buf: &[u8],
        dump_src: &dyn Source,
        task_src: Option<&dyn Source>,
        task: Option<&(&str, Vec<u8>)>,
    ) -> Result<(SomasModel, Option<TaskInfo>), Diagnostic> {
        if dump_src.may_stop() {
            let dump_stop = stop_check(dump_src);
            let model = super::parse_dump_with(dump, buf, Some(&dump_stop))?;
            let task = match (task_src, task) {
                (Some(src), Some((path, b))) => {
                    let task_stop = stop_check(src);
                    Some(super::parse_task_info_with(path, b, Some(&task_stop))?)
                }
                _ => None,
            };
            return Ok((model, task));
        }
        let (model, task) = rayon::join(
            || super::parse_dump(dump, buf),
            || {
                task.map(|(path, b)| super::parse_task_info(path, b))
                    .transpose()
            },
        );
        Ok((model?, task?))
    }

    /// Analyses `model` (with `task`) and prepares what every view needs first.
    pub fn new(model: SomasModel, task: Option<TaskInfo>) -> SomasSession {
        let an = super::analyze(&model, task.as_ref());
        SomasSession::analysed(model, task, an)
    }

    /// The session of `model` (with `task`) and its analysis `an`.
    fn analysed(model: SomasModel, task: Option<TaskInfo>, an: Analysis) -> SomasSession {
        // The summary and the layout index are independent: side by side on a threaded engine.
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
        SomasSession {
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
            timings: Timings::default(),
        }
    }

    /// Answers `request` with JSON text.
    pub fn answer(&mut self, request: &Request) -> Result<String, String> {
        match request {
            Request::Summary {} => Ok(self.summary_json.clone()),
            Request::Info {} => json_text(&self.info()),
            Request::Tensor { id } => self.tensor(*id),
            Request::Hit { x, y, dx, dy } => match self.rects.hit_near(*x, *y, *dx, *dy) {
                Some(row) => self.tensor(self.tensor_id(row)),
                None => Ok("null".to_string()),
            },
            Request::NodeAt { index } => json_text(&self.node_at(*index)),
            Request::Search { text } => json_text(&self.search(text)),
            Request::NodeQuery { index } => {
                let row = self
                    .model
                    .nodes
                    .row_of_index(*index)
                    .ok_or_else(|| format!("no node with execution index {index}"))?;
                Ok(queries::json::node(&self.model, &self.an, row).to_string())
            }
            Request::TensorQuery { id } => {
                let row = self.tensor_row(*id)?;
                Ok(queries::json::tensor(&self.model, &self.an, row).to_string())
            }
            Request::TensorLead { id } => json_text(&self.tensor_lead(*id)?),
            Request::AddressQuery { address: a } => {
                Ok(queries::json::address(&self.model, &self.an, address(a)?).to_string())
            }
            Request::RangeQuery { start, end } => {
                let (lo, hi) = (address(start)?, address(end)?);
                if hi < lo {
                    return Err(format!(
                        "{start}-{end}: the end of the range is below its start"
                    ));
                }
                Ok(queries::json::range(&self.model, &self.an, lo, hi).to_string())
            }
            Request::Table {
                view,
                table,
                request,
            } => self.table_query(view, table, request),
            Request::Page {
                view,
                offset,
                limit,
            } => self.table_page(view, *offset, *limit),
            Request::Position { view, key } => Ok(self
                .table_position(view, *key)
                .map_or(-1, |p| i64::try_from(p).unwrap_or(-1))
                .to_string()),
            Request::ExportList { request } => {
                let files = self.files(request)?;
                json_text(&files.iter().map(|f| &f.path).collect::<Vec<_>>())
            }
            Request::SummaryJson { request } => {
                let q = self.queries(request)?;
                out::summary_json(&self.model, &self.an, &self.summary, &q)
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// What the views need besides the summary.
    pub fn info(&self) -> Info {
        let m = &self.model;
        let max_address_node_index = self
            .an
            .max_address_without_lifelong
            .and_then(|a| m.nodes.index.get(a.node_row as usize).copied());
        Info {
            max_index: self.an.max_index,
            layout: self.rects.set().bounds().map(|b| Extent {
                x0: b.x0,
                x1: b.x1,
                y0: b.y0,
                y1: b.y1,
            }),
            rects: self.rects.len(),
            reused_bytes: self.an.reused,
            static_bytes: self.an.static_bytes,
            base_address: self.an.base,
            base_source: self.an.base_source,
            has_task: self.an.task.is_some(),
            placed: m.placed,
            peak_index: self.an.peak.map(|p| p.index),
            max_address_node_index,
            legend: &layout_class::NAMES,
            timings: self.timings,
            conflict_marks: self.conflict_marks(),
            somas_range: self.an.somas_range.map(|(a, b)| [a, b]),
            param_range: self.an.param_range(m).map(|(a, b, sum)| [a, b, sum]),
        }
    }

    /// The in-use and total curves (static memory excluded) over execution indices `[x0, x1)`,
    /// reduced to at most `columns` columns (exactly one per index when the window holds
    /// fewer).
    pub fn curves(&self, x0: f64, x1: f64, columns: u32) -> Curves {
        let len = self.xs.len() as i64;
        let start = (x0.floor() as i64).clamp(0, len.max(1) - 1);
        let end = (x1.ceil() as i64).clamp(start + 1, len.max(start + 1));
        let cols = (columns.max(1) as i64).min(end - start) as usize;
        let use_env = step_envelope(&self.xs, &self.an.in_use, start, end, cols);
        let total_env = step_envelope(&self.xs, &self.an.total, start, end, cols);
        let alive: Vec<u64> = self.an.alive.iter().map(|&a| u64::from(a)).collect();
        let alive_env = step_envelope(&self.xs, &alive, start, end, cols);
        Curves {
            x_start: start as f64,
            x_end: end as f64,
            columns: cols as f64,
            use_min: f64s(&use_env.min),
            use_max: f64s(&use_env.max),
            use_argmax: use_env.argmax.iter().map(|&x| x as f64).collect(),
            total_min: f64s(&total_env.min),
            total_max: f64s(&total_env.max),
            alive_max: f64s(&alive_env.max),
            defined: flags(&use_env.defined),
        }
    }

    /// The tensor rectangles visible in `[x0, x1) × [y0, y1)` (execution index × offset) on a
    /// `px_w × px_h` canvas, at most `max_rects` of them one by one.
    pub fn rects(&self, viewport: &Viewport, px_w: u32, px_h: u32, max_rects: usize) -> Rects {
        let lod = self.rects.visible(viewport, px_w, px_h, max_rects);
        let id = lod
            .id
            .iter()
            .map(|&r| if r == u32::MAX { r } else { self.tensor_id(r) })
            .collect();
        Rects {
            x: lod.x,
            y: lod.y,
            w: lod.w,
            h: lod.h,
            cls: lod.class,
            id,
            visible: lod.visible as f64,
            individual: lod.individual as f64,
            merged: lod.merged as f64,
        }
    }

    /// The memory frame at execution index `index`: the tensors alive there sorted by offset.
    pub fn frame(&self, index: u32) -> Frame {
        let rows = self.an.frame(&self.model, index);
        let mut f = Frame {
            index: f64::from(index),
            ..Frame::default()
        };
        for &t in &rows {
            let (s, e) = self.model.effective_range(t);
            f.ids.push(self.tensor_id(t));
            f.start.push(s as f64);
            f.end.push(e as f64);
            f.cls.push(self.class_of(t));
        }
        f
    }

    /// The export of `request` as one zip archive, as `memlens somas --out` writes its files.
    pub fn export_zip(&self, request: &ExportRequest) -> Result<Vec<u8>, String> {
        let files = self.files(request)?;
        out::write_zip(
            &files,
            &self.model,
            &self.an,
            std::io::Cursor::new(Vec::new()),
        )
        .map(std::io::Cursor::into_inner)
        .map_err(|e| e.to_string())
    }

    /// One file of the export of `request`, by its path in the export list.
    pub fn export_file(&self, request: &ExportRequest, path: &str) -> Result<Vec<u8>, String> {
        let files = self.files(request)?;
        let f = files
            .iter()
            .find(|f| f.path == path)
            .ok_or_else(|| format!("{path}: not in this export"))?;
        let mut buf = Vec::new();
        out::write_file(f, &self.model, &self.an, &mut buf).map_err(|e| e.to_string())?;
        Ok(buf)
    }

    fn class_of(&self, row: u32) -> u8 {
        analysis::layout_class_of(
            &self.model,
            row,
            self.in_conflict.get(row as usize).copied().unwrap_or(false),
        )
    }

    fn tensor(&self, id: u32) -> Result<String, String> {
        let row = self.tensor_row(id)?;
        let info = queries::tensor_info(&self.model, &self.an, row);
        let mut v = serde_json::to_value(&info).map_err(|e| e.to_string())?;
        if let Some(o) = v.as_object_mut() {
            o.insert("class".into(), json!(self.class_of(row)));
        }
        Ok(v.to_string())
    }

    fn tensor_lead(&self, id: u32) -> Result<TensorLead, String> {
        let row = self.tensor_row(id)?;
        let me = queries::tensor_info(&self.model, &self.an, row);
        let all = queries::overlapping(&self.model, &self.an, row);
        let reuse = all.iter().filter(|o| !o.lifetime_overlap).count();
        let mut partners: Vec<Partner> = all
            .iter()
            .filter(|o| o.lifetime_overlap)
            .map(|o| {
                let u = queries::tensor_info(&self.model, &self.an, o.tensor_row);
                Partner {
                    id: u.id,
                    conflict: o.conflict,
                    shared: [me.range[0].max(u.range[0]), me.range[1].min(u.range[1])],
                    together: [me.alive[0].max(u.alive[0]), me.alive[1].min(u.alive[1])],
                    node_name: u.node_name,
                    range: u.range,
                    alive: u.alive,
                }
            })
            .collect();
        partners.sort_by_key(|p| (!p.conflict, p.id));
        Ok(TensorLead {
            tensor_id: me.id,
            range: me.range,
            alive: me.alive,
            partners,
            reuse,
        })
    }

    fn node_at(&self, index: u32) -> NodeAt<'_> {
        let m = &self.model;
        let row = m.nodes.row_of_index(index);
        NodeAt {
            index,
            name: row.map(|r| m.node_name(r)),
            stream: row.and_then(|r| m.nodes.stream.get(r as usize).copied()),
            in_use: self.an.in_use_at(index),
            total: self.an.total_at(index),
            alive: self.an.alive.get(index as usize).copied().unwrap_or(0),
            r#static: self.an.static_bytes,
        }
    }

    fn search(&self, text: &str) -> Search<'_> {
        match queries::search(&self.model, text) {
            Ok(targets) => Search::Found {
                targets: targets
                    .iter()
                    .map(|t| match *t {
                        SearchTarget::Node { row } => Target::Node {
                            index: self.model.nodes.index.get(row as usize).copied(),
                            name: self.model.node_name(row),
                        },
                        SearchTarget::Tensor { row } => Target::Tensor {
                            id: self.tensor_id(row),
                        },
                        SearchTarget::Address { address } => Target::Address {
                            address: tables::hex(address),
                        },
                        SearchTarget::Range { start, end } => Target::Range {
                            start: tables::hex(start),
                            end: tables::hex(end),
                        },
                    })
                    .collect(),
            },
            Err(error) => Search::Error { error },
        }
    }

    fn table_query(
        &mut self,
        view: &str,
        table: &str,
        request: &TableRequest,
    ) -> Result<String, String> {
        let (kind, key) = table_kind(table)?;
        let rows = match &request.rows {
            None => request.query.subset.clone(),
            Some(Subset::Frame(index)) => Some(self.an.frame(&self.model, *index)),
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
            subset: rows,
            ..request.query.clone()
        };
        self.ensure_table(kind, key);
        let t = self.tables.get(key).ok_or("table not built")?;
        let v = t.view(&query)?;
        let out = json_text(&TableAnswer {
            total: v.len(),
            columns: t.specs(),
        })?;
        self.views.insert(view.to_string(), (kind, v));
        Ok(out)
    }

    fn table_page(&mut self, view: &str, offset: usize, limit: usize) -> Result<String, String> {
        let kind = self
            .views
            .get(view)
            .map(|v| v.0)
            .ok_or_else(|| format!("no table view {view}"))?;
        let key = kind.key();
        self.ensure_table(kind, key);
        let (Some((_, v)), Some(t)) = (self.views.get(view), self.tables.get(key)) else {
            return Err(format!("no table view {view}"));
        };
        json_text(&v.page(t, offset, limit))
    }

    fn table_position(&self, view: &str, key: u32) -> Option<usize> {
        let (kind, v) = self.views.get(view)?;
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
        v.position(row?)
    }

    /// Where each conflict (the first 2000) starts: `[first shared index, lowest shared offset,
    /// tensor a, tensor b]`.
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

    fn tensor_row(&self, id: u32) -> Result<u32, String> {
        self.model
            .tensor_row(id)
            .ok_or_else(|| format!("no data tensor %{id}T in this dump"))
    }

    /// Builds the typed table on first use (the tensors table of a large dump takes a while).
    fn ensure_table(&mut self, kind: SomasTable, key: &'static str) {
        let (model, an) = (&self.model, &self.an);
        self.tables
            .entry(key)
            .or_insert_with(|| tables::to_table(model, an, kind));
    }

    fn files(&self, request: &ExportRequest) -> Result<Vec<out::OutFile>, String> {
        let q = self.queries(request)?;
        Ok(out::file_set(
            &self.model,
            &self.an,
            &self.summary,
            &q,
            &self.log,
        ))
    }

    /// The queries of an export request.
    fn queries(&self, req: &ExportRequest) -> Result<out::QuerySet, String> {
        Ok(out::QuerySet {
            node: match req.node {
                Some(i) => Some(
                    self.model
                        .nodes
                        .row_of_index(i)
                        .ok_or_else(|| format!("no node with execution index {i}"))?,
                ),
                None => None,
            },
            tensor: req.tensor.map(|id| self.tensor_row(id)).transpose()?,
            address: req.address.as_deref().map(address).transpose()?,
            range: match &req.range {
                Some((a, b)) => Some((address(a)?, address(b)?)),
                None => None,
            },
        })
    }
}
