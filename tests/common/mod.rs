//! Helpers shared by the integration tests: fixtures, loading and analysing drops, the CLI run.
#![allow(dead_code)]

use memlens::diag::Diagnostic;
use memlens::input::InputSet;
use memlens::profiler::analysis::{analyze_job, AnalyzeOptions, JobAnalysis, RankReport};
use memlens::profiler::Job;
use std::path::{Path, PathBuf};

/// Every file under `root`: its path relative to `root` (with `/` between components) and its
/// bytes, sorted by path (the directory listing's order is the file system's, not a set one).
pub fn files_under(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// `fixtures/<rel>` of this repository.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// The real two-rank torch_npu text export (`fixtures/torch_npu/msinsight-level0/text`).
pub const REAL_TEXT: &str = "torch_npu/msinsight-level0/text";

/// A file of the real torch_npu sample: `rank` 0 or 1, `rel` under its run folder.
pub fn npu(rank: u32, rel: &str) -> Vec<u8> {
    let p = fixture(&format!("{REAL_TEXT}/rank{rank}_ascend_pt/{rel}"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The files of the real run folder of `rank`, under `<prefix>/rank<rank>_ascend_pt/`, with
/// `changes` applied: `(relative path, Some(bytes))` replaces or adds a file, `None` removes it.
pub fn run_folder(
    prefix: &str,
    rank: u32,
    changes: &[(&str, Option<Vec<u8>>)],
) -> Vec<(String, Vec<u8>)> {
    let mut rels: Vec<String> = vec![
        format!("profiler_info_{rank}.json"),
        "profiler_metadata.json".into(),
        "ASCEND_PROFILER_OUTPUT/operator_memory.csv".into(),
        "ASCEND_PROFILER_OUTPUT/memory_record.csv".into(),
        "ASCEND_PROFILER_OUTPUT/npu_module_mem.csv".into(),
        "ASCEND_PROFILER_OUTPUT/trace_view.json".into(),
    ];
    for (rel, _) in changes {
        if !rels.iter().any(|r| r == rel) {
            rels.push(rel.to_string());
        }
    }
    let mut out = Vec::new();
    for rel in rels {
        let bytes = match changes.iter().find(|(r, _)| *r == rel) {
            Some((_, Some(b))) => b.clone(),
            Some((_, None)) => continue,
            None => npu(rank, &rel),
        };
        out.push((format!("{prefix}/rank{rank}_ascend_pt/{rel}"), bytes));
    }
    out
}

/// What a drop of files gives: the inputs, the job and its analysis (warnings of listing,
/// discovery and every file first, as the CLI prints them).
pub struct Loaded {
    pub set: InputSet,
    pub job: Job,
    pub analysis: JobAnalysis,
}

/// Loads files given as (path, bytes) like a browser drop (archives expanded).
pub fn load(files: &[(String, Vec<u8>)]) -> Loaded {
    let mut set = memlens::families::input_set();
    for (path, bytes) in files {
        set.add_bytes(path, bytes.clone());
    }
    let job = memlens::profiler::job_of(&mut set);
    let analysis = analyze_job(&set, &job, &AnalyzeOptions::default(), &mut |_| {});
    Loaded { set, job, analysis }
}

impl Loaded {
    /// The summary of the rank whose run folder path contains `part`.
    pub fn rank(&self, part: &str) -> &RankReport {
        let found: Vec<&RankReport> = self
            .analysis
            .ranks
            .iter()
            .map(|r| &r.summary)
            .filter(|s| s.run_dirs.iter().any(|d| d.contains(part)))
            .collect();
        assert_eq!(found.len(), 1, "ranks with {part}: {}", found.len());
        found[0]
    }

    /// Every diagnostic (listing, discovery, files) whose file contains `part`, as displayed.
    pub fn diags(&self, part: &str) -> Vec<String> {
        self.analysis
            .warnings
            .iter()
            .filter(|d| d.file.contains(part))
            .map(Diagnostic::to_string)
            .collect()
    }

    /// Notes of discovery (run notes, archive problems) whose file contains `part`.
    pub fn ignored(&self) -> Vec<(String, String)> {
        self.job.ignored.clone()
    }
}

/// The analysis of the inputs at `path` (a file or a folder), as the CLI reads them.
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_path(path: &Path) -> JobAnalysis {
    let mut inputs = memlens::families::input_set_from_paths(&[path.to_path_buf()]);
    let job = memlens::profiler::job_of(&mut inputs);
    analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {})
}

/// What `memlens profiler <args> --json` prints, parsed; the run must succeed.
pub fn profiler_json<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memlens"))
        .arg("profiler")
        .args(args)
        .arg("--json")
        .output()
        .expect("memlens runs");
    assert!(
        out.status.success(),
        "memlens profiler {:?} --json: {}",
        args.iter().map(|a| a.as_ref()).collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints JSON")
}

/// A rank summary as JSON, for whole-value comparisons.
pub fn json(s: &RankReport) -> serde_json::Value {
    serde_json::to_value(s).expect("summary serialises")
}

/// Peak resident set size of this process so far (Linux `VmHWM`), in bytes.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Current resident set size (Linux `VmRSS`), in bytes.
pub fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A raw deflate stream that inflates to `len` zero bytes (`len` a multiple of 1 MiB) without
/// compressing `len` bytes: one megabyte of zeros compressed once, byte-aligned by a sync
/// flush, repeated (its back-references stay inside it), then an empty final block.
pub fn deflate_zeros(len: u64) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let mb = vec![0u8; 1 << 20];
    let mut c = Compress::new(Compression::best(), false);
    let mut block = Vec::with_capacity(8 << 10);
    c.compress_vec(&mb, &mut block, FlushCompress::Sync)
        .expect("deflate");
    let mut out = Vec::with_capacity(block.len() * (len >> 20) as usize + 2);
    for _ in 0..(len >> 20) {
        out.extend_from_slice(&block);
    }
    out.extend_from_slice(&[0x03, 0x00]); // final fixed-Huffman block holding only end-of-block
    out
}

/// A zip archive holding `members` as (name, method, declared size, CRC, data); method 0 stores,
/// 8 deflates (the data given is already compressed). Written by hand so that a bomb's data
/// never has to exist inflated.
pub fn zip_bytes(members: &[(&str, u16, u64, u32, Vec<u8>)]) -> Vec<u8> {
    fn u16le(v: &mut Vec<u8>, x: u16) {
        v.extend_from_slice(&x.to_le_bytes());
    }
    fn u32le(v: &mut Vec<u8>, x: u32) {
        v.extend_from_slice(&x.to_le_bytes());
    }
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, method, size, crc, data) in members {
        let offset = out.len() as u32;
        let size = u32::try_from(*size).expect("zip32 sizes");
        for (v, central_entry) in [(&mut out, false), (&mut central, true)] {
            u32le(
                v,
                if central_entry {
                    0x0201_4b50
                } else {
                    0x0403_4b50
                },
            );
            if central_entry {
                u16le(v, 20); // version made by
            }
            u16le(v, 20); // version needed
            u16le(v, 0); // flags
            u16le(v, *method);
            u16le(v, 0); // time
            u16le(v, 0x21); // date
            u32le(v, *crc);
            u32le(v, data.len() as u32);
            u32le(v, size);
            u16le(v, name.len() as u16);
            u16le(v, 0); // extra
            if central_entry {
                u16le(v, 0); // comment
                u16le(v, 0); // disk
                u16le(v, 0); // internal attributes
                u32le(v, 0); // external attributes
                u32le(v, offset);
            }
            v.extend_from_slice(name.as_bytes());
        }
        out.extend_from_slice(data);
    }
    let cd_offset = out.len() as u32;
    let cd_len = central.len() as u32;
    out.extend_from_slice(&central);
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    u16le(&mut out, members.len() as u16);
    u16le(&mut out, members.len() as u16);
    u32le(&mut out, cd_len);
    u32le(&mut out, cd_offset);
    u16le(&mut out, 0);
    out
}

/// CRC-32 (IEEE) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                0xEDB8_8320 ^ (crc >> 1)
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A `.tar.gz` whose one member `name` declares `len` bytes of zeros, built without inflating
/// them: the tar header as a stored deflate block, then [`deflate_zeros`].
pub fn tar_gz_zeros(name: &str, len: u64) -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    h.set_path(name).expect("member name");
    h.set_size(len);
    h.set_mode(0o644);
    h.set_cksum();
    let header = h.as_bytes();
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]; // gzip header, no flags
    out.push(0x00); // stored block, not final
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&(!(header.len() as u16)).to_le_bytes());
    out.extend_from_slice(header);
    out.extend_from_slice(&deflate_zeros(len));
    out.extend_from_slice(&0u32.to_le_bytes()); // CRC (never reached)
    out.extend_from_slice(&((len + 512) as u32).to_le_bytes());
    out
}

