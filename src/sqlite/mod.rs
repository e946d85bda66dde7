//! A read-only reader of SQLite 3 database files, below every input family.
//!
//! It reads what scanning a table needs and nothing more: the file header ([`header`]), table
//! b-trees in rowid order with their overflow pages ([`btree`]), records and their values
//! ([`record`]), and the schema table with each table's columns ([`schema`]). There is no SQL,
//! no index, no writing, no journal or WAL replay: a `-wal` file beside a database is checked by
//! [`wal_frames`] and reported by the caller, never applied.
//!
//! Pages are read on demand through [`crate::source::Source`] in aligned blocks held in a bounded
//! cache ([`pager`]), so a multi-gigabyte database is never copied whole into memory and only the
//! tables a caller scans are read. A damaged file gives a [`DbError`] naming the byte offset and
//! what was expected (not SQLite, truncated, a page cycle, a record running past its page…),
//! never a panic or an endless loop.
//!
//! Why a reader of our own rather than the SQLite library: see the README ("Dependencies").

pub mod btree;
pub mod header;
pub mod pager;
pub mod record;
pub mod schema;

pub use record::Value;
pub use schema::{Column, Table};

use crate::diag::Diagnostic;
use crate::source::{Source, SourceError};
use record::Slot;

/// A problem with a database file: what, and where (a byte offset) when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    /// Byte offset in the file, when known.
    pub offset: Option<u64>,
    /// What was found and what was expected.
    pub message: String,
}

impl DbError {
    /// An error without a position.
    pub fn new(message: impl Into<String>) -> Self {
        DbError {
            offset: None,
            message: message.into(),
        }
    }

    /// An error at byte `offset`.
    pub fn at(offset: u64, message: impl Into<String>) -> Self {
        DbError {
            offset: Some(offset),
            message: message.into(),
        }
    }

    /// The same error with `what` (e.g. the table) in front of its message.
    pub fn context(mut self, what: &str) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// The error as a diagnostic of `file`.
    pub fn to_diagnostic(&self, file: &str) -> Diagnostic {
        let d = Diagnostic::error(file, self.message.clone());
        match self.offset {
            Some(o) => d.at_byte(o),
            None => d,
        }
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "byte {o}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for DbError {}

impl From<SourceError> for DbError {
    fn from(e: SourceError) -> Self {
        DbError::at(e.offset, format!("cannot read the file: {}", e.message))
    }
}

/// One row of a table, as handed to a [`Database::scan`] callback.
pub struct Row<'a> {
    rowid: i64,
    payload: &'a [u8],
    slots: &'a [Slot],
    rowid_column: Option<usize>,
    real: &'a [bool],
    offset: u64,
}

impl<'a> Row<'a> {
    /// The row's rowid.
    pub fn rowid(&self) -> i64 {
        self.rowid
    }

    /// File offset of the row's cell (for messages).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The value of column `i` (NULL past the record's end: a column added after the row).
    pub fn get(&self, i: usize) -> Value<'a> {
        if Some(i) == self.rowid_column {
            return Value::Integer(self.rowid);
        }
        match self.slots.get(i).map(|&s| record::value(self.payload, s)) {
            Some(Value::Integer(v)) if self.real.get(i) == Some(&true) => Value::Real(v as f64),
            Some(v) => v,
            None => Value::Null,
        }
    }

    /// Number of values the record holds.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when the record holds no value.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// An open database: its header, its schema, and a pager to scan its tables.
pub struct Database<'s> {
    header: header::Header,
    pager: pager::Pager<'s>,
    tables: Vec<Table>,
    name: String,
}

