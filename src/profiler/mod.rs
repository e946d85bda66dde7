//! torch_npu / MindSpore profiler memory: whole multi-rank jobs from `*_ascend_pt` / `*_ascend_ms`
//! run folders. (Named for what it reads, profiler output; SOMAS dumps come from Ascend too.)
//!
//! The pipeline, one module a step:
//! - [`run_folder`] recognises run folders among the inputs (for [`crate::input`]'s
//!   classification) and reads their rank, role and step;
//! - [`discover`] turns the classified run folders into jobs: (role, rank) → run folders ordered
//!   by timestamp;
//! - [`operator_memory`], [`memory_record`] and [`module_mem`] read the CSVs (on top of
//!   [`csv_common`], which maps columns by header and parses times exactly to `i64` nanoseconds);
//! - [`db`] reads the database export (`ascend_pytorch_profiler_*.db`, through
//!   [`crate::sqlite`]) into the same rows, series, ops and stacks, so everything after reading
//!   is shared; [`msprof_db`] reads the export in msprof's own layout (MindSpore's
//!   `ascend_mindspore_profiler_*.db`, msprof's `msprof_*.db`) into the same rows and series;
//! - [`trace`] streams `trace_view.json` in chunks, keeping only `cpu_op` events, step spans and the
//!   task-queue pairs;
//! - [`plan`] says which files each rank reads, in which order (per run folder its database
//!   export when it has one, else its text files), and [`run`] executes a run folder's plan;
//! - [`attribution`] joins every allocation row to the op that made it and to a call stack;
//! - [`analysis`] computes peaks, live sets, leaks, fragmentation, per-step peaks and the job matrix;
//! - [`queries`] answers questions about one analysed rank (live set at a time, leak candidates,
//!   curves for a window, the rows a filter keeps);
//! - [`summary`] makes the job summary file (compact rank summaries, merged anywhere);
//!   [`summary_file`] recognises one among the inputs, [`summary_view`] answers the page about it,
//!   [`summary_raw`] puts ranks opened from their raw run folders in place of their summaries;
//! - [`view`] holds what the views of a front end ask (requests and answers as serde types, the
//!   `--json` report with the job's totals, the allocation table, the timeline's layout);
//! - [`generate`] writes deterministic synthetic jobs for tests, examples and benchmarks
//!   (`generate::db`, native only, writes the same jobs as database exports).
//!
//! Everything reads through [`crate::source::Source`] and returns data; the CLI and the wasm layer
//! are thin adapters over [`analyze_job`] and the query functions of [`analysis`].

#![warn(missing_docs)]

pub mod analysis;
pub mod attribution;
pub mod csv_common;
pub mod csv_rows;
pub mod db;
pub mod discover;
pub mod generate;
pub mod inject;
pub mod memory_record;
pub mod module_mem;
pub mod msprof_db;
pub mod no_data;
pub mod operator_memory;
pub mod plan;
pub mod queries;
pub mod run;
pub mod run_folder;
pub mod size_class;
pub mod summary;
pub mod summary_file;
pub mod summary_raw;
pub mod summary_view;
pub mod trace;
pub mod view;

pub use analysis::{analyze_job, try_analyze_job, AnalyzeOptions, JobAnalysis, RankAnalysis};
pub use discover::{discover_job, job_of, Job, RankInput};
pub use run_folder::{ProfilerRun, RunFiles};

/// Strings (op names, call stacks, frames) stored once and referred to by `u32` id.
///
/// Id 0 is always the empty string, so "no value" needs no `Option` in columnar tables.
#[derive(Debug, Clone)]
pub struct Interner {
    /// Ids by the hash of their string (foldhash with a fixed seed: SipHash was 7 % of a rank's
    /// samples in the page's engine), each string kept once, in `strings`.
    ids: hashbrown::HashTable<u32>,
    strings: Vec<Box<str>>,
}

/// The hash of an interned string, from its bytes (so that bytes not yet checked as UTF-8 can be
/// looked up: [`Interner::lookup_bytes`]).
fn intern_hash(s: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x1e7e_5eed).hash_one(s)
}

impl Default for Interner {
    fn default() -> Self {
        Self::new()
    }
}

impl Interner {
    /// An interner holding only the empty string (id 0).
    pub fn new() -> Self {
        let mut ids = hashbrown::HashTable::new();
        ids.insert_unique(intern_hash(b""), 0, |_| intern_hash(b""));
        Interner {
            ids,
            strings: vec![Box::from("")],
        }
    }

