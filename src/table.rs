//! Big tables for the views of every family: named columns, filtering, sorting and paging, all
//! in Rust.
//!
//! A view never receives a whole table. It states a [`Query`] (sort keys, text or regex filters,
//! numeric ranges, an optional subset of rows — columns always by name), gets a [`TableView`]
//! (the matching row order, built once per query), and then asks for pages as it scrolls; a
//! [`Page`] carries its cells as one array per column name, never by position.
//!
//! Columns are either owned vectors ([`Column`], the SOMAS tables) or [`Computed`] over data the
//! family already holds (the torch_npu allocation rows), so a table over a million rows costs no
//! copy.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::sync::Arc;

/// What a table needs of a column: its length, each cell, and how two rows compare.
pub trait ColumnData: Send + Sync {
    /// Number of rows.
    fn len(&self) -> usize;
    /// True when the column has no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The cell at `row` (`Cell::Null` past the end).
    fn cell(&self, row: usize) -> Cell<'_>;
    /// Whether text filters look at this column when they name none.
    fn is_text(&self) -> bool;
    /// How rows `a` and `b` sort (missing values last, unless the column says otherwise).
    fn compare(&self, a: usize, b: usize) -> Ordering {
        compare_cells(&self.cell(a), &self.cell(b))
    }
    /// Interned columns: the id of each row and the dictionary, so a text filter tests each
    /// distinct string once.
    fn symbols(&self) -> Option<(&[u32], &[Box<str>])> {
        None
    }
}

/// Orders two cells: numbers by value, text by bytes, booleans false first, missing last.
pub fn compare_cells(a: &Cell, b: &Cell) -> Ordering {
    use Cell::*;
    match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Greater,
        (_, Null) => Ordering::Less,
        (S(x), S(y)) => x.cmp(y),
        (B(x), B(y)) => x.cmp(y),
        (U(x), U(y)) => x.cmp(y),
        (I(x), I(y)) => x.cmp(y),
        (U(x), I(y)) => i128::from(*x).cmp(&i128::from(*y)),
        (I(x), U(y)) => i128::from(*x).cmp(&i128::from(*y)),
        _ => match (a.number(), b.number()) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            _ => Ordering::Equal,
        },
    }
}

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

impl ColumnData for Column {
    fn len(&self) -> usize {
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

    fn is_text(&self) -> bool {
        matches!(self, Column::Sym(..) | Column::Text(_))
    }

    fn symbols(&self) -> Option<(&[u32], &[Box<str>])> {
        match self {
            Column::Sym(ids, dict) => Some((ids, dict)),
            _ => None,
        }
    }

    fn cell(&self, row: usize) -> Cell<'_> {
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
            Column::Sym(ids, dict) => ids
                .get(row)
                .and_then(|&i| dict.get(i as usize))
                .map_or(Cell::Null, |s| Cell::S(s)),
            Column::Text(v) => v.get(row).map_or(Cell::Null, |s| Cell::S(s)),
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
            Column::Sym(..) | Column::Text(_) => self.cell(a).text().cmp(&self.cell(b).text()),
        }
    }
}

/// A column computed from data held elsewhere: `cell(row)`, and optionally an ordering key that
/// differs from what is shown (a signed size sorted by magnitude, a missing time sorted first).
pub struct Computed<'a> {
    len: usize,
    text: bool,
    cell: Box<dyn Fn(usize) -> Cell<'a> + Send + Sync + 'a>,
    key: Option<Box<dyn Fn(usize) -> Cell<'a> + Send + Sync + 'a>>,
}

impl<'a> Computed<'a> {
    /// A column of `len` rows; `text` says whether text filters search it by default.
    pub fn new(
        len: usize,
        text: bool,
        cell: impl Fn(usize) -> Cell<'a> + Send + Sync + 'a,
    ) -> Self {
        Computed {
            len,
            text,
            cell: Box::new(cell),
            key: None,
        }
    }

