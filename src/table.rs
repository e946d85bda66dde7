//! Big tables for the views: typed columns, filtering, sorting and paging, all in Rust.
//!
//! A view never receives a whole table. It states a [`Query`] (sort keys, a text or regex filter,
//! numeric ranges, an optional subset of rows), gets a [`TableView`] (the matching row order, built
//! once per query), and then asks for pages of rows as it scrolls.

use rayon::prelude::*;
use serde::Serialize;
use std::cmp::Ordering;
use std::sync::Arc;

/// One column, typed so that sorting and range filters compare values, not their text.
#[derive(Debug, Clone)]
pub enum Column {
    /// Unsigned integers (bytes, counts, ids).
    U64(Vec<u64>),
    /// Signed integers (times in ns).
    I64(Vec<i64>),
    /// Unsigned integers that may be missing (sorted last).
    OptU64(Vec<Option<u64>>),
    /// Signed integers that may be missing (sorted last).
    OptI64(Vec<Option<i64>>),
    /// Floating-point values (NaN sorts last).
    F64(Vec<f64>),
    /// Interned strings: an id per row into a shared dictionary.
    Sym(Vec<u32>, Arc<[Box<str>]>),
    /// Plain strings.
    Text(Vec<Box<str>>),
}

impl Column {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::OptU64(v) => v.len(),
            Column::OptI64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Sym(v, _) => v.len(),
            Column::Text(v) => v.len(),
        }
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn is_text(&self) -> bool {
        matches!(self, Column::Sym(..) | Column::Text(_))
    }

    /// The value at `row` as a number for range filters (`None` for missing values and text).
    fn number(&self, row: usize) -> Option<f64> {
        match self {
            Column::U64(v) => v.get(row).map(|&x| x as f64),
            Column::I64(v) => v.get(row).map(|&x| x as f64),
            Column::OptU64(v) => v.get(row).copied().flatten().map(|x| x as f64),
            Column::OptI64(v) => v.get(row).copied().flatten().map(|x| x as f64),
            Column::F64(v) => v.get(row).copied().filter(|x| !x.is_nan()),
            Column::Sym(..) | Column::Text(_) => None,
        }
    }

    /// The text at `row` (text columns only).
    fn text(&self, row: usize) -> Option<&str> {
        match self {
            Column::Sym(ids, dict) => ids
                .get(row)
                .and_then(|&i| dict.get(i as usize))
                .map(|s| &**s),
            Column::Text(v) => v.get(row).map(|s| &**s),
            _ => None,
        }
    }

    /// The cell at `row`, ready for JSON.
    pub fn cell(&self, row: usize) -> Cell<'_> {
        match self {
            Column::U64(v) => v.get(row).map_or(Cell::Null, |&x| Cell::U(x)),
            Column::I64(v) => v.get(row).map_or(Cell::Null, |&x| Cell::I(x)),
            Column::OptU64(v) => v.get(row).copied().flatten().map_or(Cell::Null, Cell::U),
            Column::OptI64(v) => v.get(row).copied().flatten().map_or(Cell::Null, Cell::I),
            Column::F64(v) => v
                .get(row)
                .copied()
                .filter(|x| x.is_finite())
                .map_or(Cell::Null, Cell::F),
            Column::Sym(..) | Column::Text(_) => self.text(row).map_or(Cell::Null, Cell::S),
        }
    }

    fn compare(&self, a: usize, b: usize) -> Ordering {
        fn opt<T: Ord>(a: Option<T>, b: Option<T>) -> Ordering {
            match (a, b) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            }
        }
        match self {
            Column::U64(v) => v[a].cmp(&v[b]),
            Column::I64(v) => v[a].cmp(&v[b]),
            Column::OptU64(v) => opt(v[a], v[b]),
            Column::OptI64(v) => opt(v[a], v[b]),
            Column::F64(v) => match (v[a].is_nan(), v[b].is_nan()) {
                (false, false) => v[a].total_cmp(&v[b]),
                (false, true) => Ordering::Less,
                (true, false) => Ordering::Greater,
                (true, true) => Ordering::Equal,
            },
            Column::Sym(..) | Column::Text(_) => self.text(a).cmp(&self.text(b)),
        }
    }
}

/// A value of one cell, serialised as a JSON number, string or null.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell<'a> {
    /// An unsigned integer.
    U(u64),
    /// A signed integer.
    I(i64),
    /// A float.
    F(f64),
    /// A string.
    S(&'a str),
    /// A missing value.
    Null,
}

/// Name and display kind of a column (the page formats cells by kind).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ColumnSpec {
    /// Header text.
    pub name: String,
    /// How to show it: `bytes`, `int`, `ns`, `hex`, `text`, `float`.
    pub kind: &'static str,
}

/// A table: named columns of equal length.
#[derive(Debug, Clone, Default)]
pub struct Table {
    specs: Vec<ColumnSpec>,
    columns: Vec<Column>,
    rows: usize,
}

