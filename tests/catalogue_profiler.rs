//! Catalogue of bad torch_npu inputs (issue 7, part 2).
//!
//! Every case drops a job of two ranks: `job/good/rank0_ascend_pt` (the real rank 0, untouched)
//! and `job/bad/rank1_ascend_pt` (the real rank 1 with one file damaged). Each case asserts the
//! exact diagnostics the user sees for the damaged file (file, line or byte, what was expected) —
//! the strings the CLI prints and the page's inputs table shows — and that the good rank's
//! figures equal those of the good rank loaded alone; where the damage leaves part of the bad rank
//! usable, that its other files still give the figures they give undamaged.

mod common;

use common::{json, load, npu, run_folder, Loaded};
use std::sync::OnceLock;

const BAD: &str = "job/bad/rank1_ascend_pt";
const OM: &str = "ASCEND_PROFILER_OUTPUT/operator_memory.csv";
const MR: &str = "ASCEND_PROFILER_OUTPUT/memory_record.csv";
const MM: &str = "ASCEND_PROFILER_OUTPUT/npu_module_mem.csv";
const TV: &str = "ASCEND_PROFILER_OUTPUT/trace_view.json";

/// The good rank analysed alone.
fn good_alone() -> &'static serde_json::Value {
    static V: OnceLock<serde_json::Value> = OnceLock::new();
    V.get_or_init(|| json(load(&run_folder("job/good", 0, &[])).rank("job/good/")))
}

/// The real rank 1 analysed alone, under the bad rank's path.
fn rank1_alone() -> &'static serde_json::Value {
    static V: OnceLock<serde_json::Value> = OnceLock::new();
    V.get_or_init(|| json(load(&run_folder("job/bad", 1, &[])).rank(BAD)))
}

/// Loads the good rank and rank 1 with `changes`; asserts the good rank is untouched.
fn drop_with(changes: &[(&str, Option<Vec<u8>>)]) -> Loaded {
    let mut files = run_folder("job/good", 0, &[]);
    files.extend(run_folder("job/bad", 1, changes));
    let l = load(&files);
    assert_eq!(
        &json(l.rank("job/good/")),
        good_alone(),
        "the good rank changed next to the bad one"
    );
    assert!(
        l.diags("job/good/").is_empty(),
        "{:?}",
        l.diags("job/good/")
    );
    l
}

/// The diagnostics of one file of the bad rank.
fn diags(l: &Loaded, rel: &str) -> Vec<String> {
    l.diags(&format!("{BAD}/{rel}"))
}

/// Fields of the bad rank's summary that come from memory_record.csv (and so must not change
/// when another file of the rank is damaged).
fn record_figures(v: &serde_json::Value) -> [serde_json::Value; 5] {
    [
        v["peak_allocated_bytes"].clone(),
        v["peak_reserved_bytes"].clone(),
        v["peak_active_bytes"].clone(),
        v["peak_time_ns"].clone(),
        v["peak_source"].clone(),
    ]
}

/// Fields that come from operator_memory.csv alone.
fn row_figures(v: &serde_json::Value) -> [serde_json::Value; 5] {
    [
        v["rows"].clone(),
        v["rows_pta"].clone(),
        v["rows_ge"].clone(),
        v["unreleased_rows"].clone(),
        v["unreleased_bytes"].clone(),
    ]
}

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap()
}

/// Byte offset of the start of 1-based line `n` of `b`.
fn line_start(b: &[u8], n: usize) -> usize {
    if n == 1 {
        return 0;
    }
    b.iter()
        .enumerate()
        .filter(|(_, &c)| c == b'\n')
        .nth(n - 2)
        .map(|(i, _)| i + 1)
        .unwrap()
}

// ------------------------------------------------------------------------------------------
// Empty and truncated files

#[test]
fn case_01_empty_operator_memory() {
    let l = drop_with(&[(OM, Some(Vec::new()))]);
    assert_eq!(
        diags(&l, OM),
        [format!(
            "{BAD}/{OM}: error: empty file: expected a header line"
        )]
    );
    // The rank still loads from its other files: same memory_record peaks, no rows.
    let bad = json(l.rank(BAD));
    assert_eq!(record_figures(&bad), record_figures(rank1_alone()));
    assert_eq!(bad["rows"], 0);
}

#[test]
fn case_02_empty_trace() {
    let l = drop_with(&[(TV, Some(Vec::new()))]);
    assert_eq!(
        diags(&l, TV),
        [format!(
            "{BAD}/{TV}: error: empty file: expected a JSON array of trace events"
        )]
    );
    let bad = json(l.rank(BAD));
    assert_eq!(row_figures(&bad), row_figures(rank1_alone()));
    assert_eq!(record_figures(&bad), record_figures(rank1_alone()));
    // Without the trace no allocation gets a stack.
    assert_eq!(bad["stacks"]["direct"], 0);
    assert_eq!(bad["stacks"]["none"], bad["rows"]);
}

