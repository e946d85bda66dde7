//! Table b-trees: every row of a table, in rowid order.
//!
//! A table is a b-tree of pages. Interior pages (type 5) hold child page numbers, each with the
//! largest rowid below it, and a right-most child; leaf pages (type 13) hold the rows as cells:
//! the payload length (varint), the rowid (varint), the first bytes of the payload and, when the
//! payload does not fit, the number of its first overflow page. Overflow pages chain: 4 bytes of
//! next-page number, then payload. How much stays on the leaf follows SQLite's rule with `U` the
//! usable page size: all of it up to `U − 35` bytes, else `M + (P − M) mod (U − 4)` bytes if that
//! is at most `U − 35`, else `M`, where `M = (U − 12)·32/255 − 23`.
//!
//! The walk is depth-first with an explicit stack and a bitmap of the pages seen, so a damaged
//! file whose child pointers form a cycle (or share a page) is an error naming the page, never an
//! endless loop; an overflow chain is followed for exactly as many pages as its payload needs.

use super::pager::{Page, Pager};
use super::DbError;

/// The largest row payload accepted. Rows of the profiler tables are tens of bytes; a damaged
/// length field must not make the reader allocate gigabytes.
pub const MAX_PAYLOAD: u64 = 64 << 20;

const INTERIOR_TABLE: u8 = 5;
const LEAF_TABLE: u8 = 13;

fn be16(b: &[u8], i: usize) -> Option<usize> {
    b.get(i..i + 2)
        .map(|s| usize::from(u16::from_be_bytes([s[0], s[1]])))
}

fn be32(b: &[u8], i: usize) -> Option<u32> {
    b.get(i..i + 4)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// A row as the walk hands it out.
pub struct Cell<'a> {
    /// The row's rowid.
    pub rowid: i64,
    /// The whole payload (a record).
    pub payload: &'a [u8],
    /// File offset of the cell, for messages.
    pub offset: u64,
}

/// Where a page's header starts (page 1 carries the 100-byte file header first).
fn header_start(page: &Page) -> usize {
    if page.number == 1 {
        100
    } else {
        0
    }
}

/// A set of page numbers (one bit each).
struct Seen(Vec<u64>);

impl Seen {
    fn new(pages: u32) -> Self {
        Seen(vec![0; (pages as usize).div_ceil(64) + 1])
    }
    /// Marks `p`; false when it was already marked.
    fn insert(&mut self, p: u32) -> bool {
        let (w, b) = ((p / 64) as usize, p % 64);
        match self.0.get_mut(w) {
            Some(word) if *word & (1 << b) == 0 => {
                *word |= 1 << b;
                true
            }
            _ => false,
        }
    }
}

