//! A browser `File` as a core [`Source`], read through the worker's one read hook.
//!
//! The hook is the JavaScript function `memlensReadSlice(file, start, end)` of the worker's global
//! scope (installed by `www/file-reads.js`): it returns the bytes `[start, end)` of `file` as a
//! `Uint8Array`, or throws. Everything around a read in the page (the stop flag of a cancelled load,
//! serving the slice from the read-ahead helper, the benchmark's timing) happens there, in one
//! place, so the engine asks for bytes and nothing else.
//!
//! Each call of the hook costs about the same whatever its size (a `Blob.slice`, a
//! `FileReaderSync` call, a new buffer): small reads leave most of a file's read time in that cost.
//! So a `File` asks the streaming readers for reads of [`FILE_READ`] bytes at least
//! ([`Source::preferred_read`]); the page may state another size (`memlensReadSize()`, the
//! benchmark's `?readSize=MiB`).
//!
//! A read cannot be interrupted, and a large one takes a while to parse: so the readers also ask
//! [`Source::check_stop`] as they parse, which asks the page's stop flag through the hook
//! `memlensStopped()` (also `www/file-reads.js`; see [`load_stopped`]).

use crate::source::{Source, SourceError};
use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use web_sys::File;

#[wasm_bindgen]
extern "C" {
    /// The worker's read hook (see the module's doc); `catch`: a failed read is an error here.
    #[wasm_bindgen(js_name = memlensReadSlice, catch)]
    fn read_slice(file: &File, start: f64, end: f64) -> Result<Uint8Array, JsValue>;

    /// The read size the page asks for, in bytes, when it states one (`catch`: a worker without
    /// this global has none).
    #[wasm_bindgen(js_name = memlensReadSize, catch)]
    fn page_read_size() -> Result<JsValue, JsValue>;

    /// True once the page stopped this worker's load (its stop flag, an `Atomics.load`). `catch`:
    /// a scope without the global (the threaded engine's own threads, a worker without a stop
    /// flag) throws, and has no stop to see.
    #[wasm_bindgen(js_name = memlensStopped, catch)]
    fn page_stopped() -> Result<JsValue, JsValue>;
}

thread_local! {
    /// This thread's scope has no `memlensStopped` (it threw once): not asked again.
    static NO_STOP_HOOK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the page stopped this worker's load. Asked on the thread that asks, whatever it is:
/// a scope without the hook answers no, once, and is not asked again (so a question costs one
/// call to the page where the hook exists, and nothing where it does not). Whether the thread is
/// the worker's own is not guessed from rayon (`current_thread_index()` is `Some` on the
/// worker's own thread in the single-threaded build).
pub fn load_stopped() -> bool {
    if NO_STOP_HOOK.with(|c| c.get()) {
        return false;
    }
    match page_stopped() {
        Ok(v) => v.is_truthy(),
        Err(_) => {
            NO_STOP_HOOK.with(|c| c.set(true));
            false
        }
    }
}

/// Bytes per read of a `File` unless the page states another size: measured on the page
/// (`docs/benchmarks.md`, *Reads of a File*), where `FileReaderSync` reads 1 MiB slices at about a
/// third of the speed of 16 MiB ones. A read cannot be interrupted, so this also bounds how long a Cancel waits for one.
pub const FILE_READ: usize = 16 << 20;

/// The most a page may ask for: one read is one buffer in the worker and one in wasm memory.
const MAX_FILE_READ: usize = 256 << 20;

/// The read size for this worker's `File`s: the page's, when it states a usable one, else
/// [`FILE_READ`].
fn file_read_size() -> usize {
    page_read_size()
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|n| n.is_finite() && *n >= 1.0)
        .map_or(FILE_READ, |n| (n as usize).min(MAX_FILE_READ))
}

/// A `File` (or any `Blob`) read in slices on the worker that owns it.
pub struct FileSource {
    name: String,
    file: File,
    len: u64,
    /// Bytes per read the readers are asked for (see [`FILE_READ`]).
    read: usize,
}

impl FileSource {
    /// Wraps `file`, reported under the relative path `name`.
    pub fn new(name: String, file: File) -> Result<Self, SourceError> {
        let len = file.size() as u64;
        Ok(FileSource {
            name,
            file,
            len,
            read: file_read_size(),
        })
    }
}

impl Source for FileSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn preferred_read(&self) -> usize {
        self.read
    }

    fn check_stop(&self, offset: u64) -> Result<(), SourceError> {
        if load_stopped() {
            return Err(SourceError::stopped(&self.name, offset));
        }
        Ok(())
    }

    fn may_stop(&self) -> bool {
        true
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, SourceError> {
        if offset >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let end = (offset + buf.len() as u64).min(self.len);
        let bytes = read_slice(&self.file, offset as f64, end as f64).map_err(|e| SourceError {
            name: self.name.clone(),
            offset,
            message: describe(&e),
        })?;
        let n = (bytes.length() as usize).min(buf.len());
        bytes.subarray(0, n as u32).copy_to(&mut buf[..n]);
        Ok(n)
    }
}

/// The message of a DOMException or Error, for the user.
fn describe(e: &JsValue) -> String {
    js_sys::Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| format!("{e:?}"))
}
