//! Classification: which files of an input set form which units (a SOMAS dump, a profiler run
//! folder, …), and why the rest is not used.
//!
//! This module knows no family. Each family contributes a [`Recognizer`]; the front ends pass the
//! list of them (one list for the whole crate, `crate::families::RECOGNIZERS`). Two phases,
//! because a browser `File` can only be read on the worker that owns it:
//! 1. [`head_requests`] says how many leading bytes of each file classification needs;
//! 2. [`classify`] takes those bytes ([`Head`]) and builds the units, in parallel over units.
//!
//! Both are pure functions of the paths, sizes and heads, so the CLI (`memlens inspect`) and the
//! page give the same answer by construction. [`crate::input::InputSet::classify`] runs them over
//! the files of a set.

use super::paths::{file_name, normalize_path};
use rayon::prelude::*;
use serde::Serialize;
use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

/// One input file: its path relative to what the user dropped or named (`/`-separated), and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// Relative path, `/`-separated, including the dropped folder's own name.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// The leading bytes of a file, as far as classification asked for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// Classification did not need this file's content.
    NotRead,
    /// The first bytes (possibly the whole file).
    Bytes(Vec<u8>),
    /// The file could not be read; the message says why.
    Unreadable(String),
}

impl Head {
    /// The bytes read, if any.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Head::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// A file as a recognizer sees it: normalised path, size and the head it asked for.
#[derive(Debug, Clone, Copy)]
pub struct FileView<'a> {
    /// Normalised relative path.
    pub path: &'a str,
    /// Size in bytes.
    pub size: u64,
    /// The leading bytes read for classification.
    pub head: &'a Head,
}

impl FileView<'_> {
    /// The file name (last path component).
    pub fn name(&self) -> &str {
        file_name(self.path)
    }
}

/// Files a family claims together as one unit (a run folder and what lies under it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The unit's path (a folder, `""` for the top of the input).
    pub root: String,
    /// Indexes of its files in the entry list.
    pub members: Vec<usize>,
}

/// What one family knows about recognising its inputs.
///
/// Order matters only between families that could claim the same file: groups are claimed in
/// the order of the list, then each loose file goes to the first family that recognises it.
pub trait Recognizer: Sync {
    /// What this family's units are, for the message on files nobody recognised
    /// (`"a SOMAS dump"`, `"a task-info file"`).
    fn describes(&self) -> &'static [&'static str];

    /// Groups some of `paths` (normalised, by index; `None` = claimed by an earlier family) into
    /// units by their paths alone. The default claims nothing.
    fn group(&self, _paths: &[Option<(&str, u64)>]) -> Vec<Group> {
        Vec::new()
    }

    /// Leading bytes needed of a member of one of this family's groups (0: none).
    fn member_head(&self, _path: &str, _size: u64) -> usize {
        0
    }

    /// Leading bytes needed to tell whether a loose file is of this family (0: none).
    fn loose_head(&self, _path: &str, _size: u64) -> usize {
        0
    }

    /// The unit of one of this family's groups.
    fn build(&self, _group: &Group, _files: &[FileView]) -> Unit {
        Unit::new(UnknownFile {
            path: String::new(),
            size: 0,
            reason: "a family grouped files but builds no unit".to_string(),
        })
    }

    /// The unit a loose file is, if it is one of this family's.
    fn recognize(&self, _file: &FileView) -> Option<Unit> {
        None
    }

    /// Why a loose file nobody recognised is not of this family, when the family can tell
    /// better than the generic message (a solver log is not a memory plan).
    fn explain(&self, _file: &FileView) -> Option<String> {
        None
    }

    /// Whether the bytes of an archive member at `path` must be kept in memory: a file this family
    /// reads once classified (classification's own head reads are kept in any case).
    fn keeps(&self, _path: &str, _size: u64) -> bool {
        false
    }

    /// What this family looks for, in the words shown when inputs hold nothing to analyse
    /// (`"SOMAS dumps (recognised by their first lines)"`). Defaults to [`Recognizer::describes`].
    fn looks_for(&self) -> &'static [&'static str] {
        self.describes()
    }

    /// Things among the files nobody recognised (normalised paths) that come close to this
    /// family's inputs but cannot be read as they are — raw profiler data never analysed — with
    /// what to do about them. The default finds none.
    fn near_misses(&self, _unrecognised: &[&str]) -> Vec<Finding> {
        Vec::new()
    }

    /// The files this family reads beside one of its main units: pairs of indexes into `units`
    /// (sorted by path, every family's), `(used, main)` — a SOMAS task-info file and the dump of
    /// its graph. A unit used this way is part of the main unit's analysis, not a file left
    /// over. The default pairs nothing.
    fn used_with(&self, _units: &[Unit]) -> Vec<(usize, usize)> {
        Vec::new()
    }
}