    /// Sorts by `key(row)` instead of the shown cell.
    pub fn sorted_by(mut self, key: impl Fn(usize) -> Cell<'a> + Send + Sync + 'a) -> Self {
        self.key = Some(Box::new(key));
        self
    }
}

impl ColumnData for Computed<'_> {
    fn len(&self) -> usize {
        self.len
    }
    fn cell(&self, row: usize) -> Cell<'_> {
        if row < self.len {
            (self.cell)(row)
        } else {
            Cell::Null
        }
    }
    fn is_text(&self) -> bool {
        self.text
    }
    fn compare(&self, a: usize, b: usize) -> Ordering {
        match &self.key {
            Some(key) => compare_cells(&key(a), &key(b)),
            None => compare_cells(&self.cell(a), &self.cell(b)),
        }
    }
}

/// A value of one cell, serialised as a JSON number, string, boolean or null.
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
    /// A flag.
    B(bool),
    /// A missing value.
    Null,
}

impl<'a> Cell<'a> {
    /// The value as a number for range filters (`None` for missing values, text and flags).
    pub fn number(&self) -> Option<f64> {
        match *self {
            Cell::U(x) => Some(x as f64),
            Cell::I(x) => Some(x as f64),
            Cell::F(x) => Some(x).filter(|x| !x.is_nan()),
            Cell::S(_) | Cell::B(_) | Cell::Null => None,
        }
    }

    /// The text of a text cell.
    pub fn text(&self) -> Option<&'a str> {
        match *self {
            Cell::S(s) => Some(s),
            _ => None,
        }
    }
}

/// Name and display kind of a column (the page formats cells by kind).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ColumnSpec {
    /// The column's name: what queries and pages call it, and the header the page shows.
    pub name: String,
    /// How to show it: `bytes`, `int`, `ns`, `hex`, `text`, `float`, `flag`.
    pub kind: &'static str,
}

struct Slot<'a> {
    spec: ColumnSpec,
    data: Box<dyn ColumnData + 'a>,
    /// Shown in pages; hidden columns only filter and sort (a call stack searched by regex).
    shown: bool,
}

/// A table: named columns of equal length.
#[derive(Default)]
pub struct Table<'a> {
    columns: Vec<Slot<'a>>,
    rows: usize,
}

impl<'a> Table<'a> {
    /// An empty table with no columns.
    pub fn new() -> Self {
        Table {
            columns: Vec::new(),
            rows: 0,
        }
    }

    fn push(
        mut self,
        name: &str,
        kind: &'static str,
        data: Box<dyn ColumnData + 'a>,
        shown: bool,
    ) -> Self {
        if self.columns.is_empty() {
            self.rows = data.len();
        }
        debug_assert_eq!(
            data.len(),
            self.rows,
            "column {name} has a different length"
        );
        self.rows = self.rows.min(data.len());
        self.columns.push(Slot {
            spec: ColumnSpec {
                name: name.to_string(),
                kind,
            },
            data,
            shown,
        });
        self
    }

    /// Adds an owned column; all columns must have the same length.
    pub fn with(self, name: &str, kind: &'static str, column: Column) -> Self {
        self.push(name, kind, Box::new(column), true)
    }

    /// Adds any column (a [`Computed`] one over borrowed data).
    pub fn with_data(self, name: &str, kind: &'static str, data: impl ColumnData + 'a) -> Self {
        self.push(name, kind, Box::new(data), true)
    }

    /// Adds a column that filters and sorts but is not sent in pages.
    pub fn hidden(self, name: &str, data: impl ColumnData + 'a) -> Self {
        self.push(name, "text", Box::new(data), false)
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The shown columns' names and kinds, in order.
    pub fn specs(&self) -> Vec<&ColumnSpec> {
        self.columns
            .iter()
            .filter(|c| c.shown)
            .map(|c| &c.spec)
            .collect()
    }

    /// The index of the column called `name`.
    fn index(&self, name: &str) -> Result<usize, String> {
        self.columns
            .iter()
            .position(|c| c.spec.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.columns.iter().map(|c| c.spec.name.as_str()).collect();
                format!("no column {name:?}: the columns are {}", names.join(", "))
            })
    }

