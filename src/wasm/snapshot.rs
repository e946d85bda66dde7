//! The snapshot views' questions, converted: requests arrive as JavaScript objects and are
//! deserialised into the core's request types ([`crate::snapshot::view`]); answers leave as the
//! JSON of the core's answer types, or — for what a view asks at every frame (curve columns,
//! visible rectangles) — as typed arrays. No logic lives here.

use super::session::Session;
use super::{bulk_object, err};
use crate::input::{CountingOpener, FileOpener};
use crate::snapshot::view::{
    CurveRequest, HitRequest, PositionRequest, SnapshotView, TableRequest, ViewRequest,
};
use js_sys::{Object, Uint8Array};
use wasm_bindgen::prelude::*;

fn request<T: serde::de::DeserializeOwned>(v: JsValue) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(v).map_err(|e| err(format!("bad request: {e}")))
}

fn json<T: serde::Serialize>(v: &T) -> Result<String, JsError> {
    serde_json::to_string(v).map_err(err)
}

/// An opened memory snapshot held in the worker.
#[wasm_bindgen]
pub struct SnapshotSession {
    view: SnapshotView,
    read_ms: f64,
}

#[wasm_bindgen]
impl SnapshotSession {
    /// Reads and analyses the snapshot at `path` of the session; `progress(done, total, label)`
    /// follows the reading.
    pub fn open(
        session: &Session,
        path: &str,
        progress: &js_sys::Function,
    ) -> Result<SnapshotSession, JsError> {
        let t0 = js_sys::Date::now();
        let report = |name: &str, done: u64, total: u64| {
            let _ = progress.call3(
                &JsValue::NULL,
                &(done as f64).into(),
                &(total as f64).into(),
                &JsValue::from_str(&format!("reading {name}")),
            );
        };
        let opener = CountingOpener::new(session.set(), &report);
        let src = opener.open(path).map_err(err)?;
        let view = SnapshotView::open_timed(&*src, &js_sys::Date::now).map_err(err)?;
        Ok(SnapshotSession {
            view,
            read_ms: js_sys::Date::now() - t0,
        })
    }

    /// The overview (summary and devices) as JSON, with the time reading took and where it went
    /// (`timings`: the core's steps and the overview's own time, ms).
    pub fn overview(&mut self) -> Result<String, JsError> {
        self.view
            .overview_answer(self.read_ms, &js_sys::Date::now)
            .map_err(err)
    }

    /// `summary.json`, byte for byte what `memlens snapshot --json` prints.
    #[wasm_bindgen(js_name = summaryJson)]
    pub fn summary_json(&self) -> String {
        self.view.summary_json()
    }

    /// Curve columns as typed arrays (see the core's `CurveAnswer`).
    pub fn curve(&mut self, req: JsValue) -> Result<Object, JsError> {
        let r: CurveRequest = request(req)?;
        Ok(bulk_object(&self.view.curve(&r).map_err(err)?))
    }

    /// The stacked timeline of a window: `{x, y, w, h, cls, id, visible, individual, merged}`.
    pub fn timeline(&mut self, req: JsValue) -> Result<Object, JsError> {
        let r: ViewRequest = request(req)?;
        Ok(bulk_object(&self.view.timeline_view(&r).map_err(err)?))
    }

    /// The allocation under a point of the timeline (JSON, `null` when none).
    #[wasm_bindgen(js_name = timelineHit)]
    pub fn timeline_hit(&mut self, req: JsValue) -> Result<String, JsError> {
        let r: HitRequest = request(req)?;
        json(&self.view.timeline_hit(&r).map_err(err)?)
    }

    /// One allocation of the timeline by element index (JSON).
    pub fn allocation(&mut self, device: f64, element: u32) -> Result<String, JsError> {
        json(&self.view.allocation(device as i64, element).map_err(err)?)
    }

    /// One block of the allocator state by block index (JSON).
    pub fn block(&mut self, device: f64, block: u32) -> Result<String, JsError> {
        json(&self.view.block(device as i64, block).map_err(err)?)
    }

    /// The allocator state view of a window (same shape as [`SnapshotSession::timeline`]).
    pub fn state(&mut self, req: JsValue) -> Result<Object, JsError> {
        let r: ViewRequest = request(req)?;
        Ok(bulk_object(&self.view.state_view(&r).map_err(err)?))
    }

    /// The block or segment under a point of the allocator state view (JSON, `null` when none).
    #[wasm_bindgen(js_name = stateHit)]
    pub fn state_hit(&mut self, req: JsValue) -> Result<String, JsError> {
        let r: HitRequest = request(req)?;
        json(&self.view.state_hit(&r).map_err(err)?)
    }

    /// A page of a table (JSON).
    pub fn table(&mut self, req: JsValue) -> Result<String, JsError> {
        let r: TableRequest = request(req)?;
        let a = self.view.table(&r).map_err(err)?;
        json(&a)
    }

    /// Where a selected row or group sits in a table under a query (JSON: its index, or `null`
    /// when the query hides it).
    pub fn position(&mut self, req: JsValue) -> Result<String, JsError> {
        let r: PositionRequest = request(req)?;
        json(&self.view.position(&r).map_err(err)?)
    }

    /// The export file `name`'s bytes.
    pub fn export(&self, name: &str) -> Result<Uint8Array, JsError> {
        let b = self.view.export(name).map_err(err)?;
        Ok(Uint8Array::from(&b[..]))
    }
}
