//! Every input the fuzzers (`node scripts/fuzz.mjs`) flagged, kept as a regression test: the
//! bytes (inline, or small files under `fixtures/regressions/`) go through the same reader and
//! the same checks as the fuzz target that found them. `docs/hardening.md` lists each finding,
//! its root cause and its fix.

use memlens::profiler::{operator_memory, Interner};
use memlens::source::BytesSource;
use std::path::Path;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/regressions")
            .join(name),
    )
    .unwrap()
}

/// operator_memory target, finding 1 (harness): a lone CR ends a CSV record without ending the
/// line, so two rows can share a line number — here the header ends with a CR, and the row after
/// it is on line 1 too. Rows are reported on the line they are on, with distinct byte offsets.
#[test]
fn operator_memory_lone_cr_rows_share_a_line_but_not_a_byte() {
    let data = fixture("operator_memory-lone-cr.csv");
    let src = BytesSource::new("om.csv", data.clone());
    let om = operator_memory::read_operator_memory(&src, &mut Interner::new(), None).unwrap();
    let lines = data.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let mut last = 1;
    for r in &om.rows {
        assert!(r.line >= last && r.line <= lines, "row on line {}", r.line);
        last = r.line;
    }
    for w in &om.warnings {
        assert_eq!(w.file, "om.csv");
        assert!(w.line.is_some_and(|l| l <= lines), "{w}");
    }
    // The same holds for the earlier shape: a CR in the middle of a data line.
    let text = "Name,Size(KB),Allocation Time(us)\na,1,2\rb,3,4\nc,5,6\n";
    let om = operator_memory::read_operator_memory(
        &BytesSource::new("om.csv", text.as_bytes().to_vec()),
        &mut Interner::new(),
        None,
    )
    .unwrap();
    let lines: Vec<u64> = om.rows.iter().map(|r| r.line).collect();
    assert_eq!(lines, [2, 2, 3]);
}

/// npu_module_mem target, finding 1 (harness): records end at CR too, so a file can hold more
/// rows than line feeds; every row is still read once, with its module and time.
#[test]
fn npu_module_mem_cr_separated_records_are_rows() {
    use memlens::profiler::module_mem::read_module_mem;
    let data = fixture("npu_module_mem-cr-records.csv");
    let mm = read_module_mem(&BytesSource::new("mm.csv", data.clone()), None).unwrap();
    let records = data.iter().filter(|&&b| b == b'\n' || b == b'\r').count() + 1;
    let points: usize = mm.modules.iter().map(|m| m.ts.len()).sum();
    assert!(
        points > 0 && points <= records,
        "{points} rows, {records} records"
    );
    for m in &mm.modules {
        assert_eq!(m.ts.len(), m.reserved.len());
    }
    for w in &mm.warnings {
        assert_eq!(w.file, "mm.csv");
    }
}

