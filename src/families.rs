//! The input families memlens reads, in one list: each contributes the recognizer that finds its
//! units among the inputs ([`crate::input::Recognizer`]). A new family is one entry here.
//!
//! Order: families that claim files by path (run folders) before those that sniff loose files,
//! so a `trace_view.json` inside a run folder is never sniffed.

use crate::input::{InputSet, Recognizer};

/// Every family's recognizer.
pub static RECOGNIZERS: &[&dyn Recognizer] = &[
    &crate::profiler::run_folder::RunFolders,
    &crate::somas::recognize::Dumps,
    &crate::snapshot::recognize::Snapshots,
    &crate::profiler::summary_file::SummaryFiles,
];

/// An empty input set classified by every family.
pub fn input_set() -> InputSet {
    InputSet::new(RECOGNIZERS)
}

/// The files and folders at `roots` on disk, as an input set classified by every family.
#[cfg(not(target_arch = "wasm32"))]
pub fn input_set_from_paths(roots: &[std::path::PathBuf]) -> InputSet {
    InputSet::from_paths(RECOGNIZERS, roots)
}

/// Lists and classifies files and folders on disk (`memlens inspect`). Archives (`.zip`, `.tar`,
/// `.tar.gz`) are expanded: their members appear under `<archive path>/…`.
#[cfg(not(target_arch = "wasm32"))]
pub fn classify_paths(roots: &[std::path::PathBuf]) -> crate::input::Inventory {
    input_set_from_paths(roots).classify().clone()
}
