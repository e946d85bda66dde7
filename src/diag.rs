//! Diagnostics: what went wrong in an input, and exactly where.
//!
//! Every parser reports problems as [`Diagnostic`]s that name the file and, when known, the line,
//! the byte offset and the field, plus what was expected. Errors stop one file; warnings (skipped
//! rows, ignored files) are collected and shown next to the results, with counts, so nothing is
//! dropped silently.

use serde::Serialize;
use std::fmt;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something was skipped or guessed; the rest of the file was used.
    Warning,
    /// The file (or unit) could not be used.
    Error,
}

/// One problem found in an input.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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
    pub count: u64,
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

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(byte) = self.byte {
            write!(f, " (byte {byte})")?;
        }
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, ": {kind}: ")?;
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        write!(f, "{}", self.message)?;
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
}
