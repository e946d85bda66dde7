//! Archives of profiler output (`.zip`, `.tar`, `.tar.gz`/`.tgz`), expanded in memory with pure-Rust
//! crates so the same code runs natively and in wasm32.
//!
//! Members get virtual paths under the archive's own path (`job.zip/actor/…_ascend_pt/…`), so
//! classification and discovery treat them exactly like files of a dropped folder. Guards:
//! - path escapes: absolute names, drive letters and `..` components are refused;
//! - zip bombs: a member may not inflate beyond its declared size nor beyond
//!   [`Limits::max_ratio`] × its compressed size (once past 64 MiB), and all kept bytes together
//!   stay under [`Limits::max_kept`]; the entry count is capped too.
//!
//! Only the bytes of members that are read later are kept (the caller's [`Wanted`] says which);
//! the others are listed with their size (classification needs no more).
use crate::diag::Diagnostic;
use crate::source::Source;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

/// Safety limits of expansion.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest total of member bytes kept in memory.
    pub max_kept: u64,
    /// Largest number of members listed.
    pub max_entries: usize,
    /// Largest decompressed / compressed ratio accepted for data past 64 MiB.
    pub max_ratio: u64,
}

impl Default for Limits {
    /// Kept bytes: 1 GiB in the browser (wasm32 memory ends at 4 GiB, shared with everything
    /// else), 4 GiB natively. Ratio: real profiler text deflates 5–30×, a bomb of zeros ~1000×.
    fn default() -> Self {
        Limits {
            max_kept: if cfg!(target_arch = "wasm32") {
                1 << 30
            } else {
                4 << 30
            },
            max_entries: 1_000_000,
            max_ratio: 200,
        }
    }
}

/// One member of an archive.
#[derive(Debug, Clone)]
pub struct Member {
    /// Virtual path: `<archive path>/<member path>`.
    pub path: String,
    /// Uncompressed size.
    pub size: u64,
    /// The content, when it was [`Wanted`] and within the limits.
    pub bytes: Option<Arc<[u8]>>,
}

/// True when `name` is an archive memlens expands (by file name).
pub fn is_archive_name(name: &str) -> bool {
    archive_kind(name, &[]).is_some()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Zip,
    Tar,
    TarGz,
}

fn archive_kind(name: &str, head: &[u8]) -> Option<Kind> {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".zip") || head.starts_with(b"PK\x03\x04") {
        Some(Kind::Zip)
    } else if lower.ends_with(".tar.gz")
        || lower.ends_with(".tgz")
        || head.starts_with(&[0x1f, 0x8b])
    {
        Some(Kind::TarGz)
    } else if lower.ends_with(".tar") || head.get(257..262) == Some(b"ustar") {
        Some(Kind::Tar)
    } else {
        None
    }
}

/// Which members' bytes to keep: `wanted(virtual path, size)`, true for the files that
/// classification looks into or an analysis reads (the families of the input set decide).
pub type Wanted<'a> = &'a dyn Fn(&str, u64) -> bool;

/// A member name made safe, or the reason it is refused.
pub fn safe_member_path(raw: &str) -> Result<String, String> {
    let p = raw.replace('\\', "/");
    if p.starts_with('/') {
        return Err(format!("absolute member path {raw:?} refused"));
    }
    if p.len() >= 2 && p.as_bytes().get(1) == Some(&b':') {
        return Err(format!("member path with a drive letter {raw:?} refused"));
    }
    let mut parts = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "member path {raw:?} climbs out of the archive; refused"
                ))
            }
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        return Err(format!("empty member path {raw:?}"));
    }
    Ok(parts.join("/"))
}

/// `Read + Seek` over a [`Source`]: random access for the zip reader, sequential reads for tar
/// (no full copy of the archive is made).
struct Cursor<'a> {
    src: &'a dyn Source,
    pos: u64,
}

impl Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self
            .src
            .read_at(self.pos, buf)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Cursor<'_> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let len = self.src.len() as i128;
        let new = match to {
            SeekFrom::Start(p) => p as i128,
            SeekFrom::End(d) => len + d as i128,
            SeekFrom::Current(d) => self.pos as i128 + d as i128,
        };
        if new < 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start",
            ));
        }
        self.pos = new as u64;
        Ok(self.pos)
    }
}

/// Reads at most `limit` bytes of `r`; `Err` if there are more.
fn read_limited(r: &mut dyn Read, limit: u64) -> std::io::Result<Result<Vec<u8>, ()>> {
    // Room for the declared size up front (checked against the limits by the callers), so the
    // vector does not double past it while growing.
    let mut out = Vec::with_capacity(usize::try_from(limit.min(64 << 20)).unwrap_or(0));
    r.take(limit.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        Ok(Err(()))
    } else {
        Ok(Ok(out))
    }
}

