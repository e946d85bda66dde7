//! Splits a CSV [`Source`] into rows: a fast path for the lines torch_npu writes (no
//! quote, no carriage return but the one of a CRLF line end), and `csv_core`, the `csv` crate's
//! own parser, for every other row (quoted fields, quoted line breaks, lone CRs).
//!
//! The rows, fields and positions are those the `csv` crate's reader gives with default settings
//! (blank lines skipped; a row's position is where the reader stood after the row before, so a
//! row after blank lines is placed on the first of them), with CRLF rows placed on their own line
//! rather than on the line feed before them. A differential test holds it to that reader.

use crate::source::{read_size, Source, SourceError, STOP_CHECK_BYTES};

/// Bytes read from the source at a time, unless the source prefers larger reads
/// ([`Source::preferred_read`]).
const CHUNK: usize = 1 << 20;

/// One row's fields: `bytes[start..end]` for each span.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'b> {
    bytes: &'b [u8],
    spans: &'b [(usize, usize)],
}

impl<'b> Fields<'b> {
    /// Number of fields.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True for a row without fields (never returned by [`RowSplitter::next_row`]).
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Field `i` as read (quotes removed, doubled quotes made single, blanks kept).
    pub fn get(&self, i: usize) -> Option<&'b [u8]> {
        let &(a, b) = self.spans.get(i)?;
        self.bytes.get(a..b)
    }

    /// Field `i` with what follows it in the buffer: `(rest, len)`, the field being `rest[..len]`
    /// (number parsers read whole words past a field's end and mask the excess off).
    pub fn get_with_rest(&self, i: usize) -> Option<(&'b [u8], usize)> {
        let &(a, b) = self.spans.get(i)?;
        Some((self.bytes.get(a..)?, b.checked_sub(a)?))
    }

    /// The fields in order.
    pub fn iter(&self) -> impl Iterator<Item = &'b [u8]> + 'b {
        let bytes = self.bytes;
        self.spans
            .iter()
            .map(move |&(a, b)| bytes.get(a..b).unwrap_or(&[]))
    }
}

/// What [`RowSplitter::next_row`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// A row (its fields in [`RowSplitter::fields`]), starting at 1-based `line` and `byte`.
    Row {
        /// 1-based line of the row's start.
        line: u64,
        /// Byte offset of the row's start.
        byte: u64,
    },
    /// A row of `limit` bytes or more: it was dropped up to the end of line `end_line` (never
    /// held whole), and reading goes on after it with a fresh quoting state.
    TooLong {
        /// 1-based line of the row's start.
        line: u64,
        /// Byte offset of the row's start.
        byte: u64,
        /// The line on which the row was cut and whose end was skipped to.
        end_line: u64,
    },
    /// No more rows.
    End,
}

/// Reads a [`Source`] front to back in chunks and hands out its CSV rows one at a time.
///
/// Memory stays at one chunk plus one row of at most the limit given to [`RowSplitter::new`].
pub struct RowSplitter<'a, 'p> {
    src: &'a dyn Source,
    /// File offset of the next chunk to read.
    pos: u64,
    /// The bytes read and not dropped, `buf[..end]`; the rest is room kept from earlier chunks
    /// (so that a chunk is read into it without zeroing it first: `callgrind` counted the zeroing
    /// at 3.7 % of the CSV readers' instructions).
    buf: Vec<u8>,
    /// End of the bytes read in `buf`.
    end: usize,
    /// Start of the unread bytes in `buf`.
    at: usize,
    /// File offset of `buf[0]`.
    buf_off: u64,
    /// 1-based line of `buf[at]`.
    line: u64,
    limit: usize,
    chunk: usize,
    progress: Option<&'p mut dyn FnMut(u64, u64)>,
    core: csv_core::Reader,
    /// The last row's fields: spans into `buf` (fast path) or into `out` (`csv_core`).
    spans: Vec<(usize, usize)>,
    in_buf: bool,
    /// The row before ended with a CRLF (the csv crate's reader stopped on its LF).
    after_crlf: bool,
    /// The row last returned was ended by the end of the data, not by a line end.
    unterminated: bool,
    out: Vec<u8>,
    ends: Vec<usize>,
    /// File offset from which the next row asks whether the load was stopped
    /// ([`Source::check_stop`], every [`STOP_CHECK_BYTES`]).
    next_check: u64,
    /// The block of `buf` the line pass classified last.
    win: Window,
}

