//! The read size a source states ([`Source::preferred_read`], what a browser `File` does) is the
//! size the streaming readers read it in, results do not depend on it, and damage that straddles
//! the end of one of those larger reads is still reported at its own byte and line.
//!
//! Expectations come from the inputs themselves: read counts from the file sizes, damaged spots
//! from a search of the text, results from the same analysis of the same bytes read with no
//! stated size (the native path).

use memlens::diag::Diagnostic;
use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::generate::{generate, run_dir, GenSpec};
use memlens::profiler::operator_memory::read_operator_memory;
use memlens::profiler::trace::{read_trace, TraceOptions};
use memlens::profiler::{discover_job, Interner};
use memlens::source::SourceError;
use std::cell::RefCell;

mod support;

use support::{hooked, Hook, Hooked, HookedOpener};

/// Every read of one source: (offset, bytes asked for).
struct Log(RefCell<Vec<(String, u64, usize)>>);

impl Log {
    fn new() -> Self {
        Log(RefCell::new(Vec::new()))
    }
    fn borrow(&self) -> std::cell::Ref<'_, Vec<(String, u64, usize)>> {
        self.0.borrow()
    }
}

/// Logs every read made.
impl Hook for Log {
    fn read(&self, name: &str, offset: u64, len: usize) -> Result<(), SourceError> {
        self.0.borrow_mut().push((name.to_string(), offset, len));
        Ok(())
    }
}

/// Bytes in memory that state a read size, and log every read made of them.
fn stating<'a>(name: &str, bytes: &[u8], read: usize, log: &'a Log) -> Hooked<'a, Log> {
    hooked(name, bytes, read, log)
}

/// A generated rank's files (path, bytes).
fn generated(spec: &GenSpec) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    generate(spec, &mut |p, b| {
        out.push((p.to_string(), b));
        Ok(())
    })
    .unwrap();
    out
}

const SPEC: GenSpec = GenSpec {
    roles: 1,
    ranks: 2,
    trace_bytes: 3 << 20,
    rows: 30_000,
    steps: 2,
    seed: 5,
    outlier: false,
};

/// The file `name` of the first rank.
fn file<'a>(files: &'a [(String, Vec<u8>)], name: &str) -> &'a [u8] {
    let dir = run_dir(0, 0);
    &files
        .iter()
        .find(|(p, _)| p.starts_with(&dir) && p.ends_with(&format!("/{name}")))
        .unwrap_or_else(|| panic!("no {name} under {dir}"))
        .1
}

/// The reads of `log`, which must be `size` bytes each from offset 0 on, the last clamped to `len`.
fn assert_reads_of(log: &Log, size: usize, len: usize, what: &str) {
    let reads: Vec<(u64, usize)> = log.borrow().iter().map(|r| (r.1, r.2)).collect();
    let want: Vec<(u64, usize)> = (0..len.div_ceil(size))
        .map(|k| ((k * size) as u64, size.min(len - k * size)))
        .collect();
    assert_eq!(reads, want, "{what}: reads of {size} bytes over {len}");
}

#[test]
fn the_trace_and_csv_readers_read_in_the_size_the_source_states() {
    let files = generated(&SPEC);
    let trace = file(&files, "trace_view.json");
    let om = file(&files, "operator_memory.csv");
    assert!(
        trace.len() > 3 << 20 && om.len() > 2 << 20,
        "inputs large enough to cut"
    );
    let opts = TraceOptions {
        batch: 64 << 10,
        pieces: 2,
    };
    for stated in [0, 1 << 20, (1 << 20) + 13, 16 << 20] {
        let log = Log::new();
        let src = stating("trace_view.json", trace, stated, &log);
        let (mut n, mut s) = (Interner::new(), Interner::new());
        let t = read_trace(&src, &mut n, &mut s, opts, None).unwrap();
        assert!(!t.ops.is_empty());
        // The reader's own batch when the source states less.
        assert_reads_of(&log, stated.max(64 << 10), trace.len(), "trace");

        let log = Log::new();
        let src = stating("operator_memory.csv", om, stated, &log);
        let rows = read_operator_memory(&src, &mut Interner::new(), None).unwrap();
        assert_eq!(rows.rows.len(), SPEC.rows as usize);
        // The CSV reader's own chunk is 1 MiB.
        assert_reads_of(&log, stated.max(1 << 20), om.len(), "operator_memory.csv");
    }
}

#[test]
fn a_whole_read_is_the_stated_size_as_well() {
    // The SOMAS reader takes a dump whole, in reads of its 8 MiB chunk or the stated size.
    let bytes: Vec<u8> = (0..(20u32 << 20) + 5).map(|i| (i % 251) as u8).collect();
    for stated in [0, 12 << 20] {
        let log = Log::new();
        let src = stating("dump.ir", &bytes, stated, &log);
        let got = memlens::somas::read_source(&src, None).unwrap();
        assert!(got == bytes);
        assert_reads_of(&log, stated.max(8 << 20), bytes.len(), "somas");
    }
}

