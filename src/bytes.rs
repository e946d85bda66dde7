//! Byte comparisons whose speed differs by target.
//!
//! Comparing two byte slices with `==` calls `memcmp`. Natively that is the C library's vectorised
//! routine; on wasm32 it is the Rust runtime's portable one, which compares a byte at a time, and
//! the page's engine spent more time there than in the trace scan's block skip (call stacks of
//! kilobytes compared against the ones already seen). [`same_bytes`] compares eight bytes at a
//! time on wasm32 and keeps `==` elsewhere.

/// True when `a` and `b` hold the same bytes.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    #[cfg(target_arch = "wasm32")]
    {
        same_bytes_by_words(a, b)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        a == b
    }
}

/// [`same_bytes`] in 64-bit words: 32 bytes per step while they last (one branch for four
/// words), then words, then the last bytes. Compiled on every target so that its tests run
/// natively.
pub fn same_bytes_by_words(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let word = |s: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(s);
        u64::from_le_bytes(w)
    };
    let mut wide_a = a.chunks_exact(32);
    let mut wide_b = b.chunks_exact(32);
    for (x, y) in (&mut wide_a).zip(&mut wide_b) {
        let mut diff = 0;
        for (p, q) in x.chunks_exact(8).zip(y.chunks_exact(8)) {
            diff |= word(p) ^ word(q);
        }
        if diff != 0 {
            return false;
        }
    }
    let (a, b) = (wide_a.remainder(), wide_b.remainder());
    let mut words_a = a.chunks_exact(8);
    let mut words_b = b.chunks_exact(8);
    for (x, y) in (&mut words_a).zip(&mut words_b) {
        if word(x) != word(y) {
            return false;
        }
    }
    words_a
        .remainder()
        .iter()
        .zip(words_b.remainder())
        .all(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_compare_agrees_with_equality_at_every_length_and_offset() {
        let base: Vec<u8> = (0..200u32).map(|k| (k * 37 % 251) as u8).collect();
        for len in 0..base.len() {
            let a = &base[..len];
            assert!(same_bytes_by_words(a, a));
            assert!(same_bytes(a, a));
            // One byte changed, at every place.
            for at in 0..len {
                let mut b = a.to_vec();
                b[at] ^= 0x40;
                assert!(!same_bytes_by_words(a, &b), "len {len}, changed at {at}");
                assert!(!same_bytes(a, &b));
            }
            // Different lengths, same prefix.
            if len > 0 {
                assert!(!same_bytes_by_words(a, &a[..len - 1]));
                assert!(!same_bytes_by_words(&a[..len - 1], a));
            }
        }
        // Unaligned starts.
        for off in 0..8 {
            let a = &base[off..off + 100];
            let copy = a.to_vec();
            assert!(same_bytes_by_words(a, &copy));
        }
    }
}
