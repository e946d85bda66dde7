//! One search pass for the first place where either of two needles starts. The trace reader
//! looks for two kept categories (`"cpu_op"`, `queue"`) in every byte of a trace; two substring
//! searches read each byte twice, and on the project's Intel Xeon VM they were 12–13 % of the
//! trace's instructions. Both needles end with the same byte and share another one at the same
//! distance before their ends (`u`, four bytes before the closing quote), so two vector compares
//! mark every place where either may end, 64 bytes at a time; only those places are compared in
//! full (a few in a thousand bytes of a trace: a quote with a `u` four bytes before it).
//!
//! SIMD as in [`super::blocks`]: SSE2 on x86_64, AVX2 where the processor has it, SIMD128 on
//! wasm32 built with it; other targets, and needles without such shared bytes, search for each
//! needle with `memchr::memmem`.

/// Finds the first start of either of two needles (see the module's text).
#[derive(Debug)]
pub struct Either {
    /// The longer needle (the first one when both are as long).
    long: Vec<u8>,
    short: Vec<u8>,
    /// The bytes the vector filter compares, when the needles have them.
    filter: Option<Filter>,
    /// Both needles as the top bytes of a little-endian word, with the mask of those bytes, when
    /// both fit in eight bytes: a place the filter marks is then checked with one load and two
    /// compares.
    words: Option<[(u64, u64); 2]>,
}

/// What every end of either needle has: its last byte, and a byte `dist` before it.
// Without a vector filter (`find` searches with memmem there) the filter's bytes go unused.
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )),
    allow(dead_code)
)]
#[derive(Debug)]
struct Filter {
    /// The needles' common last byte.
    last: u8,
    /// A byte both needles have `dist` bytes before their last byte (`0 < dist < ` the shorter
    /// needle's length).
    mid: u8,
    dist: usize,
}

impl Either {
    /// The finder of `a` and `b` (neither empty). It takes the one-pass filter when both are at
    /// least two bytes long and have the same last byte and a second shared byte at the same
    /// distance before it; otherwise it searches for each with `memchr::memmem`.
    pub fn new(a: &[u8], b: &[u8]) -> Either {
        let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
        let word = |n: &[u8]| {
            let mut w = [0u8; 8];
            let at = 8usize.checked_sub(n.len())?;
            w.get_mut(at..)?.copy_from_slice(n);
            Some((
                u64::from_le_bytes(w),
                u64::MAX.checked_shl(8 * at as u32).unwrap_or(0),
            ))
        };
        Either {
            long: long.to_vec(),
            short: short.to_vec(),
            filter: Filter::new(long, short),
            words: word(long).zip(word(short)).map(|(l, s)| [l, s]),
        }
    }

    /// Whether the needles fit the one-pass filter.
    pub fn one_pass(&self) -> bool {
        self.filter.is_some()
    }
}

impl Filter {
    fn new(a: &[u8], b: &[u8]) -> Option<Filter> {
        let (&last, head_a) = a.split_last()?;
        let (&last_b, head_b) = b.split_last()?;
        if last != last_b || head_a.is_empty() || head_b.is_empty() {
            return None;
        }
        let shorter = a.len().min(b.len());
        // The farthest shared byte: a byte far from the last one says more beside it.
        let dist = (1..shorter)
            .rev()
            .find(|&d| a[a.len() - 1 - d] == b[b.len() - 1 - d])?;
        Some(Filter {
            last,
            mid: a[a.len() - 1 - dist],
            dist,
        })
    }
}

impl Either {
    /// The first offset `>= i` in `hay` where either needle starts (whole, within `hay`).
    pub fn find(&self, hay: &[u8], i: usize) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        {
            let Some(f) = &self.filter else {
                return self.find_by_memmem(hay, i);
            };
            if super::blocks::avx2() {
                // SAFETY: AVX2 was detected on this processor.
                return unsafe { self.find_avx2(f, hay, i) };
            }
            self.find_with(f.dist, hay, i, |w| f.mask_sse2(w))
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            let Some(f) = &self.filter else {
                return self.find_by_memmem(hay, i);
            };
            self.find_with(f.dist, hay, i, |w| f.mask_simd128(w))
        }
        #[cfg(not(any(
            target_arch = "x86_64",
            all(target_arch = "wasm32", target_feature = "simd128")
        )))]
        {
            self.find_by_memmem(hay, i)
        }
    }

    /// [`Either::find`] with one `memchr::memmem` search per needle: the targets without a
    /// vector filter here (memchr has its own kernels there).
    pub fn find_by_memmem(&self, hay: &[u8], i: usize) -> Option<usize> {
        let rest = hay.get(i..)?;
        let a = memchr::memmem::find(rest, &self.long);
        let b = memchr::memmem::find(rest, &self.short);
        match (a, b) {
            (Some(x), Some(y)) => Some(i + x.min(y)),
            (x, y) => x.or(y).map(|k| i + k),
        }
    }
}

