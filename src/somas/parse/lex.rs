//! Lexical helpers shared by the SOMAS dump parsers: TAB-separated fields, sigils (`%3T`, `#512S`,
//! `&0x1080…`), bracket lists, pointers printed as `0x…` or a bare `0`.
//!
//! Everything works on byte slices borrowed from the file buffer, so scanning a line allocates
//! nothing; a parser only copies what the model keeps (numbers, and names once, interned).

use crate::source::STOP_CHECK_BYTES;

/// A parse failure at a byte offset of the file; turned into a [`crate::diag::Diagnostic`] with a
/// line number only when reported, so the hot path never counts lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset of the start of the offending line (or of the end of the file).
    pub byte: u64,
    /// The field concerned (e.g. `life_start`), or empty for the whole line.
    pub field: String,
    /// What was found and what was expected.
    pub message: String,
}

impl ParseError {
    /// An error at `byte` in `field`.
    pub fn new(byte: u64, field: impl Into<String>, message: impl Into<String>) -> Self {
        ParseError {
            byte,
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The stop question of a parse whose load may be stopped (a dump read from a browser `File`,
/// [`crate::source::Source::check_stop`]): asked with the byte offset the parser is at, `Err`
/// (the stop, at that byte) ends the parse.
pub type StopCheck<'a> = &'a dyn Fn(u64) -> Result<(), ParseError>;

/// Asks a [`StopCheck`] every [`STOP_CHECK_BYTES`] of lines a sequential parser goes through;
/// without one it never asks, at the cost of one comparison per line.
pub struct Asker<'a> {
    check: Option<StopCheck<'a>>,
    next: u64,
}

impl<'a> Asker<'a> {
    /// Asks `check` (when given) first at `from` + [`STOP_CHECK_BYTES`], then every
    /// [`STOP_CHECK_BYTES`] after the last question.
    pub fn new(check: Option<StopCheck<'a>>, from: usize) -> Self {
        Asker {
            check,
            next: if check.is_some() {
                from as u64 + STOP_CHECK_BYTES
            } else {
                u64::MAX
            },
        }
    }

    /// The parser is at byte `at`: asks when a question is due.
    #[inline]
    pub fn at(&mut self, at: usize) -> Result<(), ParseError> {
        if at as u64 >= self.next {
            return self.ask(at as u64);
        }
        Ok(())
    }

    #[cold]
    fn ask(&mut self, at: u64) -> Result<(), ParseError> {
        if let Some(check) = self.check {
            check(at)?;
        }
        self.next = at.saturating_add(STOP_CHECK_BYTES);
        Ok(())
    }
}

/// Asks `check` (when given) at byte `at`: between two steps of a parse.
pub fn ask(check: Option<StopCheck<'_>>, at: usize) -> Result<(), ParseError> {
    check.map_or(Ok(()), |c| c(at as u64))
}

/// Iterates over the lines of `buf[start..end]`, yielding `(byte offset of the line, line)`
/// without the `\n` and without a trailing `\r` (CRLF files). The last line may lack `\n`.
pub struct Lines<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Lines<'a> {
    /// Lines of `buf[start..end]` (bounds are clamped to the buffer).
    pub fn new(buf: &'a [u8], start: usize, end: usize) -> Self {
        let end = end.min(buf.len());
        Lines {
            buf,
            pos: start.min(end),
            end,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.end {
            return None;
        }
        let rest = self.buf.get(self.pos..self.end)?;
        let at = self.pos;
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (rest.get(..i)?, self.pos + i + 1),
            None => (rest, self.end),
        };
        self.pos = next;
        Some((at, strip_cr(line)))
    }
}

/// `line` without one trailing `\r`.
pub fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// True for a line holding only spaces/tabs (section separators are runs of blank lines).
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| *b == b' ' || *b == b'\t')
}

/// Splits `line` on TAB into `out`; returns the number of fields (which may exceed `out.len()`,
/// in which case the extra fields are counted but not stored).
pub fn split_tabs<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> usize {
    let mut n = 0;
    for field in line.split(|b| *b == b'\t') {
        if let Some(slot) = out.get_mut(n) {
            *slot = field;
        }
        n += 1;
    }
    n
}

/// Parses an unsigned decimal (`size_t`); `None` on anything else or on overflow.
pub fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Parses an unsigned decimal that must fit in `u32` (ids, node indices).
pub fn parse_u32(b: &[u8]) -> Option<u32> {
    parse_u64(b).and_then(|v| u32::try_from(v).ok())
}

