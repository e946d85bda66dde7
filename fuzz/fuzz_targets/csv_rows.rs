//! The CSV row splitter every torch_npu CSV reader uses, held to the `csv` crate's reader: the
//! first byte picks the chunk size (rows across chunk ends) and a row limit; without a cut row,
//! the rows, fields, lines and byte offsets are the csv crate's (CRLF rows placed on their own
//! line); with one, nothing panics and rows stay in file order. Every field is also read as a
//! number in place (the parser reads whole words past the field's end and masks them off) and
//! must give what the same field copied out alone gives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memlens::profiler::csv_common::{parse_scaled_bytes, Row};
use memlens::profiler::csv_rows::{Next, RowSplitter};
use memlens::source::BytesSource;

fuzz_target!(|data: &[u8]| {
    let Some((&control, data)) = data.split_first() else {
        return;
    };
    let chunk = if control & 0x20 != 0 {
        1 << 20
    } else {
        usize::from(control & 0x1f) + 1
    };
    let limit = if control & 0x40 != 0 { 64 } else { 1 << 30 };
    let src = BytesSource::new("t.csv", data.to_vec());
    let mut rows = RowSplitter::new(&src, limit, None).with_chunk(chunk);
    let mut got = Vec::new();
    let mut cut = false;
    let mut last = (0u64, 0u64);
    loop {
        match rows.next_row().expect("bytes always read") {
            Next::Row { line, byte } => {
                assert!((line, byte) >= last, "{line}:{byte} after {last:?}");
                assert!(byte <= data.len() as u64);
                last = (line, byte);
                let f = rows.fields();
                assert!(!f.is_empty());
                let row = Row {
                    record: f,
                    line,
                    byte,
                };
                for i in 0..f.len() {
                    for (scale, mul) in [(3, 1), (0, 1024), (0, 1 << 20)] {
                        if let Some((v, raw)) = row.scaled(Some(i), scale, mul) {
                            assert_eq!(v, parse_scaled_bytes(&raw.to_vec(), scale, mul));
                        }
                    }
                }
                got.push((line, byte, f.iter().map(<[u8]>::to_vec).collect::<Vec<_>>()));
            }
            Next::TooLong {
                line,
                byte,
                end_line,
            } => {
                assert!(limit < 1 << 30);
                assert!(end_line >= line && (line, byte) >= last);
                last = (line, byte);
                cut = true;
            }
            Next::End => break,
        }
    }
    if cut {
        return;
    }
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(data);
    let mut rec = csv::ByteRecord::new();
    let mut want = Vec::new();
    while rdr.read_byte_record(&mut rec).expect("csv reads bytes") {
        let p = rec.position().expect("position");
        let (line, byte) = if data.get(p.byte() as usize) == Some(&b'\n') {
            (p.line() + 1, p.byte() + 1)
        } else {
            (p.line(), p.byte())
        };
        want.push((
            line,
            byte,
            rec.iter().map(<[u8]>::to_vec).collect::<Vec<_>>(),
        ));
    }
    assert_eq!(got, want);
});
