//! Recognising memory snapshots among the inputs: by their first bytes (a pickle of protocol 2–5
//! whose top level is a snapshot's dict or segment list), whatever the file is named — torch
//! examples name them `.pickle`, users `.pkl`, `.json` or nothing.

use super::{sniff, SNIFF_BYTES};
use serde::Serialize;

/// A memory snapshot among the inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotFile {
    /// Relative path of the file.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Pickle protocol.
    pub protocol: u8,
    /// `dict` (segments, device_traces, …) or `segment_list`.
    pub layout: &'static str,
}

impl SnapshotFile {
    /// One line for `memlens inspect`.
    pub fn summary(&self) -> String {
        format!("pickle protocol {}, {}", self.protocol, self.layout)
    }
}

/// Leading bytes needed to recognise a snapshot.
pub const HEAD_BYTES: usize = SNIFF_BYTES;

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
