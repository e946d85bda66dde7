//! Streaming a JSON array of events: batches read on the caller's thread, each batch cut into
//! pieces at probable event boundaries and scanned in parallel, the cut verified, events too large
//! to be real skipped without keeping them, damage reported by byte offset and skipped to the next
//! event. What an event means is the [`EventSink`]'s business.

use super::blocks::Cursor;
use super::lex::{is_ws, next_boundary, skip_ws, Scan, Skip, Skipper};
use crate::diag::Diagnostic;
use crate::source::{Source, SourceError, STOP_CHECK_BYTES};
use memchr::memchr;
use rayon::prelude::*;

/// What one piece's scan met, by offset in the buffer being scanned.
#[derive(Debug, Default)]
pub struct Found {
    /// Damage found; the scan resumed at the next boundary. [`scan_stream`] adds the bytes found
    /// there to each message ([`found_at`]): only it knows how much of the file follows them.
    pub errors: Vec<(usize, String)>,
    /// Notes on events that were read (damaged values kept, oversized events).
    pub notes: Vec<(usize, String)>,
}

/// What a reader does with the events of one piece: it scans (or skips) the event at `b[i]`
/// (`{`) and says where it ends, keeping what it needs in itself. One sink per piece; pieces run
/// in parallel, so a sink keeps piece-local ids that its reader merges in file order.
pub trait EventSink: Default + Send {
    /// Scans the event starting at `b[i]`. `skip` finds where a value of `b` ends
    /// ([`Cursor::skip_nested`]); it is the piece's one cursor, so the blocks the previous event
    /// ended in are not classified again.
    fn event(&mut self, b: &[u8], i: usize, skip: &mut Cursor, found: &mut Found) -> Scan;
}

/// Where the buffer being scanned stands in the file.
#[derive(Debug, Clone, Copy, Default)]
struct Place {
    /// The buffer ends where the file does.
    last: bool,
    /// The skip over damage that the previous buffer's end cut: the scan from the buffer's start
    /// goes on with it, silently, to the next event.
    resume: Option<Skip>,
}

/// One piece's scan.
#[derive(Default)]
struct Piece<S> {
    start: usize,
    /// Where the scan stopped: the first event start at or past the piece limit, the end of the
    /// array, or the start of an event cut by the buffer end.
    stop: usize,
    /// True when the scan stopped at an event cut by the end of the buffer.
    cut: bool,
    /// True when the closing `]` was reached.
    ended: bool,
    /// The skip over damage that the end of the buffer cut (then `cut` is true and `stop` is the
    /// buffer's end): the next batch goes on with it rather than reporting the rest again.
    skip: Option<Skip>,
    events: u64,
    found: Found,
    sink: S,
    /// Why the scan ended early: the load was stopped ([`Source::check_stop`]).
    stopped: Option<SourceError>,
}

/// Asks whether the load was stopped, given where the scan is (offset in the buffer); on the
/// thread that reads the source.
type StopCheck<'c> = &'c dyn Fn(usize) -> Result<(), SourceError>;

/// Largest piece of a batch scanned in parallel when the scan asks about stops (a batch larger
/// than `pieces` times this is cut into more pieces, scanned `pieces` at a time, with a question
/// between two rounds). 4 MiB leaves the default cuts alone (native batches are 4 MiB per
/// thread in two pieces each; the threaded page's 16 MiB reads in four) and bounds what a stop
/// waits for when one read covers a whole file (`?readSize=256` on the page).
const MAX_STOPPABLE_PIECE: usize = 4 << 20;

/// How a stream is read.
#[derive(Debug, Clone, Copy)]
pub struct StreamOptions {
    /// Bytes read from the source per batch.
    pub batch: usize,
    /// Pieces a batch is cut into for parallel scanning.
    pub pieces: usize,
    /// The member of a top-level object that holds the array, quoted (`"traceEvents"`).
    pub wrapper: &'static [u8],
    /// What the events are, for messages (`trace events`).
    pub what: &'static str,
    /// One of them, for messages (`trace event`).
    pub event: &'static str,
}

