//! The input set: every file of one analysis, by id, whatever its origin.
//!
//! A front end adds files — on disk ([`InputSet::from_paths`]), in memory
//! ([`InputSet::add_bytes`]), or anything else it can read ([`InputSet::add_host`] with a
//! [`HostFile`]: the wasm layer's browser `File`s, later the serving machine's files) — then calls
//! [`InputSet::classify`] once: archives are expanded (their members join the set under
//! `<archive path>/…`), the heads classification needs are read, and the families' recognizers
//! build the [`Inventory`]. Readers then open files by path through [`FileOpener`]; nothing in the
//! core knows where the bytes come from.

use super::archive::{self, Limits};
use super::classify::{self, Entry, Head, Inventory, Recognizer};
use super::paths::normalize_path;
use crate::diag::Diagnostic;
use crate::source::{BytesSource, Source, SourceError};
use std::collections::HashMap;
use std::sync::Arc;

/// Opens input files by their relative (or virtual) path.
pub trait FileOpener {
    /// A source for `path`, or why it cannot be opened.
    fn open(&self, path: &str) -> Result<Box<dyn Source + '_>, Diagnostic>;

    /// True once the load these files are read for was stopped (the page's Cancel, a new drop):
    /// the analysis asks between its steps (after each file, each run, before the job's
    /// figures) and ends instead of reporting what it read so far as the job. Never, by default.
    fn stopped(&self) -> bool {
        false
    }
}

/// `Send + Sync` natively, where the set is read from several threads; nothing on wasm32, where
/// a browser `File` belongs to the worker that received it.
#[cfg(not(target_arch = "wasm32"))]
pub trait HostBound: Send + Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + Sync> HostBound for T {}
/// `Send + Sync` natively, where the set is read from several threads; nothing on wasm32, where
/// a browser `File` belongs to the worker that received it.
#[cfg(target_arch = "wasm32")]
pub trait HostBound {}
#[cfg(target_arch = "wasm32")]
impl<T> HostBound for T {}

/// A file the front end knows how to read (a path on disk, a browser `File`, …).
pub trait HostFile: HostBound {
    /// A source over the file, reported under `name`.
    fn open(&self, name: &str) -> Result<Box<dyn Source + '_>, SourceError>;
}

/// A file on disk.
#[cfg(not(target_arch = "wasm32"))]
struct DiskFile(std::path::PathBuf);

#[cfg(not(target_arch = "wasm32"))]
impl HostFile for DiskFile {
    fn open(&self, name: &str) -> Result<Box<dyn Source + '_>, SourceError> {
        Ok(Box::new(crate::source::PathSource::open(&self.0, name)?))
    }
}

/// Where a file's bytes are.
enum Backing {
    /// Read through the front end.
    Host(Box<dyn HostFile>),
    /// In memory (archive members, tests).
    Bytes(Arc<[u8]>),
    /// Listed only (archive members that nothing reads) or unreadable; the text says why.
    Missing(String),
}

/// The index of a file in its set.
pub type FileId = usize;

/// A load step a front end may show: archives being read, then heads.
#[derive(Debug, Clone, Copy)]
pub enum LoadStep<'a> {
    /// `done` of `total` bytes of the archive at `path` read.
    Expanding {
        /// The archive.
        path: &'a str,
        /// Bytes read so far.
        done: u64,
        /// Its size.
        total: u64,
    },
    /// Heads of `done` of `total` files read.
    Heads {
        /// Files whose head is read.
        done: usize,
        /// Files whose head is needed.
        total: usize,
    },
}

/// The files of one analysis.
pub struct InputSet {
    recognizers: &'static [&'static dyn Recognizer],
    entries: Vec<Entry>,
    backing: Vec<Backing>,
    index: HashMap<String, FileId>,
    /// Archives added and not yet expanded: (path, how to read them).
    archives: Vec<(String, Backing)>,
    warnings: Vec<Diagnostic>,
    inventory: Option<Inventory>,
    /// The paths the user gave, for messages about the whole input ([`InputSet::add_given`]).
    given: Vec<String>,
}