/// A file read together with another unit's main file ([`Recognizer::used_with`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsedWith {
    /// The file read beside the main one (a task-info file).
    pub path: String,
    /// The main unit it is read with (a SOMAS dump).
    pub with: String,
}

/// Something found among the inputs that is not what was looked for, with what it is and, when
/// memlens can tell, what to do (shown when inputs hold nothing to analyse).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The file or folder (normalised relative path).
    pub path: String,
    /// What it is, in words.
    pub what: String,
    /// What to do to make it readable, if anything.
    pub hint: Option<String>,
}

/// The content of a unit: a family's own type, serialised flat beside `"kind"`.
pub trait UnitBody: erased_serde::Serialize + Any + Debug + Send + Sync {
    /// The stable kind name used in JSON and in the page (`somas`, `ascend-run`, …).
    fn kind(&self) -> &'static str;
    /// The unit's path (a file, or a folder).
    fn path(&self) -> &str;
    /// One line for `memlens inspect` (`rank 0 role actor`, `somas-info v2.4+`).
    fn summary(&self) -> String;
    /// Things the user should know about the unit.
    fn notes(&self) -> &[String] {
        &[]
    }
    /// Why a unit that cannot be analysed on its own ([`UnitBody::analysable`] false) is not
    /// analysed when nothing it is read with was given, in words a user understands; `None`
    /// leaves the words to the front end.
    fn alone(&self) -> Option<String> {
        None
    }
    /// Whether the unit's family can analyse it as it is (a run folder with memory files, a SOMAS
    /// dump); false for units that are only listed (a run folder whose analysis never ran, a
    /// task-info file without its dump, an unknown file).
    fn analysable(&self) -> bool {
        true
    }
}

erased_serde::serialize_trait_object!(UnitBody);

/// A classified unit. Families read their own units back with [`Unit::get`].
#[derive(Debug, Clone)]
pub struct Unit(Arc<dyn UnitBody>);

impl Unit {
    /// Wraps a family's unit.
    pub fn new(body: impl UnitBody) -> Unit {
        Unit(Arc::new(body))
    }

    /// The stable kind name.
    pub fn kind(&self) -> &'static str {
        self.0.kind()
    }

    /// The unit's path.
    pub fn path(&self) -> &str {
        self.0.path()
    }

    /// The family's type, if the unit is one.
    pub fn get<T: UnitBody>(&self) -> Option<&T> {
        let body: &dyn Any = &*self.0;
        body.downcast_ref::<T>()
    }

    /// The unit as its trait object (summary, notes).
    pub fn body(&self) -> &dyn UnitBody {
        &*self.0
    }
}

impl Serialize for Unit {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// `{"kind": …, <the body's fields>}`, the shape of an internally tagged enum.
        #[derive(Serialize)]
        struct Tagged<'a> {
            kind: &'static str,
            #[serde(flatten)]
            body: &'a dyn UnitBody,
        }
        Tagged {
            kind: self.kind(),
            body: &*self.0,
        }
        .serialize(serializer)
    }
}

/// Units are equal when they serialise the same (their kinds and every field).
impl PartialEq for Unit {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind()
            && serde_json::to_value(self).ok() == serde_json::to_value(other).ok()
    }
}

/// A file memlens does not use, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownFile {
    /// Relative path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Why it is not used, in words.
    pub reason: String,
}

impl UnitBody for UnknownFile {
    fn kind(&self) -> &'static str {
        "unknown"
    }
    fn path(&self) -> &str {
        &self.path
    }
    fn summary(&self) -> String {
        self.reason.clone()
    }
    fn analysable(&self) -> bool {
        false
    }
}

/// The result of classification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inventory {
    /// Units sorted by path.
    pub units: Vec<Unit>,
    /// Number of input files.
    pub files: u64,
    /// Total input bytes.
    pub bytes: u64,
    /// Units read beside another unit (a task-info file with its SOMAS dump), one entry per
    /// pair; a file in here is analysed, with the unit it names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub used_with: Vec<UsedWith>,
}

impl Inventory {
    /// An inventory of no files.
    pub fn empty() -> Inventory {
        Inventory {
            units: Vec::new(),
            files: 0,
            bytes: 0,
            used_with: Vec::new(),
        }
    }

    /// The units of one family's type `T`.
    pub fn units_of<T: UnitBody>(&self) -> impl Iterator<Item = &T> {
        self.units.iter().filter_map(Unit::get::<T>)
    }

    /// Whether the unit at `path` is read beside another unit (and so analysed with it).
    pub fn is_used_with_another(&self, path: &str) -> bool {
        self.used_with.iter().any(|u| u.path == path)
    }

    /// The units read beside the unit at `main`, in path order.
    pub fn used_beside<'a>(&'a self, main: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.used_with
            .iter()
            .filter(move |u| u.with == main)
            .map(|u| u.path.as_str())
    }
}

