//! Varints and records: how SQLite stores one row's values.
//!
//! A varint is 1–9 bytes, big-endian, seven bits a byte with the high bit saying "more follows";
//! the ninth byte, if reached, gives all eight bits. A record is a header (its own length as a
//! varint, then one *serial type* per column) followed by the column values back to back; the
//! serial type says both the type and the length of each value:
//!
//! | serial type | value |
//! |---|---|
//! | 0 | NULL |
//! | 1, 2, 3, 4, 5, 6 | big-endian two's-complement integer of 1, 2, 3, 4, 6, 8 bytes |
//! | 7 | big-endian IEEE 754 double |
//! | 8, 9 | the integers 0 and 1 (no bytes) |
//! | 10, 11 | reserved (never in a valid file) |
//! | even N ≥ 12 | a blob of (N − 12) / 2 bytes |
//! | odd N ≥ 13 | a text of (N − 13) / 2 bytes (UTF-8 here) |

use super::DbError;

/// Reads the varint at `b[i..]`: `(value, bytes used)`, or `None` when `b` ends first.
pub fn varint(b: &[u8], i: usize) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for k in 0..9 {
        let byte = *b.get(i.checked_add(k)?)?;
        if k == 8 {
            return Some(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, k + 1));
        }
    }
    None
}

/// One value of a record (text and blobs borrow the record's bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// NULL (also a column the record does not reach: added to the table after the row).
    Null,
    /// An integer (serial types 1–6, 8, 9, and the rowid of an `INTEGER PRIMARY KEY` column).
    Integer(i64),
    /// A double (serial type 7).
    Real(f64),
    /// Text bytes (UTF-8 in the databases this reader accepts; not checked here).
    Text(&'a [u8]),
    /// A blob.
    Blob(&'a [u8]),
}

impl Value<'_> {
    /// The SQLite type name of the value, for messages: `null`, `integer`, `real`, `text`, `blob`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Integer(_) => "integer",
            Value::Real(_) => "real",
            Value::Text(_) => "text",
            Value::Blob(_) => "blob",
        }
    }
}

/// Bytes a value of serial type `st` takes in the record body; `None` for the reserved types.
pub fn serial_len(st: u64) -> Option<u64> {
    Some(match st {
        0 | 8 | 9 => 0,
        1 => 1,
        2 => 2,
        3 => 3,
        4 => 4,
        5 => 6,
        6 | 7 => 8,
        10 | 11 => return None,
        n => (n - 12) / 2,
    })
}

/// Where one column's value sits in a record: its serial type and the offset of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Serial type.
    pub serial: u64,
    /// Offset of the value's bytes in the payload.
    pub at: usize,
}

/// Splits the record `payload` into column slots (appended to `out`, which is cleared first).
///
/// `at` is the file offset the record is reported under when it is damaged.
pub fn decode_header(payload: &[u8], out: &mut Vec<Slot>, at: u64) -> Result<(), DbError> {
    out.clear();
    let bad = |what: &str| DbError::at(at, format!("damaged record: {what}"));
    let (hlen, n) = varint(payload, 0).ok_or_else(|| bad("its header length is cut off"))?;
    let hlen = usize::try_from(hlen).unwrap_or(usize::MAX);
    if hlen < n || hlen > payload.len() {
        return Err(bad(&format!(
            "header of {hlen} bytes in a record of {} bytes",
            payload.len()
        )));
    }
    let mut i = n;
    let mut body = hlen;
    while i < hlen {
        let (st, k) = varint(payload, i)
            .filter(|&(_, k)| i + k <= hlen)
            .ok_or_else(|| bad("a serial type runs past the header"))?;
        i += k;
        let len = serial_len(st)
            .ok_or_else(|| bad(&format!("serial type {st} is reserved and never written")))?;
        let end = (body as u64).saturating_add(len);
        if end > payload.len() as u64 {
            return Err(bad(&format!(
                "column {} needs bytes {body}..{end}, the record has {}",
                out.len() + 1,
                payload.len()
            )));
        }
        out.push(Slot {
            serial: st,
            at: body,
        });
        body = end as usize;
    }
    Ok(())
}

/// The value in `slot` of `payload` (checked by [`decode_header`]; out-of-range reads give NULL).
pub fn value(payload: &[u8], slot: Slot) -> Value<'_> {
    let len = serial_len(slot.serial).unwrap_or(0) as usize;
    let Some(bytes) = slot
        .at
        .checked_add(len)
        .and_then(|end| payload.get(slot.at..end))
    else {
        return Value::Null;
    };
    match slot.serial {
        0 => Value::Null,
        8 => Value::Integer(0),
        9 => Value::Integer(1),
        1..=6 => {
            // Sign-extend from the first byte, then shift the rest in.
            let mut v: i64 = if bytes.first().is_some_and(|&b| b & 0x80 != 0) {
                -1
            } else {
                0
            };
            for &b in bytes {
                v = (v << 8) | i64::from(b);
            }
            Value::Integer(v)
        }
        7 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(bytes);
            Value::Real(f64::from_be_bytes(a))
        }
        n if n % 2 == 0 => Value::Blob(bytes),
        _ => Value::Text(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_every_length() {
        assert_eq!(varint(&[0x05], 0), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0), Some((128, 2)));
        // 9 bytes: eight 7-bit groups then a full byte.
        let nine = [0xff; 9];
        assert_eq!(varint(&nine, 0), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81], 0), None);
        assert_eq!(varint(&[], 0), None);
    }

    #[test]
    fn record_with_every_serial_type() {
        // Header of 10 bytes: types 0, 1, 2, 7, 8, 9, text "abc" (13 + 2·3), a 2-byte blob
        // (12 + 2·2), 6.
        let mut p = vec![10u8, 0, 1, 2, 7, 8, 9, 19, 16, 6];
        p.push(0xfe); // int8 -2
        p.extend_from_slice(&[0x01, 0x00]); // 256
        p.extend_from_slice(&1.5f64.to_be_bytes());
        p.extend_from_slice(b"abc");
        p.extend_from_slice(&[0xde, 0xad]);
        p.extend_from_slice(&1_736_407_067_941_861_830i64.to_be_bytes());
        let mut slots = Vec::new();
        decode_header(&p, &mut slots, 0).unwrap();
        let v: Vec<Value> = slots.iter().map(|&s| value(&p, s)).collect();
        assert_eq!(
            v,
            vec![
                Value::Null,
                Value::Integer(-2),
                Value::Integer(256),
                Value::Real(1.5),
                Value::Integer(0),
                Value::Integer(1),
                Value::Text(b"abc"),
                Value::Blob(&[0xde, 0xad]),
                Value::Integer(1_736_407_067_941_861_830),
            ]
        );
    }

    #[test]
    fn damaged_records_are_errors() {
        let mut s = Vec::new();
        // Header longer than the record.
        assert!(decode_header(&[9, 1], &mut s, 7).is_err());
        // Reserved serial type.
        let e = decode_header(&[2, 10], &mut s, 7).unwrap_err();
        assert!(e.message.contains("reserved"), "{e:?}");
        assert_eq!(e.offset, Some(7));
        // Body shorter than the types say.
        assert!(decode_header(&[2, 6, 0, 0], &mut s, 0).is_err());
    }
}