impl<'s> Database<'s> {
    /// Opens the database in `src`: reads the header and the schema (page 1 and the pages of
    /// the schema table), nothing else.
    pub fn open(src: &'s dyn Source) -> Result<Self, DbError> {
        let head = src.read_range(0, header::HEADER_BYTES)?;
        let header = header::parse(&head, src.len())?;
        let pager = pager::Pager::new(src, header.page_size, header.page_count);
        let mut db = Database {
            header,
            pager,
            tables: Vec::new(),
            name: src.name().to_string(),
        };
        let master = Table {
            name: "sqlite_schema".to_string(),
            root: 1,
            columns: ["type", "name", "tbl_name", "rootpage", "sql"]
                .iter()
                .map(|n| Column {
                    name: n.to_string(),
                    decl_type: String::new(),
                })
                .collect(),
            rowid_column: None,
            without_rowid: false,
            virtual_table: false,
        };
        let mut tables = Vec::new();
        db.scan(&master, &mut |row| {
            let text = |i: usize| match row.get(i) {
                Value::Text(t) => String::from_utf8_lossy(t).into_owned(),
                _ => String::new(),
            };
            if text(0) != "table" {
                return Ok(());
            }
            let name = text(1);
            let root = match row.get(3) {
                Value::Integer(r) => u32::try_from(r).unwrap_or(0),
                _ => 0,
            };
            let sql = text(4);
            let t = schema::parse_create_table(&name, root, &sql)
                .map_err(|e| DbError::at(row.offset(), e.message))?;
            tables.push(t);
            Ok(())
        })
        .map_err(|e| e.context("the schema table (page 1)"))?;
        db.tables = tables;
        Ok(db)
    }

    /// The file header.
    pub fn header(&self) -> &header::Header {
        &self.header
    }

    /// Every table of the schema, in schema order.
    pub fn tables(&self) -> &[Table] {
        &self.tables
    }

    /// The table named `name` (case-insensitive).
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    }

    /// Bytes read from the file so far (header, schema and scanned tables).
    pub fn bytes_read(&self) -> u64 {
        self.pager.bytes_read()
    }

    /// File offset of the last page a scan or lookup reached (0 before the first).
    pub fn position(&self) -> u64 {
        self.pager.position()
    }

    /// Calls `f` for every row of `table`, in rowid order; stops at the first error (the file's
    /// or one `f` returns).
    pub fn scan(
        &self,
        table: &Table,
        f: &mut dyn FnMut(&Row<'_>) -> Result<(), DbError>,
    ) -> Result<(), DbError> {
        if table.without_rowid || table.virtual_table {
            return Err(DbError::new(format!(
                "table {} is a {} table, which this reader cannot scan",
                table.name,
                if table.virtual_table {
                    "virtual"
                } else {
                    "WITHOUT ROWID"
                }
            )));
        }
        let mut slots: Vec<Slot> = Vec::new();
        let real: Vec<bool> = table.columns.iter().map(Column::real_affinity).collect();
        btree::scan(
            &self.pager,
            table.root,
            self.header.usable,
            &table.name,
            &mut |cell| {
                record::decode_header(cell.payload, &mut slots, cell.offset).map_err(|e| {
                    e.context(&format!("table {}, rowid {}", table.name, cell.rowid))
                })?;
                f(&Row {
                    rowid: cell.rowid,
                    payload: cell.payload,
                    slots: &slots,
                    rowid_column: table.rowid_column,
                    real: &real,
                    offset: cell.offset,
                })
            },
        )
    }

    /// The display name of the file.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The magic numbers a WAL file starts with (big- and little-endian checksums).
const WAL_MAGIC: [u32; 2] = [0x377f_0682, 0x377f_0683];

/// How many complete frames of the WAL file `wal` belong to its current generation (their salts
/// match the WAL header's): pages committed after the database file was last written. 0 for an
/// empty file or one without a valid header (SQLite ignores those too).
pub fn wal_frames(wal: &dyn Source) -> Result<u64, DbError> {
    let head = wal.read_range(0, 32)?;
    let be = |b: &[u8], i: usize| {
        b.get(i..i + 4)
            .map_or(0, |s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    };
    if head.len() < 32 || !WAL_MAGIC.contains(&be(&head, 0)) {
        return Ok(0);
    }
    let page = u64::from(be(&head, 8));
    if !(512..=65_536).contains(&page) || !page.is_power_of_two() {
        return Ok(0);
    }
    let salts = (be(&head, 16), be(&head, 20));
    let frame = 24 + page;
    let mut n = 0;
    let mut at = 32u64;
    while at + frame <= wal.len() {
        let fh = wal.read_range(at, 24)?;
        if (be(&fh, 8), be(&fh, 12)) != salts {
            break;
        }
        n += 1;
        at += frame;
    }
    Ok(n)
}
