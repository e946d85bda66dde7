//! A stopped load (the page's Cancel, a new drop) ends the analysis with the stop error, wherever
//! the stop lands: inside a trace batch, among a CSV file's rows, between files, runs and ranks,
//! before the job's figures. Never a panic, never what was read so far reported as the job; and
//! a load that is not stopped gives byte for byte what it gives today.
//!
//! The stop is a countdown shared by the sources and their opener: the load counts as stopped
//! from the k-th question on (as the page's flag, it stays raised), and a read of a stopped load
//! fails as a browser `File`'s does. The number of questions an unstopped load asks is counted
//! first; every k below it must end in the stop error, every k from it on in the full result.
//! Expected results come from the plain analysis of the same bytes ([`analyze_job`], which asks
//! nothing), not from the code under test.

use memlens::diag::Diagnostic;
use memlens::input::FileOpener;
use memlens::profiler::analysis::{analyze_job, try_analyze_job, AnalyzeOptions, JobAnalysis};
use memlens::profiler::discover::Job;
use memlens::profiler::generate::{generate, run_dir, GenSpec};
use memlens::profiler::operator_memory::read_operator_memory;
use memlens::profiler::trace::{read_trace, TraceOptions};
use memlens::profiler::{discover_job, Interner};
use memlens::source::{BytesSource, Source, SourceError, Stopped, STOPPED, STOP_CHECK_BYTES};
use std::cell::{Cell, RefCell};

/// Stop questions asked so far, by whom; the load is stopped from question `stop_at` on.
struct Countdown {
    stop_at: u64,
    asked: Cell<u64>,
    /// The source's name for each question a source asked ("" for the opener's).
    askers: RefCell<Vec<String>>,
}

impl Countdown {
    fn new(stop_at: u64) -> Self {
        Countdown {
            stop_at,
            asked: Cell::new(0),
            askers: RefCell::new(Vec::new()),
        }
    }

    /// One question: true from the `stop_at`-th on.
    fn ask(&self, who: &str) -> bool {
        let n = self.asked.get();
        self.asked.set(n + 1);
        self.askers.borrow_mut().push(who.to_string());
        n >= self.stop_at
    }

    /// Whether a question has already said stopped (a read then fails, as the page's does).
    fn raised(&self) -> bool {
        self.asked.get() > self.stop_at
    }

    fn asked_by(&self, who: &str) -> usize {
        self.askers.borrow().iter().filter(|w| *w == who).count()
    }
}

/// A source that states a read size (a browser `File`: 16 MiB) and answers the countdown.
struct Stopping<'a> {
    inner: Box<dyn Source + 'a>,
    read: usize,
    cd: &'a Countdown,
}

impl Source for Stopping<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn preferred_read(&self) -> usize {
        self.read
    }
    fn check_stop(&self, offset: u64) -> Result<(), SourceError> {
        if self.cd.ask(self.inner.name()) {
            return Err(SourceError::stopped(self.inner.name(), offset));
        }
        Ok(())
    }
    fn may_stop(&self) -> bool {
        true
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, SourceError> {
        if self.cd.raised() {
            return Err(SourceError::stopped(self.inner.name(), offset));
        }
        self.inner.read_at(offset, buf)
    }
}

/// Opens the set's files as [`Stopping`] sources; its own answer is the countdown's too.
struct StoppingOpener<'a> {
    inner: &'a dyn FileOpener,
    read: usize,
    cd: &'a Countdown,
}

impl FileOpener for StoppingOpener<'_> {
    fn open(&self, path: &str) -> Result<Box<dyn Source + '_>, Diagnostic> {
        Ok(Box::new(Stopping {
            inner: self.inner.open(path)?,
            read: self.read,
            cd: self.cd,
        }))
    }
    fn stopped(&self) -> bool {
        self.cd.ask("")
    }
}

/// A generated job's files (path, bytes).
fn generated(spec: &GenSpec) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    generate(spec, &mut |p, b| {
        out.push((p.to_string(), b));
        Ok(())
    })
    .unwrap();
    out
}

/// The file `name` of the first rank.
fn file<'a>(files: &'a [(String, Vec<u8>)], name: &str) -> &'a [u8] {
    let dir = run_dir(0, 0);
    &files
        .iter()
        .find(|(p, _)| p.starts_with(&dir) && p.ends_with(&format!("/{name}")))
        .unwrap_or_else(|| panic!("no {name} under {dir}"))
        .1
}

/// The job's report JSON and memory_events.csv: what the CLI writes.
fn outputs(a: &JobAnalysis, job: &Job) -> (String, Vec<u8>) {
    let report =
        serde_json::to_string(&memlens::profiler::view::report::job_report(a, job)).unwrap();
    let mut events = Vec::new();
    memlens::export::profiler::write_memory_events(a, &mut events).unwrap();
    (report, events)
}