/// Parses a pointer printed by libstdc++ `operator<<(void*)`: `0` for null, else `0x` + lowercase
/// hex without padding. Uppercase hex and `0X` are accepted too, being harmless.
pub fn parse_ptr(b: &[u8]) -> Option<u64> {
    if b == b"0" {
        return Some(0);
    }
    let hex = b.strip_prefix(b"0x").or_else(|| b.strip_prefix(b"0X"))?;
    parse_hex(hex)
}

/// Parses bare hex digits (no prefix); `None` when empty, invalid or over 64 bits.
pub fn parse_hex(hex: &[u8]) -> Option<u64> {
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in hex {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u64::from(d);
    }
    Some(v)
}

/// Parses an address given by a user: `0x…` hex, or plain decimal.
pub fn parse_user_address(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        parse_hex(h.as_bytes())
    } else {
        parse_u64(s.as_bytes())
    }
}

/// `#<n>S` (a size).
pub fn size_sigil(b: &[u8]) -> Option<u64> {
    parse_u64(b.strip_prefix(b"#")?.strip_suffix(b"S")?)
}

/// `&<n>` (a decimal offset).
pub fn offset_sigil(b: &[u8]) -> Option<u64> {
    parse_u64(b.strip_prefix(b"&")?)
}

/// `&<ptr>` (an address, r1.x).
pub fn addr_sigil(b: &[u8]) -> Option<u64> {
    parse_ptr(b.strip_prefix(b"&")?)
}

/// The kind of an id written as `%<n>T`, `%<n>CT` or `%<n>P`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// `%<n>T`: data tensor (or, in v1.10, a control tensor line).
    Tensor,
    /// `%<n>CT`: control tensor.
    Control,
    /// `%<n>P`: parameter.
    Param,
}

/// Parses `%<n>T`, `%<n>CT` or `%<n>P`.
pub fn id_sigil(b: &[u8]) -> Option<(u32, IdKind)> {
    let body = b.strip_prefix(b"%")?;
    let (digits, kind) = if let Some(d) = body.strip_suffix(b"CT") {
        (d, IdKind::Control)
    } else if let Some(d) = body.strip_suffix(b"T") {
        (d, IdKind::Tensor)
    } else if let Some(d) = body.strip_suffix(b"P") {
        (d, IdKind::Param)
    } else {
        return None;
    };
    Some((parse_u32(digits)?, kind))
}

/// The text between the first `[` and the *last* `]` of `field`, after checking that the field
/// starts with `name[` (names may contain brackets, so never split on the first `]`).
pub fn list_body<'a>(field: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let rest = field.strip_prefix(name)?;
    if rest.first() != Some(&b'[') {
        return None;
    }
    let open = 0;
    let close = memchr::memrchr(b']', rest)?;
    rest.get(open + 1..close)
}

/// The items of a list body: separated by `", "` (node lists) or by spaces (union/contiguous
/// lists); a trailing separator and an empty list yield no empty item.
pub fn list_items(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    body.split(|b| *b == b',' || *b == b' ' || *b == b'\t')
        .filter(|item| !item.is_empty())
}

/// 1-based line number of byte offset `byte` in `buf` (counts `\n` before it).
pub fn line_of(buf: &[u8], byte: u64) -> u64 {
    let end = usize::try_from(byte).unwrap_or(usize::MAX).min(buf.len());
    buf.get(..end)
        .map_or(0, |b| memchr::memchr_iter(b'\n', b).count() as u64)
        + 1
}

/// Splits `buf[start..end]` into at most `parts` ranges that end on line boundaries, each at
/// least `min_bytes` long (except the last), for parsing in parallel.
pub fn split_at_lines(
    buf: &[u8],
    start: usize,
    end: usize,
    parts: usize,
    min_bytes: usize,
) -> Vec<(usize, usize)> {
    let end = end.min(buf.len());
    let start = start.min(end);
    let len = end - start;
    let parts = parts.max(1).min(len / min_bytes.max(1)).max(1);
    let mut out = Vec::with_capacity(parts);
    let mut at = start;
    for i in 1..parts {
        let target = start + len / parts * i;
        if target <= at {
            continue;
        }
        let cut = buf
            .get(target..end)
            .and_then(|rest| memchr::memchr(b'\n', rest))
            .map_or(end, |j| target + j + 1);
        if cut >= end {
            break;
        }
        out.push((at, cut));
        at = cut;
    }
    out.push((at, end));
    out
}