impl<'a, 'p> RowSplitter<'a, 'p> {
    /// A splitter over `src` that cuts rows at `limit` bytes, calling `progress(done, total)`
    /// after each chunk.
    pub fn new(
        src: &'a dyn Source,
        limit: usize,
        progress: Option<&'p mut dyn FnMut(u64, u64)>,
    ) -> Self {
        RowSplitter {
            src,
            pos: 0,
            buf: Vec::new(),
            end: 0,
            at: 0,
            buf_off: 0,
            line: 1,
            limit: limit.max(1),
            chunk: read_size(src, CHUNK),
            progress,
            core: csv_core::Reader::new(),
            spans: Vec::new(),
            in_buf: true,
            after_crlf: false,
            unterminated: false,
            out: Vec::new(),
            ends: Vec::new(),
            next_check: if src.may_stop() {
                STOP_CHECK_BYTES
            } else {
                u64::MAX
            },
            win: Window::NONE,
        }
    }

    /// Reads `chunk` bytes at a time instead of the size [`read_size`] gives (tests and fuzzing
    /// use small chunks to put rows across chunk ends).
    pub fn with_chunk(mut self, chunk: usize) -> Self {
        self.chunk = chunk.max(1);
        self
    }

    /// The fields of the row [`RowSplitter::next_row`] last returned.
    pub fn fields(&self) -> Fields<'_> {
        Fields {
            bytes: if self.in_buf {
                self.buf.get(..self.end).unwrap_or(&[])
            } else {
                &self.out
            },
            spans: &self.spans,
        }
    }

    /// True when the row [`RowSplitter::next_row`] last returned ended where the data did, with
    /// no line end after it: a file cut inside that row, or one written without a last line end.
    pub fn ended_without_line_end(&self) -> bool {
        self.unterminated
    }

    /// The bytes read and not dropped.
    fn data(&self) -> &[u8] {
        self.buf.get(..self.end).unwrap_or(&[])
    }

    /// Appends the next chunk to `buf` (first dropping the bytes before `keep`, which moves by
    /// as much); false at the end of the source.
    fn fill(&mut self, keep: &mut usize) -> Result<bool, SourceError> {
        if self.pos >= self.src.len() {
            return Ok(false);
        }
        let drop = (*keep).min(self.at).min(self.end);
        if drop > 0 {
            self.buf.copy_within(drop..self.end, 0);
            self.end -= drop;
            // The classified block's bytes moved.
            self.win = Window::NONE;
            self.buf_off += drop as u64;
            self.at -= drop;
            *keep -= drop;
        }
        let old = self.end;
        let want = usize::try_from((self.src.len() - self.pos).min(self.chunk as u64))
            .unwrap_or(self.chunk);
        if self.buf.len() < old + want {
            // Grown to what this fill needs and no more: one chunk after the kept part of a row,
            // which is shorter than the row limit. Left to `resize`, the first fill after a row
            // cut by a chunk's end outgrew the first chunk's exact size and doubled the buffer.
            self.buf
                .reserve_exact((old + want).saturating_sub(self.buf.len()));
            self.buf.resize(old + want, 0);
        }
        let mut done = 0;
        while done < want {
            let dst = self.buf.get_mut(old + done..old + want).unwrap_or(&mut []);
            let n = self.src.read_at(self.pos + done as u64, dst)?;
            if n == 0 {
                break;
            }
            done += n;
        }
        self.end = old + done;
        self.pos += done as u64;
        if let Some(p) = self.progress.as_mut() {
            p(self.pos, self.src.len());
        }
        // A source shorter than it said it was ends here.
        if done == 0 {
            self.pos = self.src.len();
        }
        Ok(done > 0)
    }

    /// The next row. `Err` only when the source cannot be read, or the load was stopped
    /// ([`Source::check_stop`], asked every [`STOP_CHECK_BYTES`] of rows: a chunk read whole
    /// takes a while to parse).
    pub fn next_row(&mut self) -> Result<Next, SourceError> {
        let here = self.buf_off + self.at as u64;
        if here >= self.next_check {
            self.src.check_stop(here)?;
            self.next_check = here + STOP_CHECK_BYTES;
        }
        if self.at == self.end {
            let mut keep = self.at;
            self.fill(&mut keep)?;
        }
        let (mut start, mut start_line) = (self.buf_off + self.at as u64, self.line);
        // Rows are placed where the csv crate's reader stood after the row before, one byte and
        // one line on when that is an LF (it stops on the LF of a CRLF, which this splitter has
        // consumed with its line already), as files were always reported.
        if !std::mem::take(&mut self.after_crlf) && self.data().get(self.at) == Some(&b'\n') {
            start += 1;
            start_line += 1;
        }
        loop {
            // One pass over the line at `at` finds its end and its commas, and stops at a quote or
            // a CR that does not end the line (a row for `csv_core`), reading more as needed; the
            // bytes and commas already passed stay found when `fill` moves them.
            self.spans.clear();
            let mut pass = LinePass {
                j: self.at,
                field: self.at,
            };
            let nl = loop {
                let data = self.buf.get(..self.end).unwrap_or(&[]);
                match pass.run(data, &mut self.spans, &mut self.win) {
                    LineEnd::Newline(n) => break Some(n),
                    LineEnd::Special => return self.slow_row(start, start_line),
                    LineEnd::More => {}
                }
                if self.end - self.at >= self.limit {
                    return self.too_long(start, start_line);
                }
                let mut keep = self.at;
                let before = self.at;
                let more = self.fill(&mut keep)?;
                let moved = before - self.at;
                pass.j -= moved;
                pass.field -= moved;
                for sp in &mut self.spans {
                    sp.0 -= moved;
                    sp.1 -= moved;
                }
                if !more {
                    break None;
                }
            };
            let end = nl.unwrap_or(self.end);
            if nl.is_none() && end == self.at {
                return Ok(Next::End);
            }
            // The line's body: without the CR of a CRLF (a CR anywhere else went to `csv_core`).
            let body_end =
                if nl.is_some() && end > self.at && self.data().get(end - 1) == Some(&b'\r') {
                    end - 1
                } else {
                    end
                };
            let next = nl.map_or(end, |n| n + 1);
            if body_end == self.at {
                // A blank line: skipped, and the next row is placed where this one started.
                self.at = next;
                self.line += u64::from(nl.is_some());
                continue;
            }
            self.spans.push((pass.field, body_end));
            self.in_buf = true;
            self.after_crlf = body_end < end;
            self.unterminated = nl.is_none();
            self.at = next;
            self.line += u64::from(nl.is_some());
            return Ok(Next::Row {
                line: start_line,
                byte: start,
            });
        }
    }

    /// A row through `csv_core`, from `at` (a record boundary).
    fn slow_row(&mut self, start: u64, start_line: u64) -> Result<Next, SourceError> {
        use csv_core::ReadRecordResult as R;
        self.core.reset();
        if self.out.len() < 1024 {
            self.out.resize(1024, 0);
        }
        if self.ends.len() < 64 {
            self.ends.resize(64, 0);
        }
        let (mut nout, mut nend) = (0usize, 0usize);
        let mut row_at = self.at;
        let mut eof = false;
        loop {
            let input = if eof {
                &[][..]
            } else {
                self.buf.get(self.at..self.end).unwrap_or(&[])
            };
            let (res, nin, o, e) = self.core.read_record(
                input,
                self.out.get_mut(nout..).unwrap_or(&mut []),
                self.ends.get_mut(nend..).unwrap_or(&mut []),
            );
            self.line += memchr::memchr_iter(b'\n', input.get(..nin).unwrap_or(&[])).count() as u64;
            self.at += nin;
            nout += o;
            nend += e;
            match res {
                R::InputEmpty if eof => return Ok(Next::End),
                R::InputEmpty => {
                    if self.at - row_at >= self.limit {
                        return self.too_long(start, start_line);
                    }
                    if !self.fill(&mut row_at)? {
                        // An empty input tells `csv_core` the data ended.
                        eof = true;
                    }
                }
                R::OutputFull => {
                    let n = self.out.len() * 2;
                    self.out.resize(n, 0);
                }
                R::OutputEndsFull => {
                    let n = self.ends.len() * 2;
                    self.ends.resize(n, 0);
                }
                R::Record => break,
                R::End => return Ok(Next::End),
            }
        }
        // A record ended by the CR of a CRLF: its LF belongs to it, not to the next row.
        let ended_by_cr = self.at > 0 && self.data().get(self.at - 1) == Some(&b'\r');
        if ended_by_cr {
            if self.at == self.end {
                let mut keep = self.at;
                self.fill(&mut keep)?;
            }
            if self.data().get(self.at) == Some(&b'\n') {
                self.at += 1;
                self.line += 1;
                self.after_crlf = true;
            }
        }
        self.spans.clear();
        let mut a = 0;
        for &e in self.ends.get(..nend).unwrap_or(&[]) {
            self.spans.push((a, e));
            a = e;
        }
        self.in_buf = false;
        // `csv_core` ended the record only when told the data had ended.
        self.unterminated = eof;
        Ok(Next::Row {
            line: start_line,
            byte: start,
        })
    }

    /// Drops the rest of the line holding `buf[at]` (the row's bytes before it are dropped too)
    /// and reports the row from `start` as too long.
    fn too_long(&mut self, start: u64, start_line: u64) -> Result<Next, SourceError> {
        let end_line = self.line;
        loop {
            if let Some(i) = memchr::memchr(b'\n', self.data().get(self.at..).unwrap_or(&[])) {
                self.at += i + 1;
                self.line += 1;
                break;
            }
            self.at = self.end;
            let mut keep = self.at;
            if !self.fill(&mut keep)? {
                break;
            }
        }
        Ok(Next::TooLong {
            line: start_line,
            byte: start,
            end_line,
        })
    }
}

