//! The structural lexing of a JSON event array: strings, nested values, objects, and the probable
//! boundaries between top-level events. Nothing here knows what an event means.

use memchr::{memchr, memchr2};

/// JSON whitespace.
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// The first non-blank byte at or after `i`.
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|&c| is_ws(c)) {
        i += 1;
    }
    i
}

/// End (exclusive) of the string starting at `i` (`b[i] == '"'`); `None` if the buffer ends first.
/// Long strings are finished by blocks where this build has SIMD ([`super::blocks::string_end`]).
///
/// Member names and most short values end within the first 8 bytes: that word is tested here,
/// inlined into the caller, and only longer strings or strings with an escape pay for a call.
#[inline(always)]
pub fn scan_string(b: &[u8], i: usize) -> Option<usize> {
    if let Some(chunk) = b.get(i + 1..i + 9) {
        let mut w8 = [0u8; 8];
        w8.copy_from_slice(chunk);
        let w = u64::from_le_bytes(w8);
        let q = w ^ (ONES * u64::from(b'"'));
        let e = w ^ (ONES * u64::from(b'\\'));
        let quotes = q.wrapping_sub(ONES) & !q & HIGH;
        let escapes = e.wrapping_sub(ONES) & !e & HIGH;
        // The first quote ends the string when no backslash comes before it. (The zero-byte test
        // can flag a byte after a true hit by its borrow, never one before the first true hit.)
        if quotes != 0 && (escapes == 0 || quotes.trailing_zeros() < escapes.trailing_zeros()) {
            return Some(i + 2 + (quotes.trailing_zeros() / 8) as usize);
        }
    }
    scan_string_long(b, i)
}

/// [`scan_string`] past its first word, out of line.
#[inline(never)]
fn scan_string_long(b: &[u8], i: usize) -> Option<usize> {
    scan_string_by(b, i, super::blocks::HAS_SIMD)
}

/// Eight bytes of 1 and of 0x80, for the zero-byte tests of the SWAR searches.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// [`scan_string`] byte by byte (`memchr` from escape to escape): the reference the block search
/// is tested against, and the string walk of [`skip_nested_scalar`].
pub fn scan_string_scalar(b: &[u8], i: usize) -> Option<usize> {
    scan_string_by(b, i, false)
}

/// [`scan_string`], with long strings finished by blocks when `blocks` is true.
#[inline(always)]
fn scan_string_by(b: &[u8], i: usize, blocks: bool) -> Option<usize> {
    let mut j = i + 1;
    // Most strings (member names, numbers as text, short names) end within a few words: test 8
    // bytes at a time for `"` or `\` (SWAR), and hand long strings (call stacks) to `memchr`.
    let mut words = 0;
    while words < 6 {
        let Some(chunk) = b.get(j..j + 8) else { break };
        let mut w8 = [0u8; 8];
        w8.copy_from_slice(chunk);
        let w = u64::from_le_bytes(w8);
        let q = w ^ (ONES * u64::from(b'"'));
        let e = w ^ (ONES * u64::from(b'\\'));
        let hit = (q.wrapping_sub(ONES) & !q & HIGH) | (e.wrapping_sub(ONES) & !e & HIGH);
        if hit != 0 {
            let k = j + (hit.trailing_zeros() / 8) as usize;
            if b.get(k) == Some(&b'"') {
                return Some(k + 1);
            }
            // An escape: skip it and the escaped byte, then continue word by word.
            j = k + 2;
        } else {
            j += 8;
        }
        words += 1;
    }
    if blocks && super::blocks::kernel() != super::blocks::Kernel::Scalar {
        return super::blocks::string_end(b, j);
    }
    loop {
        let k = j + memchr2(b'"', b'\\', b.get(j..)?)?;
        if b.get(k) == Some(&b'\\') {
            j = k + 2;
        } else {
            return Some(k + 1);
        }
    }
}

/// The outcome of scanning one value or object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// Value/object ends here (exclusive).
    Done(usize),
    /// The buffer ended inside.
    Cut,
    /// Not valid JSON at this offset.
    Bad(usize, &'static str),
}

/// Byte classes of the structural scan: 0 = other, 1 = `"`, 2 = `{`/`[`, 3 = `}`/`]`.
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = 1;
    t[b'{' as usize] = 2;
    t[b'[' as usize] = 2;
    t[b'}' as usize] = 3;
    t[b']' as usize] = 3;
    t
};

/// End of the object or array starting at `i`. It does not validate the JSON inside (only kept
/// events are parsed fully, by [`scan_object`]). Where this build has SIMD, the block scan of
/// [`super::blocks`]; elsewhere [`skip_nested_scalar`], which is faster than blocks classified
/// byte by byte.
pub fn skip_nested(b: &[u8], i: usize) -> Scan {
    if super::blocks::HAS_SIMD && super::blocks::kernel() != super::blocks::Kernel::Scalar {
        super::blocks::skip_nested_blocks(b, i)
    } else {
        skip_nested_scalar(b, i)
    }
}

