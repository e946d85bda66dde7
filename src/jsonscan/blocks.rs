//! The structural scan in 64-byte blocks, in the manner of simdjson's first stage: each block is
//! turned into four bit masks (quotes, backslashes, opening and closing brackets) with SIMD
//! compares, the bytes inside strings are found from the quote mask with a prefix XOR, and the
//! nesting depth moves by the population counts of the brackets outside strings. A block whose
//! closing brackets cannot bring the depth to zero is done in a handful of instructions; only the
//! block where the value ends is walked bit by bit.
//!
//! Escapes are found in bulk too: the bytes escaped by a backslash are those after an odd run of
//! backslashes, found from the backslash mask with a few additions ([`escaped_bytes`]), and
//! escaped quotes are dropped from the quote mask before the prefix XOR. Only a block with a
//! backslash *outside* a string (damaged text, where it escapes nothing) is walked byte by byte,
//! with the same rules as [`super::lex::skip_nested_scalar`], so both give the same answer on any
//! input, valid JSON or not; the tests compare them on every offset of generated and damaged text.
//!
//! SIMD: SSE2 on x86_64 (part of its baseline, so no detection is needed), with AVX2 used when the
//! processor reports it; SIMD128 on wasm32 when the build enables it. Other targets keep the
//! scalar scan ([`super::lex::skip_nested`] chooses).
//!
//! The AVX2 copies of the scan loops are also compiled with POPCNT and BMI1, which every AVX2
//! processor has (Intel since Haswell, AMD since Excavator) but x86_64's baseline lacks: the depth
//! step counts a block's brackets and its quotes' parity with `count_ones`, which without POPCNT
//! compiles to a dozen-instruction bit trick per count, and walks brackets with `trailing_zeros`
//! and `x & (x - 1)` (TZCNT, BLSR with BMI1). On the project's Intel Xeon VM this took the scan
//! loop of a 100 MiB trace from 233 M to 181 M instructions (docs/benchmarks.md). They also take
//! the prefix XOR as one carry-less multiplication (PCLMULQDQ, which every AVX2 processor has),
//! as simdjson does, instead of six shifts and XORs.

use super::lex::Scan;

/// Bit `k` of each mask stands for byte `k` of a 64-byte block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Masks {
    /// `"`.
    pub quote: u64,
    /// `\`.
    pub backslash: u64,
    /// `{` or `[`.
    pub open: u64,
    /// `}` or `]`.
    pub close: u64,
}

/// Whether this build has a SIMD classifier (otherwise the scalar scan is the faster one).
pub const HAS_SIMD: bool = cfg!(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
));

/// The masks of one block, byte by byte: the reference the SIMD classifiers are tested against,
/// and the classifier of targets without one.
pub fn classify_scalar(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (k, &c) in block.iter().enumerate() {
        let bit = 1u64 << k;
        match c {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b'{' | b'[' => m.open |= bit,
            b'}' | b']' => m.close |= bit,
            _ => {}
        }
    }
    m
}

/// The masks of one block with SSE2 (16 bytes per compare). `c | 0x20` maps `[` onto `{` and `]`
/// onto `}` and no other byte onto either, so one compare finds each bracket pair.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_sse2(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut m = Masks::default();
    for (k, chunk) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of every x86_64 target; `chunk` is 16 readable bytes and the
        // unaligned load has no alignment requirement.
        unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let bits = |x| u64::from(_mm_movemask_epi8(x) as u16) << (16 * k);
            m.quote |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
            m.backslash |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
            m.open |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)));
            m.close |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)));
        }
    }
    m
}

/// The masks of one block with AVX2 (32 bytes per compare), same folding as [`classify_sse2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn classify_avx2(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };
    let mut m = Masks::default();
    for (k, chunk) in block.chunks_exact(32).enumerate() {
        // SAFETY: `chunk` is 32 readable bytes and the unaligned load has no alignment
        // requirement; this function only runs where AVX2 was detected.
        let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
        let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        let bits = |x| u64::from(_mm256_movemask_epi8(x) as u32) << (32 * k);
        m.quote |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)));
        m.backslash |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)));
        m.open |= bits(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'{' as i8)));
        m.close |= bits(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'}' as i8)));
    }
    m
}