/// Where a line ended, as [`LinePass::run`] found it.
enum LineEnd {
    /// At the LF at this index.
    Newline(usize),
    /// At a quote, or a CR not followed by its LF: a row for `csv_core`.
    Special,
    /// At the end of the bytes read so far.
    More,
}

/// The classified 64-byte block of the buffer that the last line pass ended in: rows of a few
/// dozen bytes (`memory_record.csv`) start inside the block their previous row ended in, and are
/// split from its masks without classifying those bytes again.
#[derive(Debug, Clone, Copy)]
struct Window {
    /// Index in the buffer of the block's first byte (`usize::MAX`: none, as no index is past it).
    base: usize,
    /// Bit `k`: byte `base + k` is a comma.
    commas: u64,
    /// Bit `k`: byte `base + k` is an LF, a CR or a quote (where a fast-path line ends or leaves).
    ends: u64,
}

impl Window {
    const NONE: Window = Window {
        base: usize::MAX,
        commas: 0,
        ends: 0,
    };
}

/// The comma and line-end masks of a 64-byte block (see [`Window`]), SSE2 on x86_64 (part of its
/// baseline: no detection), SIMD128 on wasm32 when the build enables it, a byte loop elsewhere.
#[inline(always)]
fn classify(block: &[u8; 64]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
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

/// [`classify`] byte by byte: the reference the SIMD classifiers are tested against, and the
/// classifier of targets without SIMD.
#[cfg_attr(
    any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ),
    allow(dead_code)
)]
fn classify_scalar(block: &[u8; 64]) -> (u64, u64) {
    let (mut commas, mut ends) = (0u64, 0u64);
    for (k, &c) in block.iter().enumerate() {
        match c {
            b',' => commas |= 1 << k,
            b'\n' | b'\r' | b'"' => ends |= 1 << k,
            _ => {}
        }
    }
    (commas, ends)
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_sse2(block: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let (mut commas, mut ends) = (0u64, 0u64);
    for (k, chunk) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of every x86_64 target; `chunk` is 16 readable bytes and the
        // unaligned load has no alignment requirement.
        unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            let bits = |x| u64::from(_mm_movemask_epi8(x) as u16) << (16 * k);
            commas |= bits(eq(b','));
            ends |= bits(_mm_or_si128(_mm_or_si128(eq(b'\n'), eq(b'\r')), eq(b'"')));
        }
    }
    (commas, ends)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn classify_simd128(block: &[u8; 64]) -> (u64, u64) {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_or};
    let (mut commas, mut ends) = (0u64, 0u64);
    for (k, chunk) in block.chunks_exact(16).enumerate() {
        let mut a = [0u8; 16];
        a.copy_from_slice(chunk);
        // A 16-byte array and a v128 have the same size and every bit pattern is valid for both;
        // the copy compiles to one unaligned load.
        let v: v128 = unsafe { core::mem::transmute::<[u8; 16], v128>(a) };
        let eq = |c: u8| u8x16_eq(v, u8x16_splat(c));
        let bits = |x| u64::from(u8x16_bitmask(x)) << (16 * k);
        commas |= bits(eq(b','));
        ends |= bits(v128_or(v128_or(eq(b'\n'), eq(b'\r')), eq(b'"')));
    }
    (commas, ends)
}

