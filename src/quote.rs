//! Input bytes quoted in a message, the same way by every reader.
//!
//! A reader that shows the user a piece of its input (a CSV header that is not the one expected,
//! a field that is not a number, a SOMAS line, the first bytes of a file that is not an SQLite
//! database or a pickle) quotes it with [`quote`]. Input can be anything: a megabyte without a
//! line end, binary noise, bytes that are not UTF-8, terminal control codes. The quote is short,
//! shows every byte it keeps unambiguously, and says how much it left out, so that a message about
//! a wrong file reads the same whichever reader wrote it. A reader that looks at only a few bytes
//! of a longer input (the start of a file, the bytes at a place of damage) quotes them with
//! [`quote_part`], which counts the input after them as left out too: such a quote must not look
//! like the whole file.

use std::fmt::Write;

/// The longest quote of a field, a line or a few leading bytes, in characters between the quotes.
pub const SHORT: usize = 60;

/// The longest quote of a header line, in characters between the quotes.
pub const LONG: usize = 200;

/// `bytes` as a double-quoted string for a message, with at most `max` characters between the
/// quotes.
///
/// Text in any script is kept as it is. `"` and `\` get a backslash; TAB, LF and CR read `\t`,
/// `\n` and `\r`; other ASCII control bytes and bytes that are not UTF-8 read `\xNN`; other
/// characters that do not print (Unicode controls, bidirectional overrides, a byte-order mark)
/// read `\u{N}`. An escape is never split. When not all of `bytes` fits, an ellipsis follows the
/// closing quote with the count of bytes left out: `"abc"… (120 more bytes)`.
///
/// Only the bytes shown are looked at, so quoting the start of a large buffer is cheap.
pub fn quote(bytes: &[u8], max: usize) -> String {
    quote_part(bytes, max, 0)
}

/// [`quote`] of `bytes` taken from an input in which `after` more bytes follow them (a reader
/// that read only a few bytes of a file knows its length): those are counted with the bytes of
/// `bytes` left out, in the same words, `"PK\x03\x04"… (2040 more bytes)`. With `after` 0 it is
/// [`quote`].
pub fn quote_part(bytes: &[u8], max: usize, after: u64) -> String {
    let mut out = String::with_capacity(max.min(bytes.len() * 4) + 2);
    out.push('"');
    let mut width = 0;
    let mut used = 0;
    'chunks: for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            let start = out.len();
            match c {
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if c.is_ascii_control() => {
                    let _ = write!(out, "\\x{:02x}", u32::from(c));
                }
                // A quote is not an escape here; `char::escape_debug` would give it a backslash.
                '\'' => out.push('\''),
                c => out.extend(c.escape_debug()),
            }
            let added = out[start..].chars().count();
            if width + added > max {
                out.truncate(start);
                break 'chunks;
            }
            width += added;
            used += c.len_utf8();
        }
        for &b in chunk.invalid() {
            if width + 4 > max {
                break 'chunks;
            }
            let _ = write!(out, "\\x{b:02x}");
            width += 4;
            used += 1;
        }
    }
    out.push('"');
    let left = ((bytes.len() - used) as u64).saturating_add(after);
    if left > 0 {
        let _ = write!(
            out,
            "… ({left} more byte{})",
            if left == 1 { "" } else { "s" }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_kept_and_what_is_not_text_is_escaped() {
        assert_eq!(quote(b"Name,Size(KB)", SHORT), r#""Name,Size(KB)""#);
        assert_eq!(
            quote("算子,内存 it's".as_bytes(), SHORT),
            "\"算子,内存 it's\""
        );
        assert_eq!(quote(b"a\tb\r\n\"q\"\\", SHORT), r#""a\tb\r\n\"q\"\\""#);
        assert_eq!(
            quote(b"\x00\x01\x1b[31m\x7f", SHORT),
            r#""\x00\x01\x1b[31m\x7f""#
        );
        // Not UTF-8: a lone continuation byte, a cut sequence, 0xff.
        assert_eq!(
            quote(b"a\x80b\xe7\xae\xffc", SHORT),
            r#""a\x80b\xe7\xae\xffc""#
        );
        // Characters that do not print: a right-to-left override, a byte-order mark.
        assert_eq!(
            quote("x\u{202e}y\u{feff}".as_bytes(), SHORT),
            r#""x\u{202e}y\u{feff}""#
        );
        assert_eq!(quote(b"", SHORT), r#""""#);
    }

    #[test]
    fn a_long_input_is_cut_between_escapes_and_the_rest_counted() {
        let long = vec![b'a'; 1000];
        assert_eq!(
            quote(&long, 10),
            format!("\"{}\"… (990 more bytes)", "a".repeat(10))
        );
        // 3 escapes of 4 characters fit in 13; the fourth would be cut, so it is left out.
        assert_eq!(quote(&[0xff; 5], 13), r#""\xff\xff\xff"… (2 more bytes)"#);
        assert_eq!(quote(b"ab\x00", 5), r#""ab"… (1 more byte)"#);
        // Wide characters count as one; their bytes are counted in what is left.
        assert_eq!(quote("内存内存".as_bytes(), 2), "\"内存\"… (6 more bytes)");
        // Exactly full: nothing left, no ellipsis.
        assert_eq!(quote(b"abcd", 4), r#""abcd""#);
    }

    #[test]
    fn a_part_of_a_longer_input_counts_the_bytes_after_it() {
        // All of the part shown, the input going on: the bytes after it are counted.
        assert_eq!(
            quote_part(b"PK\x03\x04", SHORT, 1),
            r#""PK\x03\x04"… (1 more byte)"#
        );
        assert_eq!(
            quote_part(b"abc", SHORT, 5_000_000_000),
            r#""abc"… (5000000000 more bytes)"#
        );
        // Cut inside the part too: both counted, in the same words as `quote`'s.
        assert_eq!(quote_part(b"abcdef", 4, 10), r#""abcd"… (12 more bytes)"#);
        // The whole input: nothing follows, nothing is said.
        assert_eq!(quote_part(b"abc", SHORT, 0), r#""abc""#);
        assert_eq!(quote_part(b"", SHORT, 2), r#"""… (2 more bytes)"#);
        assert_eq!(
            quote_part(b"x", SHORT, u64::MAX),
            r#""x"… (18446744073709551615 more bytes)"#
        );
    }

    #[test]
    fn any_bytes_give_a_bounded_quote_that_counts_every_byte() {
        let mut x: u32 = 12345;
        for len in 0..300 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect();
            let q = quote(&bytes, SHORT);
            let (body, tail) = match q.rfind("\"…") {
                Some(k) => (&q[1..k], &q[k + 1..]),
                None => (&q[1..q.len() - 1], ""),
            };
            assert!(body.chars().count() <= SHORT, "{q}");
            assert!(body.chars().all(|c| !c.is_control()), "{q}");
            if let Some(n) = tail.strip_prefix("… (") {
                let n: usize = n.split(' ').next().unwrap().parse().unwrap();
                assert!(n > 0 && n <= len, "{q}");
            }
        }
    }
}
