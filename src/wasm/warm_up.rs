//! A small torch_npu job made in memory, for a fresh engine to read once before any drop.
//!
//! V8 runs new wasm code in its baseline compiler until the optimising one has compiled each hot
//! function, and a call already running keeps the baseline code. A pool reader that reads this
//! job right after its engine starts has the hot functions of a rank's analysis optimised (in the
//! background, shared by every worker of the tab that runs the same module) before a drop needs
//! them. The page reads it through the same requests as a real rank; this module only hands over
//! the files the core's generator writes.

use super::err;
use crate::profiler::generate::{generate, GenSpec};
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

/// The files of a one-rank job with a trace of about `trace_bytes` bytes and `rows`
/// operator_memory rows: an array of `[path, Uint8Array]` pairs, paths relative to the job.
#[wasm_bindgen(js_name = warmUpJob)]
pub fn warm_up_job(trace_bytes: u32, rows: u32) -> Result<Array, JsError> {
    let spec = GenSpec {
        roles: 1,
        ranks: 1,
        trace_bytes: u64::from(trace_bytes),
        rows,
        steps: 2,
        seed: 9,
        outlier: false,
    };
    let files = Array::new();
    generate(&spec, &mut |path, bytes| {
        let pair = Array::new();
        pair.push(&JsValue::from_str(path));
        pair.push(&Uint8Array::from(bytes.as_slice()));
        files.push(&pair);
        Ok(())
    })
    .map_err(err)?;
    Ok(files)
}
