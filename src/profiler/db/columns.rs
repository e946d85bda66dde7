//! Typed access to the columns of a profiler table: names resolved once, values checked, bad
//! values counted as warnings that name `TABLE.column` and the row.

use super::Strings;
use crate::profiler::csv_common::Warnings;
use crate::sqlite::{DbError, Row, Table, Value};

/// A value of the wrong kind, described for a message.
pub(in crate::profiler) fn show(v: Value<'_>) -> String {
    match v {
        Value::Text(t) => format!("text {}", crate::quote::quote(t, crate::quote::SHORT)),
        Value::Real(r) => format!("real {r}"),
        other => other.type_name().to_string(),
    }
}

/// An integer from an INTEGER column; whole reals and integer text (the export keeps some times
/// as TEXT) are accepted. `Err` describes what was found.
pub(in crate::profiler) fn int(v: Value<'_>) -> Result<Option<i64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Integer(i) => Ok(Some(i)),
        Value::Real(r) if r.fract() == 0.0 && r.abs() < 9.0e18 => Ok(Some(r as i64)),
        Value::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .map(Some)
            .ok_or_else(|| show(v)),
        other => Err(show(other)),
    }
}

/// The columns of one table a reader needs, resolved by name once.
pub(in crate::profiler) struct Cols<'t> {
    table: &'t Table,
    idx: Vec<Option<usize>>,
    names: &'static [&'static str],
}

impl<'t> Cols<'t> {
    /// Resolves `names`; the first `required` of them must exist.
    pub(in crate::profiler) fn new(
        table: &'t Table,
        names: &'static [&'static str],
        required: usize,
    ) -> Result<Self, DbError> {
        let idx: Vec<Option<usize>> = names.iter().map(|n| table.column(n)).collect();
        let missing: Vec<&str> = names
            .iter()
            .zip(&idx)
            .take(required)
            .filter(|(_, i)| i.is_none())
            .map(|(n, _)| *n)
            .collect();
        if !missing.is_empty() {
            let have: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
            return Err(DbError::new(format!(
                "table {} has no column {} (its columns: {})",
                table.name,
                missing.join(", "),
                have.join(", ")
            )));
        }
        Ok(Cols { table, idx, names })
    }

    pub(in crate::profiler) fn value<'r>(&self, row: &Row<'r>, k: usize) -> Value<'r> {
        match self.idx.get(k).copied().flatten() {
            Some(i) => row.get(i),
            None => Value::Null,
        }
    }

    /// `TABLE.column`, for messages.
    pub(in crate::profiler) fn field(&self, k: usize) -> String {
        format!(
            "{}.{}",
            self.table.name,
            self.names.get(k).copied().unwrap_or("")
        )
    }

    /// Integer column `k`; a value of another kind is a keyed warning and reads as `None`.
    pub(in crate::profiler) fn int(
        &self,
        row: &Row<'_>,
        k: usize,
        w: &mut Warnings,
        file: &str,
    ) -> Option<i64> {
        match int(self.value(row, k)) {
            Ok(v) => v,
            Err(found) => {
                let field = self.field(k);
                w.add_keyed_at_byte(
                    file,
                    row.offset(),
                    &field,
                    "not an integer",
                    &format!(
                        "rowid {}: expected an integer, found {found}; read as empty",
                        row.rowid()
                    ),
                );
                None
            }
        }
    }

    /// Non-negative byte count in column `k` (a negative one is a warning and reads as `None`).
    pub(in crate::profiler) fn bytes(
        &self,
        row: &Row<'_>,
        k: usize,
        w: &mut Warnings,
        file: &str,
    ) -> Option<u64> {
        let v = self.int(row, k, w, file)?;
        match u64::try_from(v) {
            Ok(b) => Some(b),
            Err(_) => {
                w.add_keyed_at_byte(
                    file,
                    row.offset(),
                    &self.field(k),
                    "negative bytes",
                    &format!(
                        "rowid {}: expected a byte count, found {v}; read as empty",
                        row.rowid()
                    ),
                );
                None
            }
        }
    }

    /// The `STRING_IDS` text of the id in column `k` (`None` for NULL; an unknown id is a
    /// warning and reads as the empty string).
    pub(in crate::profiler) fn string<'s>(
        &self,
        row: &Row<'_>,
        k: usize,
        strings: &'s Strings,
        w: &mut Warnings,
        file: &str,
    ) -> Option<(i64, &'s str)> {
        let id = self.int(row, k, w, file)?;
        match strings.get(id) {
            Some(s) => Some((id, s)),
            None => {
                w.add_keyed_at_byte(
                    file,
                    row.offset(),
                    &self.field(k),
                    "unknown string id",
                    &format!(
                        "rowid {}: string id {id} is not in STRING_IDS; read as empty",
                        row.rowid()
                    ),
                );
                Some((id, ""))
            }
        }
    }
}
