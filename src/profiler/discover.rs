//! From what the user gave to a job: input files (folders, archives), classified run folders, and
//! ranks grouped by (role, step, rank) with their run folders ordered by timestamp.
//!
//! Classification itself is [`crate::classify`]; this module adds archive expansion (members become
//! entries with virtual paths) and the grouping. [`InputSet`] also opens files for the readers.

use super::archive::{self, Limits};
use crate::classify::{self, Entry, Head, Inventory, ProfilerRun, Unit};
use crate::diag::Diagnostic;
use crate::source::{BytesSource, Source};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Opens input files by their relative (or virtual) path.
pub trait FileOpener {
    /// A source for `path`, or why it cannot be opened.
    fn open(&self, path: &str) -> Result<Box<dyn Source + '_>, Diagnostic>;
}

/// Where an entry's bytes are.
#[derive(Debug, Clone)]
enum Backing {
    /// A file on disk.
    #[cfg(not(target_arch = "wasm32"))]
    Disk(std::path::PathBuf),
    /// In memory (archive members, tests).
    Bytes(Arc<[u8]>),
    /// Listed only (archive members that nothing reads); the text says why.
    Listed(String),
    /// Could not be listed or read at all; the text says why.
    Error(String),
}

/// The files of one analysis: entries for classification, and how to open each.
#[derive(Debug, Clone, Default)]
pub struct InputSet {
    /// Entries in input order (archives replaced by their members).
    pub entries: Vec<Entry>,
    backing: Vec<Backing>,
    index: HashMap<String, usize>,
    /// Problems met while listing and expanding (unreadable folders, refused archive members).
    pub warnings: Vec<Diagnostic>,
}

impl InputSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, path: String, size: u64, backing: Backing) {
        let path = classify::normalize_path(&path);
        self.index.insert(path.clone(), self.entries.len());
        self.entries.push(Entry { path, size });
        self.backing.push(backing);
    }

    /// Adds an in-memory file; archives (by name or magic) are expanded into their members.
    pub fn add_bytes(&mut self, path: &str, bytes: impl Into<Arc<[u8]>>) {
        let bytes: Arc<[u8]> = bytes.into();
        let src = BytesSource::new(path, bytes.clone());
        if archive::is_archive_name(path) {
            self.add_archive(&src);
        } else {
            self.push(path.to_string(), bytes.len() as u64, Backing::Bytes(bytes));
        }
    }

    /// Adds a file that could not be read (e.g. a browser `File` that failed), so it is listed as
    /// unreadable with `message` instead of silently missing.
    pub fn add_unreadable(&mut self, path: &str, message: &str) {
        self.push(path.to_string(), 0, Backing::Error(message.to_string()));
    }

    /// Expands the archive `src` and adds its members under `<archive path>/…`.
    pub fn add_archive(&mut self, src: &dyn Source) {
        let (members, warnings) = archive::expand(src, Limits::default());
        for m in members {
            let backing = match m.bytes {
                Some(b) => Backing::Bytes(b),
                // A member that was to be read but was refused (bomb guard, damage) says why.
                None => Backing::Listed(match warnings.iter().find(|d| d.file == m.path) {
                    Some(d) => format!("not read when the archive was expanded: {}", d.message),
                    None => "archive member not kept in memory".to_string(),
                }),
            };
            self.push(m.path, m.size, backing);
        }
        self.warnings.extend(warnings);
    }

    /// Lists files and folders on disk, expanding archives (native front ends).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_paths(roots: &[std::path::PathBuf]) -> Self {
        let (listed, errors) = crate::source::list_paths(roots);
        let mut set = InputSet::new();
        for f in listed {
            if archive::is_archive_name(&f.rel_path) {
                match crate::source::PathSource::open(&f.disk_path, f.rel_path.clone()) {
                    Ok(src) => set.add_archive(&src),
                    Err(e) => set.warnings.push(e.into()),
                }
            } else {
                set.push(f.rel_path, f.size, Backing::Disk(f.disk_path));
            }
        }
        // Paths that could not be listed still show up, as unreadable entries.
        for e in errors {
            set.add_unreadable(&e.name, &e.message);
        }
        set
    }

    /// Reads what classification needs and classifies the entries.
    pub fn classify(&self) -> Inventory {
        let heads: Vec<Head> = self
            .entries
            .par_iter()
            .enumerate()
            .map(|(i, e)| {
                if let Some(Backing::Error(msg)) = self.backing.get(i) {
                    return Head::Unreadable(msg.clone());
                }
                let want = classify::head_request(e);
                if want == 0 {
                    return Head::NotRead;
                }
                match self.open(&e.path) {
                    Ok(src) => classify::read_head(src.as_ref(), want),
                    Err(d) => Head::Unreadable(d.message),
                }
            })
            .collect();
        classify::classify(&self.entries, &heads)
    }

    /// Total bytes of the entries.
    pub fn bytes(&self) -> u64 {
        self.entries.iter().map(|e| e.size).sum()
    }
}

