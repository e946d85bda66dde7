//! A browser `File` as a core [`Source`], read synchronously with `FileReaderSync`.

use crate::source::{Source, SourceError};
use web_sys::{File, FileReaderSync};

/// A `File` (or any `Blob`) read in slices on the worker that owns it.
pub struct FileSource {
    name: String,
    file: File,
    len: u64,
    reader: FileReaderSync,
}

impl FileSource {
    /// Wraps `file`, reported under the relative path `name`.
    pub fn new(name: String, file: File) -> Result<Self, SourceError> {
        let reader = FileReaderSync::new().map_err(|e| SourceError {
            name: name.clone(),
            offset: 0,
            message: format!("FileReaderSync is not available here: {e:?}"),
        })?;
        let len = file.size() as u64;
        Ok(FileSource {
            name,
            file,
            len,
            reader,
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

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, SourceError> {
        if offset >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let end = (offset + buf.len() as u64).min(self.len);
        let fail = |what: String| SourceError {
            name: self.name.clone(),
            offset,
            message: what,
        };
        let blob = self
            .file
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(|e| fail(format!("slice failed: {}", describe(&e))))?;
        let array = self
            .reader
            .read_as_array_buffer(&blob)
            .map_err(|e| fail(describe(&e)))?;
        let bytes = js_sys::Uint8Array::new(&array);
        let n = (bytes.length() as usize).min(buf.len());
        bytes.subarray(0, n as u32).copy_to(&mut buf[..n]);
        Ok(n)
    }
}

/// The message of a DOMException or Error, for the user.
fn describe(e: &wasm_bindgen::JsValue) -> String {
    js_sys::Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| format!("{e:?}"))
}