/// The masks of one block with wasm SIMD128 (16 bytes per compare), same folding as SSE2.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn classify_simd128(block: &[u8; 64]) -> Masks {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_or};
    let mut m = Masks::default();
    for (k, chunk) in block.chunks_exact(16).enumerate() {
        let mut a = [0u8; 16];
        a.copy_from_slice(chunk);
        // A 16-byte array and a v128 have the same size and every bit pattern is valid for both;
        // the copy compiles to one unaligned load.
        let v: v128 = unsafe { core::mem::transmute::<[u8; 16], v128>(a) };
        let folded = v128_or(v, u8x16_splat(0x20));
        let bits = |x| u64::from(u8x16_bitmask(x)) << (16 * k);
        m.quote |= bits(u8x16_eq(v, u8x16_splat(b'"')));
        m.backslash |= bits(u8x16_eq(v, u8x16_splat(b'\\')));
        m.open |= bits(u8x16_eq(folded, u8x16_splat(b'{')));
        m.close |= bits(u8x16_eq(folded, u8x16_splat(b'}')));
    }
    m
}

/// Bit `k` of the result is the XOR of bits `0..=k` of `x`: with the quote mask, the bytes from an
/// opening quote up to (not including) its closing quote. Six shifts and XORs; the AVX2 copies of
/// the scan loops take [`prefix_xor_clmul`] instead.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// [`prefix_xor`] as one carry-less multiplication (PCLMULQDQ), as simdjson does: multiplying `x`
/// by 64 one-bits XORs into bit `k` of the product every bit `j <= k` of `x`. One multiplication
/// and two moves instead of a chain of twelve dependent instructions per block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2,pclmulqdq")]
#[inline]
fn prefix_xor_clmul(x: u64) -> u64 {
    use std::arch::x86_64::{
        _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set1_epi8, _mm_set_epi64x,
    };
    let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
    _mm_cvtsi128_si64(product) as u64
}

/// The bytes escaped by a backslash in a block whose backslashes are `backslash`, when
/// `carry_in` says the block's first byte is escaped by the previous block (an odd run of
/// backslashes at its end), and whether this block's last run escapes the next block's first byte.
/// A run of backslashes escapes the byte after it when its length is odd; the runs are found with
/// one addition per parity of their start (simdjson's odd-backslash-sequence method), so a block
/// of escaped call stacks costs a few instructions instead of a walk over its 64 bytes.
///
/// Only the escaped bytes that are not backslashes are marked (a backslash escaped by another
/// one is neither a quote nor a bracket, so it needs no mark).
#[inline(always)]
fn escaped_bytes(backslash: u64, carry_in: bool) -> (u64, bool) {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    const ODD: u64 = !EVEN;
    let carry = u64::from(carry_in);
    let starts = backslash & !(backslash << 1);
    // A run at bit 0 after an escaping carry counts as starting one byte earlier.
    let even_start_mask = EVEN ^ carry;
    let even_starts = starts & even_start_mask;
    let odd_starts = starts & !even_start_mask;
    // Adding a run's start bit to the run carries to the first byte after it.
    let even_ends = backslash.wrapping_add(even_starts) & !backslash;
    let (odd_sum, carry_out) = backslash.overflowing_add(odd_starts);
    let odd_ends = (odd_sum | carry) & !backslash;
    // Odd length: an even start ends on an odd bit, an odd start on an even bit.
    ((even_ends & ODD) | (odd_ends & EVEN), carry_out)
}

/// The scan's state between blocks.
#[derive(Debug, Default)]
struct State {
    depth: usize,
    in_str: bool,
    /// The previous block ended with a backslash inside a string.
    esc: bool,
}