/// ascend_job target, finding 1 (product bug): rows of another file under operator_memory's
/// header (npu_module_mem's `GE,1736405443060000.000\t,74.0,NPU:0`) read as blocks of
/// 1.7 × 10^18 bytes; a few of them overflowed the unreleased-bytes sum (a panic with overflow
/// checks, a wrong figure without). Sizes over 1 PiB are now refused per row with a warning, and
/// every sum of sizes saturates.
#[test]
fn ascend_job_absurd_sizes_are_refused_not_summed() {
    use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
    use memlens::profiler::discover_job;
    use memlens::profiler::operator_memory::MAX_BLOCK_BYTES;
    use memlens::profiler::trace::TraceOptions;
    const RUN: &str = "job/actor/host_1_20250101000000000_ascend_pt";
    const FILES: [&str; 4] = [
        "ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "ASCEND_PROFILER_OUTPUT/trace_view.json",
        "ASCEND_PROFILER_OUTPUT/memory_record.csv",
        "ASCEND_PROFILER_OUTPUT/npu_module_mem.csv",
    ];
    let data = fixture("ascend_job-size-overflow.bin");
    let mut set = memlens::families::input_set();
    set.add_bytes(&format!("{RUN}/profiler_info_3.json"), b"{}".to_vec());
    for (part, name) in data.split(|&b| b == 0xFF).zip(FILES) {
        set.add_bytes(&format!("{RUN}/{name}"), part.to_vec());
    }
    let job = discover_job(set.classify());
    let opts = AnalyzeOptions {
        trace: TraceOptions {
            batch: 97,
            pieces: 3,
        },
    };
    let a = analyze_job(&set, &job, &opts, &mut |_| {});
    let r = &a.ranks[0];
    assert!(r.rows.iter().all(|row| row.size <= MAX_BLOCK_BYTES));
    let unreleased: u128 = r
        .rows
        .iter()
        .filter(|row| row.release_ns().is_none() && !row.negative)
        .map(|row| u128::from(row.size))
        .sum();
    assert_eq!(u128::from(r.summary.unreleased_bytes), unreleased);
    let w = a
        .warnings
        .iter()
        .chain(&r.warnings)
        .find(|w| w.message.contains("at most 1 PiB"))
        .expect("the absurd sizes are reported");
    assert!(w.file.ends_with("operator_memory.csv"), "{w}");
    assert!(w.message.contains("1736405443060000.000"), "{w}");

    // The bound itself: 1 PiB is a size, one KB more is not.
    let text = format!(
        "Name,Size(KB),Allocation Time(us)\na,{},2\nb,{},3\n",
        MAX_BLOCK_BYTES / 1024,
        MAX_BLOCK_BYTES / 1024 + 1
    );
    let om = operator_memory::read_operator_memory(
        &BytesSource::new("om.csv", text.into_bytes()),
        &mut Interner::new(),
        None,
    )
    .unwrap();
    assert_eq!(om.rows.len(), 1);
    assert_eq!(om.rows[0].size, MAX_BLOCK_BYTES);
    assert_eq!(om.warnings.len(), 1);
    assert_eq!(om.warnings[0].line, Some(3));
}

/// profiler_db target, finding 1: a database whose MEMORY_RECORD rows and OP_MEMORY rows cover
/// time ranges that do not overlap. The "do not overlap" warning named the run's
/// `memory_record.csv` — a file a db run does not have — so it named no file at all and spoke of
/// text files. It must name the db it read and its tables.
#[test]
fn profiler_db_disjoint_records_name_the_database() {
    use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
    use memlens::profiler::discover_job;
    const RUN: &str = "job/actor/host_1_20250101000000000_ascend_pt";
    const DB: &str = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_3.db";
    let mut set = memlens::families::input_set();
    set.add_bytes(&format!("{RUN}/profiler_info_3.json"), b"{}".to_vec());
    set.add_bytes(
        &format!("{RUN}/{DB}"),
        fixture("profiler_db-disjoint-records.db"),
    );
    let job = discover_job(set.classify());
    let a = analyze_job(&set, &job, &AnalyzeOptions::default(), &mut |_| {});
    let w = a
        .warnings
        .iter()
        .find(|w| w.message.contains("do not overlap"))
        .expect("the disjoint records are reported");
    assert_eq!(w.file, format!("{RUN}/{DB}"), "{w}");
    assert!(w.message.contains("MEMORY_RECORD"), "{w}");
    assert!(w.message.contains("OP_MEMORY"), "{w}");
    assert!(!w.message.contains(".csv"), "{w}");
    for w in &a.warnings {
        assert!(!w.file.is_empty(), "every warning names a file: {w}");
    }
}

