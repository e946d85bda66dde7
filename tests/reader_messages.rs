//! What the readers say of broken input: a file cut inside its header line is an error naming the
//! byte where it ends, and input bytes quoted into a message read the same in every reader
//! (bounded, control and non-UTF-8 bytes escaped as `\xNN`, the bytes left out counted). The
//! expected texts are written out here by hand from the bytes given.

use memlens::profiler::memory_record::read_memory_record;
use memlens::profiler::module_mem::read_module_mem;
use memlens::profiler::operator_memory::read_operator_memory;
use memlens::profiler::Interner;
use memlens::source::BytesSource;
use std::path::Path;

fn real(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/torch_npu/msinsight-level0/text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT")
        .join(name);
    std::fs::read(p).unwrap()
}

/// The error (or the warnings' texts, if it read) of each CSV reader on `bytes`.
fn read_csv(reader: &str, bytes: &[u8]) -> Result<Vec<String>, memlens::diag::Diagnostic> {
    let src = BytesSource::new(reader, bytes.to_vec());
    let texts = |w: &[memlens::diag::Diagnostic]| w.iter().map(|d| d.to_string()).collect();
    match reader {
        "operator_memory.csv" => {
            read_operator_memory(&src, &mut Interner::new(), None).map(|r| texts(&r.warnings))
        }
        "memory_record.csv" => read_memory_record(&src, None).map(|r| texts(&r.warnings)),
        _ => read_module_mem(&src, None).map(|r| texts(&r.warnings)),
    }
}

const CSVS: [&str; 3] = [
    "operator_memory.csv",
    "memory_record.csv",
    "npu_module_mem.csv",
];

#[test]
fn a_csv_cut_inside_its_header_line_is_an_error_at_the_byte_where_it_ends() {
    // The audit's case: operator_memory.csv cut inside its last column's name. The old reader
    // took "Device T" for a column it does not need and read 0 rows without a word.
    let om = real("operator_memory.csv");
    let cut = om.windows(8).position(|w| w == b"Device T").unwrap() + 8;
    let e = read_csv("operator_memory.csv", &om[..cut]).unwrap_err();
    let header = std::str::from_utf8(&om[..cut]).unwrap();
    assert!(header.starts_with("Name,Size(KB),Allocation Time(us)"));
    assert_eq!(header.split(',').count(), 15);
    assert_eq!(
        e.to_string(),
        format!(
            "operator_memory.csv:1 (byte {cut}): error: the file ends inside its header \
             line, at byte {cut}, in column 15, which reads \"Device T\": the file was cut; \
             expected the header line, a line end, then the data rows"
        )
    );
    // Every reader, cut after every byte of its header line: an error that says where the file
    // ends (with the missing column first, when the cut took one the reader needs).
    for name in CSVS {
        let bytes = real(name);
        let end = bytes
            .iter()
            .position(|&b| b == b'\r' || b == b'\n')
            .unwrap();
        let line_end = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
        for cut in 1..=end {
            let e = read_csv(name, &bytes[..cut]).expect_err(&format!("{name} cut at {cut}"));
            assert_eq!(e.file, name);
            assert_eq!(e.line, Some(1), "{e}");
            assert!(
                e.message
                    .contains(&format!("ends inside this header line, at byte {cut}"))
                    || (e.byte == Some(cut as u64)
                        && e.message
                            .starts_with("the file ends inside its header line")),
                "{name} cut at {cut}: {e}"
            );
        }
        // The header line with its line end and no row is an empty table, as before.
        assert_eq!(
            read_csv(name, &bytes[..line_end]).map(|w| w.len()).ok(),
            Some(0)
        );
        // A cut inside a data row that takes fields away is warned (a short row), as before.
        let second = line_end + bytes[line_end..].iter().position(|&b| b == b'\n').unwrap() + 1;
        let third_row = &bytes[second..];
        let comma = third_row.iter().position(|&b| b == b',').unwrap();
        let w = read_csv(name, &bytes[..second + comma + 2]).unwrap();
        assert!(
            w.iter().any(|t| t.contains(&format!("{name}:3 (byte "))
                && t.contains("the header has")
                && t.contains("missing fields read as empty")),
            "{name}: {w:?}"
        );
    }
}