impl State {
    /// One block starting at `pos`, of which bytes `from..len` are scanned (`from < 64`, `len <=
    /// 64`: a value may start inside a block, and the buffer may end inside one); `Some(end)` when
    /// the value ends in it.
    #[inline(always)]
    fn block(
        &mut self,
        m: Masks,
        bytes: &[u8],
        pos: usize,
        from: usize,
        len: usize,
        prefix_xor: impl Fn(u64) -> u64,
    ) -> Option<usize> {
        let below_len = if len >= 64 { !0 } else { (1u64 << len) - 1 };
        let valid = below_len & (!0u64 << (from & 63));
        let backslash = m.backslash & valid;
        let mut quote = m.quote & valid;
        let mut esc_out = false;
        if self.esc || backslash != 0 {
            if self.esc && from != 0 {
                return self.bytewise(bytes, pos + from, len.saturating_sub(from));
            }
            let (escaped, carry) = escaped_bytes(backslash, self.esc);
            quote &= !escaped;
            esc_out = carry;
        }
        let mut inside = prefix_xor(quote);
        if self.in_str {
            inside = !inside;
        }
        if backslash & !inside != 0 {
            // A backslash outside a string (damaged text): it escapes nothing there, which the
            // masks above assumed it did; the byte-by-byte rules decide this block.
            return self.bytewise(bytes, pos + from, len.saturating_sub(from));
        }
        self.esc = esc_out;
        self.in_str ^= quote.count_ones() & 1 == 1;
        let open = m.open & valid & !inside;
        let close = m.close & valid & !inside;
        let closes = close.count_ones() as usize;
        if closes < self.depth {
            // The depth cannot reach zero in this block, whatever the order of its brackets.
            self.depth = self.depth + open.count_ones() as usize - closes;
            return None;
        }
        let mut brackets = open | close;
        while brackets != 0 {
            let k = brackets.trailing_zeros();
            brackets &= brackets - 1;
            if open >> k & 1 == 1 {
                self.depth += 1;
            } else {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    return Some(pos + k as usize + 1);
                }
            }
        }
        None
    }

    /// A block with a backslash outside a string, one byte at a time (the rules of the scalar
    /// scan).
    #[cold]
    fn bytewise(&mut self, bytes: &[u8], pos: usize, len: usize) -> Option<usize> {
        for (k, &c) in bytes.get(pos..pos + len)?.iter().enumerate() {
            if self.esc {
                self.esc = false;
            } else if self.in_str {
                match c {
                    b'\\' => self.esc = true,
                    b'"' => self.in_str = false,
                    _ => {}
                }
            } else {
                match c {
                    b'"' => self.in_str = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth == 0 {
                            return Some(pos + k + 1);
                        }
                    }
                    _ => {}
                }
            }
        }
        None
    }
}

/// The scan loop over a classifier and a prefix XOR (monomorphised per instruction set).
#[inline(always)]
fn skip_with(
    b: &[u8],
    i: usize,
    classify: impl Fn(&[u8; 64]) -> Masks,
    prefix_xor: impl Fn(u64) -> u64,
) -> Scan {
    let mut st = State::default();
    let mut pos = i;
    while pos < b.len() {
        let len = (b.len() - pos).min(64);
        if let Some(end) = st.block(classify_at(b, pos, &classify), b, pos, 0, len, &prefix_xor) {
            return Scan::Done(end);
        }
        pos += 64;
    }
    Scan::Cut
}

/// The masks of the block of `b` at `pos` (`pos < b.len()`); a last block shorter than 64 bytes
/// is padded with blanks, which are not structural, so callers mask nothing but its length.
#[inline(always)]
fn classify_at(b: &[u8], pos: usize, classify: &impl Fn(&[u8; 64]) -> Masks) -> Masks {
    match b
        .get(pos..pos + 64)
        .and_then(|s| <&[u8; 64]>::try_from(s).ok())
    {
        Some(block) => classify(block),
        None => {
            let mut arr = [b' '; 64];
            if let Some(src) = b.get(pos..) {
                if let Some(dst) = arr.get_mut(..src.len()) {
                    dst.copy_from_slice(src);
                }
            }
            classify(&arr)
        }
    }
}

/// The masks of the block a scan last classified in one buffer. The events of a piece follow one
/// another within a few hundred bytes, so an event mostly starts in the block where the previous
/// one ended: with those masks kept, and blocks aligned to the buffer rather than to each event's
/// start, each 64-byte block of a piece is classified about once instead of once per event that
/// touches it.
///
/// A cursor belongs to one buffer: a scan of another buffer takes a new one.
#[derive(Debug, Clone, Copy)]
pub struct Cursor {
    /// Offset of the kept block in the buffer (`usize::MAX`: none yet).
    at: usize,
    masks: Masks,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor {
            at: usize::MAX,
            masks: Masks::default(),
        }
    }
}