/// End of the object or array starting at `i`, byte by byte: a tight loop over structural bytes
/// that jumps through strings with `memchr`. The reference the block scan is tested against.
pub fn skip_nested_scalar(b: &[u8], i: usize) -> Scan {
    let mut depth = 0usize;
    let mut j = i;
    let n = b.len();
    while j < n {
        // `j < n`, so this index cannot fail.
        match CLASS[b[j] as usize] {
            0 => {
                j = skip_plain(b, j + 1);
                continue;
            }
            1 => match scan_string_scalar(b, j) {
                Some(e) => {
                    j = e;
                    continue;
                }
                None => return Scan::Cut,
            },
            2 => depth += 1,
            _ => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Scan::Done(j + 1);
                }
            }
        }
        j += 1;
    }
    Scan::Cut
}

/// From `j`, the first byte that may be structural (`"`, `{`, `}`, `[`, `]`) outside strings,
/// 8 bytes at a time: `(x & 0xD9) == 0x59` holds for the four brackets (and for `Y`, `_`, `y`,
/// DEL, which cannot occur outside strings in JSON; a false hit only costs one table look-up).
pub fn skip_plain(b: &[u8], mut j: usize) -> usize {
    while let Some(chunk) = b.get(j..j + 8) {
        let mut w8 = [0u8; 8];
        w8.copy_from_slice(chunk);
        let w = u64::from_le_bytes(w8);
        let br = (w & (ONES * 0xD9)) ^ (ONES * 0x59);
        let q = w ^ (ONES * u64::from(b'"'));
        let hit = (br.wrapping_sub(ONES) & !br & HIGH) | (q.wrapping_sub(ONES) & !q & HIGH);
        if hit != 0 {
            return j + (hit.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    j
}

/// Skips one JSON value starting at `i`.
pub fn skip_value(b: &[u8], i: usize) -> Scan {
    match b.get(i) {
        None => Scan::Cut,
        Some(b'"') => scan_string(b, i).map_or(Scan::Cut, Scan::Done),
        Some(b'{') | Some(b'[') => skip_nested(b, i),
        Some(_) => {
            let mut j = i;
            while let Some(&c) = b.get(j) {
                if c == b',' || c == b'}' || c == b']' || is_ws(c) {
                    return if j == i {
                        Scan::Bad(i, "expected a value")
                    } else {
                        Scan::Done(j)
                    };
                }
                j += 1;
            }
            Scan::Cut
        }
    }
}

/// Walks the members of the object at `i` (`b[i] == '{'`), calling `on(key, value_start,
/// value_end)` for each; returns the end of the object.
pub fn scan_object(b: &[u8], i: usize, on: &mut dyn FnMut(&[u8], usize, usize)) -> Scan {
    scan_object_with(b, i, &mut |k, s, e| {
        if let Some(e) = e {
            on(k, s, e);
        }
        None
    })
}

/// What [`scan_object_with`] calls per member: `(key, value_start, value_end once skipped)`,
/// returning where the value ends when the caller read it itself.
pub type OnMember<'a> = dyn FnMut(&[u8], usize, Option<usize>) -> Option<usize> + 'a;

/// [`scan_object`] for a reader that reads some values itself as the walk meets them (a nested
/// object it wants, read once instead of skipped and then walked again): for each member,
/// `on(key, value_start, None)` is called first, and may return where the value ends; otherwise
/// the value is skipped and `on(key, value_start, Some(value_end))` is called.
pub fn scan_object_with(b: &[u8], i: usize, on: &mut OnMember<'_>) -> Scan {
    let j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Scan::Done(j + 1);
    }
    members_from(b, j, on)
}

/// [`scan_object_with`] going on after a member whose value ends at `vend`, for a reader that
/// walked the members up to there itself (and called `on` for each as this walk would have).
pub fn scan_object_after(b: &[u8], vend: usize, on: &mut OnMember<'_>) -> Scan {
    match next_member(b, vend) {
        Ok(j) => members_from(b, j, on),
        Err(end) => end,
    }
}

/// The members of an object from the member name at `j` to the object's end.
#[inline(always)]
fn members_from(b: &[u8], mut j: usize, on: &mut OnMember<'_>) -> Scan {
    loop {
        match b.get(j) {
            None => return Scan::Cut,
            Some(b'"') => {}
            Some(_) => return Scan::Bad(j, "expected a member name in quotes"),
        }
        let Some(kend) = scan_string(b, j) else {
            return Scan::Cut;
        };
        let key = b.get(j + 1..kend - 1).unwrap_or(&[]);
        j = skip_ws(b, kend);
        match b.get(j) {
            None => return Scan::Cut,
            Some(b':') => {}
            Some(_) => return Scan::Bad(j, "expected ':' after a member name"),
        }
        j = skip_ws(b, j + 1);
        let vend = match on(key, j, None) {
            Some(e) => e,
            None => match skip_value(b, j) {
                Scan::Done(e) => {
                    on(key, j, Some(e));
                    e
                }
                other => return other,
            },
        };
        match next_member(b, vend) {
            Ok(next) => j = next,
            Err(end) => return end,
        }
    }
}

/// After a member's value ending at `vend`: the next member name's place (`Ok`), or the object's
/// end, its cut or its damage (`Err`).
#[inline(always)]
fn next_member(b: &[u8], vend: usize) -> Result<usize, Scan> {
    let j = skip_ws(b, vend);
    match b.get(j) {
        None => Err(Scan::Cut),
        Some(b',') => Ok(skip_ws(b, j + 1)),
        Some(b'}') => Err(Scan::Done(j + 1)),
        Some(_) => Err(Scan::Bad(j, "expected ',' or '}' after a member")),
    }
}

/// The text of a scalar value span, quotes removed.
pub fn unquote(v: &[u8]) -> &[u8] {
    if v.len() >= 2 && v.first() == Some(&b'"') && v.last() == Some(&b'"') {
        v.get(1..v.len() - 1).unwrap_or(&[])
    } else {
        v
    }
}

/// A JSON string span decoded (escapes resolved); `None` for a non-string.
pub fn str_of(v: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    if v.first() != Some(&b'"') {
        return None;
    }
    let inner = unquote(v);
    if memchr(b'\\', inner).is_none() {
        return std::str::from_utf8(inner)
            .ok()
            .map(std::borrow::Cow::Borrowed);
    }
    serde_json::from_slice::<String>(v)
        .ok()
        .map(std::borrow::Cow::Owned)
}

/// Like [`str_of`], but a string that does not decode (bytes that are not UTF-8, a bad escape) is
/// still returned, its raw bytes decoded lossily; the flag says so.
pub fn str_lossy(v: &[u8]) -> Option<(std::borrow::Cow<'_, str>, bool)> {
    if v.first() != Some(&b'"') {
        return None;
    }
    match str_of(v) {
        Some(s) => Some((s, false)),
        None => Some((String::from_utf8_lossy(unquote(v)), true)),
    }
}

/// A skip over damage to the next probable event start. It may run past the end of the bytes at
/// hand and go on in the next batch: what it looks for next to a `{` is kept in it, so that the
/// damage is reported once, where it starts, however the file is cut into batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skip {
    /// Damage inside an event: the next `{` preceded (blanks aside) by `,` and `}`, as between
    /// two events. Otherwise garbage between events: the next `{` preceded by `,`.
    in_event: bool,
    /// The last two bytes other than blanks before the bytes being searched (the nearer one
    /// last; zero for none), read by the previous batch.
    before: [u8; 2],
}

impl Skip {
    /// A skip over damage inside an event (`true`) or between events, starting in the bytes at
    /// hand.
    pub fn new(in_event: bool) -> Self {
        Skip {
            in_event,
            before: [0; 2],
        }
    }

    /// The next event start in `b` at or after `from`; or, when `b` holds none, the skip to go
    /// on with in the bytes that follow `b`.
    pub fn find(self, b: &[u8], from: usize) -> Result<usize, Skip> {
        let mut i = from;
        loop {
            let Some(k) = b.get(i..).and_then(|r| memchr(b'{', r)).map(|p| i + p) else {
                return Err(Skip {
                    before: self.last_two(b, b.len()),
                    ..self
                });
            };
            let [second, first] = self.last_two(b, k);
            if first == b',' && (!self.in_event || second == b'}') {
                return Ok(k);
            }
            i = k + 1;
        }
    }

    /// The last byte other than blanks the skip passed (zero for none): `]` at the file's end
    /// closes the array.
    pub fn last(self) -> u8 {
        self.before[1]
    }

    /// The last two bytes other than blanks before `b[k]`, the ones before `b` filling in.
    fn last_two(self, b: &[u8], k: usize) -> [u8; 2] {
        let mut seen = b
            .get(..k)
            .unwrap_or(&[])
            .iter()
            .rev()
            .filter(|&&c| !is_ws(c));
        match (seen.next(), seen.next()) {
            (Some(&first), Some(&second)) => [second, first],
            (Some(&first), None) => [self.before[1], first],
            _ => self.before,
        }
    }
}

/// Next probable event start at or after `from`: a `{` preceded (blanks aside) by `,` and `}`.
pub fn next_boundary(b: &[u8], from: usize) -> Option<usize> {
    Skip::new(true).find(b, from).ok()
}

/// Finds the end of a JSON value that started at a `{` or `[` given in pieces, keeping only its
/// nesting depth and string state (to skip an event too large to hold).
#[derive(Debug, Default)]
pub struct Skipper {
    depth: usize,
    in_str: bool,
    esc: bool,
}

impl Skipper {
    /// Feeds the next bytes; `Some(i)` when the value ends just before `b[i]`.
    pub fn feed(&mut self, b: &[u8]) -> Option<usize> {
        let mut i = 0;
        while i < b.len() {
            if self.esc {
                self.esc = false;
                i += 1;
            } else if self.in_str {
                let k = memchr2(b'"', b'\\', b.get(i..)?)?;
                i += k;
                if b.get(i) == Some(&b'\\') {
                    self.esc = true;
                } else {
                    self.in_str = false;
                }
                i += 1;
            } else {
                match b.get(i) {
                    Some(b'"') => self.in_str = true,
                    Some(b'{') | Some(b'[') => self.depth += 1,
                    Some(b'}') | Some(b']') => {
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        None
    }
}