/// What a stream scan found besides the sinks' contents.
#[derive(Debug, Clone, Default)]
pub struct Stream {
    /// Top-level events seen (kept or not).
    pub events: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Skipped or damaged parts, with byte offsets.
    pub warnings: Vec<Diagnostic>,
}

/// Bytes of input shown after the place of damage ([`found_at`]).
const SHOWN: usize = 32;

/// The bytes at the place of damage `at`, quoted for a message: at most [`SHOWN`] of them, so
/// that the user can find the place in a file of one long line (torch_npu writes
/// `trace_view.json` so), and the count of the bytes after them in the file (`after` follow the
/// end of `b`), so that the quote does not look like the file's end.
fn found_at(b: &[u8], at: usize, after: u64) -> String {
    let end = b.len().min(at.saturating_add(SHOWN));
    let after = (b.len() - end) as u64 + after;
    crate::quote::quote_part(b.get(at..end).unwrap_or(&[]), crate::quote::SHORT, after)
}

impl<S> Piece<S> {
    /// Ends the scan at the end of `b`, inside damage that `skip` passes over, to go on in the
    /// next batch. When `b` ends where the file does (`last`) and the last byte other than
    /// blanks the skip passed is `]`, that byte closed the array: only the damage is reported,
    /// not an array left open.
    fn skipped_to_end(mut self, b: &[u8], skip: Skip, last: bool) -> Self {
        self.cut = true;
        self.stop = b.len();
        self.skip = Some(skip);
        self.ended = last && skip.last() == b']';
        self
    }
}

/// Scans events of `b` starting at `start` until an event starts at or past `limit`; with
/// `check`, asks it every [`STOP_CHECK_BYTES`] and ends early once the load is stopped. Unless
/// `b` ends where the file does, damage found fewer than [`SHOWN`] bytes before the end of `b`
/// is left for the next batch, so that its message shows the same bytes whatever the batch size.
fn scan_piece<S: EventSink>(
    b: &[u8],
    start: usize,
    limit: usize,
    event: &str,
    check: Option<StopCheck<'_>>,
    place: Place,
) -> Piece<S> {
    let Place { last, resume } = place;
    let mut out = Piece {
        start,
        ..Piece::default()
    };
    let mut i = start;
    if let Some(skip) = resume {
        match skip.find(b, start) {
            Ok(n) => i = n,
            Err(skip) => return out.skipped_to_end(b, skip, last),
        }
    }
    let mut cursor = Cursor::default();
    // One comparison per event when nobody asks.
    let every = STOP_CHECK_BYTES as usize;
    let mut next_check = if check.is_some() {
        start.saturating_add(every)
    } else {
        usize::MAX
    };
    loop {
        // Between events: blanks, commas (a trailing `,]` included), the opening `[`.
        while let Some(&c) = b.get(i) {
            if is_ws(c) || c == b',' || c == b'[' {
                i += 1;
            } else {
                break;
            }
        }
        if i >= next_check {
            if let Some(Err(e)) = check.map(|c| c(i)) {
                out.stopped = Some(e);
                out.stop = i;
                return out;
            }
            next_check = i.saturating_add(every);
        }
        if i >= limit || i >= b.len() {
            out.stop = i.min(b.len()).max(i.min(limit));
            out.stop = i;
            return out;
        }
        match b.get(i) {
            Some(b']') => {
                out.ended = true;
                out.stop = i + 1;
                return out;
            }
            Some(b'{') => match out.sink.event(b, i, &mut cursor, &mut out.found) {
                Scan::Done(e) => {
                    out.events += 1;
                    if e - i > MAX_EVENT_BYTES {
                        // Whole in this buffer, but too large to be real (a sink keeps nothing of
                        // it); said the same way as when it is skipped in a stream.
                        out.found.notes.push((i, oversized(e - i, event)));
                    }
                    i = e;
                }
                Scan::Cut => {
                    out.cut = true;
                    out.stop = i;
                    return out;
                }
                Scan::Bad(at, msg) => {
                    if !last && at.saturating_add(SHOWN) > b.len() {
                        out.cut = true;
                        out.stop = i;
                        return out;
                    }
                    out.found.errors.push((at, msg.to_string()));
                    match Skip::new(true).find(b, at + 1) {
                        Ok(n) => i = n,
                        Err(skip) => return out.skipped_to_end(b, skip, last),
                    }
                }
            },
            Some(_) => {
                if !last && i.saturating_add(SHOWN) > b.len() {
                    out.cut = true;
                    out.stop = i;
                    return out;
                }
                out.found
                    .errors
                    .push((i, "expected '{' (an event) or ']'".to_string()));
                match Skip::new(false).find(b, i + 1) {
                    Ok(n) => i = n,
                    Err(skip) => return out.skipped_to_end(b, skip, last),
                }
            }
            None => {
                out.stop = i;
                return out;
            }
        }
    }
}

