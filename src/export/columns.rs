//! Typed columns of an exported table: what a front end that hands tables on without text (the
//! Python package's DataFrame and Arrow table) receives. Each column is built from the same cell
//! text the CSV export writes, parsed once, so both carry the same values.

#![warn(missing_docs)]

/// The type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text (an empty cell is the empty string).
    Str,
    /// 64-bit signed integer (an empty cell is a missing value).
    Int,
    /// 64-bit float (an empty cell is a missing value).
    Float,
    /// `true` / `false`.
    Bool,
}

/// The values of one column, laid out as Arrow lays them out (offsets into one byte buffer for
/// text, plain vectors for numbers) so an adapter passes them on without a per-cell object.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    /// Text: row `i` is `bytes[offsets[i]..offsets[i + 1]]`; `offsets` has one entry more than
    /// there are rows.
    Str {
        /// Start of each row's text, then the end of the last.
        offsets: Vec<i64>,
        /// The texts, one after the other.
        bytes: Vec<u8>,
    },
    /// Integers; `valid[i]` is false where the cell was empty (the value is then 0).
    Int {
        /// Values.
        values: Vec<i64>,
        /// Which values are present.
        valid: Vec<bool>,
    },
    /// Floats; `valid[i]` is false where the cell was empty (the value is then NaN).
    Float {
        /// Values.
        values: Vec<f64>,
        /// Which values are present.
        valid: Vec<bool>,
    },
    /// Booleans.
    Bool(Vec<bool>),
}

/// One named, typed column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column name (as in the CSV header).
    pub name: &'static str,
    /// Its values.
    pub data: ColumnData,
}

impl Column {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match &self.data {
            ColumnData::Str { offsets, .. } => offsets.len().saturating_sub(1),
            ColumnData::Int { values, .. } => values.len(),
            ColumnData::Float { values, .. } => values.len(),
            ColumnData::Bool(v) => v.len(),
        }
    }

    /// True when the column has no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Builds a [`Column`] from cell texts.
#[derive(Debug)]
pub struct ColumnBuilder {
    name: &'static str,
    data: ColumnData,
}

impl ColumnBuilder {
    /// An empty column of `kind` with room for `rows` rows.
    pub fn new(name: &'static str, kind: Kind, rows: usize) -> Self {
        let data = match kind {
            Kind::Str => ColumnData::Str {
                offsets: {
                    let mut o = Vec::with_capacity(rows + 1);
                    o.push(0);
                    o
                },
                bytes: Vec::new(),
            },
            Kind::Int => ColumnData::Int {
                values: Vec::with_capacity(rows),
                valid: Vec::with_capacity(rows),
            },
            Kind::Float => ColumnData::Float {
                values: Vec::with_capacity(rows),
                valid: Vec::with_capacity(rows),
            },
            Kind::Bool => ColumnData::Bool(Vec::with_capacity(rows)),
        };
        ColumnBuilder { name, data }
    }

    /// Appends one cell given as the CSV's text. Text that is not a number in a number column
    /// (which the exports never write) is a missing value rather than a panic.
    pub fn push(&mut self, cell: &str) {
        match &mut self.data {
            ColumnData::Str { offsets, bytes } => {
                bytes.extend_from_slice(cell.as_bytes());
                offsets.push(bytes.len() as i64);
            }
            ColumnData::Int { values, valid } => {
                let v = cell.parse::<i64>().ok();
                values.push(v.unwrap_or(0));
                valid.push(v.is_some());
            }
            ColumnData::Float { values, valid } => {
                // Rust's parser rounds correctly, as pandas' `float_precision="round_trip"` does.
                let v = cell.parse::<f64>().ok();
                values.push(v.unwrap_or(f64::NAN));
                valid.push(v.is_some());
            }
            ColumnData::Bool(v) => v.push(cell == "true"),
        }
    }

    /// The finished column.
    pub fn finish(self) -> Column {
        Column {
            name: self.name,
            data: self.data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_become_typed_values() {
        let mut s = ColumnBuilder::new("s", Kind::Str, 2);
        let mut i = ColumnBuilder::new("i", Kind::Int, 2);
        let mut f = ColumnBuilder::new("f", Kind::Float, 2);
        let mut b = ColumnBuilder::new("b", Kind::Bool, 2);
        for (a, c, d, e) in [("ab", "-1", "0.1", "true"), ("", "", "", "false")] {
            s.push(a);
            i.push(c);
            f.push(d);
            b.push(e);
        }
        assert_eq!(
            s.finish().data,
            ColumnData::Str {
                offsets: vec![0, 2, 2],
                bytes: b"ab".to_vec()
            }
        );
        assert_eq!(
            i.finish().data,
            ColumnData::Int {
                values: vec![-1, 0],
                valid: vec![true, false]
            }
        );
        let f = f.finish();
        assert_eq!(f.len(), 2);
        match f.data {
            ColumnData::Float { values, valid } => {
                assert_eq!(values[0], 0.1);
                assert!(values[1].is_nan());
                assert_eq!(valid, vec![true, false]);
            }
            other => panic!("not a float column: {other:?}"),
        }
        assert_eq!(b.finish().data, ColumnData::Bool(vec![true, false]));
    }
}
