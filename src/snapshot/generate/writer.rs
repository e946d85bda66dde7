//! A pickle writer for the generator: the opcodes Python's pickler uses for dicts, lists, tuples,
//! strings, ints, floats and bools, with memoization under the caller's control (so shared
//! frames and frame lists are written once and referenced after, as in real snapshots).
//!
//! Protocol 4 and 5 memoize with `MEMOIZE`; protocols 2 and 3 with `BINPUT`/`LONG_BINPUT`, and
//! write strings as `BINUNICODE` (no `SHORT_BINUNICODE` before protocol 4). No `FRAME` opcodes:
//! they are optional for readers.

use std::collections::HashMap;
use std::io::{self, Write};

/// Writes pickle opcodes to `W`, counting bytes and memo entries.
pub struct PickleWriter<W: Write> {
    out: W,
    protocol: u8,
    memo_len: u32,
    bytes: u64,
    strings: HashMap<String, u32>,
}

impl<W: Write> PickleWriter<W> {
    /// Starts a pickle of `protocol` (2 to 5) on `out`.
    pub fn new(out: W, protocol: u8) -> io::Result<Self> {
        let mut w = PickleWriter {
            out,
            protocol: protocol.clamp(2, 5),
            memo_len: 0,
            bytes: 0,
            strings: HashMap::new(),
        };
        w.raw(&[0x80, w.protocol])?;
        Ok(w)
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Ends the pickle (`STOP`) and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.raw(b".")?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.bytes += b.len() as u64;
        self.out.write_all(b)
    }

    /// Stores the top of the stack in the memo; returns its index.
    pub fn memoize(&mut self) -> io::Result<u32> {
        let i = self.memo_len;
        self.memo_len += 1;
        if self.protocol >= 4 {
            self.raw(&[0x94])?;
        } else if i < 256 {
            self.raw(&[b'q', i as u8])?;
        } else {
            let mut b = [b'r', 0, 0, 0, 0];
            b[1..].copy_from_slice(&i.to_le_bytes());
            self.raw(&b)?;
        }
        Ok(i)
    }

    /// Pushes memo entry `i`.
    pub fn get(&mut self, i: u32) -> io::Result<()> {
        if i < 256 {
            self.raw(&[b'h', i as u8])
        } else {
            let mut b = [b'j', 0, 0, 0, 0];
            b[1..].copy_from_slice(&i.to_le_bytes());
            self.raw(&b)
        }
    }

    /// `EMPTY_DICT` + memo.
    pub fn dict(&mut self) -> io::Result<u32> {
        self.raw(b"}")?;
        self.memoize()
    }

    /// `EMPTY_LIST` + memo.
    pub fn list(&mut self) -> io::Result<u32> {
        self.raw(b"]")?;
        self.memoize()
    }

    /// `MARK`.
    pub fn mark(&mut self) -> io::Result<()> {
        self.raw(b"(")
    }

    /// `SETITEMS` (pairs since the mark).
    pub fn setitems(&mut self) -> io::Result<()> {
        self.raw(b"u")
    }

    /// `SETITEM` (one pair, no mark).
    pub fn setitem(&mut self) -> io::Result<()> {
        self.raw(b"s")
    }

    /// `APPENDS` (items since the mark).
    pub fn appends(&mut self) -> io::Result<()> {
        self.raw(b"e")
    }

    /// `APPEND` (one item, no mark).
    pub fn append(&mut self) -> io::Result<()> {
        self.raw(b"a")
    }

    /// A string, memoized; a string written before is referenced from the memo.
    pub fn str(&mut self, s: &str) -> io::Result<()> {
        if let Some(&i) = self.strings.get(s) {
            return self.get(i);
        }
        let n = s.len();
        if self.protocol >= 4 && n < 256 {
            self.raw(&[0x8c, n as u8])?;
        } else {
            let mut b = [b'X', 0, 0, 0, 0];
            b[1..].copy_from_slice(&(n as u32).to_le_bytes());
            self.raw(&b)?;
        }
        self.raw(s.as_bytes())?;
        let i = self.memoize()?;
        self.strings.insert(s.to_string(), i);
        Ok(())
    }

    /// An integer in the shortest form Python's pickler uses.
    pub fn int(&mut self, v: i64) -> io::Result<()> {
        if (0..256).contains(&v) {
            self.raw(&[b'K', v as u8])
        } else if (0..65536).contains(&v) {
            let b = (v as u16).to_le_bytes();
            self.raw(&[b'M', b[0], b[1]])
        } else if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
            let mut b = [b'J', 0, 0, 0, 0];
            b[1..].copy_from_slice(&(v as i32).to_le_bytes());
            self.raw(&b)
        } else {
            // LONG1: minimal two's complement, little-endian.
            let bytes = v.to_le_bytes();
            let mut n = 8;
            while n > 1 {
                let top = bytes[n - 1];
                let next_sign = bytes[n - 2] & 0x80;
                if (top == 0 && next_sign == 0) || (top == 0xff && next_sign != 0) {
                    n -= 1;
                } else {
                    break;
                }
            }
            self.raw(&[0x8a, n as u8])?;
            self.raw(&bytes[..n])
        }
    }

    /// A float (`BINFLOAT`).
    pub fn float(&mut self, v: f64) -> io::Result<()> {
        self.raw(b"G")?;
        self.raw(&v.to_be_bytes())
    }

    /// A bool.
    pub fn bool(&mut self, v: bool) -> io::Result<()> {
        self.raw(&[if v { 0x88 } else { 0x89 }])
    }

    /// A 2-tuple of ints (`TUPLE2`), memoized as Python does.
    pub fn pair(&mut self, a: i64, b: i64) -> io::Result<()> {
        self.int(a)?;
        self.int(b)?;
        self.raw(&[0x86])?;
        self.memoize().map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_use_the_shortest_opcode() {
        let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
        for v in [
            0,
            255,
            256,
            65535,
            65536,
            -1,
            1 << 40,
            -(1 << 40),
            i64::MAX,
            i64::MIN,
        ] {
            w.int(v).unwrap();
        }
        let b = w.finish().unwrap();
        assert_eq!(&b[..2], &[0x80, 4]);
        assert_eq!(&b[2..4], &[b'K', 0]);
        assert_eq!(&b[4..6], &[b'K', 255]);
        assert_eq!(&b[6..9], &[b'M', 0, 1]);
        assert_eq!(&b[9..12], &[b'M', 255, 255]);
        assert_eq!(&b[12..17], &[b'J', 0, 0, 1, 0]);
        assert_eq!(&b[17..22], &[b'J', 255, 255, 255, 255]);
        // 1 << 40: six bytes, top byte 0x01.
        assert_eq!(&b[22..30], &[0x8a, 6, 0, 0, 0, 0, 0, 1]);
    }
}