#[test]
fn case_03_operator_memory_truncated_mid_line() {
    let om = npu(1, OM);
    let lines = text(&om).lines().count();
    // Cut in the middle of the last row, after its 4th field.
    let last = line_start(&om, lines);
    let cut = last
        + om[last..]
            .iter()
            .enumerate()
            .filter(|(_, &c)| c == b',')
            .nth(3)
            .unwrap()
            .0;
    let l = drop_with(&[(OM, Some(om[..cut].to_vec()))]);
    assert_eq!(
        diags(&l, OM),
        [format!(
            "{BAD}/{OM}:{lines} (byte {last}): warning: row has 4 fields, the header has 15; \
             missing fields read as empty"
        )]
    );
    // The cut row is still read (its name, size and times are whole).
    let bad = json(l.rank(BAD));
    assert_eq!(bad["rows"], rank1_alone()["rows"]);
}

#[test]
fn case_04_operator_memory_truncated_mid_number() {
    let om = npu(1, OM);
    let lines = text(&om).lines().count();
    let last = line_start(&om, lines);
    // Cut inside Size(KB) of the last row: "name,12" of "name,123.5".
    let comma = last + om[last..].iter().position(|&c| c == b',').unwrap();
    let cut = comma + 2;
    let l = drop_with(&[(OM, Some(om[..cut].to_vec()))]);
    assert_eq!(
        diags(&l, OM),
        [
            format!(
                "{BAD}/{OM}:{lines} (byte {last}): warning: row has 2 fields, the header has 15; \
                 missing fields read as empty"
            ),
            format!(
                "{BAD}/{OM}:{lines} (byte {last}): warning: Allocation Time(us): neither an \
                 allocation nor a release time; row skipped"
            ),
        ]
    );
    let bad = json(l.rank(BAD));
    assert_eq!(
        bad["rows"].as_u64().unwrap() + 1,
        rank1_alone()["rows"].as_u64().unwrap()
    );
}

#[test]
fn case_05_trace_truncated_mid_string() {
    let tv = npu(1, TV);
    // Cut inside the call stack string of an event about one third into the file.
    let from = tv.len() / 3;
    let stack = from + find(&tv[from..], b"\"Call stack\": \"").unwrap() + 20;
    let event = tv[..stack]
        .windows(3)
        .rposition(|w| w == b"}, ")
        .map(|i| i + 3)
        .unwrap();
    let l = drop_with(&[(TV, Some(tv[..stack].to_vec()))]);
    assert_eq!(
        diags(&l, TV),
        [format!(
            "{BAD}/{TV} (byte {event}): warning: the file ends inside an event (truncated \
             file?); the last event was skipped"
        )]
    );
    // Rows and memory_record figures are unchanged; only stacks of ops past the cut are lost.
    let bad = json(l.rank(BAD));
    assert_eq!(row_figures(&bad), row_figures(rank1_alone()));
    assert_eq!(record_figures(&bad), record_figures(rank1_alone()));
}

#[test]
fn case_06_trace_truncated_mid_number() {
    let tv = npu(1, TV);
    let from = tv.len() / 2;
    let dur = from + find(&tv[from..], b"\"dur\": ").unwrap() + 9;
    let event = tv[..dur]
        .windows(3)
        .rposition(|w| w == b"}, ")
        .map(|i| i + 3)
        .unwrap();
    let l = drop_with(&[(TV, Some(tv[..dur].to_vec()))]);
    assert_eq!(
        diags(&l, TV),
        [format!(
            "{BAD}/{TV} (byte {event}): warning: the file ends inside an event (truncated \
             file?); the last event was skipped"
        )]
    );
}

#[test]
fn case_07_memory_record_header_only() {
    let mr = npu(1, MR);
    let header = &mr[..mr.iter().position(|&c| c == b'\n').unwrap() + 1];
    let l = drop_with(&[(MR, Some(header.to_vec()))]);
    assert!(diags(&l, MR).is_empty());
    // No series: the peak is rebuilt from operator_memory.csv's totals and says so.
    let bad = json(l.rank(BAD));
    assert_eq!(bad["peak_source"], "operator_memory");
    assert_eq!(row_figures(&bad), row_figures(rank1_alone()));
}

// ------------------------------------------------------------------------------------------
// Encoding

#[test]
fn case_08_invalid_utf8_in_an_op_name() {
    let mut om = npu(1, OM);
    let l2 = line_start(&om, 2);
    om[l2] = 0xFF; // "aten::…" → "\xFFten::…"
    let l = drop_with(&[(OM, Some(om))]);
    assert_eq!(
        diags(&l, OM),
        [format!(
            "{BAD}/{OM}:2 (byte {l2}): warning: Name: not valid UTF-8; invalid bytes shown as \
             U+FFFD"
        )]
    );
    let bad = json(l.rank(BAD));
    assert_eq!(row_figures(&bad), row_figures(rank1_alone()));
}

