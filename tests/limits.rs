//! Bounded memory (issue 7, part 3): hostile inputs of hundreds of megabytes, made on demand by
//! a generating source (never held by the test), go through the readers while the peak resident
//! set size is measured. Each reader must say what it refused or skipped and stay under the
//! bound documented in `docs/hardening.md` ("Limits"). Sizes, not times, are asserted.

mod common;

use common::{peak_growth, rss_lock, GenSource, Part};
use memlens::families::RECOGNIZERS;
use memlens::input::classify::{self, Entry};
use memlens::profiler::operator_memory::read_operator_memory;
use memlens::profiler::run_folder::PROFILER_JSON_LIMIT;
use memlens::profiler::trace::{read_trace, TraceOptions, MAX_EVENT_BYTES};
use memlens::profiler::Interner;
use memlens::source::Source;

const MIB: u64 = 1 << 20;

/// Slack for allocator rounding, thread stacks and test bookkeeping.
const SLACK: u64 = 8 * MIB;

fn trace_bound(opts: TraceOptions) -> u64 {
    // The buffer: the tail of a cut event (at most MAX_EVENT_BYTES before it is skipped) plus
    // the batch that made it exceed, plus one batch; twice that while the buffer grows (the
    // allocator may copy it).
    2 * (MAX_EVENT_BYTES as u64 + 2 * opts.batch as u64)
}

