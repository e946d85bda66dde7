//! The schema: which tables exist, where their b-trees start, and their columns.
//!
//! Page 1 is the root of the schema table (`sqlite_schema`, formerly `sqlite_master`), whose
//! rows are `(type, name, tbl_name, rootpage, sql)`. A table's columns come from its
//! `CREATE TABLE` text, which SQLite stores as written: the column list is split at top-level
//! commas, each definition gives a name (bare or quoted with `"…"`, `` `…` ``, `[…]` or `'…'`)
//! and a declared type; table constraints (`PRIMARY KEY(…)`, `UNIQUE`, `CHECK`, `FOREIGN KEY`,
//! `CONSTRAINT`) are skipped. A column declared `INTEGER PRIMARY KEY` (or named alone in a table
//! `PRIMARY KEY(…)` with type `INTEGER`) is the rowid itself: its record slot holds NULL and its
//! value is the rowid. `WITHOUT ROWID` and virtual tables are listed but cannot be scanned.

use super::DbError;

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Name as declared (unquoted).
    pub name: String,
    /// Declared type as written (`INTEGER`, `TEXT`, `NUMERIC`, empty…).
    pub decl_type: String,
}

impl Column {
    /// True for REAL affinity (a declared type containing `REAL`, `FLOA` or `DOUB` and no
    /// `INT`, `CHAR`, `CLOB`, `TEXT` or `BLOB`, which SQLite's rules check first). SQLite stores
    /// a whole-number value of such a column as an integer to save space and reads it back as a
    /// real; [`crate::sqlite::Row::get`] does the same.
    pub fn real_affinity(&self) -> bool {
        let t = self.decl_type.to_ascii_uppercase();
        let has = |w: &str| t.contains(w);
        !has("INT")
            && !has("CHAR")
            && !has("CLOB")
            && !has("TEXT")
            && !has("BLOB")
            && (has("REAL") || has("FLOA") || has("DOUB"))
    }
}

/// A table of the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Name as declared.
    pub name: String,
    /// Root page of its b-tree (0 for virtual tables).
    pub root: u32,
    /// Columns in declaration order.
    pub columns: Vec<Column>,
    /// The column that is the rowid (`INTEGER PRIMARY KEY`), if any.
    pub rowid_column: Option<usize>,
    /// True for `WITHOUT ROWID` tables (stored as index b-trees; not readable here).
    pub without_rowid: bool,
    /// True for `CREATE VIRTUAL TABLE` (no b-tree of its own).
    pub virtual_table: bool,
}

impl Table {
    /// The index of the column named `name` (case-insensitive, as SQL names are).
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }
}

/// Splits `sql` into tokens: identifiers/keywords/numbers, quoted names (unquoted), and single
/// punctuation characters. Comments are dropped.
fn tokens(sql: &str) -> Vec<(String, bool)> {
    let b: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c.is_whitespace() {
            i += 1;
        } else if c == '-' && b.get(i + 1) == Some(&'-') {
            while b.get(i).is_some_and(|&c| c != '\n') {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            i += 2;
            while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
        } else if matches!(c, '"' | '`' | '\'' | '[') {
            let close = if c == '[' { ']' } else { c };
            let mut s = String::new();
            i += 1;
            while let Some(&d) = b.get(i) {
                if d == close {
                    // A doubled quote stands for itself (not inside […]).
                    if close != ']' && b.get(i + 1) == Some(&close) {
                        s.push(close);
                        i += 2;
                        continue;
                    }
                    break;
                }
                s.push(d);
                i += 1;
            }
            i += 1;
            out.push((s, true));
        } else if c.is_alphanumeric() || c == '_' || c == '$' || c == '.' || !c.is_ascii() {
            let mut s = String::new();
            while let Some(&d) = b.get(i) {
                if d.is_alphanumeric() || d == '_' || d == '$' || d == '.' || !d.is_ascii() {
                    s.push(d);
                    i += 1;
                } else {
                    break;
                }
            }
            out.push((s, false));
        } else {
            out.push((c.to_string(), false));
            i += 1;
        }
    }
    out
}

fn is_kw(t: &(String, bool), kw: &str) -> bool {
    !t.1 && t.0.eq_ignore_ascii_case(kw)
}

/// Words that end a column's declared type and start its constraints.
const CONSTRAINT_WORDS: [&str; 11] = [
    "CONSTRAINT",
    "PRIMARY",
    "NOT",
    "NULL",
    "UNIQUE",
    "CHECK",
    "DEFAULT",
    "COLLATE",
    "REFERENCES",
    "GENERATED",
    "AS",
];

