//! Catalogue of bad MindSpore SOMAS inputs (issue 7, part 2).
//!
//! Every case drops a folder with the damaged file next to good ones (the toy graph's
//! `Ascend_somas_tensor_offset_1.ir` and `task_info_graph_1.ir`) and asserts the exact diagnostic
//! the user sees (file, line, byte, field, what was expected — the text the CLI prints on stderr
//! and the page shows), that classification still lists every file, and that the good dump
//! analyses to exactly the figures it gives alone.

mod common;

use memlens::somas::recognize::{SomasFamily, SomasFile};
use memlens::somas::{self, summary::summary};
use std::sync::OnceLock;

const TOY: &str = "somas/Ascend_somas_tensor_offset_1.ir";
const GOOD: &str = "drop/good/Ascend_somas_tensor_offset_1.ir";
const GOOD_TASK: &str = "drop/good/task_info_graph_1.ir";

fn sample(rel: &str) -> Vec<u8> {
    std::fs::read(common::fixture(rel)).unwrap()
}

fn toy() -> String {
    String::from_utf8(sample(TOY)).unwrap()
}

/// The summary JSON of a dump (with its task-info) — every figure the page and CLI report.
fn figures(name: &str, dump: &[u8], task: Option<&[u8]>) -> serde_json::Value {
    let model = somas::parse_dump(name, dump).expect("good dump parses");
    let task = task.map(|t| somas::parse_task_info(GOOD_TASK, t).expect("good task-info"));
    let an = somas::analyze(&model, task.as_ref());
    serde_json::to_value(summary(&model, &an, task.as_ref())).unwrap()
}

fn good_alone() -> &'static serde_json::Value {
    static V: OnceLock<serde_json::Value> = OnceLock::new();
    V.get_or_init(|| {
        figures(
            GOOD,
            &sample(TOY),
            Some(&sample("somas/task_info_graph_1.ir")),
        )
    })
}

/// What the user sees for the bad file `name` dropped next to the good dump and task-info:
/// `Err(error)` when it cannot be loaded (as a task-info file when its name says so, else as a
/// dump), `Ok(warnings)` when it loads. Asserts that classification lists all three files and
/// that the good pair gives the figures it gives alone.
fn drop_with(name: &str, bytes: &[u8]) -> Result<Vec<String>, String> {
    let files: Vec<(String, Vec<u8>)> = vec![
        (GOOD.into(), sample(TOY)),
        (GOOD_TASK.into(), sample("somas/task_info_graph_1.ir")),
        (format!("drop/bad/{name}"), bytes.to_vec()),
    ];
    let mut set = memlens::families::input_set();
    for (path, bytes) in &files {
        set.add_bytes(path, bytes.clone());
    }
    let inv = set.classify();
    assert_eq!(inv.files, 3);
    assert_eq!(inv.units.len(), 3, "{:?}", inv.units);
    assert!(inv
        .units_of::<SomasFile>()
        .any(|s| s.path == GOOD && s.family != SomasFamily::TaskInfo));
    assert!(inv
        .units_of::<SomasFile>()
        .any(|s| s.path == GOOD_TASK && s.family == SomasFamily::TaskInfo));
    assert_eq!(&figures(GOOD, &files[0].1, Some(&files[1].1)), good_alone());
    let path = format!("drop/bad/{name}");
    if name.starts_with("task_info") {
        somas::parse_task_info(&path, bytes)
            .map(|_| Vec::new())
            .map_err(|d| d.to_string())
    } else {
        match somas::parse_dump(&path, bytes) {
            Ok(m) => {
                // A dump that loads with warnings still analyses without panicking.
                let an = somas::analyze(&m, None);
                let _ = summary(&m, &an, None);
                Ok(m.warnings.iter().map(|d| d.to_string()).collect())
            }
            Err(d) => Err(d.to_string()),
        }
    }
}

/// 1-based line and byte offset of the first line starting with `prefix`.
fn at(text: &str, prefix: &str) -> (usize, usize) {
    let mut byte = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if l.starts_with(prefix) {
            return (i + 1, byte);
        }
        byte += l.len();
    }
    panic!("no line {prefix}");
}

