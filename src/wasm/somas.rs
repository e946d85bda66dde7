//! The SOMAS views' questions, converted: the session lives in the core
//! ([`crate::somas::view::SomasSession`]); requests arrive as JSON text, answers leave as JSON
//! text or typed arrays.

use super::session::Session;
use super::{bulk_object, err};
use crate::chart::Viewport;
use crate::somas::view::{ExportRequest, Request, SomasSession};
use js_sys::{Object, Uint8Array};
use wasm_bindgen::prelude::*;

/// A loaded SOMAS plan, held by the worker between the views' questions.
#[wasm_bindgen]
pub struct SomasView {
    session: SomasSession,
}

fn export_request(text: &str) -> Result<ExportRequest, JsError> {
    if text.trim().is_empty() {
        return Ok(ExportRequest::default());
    }
    serde_json::from_str(text).map_err(|e| err(format!("bad export request: {e}")))
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
        let mut report = |label: &str, done: u64, total: u64| {
            let _ = progress.call3(
                &JsValue::NULL,
                &(done as f64).into(),
                &(total as f64).into(),
                &label.into(),
            );
        };
        let session = SomasSession::open(
            session.set(),
            dump,
            task_info.as_deref(),
            &mut report,
            &js_sys::Date::now,
        )
        .map_err(err)?;
        Ok(SomasView { session })
    }

    /// Answers a request (`{"method", "params"}`, see [`Request`]) with JSON text.
    pub fn request(&mut self, request: &str) -> Result<String, JsError> {
        let r: Request =
            serde_json::from_str(request).map_err(|e| err(format!("bad request: {e}")))?;
        self.session.answer(&r).map_err(err)
    }

    /// The curves over execution indices `[x0, x1)` in at most `columns` columns (typed arrays).
    pub fn curves(&self, x0: f64, x1: f64, columns: u32) -> Object {
        bulk_object(&self.session.curves(x0, x1, columns))
    }

    /// The tensor rectangles visible in a viewport on a `px_w × px_h` canvas (typed arrays).
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
        let viewport = Viewport { x0, x1, y0, y1 };
        bulk_object(
            &self
                .session
                .rects(&viewport, px_w, px_h, max_rects as usize),
        )
    }

    /// The memory frame at execution index `index` (typed arrays).
    pub fn frame(&self, index: u32) -> Object {
        bulk_object(&self.session.frame(index))
    }

    /// The export of `request` (JSON `{node, tensor, address, range}`) as one zip archive.
    #[wasm_bindgen(js_name = exportZip)]
    pub fn export_zip(&self, request: &str) -> Result<Uint8Array, JsError> {
        let zip = self
            .session
            .export_zip(&export_request(request)?)
            .map_err(err)?;
        Ok(Uint8Array::from(zip.as_slice()))
    }

    /// One file of the export of `request`, by its path in the export list.
    #[wasm_bindgen(js_name = exportFile)]
    pub fn export_file(&self, request: &str, path: &str) -> Result<Uint8Array, JsError> {
        let bytes = self
            .session
            .export_file(&export_request(request)?, path)
            .map_err(err)?;
        Ok(Uint8Array::from(bytes.as_slice()))
    }
}