#[test]
fn a_csv_header_of_binary_noise_is_quoted_escaped_and_bounded() {
    // A header of control codes, bytes that are not UTF-8 and a kilobyte of 0xfe: the old reader
    // wrote ~200 replacement characters and the terminal codes as they were.
    let mut bytes = b"Comp\xffonent\x01,Time\x1b[31m".to_vec();
    bytes.extend([0xfe; 1000]);
    bytes.extend(b"\n1,2\n");
    // 30 characters for the first 21 bytes, then 42 of the 0xfe (4 characters each) fit in 200.
    let quoted = format!(
        "\"Comp\\xffonent\\x01,Time\\x1b[31m{}\"… (958 more bytes)",
        "\\xfe".repeat(42)
    );
    let e = read_csv("memory_record.csv", &bytes).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "memory_record.csv:1 (byte 0): error: not a memory_record.csv header: expected \
             Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),… (found: {quoted})"
        )
    );
    for name in ["operator_memory.csv", "npu_module_mem.csv"] {
        let e = read_csv(name, &bytes).unwrap_err();
        assert!(e.message.contains(&quoted), "{name}: {e}");
    }
}

#[test]
fn a_csv_field_of_binary_noise_is_quoted_the_same_way() {
    let om = real("operator_memory.csv");
    let end = om.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut bytes = om[..end].to_vec();
    // A size that is not a number: escape codes and a byte that is not UTF-8.
    bytes.extend(b"aten::add,\x1b[2J\x80,1736405443879844.900,,,,,1.0,2.0,1.0,,,,1,NPU:0\r\n");
    let w = read_csv("operator_memory.csv", &bytes).unwrap();
    assert!(
        w.iter()
            .any(|t| t.contains(r#"found "\x1b[2J\x80""#)
                && t.contains("operator_memory.csv:2 (byte ")),
        "{w:?}"
    );
}

#[test]
fn a_somas_line_and_a_pickle_name_are_quoted_the_same_way() {
    let e = memlens::somas::parse_dump("d.ir", b"\x1b]0;title\x07 \xff\xfeop\tx\nmore\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(r#"(first line: "\x1b]0;title\x07 \xff\xfeop\tx")"#),
        "{e}"
    );
    // GLOBAL naming a module whose name holds a terminal code.
    let global = b"\x80\x02cos\x1b[2J\nsystem\nq\x00.";
    let e = memlens::snapshot::read(&BytesSource::new("s.pickle", global.to_vec()))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains(r#"naming "os\x1b[2J.system""#), "{e}");
}

/// The warnings' (or the error's) texts of the trace reader on `bytes`, read in batches of
/// `batch` bytes.
fn read_trace_texts(bytes: &[u8], batch: usize) -> Vec<String> {
    use memlens::profiler::trace::{read_trace, TraceOptions};
    let src = BytesSource::new("trace_view.json", bytes.to_vec());
    let opts = TraceOptions { batch, pieces: 2 };
    match read_trace(&src, &mut Interner::new(), &mut Interner::new(), opts, None) {
        Ok(t) => t.warnings.iter().map(|d| d.to_string()).collect(),
        Err(e) => vec![e.to_string()],
    }
}

/// Asserts that the trace reader gives `want` (warnings' or the error's texts) on `bytes` read in
/// batches of every size from 1 byte to the whole file and beyond.
fn trace_texts_whatever_the_batch<S: AsRef<str>>(bytes: &[u8], want: &[S]) {
    let want: Vec<&str> = want.iter().map(AsRef::as_ref).collect();
    for batch in (1..=bytes.len() + 1).chain([1 << 20]) {
        assert_eq!(read_trace_texts(bytes, batch), want, "batch {batch}");
    }
}

#[test]
fn trace_damage_shows_what_was_found_the_same_whatever_the_batch() {
    // One line, as torch_npu writes it: the old reader said only "expected ':' after a member
    // name" at byte 84, which a user cannot find in a line of megabytes.
    let good = r#"{"ph": "X", "cat": "cpu_op", "name": "a", "ts": "1.0", "dur": 1}"#;
    let text = format!(
        r#"[{good}, {{"ph": "X", "cat": "cpu_op", "ts" {{"oops": 1}}, "dur": 1}}, {good}]"#
    );
    assert_eq!(&text[96..102], "\"ts\" {");
    // The 32 bytes from the damage, then the 57 of the 190 that follow them (the old reader
    // ended the quote there as if the file did).
    let want = [
        "trace_view.json (byte 101): warning: invalid JSON: expected ':' after a member name, \
         found \"{\\\"oops\\\": 1}, \\\"dur\\\": 1}, {\\\"ph\\\": \\\"\"… (57 more bytes); skipped \
         to the next event",
    ];
    trace_texts_whatever_the_batch(text.as_bytes(), &want);
    // Garbage between events, binary and a terminal code: escaped, at most 32 bytes of it (4 +
    // 2 + 26), then the 74 z, ", " and the event and ']' after them: 141 more bytes.
    let text = format!("[{good}, \x1b[2J\u{ff}{}, {good}]", "z".repeat(100));
    for batch in [200, 1 << 20] {
        assert_eq!(
            read_trace_texts(text.as_bytes(), batch),
            [format!(
                "trace_view.json (byte 67): warning: invalid JSON: expected '{{' (an event) or \
                 ']', found \"\\x1b[2J\u{ff}{}\"… (141 more bytes); skipped to the next event",
                "z".repeat(26)
            )],
            "batch {batch}"
        );
    }
    // Damage less than 32 bytes before the file's end: the quote is the rest of the file, and
    // says nothing more follows.
    let text = format!(r#"[{good}, {{"ph": "X", "cat": "cpu_op", "ts" 1}}]"#);
    assert_eq!(
        read_trace_texts(text.as_bytes(), 1 << 20),
        [
            "trace_view.json (byte 101): warning: invalid JSON: expected ':' after a member name, \
          found \"1}]\"; skipped to the next event"
        ]
    );
}

#[test]
fn trace_damage_longer_than_a_batch_is_one_warning_whatever_the_batch() {
    let good = r#"{"ph": "X", "cat": "cpu_op", "name": "a", "ts": "1.0", "dur": 1}"#;
    // 150 bytes of garbage between two events, from byte 67: the old reader warned again at
    // the start of every batch the garbage ran into (3 warnings in 40-byte batches, 2 in
    // 100-byte ones). 284 bytes, so 185 follow the 32 quoted.
    let text = format!("[{good}, {}, {good}]", "x".repeat(150));
    let want = [format!(
        "trace_view.json (byte 67): warning: invalid JSON: expected '{{' (an event) or ']', \
         found \"{}\"… (185 more bytes); skipped to the next event",
        "x".repeat(32)
    )];
    trace_texts_whatever_the_batch(text.as_bytes(), &want);
    // Damage inside an event whose rest (a 200-byte string) runs past the batch end: the old
    // reader went on at the next batch inside the string and called it garbage between events.
    // The `1` at byte 101 stands where the `:` after "ts" belongs; 379 bytes, 246 after the
    // quote.
    let text = format!(
        r#"[{good}, {{"ph": "X", "cat": "cpu_op", "ts" 1, "s": "{}"}}, {good}]"#,
        "y".repeat(200)
    );
    let want = [format!(
        "trace_view.json (byte 101): warning: invalid JSON: expected ':' after a member name, \
         found \"1, \\\"s\\\": \\\"{}\"… (246 more bytes); skipped to the next event",
        "y".repeat(23)
    )];
    trace_texts_whatever_the_batch(text.as_bytes(), &want);
}

#[test]
fn damage_in_the_last_event_is_all_that_is_said_of_a_closed_array() {
    // The skip after the damage ran past the closing `]` (no event follows it), and the old
    // reader added "the array is not closed with ']' (truncated file?)" at the file's end.
    let good = r#"{"ph": "X", "cat": "cpu_op", "name": "a", "ts": "1.0", "dur": 1}"#;
    let text = format!(
        "[{good}, {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"ts\" 1, \"s\": \"{}\"}}]\n",
        "y".repeat(100)
    );
    // 214 bytes; the `1` at byte 101.
    let want = [format!(
        "trace_view.json (byte 101): warning: invalid JSON: expected ':' after a member name, \
         found \"1, \\\"s\\\": \\\"{}\"… (81 more bytes); skipped to the next event",
        "y".repeat(23)
    )];
    trace_texts_whatever_the_batch(text.as_bytes(), &want);
    // Garbage after the last event, up to the `]`: the same.
    let text = format!("[{good}, zz zz]");
    trace_texts_whatever_the_batch(
        text.as_bytes(),
        &[
            "trace_view.json (byte 67): warning: invalid JSON: expected '{' (an event) or ']', \
              found \"zz zz]\"; skipped to the next event",
        ],
    );
    // A file that does end without its `]` after the damage still says so.
    let text = format!("[{good}, {{\"cat\": \"cpu_op\", \"ts\" 1, \"dur\": 2}}\n");
    assert_eq!(
        read_trace_texts(text.as_bytes(), 1 << 20),
        [
            "trace_view.json (byte 90): warning: invalid JSON: expected ':' after a member name, \
             found \"1, \\\"dur\\\": 2}\\n\"; skipped to the next event",
            "trace_view.json (byte 103): warning: the array is not closed with ']' (truncated \
             file?)"
        ]
    );
}

#[test]
fn damage_in_an_event_the_reader_skips_is_not_looked_for_whatever_the_batch() {
    // A damaged event of no kept category (the `1` where the `:` after "ts" belongs), followed
    // by a kept one: the old reader parsed it, and reported its damage, only when the kept
    // category after it fell within 256 bytes of its start in the same batch (read whole: one
    // warning at byte 84; in batches of 1 to 31 bytes: none, of 32: one).
    let good = r#"{"ph": "X", "cat": "cpu_op", "name": "a", "ts": "1.0", "dur": 1}"#;
    let text = format!(
        r#"[{good}, {{"ph": "X", "ts" 1, "s": "{}"}}, {good}]"#,
        "y".repeat(100)
    );
    trace_texts_whatever_the_batch::<&str>(text.as_bytes(), &[]);
}

#[test]
fn a_trace_of_the_wrong_type_quotes_its_start_and_a_bad_ts_its_value() {
    // The old reader: "found 'P'".
    let zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00rest of a zip archive, more than 32 bytes";
    assert_eq!(
        read_trace_texts(zip, 1 << 20),
        [
            "trace_view.json (byte 0): error: expected a JSON array of trace events ('[' first), \
          found \"PK\\x03\\x04\\x14\\x00\\x00\\x00\\x08\\x00rest of a zip archive,\"… (19 more bytes)"
        ]
    );
    // A file shorter than what is shown is quoted whole, and nothing is said to follow.
    assert_eq!(
        read_trace_texts(b"  PK\x03\x04\n", 1 << 20),
        [
            "trace_view.json (byte 2): error: expected a JSON array of trace events ('[' first), \
          found \"PK\\x03\\x04\\n\""
        ]
    );
    // Batches smaller than what is shown read on until it is there.
    assert_eq!(read_trace_texts(zip, 3), read_trace_texts(zip, 1 << 20));
    // A kept event whose "ts" is not a number: its value, quoted (the old reader: "event
    // without a valid \"ts\"", and called valid JSON invalid).
    let text = r#"[{"ph": "X", "cat": "cpu_op", "name": "a", "ts": "12:00\u001b", "dur": 1}]"#;
    assert_eq!(
        read_trace_texts(text.as_bytes(), 1 << 20),
        [
            "trace_view.json (byte 49): warning: \"ts\" is not a time in microseconds, found \
          \"12:00\\\\u001b\"; event skipped"
        ]
    );
}

#[test]
fn a_pickle_that_is_not_one_or_holds_a_bad_opcode_shows_the_bytes_there() {
    let refused = |b: &[u8]| {
        memlens::snapshot::read(&BytesSource::new("s.pickle", b.to_vec()))
            .err()
            .unwrap()
            .to_string()
    };
    // The old reader: "found byte 0x50" and "byte 0x07 is not a pickle opcode" alone.
    assert_eq!(
        refused(b"PK\x03\x04\x14\x00 and the rest of an archive"),
        "s.pickle (byte 0): error: expected a pickle of protocol 2 to 5 (starting with the PROTO \
         opcode 0x80), found \"PK\\x03\\x04\\x14\\x00 and the \"… (18 more bytes)"
    );
    // A file shorter than the 15 bytes shown: quoted whole, nothing said to follow.
    assert_eq!(
        refused(b"PK\x03\x04"),
        "s.pickle (byte 0): error: expected a pickle of protocol 2 to 5 (starting with the PROTO \
         opcode 0x80), found \"PK\\x03\\x04\""
    );
    // EMPTY_DICT, BINPUT 0, then noise: the 15 bytes from there, each escaped.
    let mut noise = b"\x80\x04}q\x00".to_vec();
    noise.extend([0x07, 0xff, 0x1b, 0x00].repeat(10));
    assert_eq!(
        refused(&noise),
        format!(
            "s.pickle (byte 5): error: byte 0x07 is not a pickle opcode (corrupt or not a \
             pickle): expected an opcode, found \"{}\\x07\\xff\\x1b\"… (25 more bytes)",
            "\\x07\\xff\\x1b\\x00".repeat(3)
        )
    );
}

/// The notes of the one run folder `run/` holding `files` (name, content).
fn run_notes(files: &[(&str, &[u8])]) -> Vec<String> {
    use memlens::families::RECOGNIZERS;
    use memlens::input::classify::classify;
    use memlens::input::{Entry, Head};
    let entries: Vec<Entry> = files
        .iter()
        .map(|(n, b)| Entry {
            path: format!("run/{n}"),
            size: b.len() as u64,
        })
        .collect();
    let heads: Vec<Head> = files.iter().map(|(_, b)| Head::Bytes(b.to_vec())).collect();
    let inv = classify(&entries, &heads, RECOGNIZERS);
    let run = inv
        .units_of::<memlens::profiler::ProfilerRun>()
        .next()
        .expect("a run folder");
    run.notes.clone()
}

#[test]
fn profiler_json_of_the_wrong_type_is_placed_by_line_column_and_byte() {
    let om: &[u8] = b"Name,Size(KB)\n";
    let notes = |meta: &[u8]| {
        run_notes(&[
            ("profiler_info_0.json", b"{}"),
            ("profiler_metadata.json", meta),
            ("operator_memory.csv", om),
        ])
        .into_iter()
        .filter(|n| n.contains("metadata"))
        .collect::<Vec<_>>()
    };
    // The old reader: no place at all.
    assert_eq!(
        notes(b"\n  [{\"role\": \"actor\"}]"),
        ["run/profiler_metadata.json:2:3 (byte 3): expected a JSON object, found an array"]
    );
    // The last "role" counts, as serde_json keeps it.
    assert_eq!(
        notes(b"{\n  \"role\": \"a\",\n  \"env\": {\"role\": 1},\n  \"role\": 5\n}"),
        [
            "run/profiler_metadata.json:4:11 (byte 49): \"role\" is a number, not a string; role \
          taken from the folder"
        ]
    );
    let info = run_notes(&[
        ("profiler_info.json", b"{\"x\": [1,\n 2], \"rank_id\": [0]}"),
        ("operator_memory.csv", om),
    ]);
    assert!(
        info.contains(
            &"run/profiler_info.json:2:17 (byte 26): rank_id an array is not a rank number; \
              rank unknown"
                .to_string()
        ),
        "{info:?}"
    );
}

#[test]
fn a_csv_whose_last_row_has_no_line_end_is_said_to_be_cut() {
    // Every torch_npu CSV ends with a line end (the samples' six files do): the old reader read
    // a last field cut short ("NPU" for "NPU:0") without a word.
    let om = real("operator_memory.csv");
    assert!(om.ends_with(b"\r\n"));
    let cut = &om[..om.len() - 4];
    assert!(cut.ends_with(b",NPU"));
    let line = om.iter().filter(|&&b| b == b'\n').count();
    let start = cut.iter().rposition(|&b| b == b'\n').unwrap() + 1;
    let w = read_csv("operator_memory.csv", cut).unwrap();
    assert_eq!(
        w,
        [format!(
            "operator_memory.csv:{line} (byte {start}): warning: the file ends inside this row, \
             at byte {}, with no line end after it (torch_npu ends every line with one): the \
             file was probably cut; its field 15 reads \"NPU\" and may be cut short",
            cut.len()
        )]
    );
    // With its line end, nothing to say.
    assert_eq!(
        read_csv("operator_memory.csv", &om).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn a_file_that_is_not_a_database_says_how_much_follows_its_first_bytes() {
    let open =
        |b: &[u8]| match memlens::sqlite::Database::open(&BytesSource::new("x.db", b.to_vec())) {
            Ok(_) => "opened".to_string(),
            Err(e) => e.to_diagnostic("x.db").to_string(),
        };
    const NOT: &str = "x.db (byte 0): error: not an SQLite 3 database: expected the header \
                       \"SQLite format 3\\x00\" at byte 0, found";
    // A zip archive of 4 KiB: its first 16 bytes, then the 4080 after them (the old reader
    // ended the quote after the 16, as if the file did).
    let mut zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00".to_vec();
    zip.resize(4096, 0xaa);
    assert_eq!(
        open(&zip),
        format!(
            "{NOT} \"PK\\x03\\x04\\x14\\x00\\x00\\x00\\x08\\x00\\xaa\\xaa\\xaa\\xaa\\xaa\\xaa\"… \
             (4080 more bytes)"
        )
    );
    // A file of 16 bytes or fewer is quoted whole: nothing follows.
    assert_eq!(
        open(b"SQLite format 2\x00"),
        format!("{NOT} \"SQLite format 2\\x00\"")
    );
    assert_eq!(open(b"PK\x05\x06"), format!("{NOT} \"PK\\x05\\x06\""));
}

#[test]
fn a_pickle_name_cut_at_its_256_bytes_counts_the_file_after_what_is_shown() {
    let refused = |b: &[u8]| {
        memlens::snapshot::read(&BytesSource::new("s.pickle", b.to_vec()))
            .err()
            .unwrap()
            .to_string()
    };
    let class = ": this pickle refers to a Python class or calls code; a memory snapshot holds \
                 only dicts, lists, tuples, strings and numbers, and memlens never imports or \
                 calls anything";
    // GLOBAL with a module line of 300 bytes: 60 are shown, and the 249 bytes of the 312 after
    // them (3 before) are counted. The old reader read the name from the module line's byte 257
    // and counted only the 241 bytes it had read.
    let mut global = b"\x80\x02c".to_vec();
    global.extend([b'a'; 300]);
    global.extend(b"\nsystem\n.");
    assert_eq!(global.len(), 312);
    assert_eq!(
        refused(&global),
        format!(
            "s.pickle (byte 2): error: opcode GLOBAL (0x63) naming \"{}\"… (249 more bytes){class}",
            "a".repeat(60)
        )
    );
    // The name line cut: "os." and 57 of its bytes shown, 308 - 63 = 245 after them.
    let mut global = b"\x80\x02cos\n".to_vec();
    global.extend([b'b'; 300]);
    global.extend(b"\n.");
    assert_eq!(global.len(), 308);
    assert_eq!(
        refused(&global),
        format!(
            "s.pickle (byte 2): error: opcode GLOBAL (0x63) naming \"os.{}\"… (245 more bytes){class}",
            "b".repeat(57)
        )
    );
    // Both lines whole: the name is quoted whole, nothing is said to follow.
    assert_eq!(
        refused(b"\x80\x02cos\nsystem\nq\x00."),
        format!("s.pickle (byte 2): error: opcode GLOBAL (0x63) naming \"os.system\"{class}")
    );
}

#[test]
fn a_somas_first_line_longer_than_what_is_looked_at_is_counted_to_its_end() {
    // parse_dump looks for the first line in the file's first 200 bytes; the old message cut a
    // longer line there and counted 135 bytes left out of a line of 300 (here 240).
    let mut dump = b"\r\n  \n".to_vec();
    dump.extend([b'x'; 300]);
    dump.extend(b"\r\nmore\n");
    let e = memlens::somas::parse_dump("d.ir", &dump)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "(first line: \"{}\"… (240 more bytes));",
            "x".repeat(60)
        )),
        "{e}"
    );
}

#[test]
fn a_first_line_cut_by_the_classified_head_counts_the_file_after_it() {
    use memlens::families::RECOGNIZERS;
    use memlens::input::classify::{classify, UnknownFile};
    use memlens::input::{Entry, Head};
    // The reason an .ir file is not used, from the head classification read of a file of `size`
    // bytes.
    let reason = |head: &[u8], size: u64| {
        let entries = [Entry {
            path: "run/a.ir".to_string(),
            size,
        }];
        let inv = classify(&entries, &[Head::Bytes(head.to_vec())], RECOGNIZERS);
        let unknown: Vec<_> = inv.units_of::<UnknownFile>().collect();
        unknown[0].reason.clone()
    };
    let what = "a .ir file without a SOMAS or task-info header (first line:";
    // A head of 300 bytes with no line end, of a file of 10,000: 60 shown, 240 left in the head
    // and the 9,700 after it (the old reason counted the 240 alone).
    assert_eq!(
        reason(&[b'x'; 300], 10_000),
        format!("{what} \"{}\"… (9940 more bytes))", "x".repeat(60))
    );
    // The head is the whole file: the 240 only.
    assert_eq!(
        reason(&[b'x'; 300], 300),
        format!("{what} \"{}\"… (240 more bytes))", "x".repeat(60))
    );
    // The line ends in the head: nothing after it is counted.
    assert_eq!(
        reason(b"hello\nworld", 10_000),
        format!("{what} \"hello\")")
    );
}