/// Expands the archive `src` (named by its path), keeping the bytes of the members `wanted`
/// accepts. Members are listed in archive order.
pub fn expand(src: &dyn Source, limits: Limits, wanted: Wanted) -> (Vec<Member>, Vec<Diagnostic>) {
    let name = src.name().to_string();
    let head = src.read_range(0, 512).unwrap_or_default();
    let mut warnings = Vec::new();
    let mut members = Vec::new();
    let mut kept: u64 = 0;
    match archive_kind(&name, &head) {
        Some(Kind::Zip) => expand_zip(
            src,
            &name,
            (limits, wanted),
            &mut members,
            &mut warnings,
            &mut kept,
        ),
        Some(kind) => {
            let stream = Cursor { src, pos: 0 };
            if kind == Kind::TarGz {
                let gz = flate2::read::MultiGzDecoder::new(stream);
                let limit = (src.len().saturating_mul(limits.max_ratio)).max(64 << 20);
                let guarded = Guard {
                    inner: gz,
                    read: 0,
                    limit,
                };
                let cap = Inflation::Ratio(limit);
                expand_tar(
                    guarded,
                    &name,
                    (limits, cap, wanted),
                    &mut members,
                    &mut warnings,
                    &mut kept,
                );
            } else {
                let cap = Inflation::Plain(src.len());
                expand_tar(
                    stream,
                    &name,
                    (limits, cap, wanted),
                    &mut members,
                    &mut warnings,
                    &mut kept,
                );
            }
        }
        None => warnings.push(Diagnostic::error(
            &name,
            "not a .zip, .tar or .tar.gz archive (by name and first bytes)",
        )),
    }
    (members, warnings)
}

/// Stops a decompressor past `limit` bytes (a bomb guard for the whole stream).
struct Guard<R> {
    inner: R,
    read: u64,
    limit: u64,
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.limit {
            return Err(std::io::Error::other(format!(
                "decompressed data exceeds {} bytes: refused as a possible zip bomb",
                self.limit
            )));
        }
        Ok(n)
    }
}

fn expand_zip(
    src: &dyn Source,
    name: &str,
    (limits, wanted): (Limits, Wanted),
    members: &mut Vec<Member>,
    warnings: &mut Vec<Diagnostic>,
    kept: &mut u64,
) {
    let mut zip = match zip::ZipArchive::new(Cursor { src, pos: 0 }) {
        Ok(z) => z,
        Err(e) => {
            warnings.push(Diagnostic::error(
                name,
                format!("not a readable zip archive: {e}"),
            ));
            return;
        }
    };
    let n = zip.len();
    if n > limits.max_entries {
        warnings.push(Diagnostic::error(
            name,
            format!(
                "{n} members, more than the {} accepted; only the first are read",
                limits.max_entries
            ),
        ));
    }
    for i in 0..n.min(limits.max_entries) {
        let mut f = match zip.by_index(i) {
            Ok(f) => f,
            Err(e) => {
                warnings.push(Diagnostic::warning(
                    name,
                    format!("member {i} unreadable: {e}; skipped"),
                ));
                continue;
            }
        };
        if f.is_dir() {
            continue;
        }
        let raw = f.name().to_string();
        let rel = match safe_member_path(&raw) {
            Ok(p) => p,
            Err(msg) => {
                warnings.push(Diagnostic::warning(name, msg));
                continue;
            }
        };
        let path = format!("{name}/{rel}");
        let size = f.size();
        let mut bytes = None;
        if wanted(&path, size) {
            let ratio_cap = f
                .compressed_size()
                .saturating_mul(limits.max_ratio)
                .max(64 << 20);
            let cap = size.min(ratio_cap);
            if size > ratio_cap {
                warnings.push(Diagnostic::error(&path, format!("declares {size} bytes from {} compressed: more than {}×; refused as a possible zip bomb", f.compressed_size(), limits.max_ratio)));
            } else if kept.saturating_add(size) > limits.max_kept {
                warnings.push(Diagnostic::error(
                    &path,
                    format!(
                        "archive members kept in memory would exceed {} bytes; member not read",
                        limits.max_kept
                    ),
                ));
            } else {
                match read_limited(&mut f, cap) {
                    Ok(Ok(b)) => {
                        *kept += b.len() as u64;
                        bytes = Some(Arc::from(b));
                    }
                    Ok(Err(())) => warnings.push(Diagnostic::error(&path, format!("inflates beyond its declared size of {size} bytes; refused as a possible zip bomb"))),
                    Err(e) => warnings.push(Diagnostic::error(&path, format!("cannot decompress: {e}"))),
                }
            }
        }
        members.push(Member { path, size, bytes });
    }
}

/// How much a tar stream can hold: a plain tar no more than its own size; a compressed one no
/// more than the bomb guard lets through.
#[derive(Debug, Clone, Copy)]
enum Inflation {
    Plain(u64),
    Ratio(u64),
}

