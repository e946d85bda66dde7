//! The files of one drop: the core's input set over browser `File`s.

use super::file_source::FileSource;
use crate::diag::Diagnostic;
use crate::input::{FileOpener, HostFile, InputSet, LoadStep};
use crate::source::{Source, SourceError};
use wasm_bindgen::prelude::*;

/// A browser `File`, read on the worker that received it.
struct BrowserFile(web_sys::File);

impl HostFile for BrowserFile {
    fn open(&self, name: &str) -> Result<Box<dyn Source + '_>, SourceError> {
        Ok(Box::new(FileSource::new(name.to_string(), self.0.clone())?))
    }
}

/// The files of one drop, held by the worker between questions.
#[wasm_bindgen]
pub struct Session {
    set: InputSet,
}

#[wasm_bindgen]
impl Session {
    /// An empty session.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Session {
        Session {
            set: crate::families::input_set(),
        }
    }

    /// Adds a file under its relative path (`folder/sub/name`).
    #[wasm_bindgen(js_name = addFile)]
    pub fn add_file(&mut self, path: String, file: web_sys::File) {
        let size = file.size() as u64;
        self.set.add_host(&path, size, Box::new(BrowserFile(file)));
    }

    /// Records a top-level name of the drop (a folder or file the user dropped or picked), for the
    /// message on a drop with nothing to analyse: a dropped folder without files adds no file,
    /// and this is how the message names it (`InputSet::add_given`).
    #[wasm_bindgen(js_name = addGiven)]
    pub fn add_given(&mut self, path: String) {
        self.set.add_given(&path);
    }

    /// Records a file the browser listed but could not hand over (e.g. permission denied), so it
    /// shows up as unreadable instead of vanishing.
    #[wasm_bindgen(js_name = addUnreadable)]
    pub fn add_unreadable(&mut self, path: String, size: f64, reason: String) {
        self.set
            .add_unreadable(&path, size.max(0.0) as u64, &reason);
    }

    /// Expands the archives and classifies the files (once); returns the inventory as JSON (the
    /// shape `memlens inspect --json` prints, with `nothing_to_analyse` when no unit can be
    /// analysed: see `InputSet::classify_answer`). `progress(done, total, label)` follows archives
    /// (bytes) and file headers (files).
    pub fn classify(&mut self, progress: &js_sys::Function) -> String {
        let mut step = |s: LoadStep| {
            let (done, total, label) = match s {
                LoadStep::Expanding { path, done, total } => {
                    (done as f64, total as f64, format!("expanding {path}"))
                }
                LoadStep::Heads { done, total } => (
                    done as f64,
                    total as f64,
                    "reading file headers".to_string(),
                ),
            };
            let _ = progress.call3(&JsValue::NULL, &done.into(), &total.into(), &label.into());
        };
        self.set
            .classify_answer(&mut step)
            .unwrap_or_else(|e| serde_json::json!({ "error": e }).to_string())
    }
}

impl Session {
    /// A source over the file at `path` (as listed in the inventory).
    pub fn source(&self, path: &str) -> Result<Box<dyn Source + '_>, Diagnostic> {
        self.set.open(path)
    }

    /// The input set (classified once [`Session::classify`] ran).
    pub fn set(&self) -> &InputSet {
        &self.set
    }

    /// The input set, to classify it.
    pub fn set_mut(&mut self) -> &mut InputSet {
        &mut self.set
    }
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}
