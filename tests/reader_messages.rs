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
