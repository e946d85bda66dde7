//! The set of files the user gave the page, and the questions the views ask about them.

use super::file_source::FileSource;
use crate::classify::{self, Entry, Head};
use wasm_bindgen::prelude::*;

/// One file the user dropped or picked: a relative path and the browser `File` (or why it has none).
struct InputFile {
    path: String,
    size: u64,
    file: Result<web_sys::File, String>,
}

/// The files of one drop, held by the worker between questions.
#[wasm_bindgen]
pub struct Session {
    files: Vec<InputFile>,
}

#[wasm_bindgen]
impl Session {
    /// An empty session.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Session {
        Session { files: Vec::new() }
    }

    /// Adds a file under its relative path (`folder/sub/name`).
    #[wasm_bindgen(js_name = addFile)]
    pub fn add_file(&mut self, path: String, file: web_sys::File) {
        let size = file.size() as u64;
        self.files.push(InputFile {
            path,
            size,
            file: Ok(file),
        });
    }

    /// Records a file the browser listed but could not hand over (e.g. permission denied), so it
    /// shows up as unreadable instead of vanishing.
    #[wasm_bindgen(js_name = addUnreadable)]
    pub fn add_unreadable(&mut self, path: String, size: f64, reason: String) {
        self.files.push(InputFile {
            path,
            size: size.max(0.0) as u64,
            file: Err(reason),
        });
    }

    /// Number of files held.
    #[wasm_bindgen(js_name = fileCount)]
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Classifies the files; returns the inventory as JSON (the shape `memlens inspect --json` prints).
    ///
    /// `progress(done, total)` is called after each file whose first bytes had to be read.
    pub fn classify(&self, progress: &js_sys::Function) -> String {
        let entries: Vec<Entry> = self
            .files
            .iter()
            .map(|f| Entry {
                path: f.path.clone(),
                size: f.size,
            })
            .collect();
        let total = entries.len() as f64;
        let heads: Vec<Head> = self
            .files
            .iter()
            .zip(&entries)
            .enumerate()
            .map(|(i, (f, e))| {
                let want = classify::head_request(e);
                let head = match (&f.file, want) {
                    (Err(reason), _) => Head::Unreadable(reason.clone()),
                    (Ok(_), 0) => Head::NotRead,
                    (Ok(file), want) => match FileSource::new(f.path.clone(), file.clone()) {
                        Ok(src) => classify::read_head(&src, want),
                        Err(e) => Head::Unreadable(e.message),
                    },
                };
                if want > 0 {
                    let _ = progress.call2(&JsValue::NULL, &((i + 1) as f64).into(), &total.into());
                }
                head
            })
            .collect();
        let inventory = classify::classify(&entries, &heads);
        serde_json::to_string(&inventory).unwrap_or_else(|e| {
            serde_json::json!({ "error": format!("cannot serialise the inventory: {e}") })
                .to_string()
        })
    }
}

impl Session {
    /// A [`FileSource`] over the file at `path` (as listed in the inventory), for the analysis APIs.
    pub fn source(&self, path: &str) -> Result<FileSource, String> {
        let f = self
            .files
            .iter()
            .find(|f| f.path == path)
            .ok_or_else(|| format!("{path}: no such file in this drop"))?;
        match &f.file {
            Ok(file) => FileSource::new(f.path.clone(), file.clone()).map_err(|e| e.to_string()),
            Err(reason) => Err(format!("{path}: cannot be read: {reason}")),
        }
    }

    /// Paths and sizes of every file of the drop, in the order they were added.
    pub fn entries(&self) -> impl Iterator<Item = (&str, u64)> {
        self.files.iter().map(|f| (f.path.as_str(), f.size))
    }
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}