/// Parses a `CREATE TABLE` statement of table `name` rooted at `root`.
pub fn parse_create_table(name: &str, root: u32, sql: &str) -> Result<Table, DbError> {
    let t = tokens(sql);
    let mut table = Table {
        name: name.to_string(),
        root,
        columns: Vec::new(),
        rowid_column: None,
        without_rowid: false,
        virtual_table: t.iter().take(3).any(|x| is_kw(x, "VIRTUAL")),
    };
    if table.virtual_table {
        return Ok(table);
    }
    let bad = |what: &str| {
        DbError::new(format!(
            "the schema entry of table {name} is not a CREATE TABLE statement this reader \
             understands ({what}): {}",
            sql.chars().take(120).collect::<String>()
        ))
    };
    let open = t
        .iter()
        .position(|x| !x.1 && x.0 == "(")
        .ok_or_else(|| bad("no column list"))?;
    // Split the column list at top-level commas.
    let mut defs: Vec<&[(String, bool)]> = Vec::new();
    let mut depth = 0usize;
    let mut from = open + 1;
    let mut close = None;
    for (i, x) in t.iter().enumerate().skip(open + 1) {
        if x.1 {
            continue;
        }
        match x.0.as_str() {
            "(" => depth += 1,
            ")" if depth == 0 => {
                defs.push(&t[from..i]);
                close = Some(i);
                break;
            }
            ")" => depth -= 1,
            "," if depth == 0 => {
                defs.push(&t[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    let close = close.ok_or_else(|| bad("the column list is not closed"))?;
    let rest = &t[close + 1..];
    table.without_rowid = rest
        .windows(2)
        .any(|w| is_kw(&w[0], "WITHOUT") && is_kw(&w[1], "ROWID"));
    let mut table_pk: Vec<String> = Vec::new();
    for def in defs {
        let Some(first) = def.first() else {
            return Err(bad("an empty column definition"));
        };
        if !first.1
            && ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]
                .iter()
                .any(|k| first.0.eq_ignore_ascii_case(k))
        {
            if let Some(p) = def.iter().position(|x| is_kw(x, "PRIMARY")) {
                // [CONSTRAINT name] PRIMARY KEY ( col [ASC|DESC] , … )
                let inside: Vec<&(String, bool)> = def[p..]
                    .iter()
                    .skip_while(|x| x.1 || x.0 != "(")
                    .skip(1)
                    .take_while(|x| x.1 || x.0 != ")")
                    .collect();
                let names: Vec<String> = inside
                    .split(|x| !x.1 && x.0 == ",")
                    .filter_map(|g| g.first().map(|x| x.0.clone()))
                    .collect();
                table_pk = names;
            }
            continue;
        }
        let type_words: Vec<&str> = def[1..]
            .iter()
            .take_while(|x| x.1 || !CONSTRAINT_WORDS.iter().any(|k| x.0.eq_ignore_ascii_case(k)))
            .map(|x| x.0.as_str())
            .collect();
        let decl_type = type_words.join(" ").replace(" ( ", "(").replace(" )", ")");
        let pk = def
            .windows(2)
            .any(|w| is_kw(&w[0], "PRIMARY") && is_kw(&w[1], "KEY"));
        // `INTEGER PRIMARY KEY DESC` is not an alias (an SQLite quirk kept for compatibility).
        let desc = def.iter().any(|x| is_kw(x, "DESC"));
        if pk && !desc && decl_type.eq_ignore_ascii_case("INTEGER") {
            table.rowid_column = Some(table.columns.len());
        }
        table.columns.push(Column {
            name: first.0.clone(),
            decl_type,
        });
    }
    if table.rowid_column.is_none() && table_pk.len() == 1 {
        if let Some(i) = table.column(&table_pk[0]) {
            if table.columns[i].decl_type.eq_ignore_ascii_case("INTEGER") {
                table.rowid_column = Some(i);
            }
        }
    }
    if table.without_rowid {
        table.rowid_column = None;
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_profiler_tables() {
        let t = parse_create_table(
            "STRING_IDS",
            9,
            "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT)",
        )
        .unwrap();
        assert_eq!(t.columns.len(), 2);
        assert_eq!(t.rowid_column, Some(0));
        assert_eq!(t.column("VALUE"), Some(1));
        let t = parse_create_table(
            "PYTORCH_API",
            3,
            "CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER)",
        )
        .unwrap();
        assert_eq!(t.columns[1].name, "endNs");
        assert_eq!(t.columns[1].decl_type, "TEXT");
        assert_eq!(t.rowid_column, None);
    }

    #[test]
    fn quoted_names_types_with_sizes_and_table_constraints() {
        let t = parse_create_table(
            "x",
            2,
            "CREATE TABLE \"x\" ( -- comment\n [a b] VARCHAR(10) NOT NULL DEFAULT 'q,r', \
             \"c\"\"d\" DECIMAL(10, 2), `e` INTEGER, /* c */ f, CONSTRAINT pk PRIMARY KEY (e), \
             CHECK (f > 0))",
        )
        .unwrap();
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a b", "c\"d", "e", "f"]);
        assert_eq!(t.columns[0].decl_type, "VARCHAR(10)");
        assert_eq!(t.columns[1].decl_type, "DECIMAL(10 , 2)");
        assert_eq!(t.rowid_column, Some(2));
        let w = parse_create_table(
            "w",
            2,
            "CREATE TABLE w (k INTEGER PRIMARY KEY, v) WITHOUT ROWID",
        )
        .unwrap();
        assert!(w.without_rowid);
        assert_eq!(w.rowid_column, None);
        let desc =
            parse_create_table("d", 2, "CREATE TABLE d (k INTEGER PRIMARY KEY DESC)").unwrap();
        assert_eq!(desc.rowid_column, None);
        assert!(parse_create_table("z", 2, "CREATE TABLE z").is_err());
        assert!(
            parse_create_table("v", 0, "CREATE VIRTUAL TABLE v USING fts5(a)")
                .unwrap()
                .virtual_table
        );
    }
}
