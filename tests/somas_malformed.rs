//! Malformed inputs: each gives one diagnostic naming the file, the line, the field and what was
//! expected — never a panic. Line numbers are found in the edited text by the test itself.

use memlens::somas;

const TOY: &str = "fixtures/somas/Ascend_somas_tensor_offset_1.ir";
const R1: &str = "fixtures/somas/somas_allocate_info_1.r1.ir";

fn toy() -> String {
    String::from_utf8(std::fs::read(TOY).expect("sample")).expect("utf-8")
}

/// 1-based line number of the first line starting with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(prefix))
        .expect("line present")
        + 1
}

/// Byte offset of the first line starting with `prefix`.
fn byte_of(text: &str, prefix: &str) -> usize {
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        if l.starts_with(prefix) {
            return at;
        }
        at += l.len();
    }
    panic!("no line {prefix}");
}

fn err(name: &str, text: &str) -> String {
    somas::parse_dump(name, text.as_bytes())
        .err()
        .unwrap_or_else(|| panic!("{name} should not parse"))
        .to_string()
}

#[test]
fn empty_file() {
    assert_eq!(
        err("e.ir", ""),
        "e.ir: error: empty file (0 bytes): expected a SOMAS dump such as *_somas_tensor_offset_*.ir"
    );
}

#[test]
fn wrong_file_type() {
    assert_eq!(
        err("data.csv", "Name,Size(KB)\nconv,12\n"),
        "data.csv:1: error: wrong file type: not a SOMAS dump (first line: \"Name,Size(KB)\"); expected a \
         *_somas_tensor_offset_*.ir dump or another SOMAS dump (somas_*_info, somas_mem_info, offline log, \
         somas_graph_*.json)"
    );
    assert_eq!(
        err("b.bin", "\u{0}\u{1}binary"),
        "b.bin: error: wrong file type: binary content, expected a SOMAS text dump such as *_somas_tensor_offset_*.ir"
    );
    let task = std::fs::read("fixtures/somas/task_info_graph_1.ir").unwrap();
    assert_eq!(
        err("task_info_graph_1.ir", std::str::from_utf8(&task).unwrap()),
        "task_info_graph_1.ir:1: error: wrong file type: this is a task_info_graph file; give it with \
         --task-info next to the SOMAS dump"
    );
    // A SOMAS dump where a task-info file is expected.
    let e = somas::parse_task_info("x.ir", toy().as_bytes())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "x.ir:1: error: wrong file type: expected a task_info_graph_*.ir file (records starting with op_name:), \
         first line: \"All Parameters:\""
    );
}

#[test]
fn truncated_file() {
    let text = toy();
    // Cut in the middle of the node line of $6.
    let cut = text.find("$6\tAllReduce").unwrap() + 10;
    let part = &text[..cut];
    let line = part.matches('\n').count() + 1;
    assert_eq!(
        err("cut.ir", part),
        format!(
            "cut.ir:{line} (byte {}): error: truncated file: it ends before the \"Total Memory Size after reused:\" \
             line that closes every v1.10+ SomasInfo dump",
            cut - 10
        )
    );
    // Cut inside the tensor section: the nodes section is missing.
    let cut = text.find("%5T\t").unwrap() + 3;
    let part = &text[..cut];
    let line = part.matches('\n').count() + 1;
    assert_eq!(
        err("cut2.ir", part),
        format!(
            "cut2.ir:{line} (byte {}): error: truncated file: it ends before the \"All Nodes:\" section",
            cut - 3
        )
    );
}

#[test]
fn bad_sigil() {
    let text = toy().replace("%3T\t#1049088S", "3T\t#1049088S");
    let line = line_of(&text, "3T\t#1049088S");
    let byte = byte_of(&text, "3T\t#1049088S");
    assert_eq!(
        err("s.ir", &text),
        format!("s.ir:{line} (byte {byte}): error: index: expected %<n>T or %<n>CT, found \"3T\"")
    );
    let text = toy().replace("#4608S\t#4096S", "4608\t#4096S");
    let line = line_of(&text, "%5T\t");
    let byte = byte_of(&text, "%5T\t");
    assert_eq!(
        err("s.ir", &text),
        format!(
            "s.ir:{line} (byte {byte}): error: aligned_size: expected #<bytes>S, found \"4608\""
        )
    );
    let text = toy().replace("\tLifeLongNone\t3\t3\t", "\tLifeLongSome\t3\t3\t");
    let line = line_of(&text, "%5T\t");
    let byte = byte_of(&text, "%5T\t");
    assert_eq!(
        err("s.ir", &text),
        format!(
            "s.ir:{line} (byte {byte}): error: lifelong: expected LifeLongNone, LifeLongGraphAll, LifeLongGraphStart \
             or LifeLongGraphEnd, found \"LifeLongSome\""
        )
    );
}

