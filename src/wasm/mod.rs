//! The JavaScript-facing API: the only module that knows about wasm-bindgen and web-sys.
//!
//! It is deliberately thin. Browser `File`s become [`file_source::FileSource`]s (the core's
//! [`crate::source::Source`]), results cross the boundary as JSON text produced by the same serde
//! types the CLI prints, so a number on the page is the number `memlens … --json` prints.
//!
//! Everything here runs in a dedicated Web Worker: `FileReaderSync` and rayon's blocking waits are
//! not allowed on the page's main thread.

use wasm_bindgen::prelude::*;

pub mod file_source;
mod profiler;
mod session;
mod somas;

pub use profiler::{memory_bytes, ProfilerView};
pub use session::Session;
pub use somas::SomasView;

#[cfg(feature = "threads")]
pub use wasm_bindgen_rayon::init_thread_pool;

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
