//! What the torch_npu CSV readers share: exact number parsing, header mapping, streaming rows,
//! and warnings that count skipped rows instead of listing each one.
//!
//! torch_npu writes times as `"<us>.<3 digits>\t"` (a trailing TAB against spreadsheet damage),
//! sometimes quoted, sometimes re-saved by a spreadsheet as `21084` or `1.74E+15`; MindSpore writes
//! `N/A` for empty. Times have 19 significant digits, more than an `f64` holds, so every number is
//! parsed here as an exact decimal and scaled with integer arithmetic.

use super::csv_rows::{Fields, Next, RowSplitter};
use crate::diag::Diagnostic;
use crate::source::Source;
use std::collections::BTreeMap;

/// True for the values torch_npu and MindSpore use for "no value": empty, whitespace, `N/A`, `None`.
pub fn is_null(field: &str) -> bool {
    let t = field.trim();
    t.is_empty() || t.eq_ignore_ascii_case("n/a") || t == "None" || t.eq_ignore_ascii_case("nan")
}

/// Parses a decimal number (optional sign, digits, optional `.digits`, optional exponent) and
/// returns `value × 10^scale × mul`, rounded half away from zero, exactly.
///
/// `None` when the text is not such a number or the result does not fit an `i64`.
pub fn parse_scaled(text: &str, scale: i32, mul: i128) -> Option<i64> {
    parse_scaled_bytes(text.as_bytes(), scale, mul)
}

/// [`parse_scaled`] on bytes (leading and trailing ASCII blanks, TAB included, are ignored).
pub fn parse_scaled_bytes(text: &[u8], scale: i32, mul: i128) -> Option<i64> {
    let s = trim_bytes(text);
    parse_scaled_in(s, s.len(), scale, mul)
}

/// [`parse_scaled_bytes`] of `buf[start..end]`, read where it lies: the bytes of `buf` after the
/// number (the rest of a JSON event) pad the words the fast path reads, so a number copies
/// nothing unless it ends within [`PLAIN_PAD`] bytes of `buf`'s end. The same result as
/// [`parse_scaled_bytes`] on the slice, for any bytes around it.
#[inline]
pub fn parse_scaled_span(
    buf: &[u8],
    start: usize,
    end: usize,
    scale: i32,
    mul: i128,
) -> Option<i64> {
    let raw = buf.get(start..end)?;
    let lead = raw.iter().take_while(|c| c.is_ascii_whitespace()).count();
    let n = trim_bytes(raw).len();
    parse_scaled_in(buf.get(start + lead..)?, n, scale, mul)
}

/// [`parse_scaled`] of the trimmed number `t[..n]`, where `t` may go on past the number (the rest
/// of a row): the fast path then reads the digits eight bytes at a time straight from `t` and
/// masks off what follows them, instead of walking their last bytes one by one.
#[inline(always)]
fn parse_scaled_in(t: &[u8], n: usize, scale: i32, mul: i128) -> Option<i64> {
    if let Some(v) = parse_plain(t, n, scale, mul) {
        return Some(v);
    }
    parse_general(t.get(..n)?, scale, mul)
}

/// Bytes [`parse_plain`] may read from the start of a number of at most 20 bytes (the last word
/// of its last run of digits starts before byte 20 and is 8 bytes long).
const PLAIN_PAD: usize = 32;

/// The common case, fast: `digits[.digits]` in `t[..n]`, at most 19 digits, no sign or exponent.
#[inline(always)]
fn parse_plain(t: &[u8], n: usize, scale: i32, mul: i128) -> Option<i64> {
    // At most 19 digits (< 2^64) plus one dot: torch_npu times have 16 + 3.
    if n == 0 || n > 20 {
        return None;
    }
    if t.len() < PLAIN_PAD {
        return parse_plain_copied(t, n, scale, mul);
    }
    parse_plain_words(t, n, scale, mul)
}

/// [`parse_plain`] of a number at the end of what was read: copied out first, so that the words
/// are there.
#[cold]
#[inline(never)]
fn parse_plain_copied(t: &[u8], n: usize, scale: i32, mul: i128) -> Option<i64> {
    let mut padded = [0u8; PLAIN_PAD];
    padded.get_mut(..n)?.copy_from_slice(t.get(..n)?);
    parse_plain_words(&padded, n, scale, mul)
}

/// [`parse_plain`] where `t` holds at least [`PLAIN_PAD`] bytes.
#[inline(always)]
fn parse_plain_words(t: &[u8], n: usize, scale: i32, mul: i128) -> Option<i64> {
    // torch_npu's times (`1736405443871259.720`) have their dot at byte 16: taken without the
    // search. Were there an earlier dot, it would be inside the sixteen bytes read as digits,
    // which then fail, so the result is the search's.
    let dot = if n == 20 && t.get(16) == Some(&b'.') {
        Some(16)
    } else {
        find_dot_in(t, n)
    };
    let (int_len, frac_at, frac_len) = match dot {
        Some(d) => (d, d + 1, n - d - 1),
        None => (n, n, 0),
    };
    if int_len + frac_len > 19 || (int_len == 0 && frac_len == 0) {
        return None;
    }
    // At most 19 digits in all, so the value is below 10^19 < 2^64 and cannot overflow.
    let v = digit_run(t, 0, int_len)?
        .wrapping_mul(pow10(frac_len as u32)?)
        .wrapping_add(digit_run(t, frac_at, frac_len)?);
    scale_exact(v, scale - frac_len as i32, mul)
}

/// The fast path of a CSV field `t[..len]` (`t` holding at least [`PLAIN_PAD`] bytes): digits,
/// an optional `.` and digits (at most 19 digits, the dot within the first 16 bytes: torch_npu's
/// times have theirs at byte 16, MB values near the start), then nothing but blanks up to `len`. Returns the
/// value ([`scale_exact`] of the digits, as [`parse_plain`] computes it) and where its digits
/// end; `None` for any other field (leading blanks, signs, exponents, longer numbers, empty or
/// null fields, digits running past `len`), which the general path then reads as before.
///
/// The first 16 bytes are classified as digits or not in one 128-bit word (no byte loop, no
/// per-word digit checks, no dot search): `callgrind` counted ~250 instructions a number on the
/// general path, and torch_npu's MB values and times are nearly all of a rank's CSV fields.
#[inline(always)]
fn parse_field_fast(t: &[u8], len: usize, scale: i32, mul: i128) -> Option<(i64, usize)> {
    if t.len() < PLAIN_PAD {
        return None;
    }
    let nd = nondigits128(u128::from_le_bytes(t.get(..16)?.try_into().ok()?));
    let (int_len, end, frac_len) = if nd == 0 {
        // Sixteen digits: a torch_npu time (`1736405443871259.720`) or nothing this path takes.
        if t.get(16) != Some(&b'.') {
            return None;
        }
        let frac_len = (nondigits64(word_at(t, 17)?).trailing_zeros() / 8) as usize;
        if frac_len > 3 {
            return None;
        }
        (16, 17 + frac_len, frac_len)
    } else {
        let int_len = (nd.trailing_zeros() / 8) as usize;
        if t.get(int_len) == Some(&b'.') {
            let rest = nd.checked_shr(8 * (int_len as u32 + 1)).unwrap_or(0);
            let frac_len = if rest != 0 {
                (rest.trailing_zeros() / 8) as usize
            } else {
                // The fraction goes on past the 16 bytes (`1068.15673828125`): its end is in
                // the next word, or the number is longer than this path takes.
                let more = (nondigits64(word_at(t, 16)?).trailing_zeros() / 8) as usize;
                15 - int_len + more
            };
            if int_len + frac_len > 19 {
                return None;
            }
            (int_len, int_len + 1 + frac_len, frac_len)
        } else {
            (int_len, int_len, 0)
        }
    };
    if end > len || int_len + frac_len == 0 {
        return None;
    }
    if end < len && !t.get(end..len)?.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let v = valid_digit_run(t, 0, int_len)?
        .wrapping_mul(pow10(frac_len as u32)?)
        .wrapping_add(valid_digit_run(t, int_len + 1, frac_len)?);
    Some((scale_exact(v, scale - frac_len as i32, mul)?, end))
}

/// Per byte of `w`, `0x80` where it is not an ASCII digit and 0 where it is.
#[inline(always)]
fn nondigits128(w: u128) -> u128 {
    const ONES: u128 = u128::MAX / 0xFF;
    // Per byte, `x = b ^ '0'` is a digit's value below 10: bit 7 of `(x & 0x7F) + 0x76` is set
    // for 10..=0x7F, and `x` itself has it for 0x80 and up; no sum carries into the next byte.
    let x = w ^ (ONES * 0x30);
    ((x & (ONES * 0x7F)).wrapping_add(ONES * 0x76) | x) & (ONES * 0x80)
}

/// [`nondigits128`] of a 64-bit word.
#[inline(always)]
fn nondigits64(w: u64) -> u64 {
    const ONES: u64 = u64::MAX / 0xFF;
    let x = w ^ (ONES * 0x30);
    ((x & (ONES * 0x7F)).wrapping_add(ONES * 0x76) | x) & (ONES * 0x80)
}

/// The value of the `m` (at most 19) ASCII digits at `t[o..]`, known to be digits ([`digit_run`]
/// without its checks; `t` must hold the word each starts).
#[inline(always)]
fn valid_digit_run(t: &[u8], o: usize, m: usize) -> Option<u64> {
    Some(match m {
        0 => 0,
        1..=8 => digits_of(left_pad(word_at(t, o)?, m)),
        9..=16 => {
            let hi = digits_of(word_at(t, o)?);
            let lo = digits_of(left_pad(word_at(t, o + 8)?, m - 8));
            hi.wrapping_mul(pow10((m - 8) as u32)?).wrapping_add(lo)
        }
        _ => return None,
    })
}

/// [`eight_digits`] of a word known to hold eight ASCII digits.
#[inline(always)]
fn digits_of(w: u64) -> u64 {
    let mut v = w.wrapping_sub(0x3030_3030_3030_3030);
    v = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    v = (v.wrapping_mul(10_000) + (v >> 32)) & 0x0000_0000_FFFF_FFFF;
    v
}