/// Who claimed each file by path: `Some((family, group))` or loose.
struct Claims {
    groups: Vec<(usize, Group)>,
    owner: Vec<Option<usize>>,
}

fn claim(paths: &[(String, u64)], recognizers: &[&dyn Recognizer]) -> Claims {
    let mut owner: Vec<Option<usize>> = vec![None; paths.len()];
    let mut groups = Vec::new();
    for (f, r) in recognizers.iter().enumerate() {
        let open: Vec<Option<(&str, u64)>> = paths
            .iter()
            .zip(&owner)
            .map(|((p, s), o)| o.is_none().then_some((p.as_str(), *s)))
            .collect();
        for g in r.group(&open) {
            // A family may only claim files still open, each once.
            let members: Vec<usize> = g
                .members
                .iter()
                .copied()
                .filter(|&i| owner.get(i) == Some(&None))
                .collect();
            for &i in &members {
                owner[i] = Some(groups.len());
            }
            if !members.is_empty() {
                groups.push((
                    f,
                    Group {
                        root: g.root,
                        members,
                    },
                ));
            }
        }
    }
    Claims { groups, owner }
}

fn normalized(entries: &[Entry]) -> Vec<(String, u64)> {
    entries
        .iter()
        .map(|e| (normalize_path(&e.path), e.size))
        .collect()
}

/// How many leading bytes of each of `entries` classification needs (0: none).
pub fn head_requests(entries: &[Entry], recognizers: &[&dyn Recognizer]) -> Vec<usize> {
    let paths = normalized(entries);
    let claims = claim(&paths, recognizers);
    paths
        .iter()
        .zip(&claims.owner)
        .map(|((path, size), owner)| match owner {
            Some(g) => {
                let family = claims.groups[*g].0;
                recognizers[family].member_head(path, *size)
            }
            None => recognizers
                .iter()
                .map(|r| r.loose_head(path, *size))
                .max()
                .unwrap_or(0),
        })
        .collect()
}

/// Classifies `entries`; `heads[i]` holds what [`head_requests`] asked for `entries[i]`.
///
/// Missing heads (a shorter `heads` slice) count as [`Head::NotRead`].
pub fn classify(entries: &[Entry], heads: &[Head], recognizers: &[&dyn Recognizer]) -> Inventory {
    let paths = normalized(entries);
    let claims = claim(&paths, recognizers);
    let not_read = Head::NotRead;
    let views: Vec<FileView> = paths
        .iter()
        .enumerate()
        .map(|(i, (path, size))| FileView {
            path,
            size: *size,
            head: heads.get(i).unwrap_or(&not_read),
        })
        .collect();
    let mut units: Vec<Unit> = claims
        .groups
        .par_iter()
        .map(|(family, group)| recognizers[*family].build(group, &views))
        .collect();
    let loose: Vec<usize> = (0..views.len())
        .filter(|&i| claims.owner[i].is_none())
        .collect();
    units.par_extend(
        loose
            .into_par_iter()
            .map(|i| classify_loose(&views[i], recognizers)),
    );
    units.sort_by(|a, b| a.path().cmp(b.path()).then(a.kind().cmp(b.kind())));
    let mut used_with: Vec<UsedWith> = recognizers
        .iter()
        .flat_map(|r| r.used_with(&units))
        .filter_map(|(used, main)| {
            Some(UsedWith {
                path: units.get(used)?.path().to_string(),
                with: units.get(main)?.path().to_string(),
            })
        })
        .collect();
    used_with.sort_by(|a, b| (&a.with, &a.path).cmp(&(&b.with, &b.path)));
    used_with.dedup();
    Inventory {
        files: paths.len() as u64,
        bytes: paths.iter().map(|f| f.1).sum(),
        units,
        used_with,
    }
}

