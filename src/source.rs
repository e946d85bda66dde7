//! Where bytes come from.
//!
//! The core never opens files itself: every reader takes a [`Source`], so the same parser runs on a
//! path (CLI, tests, benches), on a byte slice (fuzzing, archives), and on a browser `File` (the wasm
//! layer implements [`Source`] over `FileReaderSync`). Readers pull the bytes in chunks of their own
//! choosing, which keeps memory bounded for multi-gigabyte files.

use std::fmt;
use std::sync::Arc;

/// Default chunk size for streaming readers: large enough to amortise the cost of a read, small
/// enough to keep memory bounded. A source may ask for larger reads ([`Source::preferred_read`]).
pub const DEFAULT_CHUNK: usize = 8 << 20;

/// A failure to read bytes from a source (not a format problem).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    /// The source's display name (usually its relative path).
    pub name: String,
    /// Byte offset of the failed read.
    pub offset: u64,
    /// What went wrong, in words.
    pub message: String,
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: cannot read at byte {}: {}",
            self.name, self.offset, self.message
        )
    }
}

impl std::error::Error for SourceError {}

/// The message of a load stopped on purpose (the page's Cancel, or a new drop): the same words a
/// stopped read of a browser `File` fails with (`www/file-reads.js`), so a stop seen inside a
/// batch and one seen at a read end the same way.
pub const STOPPED: &str = "the load was stopped";

/// How much input a streaming reader goes through between two questions whether its load was
/// stopped ([`Source::check_stop`]): a stop then waits for the parse of about this much, not for
/// that of a whole read (16 MiB, or a whole file with the page's `?readSize=256`). A question is
/// one comparison per event or row and, for a browser `File`, one call to the page per MiB.
pub const STOP_CHECK_BYTES: u64 = 1 << 20;

/// An analysis that ended because its load was stopped on purpose ([`STOPPED`]), not because of
/// its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(STOPPED)
    }
}

impl std::error::Error for Stopped {}

impl SourceError {
    /// The error of a load stopped while `name` was read, at byte `offset` ([`STOPPED`]).
    pub fn stopped(name: &str, offset: u64) -> SourceError {
        SourceError {
            name: name.to_string(),
            offset,
            message: STOPPED.to_string(),
        }
    }
}

/// Random-access bytes with a name and a length.
///
/// Implementations need not be `Send`: a browser `File` can only be read on the worker that owns it.
pub trait Source {
    /// Display name, normally the path relative to what the user dropped or named.
    fn name(&self) -> &str;
    /// Total length in bytes.
    fn len(&self) -> u64;
    /// True when the source holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read (0 only at the end).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, SourceError>;

    /// The smallest read this source serves at its full speed, in bytes; 0 when any size will do.
    ///
    /// Streaming readers read at least this much at a time ([`read_size`]): a browser `File` read
    /// through `FileReaderSync` pays a fixed cost per call that small reads do not amortise, while a
    /// file on disk or bytes in memory read as fast in the readers' own sizes.
    fn preferred_read(&self) -> usize {
        0
    }

    /// `Err` once the load this source is read for was stopped ([`SourceError::stopped`], at
    /// byte `offset`, where the reader is); `Ok` otherwise, and always for files on disk and bytes.
    ///
    /// Streaming readers ask this every [`STOP_CHECK_BYTES`] of input they parse, on the thread
    /// that reads the source, and end with the error as they would with a failed read: a browser
    /// `File` is read in large slices, and without the question a stop would wait for a whole
    /// slice's parse.
    fn check_stop(&self, offset: u64) -> Result<(), SourceError> {
        let _ = offset;
        Ok(())
    }

    /// Whether [`Source::check_stop`] can ever say stopped (a browser `File`: yes; files on disk
    /// and bytes: no). Readers ask about stops only when it can, and otherwise run exactly as
    /// they did without the question (the trace scan's pieces stay on rayon's pool: running them
    /// on the reading thread, as a question needs, cost the CLI's one-thread scan ~5 % CPU).
    fn may_stop(&self) -> bool {
        false
    }