/// Calls `$with(args…, classifier $(, prefix_xor)?)` with the best classifier this target has:
/// AVX2 when the processor has it, with POPCNT, BMI1 and PCLMULQDQ (through `$avx2`, the same
/// function compiled for them so the classifier and [`prefix_xor_clmul`] inline), else SSE2 on
/// x86_64, SIMD128 on wasm32 built with it, the portable one elsewhere. With `$px` the portable
/// [`prefix_xor`] is passed after the classifier (the loops that walk depth need it).
macro_rules! with_best_classifier {
    ($with:ident, $avx2:ident, $($arg:expr),+ $(; $px:ident)?) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if avx2() {
                // SAFETY: AVX2, POPCNT, BMI1 and PCLMULQDQ were detected on this processor.
                return unsafe { $avx2($($arg),+) };
            }
            $with($($arg),+, classify_sse2 $(, $px)?)
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            $with($($arg),+, classify_simd128 $(, $px)?)
        }
        #[cfg(not(any(
            target_arch = "x86_64",
            all(target_arch = "wasm32", target_feature = "simd128")
        )))]
        {
            $with($($arg),+, classify_scalar $(, $px)?)
        }
    }};
}

impl Cursor {
    /// End of the object or array starting at `b[i]`: the same result as
    /// [`super::lex::skip_nested`] on any input, with the scan that chooses.
    pub fn skip_nested(&mut self, b: &[u8], i: usize) -> Scan {
        match kernel() {
            _ if !HAS_SIMD => return super::lex::skip_nested_scalar(b, i),
            Kernel::Scalar => return super::lex::skip_nested_scalar(b, i),
            Kernel::Uncached => return skip_nested_blocks(b, i),
            Kernel::Best | Kernel::NoAvx2 => {}
        }
        with_best_classifier!(skip_cached_with, skip_cached_avx2, b, i, 0, self; prefix_xor)
    }

    /// End of the object starting at `b[i]` when its members up to `b[j]` were already read by
    /// the caller and are well-formed (strings, nested values ended by this cursor, plain numbers
    /// and literals), `j` being outside any string and directly inside the object (depth 1): the
    /// same result as [`Cursor::skip_nested`] from `i`, without scanning the members read again.
    /// A reader that found what it looked for among an event's first members ends the event here.
    pub fn skip_rest(&mut self, b: &[u8], i: usize, j: usize) -> Scan {
        match kernel() {
            _ if !HAS_SIMD => return super::lex::skip_nested_scalar(b, i),
            Kernel::Scalar => return super::lex::skip_nested_scalar(b, i),
            Kernel::Uncached => return skip_nested_blocks(b, i),
            Kernel::Best | Kernel::NoAvx2 => {}
        }
        with_best_classifier!(skip_cached_with, skip_cached_avx2, b, j, 1, self; prefix_xor)
    }
}

/// The scan loop of [`Cursor::skip_nested`] over a classifier and a prefix XOR: blocks at
/// multiples of 64 in `b`, the first one scanned from `i` (outside strings, at nesting `depth`),
/// each classified unless it is the cursor's.
#[inline(always)]
fn skip_cached_with(
    b: &[u8],
    i: usize,
    depth: usize,
    cur: &mut Cursor,
    classify: impl Fn(&[u8; 64]) -> Masks,
    prefix_xor: impl Fn(u64) -> u64,
) -> Scan {
    let mut st = State {
        depth,
        ..State::default()
    };
    let mut pos = i - i % 64;
    let mut from = i % 64;
    while pos < b.len() {
        let len = (b.len() - pos).min(64);
        let m = if cur.at == pos {
            cur.masks
        } else {
            let m = classify_at(b, pos, &classify);
            *cur = Cursor { at: pos, masks: m };
            m
        };
        if let Some(end) = st.block(m, b, pos, from, len, &prefix_xor) {
            return Scan::Done(end);
        }
        pos += 64;
        from = 0;
    }
    Scan::Cut
}

/// [`skip_cached_with`] compiled for AVX2 (with POPCNT, BMI1 and PCLMULQDQ), so the classifier
/// and the prefix XOR inline into the loop and the bracket counts are one instruction each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,bmi1,pclmulqdq")]
fn skip_cached_avx2(b: &[u8], i: usize, depth: usize, cur: &mut Cursor) -> Scan {
    // This function only runs where AVX2, POPCNT, BMI1 and PCLMULQDQ were detected.
    skip_cached_with(
        b,
        i,
        depth,
        cur,
        |a| classify_avx2(a),
        |x| prefix_xor_clmul(x),
    )
}

/// End of the object or array starting at `b[i]`, by blocks; the same result as
/// [`super::lex::skip_nested_scalar`] on any input. Uses the portable classifier on targets
/// without SIMD (correct, but slower than the scalar scan there).
pub fn skip_nested_blocks(b: &[u8], i: usize) -> Scan {
    with_best_classifier!(skip_with, skip_avx2, b, i; prefix_xor)
}