impl InputSet {
    /// An empty set whose files the given families classify.
    pub fn new(recognizers: &'static [&'static dyn Recognizer]) -> Self {
        InputSet {
            recognizers,
            entries: Vec::new(),
            backing: Vec::new(),
            index: HashMap::new(),
            archives: Vec::new(),
            warnings: Vec::new(),
            inventory: None,
            given: Vec::new(),
        }
    }

    fn push(&mut self, path: &str, size: u64, backing: Backing) {
        let path = normalize_path(path);
        if archive::is_archive_name(&path) && !matches!(backing, Backing::Missing(_)) {
            self.archives.push((path, backing));
        } else {
            self.index.insert(path.clone(), self.entries.len());
            self.entries.push(Entry { path, size });
            self.backing.push(backing);
        }
        self.inventory = None;
    }

    /// Adds a file the front end reads (`path` relative to what the user gave, `/`-separated).
    /// Archives (by name) are expanded by [`InputSet::classify`].
    pub fn add_host(&mut self, path: &str, size: u64, file: Box<dyn HostFile>) {
        self.push(path, size, Backing::Host(file));
    }

    /// Adds an in-memory file.
    pub fn add_bytes(&mut self, path: &str, bytes: impl Into<Arc<[u8]>>) {
        let bytes: Arc<[u8]> = bytes.into();
        self.push(path, bytes.len() as u64, Backing::Bytes(bytes));
    }

    /// Adds a file that could not be read (a browser `File` that failed, a path that could not be
    /// listed), so it is listed as unreadable with `message` instead of silently missing.
    pub fn add_unreadable(&mut self, path: &str, size: u64, message: &str) {
        self.push(path, size, Backing::Missing(message.to_string()));
    }

    /// Records a path the user gave — a folder or file named on the command line, dropped on the
    /// page, opened from `memlens serve`'s list — as given, for the messages about the whole
    /// input ([`crate::input::NothingToAnalyse::said`]): a folder without files adds no entry,
    /// so this is how such a message names it. A path given twice is kept once.
    pub fn add_given(&mut self, path: &str) {
        if !self.given.iter().any(|g| g == path) {
            self.given.push(path.to_string());
        }
    }

    /// Lists files and folders on disk (native front ends), each root as given.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn add_paths(&mut self, roots: &[std::path::PathBuf]) {
        for root in roots {
            self.add_given(&root.display().to_string());
        }
        let (listed, errors) = crate::source::list_paths(roots);
        self.add_listed(listed, errors);
    }

    /// Adds files already listed on disk (see [`crate::source::list_paths`]), and the paths that
    /// could not be listed as unreadable entries.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn add_listed(
        &mut self,
        listed: Vec<crate::source::ListedFile>,
        errors: Vec<crate::source::SourceError>,
    ) {
        for f in listed {
            self.push(
                &f.rel_path,
                f.size,
                Backing::Host(Box::new(DiskFile(f.disk_path))),
            );
        }
        // Paths that could not be listed still show up, as unreadable entries.
        for e in errors {
            self.add_unreadable(&e.name, 0, &e.message);
        }
    }

    /// A set of files and folders on disk (native front ends).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_paths(
        recognizers: &'static [&'static dyn Recognizer],
        roots: &[std::path::PathBuf],
    ) -> Self {
        let mut set = InputSet::new(recognizers);
        set.add_paths(roots);
        set
    }

    /// Expands the archives added so far (once each), reporting each archive's bytes as read.
    fn expand_archives(&mut self, step: &mut dyn FnMut(LoadStep)) {
        let recognizers = self.recognizers;
        let wanted = |path: &str, size: u64| {
            classify::head_requests(
                &[Entry {
                    path: path.to_string(),
                    size,
                }],
                recognizers,
            )[0] > 0
                || recognizers.iter().any(|r| r.keeps(path, size))
        };
        for (path, backing) in std::mem::take(&mut self.archives) {
            let src: Box<dyn Source + '_> = match &backing {
                Backing::Host(h) => match h.open(&path) {
                    Ok(s) => s,
                    Err(e) => {
                        self.warnings.push(e.into());
                        continue;
                    }
                },
                Backing::Bytes(b) => Box::new(BytesSource::new(path.clone(), b.clone())),
                Backing::Missing(_) => continue,
            };
            let step = std::cell::RefCell::new(&mut *step);
            let report = |p: &str, d: u64, t: u64| {
                if let Ok(mut step) = step.try_borrow_mut() {
                    step(LoadStep::Expanding {
                        path: p,
                        done: d,
                        total: t,
                    });
                }
            };
            let counted = Reporting {
                inner: src,
                report: &report,
                read: std::cell::Cell::new(0),
            };
            let (members, warnings) = archive::expand(&counted, Limits::default(), &wanted);
            drop(counted);
            for m in members {
                let backing = match m.bytes {
                    Some(b) => Backing::Bytes(b),
                    // A member that was to be read but was refused (bomb guard, damage) says why.
                    None => Backing::Missing(match warnings.iter().find(|d| d.file == m.path) {
                        Some(d) => format!("not read when the archive was expanded: {}", d.message),
                        None => "archive member not kept in memory".to_string(),
                    }),
                };
                self.index.insert(m.path.clone(), self.entries.len());
                self.entries.push(Entry {
                    path: m.path,
                    size: m.size,
                });
                self.backing.push(backing);
            }
            self.warnings.extend(warnings);
        }
    }

    /// Expands the archives, reads what classification needs and classifies every file — once:
    /// later calls return the same inventory until files are added. `step` hears of the progress.
    pub fn classify_with(&mut self, step: &mut dyn FnMut(LoadStep)) -> &Inventory {
        if self.inventory.is_none() {
            self.expand_archives(step);
            let wants = classify::head_requests(&self.entries, self.recognizers);
            let heads = self.read_heads(&wants, step);
            self.inventory = Some(classify::classify(&self.entries, &heads, self.recognizers));
        }
        self.inventory.get_or_insert_with(Inventory::empty)
    }

    /// [`InputSet::classify_with`] without progress.
    pub fn classify(&mut self) -> &Inventory {
        self.classify_with(&mut |_| {})
    }

    /// The inventory, if [`InputSet::classify`] ran since the last file was added.
    pub fn inventory(&self) -> Option<&Inventory> {
        self.inventory.as_ref()
    }

    fn head(&self, id: FileId, want: usize) -> Head {
        if want == 0 {
            return Head::NotRead;
        }
        match self.open_id(id) {
            Ok(src) => classify::read_head(src.as_ref(), want),
            Err(d) => Head::Unreadable(d.message),
        }
    }

    /// Heads in parallel natively; one file after the other on wasm32, where a browser `File` is
    /// read on the thread that owns it.
    #[cfg(not(target_arch = "wasm32"))]
    fn read_heads(&self, wants: &[usize], step: &mut dyn FnMut(LoadStep)) -> Vec<Head> {
        use rayon::prelude::*;
        let heads = wants
            .par_iter()
            .enumerate()
            .map(|(i, &want)| self.head(i, want))
            .collect();
        let total = wants.iter().filter(|&&w| w > 0).count();
        step(LoadStep::Heads { done: total, total });
        heads
    }

    #[cfg(target_arch = "wasm32")]
    fn read_heads(&self, wants: &[usize], step: &mut dyn FnMut(LoadStep)) -> Vec<Head> {
        let total = wants.iter().filter(|&&w| w > 0).count();
        let mut done = 0;
        wants
            .iter()
            .enumerate()
            .map(|(i, &want)| {
                let head = self.head(i, want);
                if want > 0 {
                    done += 1;
                    step(LoadStep::Heads { done, total });
                }
                head
            })
            .collect()
    }

    /// `None` when some unit is `wanted`; otherwise what was looked for (`looking_for`'s words)
    /// and the closest things found, for the message on inputs with nothing to analyse.
    /// Classifies first if needed.
    pub fn nothing_to_analyse(
        &mut self,
        looking_for: &[&dyn Recognizer],
        wanted: &dyn Fn(&super::Unit) -> bool,
    ) -> Option<super::explain::NothingToAnalyse> {
        self.classify();
        let inventory = self.inventory.as_ref()?;
        super::explain::nothing_to_analyse(
            &self.given,
            &self.entries,
            inventory,
            self.recognizers,
            looking_for,
            wanted,
        )
    }

    /// [`InputSet::nothing_to_analyse`] for every family this set classifies with and any unit
    /// that can be analysed: what `memlens PATH...` and the page say when a drop holds nothing
    /// they analyse.
    pub fn nothing_analysable(&mut self) -> Option<super::explain::NothingToAnalyse> {
        let looking_for: &[&dyn Recognizer] = self.recognizers;
        self.nothing_to_analyse(looking_for, &|u| u.body().analysable())
    }

    /// A front end's answer to classifying the set (the page's worker, `memlens serve`): the
    /// inventory as JSON (the shape `memlens inspect --json` prints) with, when no unit can be
    /// analysed, `nothing_to_analyse`: what was looked for and the closest things found, and
    /// `text`, the words the CLI prints for them.
    pub fn classify_answer(&mut self, step: &mut dyn FnMut(LoadStep)) -> Result<String, String> {
        self.classify_with(step);
        let nothing = self.nothing_analysable();
        let mut answer = serde_json::to_value(self.inventory.as_ref())
            .map_err(|e| format!("cannot serialise the inventory: {e}"))?;
        if let (Some(n), Some(object)) = (nothing, answer.as_object_mut()) {
            let mut v = serde_json::to_value(&n)
                .map_err(|e| format!("cannot serialise the inventory: {e}"))?;
            if let Some(o) = v.as_object_mut() {
                o.insert("text".into(), n.said().into());
            }
            object.insert("nothing_to_analyse".into(), v);
        }
        serde_json::to_string(&answer).map_err(|e| format!("cannot serialise the inventory: {e}"))
    }

    /// The families' recognizers this set classifies with.
    pub fn recognizers(&self) -> &'static [&'static dyn Recognizer] {
        self.recognizers
    }

    /// Every file, archives replaced by their members once classified.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Problems met while listing and expanding (unreadable archives, refused members).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// The id of the file at `path` (normalised).
    pub fn id(&self, path: &str) -> Option<FileId> {
        self.index.get(path).copied()
    }

    /// Size of the file at `path`, 0 when there is none.
    pub fn size(&self, path: &str) -> u64 {
        self.id(path)
            .and_then(|i| self.entries.get(i))
            .map_or(0, |e| e.size)
    }

    /// Total bytes of the files.
    pub fn bytes(&self) -> u64 {
        self.entries.iter().map(|e| e.size).sum()
    }

    /// A source over file `id`.
    pub fn open_id(&self, id: FileId) -> Result<Box<dyn Source + '_>, Diagnostic> {
        let (Some(entry), Some(backing)) = (self.entries.get(id), self.backing.get(id)) else {
            return Err(Diagnostic::error(format!("#{id}"), "no such input file"));
        };
        let path = &entry.path;
        match backing {
            Backing::Host(h) => h.open(path).map_err(Diagnostic::from),
            Backing::Bytes(b) => Ok(Box::new(BytesSource::new(path.clone(), b.clone()))),
            Backing::Missing(why) => Err(Diagnostic::error(path, why.clone())),
        }
    }
}

