//! Every input the fuzzers (`node scripts/fuzz.mjs`) flagged, kept as a regression test: the
//! bytes (inline, or small files under `fixtures/regressions/`) go through the same reader and
//! the same checks as the fuzz target that found them. `docs/hardening.md` lists each finding,
//! its root cause and its fix.

use memlens::ascend::{operator_memory, Interner};
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
    use memlens::ascend::module_mem::read_module_mem;
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