/// Scans a whole buffer from `start`: cuts it into `pieces`, scans them in parallel, and checks
/// that each piece starts where the previous one stopped (re-scanning when it does not). Only
/// the first piece goes on with the skip the previous batch's end cut.
///
/// With `check` (the scan runs on the thread that reads the source), the load's stop is asked
/// about as the scan goes: inside each piece when the pieces run on this thread anyway (one
/// thread), else between rounds of `pieces` pieces of at most [`MAX_STOPPABLE_PIECE`] bytes.
fn scan_buffer<S: EventSink>(
    b: &[u8],
    start: usize,
    pieces: usize,
    min_split: usize,
    event: &str,
    check: Option<StopCheck<'_>>,
    place: Place,
) -> Result<Vec<Piece<S>>, SourceError> {
    let len = b.len();
    let mut starts = vec![start];
    // Pieces run one after the other here: each asks about a stop itself.
    let sequential = check.is_some() && rayon::current_num_threads() <= 1;
    let round = pieces.max(1);
    let cuts = if check.is_some() && !sequential {
        round.max(len.saturating_sub(start).div_ceil(MAX_STOPPABLE_PIECE))
    } else {
        pieces
    };
    if cuts > 1 && len > start + min_split {
        let step = (len - start) / cuts;
        for k in 1..cuts {
            let nominal = start + step * k;
            if let Some(s) = next_boundary(b, nominal) {
                if starts.last().is_some_and(|&l| s > l) {
                    starts.push(s);
                }
            }
        }
    }
    let mut bounds: Vec<(usize, usize)> = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        bounds.push((s, starts.get(k + 1).copied().unwrap_or(usize::MAX)));
    }
    let mut outs: Vec<Piece<S>> = Vec::with_capacity(bounds.len());
    // Only the first piece starts where the previous batch stopped.
    let at = |s: usize| Place {
        resume: place.resume.filter(|_| s == start),
        ..place
    };
    if sequential {
        for &(s, lim) in &bounds {
            let out = scan_piece(b, s, lim, event, check, at(s));
            if let Some(e) = out.stopped {
                return Err(e);
            }
            let done = out.cut || out.ended;
            outs.push(out);
            if done {
                break;
            }
        }
    } else {
        for (k, group) in bounds.chunks(round).enumerate() {
            if let (Some(check), Some(&(s, _))) = (check, group.first()) {
                if k > 0 {
                    check(s)?;
                }
            }
            let from = outs.len();
            outs.par_extend(
                group
                    .par_iter()
                    .map(|&(s, lim)| scan_piece(b, s, lim, event, None, at(s))),
            );
            // The pieces after one cut by the buffer's end, or after the array's end, are not
            // used (the chain below ends there).
            if outs
                .get(from..)
                .is_some_and(|g| g.iter().any(|o| o.cut || o.ended))
            {
                break;
            }
        }
    }
    // Verify the chain; on a mismatch re-scan the remainder sequentially (rare: needs `}, {`
    // inside a string, or damage).
    let mut k = 0;
    while k + 1 < outs.len() {
        let (stop, cut, ended) = match outs.get(k) {
            Some(o) => (o.stop, o.cut, o.ended),
            None => break,
        };
        if cut || ended {
            outs.truncate(k + 1);
            break;
        }
        let next_start = outs.get(k + 1).map_or(usize::MAX, |o| o.start);
        if stop != next_start {
            outs.truncate(k + 1);
            let out = scan_piece(
                b,
                stop,
                usize::MAX,
                event,
                check,
                Place {
                    resume: None,
                    ..place
                },
            );
            if let Some(e) = out.stopped {
                return Err(e);
            }
            outs.push(out);
            break;
        }
        k += 1;
    }
    Ok(outs)
}

