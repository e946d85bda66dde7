//! An RGB image encoded as PNG exactly as the `png` crate's `Encoder` encodes it at
//! `Compression::High` (8-bit RGB, its adaptive row filter, zlib at flate2's best level), byte
//! for byte, with fewer instructions.
//!
//! The `png` crate hands its zlib stream two writes per image row (the filter byte, then the
//! row), and flate2 zero-fills its 32 KiB output buffer before every write: for somas_tool's two
//! 1200 × 480 charts that clearing was 29 % of `memlens somas --out`'s instructions on a small
//! dump. Here the rows are filtered the same way into one buffer, which is compressed in one
//! write: the compressor's output does not depend on how its input is cut into writes, and the
//! tests check every byte against the `png` crate's own encoder.

use flate2::write::ZlibEncoder;
use std::io::Write as _;

/// The PNG of a `width` × `height` image of RGB triples, row by row from the top: the bytes
/// `png::Encoder` writes for it with `ColorType::Rgb`, `BitDepth::Eight` and `Compression::High`.
pub fn encode_rgb(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let row = width as usize * 3;
    let size = row * height as usize;
    if rgb.len() != size {
        return Err(png::EncodingError::IoError(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} bytes of RGB for a {width} × {height} image: expected {size}",
                rgb.len()
            ),
        )));
    }
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::High);
    let mut w = enc.write_header()?;
    let mut filtered = Vec::with_capacity(size + height as usize);
    let zero = vec![0u8; row];
    let mut prev: &[u8] = &zero;
    let mut cur = vec![0u8; row];
    for line in rgb.chunks_exact(row.max(1)).take(height as usize) {
        let kind = adaptive_filter(prev, line, &mut cur);
        filtered.push(kind);
        filtered.extend_from_slice(&cur);
        prev = line;
    }
    let mut z = ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&filtered)?;
    let zlib = z.finish()?;
    // The png crate's own split of the stream into IDAT chunks.
    for chunk in zlib.chunks((u32::MAX >> 1) as usize) {
        w.write_chunk(png::chunk::IDAT, chunk)?;
    }
    w.finish()?;
    Ok(out)
}

/// Bytes per pixel of 8-bit RGB: the distance of the `a` (left) neighbour in the filters.
const BPP: usize = 3;

/// PNG row filter types (the byte that starts each filtered row).
const SUB: u8 = 1;
const UP: u8 = 2;
const AVG: u8 = 3;
const PAETH: u8 = 4;

/// The `png` crate's `Filter::Adaptive`: tries Up, Sub, Avg and Paeth in that order, keeps the
/// last one whose sum of the filtered bytes as signed magnitudes is the smallest so far (ties go
/// to the later filter), stops at a sum of 0, and never chooses no filter. Writes the filtered
/// row into `out` and returns its filter type.
fn adaptive_filter(prev: &[u8], cur: &[u8], out: &mut [u8]) -> u8 {
    let mut best = u64::MAX;
    let mut choice = UP;
    for kind in [UP, SUB, AVG, PAETH] {
        apply(kind, prev, cur, out);
        let cost = magnitude(out);
        if cost <= best {
            best = cost;
            choice = kind;
            if cost == 0 {
                return choice;
            }
        }
    }
    if choice != PAETH {
        apply(choice, prev, cur, out);
    }
    choice
}

/// The sum of `bytes` taken as signed magnitudes, the adaptive filter's cost; summed 32 bytes at
/// a time into a small accumulator, which the compiler vectorises.
fn magnitude(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(32);
    let mut sum = 0u64;
    for chunk in &mut chunks {
        // At most 32 × 128: fits in 16 bits.
        let mut acc = 0u16;
        for &b in chunk {
            acc += u16::from((b as i8).unsigned_abs());
        }
        sum += u64::from(acc);
    }
    sum + chunks
        .remainder()
        .iter()
        .map(|&b| u64::from((b as i8).unsigned_abs()))
        .sum::<u64>()
}