    /// Reads `[offset, offset + len)` (clamped to the end) into a new vector.
    fn read_range(&self, offset: u64, len: usize) -> Result<Vec<u8>, SourceError> {
        let end = offset.saturating_add(len as u64).min(self.len());
        let want = end.saturating_sub(offset) as usize;
        let mut buf = vec![0u8; want];
        let mut done = 0;
        while done < want {
            let n = self.read_at(offset + done as u64, &mut buf[done..])?;
            if n == 0 {
                break;
            }
            done += n;
        }
        buf.truncate(done);
        Ok(buf)
    }

    /// Reads the whole source; refuses sources longer than `limit` bytes.
    fn read_all(&self, limit: u64) -> Result<Vec<u8>, SourceError> {
        if self.len() > limit {
            return Err(SourceError {
                name: self.name().to_string(),
                offset: 0,
                message: format!(
                    "file is {} bytes, more than the {} bytes this reader accepts",
                    self.len(),
                    limit
                ),
            });
        }
        self.read_range(0, self.len() as usize)
    }
}

/// The size a streaming reader whose own size is `own` reads `source` in: `own`, raised to what the
/// source prefers ([`Source::preferred_read`]). Every streaming reader sizes its reads here, so a
/// source states its preference once for all of them.
pub fn read_size(source: &dyn Source, own: usize) -> usize {
    own.max(source.preferred_read()).max(1)
}

/// Bytes already in memory (tests, fuzzing, members of archives).
#[derive(Clone)]
pub struct BytesSource {
    name: String,
    bytes: Arc<[u8]>,
}

impl BytesSource {
    /// Wraps `bytes` under the display name `name`.
    pub fn new(name: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> Self {
        BytesSource {
            name: name.into(),
            bytes: bytes.into(),
        }
    }

    /// The whole content.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Source for BytesSource {
    fn name(&self) -> &str {
        &self.name
    }
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, SourceError> {
        let len = self.bytes.len() as u64;
        if offset >= len {
            return Ok(0);
        }
        let start = offset as usize;
        let n = buf.len().min(self.bytes.len() - start);
        buf[..n].copy_from_slice(&self.bytes[start..start + n]);
        Ok(n)
    }
}

/// A file on disk (native builds only).
#[cfg(not(target_arch = "wasm32"))]
pub struct PathSource {
    name: String,
    file: std::fs::File,
    len: u64,
}

#[cfg(not(target_arch = "wasm32"))]
impl PathSource {
    /// Opens `path`, to be reported under `name`.
    pub fn open(path: &std::path::Path, name: impl Into<String>) -> Result<Self, SourceError> {
        let name = name.into();
        let fail = |e: std::io::Error| SourceError {
            name: name.clone(),
            offset: 0,
            message: e.to_string(),
        };
        let file = std::fs::File::open(path).map_err(fail)?;
        let len = file.metadata().map_err(fail)?.len();
        Ok(PathSource { name, file, len })
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Source for PathSource {
    fn name(&self) -> &str {
        &self.name
    }
    fn len(&self) -> u64 {
        self.len
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, SourceError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file.read_at(buf, offset).map_err(|e| SourceError {
                name: self.name.clone(),
                offset,
                message: e.to_string(),
            })
        }
        #[cfg(not(unix))]
        {
            use std::io::{Read, Seek, SeekFrom};
            let mut f = &self.file;
            f.seek(SeekFrom::Start(offset))
                .and_then(|_| f.read(buf))
                .map_err(|e| SourceError {
                    name: self.name.clone(),
                    offset,
                    message: e.to_string(),
                })
        }
    }
}

/// Iterates over a source in consecutive chunks of at most `chunk` bytes.
///
/// Each item is `(offset of the chunk, bytes)`. The iterator stops after the first error.
pub fn chunks<'a>(
    source: &'a dyn Source,
    chunk: usize,
) -> impl Iterator<Item = Result<(u64, Vec<u8>), SourceError>> + 'a {
    let chunk = chunk.max(1);
    let mut offset = 0u64;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed || offset >= source.len() {
            return None;
        }
        match source.read_range(offset, chunk) {
            Ok(bytes) if bytes.is_empty() => None,
            Ok(bytes) => {
                let at = offset;
                offset += bytes.len() as u64;
                Some(Ok((at, bytes)))
            }
            Err(e) => {
                failed = true;
                Some(Err(e))
            }
        }
    })
}