/// `round(v × mul × 10^exp10)` exactly: in 64-bit arithmetic when it fits ([`plain_u64`]), else
/// in 128 bits (still no floating point).
#[inline(always)]
fn scale_exact(v: u64, exp10: i32, mul: i128) -> Option<i64> {
    // A `match`, not `or_else`: the compiler kept `or_else` with its closure as a call on every
    // number's way out, taken or not.
    match plain_u64(v, exp10, mul) {
        Some(r) => Some(r),
        None => scale_wide(v, exp10, mul),
    }
}

/// [`scale_exact`] in 128 bits, for what does not fit 64.
#[cold]
#[inline(never)]
fn scale_wide(v: u64, exp10: i32, mul: i128) -> Option<i64> {
    let mut r = i128::from(v) * mul;
    if exp10 >= 0 {
        r *= 10i128.checked_pow(exp10.unsigned_abs())?;
    } else {
        let div = 10i128.checked_pow(exp10.unsigned_abs())?;
        let (q, m) = (r / div, r % div);
        r = if m * 2 >= div { q + 1 } else { q };
    }
    i64::try_from(r).ok()
}

/// The offset of the first `.` in `t[..n]` (`n` at most 20, `t` holding [`PLAIN_PAD`] bytes),
/// reading whole words: the bytes of `t` past `n` only matter if a dot there comes first, and
/// one found at or past `n` is none.
#[inline(always)]
fn find_dot_in(t: &[u8], n: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut k = 0;
    while k < n {
        let d = word_at(t, k)? ^ (ONES * u64::from(b'.'));
        // The zero-byte test: exact for the first zero byte (a borrow only flags bytes after it).
        let hit = d.wrapping_sub(ONES) & !d & HIGH;
        if hit != 0 {
            let at = k + (hit.trailing_zeros() / 8) as usize;
            return (at < n).then_some(at);
        }
        k += 8;
    }
    None
}

/// The little-endian word of `t[o..o + 8]`.
#[inline(always)]
fn word_at(t: &[u8], o: usize) -> Option<u64> {
    let b: [u8; 8] = t.get(o..o + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

/// The first `m` bytes (1 to 8) of `w` as the last `m` digits of an eight-digit word whose first
/// digits are `'0'`: the bytes after them (the rest of the row) are shifted out.
#[inline(always)]
fn left_pad(w: u64, m: usize) -> u64 {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let sh = 8 * (8 - m as u32);
    (w << sh) | (ZEROS & !(u64::MAX << sh))
}

/// The value of the `m` (at most 19) ASCII digits at `t[o..]`, reading whole words (`t` must hold
/// the word each starts: [`PLAIN_PAD`]); `None` if one is not a digit. Below 10^19, no step
/// overflows, so none is checked (a checked 64-bit multiply is a routine call on wasm32).
#[inline(always)]
fn digit_run(t: &[u8], o: usize, m: usize) -> Option<u64> {
    Some(match m {
        0 => 0,
        1..=8 => eight_digits(left_pad(word_at(t, o)?, m))?,
        9..=16 => {
            let hi = eight_digits(word_at(t, o)?)?;
            let lo = eight_digits(left_pad(word_at(t, o + 8)?, m - 8))?;
            hi.wrapping_mul(pow10((m - 8) as u32)?).wrapping_add(lo)
        }
        17..=19 => {
            let hi = eight_digits(word_at(t, o)?)?
                .wrapping_mul(100_000_000)
                .wrapping_add(eight_digits(word_at(t, o + 8)?)?);
            let lo = eight_digits(left_pad(word_at(t, o + 16)?, m - 16))?;
            hi.wrapping_mul(pow10((m - 16) as u32)?).wrapping_add(lo)
        }
        _ => return None,
    })
}

/// The fast path as it was before [`digit_run`]: the reference its tests compare against.
#[cfg(test)]
fn parse_plain_reference(s: &[u8], scale: i32, mul: i128) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let (int, fr) = match find_dot(s) {
        Some(d) => (s.get(..d)?, s.get(d + 1..)?),
        None => (s, &[][..]),
    };
    if int.len() + fr.len() > 19 || (int.is_empty() && fr.is_empty()) {
        return None;
    }
    let frac = fr.len() as i32;
    let v = digits(int)?
        .wrapping_mul(pow10(fr.len() as u32)?)
        .wrapping_add(digits(fr)?);
    scale_exact(v, scale - frac, mul)
}

/// The offset of the first `.` in `s` (at most 20 bytes), eight bytes at a time (SWAR) and the
/// last few one by one: `perf` found the byte-by-byte search taking a fifth of the number parse
/// (times have their dot at byte 16), and a `memchr` call costs more in set-up than it finds here.
#[cfg(test)]
fn find_dot(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut k = 0;
    while let Some(chunk) = s.get(k..k + 8) {
        let mut w8 = [0u8; 8];
        w8.copy_from_slice(chunk);
        let d = u64::from_le_bytes(w8) ^ (ONES * u64::from(b'.'));
        // The zero-byte test: exact for the first zero byte (a borrow only flags bytes after it).
        let hit = d.wrapping_sub(ONES) & !d & HIGH;
        if hit != 0 {
            return Some(k + (hit.trailing_zeros() / 8) as usize);
        }
        k += 8;
    }
    s.get(k..)?.iter().position(|&c| c == b'.').map(|p| k + p)
}

/// The value of a run of ASCII digits (empty = 0), eight at a time (SWAR); `None` if a byte is
/// not a digit or the value exceeds `u64`.
///
/// Up to 19 digits the value is below 10^19 < 2^64, so no step can overflow and none is checked.
/// The reference of [`digit_run`]'s tests (the fast path reads whole words instead).
#[cfg(test)]
fn digits(s: &[u8]) -> Option<u64> {
    let short = s.len() <= 19;
    let mut v: u64 = 0;
    let mut chunks = s.chunks_exact(8);
    for c in &mut chunks {
        let mut w8 = [0u8; 8];
        w8.copy_from_slice(c);
        let w = eight_digits(u64::from_le_bytes(w8))?;
        v = if short {
            v.wrapping_mul(100_000_000).wrapping_add(w)
        } else {
            v.checked_mul(100_000_000)?.checked_add(w)?
        };
    }
    for &b in chunks.remainder() {
        if !b.is_ascii_digit() {
            return None;
        }
        let d = u64::from(b - b'0');
        v = if short {
            v.wrapping_mul(10).wrapping_add(d)
        } else {
            v.checked_mul(10)?.checked_add(d)?
        };
    }
    Some(v)
}

/// `base^0 .. base^(N-1)`, built at compile time: the tables of [`pow10`] and [`pow5`], each
/// as long as the powers of its base a `u64` holds (a longer table fails to compile, on the
/// overflow of the last product).
const fn powers<const N: usize>(base: u64) -> [u64; N] {
    let mut p = [1u64; N];
    let mut k = 1;
    while k < N {
        p[k] = p[k - 1] * base;
        k += 1;
    }
    p
}

/// `10^n` for `n` ≤ 19 (the powers of ten a `u64` holds), from a table.
fn pow10(n: u32) -> Option<u64> {
    const P: [u64; 20] = powers(10);
    P.get(n as usize).copied()
}

/// `5^n` for `n` ≤ 27 (the powers of five a `u64` holds), from a table.
fn pow5(n: u32) -> Option<u64> {
    const P: [u64; 28] = powers(5);
    P.get(n as usize).copied()
}

/// `a × b`, or `None` if it overflows. When the two operands' bit lengths add up to 64 or less
/// the product fits, and the plain multiply is one instruction on every target; only the rare
/// other case pays for the checked one (a 128-bit multiply routine on wasm32).
#[inline(always)]
fn mul_u64(a: u64, b: u64) -> Option<u64> {
    if a.leading_zeros() + b.leading_zeros() >= 64 {
        Some(a.wrapping_mul(b))
    } else {
        a.checked_mul(b)
    }
}

/// Eight ASCII digits (little-endian word, first digit in the low byte) to their value, or `None`
/// if any byte is not a digit. The multiply-and-shift steps combine 2, then 4, then 8 digits.
#[inline(always)]
fn eight_digits(w: u64) -> Option<u64> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    // Every byte in 0x30..=0x39: the high nibble is 3, and adding 6 does not carry into it.
    if w & HIGH_NIBBLES != ZEROS || w.wrapping_add(0x0606_0606_0606_0606) & HIGH_NIBBLES != ZEROS {
        return None;
    }
    let mut v = w - ZEROS;
    v = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    v = (v.wrapping_mul(10_000) + (v >> 32)) & 0x0000_0000_FFFF_FFFF;
    Some(v)
}

/// `round(v × mul × 10^exp10)` in 64-bit integers when `mul` is a power of two (1, 1024, 2^20)
/// and nothing overflows: `10^-d = 2^-d × 5^-d`, so the division is by `5^d` (and a shift).
#[inline(always)]
fn plain_u64(v: u64, exp10: i32, mul: i128) -> Option<i64> {
    let m = u64::try_from(mul).ok().filter(|m| m.is_power_of_two())?;
    let s = m.trailing_zeros();
    let r = if exp10 >= 0 {
        mul_u64(mul_u64(v, pow10(exp10.unsigned_abs())?)?, m)?
    } else {
        let d = exp10.unsigned_abs();
        let five = pow5(d)?;
        // `num / (5^d × 2^twos)`: the power of two by a shift, the power of five by a constant
        // divisor ([`div_pow5`]), since floor(floor(a / b) / c) = floor(a / (b × c)).
        let (num, twos) = if s >= d {
            (mul_u64(v, 1u64 << (s - d))?, 0)
        } else {
            (v, d - s)
        };
        let den = mul_u64(five, 1u64.checked_shl(twos)?)?;
        let q = div_pow5(num >> twos, d);
        // `q × den <= num`, so neither the product nor the difference wraps.
        let rem = num - q * den;
        if rem >= den - rem {
            q + 1
        } else {
            q
        }
    };
    i64::try_from(r).ok()
}