/// Longest line a SOMAS dump or task-info file may have, in bytes. Real lines are a few hundred
/// bytes (a node with 100,000 inputs would be about 1 MB).
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// The first line of `buf` longer than `max` bytes, as (byte offset of its start, length).
///
/// Cheap on real files: such a line covers at least one whole aligned window of `max / 2` bytes,
/// so only those windows are probed for a line end (a few bytes each), and only a window
/// without one is measured exactly.
pub fn find_long_line(buf: &[u8], max: usize) -> Option<(usize, usize)> {
    let w = (max / 2).max(1);
    let mut at = 0usize;
    while let Some(window) = buf.get(at..at.saturating_add(w)) {
        if memchr::memchr(b'\n', window).is_none() {
            let s = buf
                .get(..at)
                .and_then(|b| memchr::memrchr(b'\n', b))
                .map_or(0, |i| i + 1);
            let after = at + w;
            let e = buf
                .get(after..)
                .and_then(|b| memchr::memchr(b'\n', b))
                .map_or(buf.len(), |i| after + i);
            if e - s > max {
                return Some((s, e - s));
            }
        }
        at += w;
    }
    None
}

/// Aligned size of `size` bytes as Ascend SOMAS computes it (always at least 32 bytes more):
/// `((size + 512 + 31) / 512) * 512`.
pub fn ascend_align(size: u64) -> u64 {
    size.saturating_add(543) / 512 * 512
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_handle_crlf_and_no_final_newline() {
        let buf = b"a\r\nb\n\nc";
        let got: Vec<_> = Lines::new(buf, 0, buf.len()).collect();
        assert_eq!(
            got,
            vec![
                (0, &b"a"[..]),
                (3, &b"b"[..]),
                (5, &b""[..]),
                (6, &b"c"[..])
            ]
        );
    }

    #[test]
    fn sigils_and_pointers() {
        assert_eq!(size_sigil(b"#197120S"), Some(197120));
        assert_eq!(size_sigil(b"197120S"), None);
        assert_eq!(offset_sigil(b"&512"), Some(512));
        assert_eq!(addr_sigil(b"&0"), Some(0));
        assert_eq!(addr_sigil(b"&0x108080000200"), Some(0x1080_8000_0200));
        assert_eq!(addr_sigil(b"&0xZ"), None);
        assert_eq!(id_sigil(b"%12CT"), Some((12, IdKind::Control)));
        assert_eq!(id_sigil(b"%3T"), Some((3, IdKind::Tensor)));
        assert_eq!(id_sigil(b"%4P"), Some((4, IdKind::Param)));
        assert_eq!(id_sigil(b"%T"), None);
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(ascend_align(1024), 1536);
        assert_eq!(ascend_align(128), 512);
        assert_eq!(ascend_align(196608), 197120);
    }

    #[test]
    fn lists_take_the_last_bracket_and_drop_trailing_separators() {
        let body = list_body(b"inputs[%0T, %0P, ]", b"inputs").unwrap();
        let items: Vec<_> = list_items(body).collect();
        assert_eq!(items, vec![&b"%0T"[..], &b"%0P"[..]]);
        assert_eq!(
            list_items(list_body(b"inputs[]", b"inputs").unwrap()).count(),
            0
        );
        assert_eq!(list_body(b"outputs[%1T, ]", b"inputs"), None);
        let union = list_body(b"union tensors: [%3T %7T ]", b"union tensors: ");
        assert_eq!(list_items(union.unwrap()).count(), 2);
        assert_eq!(list_body(b"x[a[b]c]", b"x"), Some(&b"a[b]c"[..]));
    }

    #[test]
    fn splits_land_on_line_ends() {
        let buf = b"aaaa\nbbbb\ncccc\ndddd\n";
        let parts = split_at_lines(buf, 0, buf.len(), 3, 1);
        assert_eq!(parts.first().unwrap().0, 0);
        assert_eq!(parts.last().unwrap().1, buf.len());
        for w in parts.windows(2) {
            assert_eq!(w[0].1, w[1].0);
            assert_eq!(buf[w[0].1 - 1], b'\n');
        }
        assert_eq!(line_of(buf, 10), 3);
    }

    #[test]
    fn long_lines_are_found_exactly() {
        // Against a plain scan, for every cap and line layout of small buffers.
        let brute = |buf: &[u8], max: usize| {
            let mut start = 0;
            let ends = buf.iter().copied().chain([b'\n']).enumerate();
            for (i, c) in ends {
                if c == b'\n' {
                    if i - start > max {
                        return Some((start, i - start));
                    }
                    start = i + 1;
                }
            }
            None
        };
        let mut x: u64 = 7;
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 200) as usize;
            let buf: Vec<u8> = (0..len)
                .map(|k| {
                    if (x >> (k % 60)) % 11 == 0 {
                        b'\n'
                    } else {
                        b'a'
                    }
                })
                .collect();
            let max = 1 + (x >> 8) as usize % 40;
            assert_eq!(find_long_line(&buf, max), brute(&buf, max), "{buf:?} {max}");
        }
    }
}