fn expand_tar<R: Read>(
    reader: R,
    name: &str,
    (limits, cap, wanted): (Limits, Inflation, Wanted),
    members: &mut Vec<Member>,
    warnings: &mut Vec<Diagnostic>,
    kept: &mut u64,
) {
    let mut ar = tar::Archive::new(reader);
    let entries = match ar.entries() {
        Ok(e) => e,
        Err(e) => {
            warnings.push(Diagnostic::error(
                name,
                format!("not a readable tar archive: {e}"),
            ));
            return;
        }
    };
    for (i, entry) in entries.enumerate() {
        if i >= limits.max_entries {
            warnings.push(Diagnostic::error(
                name,
                format!(
                    "more than {} members; the rest are not read",
                    limits.max_entries
                ),
            ));
            break;
        }
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                warnings.push(Diagnostic::error(
                    name,
                    format!("archive damaged after {i} members: {e}"),
                ));
                break;
            }
        };
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            continue; // folders, links, devices: nothing to read
        }
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let rel = match safe_member_path(&raw) {
            Ok(p) => p,
            Err(msg) => {
                warnings.push(Diagnostic::warning(name, msg));
                continue;
            }
        };
        let path = format!("{name}/{rel}");
        let size = entry.size();
        let mut bytes = None;
        if wanted(&path, size) {
            // Refuse a member that cannot be real before inflating any of it (its declared size
            // is the tar header's; the guard would stop it only after holding that much).
            let at = entry.raw_file_position();
            let refused = match cap {
                Inflation::Plain(len) if at.saturating_add(size) > len => Some(format!(
                    "declares {size} bytes at byte {at}, past the end of the {len}-byte archive; \
                     truncated or damaged archive, member not read"
                )),
                Inflation::Ratio(limit) if at.saturating_add(size) > limit => Some(format!(
                    "declares {size} bytes, more than the {limit} bytes this archive may inflate \
                     to ({}× its size); refused as a possible zip bomb",
                    limits.max_ratio
                )),
                _ => None,
            };
            if let Some(msg) = refused {
                // Members after it could only be reached by inflating it: stop here.
                warnings.push(Diagnostic::error(&path, msg));
                members.push(Member {
                    path,
                    size,
                    bytes: None,
                });
                break;
            } else if kept.saturating_add(size) > limits.max_kept {
                warnings.push(Diagnostic::error(
                    &path,
                    format!(
                        "archive members kept in memory would exceed {} bytes; member not read",
                        limits.max_kept
                    ),
                ));
            } else {
                match read_limited(&mut entry, size) {
                    Ok(Ok(b)) => {
                        *kept += b.len() as u64;
                        bytes = Some(Arc::from(b));
                    }
                    Ok(Err(())) => warnings.push(Diagnostic::error(
                        &path,
                        "longer than its header says; not read",
                    )),
                    Err(e) => {
                        warnings.push(Diagnostic::error(&path, format!("cannot read: {e}")));
                        members.push(Member {
                            path,
                            size,
                            bytes: None,
                        });
                        break;
                    }
                }
            }
        }
        members.push(Member { path, size, bytes });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::BytesSource;
    use std::io::Write;

    #[test]
    fn refuses_escaping_paths() {
        assert!(safe_member_path("../etc/passwd").is_err());
        assert!(safe_member_path("/abs").is_err());
        assert!(safe_member_path("C:\\x").is_err());
        assert_eq!(safe_member_path("./a//b/c.csv").unwrap(), "a/b/c.csv");
    }

    #[test]
    fn zip_members_get_virtual_paths() {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut buf);
            let o = zip::write::SimpleFileOptions::default();
            w.start_file("r_1_20250101000000000_ascend_pt/profiler_info_3.json", o)
                .unwrap();
            w.write_all(b"{}").unwrap();
            w.start_file("../evil.json", o).unwrap();
            w.write_all(b"{}").unwrap();
            w.finish().unwrap();
        }
        let src = BytesSource::new("up/job.zip", buf.into_inner());
        let (m, w) = expand(&src, Limits::default(), &|_, _| true);
        assert_eq!(m.len(), 1);
        assert_eq!(
            m[0].path,
            "up/job.zip/r_1_20250101000000000_ascend_pt/profiler_info_3.json"
        );
        assert_eq!(m[0].bytes.as_deref(), Some(&b"{}"[..]));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn gzip_bomb_is_stopped() {
        let mut tarb = tar::Builder::new(Vec::new());
        let data = vec![0u8; 8 << 20];
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tarb.append_data(
            &mut h,
            "run/ASCEND_PROFILER_OUTPUT/trace_view.json",
            &data[..],
        )
        .unwrap();
        let tar_bytes = tarb.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&tar_bytes).unwrap();
        let gz = gz.finish().unwrap();
        let src = BytesSource::new("bomb.tar.gz", gz);
        let small = Limits {
            max_ratio: 2,
            ..Limits::default()
        };
        // 8 MiB from a few KiB: under the 64 MiB floor, so accepted …
        let (m, _) = expand(&src, small, &|_, _| true);
        assert_eq!(m.len(), 1);
        // … and refused once the floor is lowered by a tiny kept-bytes cap.
        let (m, w) = expand(
            &src,
            Limits {
                max_kept: 1 << 20,
                ..small
            },
            &|_, _| true,
        );
        assert!(m.iter().all(|m| m.bytes.is_none()));
        assert!(!w.is_empty());
    }
}
