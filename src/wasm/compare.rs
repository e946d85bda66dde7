//! A comparison of two drops, converted: both sides load through the core's
//! [`crate::compare::load`], the answer is the JSON `memlens compare --json` prints, the exports
//! are the bytes of `memlens compare --out`.

use super::err;
use super::session::Session;
use crate::compare::load::{compare_sides, load_side};
use crate::compare::{CompareOptions, Comparison};
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

/// The comparison of a baseline and a candidate session.
#[wasm_bindgen]
pub struct CompareView {
    comparison: Comparison,
    files: Vec<(String, Vec<u8>)>,
}

#[wasm_bindgen]
impl CompareView {
    /// Loads both sessions (their profiler runs, else their one SOMAS dump) and compares them;
    /// `base_step` / `candidate_step` (profiler, optional) compare one `ProfilerStep#N` each.
    #[wasm_bindgen(constructor)]
    pub fn new(
        base: &mut Session,
        candidate: &mut Session,
        base_step: Option<f64>,
        candidate_step: Option<f64>,
    ) -> Result<CompareView, JsError> {
        let b = load_side(base.set_mut(), "baseline").map_err(err)?;
        let c = load_side(candidate.set_mut(), "candidate").map_err(err)?;
        let step = |s: Option<f64>| s.filter(|x| x.is_finite() && *x >= 0.0).map(|x| x as u64);
        let opts = CompareOptions {
            base_step: step(base_step),
            candidate_step: step(candidate_step),
        };
        let comparison = compare_sides(&b, &c, &opts).map_err(err)?;
        let files = crate::export::compare::files(&comparison).map_err(err)?;
        Ok(CompareView { comparison, files })
    }

    /// The comparison as JSON text (`memlens compare --json`).
    pub fn json(&self) -> Result<String, JsError> {
        crate::export::compare::summary_json(&self.comparison).map_err(err)
    }

    /// The names of the export files, in the order `--out` writes them.
    pub fn names(&self) -> Array {
        self.files
            .iter()
            .map(|(n, _)| JsValue::from_str(n))
            .collect()
    }

    /// One export file's bytes (`memlens compare --out` writes the same).
    pub fn export(&self, name: &str) -> Result<Uint8Array, JsError> {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| Uint8Array::from(b.as_slice()))
            .ok_or_else(|| err(format!("no export named {name}")))
    }
}
