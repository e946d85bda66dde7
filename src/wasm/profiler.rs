//! The torch_npu views' questions, converted: the job lives in the core
//! ([`crate::profiler::view::JobView`]); requests arrive as JSON text, answers leave as JSON text
//! or typed arrays.

use super::session::Session;
use super::{bulk_object, err};
use crate::chart::Viewport;
use crate::diag::Diagnostic;
use crate::input::{CountingOpener, FileOpener};
use crate::profiler::view::{JobView, Request};
use crate::source::Source;
use js_sys::{Array, Function, Object, Uint8Array};
use wasm_bindgen::prelude::*;

/// A torch_npu job of a drop: construct, read `plan`, `analyze`, then ask.
#[wasm_bindgen]
pub struct ProfilerView {
    view: JobView,
}

#[wasm_bindgen]
impl ProfilerView {
    /// Groups the run folders of `session` (classified when the files were dropped) into ranks.
    #[wasm_bindgen(constructor)]
    pub fn new(session: &mut Session) -> ProfilerView {
        ProfilerView {
            view: JobView::open(session.set_mut()),
        }
    }

    /// The job's ranks as units of reading (JSON list of `RankPart`: role, rank, step, run
    /// folders, bytes), for the page to share them among its workers.
    pub fn parts(&self, session: &Session) -> Result<String, JsError> {
        serde_json::to_string(&self.view.parts(session.set())).map_err(err)
    }

    /// What discovery said of the whole job beside its ranks (JSON `Discovery`: its diagnostics
    /// and the files not analysed), for the overview of a job read by a worker pool.
    pub fn discovery(&self) -> Result<String, JsError> {
        serde_json::to_string(&self.view.discovery()).map_err(err)
    }

    /// Keeps only the ranks with a run folder among `run_dirs` (a JSON list of paths); call
    /// before `analyze`, then `request` answers the plan of what is kept.
    #[wasm_bindgen(js_name = keepRanks)]
    pub fn keep_ranks(&mut self, session: &Session, run_dirs: &str) -> Result<(), JsError> {
        let dirs: Vec<String> = serde_json::from_str(run_dirs)
            .map_err(|e| err(format!("not a list of run folders: {e}")))?;
        self.view.keep_ranks(session.set(), &dirs);
        Ok(())
    }

    /// Reads the run folders holding one of the database exports `dbs` (a JSON list of paths, the
    /// page's files over its per-file limit) from their text files instead, where they have any;
    /// answers the JSON list of the exports left out. Call before `analyze` (after `keepRanks`).
    #[wasm_bindgen(js_name = leaveOutDbs)]
    pub fn leave_out_dbs(&mut self, session: &Session, dbs: &str) -> Result<String, JsError> {
        let dbs: Vec<String> =
            serde_json::from_str(dbs).map_err(|e| err(format!("not a list of files: {e}")))?;
        serde_json::to_string(&self.view.leave_out_dbs(session.set(), &dbs)).map_err(err)
    }

    /// Reads and analyses every rank (`progress(path, done, total)` per chunk read). Throws
    /// `the load was stopped` once the page stopped the load (Cancel, a new drop; its stop flag),
    /// keeping nothing of it.
    pub fn analyze(&mut self, session: &Session, progress: &Function) -> Result<(), JsError> {
        let report = |path: &str, done: u64, total: u64| {
            let _ = progress.call3(
                &JsValue::NULL,
                &JsValue::from_str(path),
                &JsValue::from_f64(done as f64),
                &JsValue::from_f64(total as f64),
            );
        };
        let files = Stoppable(session.set());
        self.view
            .try_analyze(&CountingOpener::new(&files, &report))
            .map_err(err)
    }

    /// Answers a request (`{"method", "params"}`, see [`Request`]) with JSON text.
    pub fn request(&mut self, request: &str) -> Result<String, JsError> {
        let r: Request =
            serde_json::from_str(request).map_err(|e| err(format!("bad request: {e}")))?;
        self.view.answer(&r).map_err(err)
    }

    /// Curves of rank `rank` over `[x0, x1)` (relative ns) in `columns` columns, for the
    /// `component:metric` pairs of `spec` (typed arrays).
    pub fn curves(
        &self,
        rank: usize,
        x0: f64,
        x1: f64,
        columns: u32,
        spec: &str,
    ) -> Result<Array, JsError> {
        let curves = self.view.curves(rank, x0, x1, columns, spec).map_err(err)?;
        Ok(curves.iter().map(bulk_object).collect())
    }

    /// The allocation bars a viewport (relative ns × bytes) shows on a `px_w × px_h` canvas.
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
        let viewport = Viewport { x0, x1, y0, y1 };
        let answer = self
            .view
            .timeline(rank, &viewport, px_w, px_h, max_rects as usize)
            .map_err(err)?;
        Ok(bulk_object(&answer))
    }

    /// An export of the job, byte for byte what the CLI writes (`memory_events.csv`, …,
    /// `summary.json`).
    pub fn export(&self, name: &str) -> Result<Uint8Array, JsError> {
        let bytes = self.view.export(name).map_err(err)?;
        Ok(Uint8Array::from(bytes.as_slice()))
    }
}

/// A drop's files whose load the page may stop: [`FileOpener::stopped`] asks the page's stop flag
/// (the `File`s themselves ask it as they are parsed, [`super::file_source::FileSource`]).
struct Stoppable<'a>(&'a dyn FileOpener);

impl FileOpener for Stoppable<'_> {
    fn open(&self, path: &str) -> Result<Box<dyn Source + '_>, Diagnostic> {
        self.0.open(path)
    }

    fn stopped(&self) -> bool {
        super::file_source::load_stopped()
    }
}

/// Bytes of linear memory the WebAssembly instance holds now. Memory only grows, so after a load
/// this is the peak the load needed.
#[wasm_bindgen(js_name = memoryBytes)]
pub fn memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) as f64) * 65536.0
}