#[test]
fn unknown_tensor_id() {
    let text = toy().replace("outputs[%4T, ]", "outputs[%44T, ]");
    let line = line_of(&text, "$3\t");
    let byte = byte_of(&text, "$3\t");
    assert_eq!(
        err("u.ir", &text),
        format!(
            "u.ir:{line} (byte {byte}): error: outputs: node $3: tensor %44T is not defined in All Tensors \
             (unknown tensor id)"
        )
    );
    let text = toy().replace("inputs[%6T, %1P, ]", "inputs[%6T, %9P, ]");
    let line = line_of(&text, "$9\t");
    let byte = byte_of(&text, "$9\t");
    assert_eq!(
        err("u.ir", &text),
        format!("u.ir:{line} (byte {byte}): error: inputs: node $9: parameter %9P is not defined in All Parameters")
    );
    let text = toy().replace(
        "contiguous tensors: [%6T ]\n\n\nAll Processed",
        "contiguous tensors: [%60T ]\n\n\nAll Processed",
    );
    let line = line_of(&text, "contiguous tensors: [%60T ]");
    let byte = byte_of(&text, "contiguous tensors: [%60T ]");
    assert_eq!(
        err("u.ir", &text),
        format!("u.ir:{line} (byte {byte}): error: tensor %60T is not defined in All Tensors (unknown tensor id)")
    );
}

#[test]
fn duplicate_ids() {
    let text = toy().replace("%5T\t#4608S", "%4T\t#4608S");
    let first = line_of(&text, "%4T\t");
    let second = first + 1;
    let byte = text
        .split_inclusive('\n')
        .take(second - 1)
        .map(str::len)
        .sum::<usize>();
    assert_eq!(
        err("d.ir", &text),
        format!("d.ir:{second} (byte {byte}): error: index: duplicate tensor id %4T: already defined at line {first}")
    );
    let text = toy().replace("$5\tStreamRecv-op6", "$4\tStreamRecv-op6");
    let first = line_of(&text, "$4\tStreamSend");
    let byte = byte_of(&text, "$4\tStreamRecv");
    assert_eq!(
        err("d.ir", &text),
        format!(
            "d.ir:{} (byte {byte}): error: node id: duplicate node id $4: already defined at line {first}",
            first + 1
        )
    );
}

#[test]
fn wrong_field_count() {
    let text = toy().replace("%9T\t#512S\t#128S\t&4608\t", "%9T\t#512S\t&4608\t");
    let line = line_of(&text, "%9T\t");
    let byte = byte_of(&text, "%9T\t");
    assert_eq!(
        err("f.ir", &text),
        // The line is shown up to 60 characters (an escape counts as its two), the rest counted.
        format!(
            "f.ir:{line} (byte {byte}): error: expected 9 TAB-separated fields in a tensor line (%id, #aligned_size, \
             #original_size, &offset, type, lifelong, life_start, life_end, source node name), found 8: \
             \"%9T\\t#512S\\t&4608\\tCommon\\tLifeLongNone\\t11\\t12\\tSoftmaxCros\"… (23 more bytes)"
        )
    );
    let text = toy().replace(
        "\tworkspace[]\tctrl_inputs[%1CT, ]",
        "\tctrl_inputs[%1CT, ]",
    );
    let line = line_of(&text, "$2\t");
    let byte = byte_of(&text, "$2\t");
    let e = err("f.ir", &text);
    assert!(
        e.starts_with(&format!(
            "f.ir:{line} (byte {byte}): error: expected 9 TAB-separated fields in a node line ($id, name, type, \
             inputs[…], outputs[…], workspace[…], ctrl_inputs[…], ctrl_outputs[…], streamID[@…]), found 8: "
        )),
        "{e}"
    );
    // r1.x has 10 tensor fields.
    let r1 = String::from_utf8(std::fs::read(R1).unwrap()).unwrap();
    let text = r1.replace("&0x108080000200\tCommon", "Common");
    let line = line_of(&text, "%4T\t");
    let e = err("r.ir", &text);
    assert!(
        e.contains(&format!(
            "r.ir:{line} (byte {}): error: expected 10 TAB-separated fields in a tensor line (%id, #size, #real_size, \
             &offset, &addr, type, lifelong, life_start, life_end, source node name), found 9",
            byte_of(&text, "%4T\t")
        )),
        "{e}"
    );
}