impl Table {
    /// An empty table with no columns.
    pub fn new() -> Self {
        Table::default()
    }

    /// Adds a column; all columns must have the same length.
    pub fn with(mut self, name: &str, kind: &'static str, column: Column) -> Self {
        if self.columns.is_empty() {
            self.rows = column.len();
        }
        debug_assert_eq!(
            column.len(),
            self.rows,
            "column {name} has a different length"
        );
        self.rows = self.rows.min(column.len());
        self.specs.push(ColumnSpec {
            name: name.to_string(),
            kind,
        });
        self.columns.push(column);
        self
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The column headers and kinds.
    pub fn specs(&self) -> &[ColumnSpec] {
        &self.specs
    }

    /// Applies `query`; the result lists matching rows in display order.
    pub fn view(&self, query: &Query) -> Result<TableView, String> {
        let text = TextMatcher::new(query.text.as_deref(), query.regex)?;
        let text_cols: Vec<usize> = match query.text_column {
            Some(c) if c < self.columns.len() => vec![c],
            Some(c) => return Err(format!("no column {c}")),
            None => (0..self.columns.len())
                .filter(|&c| self.columns[c].is_text())
                .collect(),
        };
        // Per-dictionary verdicts, so interned columns test each distinct string once.
        let sym_verdicts: Vec<Option<Vec<bool>>> = self
            .columns
            .iter()
            .enumerate()
            .map(|(c, col)| match (col, &text) {
                (Column::Sym(_, dict), Some(m)) if text_cols.contains(&c) => {
                    Some(dict.par_iter().map(|s| m.is_match(s)).collect())
                }
                _ => None,
            })
            .collect();
        for &(c, _, _) in &query.ranges {
            if c >= self.columns.len() {
                return Err(format!("no column {c}"));
            }
        }
        for &(c, _) in &query.sort {
            if c >= self.columns.len() {
                return Err(format!("no column {c}"));
            }
        }
        let keep = |row: usize| -> bool {
            for &(c, lo, hi) in &query.ranges {
                let Some(v) = self.columns[c].number(row) else {
                    return false;
                };
                if lo.is_some_and(|lo| v < lo) || hi.is_some_and(|hi| v > hi) {
                    return false;
                }
            }
            if let Some(m) = &text {
                let hit = text_cols
                    .iter()
                    .any(|&c| match (&self.columns[c], &sym_verdicts[c]) {
                        (Column::Sym(ids, _), Some(verdict)) => ids
                            .get(row)
                            .and_then(|&i| verdict.get(i as usize))
                            .copied()
                            .unwrap_or(false),
                        (col, _) => col.text(row).is_some_and(|s| m.is_match(s)),
                    });
                if !hit {
                    return false;
                }
            }
            true
        };
        let mut order: Vec<u32> = match &query.subset {
            Some(rows) => rows
                .par_iter()
                .copied()
                .filter(|&r| (r as usize) < self.rows && keep(r as usize))
                .collect(),
            None => (0..self.rows as u32)
                .into_par_iter()
                .filter(|&r| keep(r as usize))
                .collect(),
        };
        if !query.sort.is_empty() {
            order.par_sort_by(|&a, &b| {
                for &(c, desc) in &query.sort {
                    let o = self.columns[c].compare(a as usize, b as usize);
                    let o = if desc { o.reverse() } else { o };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.cmp(&b)
            });
        }
        Ok(TableView { order })
    }

    /// The cells of `row` in column order.
    pub fn row(&self, row: usize) -> Vec<Cell<'_>> {
        self.columns.iter().map(|c| c.cell(row)).collect()
    }
}

/// What to show of a table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    /// Sort keys: column index and descending flag, most significant first. Ties keep row order.
    pub sort: Vec<(usize, bool)>,
    /// Keep rows whose text (in `text_column`, or any text column) contains this (case-insensitive)
    /// or, with `regex`, matches it.
    pub text: Option<String>,
    /// Treat `text` as a regular expression.
    pub regex: bool,
    /// Restrict the text filter to one column.
    pub text_column: Option<usize>,
    /// Keep rows whose numeric value in the column lies in `[min, max]` (missing values never do).
    pub ranges: Vec<(usize, Option<f64>, Option<f64>)>,
    /// Only consider these rows (e.g. the allocations of a time window).
    pub subset: Option<Vec<u32>>,
}

/// The rows a query matched, in display order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableView {
    order: Vec<u32>,
}

/// One page of a table view.
#[derive(Debug, Clone, Serialize)]
pub struct Page<'a> {
    /// Rows matching the query in all.
    pub total: usize,
    /// Position of the first row of this page in the view.
    pub offset: usize,
    /// Row ids (indices into the table) of this page.
    pub ids: Vec<u32>,
    /// The cells, row by row.
    pub rows: Vec<Vec<Cell<'a>>>,
}

impl TableView {
    /// Number of matching rows.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when nothing matched.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Matching row ids in display order.
    pub fn ids(&self) -> &[u32] {
        &self.order
    }

