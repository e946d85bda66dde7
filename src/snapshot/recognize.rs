//! Recognising memory snapshots among the inputs: by their first bytes (a pickle of protocol 2–5
//! whose top level is a snapshot's dict or segment list, or the same saved as JSON), whatever the
//! file is named — torch examples name them `.pickle`, users `.pkl`, `.json` or nothing.

use super::{sniff, SNIFF_BYTES};
use crate::input::classify::{FileView, Recognizer, Unit, UnitBody};
use serde::Serialize;

/// A memory snapshot among the inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotFile {
    /// Relative path of the file.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Pickle protocol; 0 for the JSON form.
    pub protocol: u8,
    /// `dict` (segments, device_traces, …) or `segment_list`.
    pub layout: &'static str,
}

impl UnitBody for SnapshotFile {
    fn kind(&self) -> &'static str {
        "snapshot"
    }
    fn path(&self) -> &str {
        &self.path
    }
    fn summary(&self) -> String {
        format!("{}, {}", super::form(self.protocol), self.layout)
    }
}

/// The snapshot a loose file is, from its path, size and first bytes.
pub fn recognize(path: &str, size: u64, head: &[u8]) -> Option<SnapshotFile> {
    let s = sniff(head)?;
    Some(SnapshotFile {
        path: path.to_string(),
        size,
        protocol: s.protocol,
        layout: if s.dict { "dict" } else { "segment_list" },
    })
}

/// The recognizer of memory snapshots (loose files, by their first bytes).
pub struct Snapshots;

impl Recognizer for Snapshots {
    fn describes(&self) -> &'static [&'static str] {
        &["a memory snapshot"]
    }

    fn looks_for(&self) -> &'static [&'static str] {
        &["PyTorch / torch_npu memory snapshots (pickles or their JSON form, of any name, told by their first bytes)"]
    }

    fn loose_head(&self, _path: &str, _size: u64) -> usize {
        SNIFF_BYTES
    }

    fn recognize(&self, file: &FileView) -> Option<Unit> {
        recognize(file.path, file.size, file.head.bytes()?).map(Unit::new)
    }

    fn explain(&self, file: &FileView) -> Option<String> {
        // A pickle that is not a snapshot: say so rather than "unknown".
        let b = file.head.bytes()?;
        (b.first() == Some(&0x80) && b.get(1).is_some_and(|p| *p <= 5)).then(|| {
            "a Python pickle, but not a memory snapshot (no 'segments' or 'device_traces' at its top)"
                .to_string()
        })
    }
}