#[test]
fn a_job_gives_the_same_results_whatever_the_read_size() {
    let files = generated(&SPEC);
    let mut set = memlens::families::input_set();
    for (p, b) in &files {
        set.add_bytes(&format!("job/{p}"), b.clone());
    }
    let job = discover_job(set.classify());
    assert_eq!(job.ranks.len(), 2);
    let run = |stated: usize| {
        let log = Log::new();
        let opener = HookedOpener {
            inner: &set,
            read: stated,
            hook: &log,
        };
        let a = analyze_job(&opener, &job, &AnalyzeOptions::default(), &mut |_| {});
        let report =
            serde_json::to_string(&memlens::profiler::view::report::job_report(&a, &job)).unwrap();
        let mut events = Vec::new();
        memlens::export::profiler::write_memory_events(&a, &mut events).unwrap();
        let stated_reads = log.borrow().iter().filter(|r| r.2 == stated).count();
        (report, events, stated_reads)
    };
    let (want_report, want_events, _) = run(0);
    assert!(want_report.contains("\"ranks\"") && want_events.len() > 1 << 20);
    for stated in [4099, (1 << 20) + 13, 16 << 20] {
        let (report, events, stated_reads) = run(stated);
        // Where the stated size is above a reader's own (the CSV readers' 1 MiB), it was used: the
        // files are larger than these sizes.
        assert!(
            stated < 1 << 20 || stated_reads > 0,
            "no read of the stated {stated} bytes"
        );
        assert!(
            report == want_report,
            "the report differs at reads of {stated}"
        );
        assert!(
            events == want_events,
            "memory_events.csv differs at reads of {stated}"
        );
    }
}

/// 1-based line of byte `at`.
fn line_of(text: &[u8], at: usize) -> u64 {
    1 + text[..at].iter().filter(|&&b| b == b'\n').count() as u64
}

#[test]
fn damage_across_the_end_of_a_read_is_reported_at_its_byte() {
    const READ: usize = 1 << 20;
    // A CSV row whose size is not a number, its bytes on both sides of the first read's end.
    let mut csv = String::from("Name,Size(KB),Allocation Time(us),Release Time(us),Device Type\n");
    let row = |k: usize| format!("aten::empty,{}.5,{},{},NPU:0\n", k % 97, 1000 + k, 2000 + k);
    let mut k = 0;
    while csv.len() < READ - 20 {
        csv.push_str(&row(k));
        k += 1;
    }
    let bad = csv.len();
    csv.push_str("aten::broken,12x34.5,77777777,88888888,NPU:0\n");
    assert!(
        bad < READ && csv.len() > READ,
        "the row straddles the read's end"
    );
    for _ in 0..20_000 {
        csv.push_str(&row(k));
        k += 1;
    }
    let find = |w: &[Diagnostic]| w.iter().find(|d| d.message.contains("12x34.5")).cloned();
    let mut seen = Vec::new();
    for stated in [0, READ, READ + 4096] {
        let log = Log::new();
        let src = stating("operator_memory.csv", csv.as_bytes(), stated, &log);
        let om = read_operator_memory(&src, &mut Interner::new(), None).unwrap();
        let d = find(&om.warnings)
            .unwrap_or_else(|| panic!("no warning at {stated}: {:?}", om.warnings));
        assert_eq!(d.line, Some(line_of(csv.as_bytes(), bad)), "{d}");
        assert_eq!(d.byte, Some(bad as u64), "{d}");
        seen.push(d.to_string());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");

    // A trace event cut off by damage, across the end of the first read of 1 MiB + 13 bytes.
    const TREAD: usize = (1 << 20) + 13;
    let mut tv = String::from("[\n");
    let mut i = 0;
    while tv.len() < TREAD - 40 {
        tv.push_str(&format!(
            "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":2,\"ts\":\"{}\",\"dur\":1}},\n",
            1000 + i
        ));
        i += 1;
    }
    let broken = tv.len();
    tv.push_str(
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::broken\",\"ts\":\"5\",\"dur\":]},\n",
    );
    // The damage: a `]` where the value of `dur` should be, past the read's end.
    let bad = broken + tv[broken..].find(":]").unwrap() + 1;
    assert!(
        broken < TREAD && bad > TREAD,
        "the event straddles the read's end"
    );
    for _ in 0..20_000 {
        tv.push_str(&format!(
            "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":2,\"ts\":\"{}\",\"dur\":1}},\n",
            1000 + i
        ));
        i += 1;
    }
    tv.push_str("{\"ph\":\"M\",\"name\":\"end\"}]\n");
    let mut seen = Vec::new();
    for stated in [0, TREAD] {
        let log = Log::new();
        let src = stating("trace_view.json", tv.as_bytes(), stated, &log);
        let (mut n, mut s) = (Interner::new(), Interner::new());
        let opts = TraceOptions {
            batch: 64 << 10,
            pieces: 2,
        };
        let t = read_trace(&src, &mut n, &mut s, opts, None).unwrap();
        assert_eq!(
            t.ops.len() as u64,
            i,
            "every good event is kept at {stated}"
        );
        let d = t
            .warnings
            .iter()
            .find(|d| d.byte == Some(bad as u64))
            .unwrap_or_else(|| panic!("no warning at byte {bad} ({stated}): {:?}", t.warnings));
        seen.push(d.to_string());
    }
    assert_eq!(seen[0], seen[1]);
}
