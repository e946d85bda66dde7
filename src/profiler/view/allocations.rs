//! The allocation table of a rank: its rows as a [`crate::table::Table`] of named columns computed
//! over the analysis (no copy), and the page's query mapped onto it — the meaning of the rows
//! (time window, live set, leak candidates, frame group, size) through
//! [`RankAnalysis::rows_matching`], the name and stack patterns, sorting and paging through the
//! table.
//!
//! Times are nanoseconds relative to the rank's capture start (`origin`), as the page shows them.

use crate::profiler::analysis::RankAnalysis;
use crate::profiler::queries::RowFilter;
use crate::table::{Cell, Computed, Query, Table, TableView, TextFilter};
use serde::Deserialize;

/// Sort keys of the allocation table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SortKey {
    /// Allocation time (rows without one first).
    #[default]
    Time,
    /// Size (its magnitude).
    Size,
    /// Duration (rows without one first).
    Duration,
    /// Name.
    Name,
    /// Release time (never-released rows last).
    Release,
    /// Top user frame.
    Frame,
}

impl SortKey {
    /// The column this key sorts.
    fn column(self) -> &'static str {
        match self {
            SortKey::Time => "start",
            SortKey::Size => "size",
            SortKey::Duration => "duration",
            SortKey::Name => "name",
            SortKey::Release => "release",
            SortKey::Frame => "top_frame",
        }
    }
}

/// What the allocation table shows, as the page asks: times in ns relative to the capture start
/// (JavaScript numbers), patterns as regular expressions.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AllocationQuery {
    /// Regular expression on the name.
    pub name: Option<String>,
    /// Regular expression on the call stack.
    pub stack: Option<String>,
    /// Smallest size in bytes.
    pub min_size: Option<f64>,
    /// Largest size in bytes.
    pub max_size: Option<f64>,
    /// Window start: rows allocated at or after it.
    pub start: Option<f64>,
    /// Window end: rows allocated at or before it.
    pub end: Option<f64>,
    /// Only PTA allocations alive at this time.
    pub live_at: Option<f64>,
    /// Only allocations not released by `end` (or never).
    pub unreleased: bool,
    /// Only rows of this group (top user frame, or the no-stack group).
    pub frame: Option<String>,
    /// Sort key.
    pub sort: SortKey,
    /// Largest first: the ascending order mirrored, ties included.
    pub descending: bool,
}

/// Relative ns (a JavaScript number) → absolute ns.
pub fn abs_ns(origin: i64, rel: f64) -> i64 {
    // `as` saturates for out-of-range floats and maps NaN to 0.
    origin.saturating_add(rel.round() as i64)
}

/// Absolute ns → relative ns.
pub fn rel_ns(origin: i64, t: i64) -> i64 {
    t.saturating_sub(origin)
}