/// 1-based line and byte offset of the line holding byte `b`.
fn line_at(text: &[u8], b: usize) -> (usize, usize) {
    let line = text[..b].iter().filter(|&&c| c == b'\n').count() + 1;
    let start = text[..b]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    (line, start)
}

const D: &str = "Ascend_somas_tensor_offset_1.ir";
const P: &str = "drop/bad/Ascend_somas_tensor_offset_1.ir";

fn err(name: &str, bytes: &[u8]) -> String {
    drop_with(name, bytes).expect_err("should not load")
}

fn warns(name: &str, bytes: &[u8]) -> Vec<String> {
    drop_with(name, bytes).expect("should load")
}

// ------------------------------------------------------------------------------------------
// Empty and truncated dumps

#[test]
fn case_01_empty_dump() {
    assert_eq!(
        err(D, b""),
        format!("{P}: error: empty file (0 bytes): expected a SOMAS dump such as *_somas_tensor_offset_*.ir")
    );
}

#[test]
fn case_02_truncated_mid_tensor_line() {
    let t = toy();
    let cut = t.find("%5T").unwrap() + 12;
    let (line, byte) = line_at(t.as_bytes(), cut);
    assert_eq!(
        err(D, &t.as_bytes()[..cut]),
        format!(
            "{P}:{line} (byte {byte}): error: truncated file: it ends before the \"All Nodes:\" \
             section"
        )
    );
}

#[test]
fn case_03_truncated_mid_node_line() {
    let t = toy();
    let cut = t.find("$5\t").unwrap() + 30;
    let (line, byte) = line_at(t.as_bytes(), cut);
    assert_eq!(
        err(D, &t.as_bytes()[..cut]),
        format!(
            "{P}:{line} (byte {byte}): error: truncated file: it ends before the \"Total Memory \
             Size after reused:\" line that closes every v1.10+ SomasInfo dump"
        )
    );
}

#[test]
fn case_04_truncated_mid_number_of_the_total() {
    // "…after reused:2295808" cut to "…after reused:2295": the dump loads, and the total no
    // longer covers the tensors — said at the tensor that reaches furthest.
    let t = toy();
    let (line, byte) = at(&t, "%1T");
    assert_eq!(
        warns(D, &t.as_bytes()[..t.len() - 3]),
        [format!(
            "{P}:{line} (byte {byte}): warning: offset: tensors that end beyond Total Memory \
             Size after reused (2295) (furthest: %1T ends at offset 2295808) (11 times)"
        )]
    );
}

#[test]
fn case_05_truncated_mid_section_header() {
    let t = toy();
    let cut = t.find("All Merged").unwrap() + 5;
    let (line, byte) = line_at(t.as_bytes(), cut);
    assert_eq!(
        err(D, &t.as_bytes()[..cut]),
        format!(
            "{P}:{line} (byte {byte}): error: truncated file: it ends before the \"Total Memory \
             Size after reused:\" line that closes every v1.10+ SomasInfo dump"
        )
    );
}

// ------------------------------------------------------------------------------------------
// Encoding and wrong files

#[test]
fn case_06_invalid_utf8_in_a_node_name() {
    let t = toy();
    let mut b = t.clone().into_bytes();
    let i = t.find("$1\tConv2D-op2").unwrap() + 5;
    b[i] = 0xFF;
    let (line, _) = line_at(&b, i);
    assert_eq!(
        warns(D, &b),
        [format!(
            "{P}:{line} (byte {i}): warning: names that are not valid UTF-8, shown with U+FFFD"
        )]
    );
}

