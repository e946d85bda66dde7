//! Why a rank of a job has no figures, said one way wherever the rank is shown: the command
//! line's table and `--json`, the job summary file, the page's overview (one reader or a pool of
//! them) and its job summary tab. Three facts differ for a user and are kept apart: the rank's
//! files were refused (which file, and why), its analysis failed where it ran (a task, node or
//! reader that did not finish), or its files were read and hold no memory data.

use crate::diag::{Diagnostic, Severity};
use serde::{Deserialize, Serialize};

/// Which of the three a rank without figures is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoDataKind {
    /// Its files were read and refused (not the expected table, damaged, unreadable).
    Refused,
    /// Its analysis did not run to its end where it ran (its task, node or reader failed).
    Failed,
    /// Its files were read and hold no memory rows and no allocator curve.
    Empty,
}

/// A file of the rank that an error names, with that error's message (the first, when several).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedFile {
    /// The file's path, as the diagnostics name it.
    pub file: String,
    /// What the first error about it says.
    pub reason: String,
}

/// Why a rank has no figures: its kind, the files refused or the failure's reason, and the
/// sentence every view shows (`says`), made here so that they all show the same words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoData {
    /// Which of the three.
    pub kind: NoDataKind,
    /// The files refused (`refused`), each once, in the order their errors came.
    #[serde(default)]
    pub files: Vec<RefusedFile>,
    /// Why the analysis failed (`failed`).
    #[serde(default)]
    pub reason: Option<String>,
    /// The fact in words, to follow "no figures: " ("its file was refused: job/r0/x.db: …").
    pub says: String,
}

impl NoData {
    /// A rank analysed without data, from its diagnostics: refused when errors name files (each
    /// counted as the job's totals count rejected files), empty otherwise.
    pub fn of_analysed(diags: &[Diagnostic]) -> NoData {
        let mut files: Vec<RefusedFile> = Vec::new();
        for d in diags.iter().filter(|d| d.severity == Severity::Error) {
            if !files.iter().any(|f| f.file == d.file) {
                files.push(RefusedFile {
                    file: d.file.clone(),
                    reason: d.message.clone(),
                });
            }
        }
        if files.is_empty() {
            return NoData {
                kind: NoDataKind::Empty,
                files,
                reason: None,
                says: "its files were read and hold no memory rows and no allocator curve"
                    .to_string(),
            };
        }
        let each: Vec<String> = files
            .iter()
            .map(|f| format!("{}: {}", f.file, f.reason))
            .collect();
        let says = match files.len() {
            1 => format!("its file was refused: {}", each[0]),
            n => format!("its {n} files were refused: {}", each.join("; ")),
        };
        NoData {
            kind: NoDataKind::Refused,
            files,
            reason: None,
            says,
        }
    }

    /// A rank whose analysis failed where it ran, for `reason`.
    pub fn failed(reason: &str) -> NoData {
        NoData {
            kind: NoDataKind::Failed,
            files: Vec::new(),
            reason: Some(reason.to_string()),
            says: format!("its analysis failed where it ran: {reason}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_refused_files_once_and_warnings_alone_leave_the_rank_empty() {
        let diags = [
            Diagnostic::warning("job/r0", "no trace_view.json"),
            Diagnostic::error("job/r0/a.db", "the file is truncated"),
            Diagnostic::error("job/r0/a.db", "another error"),
            Diagnostic::error("job/r0/b.csv", "missing column(s) Size(KB)"),
        ];
        let n = NoData::of_analysed(&diags);
        assert_eq!(n.kind, NoDataKind::Refused);
        assert_eq!(
            n.says,
            "its 2 files were refused: job/r0/a.db: the file is truncated; job/r0/b.csv: missing column(s) Size(KB)"
        );
        let one = NoData::of_analysed(&diags[..2]);
        assert_eq!(
            one.says,
            "its file was refused: job/r0/a.db: the file is truncated"
        );
        assert_eq!(NoData::of_analysed(&diags[..1]).kind, NoDataKind::Empty);
        assert_eq!(
            NoData::failed("worker died").says,
            "its analysis failed where it ran: worker died"
        );
    }
}
