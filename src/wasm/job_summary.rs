//! A job summary file's questions, converted: the view model is the core's
//! [`crate::profiler::summary_view::SummaryView`]; requests arrive as JSON text, answers leave as
//! JSON text.

use super::err;
use super::session::Session;
use crate::profiler::discover::Discovery;
use crate::profiler::summary::RankSummary;
use crate::profiler::summary_view::{Request, SummaryView};
use wasm_bindgen::prelude::*;

/// The rank summary of a rank the page could not read (its reader died): `part` is the JSON of
/// one part of `ProfilerView.parts` (role, rank, step, run folders), `reason` says why; the job
/// overview then lists the rank as failed, with the reason.
#[wasm_bindgen(js_name = failedRankSummary)]
pub fn failed_rank_summary(part: &str, reason: &str) -> Result<String, JsError> {
    #[derive(serde::Deserialize)]
    struct Part {
        role: String,
        rank: Option<u32>,
        step: Option<u32>,
        run_dirs: Vec<String>,
    }
    let p: Part =
        serde_json::from_str(part).map_err(|e| err(format!("not a part of a job: {e}")))?;
    let summary = RankSummary::failed(p.role, p.rank, p.step, p.run_dirs, reason.to_string());
    serde_json::to_string(&summary).map_err(err)
}

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
    /// nanoseconds since the epoch stay exact), in any order, with what the discovery of the
    /// whole drop said beside them (`discovery`: `ProfilerView.discovery`'s JSON).
    #[wasm_bindgen(js_name = fromRanks)]
    pub fn from_ranks(ranks: &str, discovery: &str) -> Result<JobSummaryView, JsError> {
        let ranks: Vec<RankSummary> = serde_json::from_str(ranks)
            .map_err(|e| err(format!("not a list of rank summaries: {e}")))?;
        let discovery: Discovery = serde_json::from_str(discovery)
            .map_err(|e| err(format!("not what discovery said of a job: {e}")))?;
        Ok(JobSummaryView {
            view: SummaryView::from_parts("the dropped job", ranks, discovery),
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