/// trace target, round 29 (its warnings compared whatever the chunking, damaged files too): a
/// kept event's note (a name that is not UTF-8, its string at byte 38) and garbage after it (byte 66). Read
/// whole, one piece listed its damage first and its notes after; in batches that part them, each
/// came with its own batch, in byte order. The fuzzed input had the same shape (a call stack
/// that was not UTF-8, then a config object where an event belongs). Warnings come in byte order
/// whatever the batch size.
#[test]
fn trace_notes_and_damage_come_in_byte_order_whatever_the_batch() {
    use memlens::profiler::trace::{read_trace, TraceOptions};
    let text: &[u8] = b"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\xff\", \"ts\": \"1\", \
        \"dur\": 1}, zz, {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"ts\": \"2\", \"dur\": 1}]";
    let places = |batch: usize| {
        let src = BytesSource::new("trace_view.json", text.to_vec());
        let opts = TraceOptions { batch, pieces: 2 };
        let t = read_trace(&src, &mut Interner::new(), &mut Interner::new(), opts, None).unwrap();
        assert_eq!(t.ops.len(), 2, "batch {batch}");
        t.warnings
            .iter()
            .map(|w| {
                (
                    w.byte,
                    w.message.split(',').next().unwrap_or("").to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let want = vec![
        (
            Some(38),
            "a string that is not valid UTF-8 or has a bad escape; kept with the bad bytes shown \
             as U+FFFD"
                .to_string(),
        ),
        (
            Some(66),
            "invalid JSON: expected '{' (an event) or ']'".to_string(),
        ),
    ];
    for batch in (1..=text.len() + 1).chain([1 << 20]) {
        assert_eq!(places(batch), want, "batch {batch}");
    }
}

/// trace target, finding of the lead's run after round 29: two cpu_op events whose call stacks
/// are the same bytes, invalid UTF-8 included, got one "not valid UTF-8" warning read whole and
/// one per piece read in pieces (each piece has its own cache of the stacks it decoded, and the
/// warning went with a stack's first decoding). Every event holding such a stack is warned of, at
/// its stack's first byte, as every event with a bad name is, whatever the batch and the pieces.
/// The events stand 600 bytes apart so that the small batches put them in different pieces.
#[test]
fn trace_a_repeated_bad_stack_is_warned_at_each_event_whatever_the_batch() {
    use memlens::profiler::trace::{read_trace, TraceOptions};
    let event = |name: &str| {
        let mut e = format!(
            "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{name}\", \"ts\": \"1\", \"dur\": 1, \
             \"args\": {{\"Call stack\": \""
        )
        .into_bytes();
        e.extend_from_slice(b"/a/main.py(3): f\xff;<string>(1): <module>\"}}");
        e
    };
    let filler = format!(
        "{{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"{}\", \"ts\": 2}}",
        "x".repeat(600)
    );
    let mut text = b"[".to_vec();
    text.extend(event("a"));
    text.extend(b", ");
    text.extend(filler.as_bytes());
    text.extend(b", ");
    text.extend(event("b"));
    text.extend(b"]");
    // Each stack's value starts at its opening quote.
    let key = b"\"Call stack\": ";
    let stacks: Vec<u64> = (0..text.len() - key.len())
        .filter(|&i| &text[i..i + key.len()] == key)
        .map(|i| (i + key.len()) as u64)
        .collect();
    assert_eq!(stacks.len(), 2);
    let bad =
        "a string that is not valid UTF-8 or has a bad escape; kept with the bad bytes shown \
               as U+FFFD";
    for pieces in [1, 2, 3] {
        for batch in (1..=text.len() + 1).chain([1 << 20]) {
            let src = BytesSource::new("trace_view.json", text.clone());
            let (mut names, mut interned) = (Interner::new(), Interner::new());
            let opts = TraceOptions { batch, pieces };
            let t = read_trace(&src, &mut names, &mut interned, opts, None).unwrap();
            let got: Vec<_> = t
                .warnings
                .iter()
                .map(|w| (w.byte, w.message.as_str()))
                .collect();
            let want: Vec<_> = stacks.iter().map(|&at| (Some(at), bad)).collect();
            assert_eq!(got, want, "batch {batch}, {pieces} pieces");
            let kept: Vec<_> = t.ops.stack.iter().map(|&s| interned.get(s)).collect();
            let stack = "/a/main.py(3): f\u{FFFD};<string>(1): <module>";
            assert_eq!(kept, [stack, stack], "batch {batch}, {pieces} pieces");
        }
    }
}
