//! A browser `File` as a core [`Source`], read through the worker's one read hook.
//!
//! The hook is the JavaScript function `memlensReadSlice(file, start, end)` of the worker's global
//! scope (installed by `www/file-reads.js`): it returns the bytes `[start, end)` of `file` as a
//! `Uint8Array`, or throws. Everything around a read in the page (the stop flag of a cancelled load,
//! serving the slice from the read-ahead helper, the benchmark's timing) happens there, in one
//! place, so the engine asks for bytes and nothing else.

use crate::source::{Source, SourceError};
use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use web_sys::File;

#[wasm_bindgen]
extern "C" {
    /// The worker's read hook (see the module's doc); `catch`: a failed read is an error here.
    #[wasm_bindgen(js_name = memlensReadSlice, catch)]
    fn read_slice(file: &File, start: f64, end: f64) -> Result<Uint8Array, JsValue>;
}

/// A `File` (or any `Blob`) read in slices on the worker that owns it.
pub struct FileSource {
    name: String,
    file: File,
    len: u64,
}

impl FileSource {
    /// Wraps `file`, reported under the relative path `name`.
    pub fn new(name: String, file: File) -> Result<Self, SourceError> {
        let len = file.size() as u64;
        Ok(FileSource { name, file, len })
    }
}

impl Source for FileSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn len(&self) -> u64 {
        self.len
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