// Without a vector filter the loop below goes unused.
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )),
    allow(dead_code)
)]
impl Either {
    /// The search over a filter: `mask(w)` marks the ends of 64 positions (bit `k` for position
    /// `dist + k` of `w`, `w` being `dist + 64` bytes) whose bytes pass the filter.
    #[inline(always)]
    fn find_with(
        &self,
        dist: usize,
        hay: &[u8],
        i: usize,
        mask: impl Fn(&[u8]) -> u64,
    ) -> Option<usize> {
        // The first place where a needle starting at `i` or later can end; `e >= dist`, since
        // `dist` is below the shorter needle's length.
        let mut e = i.checked_add(self.short.len().checked_sub(1)?)?;
        if let Some(limit) = hay.len().checked_sub(64) {
            while e <= limit {
                // SAFETY: `dist <= e` and `e + 64 <= hay.len()`.
                let w = unsafe { hay.get_unchecked(e - dist..e + 64) };
                let mut m = mask(w);
                while m != 0 {
                    let at = e + m.trailing_zeros() as usize;
                    if let Some(s) = self.ends_at(hay, i, at) {
                        return Some(self.earliest(hay, i, at, s));
                    }
                    m &= m - 1;
                }
                e += 64;
            }
        }
        while e < hay.len() {
            if let Some(s) = self.ends_at(hay, i, e) {
                return Some(self.earliest(hay, i, e, s));
            }
            e += 1;
        }
        None
    }

    /// [`Either::find_with`] compiled for AVX2, so the filter inlines into the loop.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt,bmi1")]
    fn find_avx2(&self, f: &Filter, hay: &[u8], i: usize) -> Option<usize> {
        self.find_with(f.dist, hay, i, |w| f.mask_avx2(w))
    }

    /// The start of a needle that ends at `e` and starts at `i` or later, if one does (the
    /// longer needle first: both match at one end only when the shorter one ends the longer
    /// one, and then the longer one starts first).
    #[inline(always)]
    fn ends_at(&self, hay: &[u8], i: usize, e: usize) -> Option<usize> {
        let start = |n: &[u8]| (e + 1).checked_sub(n.len()).filter(|&s| s >= i);
        let window = e
            .checked_sub(7)
            .and_then(|s| hay.get(s..=e))
            .and_then(|w| <[u8; 8]>::try_from(w).ok());
        if let (Some(words), Some(w)) = (self.words, window) {
            let w = u64::from_le_bytes(w);
            let [(long, long_mask), (short, short_mask)] = words;
            if w & long_mask == long {
                if let Some(s) = start(&self.long) {
                    return Some(s);
                }
            }
            return if w & short_mask == short {
                start(&self.short)
            } else {
                None
            };
        }
        [&self.long, &self.short].into_iter().find_map(|n| {
            let s = start(n)?;
            (hay.get(s..=e) == Some(n.as_slice())).then_some(s)
        })
    }

    /// The first start, given the match at `s` that ends first (at `e`): the longer needle may
    /// end up to the length difference later and still start before `s`.
    fn earliest(&self, hay: &[u8], i: usize, e: usize, s: usize) -> usize {
        let long = &self.long;
        let extra = long.len() - self.short.len();
        (e + 1..=e + extra)
            .filter_map(|e2| {
                let s2 = (e2 + 1).checked_sub(long.len())?;
                (s2 >= i && s2 < s && hay.get(s2..=e2) == Some(long.as_slice())).then_some(s2)
            })
            .next()
            .unwrap_or(s)
    }
}