#[test]
fn case_07_binary_file_renamed_to_a_dump() {
    assert_eq!(
        err(D, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        format!(
            "{P}: error: wrong file type: binary content, expected a SOMAS text dump such as \
             *_somas_tensor_offset_*.ir"
        )
    );
}

#[test]
fn case_08_csv_renamed_to_a_dump() {
    let csv = common::npu(0, "ASCEND_PROFILER_OUTPUT/memory_record.csv");
    assert_eq!(
        err(D, &csv),
        format!(
            "{P}:1: error: wrong file type: not a SOMAS dump (first line: \"Component,Timestamp(us),\
             Total Allocated(MB),Total Reserved(M\"… (42 more bytes)); expected a *_somas_tensor_offset_*.ir dump or \
             another SOMAS dump (somas_*_info, somas_mem_info, offline log, somas_graph_*.json)"
        )
    );
}

#[test]
fn case_09_dump_renamed_to_task_info() {
    assert_eq!(
        err("task_info_graph_1.ir", &sample(TOY)),
        "drop/bad/task_info_graph_1.ir:1: error: wrong file type: expected a task_info_graph_*.ir \
         file (records starting with op_name:), first line: \"All Parameters:\""
    );
}

#[test]
fn case_10_solver_log_instead_of_the_dump() {
    assert_eq!(
        err(D, &sample("somas/somas_solver_input_1.ir")),
        format!(
            "{P}:1: error: wrong file type: this is a SOMAS solver log (somas_solver_input/output \
             or somas_tensor_relation), not a memory plan; open the *_somas_tensor_offset_*.ir dump"
        )
    );
}

// ------------------------------------------------------------------------------------------
// Duplicate and dangling ids, order

#[test]
fn case_11_duplicate_tensor_id() {
    let t = toy().replace("%5T\t#4608S", "%4T\t#4608S");
    let (line, byte) = at(&t, "%4T\t#4608S");
    assert_eq!(
        err(D, t.as_bytes()),
        format!(
            "{P}:{line} (byte {byte}): error: index: duplicate tensor id %4T: already defined at \
             line {}",
            line - 1
        )
    );
}

#[test]
fn case_12_duplicate_node_id() {
    let t = toy().replace("$5\tStreamRecv", "$4\tStreamRecv");
    let (line, byte) = at(&t, "$4\tStreamRecv");
    assert_eq!(
        err(D, t.as_bytes()),
        format!(
            "{P}:{line} (byte {byte}): error: node id: duplicate node id $4: already defined at \
             line {}",
            line - 1
        )
    );
}

#[test]
fn case_13_dangling_output_id() {
    let t = toy().replace("outputs[%4T, ]", "outputs[%99T, ]");
    let (line, byte) = at(&t, "$3\t");
    assert_eq!(
        err(D, t.as_bytes()),
        format!(
            "{P}:{line} (byte {byte}): error: outputs: node $3: tensor %99T is not defined in \
             All Tensors (unknown tensor id)"
        )
    );
}

#[test]
fn case_14_dangling_input_id() {
    let t = toy().replace("inputs[%3T, ]", "inputs[%77T, ]");
    let (line, byte) = at(&t, "$3\t");
    assert_eq!(
        err(D, t.as_bytes()),
        format!(
            "{P}:{line} (byte {byte}): error: inputs: node $3: tensor %77T is not defined in All \
             Tensors (unknown tensor id)"
        )
    );
}

#[test]
fn case_15_nodes_out_of_order() {
    let t = toy();
    let mut l: Vec<&str> = t.split('\n').collect();
    let a = l.iter().position(|x| x.starts_with("$3\t")).unwrap();
    l.swap(a, a + 1);
    let t = l.join("\n");
    let (line, byte) = at(&t, "$3\t");
    assert_eq!(
        err(D, t.as_bytes()),
        format!(
            "{P}:{line} (byte {byte}): error: node id: node ids must follow the execution order: \
             $3 comes after $4"
        )
    );
}

// ------------------------------------------------------------------------------------------
// Lifetimes, offsets, numbers, nesting, size

#[test]
fn case_16_lifetime_ends_before_it_starts() {
    let t = toy().replace(
        "&512\tCommon\tLifeLongNone\t3\t6",
        "&512\tCommon\tLifeLongNone\t6\t3",
    );
    let (line, _) = at(&t, "%4T");
    assert_eq!(
        warns(D, t.as_bytes()),
        [format!(
            "{P}:{line}: warning: life_start: tensors whose life_start is after life_end (first: \
             %4T lives 6..3)"
        )]
    );
}

#[test]
fn case_17_offset_beyond_the_reused_total() {
    let t = toy().replace("&264192\tCommon", "&9264192\tCommon");
    let (line, byte) = at(&t, "%6T");
    assert_eq!(
        warns(D, t.as_bytes()),
        [format!(
            "{P}:{line} (byte {byte}): warning: offset: tensors that end beyond Total Memory Size \
             after reused (2295808) (furthest: %6T ends at offset 9527360)"
        )]
    );
}

#[test]
fn case_18_non_numeric_size() {
    let t = toy().replace("#4608S\t#4096S", "#46x8S\t#4096S");
    let (line, byte) = at(&t, "%5T");
    assert_eq!(
        err(D, t.as_bytes()),
        format!(
            "{P}:{line} (byte {byte}): error: aligned_size: expected #<bytes>S, found \"#46x8S\""
        )
    );
}

#[test]
fn case_19_deeply_nested_list() {
    let t = toy().replace(
        "inputs[%3T, ]",
        &format!(
            "inputs[{}%3T, {}]",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
    );
    let (line, byte) = at(&t, "$3\t");
    assert_eq!(
        err(D, t.as_bytes()),
        format!(
            "{P}:{line} (byte {byte}): error: inputs: expected %<n>T or %<n>P items, found \"{}\"… (99943 more bytes)",
            "[".repeat(60)
        )
    );
}

#[test]
fn case_20_a_100_mb_line() {
    // A node name of 100 MB: refused with the line and its length, before any parsing.
    let t = toy();
    let i = t.find("Conv2D-op2").unwrap();
    let mut b = t.as_bytes()[..i].to_vec();
    b.resize(b.len() + 100_000_000, b'x');
    b.extend_from_slice(&t.as_bytes()[i..]);
    let (line, byte) = line_at(&b, i);
    let len = b[byte..].iter().position(|&c| c == b'\n').unwrap();
    assert_eq!(
        err(D, &b),
        format!(
            "{P}:{line} (byte {byte}): error: line of {len} bytes, more than the 16777216 bytes a \
             line of a SOMAS dump or task-info file may have: not such a file, or a damaged one"
        )
    );
}

// ------------------------------------------------------------------------------------------
// The other families

const R1: &str = "somas_allocate_info_1.r1.ir";
const PR1: &str = "drop/bad/somas_allocate_info_1.r1.ir";

#[test]
fn case_21_r1_dangling_id() {
    let t = String::from_utf8(sample("somas/somas_allocate_info_1.r1.ir"))
        .unwrap()
        .replace("outputs[%4T, ]", "outputs[%44T, ]");
    let (line, byte) = at(&t, "$3\t");
    assert_eq!(
        err(R1, t.as_bytes()),
        format!(
            "{PR1}:{line} (byte {byte}): error: outputs: node $3: tensor %44T is not defined in \
             All Tensors (unknown tensor id)"
        )
    );
}

#[test]
fn case_22_r1_bad_address() {
    let t = String::from_utf8(sample("somas/somas_allocate_info_1.r1.ir"))
        .unwrap()
        .replace("&0x108080000200\tCommon", "&0xZZ\tCommon");
    let (line, byte) = at(&t, "%4T");
    assert_eq!(
        err(R1, t.as_bytes()),
        format!(
            "{PR1}:{line} (byte {byte}): error: addr: expected &0 or &0x<hex>, found \"&0xZZ\""
        )
    );
}

const MI: &str = "somas_mem_info_1.r1.ir";
const PMI: &str = "drop/bad/somas_mem_info_1.r1.ir";

fn mem_info() -> String {
    String::from_utf8(sample("somas/somas_mem_info_1.r1.ir")).unwrap()
}

#[test]
fn case_23_mem_info_truncated_mid_line() {
    let t = mem_info();
    let cut = t.find("%8T").unwrap() + 40;
    let (line, byte) = line_at(t.as_bytes(), cut);
    let e = err(MI, &t.as_bytes()[..cut]);
    assert!(
        e.starts_with(&format!(
            "{PMI}:{line} (byte {byte}): error: expected 13 TAB-separated fields in a mem_info \
             line (#mem_id, start_offset, end_offset, %tensor_id, origin_size, align_size, \
             &start_addr, &end_addr, type, src_node, stm<src_stm_id>, lifetime_start, \
             lifetime_end), found 8: "
        )),
        "{e}"
    );
}

#[test]
fn case_24_mem_info_duplicate_id() {
    let t = mem_info().replace("%7T", "%2T");
    let (line, byte) = at(&t, "#0\t0\t1024\t%2T");
    assert_eq!(
        err(MI, t.as_bytes()),
        format!(
            "{PMI}:{line} (byte {byte}): error: index: duplicate tensor id %2T: already defined \
             at line {}",
            line - 1
        )
    );
}

#[test]
fn case_25_mem_info_lifetime_ends_before_it_starts() {
    let t = mem_info().replace("stm0\t9\t10", "stm0\t10\t9");
    let (line, _) = at(&t, "#0\t0\t1024\t%7T");
    assert_eq!(
        warns(MI, t.as_bytes()),
        [format!(
            "{PMI}:{line}: warning: life_start: tensors whose life_start is after life_end \
             (first: %7T lives 10..9)"
        )]
    );
}

const OFF: &str = "Ascend_somas_offline_log_1.ir";
const POFF: &str = "drop/bad/Ascend_somas_offline_log_1.ir";

fn offline() -> String {
    String::from_utf8(sample("somas/Ascend_somas_offline_log_1.ir")).unwrap()
}

const EDGE: &str = "expected \"Somas EDGE [ERROR ]src=n<i>, srcstm=<s>, dst=n<i>|nc, \
                    dststm=<s>|nc, workspace=0|1, size=<bytes>, lifelong=<0-3>, tid=<t>, \
                    start=<i>, end=<i>\", found";

#[test]
fn case_26_offline_log_truncated_mid_line() {
    let t = offline();
    let cut = t.find("src=n6").unwrap() + 20;
    let (line, byte) = line_at(t.as_bytes(), cut);
    assert_eq!(
        err(OFF, &t.as_bytes()[..cut]),
        format!("{POFF}:{line} (byte {byte}): error: {EDGE} \"Somas EDGE src=n6, srcstm=1, ds\"")
    );
}

#[test]
fn case_27_offline_log_non_numeric_size() {
    let t = offline().replace("size=640, lifelong=0, tid=7", "size=6x0, lifelong=0, tid=7");
    let (line, byte) = at(&t, "Somas EDGE src=n9,");
    let e = err(OFF, t.as_bytes());
    assert!(
        e.starts_with(&format!(
            "{POFF}:{line} (byte {byte}): error: {EDGE} \"Somas EDGE src=n9"
        )),
        "{e}"
    );
}

const CJ: &str = "somas_graph_1_1234567890123456789.json";
const PCJ: &str = "drop/bad/somas_graph_1_1234567890123456789.json";

fn cache() -> String {
    String::from_utf8(sample("somas/somas_graph_1_1234567890123456789.json")).unwrap()
}

#[test]
fn case_28_cache_json_truncated_mid_string() {
    let t = cache();
    let cut = t.find("\"tensor_id\":5").unwrap() + 6;
    assert_eq!(
        err(CJ, &t.as_bytes()[..cut]),
        format!(
            "{PCJ}:1 (byte 0): error: not a SOMAS cache JSON file: EOF while parsing a string at \
             line 1 column {cut} (expected tensors[] with tensor_id, size, ori_size, \
             lifelong_value, life_start, life_end, offset)"
        )
    );
}

#[test]
fn case_29_cache_json_duplicate_id() {
    let t = cache().replace("\"tensor_id\":1}", "\"tensor_id\":0}");
    assert_eq!(
        err(CJ, t.as_bytes()),
        format!("{PCJ}:1 (byte 0): error: tensor_id: duplicate tensor id 0 in tensors[]")
    );
}

#[test]
fn case_30_cache_json_object_instead_of_array() {
    let t = cache().replacen("\"tensors\":[", "\"tensors\":{\"a\":[", 1);
    let col = t.find("{\"a\"").unwrap();
    assert_eq!(
        err(CJ, t.as_bytes()),
        format!(
            "{PCJ}:1 (byte 0): error: not a SOMAS cache JSON file: invalid type: map, expected \
             a sequence at line 1 column {col} (expected tensors[] with tensor_id, size, \
             ori_size, lifelong_value, life_start, life_end, offset)"
        )
    );
}

#[test]
fn case_31_cache_json_deeply_nested() {
    // A million levels in a member memlens does not read: skipped without recursion.
    let c = cache();
    let t = format!(
        "{}, \"x\": {}{}}}",
        c.trim_end().trim_end_matches('}'),
        "[".repeat(1_000_000),
        "]".repeat(1_000_000)
    );
    assert_eq!(warns(CJ, t.as_bytes()), Vec::<String>::new());
}

// ------------------------------------------------------------------------------------------
// Task-info

const TI: &str = "task_info_graph_1.ir";
const PTI: &str = "drop/bad/task_info_graph_1.ir";

fn task_info() -> String {
    String::from_utf8(sample("somas/task_info_graph_1.ir")).unwrap()
}

#[test]
fn case_32_task_info_empty() {
    assert_eq!(
        err(TI, b""),
        format!("{PTI}: error: empty file (0 bytes): expected a task_info_graph_*.ir file")
    );
}

#[test]
fn case_33_task_info_truncated_mid_line() {
    let t = task_info();
    let cut = t.len() / 2 + 5;
    let (line, byte) = line_at(t.as_bytes(), cut);
    let e = err(TI, &t.as_bytes()[..cut]);
    assert!(
        e.starts_with(&format!(
            "{PTI}:{line} (byte {byte}): error: expected 5 TAB-separated fields in a task_index \
             line (task_index, task_num, task0_stream_id, task0_type, task0_dump_flag), found 4: "
        )),
        "{e}"
    );
}

#[test]
fn case_34_task_info_bad_address() {
    let t = task_info().replace("0x108080000000(1048576)", "0x10808000zz00(1048576)");
    let (line, byte) = at(&t, "output address:0x10808000zz00");
    assert_eq!(
        err(TI, t.as_bytes()),
        format!(
            "{PTI}:{line} (byte {byte}): error: output address: expected <0 or 0x…>(<bytes>) \
             items, found \"0x10808000zz00(1048576)\""
        )
    );
}

#[test]
fn case_35_task_info_non_numeric_size() {
    let t = task_info().replace("(1048576)", "(10a8576)");
    let (line, byte) = at(&t, "output address:0x108080000000(10a8576)");
    assert_eq!(
        err(TI, t.as_bytes()),
        format!(
            "{PTI}:{line} (byte {byte}): error: output address: expected <0 or 0x…>(<bytes>) \
             items, found \"0x108080000000(10a8576)\""
        )
    );
}

#[test]
fn a_bad_task_info_leaves_the_dump_usable() {
    // The dump analysed without its (bad) task-info gives the figures of the dump alone.
    let bad = task_info().replace("(1048576)", "(10a8576)");
    assert!(somas::parse_task_info(PTI, bad.as_bytes()).is_err());
    let without = figures(GOOD, &sample(TOY), None);
    let model = somas::parse_dump(GOOD, &sample(TOY)).unwrap();
    let an = somas::analyze(&model, None);
    assert_eq!(
        serde_json::to_value(summary(&model, &an, None)).unwrap(),
        without
    );
    assert_eq!(without["peak"], good_alone()["peak"]);
    assert_eq!(without["conflicts"], good_alone()["conflicts"]);
}