/// A one-thread pool (the page's single-threaded engine: the pieces of a batch run on the
/// reading thread) or a two-thread one (the threaded engine).
fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// A small job (about 4 MiB of files per rank): every stop point of a whole analysis is tried.
const JOB: GenSpec = GenSpec {
    roles: 1,
    ranks: 2,
    trace_bytes: 3 << 20,
    rows: 4_000,
    steps: 2,
    seed: 11,
    outlier: false,
};

/// Larger files (a trace of ~27 MiB, an operator_memory.csv over 2 MiB) for the readers alone.
const ROWS: GenSpec = GenSpec {
    rows: 30_000,
    ..JOB
};

#[test]
fn a_stop_at_any_question_ends_the_job_with_the_stop_and_no_stop_changes_nothing() {
    let files = generated(&JOB);
    let mut set = memlens::families::input_set();
    for (p, b) in &files {
        set.add_bytes(&format!("job/{p}"), b.clone());
    }
    let job = discover_job(set.classify());
    assert_eq!(job.ranks.len(), 2);
    let (want_report, want_events) = outputs(
        &analyze_job(&set, &job, &AnalyzeOptions::default(), &mut |_| {}),
        &job,
    );
    assert!(want_report.contains("\"ranks\"") && want_events.len() > 100_000);

    // The page's read sizes (one read covers each file) and the native ones; one thread and two.
    for (threads, read) in [(1, 16 << 20), (2, 16 << 20), (1, 0), (2, 0)] {
        pool(threads).install(|| {
            let run = |stop_at: u64| {
                let cd = Countdown::new(stop_at);
                let opener = StoppingOpener {
                    inner: &set,
                    read,
                    cd: &cd,
                };
                let got = try_analyze_job(&opener, &job, &AnalyzeOptions::default(), &mut |_| {});
                (got.map(|a| outputs(&a, &job)), cd.asked.get())
            };
            let (full, questions) = run(u64::MAX);
            let full = full.expect("an unstopped load ends");
            assert!(
                full.0 == want_report && full.1 == want_events,
                "an unstopped load gives the plain analysis' report and memory_events.csv \
                 ({threads} threads, reads of {read})"
            );
            // Both ranks' files, the driver's questions between them, and with one thread the
            // trace's and the CSV rows' every MiB: more than the files' MiB.
            let mib = files.iter().map(|f| f.1.len()).sum::<usize>() as u64 / STOP_CHECK_BYTES;
            if threads == 1 {
                assert!(questions > mib, "{questions} questions over {mib} MiB");
            }
            for k in 0..questions + 2 {
                match run(k).0 {
                    Err(Stopped) => assert!(
                        k < questions,
                        "stopped at question {k} of {questions} ({threads} threads, reads of \
                         {read})"
                    ),
                    Ok(out) => {
                        assert!(
                            k >= questions,
                            "a load stopped at question {k} of {questions} reported as complete \
                             ({threads} threads, reads of {read})"
                        );
                        assert!(out.0 == want_report && out.1 == want_events);
                    }
                }
            }
        });
    }
}

#[test]
fn readers_ask_every_mib_they_parse_and_end_with_the_stop_error() {
    let files = generated(&ROWS);
    let trace = file(&files, "trace_view.json");
    let om = file(&files, "operator_memory.csv");
    assert!(trace.len() > 3 << 20 && om.len() > 2 << 20);
    // One read of 16 MiB covers each file: without questions inside the parse, a stop would be
    // seen only at the next file.
    let whole = 16 << 20;
    pool(1).install(|| {
        let cd = Countdown::new(u64::MAX);
        let src = Stopping {
            inner: Box::new(BytesSource::new("trace_view.json", trace.to_vec())),
            read: whole,
            cd: &cd,
        };
        let t = read_trace(
            &src,
            &mut Interner::new(),
            &mut Interner::new(),
            TraceOptions::default(),
            None,
        )
        .unwrap();
        assert!(!t.ops.is_empty());
        // One a MiB, but in the last MiB of each piece (two per 16 MiB read with one thread).
        let per_mib = trace.len() as u64 / STOP_CHECK_BYTES;
        let pieces = 2 * trace.len().div_ceil(whole) as u64;
        assert!(
            cd.asked_by("trace_view.json") as u64 >= per_mib - pieces,
            "{} questions over {per_mib} MiB of trace",
            cd.asked_by("trace_view.json")
        );

        let cd = Countdown::new(u64::MAX);
        let src = Stopping {
            inner: Box::new(BytesSource::new("operator_memory.csv", om.to_vec())),
            read: whole,
            cd: &cd,
        };
        let rows = read_operator_memory(&src, &mut Interner::new(), None).unwrap();
        assert_eq!(rows.rows.len(), ROWS.rows as usize);
        let per_mib = om.len() as u64 / STOP_CHECK_BYTES;
        assert!(
            cd.asked_by("operator_memory.csv") as u64 >= per_mib,
            "{} questions over {per_mib} MiB of rows",
            cd.asked_by("operator_memory.csv")
        );

        // Stopped at the second question: mid-file, the reader ends with the stop error (at a
        // byte inside the file), not with the events or rows read so far.
        for (name, bytes) in [("trace_view.json", trace), ("operator_memory.csv", om)] {
            let cd = Countdown::new(1);
            let src = Stopping {
                inner: Box::new(BytesSource::new(name, bytes.to_vec())),
                read: whole,
                cd: &cd,
            };
            let err = if name.ends_with(".json") {
                read_trace(
                    &src,
                    &mut Interner::new(),
                    &mut Interner::new(),
                    TraceOptions::default(),
                    None,
                )
                .map(|_| ())
                .unwrap_err()
            } else {
                read_operator_memory(&src, &mut Interner::new(), None)
                    .map(|_| ())
                    .unwrap_err()
            };
            assert!(err.message.contains(STOPPED), "{name}: {err}");
            let at = err.byte.expect("the stop names where the reader was");
            assert!(
                at >= STOP_CHECK_BYTES && at < bytes.len() as u64,
                "{name}: stopped at byte {at} of {}",
                bytes.len()
            );
        }
    });
}

