//! Diagnostics: what went wrong in an input, and exactly where.
//!
//! Every parser reports problems as [`Diagnostic`]s that name the file and, when known, the line,
//! the byte offset and the field, plus what was expected. Errors stop one file; warnings (skipped
//! rows, ignored files) are collected and shown next to the results, with counts, so nothing is
//! dropped silently.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something was skipped or guessed; the rest of the file was used.
    Warning,
    /// The file (or unit) could not be used.
    Error,
}

/// One problem found in an input. Its JSON form (the keys below, `line`, `byte` and `field` left
/// out when unknown) is read back as well as written: the job summary file keeps a rank's
/// diagnostics in it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file, as a path relative to what the user gave.
    pub file: String,
    /// 1-based line number, when the format is line-oriented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 0-based byte offset into the file, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub byte: Option<u64>,
    /// The field or column concerned, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// What was found and what was expected.
    pub message: String,
    /// How many rows or items this diagnostic stands for (e.g. skipped rows of one kind), at least 1.
    #[serde(default = "one")]
    pub count: u64,
}

fn one() -> u64 {
    1
}

/// How many diagnostics of each level a list holds: what a front end says ("1 error, 2
/// warnings") instead of counting errors as warnings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Levels {
    /// Diagnostics of severity error.
    pub errors: usize,
    /// Diagnostics of severity warning.
    pub warnings: usize,
}

impl Levels {
    /// The counts of `diags`.
    pub fn of<'a>(diags: impl IntoIterator<Item = &'a Diagnostic>) -> Levels {
        diags.into_iter().fold(Levels::default(), |mut l, d| {
            match d.severity {
                Severity::Error => l.errors += 1,
                Severity::Warning => l.warnings += 1,
            }
            l
        })
    }
}

impl fmt::Display for Levels {
    /// "1 error, 2 warnings"; "no errors or warnings" when both are 0.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        match (self.errors, self.warnings) {
            (0, 0) => write!(f, "no errors or warnings"),
            (e, 0) => write!(f, "{}", word(e, "error")),
            (0, w) => write!(f, "{}", word(w, "warning")),
            (e, w) => write!(f, "{}, {}", word(e, "error"), word(w, "warning")),
        }
    }
}

impl Diagnostic {
    /// An error in `file` with `message`.
    pub fn error(file: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            file: file.into(),
            line: None,
            byte: None,
            field: None,
            message: message.into(),
            count: 1,
        }
    }

    /// A warning in `file` with `message`.
    pub fn warning(file: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(file, message)
        }
    }

    /// Sets the 1-based line.
    pub fn at_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }

    /// Sets the 0-based byte offset.
    pub fn at_byte(mut self, byte: u64) -> Self {
        self.byte = Some(byte);
        self
    }

    /// Names the field or column.
    pub fn in_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Sets how many items this diagnostic stands for.
    pub fn times(mut self, count: u64) -> Self {
        self.count = count.max(1);
        self
    }

    /// Where the diagnostic points, as its printed line names it: the file, then `:line` and
    /// ` (byte N)` when known ("run/op.csv:12 (byte 345)").
    pub fn place(&self) -> String {
        let mut s = self.file.clone();
        if let Some(line) = self.line {
            s.push_str(&format!(":{line}"));
        }
        if let Some(byte) = self.byte {
            s.push_str(&format!(" (byte {byte})"));
        }
        s
    }

    /// What was found, as the printed line says it after the level: the field first when there
    /// is one ("Size(KB): not a number").
    pub fn what(&self) -> String {
        match &self.field {
            Some(field) => format!("{field}: {}", self.message),
            None => self.message.clone(),
        }
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// A diagnostic read back from its printed line (its `Display`:
    /// `file[:line][ (byte N)]: error|warning: message[ (N times)]`), as version 1 of the job
    /// summary file kept them. A field named before the message stays part of the message (the
    /// line cannot tell it apart); a line without a level is a warning with no file.
    pub fn from_line(text: &str) -> Diagnostic {
        let marks = [
            (": error: ", Severity::Error),
            (": warning: ", Severity::Warning),
        ];
        let Some((at, mark, severity)) = marks
            .iter()
            .filter_map(|(m, s)| text.find(m).map(|at| (at, *m, *s)))
            .min_by_key(|(at, _, _)| *at)
        else {
            return Diagnostic::warning("", text);
        };
        let (mut place, mut message) = (&text[..at], &text[at + mark.len()..]);
        let mut d = Diagnostic::warning("", "");
        d.severity = severity;
        if let Some((rest, n)) = message
            .strip_suffix(" times)")
            .and_then(|m| m.rsplit_once(" ("))
            .and_then(|(m, n)| Some((m, n.parse::<u64>().ok()?)))
        {
            message = rest;
            d.count = n.max(1);
        }
        if let Some((rest, n)) = place
            .strip_suffix(')')
            .and_then(|p| p.rsplit_once(" (byte "))
            .and_then(|(p, n)| Some((p, n.parse::<u64>().ok()?)))
        {
            place = rest;
            d.byte = Some(n);
        }
        if let Some((rest, n)) = place
            .rsplit_once(':')
            .and_then(|(p, n)| Some((p, n.parse::<u64>().ok()?)))
        {
            place = rest;
            d.line = Some(n);
        }
        d.file = place.to_string();
        d.message = message.to_string();
        d
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{}: {kind}: {}", self.place(), self.what())?;
        if self.count > 1 {
            write!(f, " ({} times)", self.count)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

impl From<crate::source::SourceError> for Diagnostic {
    fn from(e: crate::source::SourceError) -> Self {
        Diagnostic::error(e.name, format!("cannot read the file: {}", e.message)).at_byte(e.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_line_byte_field_and_count() {
        let d = Diagnostic::warning("run/operator_memory.csv", "not a number")
            .at_line(12)
            .at_byte(345)
            .in_field("Size(KB)")
            .times(3);
        assert_eq!(
            d.to_string(),
            "run/operator_memory.csv:12 (byte 345): warning: Size(KB): not a number (3 times)"
        );
    }

    #[test]
    fn a_printed_line_reads_back_with_its_level_and_place() {
        let e = Diagnostic::error("job/r0/x.db", "not a SQLite database: found \\x00")
            .at_byte(0)
            .times(2);
        assert_eq!(Diagnostic::from_line(&e.to_string()), e);
        let w = Diagnostic::warning("job/a:b/op.csv", "bad: row").at_line(7);
        assert_eq!(Diagnostic::from_line(&w.to_string()), w);
        // A field stays in the message; a line with no level is a warning with no file.
        let f = Diagnostic::warning("a.csv", "x").in_field("Size");
        let back = Diagnostic::from_line(&f.to_string());
        assert_eq!(
            (back.file.as_str(), back.message.as_str()),
            ("a.csv", "Size: x")
        );
        assert_eq!(
            Diagnostic::from_line("… and 3 more diagnostics"),
            Diagnostic::warning("", "… and 3 more diagnostics")
        );
    }

    #[test]
    fn levels_are_counted_and_said_apart() {
        let ds = [
            Diagnostic::error("a", "x"),
            Diagnostic::warning("a", "y"),
            Diagnostic::warning("b", "z"),
        ];
        let l = Levels::of(&ds);
        assert_eq!((l.errors, l.warnings), (1, 2));
        assert_eq!(l.to_string(), "1 error, 2 warnings");
        assert_eq!(Levels::of(&ds[1..2]).to_string(), "1 warning");
        assert_eq!(Levels::of(&ds[..1]).to_string(), "1 error");
        assert_eq!(Levels::default().to_string(), "no errors or warnings");
    }
}