    /// The cell of `row` in the column called `name`.
    pub fn cell(&self, row: usize, name: &str) -> Option<Cell<'_>> {
        let c = self.index(name).ok()?;
        Some(self.columns[c].data.cell(row))
    }

    /// Applies `query`; the result lists matching rows in display order.
    pub fn view(&self, query: &Query) -> Result<TableView, String> {
        struct Filter {
            matcher: TextMatcher,
            columns: Vec<usize>,
            /// Per interned column, the verdict for each distinct string.
            verdicts: Vec<Option<Vec<bool>>>,
        }
        let mut filters = Vec::new();
        for f in &query.text {
            let Some(matcher) = TextMatcher::new(&f.pattern, f.regex, f.case_sensitive)? else {
                continue;
            };
            let columns: Vec<usize> = match &f.column {
                Some(name) => vec![self.index(name)?],
                None => (0..self.columns.len())
                    .filter(|&c| self.columns[c].data.is_text() && self.columns[c].shown)
                    .collect(),
            };
            let verdicts = (0..self.columns.len())
                .map(|c| match self.columns[c].data.symbols() {
                    Some((_, dict)) if columns.contains(&c) => {
                        Some(dict.par_iter().map(|s| matcher.is_match(s)).collect())
                    }
                    _ => None,
                })
                .collect();
            filters.push(Filter {
                matcher,
                columns,
                verdicts,
            });
        }
        let ranges: Vec<(usize, Option<f64>, Option<f64>)> = query
            .ranges
            .iter()
            .map(|(name, lo, hi)| Ok((self.index(name)?, *lo, *hi)))
            .collect::<Result<_, String>>()?;
        let sort: Vec<(usize, bool)> = query
            .sort
            .iter()
            .map(|(name, desc)| Ok((self.index(name)?, *desc)))
            .collect::<Result<_, String>>()?;
        let keep = |row: usize| -> bool {
            for &(c, lo, hi) in &ranges {
                let Some(v) = self.columns[c].data.cell(row).number() else {
                    return false;
                };
                if lo.is_some_and(|lo| v < lo) || hi.is_some_and(|hi| v > hi) {
                    return false;
                }
            }
            filters.iter().all(|f| {
                f.columns.iter().any(|&c| {
                    let data = &self.columns[c].data;
                    match (data.symbols(), &f.verdicts[c]) {
                        (Some((ids, _)), Some(verdict)) => ids
                            .get(row)
                            .and_then(|&i| verdict.get(i as usize))
                            .copied()
                            .unwrap_or(false),
                        _ => data.cell(row).text().is_some_and(|s| f.matcher.is_match(s)),
                    }
                })
            })
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
        if !sort.is_empty() {
            order.par_sort_by(|&a, &b| {
                for &(c, desc) in &sort {
                    let o = self.columns[c].data.compare(a as usize, b as usize);
                    let o = if desc { o.reverse() } else { o };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.cmp(&b)
            });
        }
        if query.reverse {
            order.reverse();
        }
        Ok(TableView { order })
    }
}

/// A text filter: rows whose text (in `column`, or any shown text column) contains `pattern`
/// or, with `regex`, matches it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct TextFilter {
    /// The column searched; any shown text column when absent.
    pub column: Option<String>,
    /// What to look for (an empty pattern keeps every row).
    pub pattern: String,
    /// `pattern` is a regular expression.
    pub regex: bool,
    /// Letters must match in case (otherwise they need not).
    pub case_sensitive: bool,
}

/// What to show of a table. Columns are named.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Query {
    /// Sort keys: column and descending flag, most significant first. Ties keep row order.
    pub sort: Vec<(String, bool)>,
    /// Reverse the final order, ties included (a descending sort that mirrors the ascending one
    /// exactly).
    pub reverse: bool,
    /// Text filters; a row must pass all of them.
    pub text: Vec<TextFilter>,
    /// Keep rows whose numeric value in the column lies in `[min, max]` (missing values never do).
    pub ranges: Vec<(String, Option<f64>, Option<f64>)>,
    /// Only consider these rows (e.g. the allocations of a time window).
    pub subset: Option<Vec<u32>>,
}