/// `"a, b or c"`: what the families' units are, for the messages on unknown files.
fn what_families_read(recognizers: &[&dyn Recognizer]) -> String {
    let all: Vec<&str> = recognizers
        .iter()
        .flat_map(|r| r.describes().iter().copied())
        .collect();
    match all.split_last() {
        None => "anything memlens reads".to_string(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

fn classify_loose(file: &FileView, recognizers: &[&dyn Recognizer]) -> Unit {
    let unknown = |reason: String| {
        Unit::new(UnknownFile {
            path: file.path.to_string(),
            size: file.size,
            reason,
        })
    };
    let bytes = match file.head {
        Head::Bytes(b) => b,
        Head::Unreadable(msg) => return unknown(format!("cannot be read: {msg}")),
        Head::NotRead => return unknown("not read".to_string()),
    };
    if file.size == 0 || bytes.is_empty() {
        return unknown("empty file (0 bytes)".to_string());
    }
    // Before the families look: a pointer in place of a snapshot or a dump is none of theirs, and
    // "not a …" would hide why.
    if file.size <= super::lfs::MAX_POINTER_BYTES {
        if let Some(size) = super::lfs::pointer(bytes) {
            return unknown(super::lfs::said(size));
        }
    }
    if let Some(unit) = recognizers.iter().find_map(|r| r.recognize(file)) {
        return unit;
    }
    if bytes.contains(&0) {
        return unknown(format!(
            "binary file: not {}",
            what_families_read(recognizers)
        ));
    }
    if let Some(reason) = recognizers.iter().find_map(|r| r.explain(file)) {
        return unknown(reason);
    }
    unknown(format!("not {}", what_families_read(recognizers)))
}

/// Reads `want` leading bytes of `source` for classification.
pub fn read_head(source: &dyn crate::source::Source, want: usize) -> Head {
    if want == 0 {
        return Head::NotRead;
    }
    match source.read_range(0, want) {
        Ok(bytes) => Head::Bytes(bytes),
        Err(e) => Head::Unreadable(e.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A family of `*.txt` files starting with `hello`, grouping `g/` folders.
    struct Hello;

    #[derive(Debug, Serialize)]
    struct HelloUnit {
        path: String,
        files: usize,
    }

    impl UnitBody for HelloUnit {
        fn kind(&self) -> &'static str {
            "hello"
        }
        fn path(&self) -> &str {
            &self.path
        }
        fn summary(&self) -> String {
            format!("{} file(s)", self.files)
        }
    }

    impl Recognizer for Hello {
        fn describes(&self) -> &'static [&'static str] {
            &["a hello file"]
        }
        fn group(&self, paths: &[Option<(&str, u64)>]) -> Vec<Group> {
            let members: Vec<usize> = paths
                .iter()
                .enumerate()
                .filter(|(_, p)| p.is_some_and(|(p, _)| p.starts_with("g/")))
                .map(|(i, _)| i)
                .collect();
            vec![Group {
                root: "g".to_string(),
                members,
            }]
        }
        fn loose_head(&self, path: &str, _size: u64) -> usize {
            if path.ends_with(".txt") {
                5
            } else {
                0
            }
        }
        fn build(&self, group: &Group, _files: &[FileView]) -> Unit {
            Unit::new(HelloUnit {
                path: group.root.clone(),
                files: group.members.len(),
            })
        }
        fn recognize(&self, file: &FileView) -> Option<Unit> {
            (file.head.bytes()? == b"hello").then(|| {
                Unit::new(HelloUnit {
                    path: file.path.to_string(),
                    files: 1,
                })
            })
        }
    }

    fn e(path: &str, size: u64) -> Entry {
        Entry {
            path: path.to_string(),
            size,
        }
    }

    #[test]
    fn groups_then_loose_files_then_unknown_with_the_reason() {
        let families: [&dyn Recognizer; 1] = [&Hello];
        let entries = [
            e("g/a.txt", 5),
            e("./g\\b.bin", 3),
            e("x.txt", 5),
            e("y.txt", 5),
            e("z.png", 4),
            e("empty.txt", 0),
        ];
        assert_eq!(head_requests(&entries, &families), [0, 0, 5, 5, 0, 5]);
        let heads = [
            Head::NotRead,
            Head::NotRead,
            Head::Bytes(b"hello".to_vec()),
            Head::Bytes(b"he\0lo".to_vec()),
            Head::NotRead,
            Head::Bytes(Vec::new()),
        ];
        let inv = classify(&entries, &heads, &families);
        let json = serde_json::to_value(&inv).unwrap();
        assert_eq!(
            json["units"],
            serde_json::json!([
                {"kind": "unknown", "path": "empty.txt", "size": 0, "reason": "empty file (0 bytes)"},
                {"kind": "hello", "path": "g", "files": 2},
                {"kind": "hello", "path": "x.txt", "files": 1},
                {"kind": "unknown", "path": "y.txt", "size": 5, "reason": "binary file: not a hello file"},
                {"kind": "unknown", "path": "z.png", "size": 4, "reason": "not read"},
            ])
        );
        assert_eq!((inv.files, inv.bytes), (6, 22));
        assert_eq!(inv.units_of::<HelloUnit>().count(), 2);
        assert!(inv.units[0].get::<UnknownFile>().is_some());
        assert!(inv.units[0].get::<HelloUnit>().is_none());
    }

    #[test]
    fn messages_list_every_family() {
        struct Other;
        impl Recognizer for Other {
            fn describes(&self) -> &'static [&'static str] {
                &["an other file", "a third kind"]
            }
        }
        let families: [&dyn Recognizer; 2] = [&Hello, &Other];
        assert_eq!(
            what_families_read(&families),
            "a hello file, an other file or a third kind"
        );
    }
}