/// The rows of `rank` as a table; times relative to `origin`. Shown columns: `name`, `size`
/// (signed: legacy negative rows are releases), `start`, `duration`, `release`,
/// `total_allocated`, `total_reserved`, `total_active`, `stream`, `device`, `source`,
/// `stack_source`, `top_frame`, `step`, `unreleased`; hidden: `stack` (searched, not sent).
pub fn allocation_table(rank: &RankAnalysis, origin: i64) -> Table<'_> {
    let n = rank.rows.len();
    let r = rank;
    let rel = move |t: Option<i64>| t.map_or(Cell::Null, |t| Cell::I(rel_ns(origin, t)));
    let opt_u = |v: Option<u64>| v.map_or(Cell::Null, Cell::U);
    Table::new()
        .with_data(
            "name",
            "text",
            Computed::new(n, true, move |i| Cell::S(r.name(i))),
        )
        .with_data(
            "size",
            "bytes",
            Computed::new(n, false, move |i| {
                let m = &r.rows[i];
                let size = i64::try_from(m.size).unwrap_or(i64::MAX);
                Cell::I(if m.negative { -size } else { size })
            })
            .sorted_by(move |i| Cell::U(r.rows[i].size)),
        )
        .with_data(
            "start",
            "ns",
            Computed::new(n, false, move |i| rel(r.rows[i].time_ns()))
                .sorted_by(move |i| Cell::I(r.rows[i].time_ns().unwrap_or(i64::MIN))),
        )
        .with_data(
            "duration",
            "ns",
            Computed::new(n, false, move |i| {
                r.rows[i].duration_ns().map_or(Cell::Null, Cell::I)
            })
            .sorted_by(move |i| Cell::I(r.rows[i].duration_ns().unwrap_or(i64::MIN))),
        )
        .with_data(
            "release",
            "ns",
            Computed::new(n, false, move |i| rel(r.rows[i].release_ns())),
        )
        .with_data(
            "total_allocated",
            "bytes",
            Computed::new(n, false, move |i| opt_u(r.rows[i].alloc_total_allocated())),
        )
        .with_data(
            "total_reserved",
            "bytes",
            Computed::new(n, false, move |i| opt_u(r.rows[i].alloc_total_reserved())),
        )
        .with_data(
            "total_active",
            "bytes",
            Computed::new(n, false, move |i| opt_u(r.rows[i].alloc_total_active())),
        )
        .with_data(
            "stream",
            "text",
            Computed::new(n, true, move |i| Cell::S(r.names.get(r.rows[i].stream))),
        )
        .with_data(
            "device",
            "text",
            Computed::new(n, true, move |i| Cell::S(r.names.get(r.rows[i].device))),
        )
        .with_data(
            "source",
            "text",
            Computed::new(n, false, move |i| Cell::S(r.rows[i].source.label())),
        )
        .with_data(
            "stack_source",
            "text",
            Computed::new(n, false, move |i| {
                Cell::S(r.attribution.get(i).map_or("none", |a| a.source.label()))
            }),
        )
        .with_data(
            "top_frame",
            "text",
            Computed::new(n, true, move |i| Cell::S(r.top_frame(i))),
        )
        .with_data(
            "step",
            "int",
            Computed::new(n, false, move |i| {
                opt_u(r.row_step.get(i).copied().flatten())
            }),
        )
        .with_data(
            "unreleased",
            "flag",
            Computed::new(n, false, move |i| {
                let m = &r.rows[i];
                Cell::B(m.release_ns().is_none() && !m.negative)
            }),
        )
        .hidden(
            "stack",
            Computed::new(n, true, move |i| Cell::S(r.stack(i))),
        )
}

/// The rows `q` selects from `table` (built by [`allocation_table`] over `rank`), in display
/// order.
pub fn select(
    rank: &RankAnalysis,
    table: &Table,
    origin: i64,
    q: &AllocationQuery,
) -> Result<TableView, String> {
    let size = |v: Option<f64>| v.map(|x| x.max(0.0).round() as u64);
    let filter = RowFilter {
        start_ns: q.start.map(|s| abs_ns(origin, s)),
        end_ns: q.end.map(|e| abs_ns(origin, e)),
        live_at: q.live_at.map(|t| abs_ns(origin, t)),
        unreleased: q.unreleased,
        top_frame: q.frame.clone(),
        min_size: size(q.min_size),
        max_size: size(q.max_size),
    };
    let pattern = |column: &str, p: &Option<String>| {
        p.as_ref().map(|p| TextFilter {
            column: Some(column.to_string()),
            pattern: p.clone(),
            regex: true,
            case_sensitive: true,
        })
    };
    let query = Query {
        sort: vec![(q.sort.column().to_string(), false)],
        reverse: q.descending,
        text: [pattern("name", &q.name), pattern("stack", &q.stack)]
            .into_iter()
            .flatten()
            .collect(),
        ranges: Vec::new(),
        subset: Some(rank.rows_matching(&filter)),
    };
    table.view(&query)
}