impl FileOpener for InputSet {
    fn open(&self, path: &str) -> Result<Box<dyn Source + '_>, Diagnostic> {
        match self.id(path) {
            Some(id) => self.open_id(id),
            None => Err(Diagnostic::error(path, "no such input file")),
        }
    }
}

/// A [`FileOpener`] whose sources report how far they have been read: `report(path, bytes read,
/// size)` (the page's per-file progress).
pub struct CountingOpener<'a> {
    inner: &'a dyn FileOpener,
    report: &'a dyn Fn(&str, u64, u64),
}

impl<'a> CountingOpener<'a> {
    /// Wraps `inner`.
    pub fn new(inner: &'a dyn FileOpener, report: &'a dyn Fn(&str, u64, u64)) -> Self {
        CountingOpener { inner, report }
    }
}

/// Forwards reads, reporting how many bytes have been read: the text readers go forward, so this
/// is how far they are; the database reader reads only the pages it needs, so its count ends below
/// the file size when most of a db belongs to tables memory analysis does not read.
struct Reporting<'a> {
    inner: Box<dyn Source + 'a>,
    report: &'a dyn Fn(&str, u64, u64),
    read: std::cell::Cell<u64>,
}

impl Source for Reporting<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn preferred_read(&self) -> usize {
        self.inner.preferred_read()
    }
    fn check_stop(&self, offset: u64) -> Result<(), SourceError> {
        self.inner.check_stop(offset)
    }
    fn may_stop(&self) -> bool {
        self.inner.may_stop()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, SourceError> {
        let n = self.inner.read_at(offset, buf)?;
        if n > 0 {
            let read = (self.read.get() + n as u64).min(self.inner.len());
            self.read.set(read);
            (self.report)(self.inner.name(), read, self.inner.len());
        }
        Ok(n)
    }
}

impl FileOpener for CountingOpener<'_> {
    fn open(&self, path: &str) -> Result<Box<dyn Source + '_>, Diagnostic> {
        Ok(Box::new(Reporting {
            inner: self.inner.open(path)?,
            report: self.report,
            read: std::cell::Cell::new(0),
        }))
    }

    fn stopped(&self) -> bool {
        self.inner.stopped()
    }
}