/// A source whose bytes are made on demand, never held: pieces of given bytes and long runs of
/// one byte. For inputs of hundreds of megabytes in memory-bound tests.
pub struct GenSource {
    name: String,
    parts: Vec<(u64, Part)>,
    len: u64,
}

/// A piece of a [`GenSource`].
pub enum Part {
    /// These bytes.
    Bytes(Vec<u8>),
    /// This byte, so many times.
    Run(u8, u64),
    /// These bytes, repeated so many times.
    Repeat(Vec<u8>, u64),
}

impl GenSource {
    pub fn new(name: &str, parts: Vec<Part>) -> Self {
        let mut at = 0;
        let mut out = Vec::new();
        for p in parts {
            let len = match &p {
                Part::Bytes(b) => b.len() as u64,
                Part::Run(_, n) => *n,
                Part::Repeat(b, n) => b.len() as u64 * n,
            };
            out.push((at, p));
            at += len;
        }
        GenSource {
            name: name.to_string(),
            parts: out,
            len: at,
        }
    }
}

impl memlens::source::Source for GenSource {
    fn name(&self) -> &str {
        &self.name
    }
    fn len(&self) -> u64 {
        self.len
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, memlens::source::SourceError> {
        let mut done = 0;
        while done < buf.len() {
            let pos = offset + done as u64;
            if pos >= self.len {
                break;
            }
            let k = self.parts.partition_point(|(s, _)| *s <= pos) - 1;
            let (start, part) = &self.parts[k];
            let rel = pos - start;
            let n = match part {
                Part::Bytes(b) => {
                    let src = &b[rel as usize..];
                    let n = src.len().min(buf.len() - done);
                    buf[done..done + n].copy_from_slice(&src[..n]);
                    n
                }
                Part::Run(c, len) => {
                    let n = ((len - rel) as usize).min(buf.len() - done);
                    buf[done..done + n].fill(*c);
                    n
                }
                Part::Repeat(b, _) => {
                    let i = (rel % b.len() as u64) as usize;
                    let src = &b[i..];
                    let n = src.len().min(buf.len() - done);
                    buf[done..done + n].copy_from_slice(&src[..n]);
                    n
                }
            };
            done += n;
        }
        Ok(done)
    }
}

/// Runs `f` and returns its result with the growth of the peak resident set size it caused
/// (Linux: the peak is reset through `/proc/self/clear_refs`, else sampled). One measurement at
/// a time in a process: callers hold [`rss_lock`].
pub fn peak_growth<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = rss().expect("VmRSS");
    if std::fs::write("/proc/self/clear_refs", "5").is_ok() {
        let before = rss().expect("VmRSS");
        let r = f();
        let peak = peak_rss().expect("VmHWM");
        return (r, peak.saturating_sub(before));
    }
    // Without the reset (a kernel or sandbox that refuses it): sample the RSS every millisecond
    // from another thread; a spike shorter than that could be missed.
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let max = std::sync::Arc::new(AtomicU64::new(before));
    let sampler = {
        let (stop, max) = (stop.clone(), max.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(r) = rss() {
                    max.fetch_max(r, Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        })
    };
    let r = f();
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let peak = max.load(Ordering::Relaxed).max(rss().unwrap_or(0));
    (r, peak.saturating_sub(before))
}

/// Serialises RSS measurements within one test binary.
pub fn rss_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Copies the folder `from` and everything under it to `to` (made if missing): a fixture run
/// copied into a test's temporary folder, to be damaged there.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// The per-device figures of a snapshot summary compared with an expectation worked out by other
/// means (the samples' `expected.json`, the hand-made shapes' figures).
pub const SNAPSHOT_DEVICE_FIELDS: [&str; 17] = [
    "segments",
    "reserved_bytes",
    "allocated_bytes",
    "requested_bytes",
    "blocks",
    "blocks_by_state",
    "trace_entries",
    "actions",
    "oom_events",
    "baseline_allocated_bytes",
    "peak_allocated_bytes",
    "peak_trace_index",
    "peak_time_us",
    "live_at_peak_by_frame",
    "live_at_snapshot_by_frame",
    "free_in_segments_bytes",
    "largest_free_block",
];