#[test]
fn r1_pointers_accept_0_and_reject_garbage() {
    let r1 = String::from_utf8(std::fs::read(R1).unwrap()).unwrap();
    // A null parameter address prints as "0".
    let ok = r1.replace("&0x1080c0000200\tconv1.weight", "&0\tconv1.weight");
    let m = somas::parse_dump("r.ir", ok.as_bytes()).unwrap();
    assert_eq!(m.params.addr[0], 0);
    let bad = r1.replace("&0x108080100200\tCommon", "&0xZZ\tCommon");
    let line = line_of(&bad, "%3T\t");
    assert_eq!(
        err("r.ir", &bad),
        format!(
            "r.ir:{line} (byte {}): error: addr: expected &0 or &0x<hex>, found \"&0xZZ\"",
            byte_of(&bad, "%3T\t")
        )
    );
}

#[test]
fn malformed_task_info() {
    // Line 1 is 10 bytes, line 2 is 73 bytes: line 3 starts at byte 83.
    let text =
        "op_name:A\ntask_index:0\ttask_num:1\ttask0_stream_id:0\ttask0_type:0\ttask0_dump_flag:0\n\
                output address:0x10(4)\t0x2g(8)\t\n";
    let e = somas::parse_task_info("t.ir", text.as_bytes())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.ir:3 (byte 83): error: output address: expected <0 or 0x…>(<bytes>) items, found \"0x2g(8)\""
    );
    let e = somas::parse_task_info("t.ir", b"op_name:A\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.ir:1 (byte 0): error: task_index: truncated file: the last record has no task_index line"
    );
}

#[test]
fn random_garbage_never_panics() {
    // Cut every sample at every 97th byte and flip bytes into sigils and separators: any result
    // is fine except a panic, in the parsers, the analysis and the queries.
    let mut rng = fastrand::Rng::with_seed(7);
    let dir = "fixtures/somas";
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for path in names {
        let text = std::fs::read(&path).unwrap();
        for cut in (0..text.len()).step_by(97) {
            let _ = somas::parse_dump("c.ir", &text[..cut]);
            let _ = somas::parse_task_info("c.ir", &text[..cut]);
            let mut flipped = text.clone();
            for _ in 0..8 {
                let i = rng.usize(0..flipped.len());
                flipped[i] = b"%#&$[]\t\n0T:,"[rng.usize(0..12)];
            }
            if let Ok(m) = somas::parse_dump("f.ir", &flipped) {
                let a = somas::analyze(&m, None);
                let _ = somas::summary::summary(&m, &a, None);
                for t in 0..m.tensors.len() as u32 {
                    let _ = somas::queries::tensor_query(&m, &a, t);
                }
                for n in 0..m.nodes.len() as u32 {
                    let _ = somas::queries::node_query(&m, &a, n);
                }
            }
            let _ = somas::parse_task_info("f.ir", &flipped);
        }
    }
}

#[test]
fn absurd_execution_indices_are_refused() {
    let text = toy().replace("$13\tAssignAdd", "$4000000000\tAssignAdd");
    assert_eq!(
        err("x.ir", &text),
        "x.ir: error: execution index 4000000000 is far beyond the 14 nodes and 14 tensors of this dump: \
         node ids and lifetimes must be execution indices"
    );
}

#[test]
fn a_lifetime_past_the_last_node_is_a_warning_and_clamped() {
    let text = toy().replace("\t11\t12\tSoftmax", "\t11\t4000000000\tSoftmax");
    let m = somas::parse_dump("x.ir", text.as_bytes()).unwrap();
    let line = line_of(&text, "%9T\t");
    assert_eq!(
        m.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        vec![format!(
            "x.ir:{line}: warning: life_end: tensors that live past the last node (first: %9T ends at 4000000000, \
             the last node is $13)"
        )]
    );
    let a = somas::analyze(&m, None);
    assert_eq!(a.in_use.len(), 14);
}
