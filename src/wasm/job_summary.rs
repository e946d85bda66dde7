//! A job summary file's questions, converted: the view model is the core's
//! [`crate::profiler::summary_view::SummaryView`]; requests arrive as JSON text, answers leave as
//! JSON text.

use super::err;
use super::session::Session;
use crate::profiler::summary::RankSummary;
use crate::profiler::summary_view::{Request, SummaryView};
use wasm_bindgen::prelude::*;

/// An opened job summary held in the worker.
#[wasm_bindgen]
pub struct JobSummaryView {
    view: SummaryView,
}

#[wasm_bindgen]
impl JobSummaryView {
    /// Reads the job summary at `path` of `session` (as the inventory lists it).
    #[wasm_bindgen(constructor)]
    pub fn new(session: &Session, path: &str) -> Result<JobSummaryView, JsError> {
        let src = session.source(path).map_err(err)?;
        let view = SummaryView::open(&*src).map_err(err)?;
        Ok(JobSummaryView { view })
    }

    /// The job of the rank summaries in `ranks` (a JSON array of rank summaries, as text so that
    /// nanoseconds since the epoch stay exact), in any order.
    #[wasm_bindgen(js_name = fromRanks)]
    pub fn from_ranks(ranks: &str) -> Result<JobSummaryView, JsError> {
        let ranks: Vec<RankSummary> = serde_json::from_str(ranks)
            .map_err(|e| err(format!("not a list of rank summaries: {e}")))?;
        Ok(JobSummaryView {
            view: SummaryView::from_ranks("the dropped job", ranks),
        })
    }

    /// The job as a job summary file holds it, byte for byte what `memlens profiler --summary`
    /// writes for the same ranks.
    #[wasm_bindgen(js_name = fileText)]
    pub fn file_text(&self) -> Result<String, JsError> {
        self.view.job().to_json().map_err(err)
    }

    /// Answers a request (`{"method", "params"}`, see [`Request`]) with JSON text.
    pub fn request(&mut self, request: &str) -> Result<String, JsError> {
        let r: Request =
            serde_json::from_str(request).map_err(|e| err(format!("bad request: {e}")))?;
        self.view.answer(&r).map_err(err)
    }
}