/// The rows a query matched, in display order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableView {
    order: Vec<u32>,
}

/// One page of a table view: the cells of each shown column, by name.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    /// Rows matching the query in all.
    pub total: usize,
    /// Position of the first row of this page in the view.
    pub offset: usize,
    /// Row ids (indices into the table) of this page.
    pub ids: Vec<u32>,
    /// Each shown column's name and its cells for the rows of `ids`.
    pub columns: Vec<(&'a str, Vec<Cell<'a>>)>,
}

impl Page<'_> {
    /// The cells of the column called `name`.
    pub fn column(&self, name: &str) -> Option<&[Cell<'_>]> {
        self.columns
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c.as_slice())
    }
}

/// `{"total", "offset", "ids", "columns": {"<name>": [cells…], …}}`, columns in table order.
impl Serialize for Page<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Columns<'p, 'a>(&'p [(&'a str, Vec<Cell<'a>>)]);
        impl Serialize for Columns<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_map(self.0.iter().map(|(n, c)| (n, c)))
            }
        }
        let mut s = serializer.serialize_struct("Page", 4)?;
        s.serialize_field("total", &self.total)?;
        s.serialize_field("offset", &self.offset)?;
        s.serialize_field("ids", &self.ids)?;
        s.serialize_field("columns", &Columns(&self.columns))?;
        s.end()
    }
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
        let columns = table
            .columns
            .iter()
            .filter(|c| c.shown)
            .map(|c| {
                let cells = ids.iter().map(|&r| c.data.cell(r as usize)).collect();
                (c.spec.name.as_str(), cells)
            })
            .collect();
        Page {
            total: self.order.len(),
            offset: start,
            ids,
            columns,
        }
    }

    /// Where row `id` sits in the view, if it matched.
    pub fn position(&self, id: u32) -> Option<usize> {
        self.order.iter().position(|&r| r == id)
    }
}

enum TextMatcher {
    /// Case-insensitive substring (lowercased).
    Substring(String),
    /// Case-sensitive substring.
    Exact(String),
    Regex(regex::Regex),
}