/// One pass over a line of the fast path: its commas and its end, from the masks of 64-byte blocks
/// ([`classify`]) where the buffer holds a whole block at `j`, byte by byte in its last bytes.
/// The masks tell commas from line ends, so the commas before a line's end are pushed without
/// looking at their bytes (the SWAR pass this replaced asked each hit what it was, a branch that
/// `perf` found mispredicted).
struct LinePass {
    /// Next byte to look at.
    j: usize,
    /// Start of the field being read.
    field: usize,
}

impl LinePass {
    /// Goes on from `j`, pushing the span of each field a comma ends onto `spans`; `win` is the
    /// block classified last (reused when `j` is inside it, replaced when a new one is).
    fn run(&mut self, b: &[u8], spans: &mut Vec<(usize, usize)>, win: &mut Window) -> LineEnd {
        loop {
            let j = self.j;
            if j.checked_sub(win.base).is_none_or(|o| o >= 64) {
                match b.get(j..j + 64).and_then(|s| <&[u8; 64]>::try_from(s).ok()) {
                    Some(block) => {
                        let (commas, ends) = classify(block);
                        *win = Window {
                            base: j,
                            commas,
                            ends,
                        };
                    }
                    None => {
                        // The last bytes read: one at a time.
                        let Some(&c) = b.get(j) else {
                            return LineEnd::More;
                        };
                        self.j = j + 1;
                        match c {
                            b',' => {
                                spans.push((self.field, j));
                                self.field = j + 1;
                            }
                            b'\n' => return LineEnd::Newline(j),
                            // The CR of a CRLF: the line ends at its LF.
                            b'\r' if b.get(j + 1) == Some(&b'\n') => {
                                self.j = j + 2;
                                return LineEnd::Newline(j + 1);
                            }
                            b'\r' | b'"' => return LineEnd::Special,
                            _ => {}
                        }
                        continue;
                    }
                }
            }
            // Bits from `j` on; the block's bytes before `j` are shifted out.
            let off = j - win.base;
            let ends = win.ends >> off;
            let stop = ends.trailing_zeros() as usize;
            let mut commas = win.commas >> off;
            if stop < 64 {
                commas &= (1u64 << stop) - 1;
            }
            while commas != 0 {
                let k = j + commas.trailing_zeros() as usize;
                commas &= commas - 1;
                spans.push((self.field, k));
                self.field = k + 1;
            }
            if stop >= 64 - off {
                // No line end in the rest of the block.
                self.j = win.base + 64;
                continue;
            }
            let k = j + stop;
            match b.get(k) {
                Some(b'\n') => {
                    self.j = k + 1;
                    return LineEnd::Newline(k);
                }
                // The CR of a CRLF: the LF after it ends the line (returned at once, not found
                // again by one more turn of the loop).
                Some(b'\r') if b.get(k + 1) == Some(&b'\n') => {
                    self.j = k + 2;
                    return LineEnd::Newline(k + 1);
                }
                _ => return LineEnd::Special,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::BytesSource;

    type Rows = Vec<(u64, u64, Vec<Vec<u8>>)>;

    /// The rows as the `csv` crate's reader gives them, CRLF rows placed on their own line.
    fn reference(data: &[u8]) -> Rows {
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(data);
        let mut out = Vec::new();
        let mut rec = csv::ByteRecord::new();
        while rdr.read_byte_record(&mut rec).unwrap() {
            let p = rec.position().unwrap();
            let (line, byte) = if data.get(p.byte() as usize) == Some(&b'\n') {
                (p.line() + 1, p.byte() + 1)
            } else {
                (p.line(), p.byte())
            };
            out.push((line, byte, rec.iter().map(<[u8]>::to_vec).collect()));
        }
        out
    }

    fn split(data: &[u8], chunk: usize) -> Rows {
        let src = BytesSource::new("t.csv", data.to_vec());
        let mut s = RowSplitter::new(&src, 1 << 30, None).with_chunk(chunk);
        let mut out = Vec::new();
        loop {
            match s.next_row().unwrap() {
                Next::Row { line, byte } => {
                    out.push((line, byte, s.fields().iter().map(<[u8]>::to_vec).collect()))
                }
                Next::End => return out,
                Next::TooLong { .. } => panic!("no limit here"),
            }
        }
    }

    #[test]
    fn rows_fields_and_places_are_the_csv_crates() {
        let pieces: [&[u8]; 12] = [
            b"a",
            b"12.5",
            b",",
            b",",
            b"\n",
            b"\r\n",
            b"\r",
            b"\"",
            b"\"\"",
            b" ",
            b"\t",
            b"x,\"q,\nr\",y",
        ];
        let mut x: u64 = 0x853C_49E6_748F_EA9B;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..2_500 {
            let mut data = Vec::new();
            for _ in 0..next(40) {
                data.extend_from_slice(pieces[next(pieces.len() as u64) as usize]);
            }
            let want = reference(&data);
            for chunk in [1, 2, 3, 7, 64, 1 << 20] {
                assert_eq!(
                    split(&data, chunk),
                    want,
                    "{:?} chunk {chunk}",
                    String::from_utf8_lossy(&data)
                );
            }
        }
    }

    #[test]
    fn block_masks_equal_the_byte_by_byte_masks() {
        let alphabet = b",\n\r\"a0.\t \xff\x0c\x2d\x8a";
        let mut rng = fastrand::Rng::with_seed(13);
        for _ in 0..20_000 {
            let mut block = [0u8; 64];
            for b in &mut block {
                *b = alphabet[rng.usize(..alphabet.len())];
            }
            let (commas, ends) = classify_scalar(&block);
            let bit = |k: usize| 1u64 << k;
            for (k, &c) in block.iter().enumerate() {
                assert_eq!(commas & bit(k) != 0, c == b',');
                assert_eq!(ends & bit(k) != 0, matches!(c, b'\n' | b'\r' | b'"'));
            }
            assert_eq!(classify(&block), (commas, ends), "{block:?}");
        }
    }

    #[test]
    fn long_rows_across_blocks_and_chunks_are_the_csv_crates() {
        // Rows longer than a block, CRLFs and quotes at every offset of a block and of a chunk.
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..300 {
            let mut data = Vec::new();
            for _ in 0..rng.usize(1..12) {
                for f in 0..rng.usize(1..20) {
                    if f > 0 {
                        data.push(b',');
                    }
                    let n = rng.usize(..30);
                    data.extend((0..n).map(|_| b"0123456789.\t"[rng.usize(..12)]));
                    if rng.u8(..40) == 0 {
                        data.extend_from_slice(b"\"q,\r\n\"");
                    }
                }
                data.extend_from_slice(if rng.bool() { b"\r\n" } else { b"\n" });
            }
            let want = reference(&data);
            for chunk in [1, 5, 63, 64, 65, 100, 1 << 20] {
                assert_eq!(split(&data, chunk), want, "chunk {chunk}");
            }
        }
    }

    #[test]
    fn torch_npu_lines_take_the_fast_path() {
        let data = b"Name,Size(KB)\r\naten::add,0.5\r\n\r\ncann::x,\"1,5\"\r\n";
        assert_eq!(split(data, 1 << 20), reference(data));
        let rows = split(data, 5);
        assert_eq!(rows.len(), 3);
        // Placed, as the csv crate places it, on the blank line before it.
        assert_eq!(rows[2], (3, 30, vec![b"cann::x".to_vec(), b"1,5".to_vec()]));
    }

    /// Rows of `lens[k]` bytes (digits and commas, LF ended), cycled until `total` bytes.
    fn rows_of(lens: &[usize], total: usize) -> Vec<u8> {
        let mut data = Vec::new();
        for &n in lens.iter().cycle() {
            if data.len() >= total {
                break;
            }
            data.extend((0..n - 1).map(|i| {
                if i % 9 == 8 {
                    b','
                } else {
                    b'0' + (i % 10) as u8
                }
            }));
            data.push(b'\n');
        }
        data
    }

    #[test]
    fn the_buffer_stays_one_chunk_and_the_longest_row() {
        // A row cut by a chunk's end is kept and the next chunk read after it: the buffer needs
        // one chunk and the kept part of a row, shorter than the longest row. Before, the first
        // such fill outgrew the first chunk's exact size and `resize` doubled the buffer (a 16 MiB
        // read of the page would have held 32 MiB, and 48 MiB while it moved).
        let chunk = 4096;
        for lens in [&[37, 41, 90][..], &[700, 3, 1500, 64], &[4095], &[4096, 17]] {
            let data = rows_of(lens, 12 * chunk);
            let longest = *lens.iter().max().unwrap();
            let src = BytesSource::new("t.csv", data.clone());
            let mut s = RowSplitter::new(&src, 1 << 20, None).with_chunk(chunk);
            let mut rows = 0;
            while let Next::Row { .. } = s.next_row().unwrap() {
                rows += 1;
                assert!(
                    s.buf.capacity() <= chunk + longest,
                    "rows of {lens:?}: a buffer of {} bytes for chunks of {chunk}",
                    s.buf.capacity()
                );
            }
            assert_eq!(rows, reference(&data).len(), "rows of {lens:?}");
        }
    }

    #[test]
    fn a_row_of_a_megabyte_is_read_whole_across_chunks() {
        // Longer than any room a buffer of one chunk keeps, shorter than the reader's row limit.
        let long = 1_000_000;
        let mut data = rows_of(&[30], 200);
        let at = data.len();
        data.extend(rows_of(&[long], 1));
        data.extend(rows_of(&[30, 55], 5000));
        for chunk in [1 << 16, 1 << 20] {
            assert_eq!(split(&data, chunk), reference(&data), "chunk {chunk}");
            let src = BytesSource::new("t.csv", data.clone());
            let mut s = RowSplitter::new(&src, crate::profiler::csv_common::MAX_CSV_ROW, None)
                .with_chunk(chunk);
            let mut seen = false;
            loop {
                match s.next_row().unwrap() {
                    Next::Row { byte, .. } if byte == at as u64 => {
                        let f = s.fields();
                        // A comma every 9th byte, the LF not in the row.
                        assert_eq!(f.len(), (long - 1) / 9 + 1);
                        assert_eq!(f.iter().map(<[u8]>::len).sum::<usize>() + f.len(), long);
                        seen = true;
                    }
                    Next::Row { .. } => {}
                    Next::TooLong { .. } => panic!("a row shorter than the limit was cut"),
                    Next::End => break,
                }
            }
            assert!(seen, "chunk {chunk}: the long row was not read");
        }
    }

    #[test]
    fn a_long_row_is_cut_and_skipped_to_its_line_end() {
        for quoted in [false, true] {
            let mut data = b"h,i\nA,1\n".to_vec();
            let long_at = data.len() as u64;
            if quoted {
                data.extend_from_slice(b"\"x\ny\",");
            }
            data.extend(std::iter::repeat_n(b'7', 300));
            data.extend_from_slice(b"\nB,2\n");
            let src = BytesSource::new("t.csv", data.clone());
            let mut s = RowSplitter::new(&src, 100, None).with_chunk(16);
            let mut seen = Vec::new();
            loop {
                match s.next_row().unwrap() {
                    Next::Row { line, .. } => {
                        seen.push((line, s.fields().get(0).unwrap().to_vec()))
                    }
                    Next::TooLong {
                        line,
                        byte,
                        end_line,
                    } => {
                        assert_eq!((line, byte), (3, long_at));
                        assert_eq!(end_line, if quoted { 4 } else { 3 });
                    }
                    Next::End => break,
                }
            }
            let b_line = if quoted { 5 } else { 4 };
            assert_eq!(
                seen,
                [
                    (1, b"h".to_vec()),
                    (2, b"A".to_vec()),
                    (b_line, b"B".to_vec())
                ]
            );
        }
    }
}
