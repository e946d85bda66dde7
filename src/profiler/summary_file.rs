//! Recognising a job summary file (`job.memlens.json`) among the inputs, by its first bytes:
//! a JSON object whose `format` is `"memlens-job-summary"`, whatever the file is named.

use super::summary::FORMAT;
use crate::input::classify::{FileView, Recognizer, Unit, UnitBody};
use serde::Serialize;

/// Leading bytes read to tell a job summary: the writers put `format` first, so it is within the
/// first few dozen bytes; the margin allows a hand-edited file with whitespace before it.
pub const SNIFF_BYTES: usize = 512;

/// A job summary file among the inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SummaryFile {
    /// Relative path of the file.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

impl UnitBody for SummaryFile {
    fn kind(&self) -> &'static str {
        "job-summary"
    }
    fn path(&self) -> &str {
        &self.path
    }
    fn summary(&self) -> String {
        "memlens job summary".to_string()
    }
}

/// Whether `head` starts a job summary: optional whitespace, `{`, and the `format` key with the
/// summary's value before the head ends.
pub fn sniff(head: &[u8]) -> bool {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // A head cut inside a multi-byte character: judge the valid part.
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    let Some(rest) = text.trim_start().strip_prefix('{') else {
        return false;
    };
    let compact: String = rest.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    compact.contains(&format!("\"format\":\"{FORMAT}\""))
}

/// The recognizer of job summary files (loose files, by their first bytes).
pub struct SummaryFiles;

impl Recognizer for SummaryFiles {
    fn describes(&self) -> &'static [&'static str] {
        &["a memlens job summary"]
    }

    fn looks_for(&self) -> &'static [&'static str] {
        &["memlens job summaries (`job.memlens.json`, told by their `format` key)"]
    }

    fn loose_head(&self, _path: &str, _size: u64) -> usize {
        SNIFF_BYTES
    }

    fn recognize(&self, file: &FileView) -> Option<Unit> {
        sniff(file.head.bytes()?).then(|| {
            Unit::new(SummaryFile {
                path: file.path.to_string(),
                size: file.size,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::sniff;

    #[test]
    fn sniffs_the_format_key_and_nothing_else() {
        assert!(sniff(br#"{"format":"memlens-job-summary","version":1"#));
        assert!(sniff(b"\n {\n  \"format\" : \"memlens-job-summary\",\n"));
        assert!(!sniff(br#"{"format":"memlens-job-summary-2""#));
        assert!(!sniff(br#"{"traceEvents":[{"format":"x"}]}"#));
        assert!(!sniff(br#"["format","memlens-job-summary"]"#));
        assert!(!sniff(b"\x80\x04\x95"));
        assert!(!sniff(b""));
    }
}