/// Filters `cur` (with `prev`, the row above, zeros for the first row) by filter type `kind`
/// into `out`, as the PNG specification defines it. The first pixel has no left neighbour (0);
/// the rest is written as plain loops over zipped rows, which the compiler vectorises.
fn apply(kind: u8, prev: &[u8], cur: &[u8], out: &mut [u8]) {
    let first = BPP.min(cur.len());
    let (head, body) = out.split_at_mut(first);
    // Row above, current row and their left neighbours (the bytes one pixel earlier).
    let (up, cur_rest) = (&prev[first..], &cur[first..]);
    let (left, up_left) = (&cur[..cur.len() - first], &prev[..prev.len() - first]);
    match kind {
        SUB => {
            head.copy_from_slice(&cur[..first]);
            for ((o, &x), &a) in body.iter_mut().zip(cur_rest).zip(left) {
                *o = x.wrapping_sub(a);
            }
        }
        UP => {
            for ((o, &x), &b) in out.iter_mut().zip(cur).zip(prev) {
                *o = x.wrapping_sub(b);
            }
        }
        AVG => {
            for ((o, &x), &b) in head.iter_mut().zip(cur).zip(prev) {
                *o = x.wrapping_sub(b / 2);
            }
            for (((o, &x), &a), &b) in body.iter_mut().zip(cur_rest).zip(left).zip(up) {
                // (a + b) / 2 without leaving u8.
                *o = x.wrapping_sub((a & b) + ((a ^ b) >> 1));
            }
        }
        _ => {
            // With a and c 0, the predictor is b.
            for ((o, &x), &b) in head.iter_mut().zip(cur).zip(prev) {
                *o = x.wrapping_sub(b);
            }
            for ((((o, &x), &a), &b), &c) in
                body.iter_mut().zip(cur_rest).zip(left).zip(up).zip(up_left)
            {
                *o = x.wrapping_sub(paeth(a, b, c));
            }
        }
    }
}

/// The Paeth predictor: of the left (`a`), upper (`b`) and upper-left (`c`) neighbours, the one
/// nearest to `a + b - c`, ties going to `a`, then `b`; computed in bytes (the distance to `c`
/// matters only when `c` lies between `a` and `b`, and is then the difference of the other two),
/// so that the loop vectorises.
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let pa = b.max(c) - b.min(c);
    let pb = a.max(c) - a.min(c);
    let pc = if (a < c) == (c < b) {
        pa.max(pb) - pa.min(pb)
    } else {
        u8::MAX
    };
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `png` crate's own encoding of the same image: the expectation.
    fn by_png_crate(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::High);
        let mut w = enc.write_header().unwrap();
        w.write_image_data(rgb).unwrap();
        w.finish().unwrap();
        out
    }

    /// Images of several kinds and sizes (widths not a multiple of the png crate's 32-byte
    /// chunks, one pixel, one row, one column): random noise, flat areas with lines (as the
    /// charts), gradients (where every filter wins somewhere) and all-zero rows (a sum of 0).
    fn images() -> Vec<(u32, u32, Vec<u8>)> {
        let mut rng = fastrand::Rng::with_seed(20);
        let mut out = Vec::new();
        for &(w, h) in &[
            (1, 1),
            (1, 7),
            (9, 1),
            (11, 5),
            (33, 17),
            (200, 60),
            (1200, 480),
        ] {
            let n = (w * h * 3) as usize;
            out.push((w, h, (0..n).map(|_| rng.u8(..)).collect()));
            let mut chart = vec![255u8; n];
            for y in 0..h as usize {
                for x in 0..w as usize {
                    let at = (y * w as usize + x) * 3;
                    if x % 7 == 0 || y % 5 == 0 || (x + y) % 13 == 0 {
                        chart[at..at + 3].copy_from_slice(&[31, 119, 180]);
                    }
                    if (x * 3 + y * 2) % 29 < 2 {
                        chart[at..at + 3].copy_from_slice(&[rng.u8(..), 0, 40]);
                    }
                }
            }
            out.push((w, h, chart));
            let grad = (0..n)
                .map(|i| {
                    let (p, c) = (i / 3, i % 3);
                    let (x, y) = (p % w as usize, p / w as usize);
                    (x * (c + 1) + y * (3 - c) + (x * y) % 5) as u8
                })
                .collect();
            out.push((w, h, grad));
            let mut zeros = vec![0u8; n];
            for (i, v) in zeros.iter_mut().enumerate() {
                if (i / (w as usize * 3)) % 3 == 1 {
                    *v = (i % 251) as u8;
                }
            }
            out.push((w, h, zeros));
        }
        out
    }

    #[test]
    fn the_bytes_are_the_png_crates_own() {
        for (w, h, rgb) in images() {
            assert_eq!(
                encode_rgb(w, h, &rgb).unwrap(),
                by_png_crate(w, h, &rgb),
                "{w}x{h}"
            );
        }
    }

    #[test]
    fn a_buffer_of_the_wrong_size_is_refused() {
        assert!(encode_rgb(4, 4, &[0; 47]).is_err());
        assert!(encode_rgb(4, 4, &[0; 49]).is_err());
    }
}