#[test]
fn case_09_invalid_utf8_in_a_trace_name() {
    let mut tv = npu(1, TV);
    let at = find(&tv, b"\"name\": \"aten::").unwrap() + 9;
    tv[at] = 0xC3; // a lone UTF-8 lead byte
    let l = drop_with(&[(TV, Some(tv))]);
    assert_eq!(
        diags(&l, TV),
        [format!(
            "{BAD}/{TV} (byte {}): warning: a string that is not valid UTF-8 or has a bad \
             escape; kept with the bad bytes shown as U+FFFD",
            at - 1
        )]
    );
    let bad = json(l.rank(BAD));
    assert_eq!(bad["trace_ops"], rank1_alone()["trace_ops"]);
}

#[test]
fn case_10_invalid_utf8_in_a_component() {
    let mut mr = npu(1, MR);
    let l2 = line_start(&mr, 2);
    mr[l2 + 1] = 0xFE; // "APP" → "A\xFEP"
    let l = drop_with(&[(MR, Some(mr))]);
    assert_eq!(
        diags(&l, MR),
        [format!(
            "{BAD}/{MR}:2 (byte {l2}): warning: Component: not valid UTF-8; invalid bytes \
             shown as U+FFFD"
        )]
    );
    // The framework series (PTA) is untouched.
    assert_eq!(
        record_figures(&json(l.rank(BAD))),
        record_figures(rank1_alone())
    );
}

// ------------------------------------------------------------------------------------------
// Headers and fields

#[test]
fn case_11_wrong_header() {
    let om = npu(1, OM);
    let body = &om[om.iter().position(|&c| c == b'\n').unwrap()..];
    let mut bad = b"Op,Bytes,When".to_vec();
    bad.extend_from_slice(body);
    let l = drop_with(&[(OM, Some(bad))]);
    assert_eq!(
        diags(&l, OM),
        [format!(
            "{BAD}/{OM}:1 (byte 0): error: not an operator_memory.csv header: missing \
             column(s) Name, Size(KB), Allocation Time(us); expected Name,Size(KB),Allocation \
             Time(us),Release Time(us),… (found: \"Op,Bytes,When\")"
        )]
    );
    assert_eq!(
        record_figures(&json(l.rank(BAD))),
        record_figures(rank1_alone())
    );
}

#[test]
fn case_12_missing_header() {
    let om = npu(1, OM);
    let body = &om[om.iter().position(|&c| c == b'\n').unwrap() + 1..];
    let l = drop_with(&[(OM, Some(body.to_vec()))]);
    let d = diags(&l, OM);
    assert_eq!(d.len(), 1);
    assert!(
        d[0].starts_with(&format!(
            "{BAD}/{OM}:1 (byte 0): error: not an operator_memory.csv header: missing \
             column(s) Name, Size(KB), Allocation Time(us); expected Name,Size(KB),Allocation \
             Time(us),Release Time(us),… (found: \"aten::empty_strided,"
        )),
        "{d:?}"
    );
}

#[test]
fn case_13_extra_and_missing_fields() {
    let om = npu(1, OM);
    let mut lines: Vec<String> = text(&om).split('\n').map(str::to_string).collect();
    let extra = lines[4].trim_end_matches('\r').to_string() + ",x,y\r";
    lines[4] = extra;
    let short: Vec<&str> = lines[6].split(',').take(5).collect();
    lines[6] = short.join(",");
    let bad = lines.join("\n");
    let (b5, b7) = (line_start(bad.as_bytes(), 5), line_start(bad.as_bytes(), 7));
    let l = drop_with(&[(OM, Some(bad.into_bytes()))]);
    assert_eq!(
        diags(&l, OM),
        [
            format!(
                "{BAD}/{OM}:5 (byte {b5}): warning: row has 17 fields, the header has 15; \
                 extra fields ignored"
            ),
            format!(
                "{BAD}/{OM}:7 (byte {b7}): warning: row has 5 fields, the header has 15; \
                 missing fields read as empty"
            ),
        ]
    );
    assert_eq!(row_figures(&json(l.rank(BAD)))[0], rank1_alone()["rows"]);
}

