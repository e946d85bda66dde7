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

/// A file of the rank that an error names, with where in it and what that error says (the first,
/// when several).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedFile {
    /// The file's path, as the diagnostics name it.
    pub file: String,
    /// The file and the place in it the error names, as the reader's error line does
    /// ("job/r0/op.csv:12 (byte 345)"); the path alone when the reader named no place. Empty in
    /// a summary written before it was kept.
    #[serde(default)]
    pub place: String,
    /// What the first error about it says (its field first, when it names one).
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
    /// The fact in words, to follow "no figures: " ("its file was refused: job/r0/x.db (byte 0):
    /// …"), each file named with its place as the reader's error names it.
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
                    place: d.place(),
                    reason: d.what(),
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
            .map(|f| format!("{}: {}", f.place, f.reason))
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

    // Seen failing before the place was kept: the sentence was "job/r0/op.csv: not a number",
    // the line, byte and field only in the warnings list.
    #[test]
    fn a_refused_file_is_named_with_its_line_byte_and_field_as_its_error_line_names_it() {
        let e = Diagnostic::error("job/r0/op.csv", "not a number")
            .at_line(12)
            .at_byte(345)
            .in_field("Size(KB)");
        let at_byte = Diagnostic::error("job/r1/x.db", "not a SQLite database").at_byte(0);
        let n = NoData::of_analysed(&[e.clone(), at_byte.clone()]);
        assert_eq!(
            n.says,
            "its 2 files were refused: job/r0/op.csv:12 (byte 345): Size(KB): not a number; \
             job/r1/x.db (byte 0): not a SQLite database"
        );
        // The same words as the error's own line, the level left out.
        for (f, d) in n.files.iter().zip([&e, &at_byte]) {
            assert_eq!(format!("{}: error: {}", f.place, f.reason), d.to_string());
        }
    }
}
