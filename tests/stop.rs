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
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::diag::Diagnostic;
use memlens::profiler::analysis::{analyze_job, try_analyze_job, AnalyzeOptions, JobAnalysis};
use memlens::profiler::discover::Job;
use memlens::profiler::generate::{generate, run_dir, GenSpec};
use memlens::profiler::operator_memory::read_operator_memory;
use memlens::profiler::trace::{read_trace, Trace, TraceOptions};
use memlens::profiler::{discover_job, Interner};
use memlens::source::{BytesSource, Source, SourceError, Stopped, STOPPED, STOP_CHECK_BYTES};
use std::cell::{Cell, RefCell};

mod support;

use support::{hooked, Hook, Hooked, HookedOpener};

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

/// The countdown is the sources' and the opener's stop answer, and a read of a stopped load
/// fails as a browser `File`'s does.
impl Hook for Countdown {
    fn read(&self, name: &str, offset: u64, _len: usize) -> Result<(), SourceError> {
        if self.raised() {
            return Err(SourceError::stopped(name, offset));
        }
        Ok(())
    }
    fn may_stop(&self) -> bool {
        true
    }
    fn check_stop(&self, name: &str, offset: u64) -> Result<(), SourceError> {
        if self.ask(name) {
            return Err(SourceError::stopped(name, offset));
        }
        Ok(())
    }
    fn stopped(&self) -> bool {
        self.ask("")
    }
}

/// `bytes` under `name` as a browser `File` would be read (stating `read`), answering `cd`.
fn stopping<'a>(name: &str, bytes: &[u8], read: usize, cd: &'a Countdown) -> Hooked<'a, Countdown> {
    hooked(name, bytes, read, cd)
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

/// The trace read from `src` with fresh interners.
fn trace_of(src: &dyn Source) -> Result<Trace, Diagnostic> {
    read_trace(
        src,
        &mut Interner::new(),
        &mut Interner::new(),
        TraceOptions::default(),
        None,
    )
}