/// Calls `f` for every row of the table b-tree rooted at `root`, in rowid order.
///
/// `usable` is the usable page size; `table` names the table in messages.
pub fn scan(
    pager: &Pager<'_>,
    root: u32,
    usable: u32,
    table: &str,
    f: &mut dyn FnMut(&Cell<'_>) -> Result<(), DbError>,
) -> Result<(), DbError> {
    let mut seen = Seen::new(pager.page_count());
    if root == 0 || root > pager.page_count() || !seen.insert(root) {
        return Err(DbError::new(format!(
            "table {table}: root page {root} is outside the database (pages 1 to {})",
            pager.page_count()
        )));
    }
    // (page, next child to visit); leaves are handled as soon as they are reached.
    let mut stack: Vec<(Page, usize)> = Vec::new();
    let mut scratch: Vec<u8> = Vec::new();
    let first = pager
        .page(root)
        .map_err(|e| e.context(&format!("table {table}")))?;
    let mut next = Some(first);
    loop {
        if let Some(page) = next.take() {
            let h = header_start(&page);
            let b = page.bytes();
            match b.get(h).copied() {
                Some(INTERIOR_TABLE) => stack.push((page, 0)),
                Some(LEAF_TABLE) => leaf(pager, &page, usable, table, &mut seen, &mut scratch, f)?,
                other => {
                    return Err(DbError::at(
                        page.offset + h as u64,
                        format!(
                            "table {table}: page {} has page type {}, expected a table b-tree \
                             page (5 or 13)",
                            page.number,
                            other.map_or("(none)".to_string(), |t| t.to_string())
                        ),
                    ))
                }
            }
        }
        let Some((page, k)) = stack.last_mut() else {
            return Ok(());
        };
        let h = header_start(page);
        let b = page.bytes();
        let cells = be16(b, h + 3).unwrap_or(0);
        let child = if *k < cells {
            let ptr = be16(b, h + 12 + 2 * *k)
                .filter(|&p| p >= h + 12 && p + 4 <= usable as usize)
                .ok_or_else(|| {
                    DbError::at(
                        page.offset + h as u64,
                        format!(
                            "table {table}: interior page {} has a cell pointer outside the page",
                            page.number
                        ),
                    )
                })?;
            be32(b, ptr).unwrap_or(0)
        } else if *k == cells {
            be32(b, h + 8).unwrap_or(0)
        } else {
            stack.pop();
            continue;
        };
        *k += 1;
        let (from, at) = (page.number, page.offset);
        if child == 0 || child > pager.page_count() {
            return Err(DbError::at(
                at,
                format!(
                    "table {table}: page {from} points to child page {child}, outside the \
                     database (pages 1 to {})",
                    pager.page_count()
                ),
            ));
        }
        if !seen.insert(child) {
            return Err(DbError::at(
                at,
                format!(
                    "table {table}: page {from} points to page {child}, which this table's b-tree \
                     reached before (a page cycle: the file is damaged)"
                ),
            ));
        }
        next = Some(pager.page(child)?);
    }
}

/// The rows of one leaf page.
fn leaf(
    pager: &Pager<'_>,
    page: &Page,
    usable: u32,
    table: &str,
    seen: &mut Seen,
    scratch: &mut Vec<u8>,
    f: &mut dyn FnMut(&Cell<'_>) -> Result<(), DbError>,
) -> Result<(), DbError> {
    let h = header_start(page);
    let b = page.bytes();
    let u = usable as usize;
    let b = b.get(..u).unwrap_or(b);
    let cells = be16(b, h + 3).unwrap_or(0);
    let damaged = |at: usize, what: String| {
        DbError::at(
            page.offset + at as u64,
            format!("table {table}: leaf page {}: {what}", page.number),
        )
    };
    if h + 8 + 2 * cells > u {
        return Err(damaged(
            h + 3,
            format!("{cells} cells do not fit in a page of {u} usable bytes"),
        ));
    }
    let max_local = u - 35;
    let min_local = (u - 12) * 32 / 255 - 23;
    for k in 0..cells {
        let c = be16(b, h + 8 + 2 * k)
            .filter(|&p| p >= h + 8 + 2 * cells && p < u)
            .ok_or_else(|| {
                damaged(
                    h + 8 + 2 * k,
                    format!("cell pointer {k} is outside the page"),
                )
            })?;
        let (len, n1) = super::record::varint(b, c)
            .ok_or_else(|| damaged(c, "a cell's payload length runs past the page".into()))?;
        let (rowid, n2) = super::record::varint(b, c + n1)
            .ok_or_else(|| damaged(c, "a cell's rowid runs past the page".into()))?;
        if len > MAX_PAYLOAD {
            return Err(damaged(
                c,
                format!(
                    "a row of {len} bytes (rowid {}), more than the {MAX_PAYLOAD} bytes this \
                     reader accepts",
                    rowid as i64
                ),
            ));
        }
        let len = len as usize;
        let start = c + n1 + n2;
        let local = if len <= max_local {
            len
        } else {
            let k = min_local + (len - min_local) % (u - 4);
            if k <= max_local {
                k
            } else {
                min_local
            }
        };
        let on_page = b
            .get(start..start + local)
            .ok_or_else(|| damaged(c, format!("a row of {len} bytes runs past the page")))?;
        let payload: &[u8] = if local == len {
            on_page
        } else {
            scratch.clear();
            scratch.extend_from_slice(on_page);
            let first = be32(b, start + local)
                .ok_or_else(|| damaged(c, "the overflow page number runs past the page".into()))?;
            overflow(pager, first, len, u, seen, scratch)
                .map_err(|e| e.context(&format!("table {table}, rowid {}", rowid as i64)))?;
            scratch
        };
        f(&Cell {
            rowid: rowid as i64,
            payload,
            offset: page.offset + c as u64,
        })?;
    }
    Ok(())
}

/// Appends the overflow chain starting at page `next` to `out` until it holds `len` bytes.
///
/// Every overflow page belongs to one row: a page the table's walk has met before (as a b-tree
/// page or in another chain) is damage, which also bounds the work of a whole scan by the
/// number of pages in the file.
fn overflow(
    pager: &Pager<'_>,
    mut next: u32,
    len: usize,
    usable: usize,
    seen: &mut Seen,
    out: &mut Vec<u8>,
) -> Result<(), DbError> {
    while out.len() < len {
        if next == 0 {
            return Err(DbError::new(format!(
                "the overflow chain ends after {} of the row's {len} bytes",
                out.len()
            )));
        }
        if next > pager.page_count() || !seen.insert(next) {
            return Err(DbError::new(format!(
                "overflow page {next} is outside the database or already used by this table \
                 (the file is damaged)"
            )));
        }
        let page = pager.page(next)?;
        let b = page.bytes();
        let take = (len - out.len()).min(usable - 4);
        let part = b.get(4..4 + take).ok_or_else(|| {
            DbError::at(page.offset, "an overflow page is shorter than its content")
        })?;
        out.extend_from_slice(part);
        next = be32(b, 0).unwrap_or(0);
    }
    Ok(())
}
