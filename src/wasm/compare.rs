//! A comparison of two drops, converted: both sides load through the core's
//! [`crate::compare::load`], the answer is the JSON `memlens compare --json` prints, the exports
//! are the bytes of `memlens compare --out`.

use super::err;
use super::session::Session;
use crate::compare::curves::{profiler_overlay, somas_overlay, Align};
use crate::compare::load::{compare_sides, load_side, pair_positions, Side};
use crate::compare::{CompareOptions, Comparison};
use crate::profiler::memory_record::Metric;
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

/// The comparison of a baseline and a candidate session.
#[wasm_bindgen]
pub struct CompareView {
    comparison: Comparison,
    files: Vec<(String, Vec<u8>)>,
    // Both sides stay loaded: the overlaid curves are drawn from them on request.
    sides: (Side, Side),
    opts: CompareOptions,
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
        Ok(CompareView {
            comparison,
            files,
            sides: (b, c),
            opts,
        })
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

    /// Rank pair `pair`'s position in each side's job (`[baseline, candidate]`, the rank index
    /// of each side's torch_npu view); `undefined` when there is no such pair.
    #[wasm_bindgen(js_name = pairRanks)]
    pub fn pair_ranks(&self, pair: u32) -> Option<Vec<u32>> {
        let Comparison::Profiler(cmp) = &self.comparison else {
            return None;
        };
        let key = &cmp.pairs.get(pair as usize)?.key;
        let (b, c) = pair_positions(&self.sides.0, &self.sides.1, key)?;
        Some(vec![u32::try_from(b).ok()?, u32::try_from(c).ok()?])
    }

    /// The two sides' curves overlaid with their difference, as JSON
    /// ([`crate::compare::curves::Overlay`]): for profiler runs rank pair `pair` (its index in the
    /// comparison's `pairs`), `metric` `allocated` or `reserved`, `align` `start` or `step`; for
    /// SOMAS the in-use along execution order (`pair`, `metric` and `align` unused). At most
    /// `max_points` points.
    pub fn overlay(
        &self,
        pair: u32,
        metric: &str,
        align: &str,
        max_points: u32,
    ) -> Result<String, JsError> {
        let max = max_points as usize;
        let o = match (&self.sides, &self.comparison) {
            ((Side::Profiler(b), Side::Profiler(c)), Comparison::Profiler(cmp)) => {
                let key = &cmp
                    .pairs
                    .get(pair as usize)
                    .ok_or_else(|| err(format!("no rank pair {pair}")))?
                    .key;
                let metric = match metric {
                    "reserved" => Metric::Reserved,
                    _ => Metric::Allocated,
                };
                let align = if align == "step" {
                    Align::Step
                } else {
                    Align::Start
                };
                profiler_overlay(b, c, &self.opts, key, metric, align, max)
                    .ok_or_else(|| err(format!("no rank pair {pair}")))?
            }
            ((Side::Somas(b), Side::Somas(c)), _) => somas_overlay(&b.0, &b.1, &c.0, &c.1, max),
            _ => return Err(err("the two sides are of different kinds")),
        };
        serde_json::to_string(&o).map_err(err)
    }
}