/// A file found by [`list_paths`]: where it is on disk and how it is named for the user.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone)]
pub struct ListedFile {
    /// Location on disk.
    pub disk_path: std::path::PathBuf,
    /// Path relative to the parent of the argument it was found under (so a folder argument keeps
    /// its own name, as a browser drop does), `/`-separated.
    pub rel_path: String,
    /// Size in bytes.
    pub size: u64,
}

/// Lists the files under `roots` (files or folders), depth-first, sorted, without following symlinked
/// folders. Unreadable folders are reported in the second vector rather than aborting the walk.
#[cfg(not(target_arch = "wasm32"))]
pub fn list_paths(roots: &[std::path::PathBuf]) -> (Vec<ListedFile>, Vec<SourceError>) {
    use std::path::Path;
    fn walk(
        dir: &Path,
        rel: &str,
        depth: usize,
        out: &mut Vec<ListedFile>,
        errs: &mut Vec<SourceError>,
    ) {
        // Deeper than any real profiler tree; stops symlink loops made of hard directory links.
        if depth > 64 {
            return;
        }
        let mut items: Vec<_> = match std::fs::read_dir(dir) {
            Ok(rd) => rd.filter_map(|e| e.ok()).collect(),
            Err(e) => {
                errs.push(SourceError {
                    name: rel.to_string(),
                    offset: 0,
                    message: e.to_string(),
                });
                return;
            }
        };
        items.sort_by_key(|e| e.file_name());
        for item in items {
            let name = item.file_name().to_string_lossy().into_owned();
            let child_rel = format!("{rel}/{name}");
            let Ok(ft) = item.file_type() else { continue };
            if ft.is_dir() {
                walk(&item.path(), &child_rel, depth + 1, out, errs);
            } else if ft.is_file() || ft.is_symlink() {
                match std::fs::metadata(item.path()) {
                    Ok(md) if md.is_file() => out.push(ListedFile {
                        disk_path: item.path(),
                        rel_path: child_rel,
                        size: md.len(),
                    }),
                    Ok(_) => {}
                    Err(e) => errs.push(SourceError {
                        name: child_rel,
                        offset: 0,
                        message: e.to_string(),
                    }),
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut errs = Vec::new();
    for root in roots {
        let name = root
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| root.to_string_lossy().into_owned());
        match std::fs::metadata(root) {
            Ok(md) if md.is_dir() => walk(root, &name, 0, &mut out, &mut errs),
            Ok(md) => out.push(ListedFile {
                disk_path: root.clone(),
                rel_path: name,
                size: md.len(),
            }),
            Err(e) => errs.push(SourceError {
                name: root.to_string_lossy().into_owned(),
                offset: 0,
                message: e.to_string(),
            }),
        }
    }
    (out, errs)
}

/// Progress callback of streaming readers: `(bytes done, bytes total)` of the file being read.
///
/// It is called on the thread that reads (in the browser, the worker that owns the `File`), after
/// each chunk, so it need not be `Send`.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_source_reads_ranges_and_clamps_at_end() {
        let s = BytesSource::new("a.txt", b"hello world".to_vec());
        assert_eq!(s.len(), 11);
        assert_eq!(s.read_range(6, 100).unwrap(), b"world");
        assert_eq!(s.read_range(20, 5).unwrap(), b"");
        let parts: Vec<_> = chunks(&s, 4).map(|c| c.unwrap()).collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[2], (8, b"rld".to_vec()));
    }

    #[test]
    fn read_all_refuses_files_over_the_limit() {
        let s = BytesSource::new("big.json", vec![b'x'; 100]);
        let err = s.read_all(10).unwrap_err();
        assert!(err.to_string().contains("big.json"));
        assert!(err.to_string().contains("100 bytes"));
    }
}