#[test]
fn the_threaded_scan_asks_between_rounds_when_one_read_covers_a_large_trace() {
    // 40 MiB in one read: cut into pieces of at most 4 MiB, scanned four (two threads × 2) at a
    // time, with a question between two rounds; the same events as a plain read.
    let spec = GenSpec {
        roles: 1,
        ranks: 1,
        trace_bytes: 40 << 20,
        rows: 1_000,
        steps: 2,
        seed: 3,
        outlier: false,
    };
    let files = generated(&spec);
    let trace = file(&files, "trace_view.json");
    let plain = {
        let src = BytesSource::new("trace_view.json", trace.to_vec());
        let (mut n, mut s) = (Interner::new(), Interner::new());
        let t = read_trace(&src, &mut n, &mut s, TraceOptions::default(), None).unwrap();
        (t.ops, t.steps.len(), t.events, n.len(), s.len())
    };
    pool(2).install(|| {
        let cd = Countdown::new(u64::MAX);
        let src = Stopping {
            inner: Box::new(BytesSource::new("trace_view.json", trace.to_vec())),
            read: 256 << 20,
            cd: &cd,
        };
        let (mut n, mut s) = (Interner::new(), Interner::new());
        let t = read_trace(&src, &mut n, &mut s, TraceOptions::default(), None).unwrap();
        assert!(
            (t.ops, t.steps.len(), t.events, n.len(), s.len()) == plain,
            "the same trace whether or not its scan asks about stops"
        );
        // 40 MiB in pieces of at most 4 MiB, four per round: at least two questions.
        assert!(
            cd.asked_by("trace_view.json") >= 2,
            "{} questions",
            cd.asked_by("trace_view.json")
        );

        let cd = Countdown::new(0);
        let src = Stopping {
            inner: Box::new(BytesSource::new("trace_view.json", trace.to_vec())),
            read: 256 << 20,
            cd: &cd,
        };
        // The stop is seen at the first question, not at the end of the whole read's scan.
        let err = read_trace(
            &src,
            &mut Interner::new(),
            &mut Interner::new(),
            TraceOptions::default(),
            None,
        )
        .map(|_| ())
        .unwrap_err();
        assert!(err.message.contains(STOPPED), "{err}");
        assert!(
            err.byte.is_some_and(|b| b < trace.len() as u64 / 2),
            "{err}"
        );
    });
}

#[test]
fn a_stopped_view_keeps_nothing_of_the_load() {
    let files = generated(&JOB);
    let mut set = memlens::families::input_set();
    for (p, b) in &files {
        set.add_bytes(&format!("job/{p}"), b.clone());
    }
    let mut view = memlens::profiler::view::JobView::open(&mut set);
    let cd = Countdown::new(3);
    let opener = StoppingOpener {
        inner: &set,
        read: 16 << 20,
        cd: &cd,
    };
    assert_eq!(view.try_analyze(&opener), Err(Stopped));
    assert!(view.analysis().ranks.is_empty());
    let cd = Countdown::new(u64::MAX);
    let opener = StoppingOpener {
        inner: &set,
        read: 16 << 20,
        cd: &cd,
    };
    assert_eq!(view.try_analyze(&opener), Ok(()));
    assert_eq!(view.analysis().ranks.len(), 2);
}