#[test]
fn case_14_non_numeric_numbers() {
    let om = npu(1, OM);
    let mut lines: Vec<String> = text(&om).split('\n').map(str::to_string).collect();
    // Row 3: size "12,5" style damage → "abc"; row 4: a time written as a clock.
    let mut f: Vec<String> = lines[2].split(',').map(str::to_string).collect();
    f[1] = "abc".into();
    lines[2] = f.join(",");
    let mut f: Vec<String> = lines[3].split(',').map(str::to_string).collect();
    f[3] = "12:30:01".into();
    lines[3] = f.join(",");
    let bad = lines.join("\n");
    let (b3, b4) = (line_start(bad.as_bytes(), 3), line_start(bad.as_bytes(), 4));
    let l = drop_with(&[(OM, Some(bad.into_bytes()))]);
    assert_eq!(
        diags(&l, OM),
        [
            format!(
                "{BAD}/{OM}:3 (byte {b3}): warning: Size(KB): expected a size in KB like \
                 18816.5, found \"abc\"; row skipped"
            ),
            format!(
                "{BAD}/{OM}:4 (byte {b4}): warning: Release Time(us): expected a time in \
                 microseconds like 1736405443871259.720, found \"12:30:01\"; read as empty"
            ),
        ]
    );
    let bad = json(l.rank(BAD));
    assert_eq!(
        bad["rows"].as_u64().unwrap() + 1,
        rank1_alone()["rows"].as_u64().unwrap()
    );
}

#[test]
fn case_15_a_megabyte_value_is_shown_shortened() {
    let om = npu(1, OM);
    let mut lines: Vec<String> = text(&om).split('\n').map(str::to_string).collect();
    let mut f: Vec<String> = lines[2].split(',').map(str::to_string).collect();
    f[1] = "x".repeat(500_000);
    lines[2] = f.join(",");
    let bad = lines.join("\n");
    let b3 = line_start(bad.as_bytes(), 3);
    let l = drop_with(&[(OM, Some(bad.into_bytes()))]);
    assert_eq!(
        diags(&l, OM),
        [format!(
            "{BAD}/{OM}:3 (byte {b3}): warning: Size(KB): expected a size in KB like 18816.5, \
             found \"{}\"… (499940 more bytes); row skipped",
            "x".repeat(60)
        )]
    );
}

// ------------------------------------------------------------------------------------------
// Order and lifetimes

#[test]
fn case_16_memory_record_times_out_of_order() {
    // Reversed rows: the series are sorted by time when read, so every figure is the same and
    // nothing needs to be said.
    let mr = npu(1, MR);
    let t = text(&mr);
    let mut lines: Vec<&str> = t.lines().collect();
    let header = lines.remove(0);
    lines.reverse();
    let bad = format!("{header}\n{}\n", lines.join("\n"));
    let l = drop_with(&[(MR, Some(bad.into_bytes()))]);
    assert!(diags(&l, MR).is_empty(), "{:?}", diags(&l, MR));
    assert_eq!(&json(l.rank(BAD)), rank1_alone());
}

#[test]
fn case_17_trace_events_out_of_order() {
    // Events in reverse file order: the join works on times, not positions.
    let tv = npu(1, TV);
    let t = text(&tv).trim();
    let inner = &t[1..t.len() - 1];
    let events: Vec<&str> = inner.split("}, {").collect();
    let n = events.len();
    let mut fixed: Vec<String> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut s = String::new();
            if i > 0 {
                s.push('{');
            }
            s.push_str(e);
            if i + 1 < n {
                s.push('}');
            }
            s
        })
        .collect();
    fixed.reverse();
    let bad = format!("[{}]", fixed.join(", "));
    let l = drop_with(&[(TV, Some(bad.into_bytes()))]);
    assert!(diags(&l, TV).is_empty(), "{:?}", diags(&l, TV));
    let (bad, alone) = (json(l.rank(BAD)), rank1_alone());
    for k in [
        "rows",
        "stacks",
        "peak_allocated_bytes",
        "live_at_peak",
        "trace_ops",
    ] {
        assert_eq!(bad[k], alone[k], "{k}");
    }
}

#[test]
fn case_18_release_before_allocation() {
    let om = npu(1, OM);
    let mut lines: Vec<String> = text(&om).split('\n').map(str::to_string).collect();
    // Find a released row and move its release time before its allocation.
    let k = lines
        .iter()
        .position(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f.len() > 3 && !f[3].trim().is_empty() && f[0] != "Name"
        })
        .unwrap();
    let mut f: Vec<String> = lines[k].split(',').map(str::to_string).collect();
    f[3] = "1000.000\t".into();
    lines[k] = f.join(",");
    let bad = lines.join("\n");
    let b = line_start(bad.as_bytes(), k + 1);
    let l = drop_with(&[(OM, Some(bad.into_bytes()))]);
    assert_eq!(
        diags(&l, OM),
        [format!(
            "{BAD}/{OM}:{} (byte {b}): warning: Release Time(us): release time is before the \
             allocation time (the block's lifetime ends before it starts); row kept as written",
            k + 1
        )]
    );
}

// ------------------------------------------------------------------------------------------
// Wrong shapes and wrong files