impl Filter {
    /// The filter's mask of one window with SSE2, 16 positions per compare.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn mask_sse2(&self, w: &[u8]) -> u64 {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8,
        };
        let d = self.dist;
        if w.len() < d + 64 {
            return 0;
        }
        let p = w.as_ptr();
        // SAFETY: SSE2 is part of every x86_64 target; each load reads 16 bytes at `o <= d + 48`,
        // inside `w` (`d + 64` bytes), and unaligned loads have no alignment requirement.
        unsafe {
            let load = |o: usize| _mm_loadu_si128(p.add(o).cast::<__m128i>());
            let eq = |v, c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            let hit = |k: usize| {
                _mm_and_si128(eq(load(d + 16 * k), self.last), eq(load(16 * k), self.mid))
            };
            let h = [hit(0), hit(1), hit(2), hit(3)];
            // One test for the whole window: most windows have no place to check.
            let any = _mm_or_si128(_mm_or_si128(h[0], h[1]), _mm_or_si128(h[2], h[3]));
            if _mm_movemask_epi8(any) == 0 {
                return 0;
            }
            let bits = |k: usize| u64::from(_mm_movemask_epi8(h[k]) as u16) << (16 * k);
            bits(0) | bits(1) | bits(2) | bits(3)
        }
    }

    /// [`Filter::mask_sse2`] with AVX2, 32 positions per compare.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    fn mask_avx2(&self, w: &[u8]) -> u64 {
        use std::arch::x86_64::{
            __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
            _mm256_or_si256, _mm256_set1_epi8, _mm256_testz_si256,
        };
        let d = self.dist;
        if w.len() < d + 64 {
            return 0;
        }
        let p = w.as_ptr();
        // SAFETY: each load reads 32 bytes at `o <= d + 32`, inside `w` (`d + 64` bytes), and
        // unaligned loads have no alignment requirement.
        let load = |o: usize| unsafe { _mm256_loadu_si256(p.add(o).cast::<__m256i>()) };
        let eq = |v, c: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8));
        let hit = |k: usize| {
            _mm256_and_si256(eq(load(d + 32 * k), self.last), eq(load(32 * k), self.mid))
        };
        let (h0, h1) = (hit(0), hit(1));
        // One test for the whole window: most windows have no place to check.
        let any = _mm256_or_si256(h0, h1);
        if _mm256_testz_si256(any, any) == 1 {
            return 0;
        }
        let bits = |h| u64::from(_mm256_movemask_epi8(h) as u32);
        bits(h0) | bits(h1) << 32
    }

    /// [`Filter::mask_sse2`] with wasm SIMD128, 16 positions per compare.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[inline(always)]
    fn mask_simd128(&self, w: &[u8]) -> u64 {
        use core::arch::wasm32::{
            u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_and, v128_any_true, v128_or,
        };
        let d = self.dist;
        if w.len() < d + 64 {
            return 0;
        }
        let p = w.as_ptr();
        // SAFETY: each load reads 16 bytes at `o <= d + 48`, inside `w` (`d + 64` bytes); an
        // unaligned read has no alignment requirement, and every bit pattern is a valid v128.
        let load = |o: usize| unsafe { core::ptr::read_unaligned(p.add(o).cast::<v128>()) };
        let eq = |v, c: u8| u8x16_eq(v, u8x16_splat(c));
        let hit = |k: usize| v128_and(eq(load(d + 16 * k), self.last), eq(load(16 * k), self.mid));
        let h = [hit(0), hit(1), hit(2), hit(3)];
        // One test for the whole window: most windows have no place to check.
        if !v128_any_true(v128_or(v128_or(h[0], h[1]), v128_or(h[2], h[3]))) {
            return 0;
        }
        let bits = |k: usize| u64::from(u8x16_bitmask(h[k])) << (16 * k);
        bits(0) | bits(1) | bits(2) | bits(3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For every offset `i` (and one past the end), the first start of either needle at `i` or
    /// later, by comparing both needles at every offset.
    fn naive(hay: &[u8], a: &[u8], b: &[u8]) -> Vec<Option<usize>> {
        let mut first = vec![None; hay.len() + 1];
        for s in (0..hay.len()).rev() {
            let here = hay[s..].starts_with(a) || hay[s..].starts_with(b);
            first[s] = if here { Some(s) } else { first[s + 1] };
        }
        first
    }

    #[test]
    fn the_filter_takes_the_shared_bytes() {
        let f = Filter::new(b"\"cpu_op\"", b"queue\"").expect("the kept categories fit");
        assert_eq!((f.last, f.mid, f.dist), (b'"', b'u', 4));
        assert!(
            Filter::new(b"abc", b"abd").is_none(),
            "different last bytes"
        );
        assert!(
            Filter::new(b"xa", b"ya").is_none(),
            "nothing shared before the end"
        );
        assert!(Filter::new(b"a", b"ba").is_none(), "too short");
    }

    /// Text of the needles' own bytes (and a few others), with whole and cut needles planted at
    /// random places, so matches overlap, touch and straddle the 64-byte windows.
    fn text(rng: &mut fastrand::Rng, len: usize, needles: &[&[u8]]) -> Vec<u8> {
        let alphabet = b"\"cpu_oqe ,:{}xyb";
        let mut t = Vec::with_capacity(len + 16);
        while t.len() < len {
            match rng.u8(..6) {
                0 => {
                    let n = needles[rng.usize(..needles.len())];
                    t.extend_from_slice(n);
                }
                1 => {
                    let n = needles[rng.usize(..needles.len())];
                    let cut = rng.usize(..n.len());
                    if rng.bool() {
                        t.extend_from_slice(&n[..cut]);
                    } else {
                        t.extend_from_slice(&n[cut..]);
                    }
                }
                _ => t.push(alphabet[rng.usize(..alphabet.len())]),
            }
        }
        t
    }

    #[test]
    fn finds_what_a_search_at_every_offset_finds() {
        // The kept categories both ways round; a needle that ends the other; a longer needle
        // that can end after the shorter one and still start first (`xubyub` holds `ub`); two
        // pairs the filter does not fit (searched with memmem); a needle longer than a word.
        let pairs: [(&[u8], &[u8], bool); 8] = [
            (b"\"cpu_op\"", b"queue\"", true),
            (b"\"python_function\"", b"\"cpu_op\"", true),
            (b"queue\"", b"\"cpu_op\"", true),
            (b"u_\"", b"uu_\"", true),
            (b"cpu_op", b"pu_op", true),
            (b"ub", b"xubyub", true),
            (b"cpu", b"queue", false),
            (b"q", b"u_", false),
        ];
        let mut rng = fastrand::Rng::with_seed(19);
        for (a, b, one_pass) in pairs {
            let f = Either::new(a, b);
            assert_eq!(f.one_pass(), one_pass);
            for round in 0..300 {
                let len = if round % 10 == 0 {
                    rng.usize(..2000)
                } else {
                    rng.usize(..300)
                };
                let t = text(&mut rng, len, &[a, b]);
                let first = naive(&t, a, b);
                for i in 0..=t.len() + 1 {
                    let want = first.get(i).copied().flatten();
                    assert_eq!(
                        f.find(&t, i),
                        want,
                        "from {i} in {:?}",
                        String::from_utf8_lossy(&t)
                    );
                    assert_eq!(f.find_by_memmem(&t, i), want, "memmem, from {i}");
                    #[cfg(target_arch = "x86_64")]
                    if let Some(filter) = &f.filter {
                        let sse2 = f.find_with(filter.dist, &t, i, |w| filter.mask_sse2(w));
                        assert_eq!(sse2, want, "SSE2, from {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn finds_a_match_at_each_place_of_a_long_blank_text() {
        let f = Either::new(b"\"cpu_op\"", b"queue\"");
        for n in [b"\"cpu_op\"".as_slice(), b"queue\""] {
            for at in 0..200 {
                let mut t = vec![b' '; 200 + n.len()];
                t[at..at + n.len()].copy_from_slice(n);
                for i in [0, at.saturating_sub(1), at, at + 1] {
                    let want = (i <= at).then_some(at);
                    assert_eq!(f.find(&t, i), want, "{} at {at}, from {i}", n.len());
                }
                // Cut by the text's end: no match.
                assert_eq!(f.find(&t[..at + n.len() - 1], 0), None, "cut at {at}");
            }
        }
    }
}
