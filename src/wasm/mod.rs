//! The JavaScript-facing API: the only module that knows about wasm-bindgen and web-sys.
//!
//! It only converts. Browser `File`s become [`file_source::FileSource`]s (the core's
//! [`crate::source::Source`]) in the core's input set; requests arrive as JSON text and are the
//! serde types of each family's `view` module, answers leave as the JSON text of the same serde
//! types the CLI prints (a number on the page is the number `memlens … --json` prints) or, for
//! the [`crate::bulk::Bulk`] answers drawn at every frame, as typed arrays.
//!
//! Everything here runs in a dedicated Web Worker: `FileReaderSync` and rayon's blocking waits are
//! not allowed on the page's main thread.

use crate::bulk::{Bulk, Field};
use js_sys::{Float32Array, Float64Array, Object, Reflect, Uint32Array, Uint8Array};
use wasm_bindgen::prelude::*;

mod compare;
pub mod file_source;
mod job_summary;
mod profiler;
mod session;
mod snapshot;
mod somas;
mod warm_up;

pub use compare::CompareView;
pub use job_summary::{failed_rank_summary, JobSummaryView};
pub use profiler::{memory_bytes, ProfilerView};
pub use session::Session;
pub use snapshot::SnapshotSession;
pub use somas::SomasView;
pub use warm_up::warm_up_job;

#[cfg(feature = "threads")]
pub use wasm_bindgen_rayon::init_thread_pool;

/// Makes every thread of the threaded engine's pool return to its worker's event loop, so that
/// the worker ends at once when the page terminates it (a thread waiting for work never returns
/// by itself, and the browser then waits 2 s before stopping it by force). Each thread throws out
/// of its run loop; the pool is of no use afterwards: call it only on a worker about to end, and
/// not while a wasm call is under way on it.
#[cfg(feature = "threads")]
#[wasm_bindgen(js_name = stopThreads)]
pub fn stop_threads() {
    rayon::spawn_broadcast(|_| wasm_bindgen::throw_str("the engine's threads are stopped"));
}

/// Describes the running engine: `{"threads": n, "build": "threads" | "single"}`.
///
/// `threads` is the size of rayon's pool, so it reads 1 in the single-threaded build and the
/// number passed to `initThreadPool` in the threaded one.
#[wasm_bindgen(js_name = engineInfo)]
pub fn engine_info() -> String {
    let build = if cfg!(feature = "threads") {
        "threads"
    } else {
        "single"
    };
    serde_json::json!({
        "threads": rayon::current_num_threads(),
        "build": build,
        "version": env!("CARGO_PKG_VERSION"),
    })
    .to_string()
}

/// A core error as a JavaScript `Error`.
fn err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// A bulk answer as a plain object of numbers, strings and typed arrays (the arrays are copies
/// the page may transfer).
fn bulk_object(answer: &impl Bulk) -> Object {
    let o = Object::new();
    for (name, field) in answer.fields() {
        let value: JsValue = match field {
            Field::Num(x) => x.into(),
            Field::Text(s) => s.into(),
            Field::F64(v) => Float64Array::from(v).into(),
            Field::F32(v) => Float32Array::from(v).into(),
            Field::U32(v) => Uint32Array::from(v).into(),
            Field::U8(v) => Uint8Array::from(v).into(),
        };
        // Reflect::set on a plain object cannot fail.
        let _ = Reflect::set(&o, &JsValue::from_str(name), &value);
    }
    o
}