    /// Rows `[offset, offset + limit)` of the view.
    pub fn page<'t>(&self, table: &'t Table, offset: usize, limit: usize) -> Page<'t> {
        let start = offset.min(self.order.len());
        let end = start.saturating_add(limit).min(self.order.len());
        let ids = self.order[start..end].to_vec();
        let rows = ids.iter().map(|&r| table.row(r as usize)).collect();
        Page {
            total: self.order.len(),
            offset: start,
            ids,
            rows,
        }
    }

    /// Where row `id` sits in the view, if it matched.
    pub fn position(&self, id: u32) -> Option<usize> {
        self.order.iter().position(|&r| r == id)
    }
}

enum TextMatcher {
    Substring(String),
    Regex(regex::Regex),
}

impl TextMatcher {
    fn new(pattern: Option<&str>, regex: bool) -> Result<Option<TextMatcher>, String> {
        let Some(p) = pattern.filter(|p| !p.is_empty()) else {
            return Ok(None);
        };
        if regex {
            regex::RegexBuilder::new(p)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map(|r| Some(TextMatcher::Regex(r)))
                .map_err(|e| format!("invalid regular expression: {e}"))
        } else {
            Ok(Some(TextMatcher::Substring(p.to_lowercase())))
        }
    }

    fn is_match(&self, s: &str) -> bool {
        match self {
            TextMatcher::Substring(p) => {
                if s.is_ascii() && p.is_ascii() {
                    s.as_bytes()
                        .windows(p.len().max(1))
                        .any(|w| w.eq_ignore_ascii_case(p.as_bytes()))
                        || p.is_empty()
                } else {
                    s.to_lowercase().contains(p.as_str())
                }
            }
            TextMatcher::Regex(r) => r.is_match(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let dict: Arc<[Box<str>]> =
            vec!["aten::empty".into(), "aten::mm".into(), "cann::Add".into()].into();
        Table::new()
            .with("name", "text", Column::Sym(vec![0, 1, 2, 0, 1], dict))
            .with(
                "size",
                "bytes",
                Column::U64(vec![512, 4096, 1024, 2048, 512]),
            )
            .with(
                "release",
                "ns",
                Column::OptI64(vec![Some(5), None, Some(1), Some(9), None]),
            )
            .with(
                "stack",
                "text",
                Column::Text(vec![
                    "a.py(1)".into(),
                    "".into(),
                    "b.py(2)".into(),
                    "A.PY(3)".into(),
                    "c".into(),
                ]),
            )
    }

    #[test]
    fn sorts_with_missing_last_and_stable_ties() {
        let t = table();
        let v = t
            .view(&Query {
                sort: vec![(2, false)],
                ..Query::default()
            })
            .unwrap();
        assert_eq!(v.ids(), &[2, 0, 3, 1, 4]);
        let v = t
            .view(&Query {
                sort: vec![(1, true)],
                ..Query::default()
            })
            .unwrap();
        assert_eq!(v.ids(), &[1, 3, 2, 0, 4]);
        let v = t
            .view(&Query {
                sort: vec![(0, false), (1, true)],
                ..Query::default()
            })
            .unwrap();
        assert_eq!(v.ids(), &[3, 0, 1, 4, 2]);
    }

    #[test]
    fn filters_text_regex_ranges_and_subsets() {
        let t = table();
        let q = |text: &str, regex: bool| Query {
            text: Some(text.into()),
            regex,
            ..Query::default()
        };
        assert_eq!(t.view(&q("ATEN::E", false)).unwrap().ids(), &[0, 3]);
        assert_eq!(t.view(&q("a\\.py", true)).unwrap().ids(), &[0, 3]);
        assert_eq!(t.view(&q("^cann::", true)).unwrap().ids(), &[2]);
        assert!(t
            .view(&q("(", true))
            .unwrap_err()
            .contains("invalid regular expression"));
        let ranged = Query {
            ranges: vec![(1, Some(1000.0), Some(3000.0))],
            ..Query::default()
        };
        assert_eq!(t.view(&ranged).unwrap().ids(), &[2, 3]);
        let missing = Query {
            ranges: vec![(2, Some(0.0), None)],
            ..Query::default()
        };
        assert_eq!(t.view(&missing).unwrap().ids(), &[0, 2, 3]);
        let subset = Query {
            subset: Some(vec![4, 1, 99]),
            ..Query::default()
        };
        assert_eq!(t.view(&subset).unwrap().ids(), &[4, 1]);
    }

    #[test]
    fn pages_serialise_cells_as_json_values() {
        let t = table();
        let v = t.view(&Query::default()).unwrap();
        let page = v.page(&t, 1, 2);
        assert_eq!(
            serde_json::to_string(&page).unwrap(),
            r#"{"total":5,"offset":1,"ids":[1,2],"rows":[["aten::mm",4096,null,""],["cann::Add",1024,1,"b.py(2)"]]}"#
        );
        assert_eq!(v.page(&t, 10, 5).rows.len(), 0);
    }
}