/// The block scan compiled for AVX2 (with POPCNT, BMI1 and PCLMULQDQ), so the classifier and the
/// prefix XOR inline into the loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,bmi1,pclmulqdq")]
fn skip_avx2(b: &[u8], i: usize) -> Scan {
    // This function only runs where AVX2, POPCNT, BMI1 and PCLMULQDQ were detected.
    skip_with(b, i, |a| classify_avx2(a), |x| prefix_xor_clmul(x))
}

/// End (exclusive: after the closing quote) of the string whose bytes continue at `b[j]`, `j`
/// being inside the string and not after a backslash; `None` when the buffer ends first. Blocks
/// of 64 bytes from `j`, the escaped quotes found in bulk ([`escaped_bytes`]): long strings full
/// of escapes (call stacks, whose frames are separated by `\r\n`) cost a few instructions per
/// block instead of a search restarted after every backslash. The same answer as the byte-by-byte
/// walk of [`super::lex::scan_string_scalar`] on any input.
pub fn string_end(b: &[u8], j: usize) -> Option<usize> {
    with_best_classifier!(string_end_with, string_end_avx2, b, j)
}

/// [`string_end`] over a classifier.
#[inline(always)]
fn string_end_with(b: &[u8], j: usize, classify: impl Fn(&[u8; 64]) -> Masks) -> Option<usize> {
    let mut pos = j;
    let mut carry = false;
    while pos < b.len() {
        let len = (b.len() - pos).min(64);
        let m = classify_at(b, pos, &classify);
        let valid = if len >= 64 { !0 } else { (1u64 << len) - 1 };
        let (escaped, next) = escaped_bytes(m.backslash & valid, carry);
        let quotes = m.quote & valid & !escaped;
        if quotes != 0 {
            return Some(pos + quotes.trailing_zeros() as usize + 1);
        }
        carry = next;
        pos += 64;
    }
    None
}

/// [`string_end_with`] compiled for AVX2 (with POPCNT and BMI1), so the classifier inlines into
/// the loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,bmi1")]
fn string_end_avx2(b: &[u8], j: usize) -> Option<usize> {
    // SAFETY (of the calls below): this function only runs where AVX2, POPCNT and BMI1 were
    // detected.
    string_end_with(b, j, |a| classify_avx2(a))
}

/// Which scan [`super::lex::skip_nested`] uses; benchmarks switch it to compare the scans in one
/// run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// The block scan with the best classifier of this build and processor (the default).
    Best,
    /// The scalar scan.
    Scalar,
    /// The block scan without AVX2 (SSE2 on x86_64).
    NoAvx2,
    /// The block scan with the best classifier, each value's blocks classified from its own
    /// start ([`Cursor`] keeps nothing between calls): the scan before the cursor, to compare.
    Uncached,
}

static KERNEL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Chooses the scan for the whole process (for benchmarks; results are the same with each).
pub fn use_kernel(k: Kernel) {
    let v = match k {
        Kernel::Best => 0,
        Kernel::Scalar => 1,
        Kernel::NoAvx2 => 2,
        Kernel::Uncached => 3,
    };
    KERNEL.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// The scan in use.
pub fn kernel() -> Kernel {
    match KERNEL.load(std::sync::atomic::Ordering::Relaxed) {
        1 => Kernel::Scalar,
        2 => Kernel::NoAvx2,
        3 => Kernel::Uncached,
        _ => Kernel::Best,
    }
}

/// Whether the processor has AVX2, POPCNT, BMI1 and PCLMULQDQ (detected once; the AVX2 copies of
/// the loops use all four, and every AVX2 processor has the other three) and the kernel in use
/// may take it.
#[cfg(target_arch = "x86_64")]
pub(super) fn avx2() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static KNOWN: AtomicU8 = AtomicU8::new(0);
    let has = match KNOWN.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let has = std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("popcnt")
                && std::is_x86_feature_detected!("bmi1")
                && std::is_x86_feature_detected!("pclmulqdq");
            KNOWN.store(if has { 2 } else { 1 }, Ordering::Relaxed);
            has
        }
    };
    has && kernel() != Kernel::NoAvx2
}