impl FileOpener for InputSet {
    fn open(&self, path: &str) -> Result<Box<dyn Source + '_>, Diagnostic> {
        let i = *self
            .index
            .get(path)
            .ok_or_else(|| Diagnostic::error(path, "no such input file"))?;
        match self.backing.get(i) {
            #[cfg(not(target_arch = "wasm32"))]
            Some(Backing::Disk(p)) => Ok(Box::new(crate::source::PathSource::open(p, path)?)),
            Some(Backing::Bytes(b)) => Ok(Box::new(BytesSource::new(path, b.clone()))),
            Some(Backing::Listed(why)) | Some(Backing::Error(why)) => {
                Err(Diagnostic::error(path, why.clone()))
            }
            None => Err(Diagnostic::error(path, "no such input file")),
        }
    }
}

/// One run folder of a rank.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunInput {
    /// The run folder as classified.
    pub run: ProfilerRun,
}

/// All run folders of one (role, step, rank), in timestamp order.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RankInput {
    /// Role (empty when unknown).
    pub role: String,
    /// Rank; `None` = unknown (`profiler_info.json` without rank).
    pub rank: Option<u32>,
    /// Step, from a step folder.
    pub step: Option<u32>,
    /// Run folders ordered by their 17-digit timestamp (folders without one last, by path).
    pub runs: Vec<ProfilerRun>,
}

/// A job: every rank found, and what could not be used.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Job {
    /// Ranks sorted by role, step, rank (unknown rank last).
    pub ranks: Vec<RankInput>,
    /// Files that are not part of any run folder and not analysed here (with the reason).
    pub ignored: Vec<(String, String)>,
    /// Notes and problems of discovery (db-only runs, unknown ranks, archive problems).
    pub warnings: Vec<Diagnostic>,
}

/// Groups the run folders of `inventory` into ranks.
pub fn discover_job(inventory: &Inventory) -> Job {
    let mut groups: BTreeMap<(String, Option<u32>, u32), Vec<ProfilerRun>> = BTreeMap::new();
    let mut job = Job::default();
    for unit in &inventory.units {
        match unit {
            Unit::ProfilerRun(run) => {
                for note in &run.notes {
                    job.warnings
                        .push(Diagnostic::warning(&run.path, note.clone()));
                }
                let f = &run.files;
                if f.operator_memory.is_none()
                    && f.memory_record.is_none()
                    && f.trace_view.is_none()
                    && f.db.is_empty()
                {
                    // Nothing to analyse (analysis never run): the note above says what to do;
                    // the folder is not a rank of the job.
                    job.ignored.push((
                        run.path.clone(),
                        "run folder without operator_memory.csv, memory_record.csv, \
                         trace_view.json or ascend_pytorch_profiler_*.db"
                            .to_string(),
                    ));
                    continue;
                }
                // Unknown ranks sort after known ones.
                let key = (run.role.clone(), run.step, run.rank.unwrap_or(u32::MAX));
                groups.entry(key).or_default().push((**run).clone());
            }
            Unit::Unknown(u) => job.ignored.push((u.path.clone(), u.reason.clone())),
            other => job.ignored.push((
                other.path().to_string(),
                format!("{} file: not torch_npu profiler output", other.kind()),
            )),
        }
    }
    for ((role, step, _), mut runs) in groups {
        runs.sort_by(|a, b| match (&a.timestamp, &b.timestamp) {
            (Some(x), Some(y)) => x.cmp(y).then(a.path.cmp(&b.path)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.path.cmp(&b.path),
        });
        let rank = runs.first().and_then(|r| r.rank);
        job.ranks.push(RankInput {
            role,
            rank,
            step,
            runs,
        });
    }
    job
}