/// An input set holding `files` under `job/`.
fn job_set(files: &[(String, Vec<u8>)]) -> memlens::input::InputSet {
    let mut set = memlens::families::input_set();
    for (p, b) in files {
        set.add_bytes(&format!("job/{p}"), b.clone());
    }
    set
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
    let mut set = job_set(&files);
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
                let opener = HookedOpener {
                    inner: &set,
                    read,
                    hook: &cd,
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
        let src = stopping("trace_view.json", trace, whole, &cd);
        let t = trace_of(&src).unwrap();
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
        let src = stopping("operator_memory.csv", om, whole, &cd);
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
            let src = stopping(name, bytes, whole, &cd);
            let err = if name.ends_with(".json") {
                trace_of(&src).map(|_| ()).unwrap_err()
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
        let src = stopping("trace_view.json", trace, 256 << 20, &cd);
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
        let src = stopping("trace_view.json", trace, 256 << 20, &cd);
        // The stop is seen at the first question, not at the end of the whole read's scan.
        let err = trace_of(&src).map(|_| ()).unwrap_err();
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
    let mut set = job_set(&files);
    let mut view = memlens::profiler::view::JobView::open(&mut set);
    let cd = Countdown::new(3);
    let opener = HookedOpener {
        inner: &set,
        read: 16 << 20,
        hook: &cd,
    };
    assert_eq!(view.try_analyze(&opener), Err(Stopped));
    assert!(view.analysis().ranks.is_empty());
    let cd = Countdown::new(u64::MAX);
    let opener = HookedOpener {
        inner: &set,
        read: 16 << 20,
        hook: &cd,
    };
    assert_eq!(view.try_analyze(&opener), Ok(()));
    assert_eq!(view.analysis().ranks.len(), 2);
}

/// Runs `read` (a reader over sources answering a countdown) unstopped, then stopped at every
/// question k it asked: every k below the count ends in the stop error naming one of `files`
/// (name, length) and a byte of it, every k from the count on gives `plain` (the same reader's
/// output over bytes that cannot be stopped, which ask nothing). Returns the count.
fn stops_everywhere(
    files: &[(&str, usize)],
    plain: &str,
    read: &dyn Fn(&Countdown) -> Result<String, Diagnostic>,
) -> u64 {
    let name = files[0].0;
    let cd = Countdown::new(u64::MAX);
    let full = read(&cd).unwrap_or_else(|d| panic!("{name}: an unstopped load ends: {d}"));
    assert!(
        full == plain,
        "{name}: an unstopped load gives what the plain read gives"
    );
    let questions = cd.asked.get();
    assert!(questions > 0, "{name}: no stop question");
    for k in 0..questions + 2 {
        let cd = Countdown::new(k);
        match read(&cd) {
            Err(d) => {
                assert!(
                    k < questions,
                    "{name}: stopped at question {k} of {questions}: {d}"
                );
                let len = files.iter().find(|f| f.0 == d.file).map(|f| f.1);
                assert!(
                    d.message.contains(STOPPED) && len.is_some(),
                    "{name}: question {k} of {questions} ends with another error: {d}"
                );
                let at = d.byte.expect("the stop names where the reader was");
                assert!(
                    at <= len.unwrap_or(0) as u64,
                    "{name}: stopped at byte {at}: {d}"
                );
            }
            Ok(out) => {
                assert!(
                    k >= questions,
                    "{name}: a load stopped at question {k} of {questions} reported as complete"
                );
                assert!(out == plain, "{name}: question {k}: not the plain result");
            }
        }
    }
    questions
}

/// The SOMAS session's summary and first tensor page: what the page shows first of a plan.
fn somas_outputs(s: &mut memlens::somas::view::SomasSession) -> String {
    let ask = |s: &mut memlens::somas::view::SomasSession, v: serde_json::Value| {
        s.answer(&serde_json::from_value(v).unwrap()).unwrap()
    };
    let summary = ask(s, serde_json::json!({"method": "summary", "params": {}}));
    let info = ask(s, serde_json::json!({"method": "info", "params": {}}));
    format!("{summary}\n{info}")
}

/// A generated SOMAS plan of 12,000 nodes: its dump and task-info file. Builds rayon's global
/// pool with two threads where no test built it yet, for the SOMAS tests call the session from
/// this thread, outside that pool, as the threaded page's worker does (the two files then parse
/// side by side).
fn somas_plan() -> (Vec<u8>, Vec<u8>) {
    use memlens::somas::generate::{generate, Flavor, GenConfig};
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build_global();
    let g = generate(&GenConfig {
        flavor: Flavor::V24,
        nodes: 12_000,
        seed: 7,
        inject_conflicts: 2,
        task_info: true,
    });
    (g.dump, g.task_info.expect("a task-info file"))
}

#[test]
fn the_somas_parse_asks_every_mib_and_a_stop_at_any_question_ends_the_open() {
    use memlens::somas::view::SomasSession;
    let (dump, task) = somas_plan();
    assert!(dump.len() > 3 << 20, "a dump of {} bytes", dump.len());
    let mut set = memlens::families::input_set();
    set.add_bytes("plan/somas_tensor_offset_1.ir", dump.clone());
    set.add_bytes("plan/task_info_graph_1.ir", task.clone());
    let open = |files: &dyn memlens::input::FileOpener| {
        SomasSession::open(
            files,
            "plan/somas_tensor_offset_1.ir",
            Some("plan/task_info_graph_1.ir"),
            &mut |_, _, _| {},
            &|| 0.0,
        )
    };
    let plain = somas_outputs(&mut open(&set).unwrap());
    let stops = |cd: &Countdown| {
        let opener = HookedOpener {
            inner: &set,
            read: 16 << 20,
            hook: cd,
        };
        open(&opener).map(|mut s| somas_outputs(&mut s))
    };
    let files = [
        ("plan/somas_tensor_offset_1.ir", dump.len()),
        ("plan/task_info_graph_1.ir", task.len()),
    ];
    let mut in_turn = Vec::new();
    for threads in [1, 2] {
        pool(threads).install(|| {
            // Inside a pool the two files are parsed one after the other.
            assert!(!memlens::somas::view::parses_side_by_side());
            let questions = stops_everywhere(&files, &plain, &stops);
            // One a MiB of the tensor and node sections per thread, and the steps.
            let mib = dump.len() as u64 / STOP_CHECK_BYTES;
            assert!(
                questions > mib / threads as u64,
                "{questions} questions over {mib} MiB ({threads} threads)"
            );
            in_turn.push(questions);
        });
    }
    // From a thread outside the pool, as the threaded page's worker calls it: the task-info file
    // is parsed on the pool beside the dump, and its questions are answered by this thread (the
    // countdown is not thread-safe, as a browser File answers only on its own thread). A stop at
    // any question ends the open; and each parser asks exactly the questions it asks in turn, so
    // with a pool of two the count is the one of two threads above.
    assert!(
        memlens::somas::view::parses_side_by_side(),
        "a global pool of {} threads",
        rayon::current_num_threads()
    );
    let questions = stops_everywhere(&files, &plain, &stops);
    if rayon::current_num_threads() == 2 {
        assert_eq!(questions, in_turn[1], "questions side by side and in turn");
    }
    // Both files were asked.
    let cd = Countdown::new(u64::MAX);
    stops(&cd).unwrap();
    assert!(cd.asked_by("plan/task_info_graph_1.ir") > 0);
    assert!(cd.asked_by("plan/somas_tensor_offset_1.ir") > 0);
}

#[test]
fn a_bad_dump_beside_its_task_info_ends_the_open_with_the_dumps_error_side_by_side_or_in_turn() {
    use memlens::somas::view::SomasSession;
    let (mut dump, task) = somas_plan();
    // A dump with a NUL byte in its head: refused as binary before any line is parsed, while
    // the task-info file beside it is whole.
    dump[10] = 0;
    let mut set = memlens::families::input_set();
    set.add_bytes("plan/somas_tensor_offset_1.ir", dump);
    set.add_bytes("plan/task_info_graph_1.ir", task);
    // A countdown that never says stopped: the error is the dump's, not a stop.
    let open = || {
        let cd = Countdown::new(u64::MAX);
        let opener = HookedOpener {
            inner: &set,
            read: 16 << 20,
            hook: &cd,
        };
        SomasSession::open(
            &opener,
            "plan/somas_tensor_offset_1.ir",
            Some("plan/task_info_graph_1.ir"),
            &mut |_, _, _| {},
            &|| 0.0,
        )
        .err()
        .expect("a binary dump is refused")
    };
    assert!(
        memlens::somas::view::parses_side_by_side() || rayon::current_num_threads() < 2,
        "outside the pool"
    );
    let err = open();
    assert_eq!(err.file, "plan/somas_tensor_offset_1.ir", "{err:?}");
    assert!(err.message.contains("binary"), "{err:?}");
    // The same from inside a pool, where the two are parsed one after the other.
    pool(2).install(|| {
        assert!(!memlens::somas::view::parses_side_by_side());
        let err = open();
        assert_eq!(err.file, "plan/somas_tensor_offset_1.ir", "{err:?}");
        assert!(err.message.contains("binary"), "{err:?}");
    });
}

#[test]
fn the_snapshot_reader_asks_every_mib_and_a_stop_at_any_question_ends_the_read() {
    use memlens::snapshot::generate::{generate, GenConfig};
    use memlens::snapshot::view::SnapshotView;
    let mut bytes = Vec::new();
    generate(
        &GenConfig {
            target_bytes: 6 << 20,
            devices: 2,
            ..GenConfig::default()
        },
        &mut bytes,
    )
    .unwrap();
    assert!(bytes.len() > 4 << 20, "a pickle of {} bytes", bytes.len());
    let name = "snap.pickle";
    let plain = SnapshotView::open(&BytesSource::new(name, bytes.clone()))
        .unwrap()
        .summary_json();
    let questions = stops_everywhere(&[(name, bytes.len())], &plain, &|cd| {
        SnapshotView::open(&stopping(name, &bytes, 16 << 20, cd)).map(|v| v.summary_json())
    });
    let mib = bytes.len() as u64 / STOP_CHECK_BYTES;
    assert!(questions >= mib, "{questions} questions over {mib} MiB");
    // Past the read: one question before the analysis and one after it, and four inside each
    // device's analysis (between its steps), so that a stop need not wait for every device.
    let cd = Countdown::new(u64::MAX);
    memlens::snapshot::read(&stopping(name, &bytes, 16 << 20, &cd)).unwrap();
    let read = cd.asked.get();
    let devices = SnapshotView::open(&BytesSource::new(name, bytes.clone()))
        .unwrap()
        .analysis
        .devices
        .len() as u64;
    assert_eq!(devices, 2);
    assert_eq!(
        questions - read,
        2 + 4 * devices,
        "{questions} questions, {read} in the read"
    );
}

/// A generated job's db export: (path, bytes) of its files, the db built in a scratch folder.
#[cfg(feature = "db-writer")]
fn generated_db(spec: &GenSpec) -> Vec<(String, Vec<u8>)> {
    let scratch = std::env::temp_dir().join(format!("memlens-stop-db-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut out = Vec::new();
    memlens::profiler::generate::db::generate_db(spec, &scratch, &mut |p, b| {
        out.push((p.to_string(), b));
        Ok(())
    })
    .unwrap();
    let _ = std::fs::remove_dir_all(&scratch);
    out
}

#[cfg(feature = "db-writer")]
#[test]
fn the_db_reader_asks_every_mib_of_pages_and_a_stop_at_any_question_ends_the_read_and_the_job() {
    use memlens::profiler::db::read_db;
    let spec = GenSpec {
        ranks: 1,
        rows: 20_000,
        ..JOB
    };
    let files = generated_db(&spec);
    let (name, bytes) = files
        .iter()
        .find(|(p, _)| p.ends_with(".db"))
        .expect("a db export");
    assert!(bytes.len() > 3 << 20, "a db of {} bytes", bytes.len());
    let export = |src: &dyn memlens::source::Source| {
        read_db(src, None, &mut Interner::new(), &mut Interner::new(), None)
            .map(|x| format!("{x:?}"))
    };
    let plain = export(&BytesSource::new(name.as_str(), bytes.clone())).unwrap();
    assert!(plain.contains("operator_memory: Some"), "the db holds rows");
    let questions = stops_everywhere(&[(name, bytes.len())], &plain, &|cd| {
        export(&stopping(name, bytes, 16 << 20, cd))
    });
    // Every MiB of pages handed out (one read of 16 MiB covers the file; the reader touches
    // only the tables it needs, most of the file), besides one question after each of the six
    // table groups.
    let mib = bytes.len() as u64 / STOP_CHECK_BYTES;
    assert!(
        questions >= 6 + mib / 2,
        "{questions} questions over {mib} MiB"
    );

    // The whole job read from its db: stopped anywhere, the analysis ends with the stop.
    let mut set = job_set(&files);
    let job = discover_job(set.classify());
    assert_eq!(job.ranks.len(), 1);
    let want = outputs(
        &analyze_job(&set, &job, &AnalyzeOptions::default(), &mut |_| {}),
        &job,
    );
    assert!(want.0.contains("\"source\":\"db\""), "read from its db");
    let run = |stop_at: u64| {
        let cd = Countdown::new(stop_at);
        let opener = HookedOpener {
            inner: &set,
            read: 16 << 20,
            hook: &cd,
        };
        let got = try_analyze_job(&opener, &job, &AnalyzeOptions::default(), &mut |_| {});
        (got.map(|a| outputs(&a, &job)), cd.asked.get())
    };
    let (full, questions) = run(u64::MAX);
    assert!(
        full.as_ref() == Ok(&want),
        "an unstopped load reads the job"
    );
    for k in 0..questions + 2 {
        match run(k).0 {
            Err(Stopped) => assert!(k < questions, "stopped at {k} of {questions}"),
            Ok(out) => {
                assert!(
                    k >= questions,
                    "stopped at {k} of {questions}, reported complete"
                );
                assert!(out == want, "question {k}: not the plain job");
            }
        }
    }
}