/// The masks of one block with the best classifier of this build (for tests against
/// [`classify_scalar`]).
pub fn classify(block: &[u8; 64]) -> Masks {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2() {
            // SAFETY: AVX2 was detected on this processor.
            return unsafe { classify_avx2(block) };
        }
        classify_sse2(block)
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        classify_simd128(block)
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        classify_scalar(block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_xor_marks_string_interiors() {
        // Quotes at 1 and 5: bytes 1..5 are inside.
        assert_eq!(prefix_xor(0b10_0010), 0b01_1110);
        assert_eq!(prefix_xor(0), 0);
        assert_eq!(prefix_xor(1), !0);
    }

    /// Bit `k` is the parity of bits `0..=k` of `x`, one bit at a time.
    fn prefix_xor_reference(x: u64) -> u64 {
        let mut inside = false;
        let mut out = 0;
        for k in 0..64 {
            inside ^= x >> k & 1 == 1;
            out |= u64::from(inside) << k;
        }
        out
    }

    #[test]
    fn both_prefix_xors_equal_a_bit_by_bit_walk() {
        let mut rng = fastrand::Rng::with_seed(23);
        let mut words = vec![
            0,
            !0,
            1,
            1 << 63,
            0b11,
            1 << 32,
            (1 << 32) - 1,
            !0 >> 1,
            !0 << 1,
        ];
        words.extend((0..64).map(|k| 1u64 << k));
        for _ in 0..20_000 {
            words.push(match rng.u8(..3) {
                0 => rng.u64(..),
                1 => rng.u64(..) & rng.u64(..) & rng.u64(..),
                _ => rng.u64(..) | rng.u64(..) | rng.u64(..),
            });
        }
        #[cfg(target_arch = "x86_64")]
        let clmul = std::is_x86_feature_detected!("pclmulqdq");
        for &x in &words {
            let want = prefix_xor_reference(x);
            assert_eq!(prefix_xor(x), want, "{x:064b}");
            #[cfg(target_arch = "x86_64")]
            if clmul {
                // SAFETY: PCLMULQDQ was detected.
                assert_eq!(unsafe { prefix_xor_clmul(x) }, want, "PCLMULQDQ: {x:064b}");
            }
        }
    }

    /// The escaped bytes of a block, one byte at a time, and whether the next block's first
    /// byte is escaped.
    fn escaped_reference(backslash: u64, carry_in: bool) -> (u64, bool) {
        let mut esc = carry_in;
        let mut out = 0;
        for k in 0..64 {
            let bit = 1u64 << k;
            if esc {
                out |= bit;
                esc = false;
            } else if backslash & bit != 0 {
                esc = true;
            }
        }
        (out & !backslash, esc)
    }

    #[test]
    fn escaped_bytes_equal_a_byte_by_byte_walk() {
        let mut rng = fastrand::Rng::with_seed(11);
        let mut masks = vec![0, !0, 1, 1 << 63, 0b11, 0b111, !0 >> 1, !0 << 1];
        for _ in 0..20_000 {
            // Runs of various lengths: AND/OR of random words makes sparse and dense masks.
            let m = match rng.u8(..3) {
                0 => rng.u64(..),
                1 => rng.u64(..) & rng.u64(..) & rng.u64(..),
                _ => rng.u64(..) | rng.u64(..) | rng.u64(..),
            };
            masks.push(m);
        }
        for &m in &masks {
            for carry in [false, true] {
                assert_eq!(
                    escaped_bytes(m, carry),
                    escaped_reference(m, carry),
                    "{m:064b} carry {carry}"
                );
            }
        }
    }

    #[test]
    fn simd_masks_equal_the_byte_by_byte_masks() {
        let mut rng = fastrand::Rng::with_seed(7);
        let alphabet = b"\"\\{}[]:, aZ_\x7b\x5b\x7d\x5d\xfb\xdb\xfd\xdd\x00\x7f\xff";
        for _ in 0..2000 {
            let mut block = [0u8; 64];
            for c in block.iter_mut() {
                *c = if rng.bool() {
                    alphabet[rng.usize(..alphabet.len())]
                } else {
                    rng.u8(..)
                };
            }
            check(&block);
        }
        let every: Vec<u8> = (0..=255).collect();
        for chunk in every.chunks_exact(64) {
            let mut block = [0u8; 64];
            block.copy_from_slice(chunk);
            check(&block);
        }
    }

    /// Every classifier this build and processor have, against the byte-by-byte one.
    fn check(block: &[u8; 64]) {
        let want = classify_scalar(block);
        assert_eq!(classify(block), want, "{block:?}");
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(classify_sse2(block), want, "SSE2: {block:?}");
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 was detected.
                assert_eq!(unsafe { classify_avx2(block) }, want, "AVX2: {block:?}");
            }
        }
    }
}