/// `x / 5^d` for `d <= 27` (every power of five below 2^64) by a multiplication with a
/// reciprocal from a table (Granlund and Montgomery's round-up method for divisors of any size,
/// exact for every `x`): a 64-bit division costs tens of cycles and every MB value of the CSV files
/// (`954.37060546875`) needs one. Division by a constant per `d` did not last: the compiler
/// merged the constants into a table and divided by it at run time again.
#[inline(always)]
fn div_pow5(x: u64, d: u32) -> u64 {
    const MAGIC: [(u64, u32, u32); 28] = pow5_reciprocals();
    match MAGIC.get(d as usize) {
        Some(&(m, sh1, sh2)) => {
            let t = mul_high(m, x);
            (t + ((x - t) >> sh1)) >> sh2
        }
        // Not reached: the caller's `pow5(d)` fails beyond 27.
        None => pow5(d).map_or(0, |p| x / p),
    }
}

/// For each `p = 5^d`: `m = floor(2^64 × (2^l − p) / p) + 1` with `l = ceil(log2 p)`, and the
/// shifts `min(l, 1)` and `max(l − 1, 0)`, such that `x / p = (t + ((x − t) >> sh1)) >> sh2` with
/// `t = mul_high(m, x)` for every 64-bit `x`.
const fn pow5_reciprocals() -> [(u64, u32, u32); 28] {
    let mut out = [(0u64, 0u32, 0u32); 28];
    let mut d = 0;
    let mut p: u64 = 1;
    while d < 28 {
        let l = if p == 1 {
            0
        } else {
            64 - (p - 1).leading_zeros()
        };
        let m = ((1u128 << 64) * ((1u128 << l) - p as u128) / p as u128 + 1) as u64;
        out[d] = (m, if l > 0 { 1 } else { 0 }, if l > 0 { l - 1 } else { 0 });
        if d < 27 {
            p *= 5;
        }
        d += 1;
    }
    out
}

/// The high 64 bits of `a × b`.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn mul_high(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) >> 64) as u64
}

/// The high 64 bits of `a × b` (wasm32: a 128-bit product there is a routine call, four 64-bit
/// products of 32-bit halves are instructions).
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn mul_high(a: u64, b: u64) -> u64 {
    mul_high_halves(a, b)
}

/// [`mul_high`] from the products of 32-bit halves.
#[cfg_attr(target_pointer_width = "64", allow(dead_code))]
#[inline(always)]
fn mul_high_halves(a: u64, b: u64) -> u64 {
    const LOW: u64 = 0xFFFF_FFFF;
    let (a0, a1) = (a & LOW, a >> 32);
    let (b0, b1) = (b & LOW, b >> 32);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    let mid = (p00 >> 32) + (p01 & LOW) + (p10 & LOW);
    p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)
}

#[inline(never)]
#[cold]
fn parse_general(s: &[u8], scale: i32, mul: i128) -> Option<i64> {
    let (neg, body) = match s.first() {
        Some(b'-') => (true, s.get(1..)?),
        Some(b'+') => (false, s.get(1..)?),
        _ => (false, s),
    };
    let mut mantissa: i128 = 0;
    let mut digits = 0u32;
    let mut exp: i32 = 0;
    let mut seen_dot = false;
    let mut i = 0;
    let mut any_digit = false;
    while let Some(&b) = body.get(i) {
        match b {
            b'0'..=b'9' => {
                any_digit = true;
                // Digits past 30 significant ones cannot change an i64 result; drop them (but keep
                // the decimal exponent right) so the i128 never overflows.
                if digits < 30 {
                    mantissa = mantissa * 10 + i128::from(b - b'0');
                    if mantissa != 0 {
                        digits += 1;
                    }
                    if seen_dot {
                        exp -= 1;
                    }
                } else if !seen_dot {
                    exp += 1;
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            b'e' | b'E' => break,
            _ => return None,
        }
        i += 1;
    }
    if !any_digit {
        return None;
    }
    if let Some(&b) = body.get(i) {
        if b == b'e' || b == b'E' {
            let rest = std::str::from_utf8(body.get(i + 1..)?).ok()?;
            let e: i32 = rest.parse().ok()?;
            if !(-400..=400).contains(&e) {
                return None;
            }
            exp += e;
        }
    }
    let mut v = mantissa.checked_mul(mul)?;
    let total = exp + scale;
    if total >= 0 {
        for _ in 0..total {
            v = v.checked_mul(10)?;
        }
    } else {
        let mut div: i128 = 1;
        for _ in 0..(-total).min(38) {
            div *= 10;
        }
        if -total > 38 {
            v = 0;
        } else {
            let q = v / div;
            let r = v % div;
            v = if r * 2 >= div { q + 1 } else { q };
        }
    }
    let v = if neg { -v } else { v };
    i64::try_from(v).ok()
}

/// A microsecond text (`1736405443871259.720`, with or without TAB, quotes already removed) as
/// exact integer nanoseconds.
pub fn us_to_ns(text: &str) -> Option<i64> {
    parse_scaled(text, 3, 1)
}

/// A megabyte text (`954.3701171875`; torch_npu MB = 2^20 bytes) as exact bytes.
pub fn mb_to_bytes(text: &str) -> Option<i64> {
    parse_scaled(text, 0, 1 << 20)
}

/// A kilobyte text (`18816.5`; KB = 1024 bytes) as exact bytes.
pub fn kb_to_bytes(text: &str) -> Option<i64> {
    parse_scaled(text, 0, 1024)
}

/// Longest CSV row accepted, in bytes (from the row's start to its end, quoted line breaks
/// included). Real rows are a few hundred bytes; a longer one is skipped up to the end of its line
/// with a warning (a header that long refuses the file), so one row can never make the reader
/// hold more than this (and one chunk of the file).
pub const MAX_CSV_ROW: usize = 1 << 20;

/// Collects warnings of one file, one [`Diagnostic`] per (field, problem) with a count and the
/// first place it happened, so a file with a million bad rows yields a few lines, not a million.
#[derive(Debug, Default)]
pub struct Warnings {
    map: BTreeMap<(String, String), Diagnostic>,
    order: Vec<(String, String)>,
}

impl Warnings {
    /// Records one occurrence of `message` in `field` (may be empty) at `line`/`byte` of `file`.
    pub fn add(&mut self, file: &str, line: u64, byte: u64, field: &str, message: &str) {
        self.add_keyed(file, line, byte, field, message, message);
    }

    /// Like [`Warnings::add`], but occurrences are grouped by `kind` rather than by the message,
    /// whose text (e.g. the bad value found) is taken from the first occurrence.
    pub fn add_keyed(
        &mut self,
        file: &str,
        line: u64,
        byte: u64,
        field: &str,
        kind: &str,
        message: &str,
    ) {
        self.push_keyed(file, Some(line), byte, field, kind, message);
    }

    /// Like [`Warnings::add_keyed`] for inputs without lines (rows of a database): the first
    /// occurrence is placed by its byte offset only.
    pub fn add_keyed_at_byte(
        &mut self,
        file: &str,
        byte: u64,
        field: &str,
        kind: &str,
        message: &str,
    ) {
        self.push_keyed(file, None, byte, field, kind, message);
    }

    fn push_keyed(
        &mut self,
        file: &str,
        line: Option<u64>,
        byte: u64,
        field: &str,
        kind: &str,
        message: &str,
    ) {
        let key = (field.to_string(), kind.to_string());
        if let Some(d) = self.map.get_mut(&key) {
            d.count += 1;
            return;
        }
        let mut d = Diagnostic::warning(file, message.to_string()).at_byte(byte);
        if let Some(line) = line {
            d = d.at_line(line);
        }
        if !field.is_empty() {
            d = d.in_field(field);
        }
        self.order.push(key.clone());
        self.map.insert(key, d);
    }

    /// The collected warnings in the order first seen; counts > 1 mean "first of N at this line".
    pub fn into_vec(mut self) -> Vec<Diagnostic> {
        let mut out = Vec::with_capacity(self.order.len());
        for key in self.order {
            if let Some(mut d) = self.map.remove(&key) {
                if d.count > 1 {
                    let place = if d.line.is_some() { "line" } else { "place" };
                    d.message =
                        format!("{} (first of {} rows, at this {place})", d.message, d.count);
                }
                out.push(d);
            }
        }
        out
    }
}

/// The units a size column's name may end in, with the bytes of one: torch_npu and MindSpore
/// write totals in MB (`Total Reserved(MB)`), CANN's msprof in KB (`Total Reserved(KB)`,
/// `Allocation Total Allocated(KB)`). A wanted name ending in one of them ([`HeaderMap::new`])
/// finds its column in any of them, and [`HeaderMap::units`] says which the file has.
pub const SIZE_UNITS: [(&str, i128); 2] = [("(MB)", 1 << 20), ("(KB)", 1 << 10)];

/// Where each logical column of a table is, mapped by header name (case and spacing ignored).
#[derive(Debug, Clone)]
pub struct HeaderMap {
    /// Column index for each wanted name, in the order asked.
    pub index: Vec<Option<usize>>,
    /// For each wanted name ending in a unit of [`SIZE_UNITS`] whose column was found, the bytes
    /// of the unit the file's name of it ends in (`None` for the other names).
    pub units: Vec<Option<i128>>,
    /// The header as found, trimmed (bytes that are not UTF-8 read as U+FFFD).
    pub names: Vec<String>,
    /// The header's fields as read, joined by `,`: what [`HeaderMap::shown`] quotes.
    raw: Vec<u8>,
}

fn norm_header(h: &str) -> String {
    h.trim_start_matches('\u{feff}')
        .trim()
        .to_ascii_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The place of the wanted name `a` (normalised) among the header's `normed` names and, when `a`
/// ends in a unit of [`SIZE_UNITS`], the bytes of the unit the column found has: the name as
/// asked first, then its stem with each other unit.
fn find_column(normed: &[String], a: &str) -> Option<(usize, Option<i128>)> {
    let exact = normed.iter().position(|h| h == a);
    let Some((stem, asked)) = SIZE_UNITS.iter().find_map(|&(u, bytes)| {
        let u = u.to_ascii_lowercase();
        Some((a.strip_suffix(u.as_str())?.to_string(), bytes))
    }) else {
        return exact.map(|k| (k, None));
    };
    if let Some(k) = exact {
        return Some((k, Some(asked)));
    }
    SIZE_UNITS.iter().find_map(|&(u, bytes)| {
        let name = format!("{stem}{}", u.to_ascii_lowercase());
        normed
            .iter()
            .position(|h| *h == name)
            .map(|k| (k, Some(bytes)))
    })
}

impl HeaderMap {
    /// Maps `wanted` (each a list of accepted spellings) onto the header's `fields`.
    pub fn new<'f>(fields: impl IntoIterator<Item = &'f [u8]>, wanted: &[&[&str]]) -> Self {
        let mut raw = Vec::new();
        let mut names = Vec::new();
        for (k, f) in fields.into_iter().enumerate() {
            if k > 0 {
                raw.push(b',');
            }
            raw.extend_from_slice(f);
            names.push(String::from_utf8_lossy(f).into_owned());
        }
        let normed: Vec<String> = names.iter().map(|h| norm_header(h)).collect();
        for n in &mut names {
            *n = n.trim_start_matches('\u{feff}').trim().to_string();
        }
        let (index, units) = wanted
            .iter()
            .map(|aliases| {
                aliases
                    .iter()
                    .find_map(|a| find_column(&normed, &norm_header(a)))
                    .map_or((None, None), |(k, unit)| (Some(k), unit))
            })
            .unzip();
        HeaderMap {
            index,
            units,
            names,
            raw,
        }
    }

    /// The header as found, for messages: its fields joined by `,`, quoted by
    /// [`crate::quote::quote`] (the first line of a wrong file can be a megabyte of anything),
    /// then what separates its names when that is not a comma ([`HeaderMap::separator`]).
    pub fn shown(&self) -> String {
        let quoted = crate::quote::quote(&self.raw, crate::quote::LONG);
        match self.separator() {
            Some(sep) => format!(
                "{quoted}, names separated by {sep}, not commas: a spreadsheet's save (in a \
                 language whose numbers have decimal commas, or as tab-delimited text); save it \
                 again as comma-separated CSV with decimal points, or give the profiler's \
                 original file"
            ),
            None => quoted,
        }
    }

    /// `';'` or a tab, in words, when the header is one field holding two or more of them: a
    /// table saved by a spreadsheet with another separator (Excel and WPS save CSV with `;` in
    /// languages that write `0,5`), which a comma-separated reader sees as one column.
    fn separator(&self) -> Option<&'static str> {
        let [one] = self.names.as_slice() else {
            return None;
        };
        [(';', "semicolons"), ('\t', "tabs")]
            .into_iter()
            .find(|(c, _)| one.matches(*c).count() >= 2)
            .map(|(_, words)| words)
    }

    /// True when the header has column `h` (as spelled in the file, case-insensitive).
    pub fn has(&self, h: &str) -> bool {
        let h = norm_header(h);
        self.names.iter().any(|n| norm_header(n) == h)
    }
}

/// One data row being read: its fields and where it is.
pub struct Row<'r> {
    /// The fields as read (quotes removed, TABs kept). Bytes, not `str`: most fields are
    /// numbers, parsed from bytes without a UTF-8 check; text fields are checked when read.
    pub record: Fields<'r>,
    /// 1-based line of the row's start.
    pub line: u64,
    /// Byte offset of the row's start.
    pub byte: u64,
}

