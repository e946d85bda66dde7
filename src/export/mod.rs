//! CSV and JSON writers for results, with column names compatible with the tools memlens replaces.
//!
//! Each analysis family has its own submodule; this file holds what they share.

pub mod columns;
pub mod compare;
pub mod curves;
pub mod profiler;
pub mod snapshot;
pub mod somas;

use std::io::Write;

/// A CSV writer with the settings every export uses (LF line ends, minimal quoting).
pub fn csv_writer<W: Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out)
}

/// Writes one CSV table with `header` and `rows` to `out`, quoting as RFC 4180 requires.
///
/// Output is byte-for-byte deterministic (LF line ends, minimal quoting), so the page's download
/// and the CLI's file compare equal.
pub fn write_csv<W: Write, R, I>(out: W, header: &[&str], rows: I) -> std::io::Result<()>
where
    I: IntoIterator<Item = R>,
    R: IntoIterator,
    R::Item: AsRef<[u8]>,
{
    let mut w = csv_writer(out);
    w.write_record(header)?;
    for row in rows {
        w.write_record(row)?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn csv_quotes_commas_quotes_and_newlines_only() {
        let mut buf = Vec::new();
        super::write_csv(
            &mut buf,
            &["name", "size"],
            vec![
                vec!["a,b", "1"],
                vec!["say \"hi\"", "2"],
                vec!["x\ny", "3"],
                vec!["plain", "4"],
            ],
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "name,size\n\"a,b\",1\n\"say \"\"hi\"\"\",2\n\"x\ny\",3\nplain,4\n"
        );
    }
}