#[test]
fn trace_event_with_a_100_mb_string_is_skipped_within_the_bound() {
    let _g = rss_lock();
    let ev = br#"{"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": "1.000", "dur": 1}"#;
    let mut head = b"[".to_vec();
    head.extend_from_slice(ev);
    head.extend_from_slice(
        br#", {"ph": "X", "cat": "cpu_op", "name": "big", "ts": 2, "args": {"Call stack": ""#,
    );
    let at = head.windows(6).rposition(|w| w == br#"{"ph":"#).unwrap();
    let mut tail = br#""}}, "#.to_vec();
    tail.extend_from_slice(ev);
    tail.push(b']');
    let src = GenSource::new(
        "trace_view.json",
        vec![
            Part::Bytes(head),
            Part::Run(b'a', 100_000_000),
            Part::Bytes(tail),
        ],
    );
    let opts = TraceOptions::default();
    let (t, grew) = peak_growth(|| {
        let (mut n, mut s) = (Interner::new(), Interner::new());
        read_trace(&src, &mut n, &mut s, opts, None).unwrap()
    });
    assert_eq!(t.ops.len(), 2);
    assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
    assert_eq!(t.warnings[0].byte, Some(at as u64));
    assert!(
        t.warnings[0]
            .message
            .contains("more than the 16777216 bytes one trace event may have"),
        "{}",
        t.warnings[0]
    );
    let bound = trace_bound(opts) + SLACK;
    assert!(
        grew < bound,
        "peak RSS grew by {} MiB, bound {} MiB",
        grew / MIB,
        bound / MIB
    );
}

#[test]
fn a_128_mb_trace_is_streamed() {
    // 128 MB of events the reader does not keep: memory stays at the batches, not the file.
    let _g = rss_lock();
    let ev = br#"{"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 1, "ts": "1.000", "dur": 1, "args": {"Python id": 7}}, "#;
    let n = 128 * MIB / ev.len() as u64;
    let src = GenSource::new(
        "trace_view.json",
        vec![
            Part::Bytes(b"[".to_vec()),
            Part::Repeat(ev.to_vec(), n),
            Part::Bytes(br#"{"cat": "x"}]"#.to_vec()),
        ],
    );
    assert!(src.len() > 120 * MIB);
    let opts = TraceOptions::default();
    let (t, grew) = peak_growth(|| {
        let (mut n, mut s) = (Interner::new(), Interner::new());
        read_trace(&src, &mut n, &mut s, opts, None).unwrap()
    });
    assert_eq!(t.events, n + 1);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    let bound = 2 * opts.batch as u64 + SLACK;
    assert!(
        grew < bound,
        "peak RSS grew by {} MiB reading {} MiB, bound {} MiB",
        grew / MIB,
        src.len() / MIB,
        bound / MIB
    );
}

#[test]
fn csv_row_of_100_mb_is_skipped_within_the_bound() {
    let _g = rss_lock();
    let header = b"Name,Size(KB),Allocation Time(us),Release Time(us)\naten::add,4.0,1000.000\t,2000.000\t\naten::x,".to_vec();
    let src = GenSource::new(
        "operator_memory.csv",
        vec![
            Part::Bytes(header),
            Part::Run(b'9', 100_000_000),
            Part::Bytes(b",1500.0,1600.0\naten::mul,8.0,3000.000\t,4000.000\t\n".to_vec()),
        ],
    );
    let (om, grew) = peak_growth(|| {
        let mut s = Interner::new();
        read_operator_memory(&src, &mut s, None).unwrap()
    });
    assert_eq!(om.rows.len(), 2);
    assert_eq!(
        om.warnings
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>(),
        [
            "operator_memory.csv:3 (byte 85): warning: row longer than 1048576 bytes (the limit \
          for one row); skipped to the end of line 3"
        ]
    );
    // Two 1 MiB chunks, the row (at most 1 MiB, plus the csv crate's 8 KiB read-ahead) and the
    // csv crate's field buffers for it.
    let bound = 5 * MIB + SLACK;
    assert!(
        grew < bound,
        "peak RSS grew by {} MiB, bound {} MiB",
        grew / MIB,
        bound / MIB
    );
}

#[test]
fn a_64_mb_csv_of_bad_rows_is_streamed() {
    // Every row is skipped (bad size): the warnings are one counted line, memory stays at the
    // chunks.
    let _g = rss_lock();
    let row = b"aten::add,notanumber,1000.000\t,2000.000\t\n";
    let n = 64 * MIB / row.len() as u64;
    let src = GenSource::new(
        "operator_memory.csv",
        vec![
            Part::Bytes(b"Name,Size(KB),Allocation Time(us),Release Time(us)\n".to_vec()),
            Part::Repeat(row.to_vec(), n),
        ],
    );
    let (om, grew) = peak_growth(|| {
        let mut s = Interner::new();
        read_operator_memory(&src, &mut s, None).unwrap()
    });
    assert!(om.rows.is_empty());
    assert_eq!(om.warnings.len(), 1);
    assert_eq!(om.warnings[0].count, n);
    let bound = 3 * MIB + SLACK;
    assert!(
        grew < bound,
        "peak RSS grew by {} MiB, bound {} MiB",
        grew / MIB,
        bound / MIB
    );
}

#[test]
fn somas_line_of_100_mb_is_refused_holding_only_the_file() {
    // SOMAS dumps are read whole (their bound is the file size, MAX_DUMP_BYTES at most), then
    // the long line is refused before any parsing.
    let _g = rss_lock();
    let toy = std::fs::read(common::fixture("somas/Ascend_somas_tensor_offset_1.ir")).unwrap();
    let i = toy.windows(10).position(|w| w == b"Conv2D-op2").unwrap();
    let src = GenSource::new(
        "Ascend_somas_tensor_offset_1.ir",
        vec![
            Part::Bytes(toy[..i].to_vec()),
            Part::Run(b'x', 100_000_000),
            Part::Bytes(toy[i..].to_vec()),
        ],
    );
    let (r, grew) = peak_growth(|| memlens::somas::load_dump(&src, None).map(|_| ()));
    let e = r.unwrap_err();
    assert!(e.message.starts_with("line of 100000"), "{e}");
    let bound = src.len() + SLACK;
    assert!(
        grew < bound,
        "peak RSS grew by {} MiB, bound {} MiB",
        grew / MIB,
        bound / MIB
    );
}

#[test]
fn a_huge_profiler_json_is_read_only_up_to_its_limit() {
    // A 1 GiB profiler_info.json: classification reads its first 4 MiB and says it is too large.
    let _g = rss_lock();
    let src = GenSource::new(
        "job/r_ascend_pt/profiler_info.json",
        vec![
            Part::Bytes(b"{\"x\": \"".to_vec()),
            Part::Run(b' ', 1 << 30),
        ],
    );
    let entry = Entry {
        path: src.name().to_string(),
        size: src.len(),
    };
    let (inv, grew) = peak_growth(|| {
        let want = classify::head_requests(std::slice::from_ref(&entry), RECOGNIZERS)[0];
        let head = classify::read_head(&src, want);
        classify::classify(std::slice::from_ref(&entry), &[head], RECOGNIZERS)
    });
    let text = serde_json::to_string(&inv).unwrap();
    assert!(
        text.contains(
            "1073741831 bytes, more than the 4194304 bytes a profiler JSON file may have"
        ),
        "{text}"
    );
    let bound = PROFILER_JSON_LIMIT as u64 + SLACK;
    assert!(
        grew < bound,
        "peak RSS grew by {} MiB, bound {} MiB",
        grew / MIB,
        bound / MIB
    );
}

#[test]
fn archive_bombs_are_refused_without_inflating() {
    let _g = rss_lock();
    // A .tar.gz member declaring 4 GiB (archive ~4 MB), and a zip member that declares 100 bytes
    // but inflates to 256 MiB.
    let gz = common::tar_gz_zeros(
        "r_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        4 << 30,
    );
    let lie = common::zip_bytes(&[(
        "r_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        8,
        100,
        0,
        common::deflate_zeros(256 << 20),
    )]);
    let archives = gz.len() as u64 + lie.len() as u64;
    let (set, grew) = peak_growth(|| {
        let mut set = memlens::families::input_set();
        set.add_bytes("bomb.tar.gz", gz);
        set.add_bytes("lie.zip", lie);
        set.classify();
        set
    });
    let msgs: Vec<String> = set.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(
        msgs[0].contains("refused as a possible zip bomb"),
        "{msgs:?}"
    );
    assert!(
        msgs[1].contains("inflates beyond its declared size of 100 bytes"),
        "{msgs:?}"
    );
    // The archives themselves (moved into the set) and the inflater's buffers.
    let bound = archives + SLACK;
    assert!(
        grew < bound,
        "peak RSS grew by {} MiB, bound {} MiB",
        grew / MIB,
        bound / MIB
    );
}

#[test]
fn profiler_json_heads_are_capped() {
    let _g = rss_lock();
    // What classification asks of a profiler JSON file is its size limit, never more.
    let e = Entry {
        path: "r_ascend_pt/profiler_info_3.json".into(),
        size: 10 << 30,
    };
    assert_eq!(
        classify::head_requests(&[e], RECOGNIZERS),
        [PROFILER_JSON_LIMIT]
    );
}

#[test]
fn an_oversized_event_is_skipped_whatever_the_batch() {
    let _g = rss_lock(); // allocates 20 MB: not while another test measures
                         // 20 MB: complete inside one large batch, or streamed through small ones — the same event
                         // is skipped with the same warning at the same byte.
    let ev = r#"{"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": "1.000", "dur": 1}"#;
    let text = format!(
        r#"[{ev}, {{"ph": "X", "cat": "cpu_op", "name": "{}", "ts": 2}}, {ev}]"#,
        "n".repeat(20 << 20)
    );
    let src = memlens::source::BytesSource::new("t.json", text.into_bytes());
    let mut seen = Vec::new();
    for batch in [64 << 20, 8 << 20, 4 << 20] {
        let (mut n, mut s) = (Interner::new(), Interner::new());
        let t = read_trace(
            &src,
            &mut n,
            &mut s,
            TraceOptions { batch, pieces: 3 },
            None,
        )
        .unwrap();
        assert_eq!((t.ops.len(), t.events), (2, 3), "batch {batch}");
        let w: Vec<String> = t.warnings.iter().map(|w| w.to_string()).collect();
        seen.push(w);
    }
    assert_eq!(
        seen[0],
        [format!(
            "t.json (byte {}): warning: event of {} bytes, more than the 16777216 bytes one trace \
             event may have; skipped",
            ev.len() + 3,
            (20 << 20) + 49
        )]
    );
    assert!(seen.iter().all(|w| *w == seen[0]), "{seen:?}");
}

#[test]
fn a_too_long_last_row_without_a_line_end() {
    // Skipped to the end of the file; the message names its own line.
    let _g = rss_lock();
    let text = format!(
        "Name,Size(KB),Allocation Time(us)\na,1,2\nb,{}",
        "9".repeat(2 << 20)
    );
    let src = memlens::source::BytesSource::new("om.csv", text.into_bytes());
    let om = read_operator_memory(&src, &mut Interner::new(), None).unwrap();
    assert_eq!(om.rows.len(), 1);
    let w: Vec<String> = om.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        w,
        [
            "om.csv:3 (byte 40): warning: row longer than 1048576 bytes (the limit for one row); \
          skipped to the end of line 3"
        ]
    );
}