    /// The id of `s`, adding it if new.
    pub fn intern(&mut self, s: &str) -> u32 {
        let h = intern_hash(s.as_bytes());
        if let Some(id) = self.find(h, s.as_bytes()) {
            return id;
        }
        // More than 4 billion distinct strings cannot come from real input within memory limits;
        // saturating keeps the function total instead of panicking.
        let id = u32::try_from(self.strings.len()).unwrap_or(u32::MAX);
        self.strings.push(Box::from(s));
        let strings = &self.strings;
        self.ids.insert_unique(h, id, |&id| {
            intern_hash(strings.get(id as usize).map_or("", |t| t).as_bytes())
        });
        id
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<u32> {
        self.lookup_bytes(s.as_bytes())
    }

    /// The id of the interned string whose bytes are `b`, if there is one. Bytes equal to an
    /// interned string are that string's UTF-8, so a reader holding a field's raw bytes finds its
    /// id without checking them first (`callgrind`: the check and its call were ~180 instructions
    /// of an `operator_memory.csv` row's name, which nearly always repeats one already read).
    pub fn lookup_bytes(&self, b: &[u8]) -> Option<u32> {
        self.find(intern_hash(b), b)
    }

    /// The id of `s`, whose hash is `h`, if it was interned. Compared with
    /// [`crate::bytes::same_bytes`]: interned call stacks are kilobytes long, and `==` compares them
    /// a byte at a time on wasm32.
    fn find(&self, h: u64, s: &[u8]) -> Option<u32> {
        self.ids
            .find(h, |&id| {
                self.strings
                    .get(id as usize)
                    .is_some_and(|t| crate::bytes::same_bytes(t.as_bytes(), s))
            })
            .copied()
    }

    /// The string of `id` (empty for an unknown id).
    pub fn get(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", |s| s)
    }

    /// Number of distinct strings, including the empty one.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// True when only the empty string is held.
    pub fn is_empty(&self) -> bool {
        self.strings.len() <= 1
    }
}

/// Formats nanoseconds as the microsecond text torch_npu writes (`<us>.<3 digits>`), exactly.
pub fn ns_to_us_text(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// Formats nanoseconds as milliseconds with 6 decimals (exact: 1 ns = 1e-6 ms).
pub fn ns_to_ms_text(ns: i64) -> String {
    let mut out = Vec::with_capacity(24);
    push_ns_as_ms(&mut out, ns);
    // Only ASCII digits, `-` and `.` were written.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends [`ns_to_ms_text`]'s text to `out` without an allocation of its own (the exports
/// format millions of cells into one reused buffer).
pub fn push_ns_as_ms(out: &mut Vec<u8>, ns: i64) {
    if ns < 0 {
        out.push(b'-');
    }
    let a = ns.unsigned_abs();
    let mut int = itoa::Buffer::new();
    out.extend_from_slice(int.format(a / 1_000_000).as_bytes());
    // Six decimals, zero-padded: 1_000_000 + frac has exactly seven digits, the first a `1`.
    let mut frac = itoa::Buffer::new();
    let six = frac.format(1_000_000 + a % 1_000_000).as_bytes();
    out.push(b'.');
    out.extend_from_slice(six.get(1..).unwrap_or(b"000000"));
}

/// Formats a byte count as a decimal number of `unit`-byte units, exactly (bytes are multiples of
/// 1/2^20 MB, so at most 20 decimals are needed; trailing zeros are trimmed, one decimal is kept).
pub fn bytes_to_unit_text(bytes: i128, unit: u32) -> String {
    let mut out = Vec::with_capacity(48);
    push_bytes_as_units(&mut out, bytes, unit);
    // Only ASCII digits, `-` and `.` were written.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends [`bytes_to_unit_text`]'s text to `out` without an allocation of its own.
pub fn push_bytes_as_units(out: &mut Vec<u8>, bytes: i128, unit: u32) {
    if bytes < 0 {
        out.push(b'-');
    }
    let a = bytes.unsigned_abs();
    let unit = u64::from(unit.max(1));
    let mut int = itoa::Buffer::new();
    out.extend_from_slice(int.format(a / u128::from(unit)).as_bytes());
    out.push(b'.');
    // The remainder is below `unit` (< 2^32), so ten times it fits a u64.
    let mut rem = (a % u128::from(unit)) as u64;
    if rem == 0 {
        out.push(b'0');
        return;
    }
    // `unit` is 1024 or 2^20 in practice: a power of two divides 10^k for k ≥ its exponent, so the
    // digits end; the guard bounds any other unit at 40 decimals, as the text always did.
    let mut guard = 0;
    if unit.is_power_of_two() {
        let shift = unit.trailing_zeros();
        let mask = unit - 1;
        while rem != 0 && guard < 40 {
            rem *= 10;
            out.push(b'0' + (rem >> shift) as u8);
            rem &= mask;
            guard += 1;
        }
    } else {
        while rem != 0 && guard < 40 {
            rem *= 10;
            out.push(b'0' + (rem / unit) as u8);
            rem %= unit;
            guard += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interner_keeps_zero_for_empty() {
        let mut i = Interner::new();
        assert_eq!(i.intern(""), 0);
        let a = i.intern("aten::add");
        assert_eq!(i.intern("aten::add"), a);
        assert_eq!(i.get(a), "aten::add");
        assert_eq!(i.get(99), "");
    }

    /// `lookup_bytes` finds exactly the strings interned, by their bytes, with the ids `intern`
    /// gave (held in a map of the bytes written as the independent expectation), and nothing for
    /// bytes that were never interned: prefixes, extensions, one byte changed at every place,
    /// same-length neighbours, bytes that are not UTF-8 and their lossy texts.
    #[test]
    fn bytes_find_the_strings_interned_and_nothing_else() {
        let mut rng = fastrand::Rng::with_seed(16);
        let mut i = Interner::new();
        let mut want: std::collections::HashMap<Vec<u8>, u32> = Default::default();
        want.insert(Vec::new(), 0);
        let alphabet = "ab:_9.é漢";
        for _ in 0..2_000 {
            let t: String = (0..rng.usize(0..24))
                .map(|_| {
                    alphabet
                        .chars()
                        .nth(rng.usize(..alphabet.chars().count()))
                        .unwrap()
                })
                .collect();
            let id = i.intern(&t);
            assert_eq!(*want.entry(t.into_bytes()).or_insert(id), id);
        }
        let names: Vec<Vec<u8>> = want.keys().cloned().collect();
        for b in &names {
            assert_eq!(i.lookup_bytes(b), want.get(b).copied(), "{b:?}");
            let mut probes = vec![
                [b.as_slice(), b"x"].concat(),
                [b.as_slice(), b"\xff"].concat(),
                b.get(..b.len().saturating_sub(1)).unwrap_or(&[]).to_vec(),
            ];
            for k in 0..b.len() {
                let mut c = b.clone();
                c[k] ^= 1 << rng.u32(0..8);
                probes.push(c);
            }
            for p in probes {
                assert_eq!(i.lookup_bytes(&p), want.get(&p).copied(), "{p:?}");
            }
        }
        let bad = b"aten::\xffop";
        i.intern(&String::from_utf8_lossy(bad));
        assert_eq!(i.lookup_bytes(bad), None);
        assert_eq!(
            i.lookup_bytes(String::from_utf8_lossy(bad).as_bytes()),
            i.lookup(&String::from_utf8_lossy(bad))
        );
    }

    /// The texts as they were first written, with `format!` and 128-bit arithmetic: the
    /// allocation-free formatters must print the same bytes (the exports are compared byte for
    /// byte across versions and engines).
    fn ms_reference(ns: i64) -> String {
        let sign = if ns < 0 { "-" } else { "" };
        let a = ns.unsigned_abs();
        format!("{sign}{}.{:06}", a / 1_000_000, a % 1_000_000)
    }

    fn units_reference(bytes: i128, unit: u32) -> String {
        let sign = if bytes < 0 { "-" } else { "" };
        let a = bytes.unsigned_abs();
        let unit = u128::from(unit.max(1));
        let mut rem = a % unit;
        let mut frac = String::new();
        while rem != 0 && frac.len() < 40 {
            rem *= 10;
            frac.push(char::from(b'0' + (rem / unit) as u8));
            rem %= unit;
        }
        if frac.is_empty() {
            frac.push('0');
        }
        format!("{sign}{}.{frac}", a / unit)
    }

    #[test]
    fn buffered_formatters_print_the_reference_bytes() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let edges = [
            0i64,
            1,
            -1,
            999_999,
            1_000_000,
            -1_000_001,
            i64::MAX,
            i64::MIN,
        ];
        for ns in edges {
            assert_eq!(ns_to_ms_text(ns), ms_reference(ns), "{ns}");
        }
        for _ in 0..50_000 {
            let v = next();
            let ns = (v as i64) >> (v % 60);
            assert_eq!(ns_to_ms_text(ns), ms_reference(ns), "{ns}");
            let bytes = i128::from((next() as i64) >> (v % 62)) * i128::from(1 + (v & 3) as i64);
            for unit in [1024, 1 << 20, 1, 3, 1000, 0, u32::MAX] {
                assert_eq!(
                    bytes_to_unit_text(bytes, unit),
                    units_reference(bytes, unit),
                    "{bytes} / {unit}"
                );
            }
        }
        for bytes in [i128::MIN, i128::MAX, 0, -1, 1 << 100] {
            assert_eq!(
                bytes_to_unit_text(bytes, 1 << 20),
                units_reference(bytes, 1 << 20)
            );
        }
    }

    #[test]
    fn exact_unit_text() {
        assert_eq!(
            ns_to_us_text(1_736_405_443_871_259_720),
            "1736405443871259.720"
        );
        assert_eq!(ns_to_ms_text(1_500_001), "1.500001");
        assert_eq!(bytes_to_unit_text(18_816 * 1024 + 512, 1024), "18816.5");
        assert_eq!(bytes_to_unit_text(1_000_729_600, 1 << 20), "954.3701171875");
        assert_eq!(bytes_to_unit_text(-512, 1024), "-0.5");
        assert_eq!(bytes_to_unit_text(0, 1024), "0.0");
    }
}