/// Largest single event held in memory, in bytes (and largest part of the file before the event
/// array). Real trace events are at most a few KiB (long call stacks); a bigger one is skipped in
/// a streaming pass that keeps none of it, with a warning.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// The warning for an event larger than [`MAX_EVENT_BYTES`].
fn oversized(len: usize, event: &str) -> String {
    format!(
        "event of {len} bytes, more than the {MAX_EVENT_BYTES} bytes one {event} may have; skipped"
    )
}

/// Warnings listed one by one per file; further ones are counted in one last warning.
pub const MAX_WARNINGS: usize = 100;

/// Reads up to `want` bytes at `off` into `store[at..at + want]` (grown as needed); returns how
/// many.
fn read_into(
    src: &dyn Source,
    off: u64,
    store: &mut Vec<u8>,
    at: usize,
    want: usize,
) -> Result<usize, crate::source::SourceError> {
    if store.len() < at + want {
        // Sized once for every later batch: one batch and room for the tail of an event cut by
        // the batch end in front of it. Grown only to `at + want`, the next batch after a tail
        // outgrew it and `resize` doubled it (a reader of the page read a trace in 16 MiB
        // batches with a 32 MiB buffer, and held 48 MiB while it moved: docs/benchmarks.md).
        store.reserve_exact((at.max(TAIL_ROOM) + want).saturating_sub(store.len()));
        store.resize(at + want, 0);
    }
    let mut got = 0;
    while got < want {
        let n = match store.get_mut(at + got..at + want) {
            Some(dst) => src.read_at(off + got as u64, dst)?,
            None => 0,
        };
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(got)
}

/// Room kept before a batch read ahead for the tail of an event cut by the previous batch end,
/// which is copied in front of it (a longer tail is joined the slow way, by copying the batch).
const TAIL_ROOM: usize = 256 << 10;

/// The bytes being scanned, and the next batch read ahead into a second buffer while they are
/// scanned. The batch read ahead is read in place, after room for the tail of the current one:
/// joining them copies only the tail, and both buffers keep their size from batch to batch, so no
/// batch pays for allocating and zeroing fresh memory.
#[derive(Default)]
struct Window {
    /// `store[base..base + filled]` holds the bytes being scanned.
    store: Vec<u8>,
    base: usize,
    filled: usize,
    /// The next batch, at `spare[TAIL_ROOM..]`, once read ahead.
    spare: Vec<u8>,
    /// How many bytes were read ahead into `spare` (or why they could not be).
    ahead: Option<Result<usize, crate::source::SourceError>>,
}

impl Window {
    /// The bytes being scanned.
    fn data(&self) -> &[u8] {
        self.store
            .get(self.base..self.base + self.filled)
            .unwrap_or(&[])
    }

    /// Forgets the first `n` bytes being scanned.
    fn drop_front(&mut self, n: usize) {
        let n = n.min(self.filled);
        self.base += n;
        self.filled -= n;
    }

    /// Appends up to `want` bytes read at `off` (the batch read ahead, if there is one: it was
    /// always read at the offset that follows); returns how many.
    fn fill(&mut self, src: &dyn Source, off: u64, want: usize) -> Result<usize, Diagnostic> {
        let Some(ahead) = self.ahead.take() else {
            if self.base > 0 {
                self.store
                    .copy_within(self.base..self.base + self.filled, 0);
                self.base = 0;
            }
            let got = read_into(src, off, &mut self.store, self.filled, want)?;
            self.filled += got;
            return Ok(got);
        };
        let got = ahead?.min(want);
        if self.filled <= TAIL_ROOM {
            let at = TAIL_ROOM - self.filled;
            if let (Some(dst), Some(tail)) = (
                self.spare.get_mut(at..TAIL_ROOM),
                self.store.get(self.base..self.base + self.filled),
            ) {
                dst.copy_from_slice(tail);
            }
            std::mem::swap(&mut self.store, &mut self.spare);
            self.base = at;
        } else {
            self.store
                .copy_within(self.base..self.base + self.filled, 0);
            self.base = 0;
            let at = self.filled;
            if self.store.len() < at + got {
                self.store.resize(at + got, 0);
            }
            if let (Some(dst), Some(bytes)) = (
                self.store.get_mut(at..at + got),
                self.spare.get(TAIL_ROOM..TAIL_ROOM + got),
            ) {
                dst.copy_from_slice(bytes);
            }
        }
        self.filled += got;
        Ok(got)
    }
}

/// Warnings of one file, at most [`MAX_WARNINGS`] listed.
struct Warnings {
    file: String,
    list: Vec<Diagnostic>,
    more: u64,
    first_more: u64,
}

impl Warnings {
    fn push(&mut self, at: u64, message: String) {
        if self.list.len() < MAX_WARNINGS {
            self.list
                .push(Diagnostic::warning(&self.file, message).at_byte(at));
        } else {
            if self.more == 0 {
                self.first_more = at;
            }
            self.more += 1;
        }
    }

    fn finish(mut self) -> Vec<Diagnostic> {
        if self.more > 0 {
            self.list.push(
                Diagnostic::warning(
                    &self.file,
                    format!(
                        "{} more damaged places after the first {MAX_WARNINGS} (the first of them \
                         here); each was skipped to the next event",
                        self.more
                    ),
                )
                .at_byte(self.first_more)
                .times(self.more),
            );
        }
        self.list
    }
}

/// Scans the JSON array of events in `src` (or the array under `opts.wrapper` of a top-level
/// object), handing each piece's sink to `take` in file order.
///
/// `progress(done, total)` is called after each batch. Returns `Err` only when the file cannot be
/// read or is not a JSON array of events at all.
///
/// Memory: the batch being scanned, the tail of an event cut by the batch end (at most
/// [`MAX_EVENT_BYTES`], larger events are skipped), and what the sinks keep — whatever the file
/// size.
pub fn scan_stream<S: EventSink>(
    src: &dyn Source,
    opts: StreamOptions,
    mut progress: Option<&mut dyn FnMut(u64, u64)>,
    take: &mut dyn FnMut(S),
) -> Result<Stream, Diagnostic> {
    let file = src.name().to_string();
    let total = src.len();
    let mut events = 0u64;
    let mut warn = Warnings {
        file: file.clone(),
        list: Vec::new(),
        more: 0,
        first_more: 0,
    };
    // Any batch size works (fuzzing uses a few bytes, to cut events everywhere); buffers smaller
    // than a piece's worth are not split.
    let batch = opts.batch.max(1);
    let min_split = (batch / opts.pieces.max(1)).clamp(1, 64 * 1024);
    let mut win = Window::default();
    let mut buf_off: u64 = 0; // file offset of win.data()[0]
    let mut read_off: u64 = 0;
    let mut first = true;
    let mut ended = false;
    // The skip over damage the last batch's end cut.
    let mut skip: Option<Skip> = None;
    let batch_len = |read_off: u64| {
        usize::try_from(total.saturating_sub(read_off))
            .unwrap_or(usize::MAX)
            .min(batch)
    };
    // With a thread pool, the next batch is read on this thread while the pool scans the current
    // one: a `Source` need not be `Send` (a browser `File` can only be read on the thread that
    // owns it), so reading stays here and only the scan moves. Every later read goes through
    // `Window::fill`, which takes the bytes read ahead first, so they are always used at their
    // offset.
    let pipelined = rayon::current_num_threads() > 1;
    'batches: while !ended {
        let got = win.fill(src, read_off, batch_len(read_off))?;
        let filled = win.filled;
        let buf: &[u8] = win.store.get(win.base..win.base + filled).unwrap_or(&[]);
        let eof = got == 0;
        read_off += got as u64;
        let mut start = 0;
        let wrapper_name = String::from_utf8_lossy(opts.wrapper);
        if first {
            let i = skip_ws(buf, 0);
            match buf.get(i) {
                Some(b'[') => start = i + 1,
                Some(b'{') => {
                    // `{"traceEvents": [ … ]}` (Kineto / chrome export): start inside the array.
                    let key = memchr::memmem::find(buf, opts.wrapper);
                    match key.and_then(|k| memchr(b'[', buf.get(k..)?).map(|p| k + p)) {
                        Some(p) => start = p + 1,
                        None if !eof && buf.len() <= MAX_EVENT_BYTES => continue,
                        None => {
                            let what = if eof {
                                format!("found an object without a {} array", wrapper_name)
                            } else {
                                format!(
                                    "found an object with no {wrapper_name} array in its first \
                                     {MAX_EVENT_BYTES} bytes"
                                )
                            };
                            return Err(Diagnostic::error(
                                &file,
                                format!(
                                    "expected a JSON array of {} ('[' first, or a \
                                     {{{wrapper_name}: [...]}} object): {what}",
                                    opts.what
                                ),
                            )
                            .at_byte(buf_off + i as u64));
                        }
                    }
                }
                None if !eof => {
                    // Only blanks so far: drop them (a file of blanks must not fill memory).
                    buf_off += filled as u64;
                    win.drop_front(filled);
                    continue;
                }
                None => {
                    return Err(Diagnostic::error(
                        &file,
                        format!("empty file: expected a JSON array of {}", opts.what),
                    ))
                }
                // Read on until the message can show what the file starts with.
                Some(_) if !eof && buf.len() < i.saturating_add(SHOWN) => continue,
                Some(_) => {
                    return Err(Diagnostic::error(
                        &file,
                        format!(
                            "expected a JSON array of {} ('[' first), found {}",
                            opts.what,
                            found_at(buf, i, total.saturating_sub(buf_off + buf.len() as u64))
                        ),
                    )
                    .at_byte(buf_off + i as u64))
                }
            }
            first = false;
        }
        let next_want = batch_len(read_off);
        let outs = if pipelined && !eof && next_want > 0 {
            // The scan runs on the pool, so it cannot ask the source about a stop; the read of
            // the next batch on this thread meanwhile does (a stopped read fails).
            let mut outs = Ok(Vec::new());
            let spare = &mut win.spare;
            let mut ahead = None;
            rayon::in_place_scope(|scope| {
                scope.spawn(|_| {
                    outs = scan_buffer(
                        buf,
                        start,
                        opts.pieces.max(1),
                        min_split,
                        opts.event,
                        None,
                        Place {
                            last: eof,
                            resume: skip,
                        },
                    )
                });
                ahead = Some(read_into(src, read_off, spare, TAIL_ROOM, next_want));
            });
            win.ahead = ahead;
            outs
        } else {
            let at = buf_off;
            let check = |i: usize| src.check_stop(at + i as u64);
            let check: Option<StopCheck<'_>> = if src.may_stop() { Some(&check) } else { None };
            scan_buffer(
                buf,
                start,
                opts.pieces.max(1),
                min_split,
                opts.event,
                check,
                Place {
                    last: eof,
                    resume: skip,
                },
            )
        }
        .map_err(Diagnostic::from)?;
        let mut resume = buf.len();
        // The file's bytes after this batch (none once the file has ended).
        let after = if eof {
            0
        } else {
            total.saturating_sub(buf_off + buf.len() as u64)
        };
        for out in outs {
            events += out.events;
            // Damage and notes in the order of their bytes: a read in smaller batches meets a
            // note and the damage after it in different batches, and must say the same.
            let mut found: Vec<(usize, String)> = out
                .found
                .errors
                .iter()
                .map(|(at, msg)| {
                    let text = format!(
                        "invalid JSON: {msg}, found {}; skipped to the next event",
                        found_at(buf, *at, after)
                    );
                    (*at, text)
                })
                .chain(out.found.notes.iter().cloned())
                .collect();
            found.sort_by_key(|&(at, _)| at);
            for (at, text) in found {
                warn.push(buf_off + at as u64, text);
            }
            if out.ended {
                ended = true;
            }
            resume = out.stop;
            skip = out.skip;
            let cut = out.cut;
            take(out.sink);
            if cut {
                break;
            }
        }
        if let Some(p) = progress.as_mut() {
            p(read_off.min(total), total);
        }
        if eof {
            if !ended {
                let rest = buf.get(resume..).unwrap_or(&[]);
                if rest.iter().any(|&c| !is_ws(c)) {
                    warn.push(
                        buf_off + resume as u64,
                        "the file ends inside an event (truncated file?); the last event was skipped"
                            .to_string(),
                    );
                } else {
                    warn.push(
                        total,
                        "the array is not closed with ']' (truncated file?)".to_string(),
                    );
                }
            }
            break;
        }
        // Keep only the cut tail for the next batch.
        let keep = resume.min(filled);
        if filled - keep > MAX_EVENT_BYTES {
            // One event is larger than anything real: find its end without keeping it.
            let event_at = buf_off + keep as u64;
            let mut skipper = Skipper::default();
            let mut from = keep;
            loop {
                if let Some(e) = skipper.feed(win.data().get(from..).unwrap_or(&[])) {
                    let end = from + e;
                    events += 1;
                    warn.push(
                        event_at,
                        oversized((buf_off + end as u64 - event_at) as usize, opts.event),
                    );
                    win.drop_front(end);
                    buf_off += end as u64;
                    continue 'batches;
                }
                buf_off += win.filled as u64;
                win.drop_front(win.filled);
                from = 0;
                let got = win.fill(src, read_off, batch_len(read_off))?;
                read_off += got as u64;
                if let Some(p) = progress.as_mut() {
                    p(read_off.min(total), total);
                }
                if got == 0 {
                    warn.push(
                        event_at,
                        format!(
                            "the file ends inside an event of more than {MAX_EVENT_BYTES} bytes \
                             (truncated file?); the event was skipped"
                        ),
                    );
                    break 'batches;
                }
            }
        }
        win.drop_front(keep);
        buf_off += keep as u64;
    }
    Ok(Stream {
        events,
        bytes: read_off,
        warnings: warn.finish(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonscan::lex::{scan_object, unquote};
    use crate::source::BytesSource;

    /// Keeps the `id` of every event: no meaning, just the scanner's contract.
    #[derive(Default)]
    struct Ids(Vec<String>);

    impl EventSink for Ids {
        fn event(&mut self, b: &[u8], i: usize, _skip: &mut Cursor, _found: &mut Found) -> Scan {
            let mut id = None;
            let r = scan_object(b, i, &mut |k, s, e| {
                if k == b"id" {
                    id = Some(String::from_utf8_lossy(unquote(&b[s..e])).into_owned());
                }
            });
            if let (Scan::Done(_), Some(id)) = (r, id) {
                self.0.push(id);
            }
            r
        }
    }

    fn ids(text: &str, batch: usize, pieces: usize) -> (Vec<String>, Stream) {
        let src = BytesSource::new("e.json", text.as_bytes().to_vec());
        let opts = StreamOptions {
            batch,
            pieces,
            wrapper: b"\"events\"",
            what: "events",
            event: "event",
        };
        let mut all = Vec::new();
        let s = scan_stream(&src, opts, None, &mut |sink: Ids| all.extend(sink.0)).unwrap();
        (all, s)
    }

    #[test]
    fn any_batch_and_piece_size_gives_the_events_in_file_order() {
        // Strings holding `}, {` and escapes make probable boundaries that are not real ones.
        let text: String = std::iter::once("[".to_string())
            .chain((0..500).map(|k| {
                format!(r#"{{"id": "{k}", "s": "}}, {{\"x\\\\", "n": [{k}, {{"a": 1}}]}},"#)
            }))
            .chain(std::iter::once("]".to_string()))
            .collect();
        let want: Vec<String> = (0..500).map(|k| k.to_string()).collect();
        for (batch, pieces) in [(1 << 20, 1), (1 << 20, 8), (97, 3), (13, 5)] {
            let (got, s) = ids(&text, batch, pieces);
            assert_eq!(got, want, "batch {batch}, pieces {pieces}");
            assert_eq!(s.events, 500);
            assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        }
    }

    #[test]
    fn batches_read_ahead_join_short_and_long_tails() {
        // Events longer than the room kept for a tail, cut by every batch end, between short
        // ones; read with two threads so each batch is read while the previous one is scanned.
        let long = "x".repeat(TAIL_ROOM + 1000);
        let text: String = std::iter::once("[".to_string())
            .chain((0..40).map(|k| {
                let s = if k % 4 == 1 { long.as_str() } else { "short" };
                format!(r#"{{"id": "{k}", "s": "{s}"}},"#)
            }))
            .chain(std::iter::once("]".to_string()))
            .collect();
        let want: Vec<String> = (0..40).map(|k| k.to_string()).collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for batch in [100_000, TAIL_ROOM - 7, 3 * TAIL_ROOM + 11] {
            let (got, s) = pool.install(|| ids(&text, batch, 2));
            assert_eq!(got, want, "batch {batch}");
            assert_eq!(s.bytes, text.len() as u64);
            assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        }
    }

    #[test]
    fn one_thread_batches_keep_one_batch_and_the_tail_room() {
        // Read on one thread, each batch after the tail of the one before (as `scan_stream` does
        // without a pool): the buffer stays one batch and the tail room, as the module says.
        // Before, the second batch outgrew the first's exact size and the buffer doubled.
        let batch = 1 << 20;
        let text = vec![b' '; 6 * batch];
        let src = BytesSource::new("e.json", text);
        let mut win = Window::default();
        let mut off = 0;
        for tail in [0, 100, TAIL_ROOM, 7, 0] {
            let got = win.fill(&src, off, batch).unwrap();
            assert_eq!(got, batch);
            off += got as u64;
            win.drop_front(win.filled - tail);
            assert!(
                win.store.capacity() <= batch + TAIL_ROOM,
                "tail {tail}: a buffer of {} bytes for batches of {batch}",
                win.store.capacity()
            );
        }
    }

    #[test]
    fn wrapped_arrays_damage_and_non_arrays() {
        let (got, _) = ids(
            r#"{"meta": 1, "events": [{"id": 1}, {"id": 2}]}"#,
            1 << 20,
            2,
        );
        assert_eq!(got, ["1", "2"]);
        // Damage inside one event: it is skipped to the next event, with its byte offset.
        let (got, s) = ids(r#"[{"id": 1}, {"id" 2}, {"id": 3}]"#, 1 << 20, 1);
        assert_eq!(got, ["1", "3"]);
        assert_eq!(s.warnings.len(), 1);
        // Byte 18 is the `2` found where the `:` after `"id"` belongs.
        assert_eq!(s.warnings[0].byte, Some(18));
        let src = BytesSource::new("e.json", b"\"not an array\"".to_vec());
        let opts = StreamOptions {
            batch: 64,
            pieces: 1,
            wrapper: b"\"events\"",
            what: "events",
            event: "event",
        };
        let err = scan_stream(&src, opts, None, &mut |_: Ids| {}).unwrap_err();
        assert!(
            err.message.contains("expected a JSON array of events"),
            "{err}"
        );
    }
}