#[test]
fn case_19_trace_is_an_object() {
    let l = drop_with(&[(TV, Some(br#"{"schemaVersion": 1, "events": []}"#.to_vec()))]);
    assert_eq!(
        diags(&l, TV),
        [format!(
            "{BAD}/{TV} (byte 0): error: expected a JSON array of trace events ('[' first, or a \
             {{\"traceEvents\": [...]}} object): found an object without a \"traceEvents\" array"
        )]
    );
    assert_eq!(row_figures(&json(l.rank(BAD))), row_figures(rank1_alone()));
}

#[test]
fn case_20_trace_with_damaged_events() {
    // Garbage between events and a member without a value in a kept event: each is skipped to
    // the next event, with its byte offset. (Damage in an event that mentions no kept category
    // is not looked for: its end is found from the masks alone. This case's event was once
    // `{"ph": "X", "cat": }`, reported only because the kept event after it fell within 256
    // bytes of its start in the same batch.)
    let good = r#"{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": "1.000", "dur": 1}"#;
    let text =
        format!(r#"[{good}, nonsense, {good}, {{"ph": "X", "cat": "cpu_op", "name": }}, {good}]"#);
    let l = drop_with(&[(TV, Some(text.clone().into_bytes()))]);
    let b1 = text.find("nonsense").unwrap();
    let b2 = text.find(r#""name": }"#).unwrap() + 8;
    // 32 bytes are quoted from each place; the rest of the file after them is counted.
    let (after1, after2) = (text.len() - b1 - 32, text.len() - b2 - 32);
    assert_eq!(
        diags(&l, TV),
        [
            format!(
                "{BAD}/{TV} (byte {b1}): warning: invalid JSON: expected '{{' (an event) or \
                 ']', found \"nonsense, {{\\\"ph\\\": \\\"X\\\", \\\"cat\\\": \\\"cp\"… \
                 ({after1} more bytes); skipped to the next event"
            ),
            format!(
                "{BAD}/{TV} (byte {b2}): warning: invalid JSON: expected a value, found \
                 \"}}, {{\\\"ph\\\": \\\"X\\\", \\\"cat\\\": \\\"cpu_op\\\", \"… \
                 ({after2} more bytes); skipped to the next event"
            ),
        ]
    );
    assert_eq!(json(l.rank(BAD))["trace_ops"], 3);
}

#[test]
fn case_21_somas_dump_renamed_to_trace_view() {
    let dump = std::fs::read(common::fixture("somas/Ascend_somas_tensor_offset_1.ir")).unwrap();
    // Its first 32 bytes quoted, the rest counted.
    let after = dump.len() - 32;
    let l = drop_with(&[(TV, Some(dump))]);
    assert_eq!(
        diags(&l, TV),
        [format!(
            "{BAD}/{TV} (byte 0): error: expected a JSON array of trace events ('[' first), \
             found \"All Parameters:\\n\\nindex:\\tsize:\\tso\"… ({after} more bytes)"
        )]
    );
}

#[test]
fn case_22_memory_record_renamed_to_operator_memory() {
    let l = drop_with(&[(OM, Some(npu(1, MR)))]);
    assert_eq!(
        diags(&l, OM),
        [format!(
            "{BAD}/{OM}:1 (byte 0): error: not an operator_memory.csv header: missing \
             column(s) Name, Size(KB), Allocation Time(us); expected Name,Size(KB),Allocation \
             Time(us),Release Time(us),… (found: \"Component,Timestamp(us),Total Allocated(MB),\
             Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\")"
        )]
    );
    assert_eq!(
        record_figures(&json(l.rank(BAD))),
        record_figures(rank1_alone())
    );
}

#[test]
fn case_23_binary_file_renamed_to_npu_module_mem() {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let l = drop_with(&[(MM, Some(png))]);
    let d = diags(&l, MM);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].starts_with(&format!(
            "{BAD}/{MM}:1 (byte 0): error: not an npu_module_mem.csv header: expected \
             [Device_id,]Component,Timestamp(us),Total Reserved(MB),Device (found: \"\\x89PNG\")"
        )),
        "{d:?}"
    );
    assert!(d[0].chars().count() < 500, "message not shortened: {d:?}");
}

#[test]
fn case_24_profiler_info_invalid_json_and_bad_rank_id() {
    // Invalid JSON: the rank number still comes from the file name (profiler_info_1.json).
    let l = drop_with(&[("profiler_info_1.json", Some(b"{\"rank_id\": 1,".to_vec()))]);
    assert_eq!(json(l.rank(BAD))["rank"], 1);
    // profiler_info.json (no rank in the name) with a rank_id that is not a number: the rank is
    // unknown, the folder still loads and the note says why.
    let l = drop_with(&[
        ("profiler_info_1.json", None),
        (
            "profiler_info.json",
            Some(br#"{"rank_id": "one"}"#.to_vec()),
        ),
    ]);
    assert_eq!(
        l.diags(BAD),
        [format!(
            "{BAD}: warning: {BAD}/profiler_info.json:1:13 (byte 12): rank_id \"one\" is not a \
             rank number; rank unknown"
        )]
    );
    let bad = json(l.rank(BAD));
    assert_eq!(bad["rank"], "unknown");
    assert_eq!(row_figures(&bad), row_figures(rank1_alone()));
}

#[test]
fn case_25_profiler_info_deeply_nested() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let l = drop_with(&[
        ("profiler_info_1.json", None),
        ("profiler_info.json", Some(deep.into_bytes())),
    ]);
    assert_eq!(
        l.diags(BAD),
        [format!(
            "{BAD}: warning: {BAD}/profiler_info.json: invalid JSON at line 1, column 128: \
             recursion limit exceeded at line 1 column 128"
        )]
    );
    assert_eq!(json(l.rank(BAD))["rank"], "unknown");
}

#[test]
fn case_26_profiler_info_too_large() {
    let big = format!("{{\"rank_id\": 1, \"pad\": \"{}\"}}", "x".repeat(5 << 20));
    let size = big.len();
    let l = drop_with(&[
        ("profiler_info_1.json", None),
        ("profiler_info.json", Some(big.into_bytes())),
    ]);
    assert_eq!(
        l.diags(BAD),
        [format!(
            "{BAD}: warning: {BAD}/profiler_info.json: {size} bytes, more than the 4194304 \
             bytes a profiler JSON file may have (real ones are a few KiB); not read"
        )]
    );
}

#[test]
fn case_27_trace_deeply_nested() {
    // 200,000 levels inside a kept event's args and inside a skipped event: the scanner counts
    // depth (no recursion), both events are read, and the kept op is kept.
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let text = format!(
        r#"[{{"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": "5.000", "dur": 1, "args": {{"x": {deep}}}}}, {{"ph": "X", "cat": "python_function", "args": {deep}}}]"#
    );
    let l = drop_with(&[(TV, Some(text.into_bytes()))]);
    assert!(diags(&l, TV).is_empty(), "{:?}", diags(&l, TV));
    let bad = json(l.rank(BAD));
    assert_eq!(bad["trace_ops"], 1);
    assert_eq!(bad["trace_events"], 2);
}

#[test]
fn case_28_trace_with_a_100_mb_string() {
    // One event's call stack is 100 MB: the event is skipped (streamed through, not held), the
    // events around it are read.
    let ev = |n: u32| {
        format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::op{n}", "ts": "{n}.000", "dur": 1}}"#
        )
    };
    let mut text = format!(
        r#"[{}, {{"ph": "X", "cat": "cpu_op", "name": "big", "ts": "2.000", "args": {{"Call stack": ""#,
        ev(1)
    )
    .into_bytes();
    let at = find(&text, br#"{"ph": "X", "cat": "cpu_op", "name": "big""#).unwrap();
    text.resize(text.len() + 100_000_000, b'a');
    text.extend_from_slice(br#""}}"#);
    let size = text.len() - at;
    text.extend_from_slice(format!(", {}]", ev(3)).as_bytes());
    let l = drop_with(&[(TV, Some(text))]);
    assert_eq!(
        diags(&l, TV),
        [format!(
            "{BAD}/{TV} (byte {at}): warning: event of {size} bytes, more than the 16777216 \
             bytes one trace event may have; skipped"
        )]
    );
    let bad = json(l.rank(BAD));
    assert_eq!(bad["trace_ops"], 2);
    assert_eq!(bad["trace_events"], 3);
}

#[test]
fn case_29_csv_with_a_100_mb_line() {
    // A 100 MB row in the middle of memory_record.csv: skipped to the end of its line (never
    // held), the rows before and after are read, so every figure is the same.
    let mr = npu(1, MR);
    let split = line_start(&mr, 40);
    let mut bad = mr[..split].to_vec();
    bad.extend_from_slice(b"PTA,");
    bad.resize(bad.len() + 100_000_000, b'7');
    bad.extend_from_slice(b"\n");
    bad.extend_from_slice(&mr[split..]);
    let l = drop_with(&[(MR, Some(bad))]);
    assert_eq!(
        diags(&l, MR),
        [format!(
            "{BAD}/{MR}:40 (byte {split}): warning: row longer than 1048576 bytes (the limit \
             for one row); skipped to the end of line 40"
        )]
    );
    assert_eq!(&json(l.rank(BAD)), rank1_alone());
}

// ------------------------------------------------------------------------------------------
// Duplicates and dangling references

#[test]
fn case_30_a_file_twice_in_one_run() {
    // operator_memory.csv both in the run folder and in ASCEND_PROFILER_OUTPUT: the latter
    // (where torch_npu writes it) wins, and the note says which was used.
    let l = drop_with(&[("operator_memory.csv", Some(b"garbage".to_vec()))]);
    assert_eq!(
        l.diags(BAD),
        [format!(
            "{BAD}: warning: operator_memory.csv found twice; using {BAD}/{OM}, not \
             {BAD}/operator_memory.csv"
        )]
    );
    assert_eq!(&json(l.rank(BAD)), rank1_alone());
}

#[test]
fn case_31_two_runs_claim_the_same_rank() {
    // A second run folder of rank 1 (a later capture): both are kept, in timestamp order, as
    // one rank with two run folders.
    let mut files = run_folder("job/good", 0, &[]);
    files.extend(run_folder("job/bad", 1, &[]));
    for (p, b) in run_folder("job/bad", 1, &[]) {
        files.push((
            p.replace("rank1_ascend_pt", "host_9_20250109000000001_ascend_pt"),
            b,
        ));
    }
    let l = load(&files);
    assert_eq!(&json(l.rank("job/good/")), good_alone());
    let dup = l.rank("host_9_");
    assert_eq!(dup.run_dirs.len(), 2);
    assert_eq!(dup.rows, 2 * rank1_alone()["rows"].as_u64().unwrap());
}

#[test]
fn case_31b_two_runs_of_one_rank_in_two_directories() {
    // The same rank 1 run twice, the copies in two directories (two runs dropped together): one
    // rank is one run, so the rank is the first directory's run folder alone — its figures those
    // of rank 1 loaded alone — and the other run folder is set aside, said in a warning naming
    // both, and listed among the files not analysed.
    let mut files = run_folder("job/good", 0, &[]);
    files.extend(run_folder("job/bad", 1, &[]));
    files.extend(run_folder("rerun/bad", 1, &[]));
    let l = load(&files);
    assert_eq!(&json(l.rank("job/good/")), good_alone());
    assert_eq!(&json(l.rank(BAD)), rank1_alone());
    assert_eq!(l.job.ranks.len(), 2);
    let other = "rerun/bad/rank1_ascend_pt";
    let reason = format!(
        "another run of bad rank 1, in another directory than {BAD}: set aside (one rank is one \
         run); compare the two runs instead (memlens compare, or Compare these on the page)"
    );
    assert_eq!(l.diags(other), [format!("{other}: warning: {reason}")]);
    assert!(l.ignored().contains(&(other.to_string(), reason)));
    assert!(l
        .analysis
        .ranks
        .iter()
        .all(|r| !r.summary.run_dirs.iter().any(|d| d == other)));
}

#[test]
fn case_32_allocations_whose_op_is_not_in_the_trace() {
    // A trace that holds none of the rows' ops (dangling names): rows load, every stack is
    // "none", and that shows in the stack counts.
    let text = r#"[{"ph": "X", "cat": "cpu_op", "name": "unrelated", "ts": "1.000", "dur": 1, "args": {"Call stack": "a.py(1): f"}}]"#;
    let l = drop_with(&[(TV, Some(text.as_bytes().to_vec()))]);
    assert!(diags(&l, TV).is_empty());
    let bad = json(l.rank(BAD));
    assert_eq!(bad["stacks"]["direct"], 0);
    assert_eq!(bad["stacks"]["via_forward"], 0);
    assert_eq!(bad["stacks"]["approximate"], 0);
    assert_eq!(bad["stacks"]["none"], bad["rows"]);
    assert_eq!(row_figures(&bad), row_figures(rank1_alone()));
}

// ------------------------------------------------------------------------------------------
// Archives

/// The bad rank's real files as zip members under `rank1_ascend_pt/`, plus `extra` members.
fn zip_of_rank1(extra: &[(&str, u16, u64, u32, Vec<u8>)]) -> Vec<u8> {
    let mut members: Vec<(String, u16, u64, u32, Vec<u8>)> = run_folder("x", 1, &[])
        .into_iter()
        .map(|(p, b)| {
            let name = p.trim_start_matches("x/").to_string();
            (name, 0u16, b.len() as u64, common::crc32(&b), b)
        })
        .collect();
    for (n, m, s, c, d) in extra {
        members.push((n.to_string(), *m, *s, *c, d.clone()));
    }
    let refs: Vec<(&str, u16, u64, u32, Vec<u8>)> = members
        .iter()
        .map(|(n, m, s, c, d)| (n.as_str(), *m, *s, *c, d.clone()))
        .collect();
    common::zip_bytes(&refs)
}

/// Loads the good rank folder next to `job/bad.zip`; the zipped rank must give the figures
/// of the same files as a folder.
fn drop_with_zip(zip: Vec<u8>) -> Loaded {
    let mut files = run_folder("job/good", 0, &[]);
    files.push(("job/bad.zip".into(), zip));
    let l = load(&files);
    assert_eq!(&json(l.rank("job/good/")), good_alone());
    let zipped = json(l.rank("job/bad.zip/"));
    for k in [
        "rows",
        "stacks",
        "peak_allocated_bytes",
        "peak_reserved_bytes",
        "live_at_peak",
    ] {
        assert_eq!(zipped[k], rank1_alone()[k], "{k}");
    }
    l
}

#[test]
fn case_33_archive_member_escaping_its_root() {
    let evil = b"Name,Size(KB),Allocation Time(us)\nx,1,1\n".to_vec();
    let zip = zip_of_rank1(&[
        (
            "../../etc/operator_memory.csv",
            0,
            evil.len() as u64,
            common::crc32(&evil),
            evil.clone(),
        ),
        (
            "/abs/trace_view.json",
            0,
            2,
            common::crc32(b"[]"),
            b"[]".to_vec(),
        ),
    ]);
    let l = drop_with_zip(zip);
    assert_eq!(
        l.diags("job/bad.zip"),
        [
            "job/bad.zip: warning: member path \"../../etc/operator_memory.csv\" climbs out of \
             the archive; refused",
            "job/bad.zip: warning: absolute member path \"/abs/trace_view.json\" refused",
        ]
    );
    assert!(l.set.entries().iter().all(|e| !e.path.contains("..")));
}

#[test]
fn case_34_zip_bomb() {
    // A member declaring 1 GiB inflated from about 1 MB: refused before inflating; the other
    // members of the archive load.
    let len = 1u64 << 30;
    let data = common::deflate_zeros(len);
    let compressed = data.len();
    let zip = zip_of_rank1(&[(
        "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/bomb/trace_view.json",
        8,
        len,
        0,
        data,
    )]);
    let l = drop_with_zip(zip);
    assert_eq!(
        l.diags("bomb/"),
        [format!(
            "job/bad.zip/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/bomb/trace_view.json: error: \
             declares {len} bytes from {compressed} compressed: more than 200×; refused as a \
             possible zip bomb"
        )]
    );
}

#[test]
fn case_35_zip_bomb_lying_about_its_size() {
    // A member declaring 100 bytes that inflates to 64 MiB: reading stops at the declared size.
    let data = common::deflate_zeros(64 << 20);
    let zip = zip_of_rank1(&[(
        "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/lie/trace_view.json",
        8,
        100,
        0,
        data,
    )]);
    let l = drop_with_zip(zip);
    assert_eq!(
        l.diags("lie/"),
        [
            "job/bad.zip/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/lie/trace_view.json: error: \
          inflates beyond its declared size of 100 bytes; refused as a possible zip bomb"
        ]
    );
}

#[test]
fn case_36_tar_gz_bomb() {
    // 4 MB of .tar.gz whose member declares 4 GiB: refused from its header, before inflating,
    // since the guard lets at most 200× the archive size through.
    let len = 4u64 << 30;
    let gz = common::tar_gz_zeros(
        "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        len,
    );
    let limit = (gz.len() as u64 * 200).max(64 << 20);
    let mut files = run_folder("job/good", 0, &[]);
    files.push(("job/bomb.tar.gz".into(), gz));
    let l = load(&files);
    assert_eq!(&json(l.rank("job/good/")), good_alone());
    // The refused member is still listed (the run folder shows it), and says why it was not
    // analysed; the folder has nothing else, as the notes say.
    let member = "job/bomb.tar.gz/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json";
    let why = format!(
        "declares {len} bytes, more than the {limit} bytes this archive may inflate to (200× \
         its size); refused as a possible zip bomb"
    );
    assert_eq!(
        l.diags("job/bomb.tar.gz"),
        [
            format!("{member}: error: {why}"),
            "job/bomb.tar.gz/rank1_ascend_pt: warning: no profiler_info*.json in the run \
             folder; rank unknown"
                .to_string(),
            "job/bomb.tar.gz/rank1_ascend_pt: warning: no operator_memory.csv or \
             memory_record.csv: profile with profile_memory=True, or run \
             torch_npu.profiler.profiler.analyse(<path>) if ASCEND_PROFILER_OUTPUT is missing"
                .to_string(),
            format!("{member}: error: not read when the archive was expanded: {why}"),
        ]
    );
}

#[test]
fn case_37_damaged_archive() {
    // A zip cut in half: its central directory is gone, so nothing in it can be listed; the
    // folder next to it loads.
    let zip = zip_of_rank1(&[]);
    let mut files = run_folder("job/good", 0, &[]);
    files.push(("job/half.zip".into(), zip[..zip.len() / 2].to_vec()));
    let l = load(&files);
    assert_eq!(&json(l.rank("job/good/")), good_alone());
    assert_eq!(
        l.diags("job/half.zip"),
        [
            "job/half.zip: error: not a readable zip archive: invalid Zip archive: Could not find \
          EOCD"
        ]
    );
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