impl Row<'_> {
    /// The trimmed field at `col`, `None` for a missing column or a NULL value (empty, `N/A`).
    pub fn get(&self, col: Option<usize>) -> Option<&str> {
        let f = trim_bytes(self.record.get(col?)?);
        if is_null_bytes(f) {
            return None;
        }
        // Invalid UTF-8 in a field reads as empty; the callers count empty required fields.
        std::str::from_utf8(f).ok()
    }

    /// The trimmed text of the field at `col`, `None` for a missing column or a NULL value. Bytes
    /// that are not UTF-8 are replaced by U+FFFD and counted in `w` under `field`: the value is
    /// kept (a name with one bad byte still names its op) and the user is told.
    pub fn text(
        &self,
        col: Option<usize>,
        w: &mut Warnings,
        file: &str,
        field: &str,
    ) -> Option<std::borrow::Cow<'_, str>> {
        let f = self.get_bytes(col)?;
        Some(match std::str::from_utf8(f) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                w.add_keyed(
                    file,
                    self.line,
                    self.byte,
                    field,
                    "not utf-8",
                    "not valid UTF-8; invalid bytes shown as U+FFFD",
                );
                String::from_utf8_lossy(f)
            }
        })
    }

    /// The number in the field at `col` as `value × 10^scale × mul` ([`parse_scaled`]), with the
    /// field's trimmed bytes (for a message): `None` for a missing column or a NULL value, `(None,
    /// bytes)` for a field that is not such a number.
    #[inline(always)]
    pub fn scaled(
        &self,
        col: Option<usize>,
        scale: i32,
        mul: i128,
    ) -> Option<(Option<i64>, &[u8])> {
        let (rest, len) = self.record.get_with_rest(col?)?;
        // An empty field is null (the general path trims it to nothing).
        if len == 0 {
            return None;
        }
        if let Some((v, end)) = parse_field_fast(rest, len, scale, mul) {
            return Some((Some(v), rest.get(..end)?));
        }
        scaled_general(rest, len, scale, mul)
    }

    /// The trimmed bytes of the field at `col`, `None` for a missing column or a NULL value.
    /// Inlined: the readers ask it for every name (`callgrind`: ~60 instructions a call, out of
    /// line).
    #[inline(always)]
    pub fn get_bytes(&self, col: Option<usize>) -> Option<&[u8]> {
        let f = trim_bytes(self.record.get(col?)?);
        if is_null_bytes(f) {
            None
        } else {
            Some(f)
        }
    }
}

/// [`Row::scaled`] of a field [`parse_field_fast`] does not take, `rest[..len]`: trimmed, tested
/// for null, parsed by the general path (out of line: rare, and long).
#[inline(never)]
fn scaled_general(rest: &[u8], len: usize, scale: i32, mul: i128) -> Option<(Option<i64>, &[u8])> {
    let field = rest.get(..len)?;
    let lead = field
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(len);
    let end = field
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(lead, |k| k + 1);
    let rest = rest.get(lead..)?;
    let f = rest.get(..end - lead)?;
    if is_null_bytes(f) {
        return None;
    }
    Some((parse_scaled_in(rest, f.len(), scale, mul), f))
}