impl TextMatcher {
    fn new(p: &str, regex: bool, case_sensitive: bool) -> Result<Option<TextMatcher>, String> {
        if p.is_empty() {
            return Ok(None);
        }
        if regex {
            regex::RegexBuilder::new(p)
                .case_insensitive(!case_sensitive)
                .size_limit(1 << 20)
                .build()
                .map(|r| Some(TextMatcher::Regex(r)))
                .map_err(|e| format!("invalid regular expression {p:?}: {e}"))
        } else if case_sensitive {
            Ok(Some(TextMatcher::Exact(p.to_string())))
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
            TextMatcher::Exact(p) => s.contains(p.as_str()),
            TextMatcher::Regex(r) => r.is_match(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table<'static> {
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

    fn sort(keys: &[(&str, bool)]) -> Query {
        Query {
            sort: keys.iter().map(|&(n, d)| (n.to_string(), d)).collect(),
            ..Query::default()
        }
    }

    #[test]
    fn sorts_with_missing_last_and_stable_ties() {
        let t = table();
        assert_eq!(
            t.view(&sort(&[("release", false)])).unwrap().ids(),
            &[2, 0, 3, 1, 4]
        );
        assert_eq!(
            t.view(&sort(&[("size", true)])).unwrap().ids(),
            &[1, 3, 2, 0, 4]
        );
        assert_eq!(
            t.view(&sort(&[("name", false), ("size", true)]))
                .unwrap()
                .ids(),
            &[3, 0, 1, 4, 2]
        );
        // `reverse` mirrors the ascending order, ties included.
        let q = Query {
            reverse: true,
            ..sort(&[("size", false)])
        };
        assert_eq!(t.view(&q).unwrap().ids(), &[1, 3, 2, 4, 0]);
        assert!(t
            .view(&sort(&[("nope", false)]))
            .unwrap_err()
            .contains("no column \"nope\""));
    }

    #[test]
    fn filters_text_regex_ranges_and_subsets() {
        let t = table();
        let q = |pattern: &str, regex: bool| Query {
            text: vec![TextFilter {
                pattern: pattern.into(),
                regex,
                ..TextFilter::default()
            }],
            ..Query::default()
        };
        assert_eq!(t.view(&q("ATEN::E", false)).unwrap().ids(), &[0, 3]);
        assert_eq!(t.view(&q("a\\.py", true)).unwrap().ids(), &[0, 3]);
        assert_eq!(t.view(&q("^cann::", true)).unwrap().ids(), &[2]);
        assert!(t
            .view(&q("(", true))
            .unwrap_err()
            .contains("invalid regular expression"));
        // Two filters, one per column, case-sensitive: both must hold.
        let both = Query {
            text: vec![
                TextFilter {
                    column: Some("name".into()),
                    pattern: "^aten".into(),
                    regex: true,
                    case_sensitive: true,
                },
                TextFilter {
                    column: Some("stack".into()),
                    pattern: "a.py".into(),
                    case_sensitive: true,
                    ..TextFilter::default()
                },
            ],
            ..Query::default()
        };
        assert_eq!(t.view(&both).unwrap().ids(), &[0]);
        let ranged = Query {
            ranges: vec![("size".into(), Some(1000.0), Some(3000.0))],
            ..Query::default()
        };
        assert_eq!(t.view(&ranged).unwrap().ids(), &[2, 3]);
        let missing = Query {
            ranges: vec![("release".into(), Some(0.0), None)],
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
    fn computed_columns_sort_by_their_own_key_and_hidden_ones_stay_out_of_pages() {
        let sizes: Vec<i64> = vec![-5, 3, -1, 4];
        let stacks = ["x.py", "y.py", "x.py", "z.py"];
        let t = Table::new()
            .with_data(
                "size",
                "bytes",
                Computed::new(4, false, |r| Cell::I(sizes[r]))
                    .sorted_by(|r| Cell::U(sizes[r].unsigned_abs())),
            )
            .with_data(
                "flag",
                "flag",
                Computed::new(4, false, |r| Cell::B(sizes[r] < 0)),
            )
            .hidden("stack", Computed::new(4, true, |r| Cell::S(stacks[r])));
        assert_eq!(
            t.view(&sort(&[("size", false)])).unwrap().ids(),
            &[2, 1, 3, 0]
        );
        let q = Query {
            text: vec![TextFilter {
                column: Some("stack".into()),
                pattern: "x.py".into(),
                ..TextFilter::default()
            }],
            ..Query::default()
        };
        let v = t.view(&q).unwrap();
        assert_eq!(v.ids(), &[0, 2]);
        assert_eq!(
            serde_json::to_string(&v.page(&t, 0, 10)).unwrap(),
            r#"{"total":2,"offset":0,"ids":[0,2],"columns":{"size":[-5,-1],"flag":[true,true]}}"#
        );
        assert_eq!(t.specs().len(), 2);
    }

    #[test]
    fn pages_carry_cells_by_column_name() {
        let t = table();
        let v = t.view(&Query::default()).unwrap();
        let page = v.page(&t, 1, 2);
        assert_eq!(
            serde_json::to_string(&page).unwrap(),
            r#"{"total":5,"offset":1,"ids":[1,2],"columns":{"name":["aten::mm","cann::Add"],"size":[4096,1024],"release":[null,1],"stack":["","b.py(2)"]}}"#
        );
        assert_eq!(
            page.column("size"),
            Some(&[Cell::U(4096), Cell::U(1024)][..])
        );
        assert_eq!(v.page(&t, 10, 5).ids.len(), 0);
        assert_eq!(t.cell(2, "name"), Some(Cell::S("cann::Add")));
    }
}