#[inline(always)]
fn trim_bytes(mut f: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = f {
        if first.is_ascii_whitespace() {
            f = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = f {
        if last.is_ascii_whitespace() {
            f = rest;
        } else {
            break;
        }
    }
    f
}

/// True for the trimmed field of an empty value. Inlined with its length test first: every
/// number asks, and only a field of 3 or 4 bytes can be one of the words.
#[inline(always)]
fn is_null_bytes(f: &[u8]) -> bool {
    f.is_empty() || (matches!(f.len(), 3 | 4) && is_null_word(f))
}

/// `n/a`, `nan` (any case) or `None`.
fn is_null_word(f: &[u8]) -> bool {
    f.eq_ignore_ascii_case(b"n/a") || f == b"None" || f.eq_ignore_ascii_case(b"nan")
}

/// Streams the CSV table in `src`: maps the header with `wanted`, lets `locate` check it and locate
/// the columns the reader needs (once per file: its `C`, handed to every row), then calls `on_row`
/// for every data row. Returns `Err` only when the file cannot be used at all.
///
/// Generic over the row handler, so that a reader's row code is compiled into this loop with its
/// field parsers inlined (no call through a pointer per row, no column lookup per field).
///
/// Rows that are not valid CSV or not UTF-8 are skipped and counted in `warnings`; so are rows
/// longer than [`MAX_CSV_ROW`] bytes (skipped up to the end of their line). A row with fewer fields
/// than the header is read (the missing ones empty) and counted as a short row, unless
/// `written_short` says a writer wrote rows of its shape short on purpose (asked of short rows
/// only, so it costs the other rows nothing).
pub fn read_table<C, L, F, K>(
    src: &dyn Source,
    wanted: &[&[&str]],
    locate: L,
    mut on_row: F,
    written_short: K,
    warnings: &mut Warnings,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<HeaderMap, Diagnostic>
where
    L: FnOnce(&HeaderMap) -> Result<C, String>,
    F: FnMut(&HeaderMap, &C, &Row<'_>, &mut Warnings),
    K: Fn(&C, &Row<'_>) -> bool,
{
    let file = src.name().to_string();
    let mut rows = RowSplitter::new(src, MAX_CSV_ROW, progress);
    // Header: the first non-empty record.
    let (header, cut) = loop {
        match rows.next_row().map_err(Diagnostic::from)? {
            Next::End => {
                return Err(Diagnostic::error(
                    &file,
                    "empty file: expected a header line",
                ))
            }
            Next::Row { .. } => {
                let record = rows.fields();
                if record.iter().all(|f| trim_bytes(f).is_empty()) {
                    continue;
                }
                // A header with no line end after it is the whole file: one cut inside its
                // header line (a cut inside the last column's name may still leave every column
                // the reader needs, and then no row at all would read as an empty capture). Its
                // last column as read says where.
                let cut = rows.ended_without_line_end().then(|| {
                    let last = record.iter().last().unwrap_or_default();
                    (
                        src.len(),
                        record.len(),
                        crate::quote::quote(last, crate::quote::SHORT),
                    )
                });
                break (HeaderMap::new(record.iter(), wanted), cut);
            }
            Next::TooLong { line, byte, .. } => {
                return Err(Diagnostic::error(
                    &file,
                    format!(
                        "expected a CSV header line; the first row is longer than {MAX_CSV_ROW} \
                         bytes (the limit for one row): not a CSV table"
                    ),
                )
                .at_line(line)
                .at_byte(byte));
            }
        }
    };
    let cols = match (locate(&header), cut) {
        (Ok(cols), None) => cols,
        (Ok(_), Some((end, n, last))) => {
            return Err(Diagnostic::error(
                &file,
                format!(
                    "the file ends inside its header line, at byte {end}, in column {n}, which \
                     reads {last}: the file was cut; expected the header line, a line end, then \
                     the data rows"
                ),
            )
            .at_line(1)
            .at_byte(end))
        }
        (Err(msg), None) => return Err(Diagnostic::error(&file, msg).at_line(1).at_byte(0)),
        (Err(msg), Some((end, _, _))) => {
            return Err(Diagnostic::error(
                &file,
                format!("{msg}; the file ends inside this header line, at byte {end}"),
            )
            .at_line(1)
            .at_byte(0))
        }
    };
    let ncols = header.names.len();
    loop {
        match rows.next_row().map_err(Diagnostic::from)? {
            Next::End => break,
            Next::Row { line, byte } => {
                let record = rows.fields();
                if record.len() == 1 && record.get(0).is_some_and(|f| trim_bytes(f).is_empty()) {
                    continue; // blank line
                }
                let row = Row { record, line, byte };
                let short = row.record.len() < ncols;
                let written_short = short && written_short(&cols, &row);
                let record = &row.record;
                if short && !written_short {
                    // Short rows are kept (missing trailing columns read as empty), but counted:
                    // a truncated last line is the usual cause.
                    warnings.add_keyed(
                        &file,
                        line,
                        byte,
                        "",
                        "short row",
                        &format!(
                            "row has {} fields, the header has {ncols}; missing fields read as empty",
                            record.len()
                        ),
                    );
                }
                if record.len() > ncols {
                    warnings.add_keyed(
                        &file,
                        line,
                        byte,
                        "",
                        "long row",
                        &format!(
                            "row has {} fields, the header has {ncols}; extra fields ignored",
                            record.len()
                        ),
                    );
                }
                if (!short || written_short) && rows.ended_without_line_end() {
                    // torch_npu ends every line of its CSV files, the last one too (every real
                    // sample does): a last row without a line end was most likely cut, perhaps
                    // inside its last field, which then reads short with every field present (a
                    // row cut short of fields is warned above).
                    let last = record.iter().last().unwrap_or_default();
                    warnings.add_keyed(
                        &file,
                        line,
                        byte,
                        "",
                        "no line end",
                        &format!(
                            "the file ends inside this row, at byte {}, with no line end after \
                             it (torch_npu ends every line with one): the file was probably cut; \
                             its field {} reads {} and may be cut short",
                            src.len(),
                            record.len(),
                            crate::quote::quote(last, crate::quote::SHORT)
                        ),
                    );
                }
                on_row(&header, &cols, &row, warnings);
            }
            Next::TooLong {
                line,
                byte,
                end_line,
            } => {
                warnings.add_keyed(
                    &file,
                    line,
                    byte,
                    "",
                    "row too long",
                    &format!(
                        "row longer than {MAX_CSV_ROW} bytes (the limit for one row); skipped \
                         to the end of line {end_line}"
                    ),
                );
            }
        }
    }
    Ok(header)
}

/// A field's text for a message: [`crate::quote::quote`], at most [`crate::quote::SHORT`]
/// characters (a bad field can be a megabyte long).
pub fn show_field(raw: &[u8]) -> String {
    crate::quote::quote(raw, crate::quote::SHORT)
}

/// How the numbers of a column read: `value × 10^scale × mul` ([`parse_scaled`]), and the words of
/// the warning counting a bad one (grouped by `kind`, saying it expected `expected`).
#[derive(Debug, Clone, Copy)]
struct Unit {
    scale: i32,
    mul: i128,
    kind: &'static str,
    expected: &'static str,
}

/// Times: µs text → ns.
const TIME: Unit = Unit {
    scale: 3,
    mul: 1,
    kind: "bad time",
    expected: "a time in microseconds like 1736405443871259.720",
};

/// torch_npu MB (2^20 bytes) → bytes; also every total of a file whose totals are in KB, which
/// its reader rescales ([`mb_read_kb`]), so the words name no unit (the field's name does).
const MB: Unit = Unit {
    scale: 0,
    mul: 1 << 20,
    kind: "bad MB",
    expected: "a number like 954.37",
};

/// A total of a KB file as its bytes, from the value [`mb_u64_at`] read as MB (2^20 times the
/// text's number, rounded): divided by 1024, half away from zero. Exact for every KB text of a
/// whole number of bytes (`x` KB with `1024 × x` whole, which `2^20 × x` then is too, so the first
/// rounding rounds nothing), as msprof writes them; for a text with more decimals than bytes have,
/// within a byte of `1024 × x`. The row code reads every total as MB, one unit compiled in:
/// with the unit chosen in it (a constant per row's code, or a value per field) `callgrind`
/// counted 3.5-5 % more instructions for a rank's two CSV files of MB totals.
pub fn mb_read_kb(v: u64) -> u64 {
    v / 1024 + u64::from(v % 1024 >= 512)
}

/// Whether the totals of a file, the wanted columns `totals` of its header `h`, are in KB (CANN's
/// msprof) rather than MB (torch_npu, MindSpore), by the units [`HeaderMap::units`] found them
/// in; `Err` (a refusal's words) when they are in both, which no profiler writes: a reader takes
/// a file's totals in one unit. Out of line: asked once a file, and kept out of the row loop's
/// function.
#[inline(never)]
pub fn totals_in_kb(h: &HeaderMap, totals: &[usize]) -> Result<bool, String> {
    let found: Vec<(usize, i128)> = totals
        .iter()
        .filter_map(|&c| Some((c, (*h.units.get(c)?)?)))
        .collect();
    let kb = |u: i128| u == 1 << 10;
    match found.first() {
        None => Ok(false),
        Some(&(_, first)) if found.iter().all(|&(_, u)| u == first) => Ok(kb(first)),
        Some(_) => {
            let named = |want_kb: bool| {
                found
                    .iter()
                    .filter(|&&(_, u)| kb(u) == want_kb)
                    .filter_map(|&(c, _)| h.index.get(c).copied().flatten())
                    .filter_map(|k| h.names.get(k).map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            Err(format!(
                "its totals are in two units, MB ({}) and KB ({}), which no profiler writes; \
                 memlens reads a file's totals in one unit (found: {})",
                named(false),
                named(true),
                h.shown()
            ))
        }
    }
}

/// The optional number in column `idx` (located once per file; `None`: the header lacks it) in
/// `unit`; a bad value is counted in `w` and read as empty. Inlined into the reader's row code
/// with the fast path's parse: a field torch_npu writes costs no call and no column lookup
/// (`callgrind` put the lookup and the calls at ~40 of the ~240 instructions of a MB value).
/// With a `memo` ([`NumberMemo`]), a field of the bytes it kept takes its value unparsed, and what
/// the fast path reads is kept; `None` (a constant at every call, so inlining drops the branches)
/// reads every field.
#[inline(always)]
fn number_at(
    row: &Row<'_>,
    h: &HeaderMap,
    idx: Option<usize>,
    w: &mut Warnings,
    file: &str,
    unit: Unit,
    memo: Option<&mut NumberMemo>,
) -> Option<i64> {
    let idx = idx?;
    let (rest, len) = row.record.get_with_rest(idx)?;
    // An empty field is null (the general path trims it to nothing).
    if len == 0 {
        return None;
    }
    if let Some(m) = memo.as_deref() {
        if let Some(v) = rest.get(..len).and_then(|f| m.find(f)) {
            return Some(v);
        }
    }
    match parse_field_fast(rest, len, unit.scale, unit.mul) {
        Some((v, _)) => {
            if let Some(m) = memo {
                m.note(rest, len, v);
            }
            Some(v)
        }
        None => number_general(row, h, idx, w, file, (rest, len), unit),
    }
}

/// [`number_at`] of a field the fast path does not take (blanks first, signs, exponents, long
/// numbers, `N/A`, damage): out of line, as it is rare.
#[cold]
#[inline(never)]
fn number_general(
    row: &Row<'_>,
    h: &HeaderMap,
    idx: usize,
    w: &mut Warnings,
    file: &str,
    (rest, len): (&[u8], usize),
    unit: Unit,
) -> Option<i64> {
    let (v, raw) = scaled_general(rest, len, unit.scale, unit.mul)?;
    if v.is_none() {
        bad_value(row, h, idx, w, file, raw, unit.kind, unit.expected);
    }
    v
}

/// Counts the field `raw` of column `idx` that is not a number in `w` (out of line: rare).
#[allow(clippy::too_many_arguments)]
#[cold]
#[inline(never)]
fn bad_value(
    row: &Row<'_>,
    h: &HeaderMap,
    idx: usize,
    w: &mut Warnings,
    file: &str,
    raw: &[u8],
    kind: &str,
    expected: &str,
) {
    let field = h.names.get(idx).map_or("", |s| s.as_str());
    let msg = format!(
        "expected {expected}, found {}; read as empty",
        show_field(raw)
    );
    w.add_keyed(file, row.line, row.byte, field, kind, &msg);
}

/// The optional time in column `idx` (µs text → ns, see [`number_at`]); a bad value is counted
/// and read as empty.
#[inline(always)]
pub fn time_at(
    row: &Row<'_>,
    h: &HeaderMap,
    idx: Option<usize>,
    w: &mut Warnings,
    file: &str,
) -> Option<i64> {
    number_at(row, h, idx, w, file, TIME, None)
}

/// The optional total in column `idx` read as MB, in bytes (see [`number_at`], and its `memo`); a
/// bad value, or a negative total (no allocator total can be one), is counted and read as empty.
/// Of a file whose totals are in KB ([`totals_in_kb`]) the value is 1024 times the total's bytes,
/// which the reader then rescales ([`mb_read_kb`]).
#[inline(always)]
pub fn mb_u64_at(
    row: &Row<'_>,
    h: &HeaderMap,
    idx: Option<usize>,
    w: &mut Warnings,
    file: &str,
    memo: Option<&mut NumberMemo>,
) -> Option<u64> {
    let v = number_at(row, h, idx, w, file, MB, memo)?;
    match u64::try_from(v) {
        Ok(b) => Some(b),
        Err(_) => {
            negative_total(row, h, idx, w, file);
            None
        }
    }
}

/// True when `a` and `b` hold the same bytes; fields of up to 32 bytes (the names and numbers of
/// torch_npu's rows) are compared inline by two overlapping loads from each end, which cover every
/// byte, where `==` calls `memcmp` (`perf`: 2.5 % of `--json`'s samples, most for the few bytes
/// of a `memory_record.csv` component name).
#[inline(always)]
pub fn field_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], o: usize| {
        s.get(o..o + 8)
            .and_then(|x| <[u8; 8]>::try_from(x).ok())
            .map(u64::from_le_bytes)
    };
    let w4 = |s: &[u8], o: usize| {
        s.get(o..o + 4)
            .and_then(|x| <[u8; 4]>::try_from(x).ok())
            .map(u32::from_le_bytes)
    };
    match n {
        0 => true,
        // Bytes 0, n / 2 and n - 1 are every byte of a field of one to three.
        1..=3 => a.first() == b.first() && a.get(n / 2) == b.get(n / 2) && a.last() == b.last(),
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        17..=32 => {
            w8(a, 0) == w8(b, 0)
                && w8(a, 8) == w8(b, 8)
                && w8(a, n - 16) == w8(b, n - 16)
                && w8(a, n - 8) == w8(b, n - 8)
        }
        _ => a == b,
    }
}

/// Longest field a [`NumberMemo`] keeps (a torch_npu time with its TAB is 21 bytes).
const MEMO_BYTES: usize = 24;

/// The last field of a column read as a number by the fast path, and its value: rows often repeat
/// the text of the row before in one column (a `memory_record.csv` row of the combined `PTA+GE`
/// series has the time of the row before it; an allocator's reserved total changes rarely), and a
/// field of the same bytes takes the value without being parsed again. Only values the fast path
/// read are kept, so a field that matches is a number and counts no warning.
#[derive(Debug, Clone, Copy)]
pub struct NumberMemo {
    bytes: [u8; MEMO_BYTES],
    /// Length of the field kept; `usize::MAX`: none (no field is that long).
    len: usize,
    value: i64,
}

impl Default for NumberMemo {
    fn default() -> Self {
        NumberMemo {
            bytes: [0; MEMO_BYTES],
            len: usize::MAX,
            value: 0,
        }
    }
}

impl NumberMemo {
    /// The value kept for the field `f`, if `f` is the field kept.
    #[inline(always)]
    fn find(&self, f: &[u8]) -> Option<i64> {
        if f.len() != self.len {
            return None;
        }
        let kept = self.bytes.get(..self.len)?;
        field_eq(f, kept).then_some(self.value)
    }

    /// Keeps the field `rest[..len]` and its value, when it is short enough (`rest` holds at least
    /// [`MEMO_BYTES`] bytes whenever the fast path read it: [`PLAIN_PAD`]).
    #[inline(always)]
    fn note(&mut self, rest: &[u8], len: usize, value: i64) {
        if let Some(head) = rest.get(..MEMO_BYTES) {
            if len <= MEMO_BYTES {
                self.bytes.copy_from_slice(head);
                self.len = len;
                self.value = value;
            }
        }
    }
}

/// [`mb_u64_at`] of column `idx`, taking `value` when the field's bytes are those of column
/// `like` of the same row, from which `value` was read ([`mb_u64_at`]): a total torch_npu often
/// writes twice in a row (allocated and active) is parsed once. `value` being `Some`, the field is
/// such a total and counts no warning.
#[inline(always)]
pub fn mb_u64_like(
    row: &Row<'_>,
    h: &HeaderMap,
    idx: Option<usize>,
    w: &mut Warnings,
    file: &str,
    (like, value): (Option<usize>, Option<u64>),
) -> Option<u64> {
    if let (Some(i), Some(j), Some(v)) = (idx, like, value) {
        if let (Some(a), Some(b)) = (row.record.get(i), row.record.get(j)) {
            if field_eq(a, b) {
                return Some(v);
            }
        }
    }
    mb_u64_at(row, h, idx, w, file, None)
}

/// Counts the negative total of column `idx` (out of line: rare).
#[cold]
#[inline(never)]
fn negative_total(row: &Row<'_>, h: &HeaderMap, idx: Option<usize>, w: &mut Warnings, file: &str) {
    let field = h.names.get(idx.unwrap_or(0)).map_or("", |s| s.as_str());
    w.add(
        file,
        row.line,
        row.byte,
        field,
        "negative total read as empty",
    );
}

/// The two leading fields of memory_record and npu_module_mem rows, in the columns located as
/// `(component, timestamp)`: a non-empty component name and a timestamp; `None` (the row counted
/// as skipped) when either is missing or bad.
pub fn component_and_time<'r>(
    row: &'r Row<'_>,
    h: &HeaderMap,
    (component, timestamp): (Option<usize>, Option<usize>),
    w: &mut Warnings,
    file: &str,
) -> Option<(std::borrow::Cow<'r, str>, i64)> {
    let Some(name) = row.text(component, w, file, "Component") else {
        w.add(
            file,
            row.line,
            row.byte,
            "Component",
            "empty component; row skipped",
        );
        return None;
    };
    let ts = time_or_skip(row, h, timestamp, w, file, None)?;
    Some((name, ts))
}

/// The timestamp of [`component_and_time`] (column `timestamp`), its second half: `None`
/// (counted: the row is skipped) when it is missing or bad.
#[inline(always)]
pub fn time_or_skip(
    row: &Row<'_>,
    h: &HeaderMap,
    timestamp: Option<usize>,
    w: &mut Warnings,
    file: &str,
    memo: Option<&mut NumberMemo>,
) -> Option<i64> {
    let ts = number_at(row, h, timestamp, w, file, TIME, memo);
    if ts.is_none() {
        no_timestamp(row, w, file);
    }
    ts
}

/// The readers' warnings as `(field, count, first line)`, the shape their tests compare.
#[cfg(test)]
pub(crate) fn warning_counts(warnings: &[Diagnostic]) -> Vec<(String, u64, u64)> {
    warnings
        .iter()
        .map(|d| {
            (
                d.field.clone().unwrap_or_default(),
                d.count,
                d.line.unwrap_or(0),
            )
        })
        .collect()
}

/// Counts a row skipped for want of a timestamp (out of line: rare).
#[cold]
#[inline(never)]
fn no_timestamp(row: &Row<'_>, w: &mut Warnings, file: &str) {
    w.add(
        file,
        row.line,
        row.byte,
        "Timestamp(us)",
        "no timestamp; row skipped",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number read where it lies in a larger buffer gives what the copied slice gives, whatever
    /// comes before and after it and however near the buffer's end it ends (the fast path reads
    /// whole words past the number there, or copies it out).
    #[test]
    fn a_span_parses_as_its_slice() {
        let mut rng = fastrand::Rng::with_seed(14);
        let mut texts: Vec<String> = [
            "1736405443871259.720",
            "98.051",
            "996.9599375",
            "0",
            "-1",
            "+3",
            " 7\t",
            "1.74E+15",
            "9999999999999999999",
            "18446744073709551615",
            "12345678901234567890.5",
            ".5",
            "5.",
            ".",
            "",
            "  ",
            "1.2.3",
            "12a",
            "\u{e9}1",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        for _ in 0..2000 {
            let int: String = (0..rng.usize(0..21))
                .map(|_| char::from(b'0' + rng.u8(0..10)))
                .collect();
            let frac: String = (0..rng.usize(0..8))
                .map(|_| char::from(b'0' + rng.u8(0..10)))
                .collect();
            texts.push(if rng.bool() {
                format!("{int}.{frac}")
            } else {
                int
            });
        }
        let afters: [&[u8]; 6] = [
            b"",
            b",",
            b"\", \"args\": {}}",
            b"0123456789012345678901234567890123",
            b".9",
            b"\t\t",
        ];
        for t in &texts {
            for before in [&b""[..], b"\"ts\": ", b"xx"] {
                for after in afters {
                    let mut buf = before.to_vec();
                    let start = buf.len();
                    buf.extend_from_slice(t.as_bytes());
                    let end = buf.len();
                    buf.extend_from_slice(after);
                    for (scale, mul) in [(0, 1), (3, 1), (0, 1 << 20)] {
                        assert_eq!(
                            parse_scaled_span(&buf, start, end, scale, mul),
                            parse_scaled_bytes(t.as_bytes(), scale, mul),
                            "{t:?} before {after:?}, scale {scale}, mul {mul}"
                        );
                    }
                }
            }
        }
        assert_eq!(parse_scaled_span(b"12", 1, 3, 0, 1), None);
        assert_eq!(parse_scaled_span(b"12", 2, 1, 0, 1), None);
    }

    #[test]
    fn times_parse_exactly() {
        assert_eq!(
            us_to_ns("1736405443871259.720\t"),
            Some(1_736_405_443_871_259_720)
        );
        assert_eq!(
            us_to_ns(" 1779785515596661.42 "),
            Some(1_779_785_515_596_661_420)
        );
        assert_eq!(us_to_ns("115.97"), Some(115_970));
        assert_eq!(us_to_ns("21084"), Some(21_084_000));
        assert_eq!(us_to_ns("1.74E+15"), Some(1_740_000_000_000_000_000));
        assert_eq!(us_to_ns("996.9599375"), Some(996_960));
        assert_eq!(us_to_ns("-0.5"), Some(-500));
        assert_eq!(us_to_ns("abc"), None);
        assert_eq!(us_to_ns(""), None);
        assert_eq!(us_to_ns("1e999"), None);
    }

    #[test]
    fn unchecked_steps_agree_with_128_bit_arithmetic() {
        // The multiply that skips its overflow check: against the exact product, at the edges of
        // the bit-length rule and on random pairs.
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut pairs = vec![
            (0, u64::MAX),
            (1, u64::MAX),
            (2, 1 << 63),
            (3, 1 << 62),
            (u64::MAX, u64::MAX),
        ];
        for a in 0..64 {
            for b in 0..64 {
                pairs.push((1u64 << a, (1u64 << b) | 1));
                pairs.push(((1u64 << a) - 1, u64::MAX >> b));
            }
        }
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pairs.push((x >> (x % 64), x.rotate_left(17) >> (x % 61)));
        }
        for (a, b) in pairs {
            let exact = u128::from(a) * u128::from(b);
            assert_eq!(mul_u64(a, b), u64::try_from(exact).ok(), "{a} × {b}");
        }
        for n in 0..30 {
            assert_eq!(pow10(n), 10u64.checked_pow(n), "10^{n}");
            assert_eq!(pow5(n), 5u64.checked_pow(n), "5^{n}");
        }
        // 19 digits take the unchecked steps, 20 the checked ones.
        assert_eq!(
            digits(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(digits(b"0000000000000000001"), Some(1));
        assert_eq!(digits(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(digits(b"18446744073709551616"), None);
        assert_eq!(digits(b"123456789012345678x"), None);
    }

    #[test]
    fn fast_path_agrees_with_the_128_bit_path() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 17 + 1) as usize;
            let int = (x >> 8) % 10u64.pow(digits as u32 % 16 + 1);
            let frac = (x >> 3) % 1_000_000_000;
            let places = (x % 10) as usize;
            let text = if places == 0 {
                int.to_string()
            } else {
                let f = format!("{frac:09}");
                format!("{int}.{}", &f[..places])
            };
            for (scale, mul) in [(3, 1), (0, 1024), (0, 1 << 20)] {
                assert_eq!(
                    parse_scaled(&text, scale, mul),
                    parse_general(text.as_bytes(), scale, mul),
                    "{text} scale {scale} mul {mul}"
                );
            }
        }
    }

    #[test]
    fn word_runs_read_what_the_byte_walk_reads_whatever_follows() {
        // Numbers of every shape the fast path takes or refuses, each followed by the rest of a
        // row (digits, a dot, a TAB, a comma, nothing), read in place and alone: the same values
        // as the byte-by-byte fast path before it, and through the general parser on refusal.
        let mut rng = fastrand::Rng::with_seed(31);
        let alphabet = b"0123456789.";
        let tails: [&[u8]; 6] = [
            b"",
            b"\t,1431569360,NPU:0\r\n",
            b"99999999999999999999999999999999",
            b".5.5.5.5.5.5.5.5.5.5.5.5.5.5.5.5",
            b",",
            b"\xff\x00\x30\x39",
        ];
        let mut numbers: Vec<Vec<u8>> = vec![
            b"1736405443871259.720".to_vec(),
            b"954.37060546875".to_vec(),
            b"9999999999999999999".to_vec(),
            b"99999999999999999999".to_vec(),
            b"1.".to_vec(),
            b".5".to_vec(),
            b".".to_vec(),
            b"12345678".to_vec(),
            b"123456789".to_vec(),
            b"1234567890123456.7".to_vec(),
            b"12345678901234567".to_vec(),
        ];
        for _ in 0..40_000 {
            let n = rng.usize(1..=21);
            numbers.push(
                (0..n)
                    .map(|_| {
                        if rng.u8(..8) == 0 {
                            alphabet[rng.usize(..alphabet.len())]
                        } else {
                            b'0' + rng.u8(..10)
                        }
                    })
                    .collect(),
            );
        }
        for num in &numbers {
            for tail in tails {
                let mut row = num.clone();
                row.extend_from_slice(tail);
                for (scale, mul) in [(3, 1), (0, 1024), (0, 1 << 20), (0, 1), (6, 1 << 10)] {
                    let want = parse_plain_reference(num, scale, mul)
                        .or_else(|| parse_general(num, scale, mul));
                    assert_eq!(
                        parse_scaled_in(&row, num.len(), scale, mul),
                        want,
                        "{:?} then {tail:?}, scale {scale} mul {mul}",
                        String::from_utf8_lossy(num)
                    );
                    assert_eq!(
                        parse_plain(&row, num.len(), scale, mul),
                        parse_plain_reference(num, scale, mul)
                    );
                }
            }
        }
    }

    #[test]
    fn digit_runs_equal_str_parse() {
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..20_000 {
            let m = rng.usize(..=19);
            let text: String = (0..m).map(|_| char::from(b'0' + rng.u8(..10))).collect();
            let mut buf = text.clone().into_bytes();
            buf.extend_from_slice(b"7.,\t7777777777777777777777777");
            let want = if m == 0 {
                Some(0)
            } else {
                text.parse::<u64>().ok()
            };
            assert_eq!(digit_run(&buf, 0, m), want, "{text}");
            let mut shifted = b"12".to_vec();
            shifted.extend_from_slice(&buf);
            assert_eq!(digit_run(&shifted, 2, m), want, "{text} at 2");
        }
    }

    #[test]
    fn high_halves_of_products_equal_128_bit_arithmetic() {
        let mut rng = fastrand::Rng::with_seed(64);
        let edges = [
            0,
            1,
            2,
            u64::MAX,
            u64::MAX - 1,
            1 << 32,
            (1 << 32) - 1,
            1 << 63,
        ];
        let pairs = edges
            .iter()
            .flat_map(|&a| edges.iter().map(move |&b| (a, b)))
            .chain((0..50_000).map(|_| (rng.u64(..) >> rng.u32(..64), rng.u64(..))));
        for (a, b) in pairs {
            let want = ((u128::from(a) * u128::from(b)) >> 64) as u64;
            assert_eq!(mul_high_halves(a, b), want, "{a} × {b}");
            assert_eq!(mul_high(a, b), want, "{a} × {b}");
        }
    }

    #[test]
    fn constant_divisors_divide_like_the_division_operator() {
        let mut rng = fastrand::Rng::with_seed(16);
        for d in 0..=27u32 {
            let p = 5u64.pow(d);
            let edges = [
                0,
                1,
                p - 1,
                p,
                p + 1,
                u64::MAX,
                u64::MAX - 1,
                u64::MAX / p * p,
            ];
            for x in edges
                .into_iter()
                .chain((0..2_000).map(|_| rng.u64(..) >> rng.u32(..64)))
            {
                assert_eq!(div_pow5(x, d), x / p, "{x} / 5^{d}");
            }
        }
    }

    /// `round(digits × mul × 10^scale / 10^frac)`, half away from zero, from the text's digits
    /// read by `str::parse` into 128 bits: the reference of the fast path's exact arithmetic.
    fn scaled_reference(int: &str, frac: &str, scale: u32, mul: u128) -> Option<i64> {
        let all = format!("{int}{frac}");
        let v: u128 = all.parse().ok()?;
        let num = v * mul * 10u128.pow(scale);
        let den = 10u128.pow(frac.len() as u32);
        let (q, r) = (num / den, num % den);
        let rounded = if 2 * r >= den { q + 1 } else { q };
        i64::try_from(rounded).ok()
    }

    /// A 20-byte number with its dot at byte 16 (torch_npu's times) is read without the search for
    /// its dot: digits give the exact reference; another dot, a sign, a letter or a blank among
    /// the first sixteen bytes give what the general parser gives on the trimmed field (two dots:
    /// no number).
    #[test]
    fn times_with_their_dot_at_byte_16() {
        let mut rng = fastrand::Rng::with_seed(16);
        let digits = |rng: &mut fastrand::Rng, n: usize| -> String {
            (0..n).map(|_| char::from(b'0' + rng.u8(..10))).collect()
        };
        let subs = b".-+eE x/";
        for _ in 0..20_000 {
            let (int, frac) = (digits(&mut rng, 16), digits(&mut rng, 3));
            let text = format!("{int}.{frac}");
            let mut bad = text.clone().into_bytes();
            bad[rng.usize(..16)] = subs[rng.usize(..subs.len())];
            for (scale, mul) in [(3, 1), (0, 1), (0, 1 << 20)] {
                assert_eq!(
                    parse_scaled(&text, scale, mul),
                    scaled_reference(&int, &frac, scale as u32, mul as u128),
                    "{text} scale {scale} mul {mul}"
                );
                assert_eq!(
                    parse_scaled_bytes(&bad, scale, mul),
                    parse_general(trim_bytes(&bad), scale, mul),
                    "{:?} scale {scale} mul {mul}",
                    String::from_utf8_lossy(&bad)
                );
            }
        }
        assert_eq!(parse_scaled("1.34567890123456.890", 3, 1), None);
        assert_eq!(
            parse_scaled("-234567890123456.890", 3, 1),
            Some(-234_567_890_123_456_890)
        );
        assert_eq!(
            parse_scaled(" 1736405443871259.720\t", 3, 1),
            Some(1_736_405_443_871_259_720)
        );
    }

    /// The inlined null test answers as the comparisons it replaced, for every case of the
    /// words and fields of other lengths.
    #[test]
    fn null_fields_are_the_words_they_were() {
        let old = |f: &[u8]| {
            f.is_empty()
                || f.eq_ignore_ascii_case(b"n/a")
                || f == b"None"
                || f.eq_ignore_ascii_case(b"nan")
        };
        let mut fields: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"0".to_vec(),
            b"na".to_vec(),
            b"n/a/".to_vec(),
        ];
        for w in ["n/a", "nan", "none", "null", "n/aa"] {
            for mask in 0..(1u32 << w.len()) {
                fields.push(
                    w.bytes()
                        .enumerate()
                        .map(|(i, c)| {
                            if mask >> i & 1 == 1 {
                                c.to_ascii_uppercase()
                            } else {
                                c
                            }
                        })
                        .collect(),
                );
            }
        }
        for f in &fields {
            assert_eq!(is_null_bytes(f), old(f), "{:?}", String::from_utf8_lossy(f));
        }
        assert!(is_null_bytes(b"None") && !is_null_bytes(b"none") && is_null_bytes(b"NaN"));
    }

    #[test]
    fn plain_numbers_equal_an_exact_reference_read_by_str_parse() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut texts: Vec<(String, String)> = vec![
            ("954".into(), "37060546875".into()),
            ("1736405443871259".into(), "720".into()),
            ("0".into(), "0005".into()),
            ("0".into(), "0004999".into()),
            ("18446744073709551".into(), "61".into()),
            ("9223372036854775".into(), "807".into()),
            ("".into(), "5".into()),
            ("7".into(), "".into()),
        ];
        for _ in 0..50_000 {
            let n_int = rng.usize(..=17);
            let n_frac = rng.usize(..=(19 - n_int).min(12));
            let digit_run = |rng: &mut fastrand::Rng, n: usize| -> String {
                (0..n).map(|_| char::from(b'0' + rng.u8(..10))).collect()
            };
            texts.push((digit_run(&mut rng, n_int), digit_run(&mut rng, n_frac)));
        }
        for (int, frac) in &texts {
            if int.is_empty() && frac.is_empty() {
                continue;
            }
            let text = if frac.is_empty() {
                int.clone()
            } else {
                format!("{int}.{frac}")
            };
            for (scale, mul) in [(3, 1), (0, 1024), (0, 1 << 20), (0, 1), (6, 1 << 10)] {
                assert_eq!(
                    parse_scaled(&text, scale as i32, mul),
                    scaled_reference(int, frac, scale, mul as u128),
                    "{text} scale {scale} mul {mul}"
                );
            }
        }
    }

    #[test]
    fn the_dot_is_found_where_a_byte_search_finds_it() {
        let mut rng = fastrand::Rng::with_seed(20);
        let alphabet = b"0123456789.-+eE \t\xae\x2e\xff";
        for _ in 0..20_000 {
            let len = rng.usize(..=24);
            let s: Vec<u8> = (0..len)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            assert_eq!(
                find_dot(&s),
                s.iter().position(|&c| c == b'.'),
                "{:?}",
                String::from_utf8_lossy(&s)
            );
        }
    }

    #[test]
    fn eight_digit_words() {
        let w = |s: &[u8; 8]| eight_digits(u64::from_le_bytes(*s));
        assert_eq!(w(b"12345678"), Some(12_345_678));
        assert_eq!(w(b"00000000"), Some(0));
        assert_eq!(w(b"99999999"), Some(99_999_999));
        for bad in [
            b"1234567:",
            b"/2345678",
            b"1234 678",
            b"12345\x0067",
            b"1234567\xb9",
        ] {
            assert_eq!(w(bad), None, "{bad:?}");
        }
        assert_eq!(
            digits(b"1736405443871259720"),
            Some(1_736_405_443_871_259_720)
        );
        assert_eq!(digits(b"99999999999999999999"), None);
    }

    #[test]
    fn sizes_parse_exactly() {
        assert_eq!(kb_to_bytes("18816.5"), Some(18816 * 1024 + 512));
        assert_eq!(kb_to_bytes("-0.5"), Some(-512));
        assert_eq!(mb_to_bytes("954.3701171875"), Some(1_000_729_600));
        assert_eq!(mb_to_bytes("1452"), Some(1452 << 20));
        assert!(is_null(" N/A "));
        assert!(is_null("\t"));
    }

    /// The fast path of a field reads what the general path (trim, null test, `parse_plain` or
    /// `parse_general`) reads, for fields of every shape followed by every kind of bytes (the
    /// next field, a line end, digits of an adjacent field as `csv_core`'s output has them, the
    /// buffer's end); plain numbers also equal the exact reference read by `str::parse`. The
    /// shapes torch_npu writes must take the fast path (else this test would compare nothing).
    #[test]
    fn fast_fields_read_as_the_general_path_reads_them() {
        let mut rng = fastrand::Rng::with_seed(16);
        let digits = |rng: &mut fastrand::Rng, n: usize| -> String {
            (0..n).map(|_| char::from(b'0' + rng.u8(0..10))).collect()
        };
        let mut fields: Vec<(String, Option<(String, String)>)> = Vec::new();
        for t in [
            "", " ", "\t", "n/a", "NaN", "None", ".", "-1", "+2", "1e3", "1.74E+15", " 7", "1.2.3",
            "12a", "0x10", "\u{e9}1", "1 2",
        ] {
            fields.push((t.to_string(), None));
        }
        for (t, int, frac) in [
            ("5.", "5", ""),
            (".5", "", "5"),
            ("7 ", "7", ""),
            ("7\t", "7", ""),
        ] {
            fields.push((t.to_string(), Some((int.to_string(), frac.to_string()))));
        }
        for _ in 0..20_000 {
            let (ni, nf) = (rng.usize(0..21), rng.usize(0..21));
            let int = digits(&mut rng, ni);
            let frac = digits(&mut rng, nf);
            let dot = rng.bool() || !frac.is_empty();
            let text = if dot {
                format!("{int}.{frac}")
            } else {
                int.clone()
            };
            let tail = ["", "\t", " ", "\t ", "x"][rng.usize(0..5)];
            let plain = (tail != "x" && !(int.is_empty() && frac.is_empty()))
                .then(|| (int.clone(), frac.clone()));
            fields.push((format!("{text}{tail}"), plain));
        }
        // torch_npu's shapes, each with its column's scale: times, MB values, KB sizes.
        let common: [(&str, i32, i128); 7] = [
            ("1736405443871259.720\t", 3, 1),
            ("1736405443871259.720", 3, 1),
            ("954.37060546875", 0, 1 << 20),
            ("1068.15673828125", 0, 1 << 20),
            ("1452.0", 0, 1 << 20),
            ("18816.5", 0, 1024),
            ("0", 0, 1024),
        ];
        let afters: [&[u8]; 6] = [b",", b"\r\n", b"\n", b"123", b"", b".9,"];
        let mut fast = 0;
        for (text, plain) in &fields {
            for after in afters {
                for pad in [0usize, 40] {
                    let mut buf = text.as_bytes().to_vec();
                    let len = buf.len();
                    buf.extend_from_slice(after);
                    buf.extend(std::iter::repeat_n(b',', pad));
                    for (scale, mul) in [(3, 1), (0, 1024), (0, 1 << 20)] {
                        let Some((v, end)) = parse_field_fast(&buf, len, scale, mul) else {
                            continue;
                        };
                        fast += 1;
                        assert_eq!(
                            scaled_general(&buf, len, scale, mul),
                            Some((Some(v), &buf[..end])),
                            "{text:?} then {after:?}"
                        );
                        let (int, frac) = plain.as_ref().expect("only numbers are fast");
                        assert_eq!(
                            Some(v),
                            scaled_reference(int, frac, scale as u32, mul as u128),
                            "{text:?}"
                        );
                    }
                }
            }
        }
        assert!(fast > 100_000, "{fast} fast reads");
        for (t, scale, mul) in common {
            let mut buf = t.as_bytes().to_vec();
            buf.extend_from_slice(&[b','; 40]);
            assert!(
                parse_field_fast(&buf, t.len(), scale, mul).is_some(),
                "{t:?}"
            );
        }
    }

    /// The digit classification against `is_ascii_digit`, byte by byte, for every byte value at
    /// every place.
    #[test]
    fn nondigit_masks_mark_what_is_not_a_digit() {
        for b in 0..=255u8 {
            for k in 0..16 {
                let mut w = [b'5'; 16];
                w[k] = b;
                let m = nondigits128(u128::from_le_bytes(w));
                let want: u128 = if b.is_ascii_digit() {
                    0
                } else {
                    0x80 << (8 * k)
                };
                assert_eq!(m, want, "byte {b:#x} at {k}");
                if k < 8 {
                    let m64 = nondigits64(u64::from_le_bytes(w[..8].try_into().unwrap()));
                    assert_eq!(u128::from(m64), want, "byte {b:#x} at {k}");
                }
            }
        }
    }

    /// The inline field comparison against `==` on byte strings of every length up to 40: equal
    /// copies, one byte changed at each place (to each of a few values), and a length one off.
    #[test]
    fn fields_compare_as_their_bytes() {
        let mut rng = fastrand::Rng::with_seed(29);
        for n in 0..=40usize {
            for _ in 0..50 {
                let a: Vec<u8> = (0..n).map(|_| rng.u8(..)).collect();
                assert!(field_eq(&a, &a.clone()), "{a:?}");
                for k in 0..n {
                    for d in [1u8, 0x20, 0x80, rng.u8(1..)] {
                        let mut b = a.clone();
                        b[k] ^= d;
                        assert!(!field_eq(&a, &b), "{a:?} byte {k}");
                        assert!(!field_eq(&b, &a), "{a:?} byte {k}");
                    }
                }
                let mut longer = a.clone();
                longer.push(rng.u8(..));
                assert!(!field_eq(&a, &longer) && !field_eq(&longer, &a));
                let c: Vec<u8> = (0..n).map(|_| rng.u8(..4)).collect();
                let d: Vec<u8> = (0..n).map(|_| rng.u8(..4)).collect();
                assert_eq!(field_eq(&c, &d), c == d, "{c:?} {d:?}");
            }
        }
    }

    /// A memo keeps only fields of at most its size read by the fast path, and finds exactly the
    /// bytes it kept.
    #[test]
    fn a_memo_finds_the_field_it_kept() {
        let mut memo = NumberMemo::default();
        assert_eq!(memo.find(b""), None);
        let row =
            b"1736405443870818.960\t,935.9951171875,1452.0,935.9951171875,1431569360,NPU:0\r\n";
        memo.note(row, 21, 7);
        assert_eq!(memo.find(&row[..21]), Some(7));
        assert_eq!(memo.find(&row[..20]), None);
        assert_eq!(memo.find(b"1736405443870818.961\t"), None);
        // Too long to keep: the memo stays as it was.
        memo.note(row, MEMO_BYTES + 1, 9);
        assert_eq!(memo.find(&row[..21]), Some(7));
        assert_eq!(memo.find(&row[..MEMO_BYTES + 1]), None);
        // Too little after it to copy (never so after the fast path): not kept either.
        memo.note(&row[..8], 4, 11);
        assert_eq!(memo.find(&row[..4]), None);
    }
}
