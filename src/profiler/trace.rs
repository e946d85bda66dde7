//! Reader of torch_npu's `trace_view.json` (Chrome trace array, reaching gigabytes): the torch
//! meaning of its events, over the generic event scanner of [`crate::jsonscan`].
//!
//! Only what attribution needs is kept: `cpu_op` events (name, pid, tid, ts, dur, sequence number,
//! forward thread id, call stack interned once), `ProfilerStep#N` spans, and the task-queue
//! `enqueue`/`dequeue` events. Everything else is only *skipped*. The kept categories are searched
//! for once per piece (`"cpu_op"`, `queue"`); an event that mentions neither anywhere (nine in
//! ten) is ended by the structural scan (64-byte blocks) and nothing else, its members never
//! walked. An event that does is walked: this reader reads its `cat` value among its first members
//! (where torch_npu writes it, before `args`) and skips it from there unless the category is kept
//! (a kept event's parse then goes on after the members already walked, not from its start);
//! one without a top-level `cat` is walked member by member to its end, its nested values skipped
//! by blocks; only damaged or unusual events fall back to parsing whatever mentions a kept
//! category. Both ways give the same answer on any input ([`EventWalk`]).
//!
//! How it stays fast and bounded (the scanner's part):
//! - the caller's thread reads the source in batches (a browser `File` can only be read on the
//!   worker that owns it); memory = one batch + the tail of an event cut by the batch end + what
//!   is kept;
//! - a batch is cut into pieces at *probable* event boundaries (`}, {`) and the pieces are
//!   scanned in parallel with rayon; each piece must end exactly where the next one starts, which
//!   proves the guess (a `}, {` inside a string would break that), otherwise the piece after it is
//!   scanned again from the proven position;
//! - numbers are read from their text where it lies in the batch (no copy): `ts` as a string or a
//!   number, exactly, to integer ns; ids above 2^53 as integers (never through `f64`).
//!
//! Tolerated damage: a trailing `,]` (torch_npu concatenation bug), a `{"traceEvents": [...]}`
//! wrapper, a file cut inside the last event (reported).

use super::csv_common::{parse_scaled, parse_scaled_span};
use super::Interner;
use crate::diag::Diagnostic;
use crate::jsonscan::blocks::Cursor;
use crate::jsonscan::either::Either;
use crate::jsonscan::lex::{
    is_ws, scan_object, scan_object_after, scan_object_with, scan_string, skip_ws, str_lossy,
    unquote,
};
use crate::jsonscan::{scan_stream, EventSink, Found, Scan, StreamOptions};
use crate::source::Source;

pub use crate::jsonscan::{MAX_EVENT_BYTES, MAX_WARNINGS};

/// The `cpu_op` events kept, column by column (index = op id).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ops {
    /// Interned op name.
    pub name: Vec<u32>,
    /// Process id.
    pub pid: Vec<i64>,
    /// Thread id.
    pub tid: Vec<i64>,
    /// Start (ns).
    pub ts: Vec<i64>,
    /// Duration (ns).
    pub dur: Vec<i64>,
    /// `Sequence number` (-1 when absent).
    pub seq: Vec<i64>,
    /// `Fwd thread id` (0 when absent).
    pub fwd_tid: Vec<i64>,
    /// Interned call stack (0 = none).
    pub stack: Vec<u32>,
}

impl Ops {
    /// Number of ops.
    pub fn len(&self) -> usize {
        self.name.len()
    }

    /// True when there is no op.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    /// End time (ns) of op `i` (`ts + dur`).
    pub fn end(&self, i: usize) -> i64 {
        let ts = self.ts.get(i).copied().unwrap_or(0);
        ts.saturating_add(self.dur.get(i).copied().unwrap_or(0))
    }

    fn push(&mut self, op: &RawOp) {
        self.name.push(op.name);
        self.pid.push(op.pid);
        self.tid.push(op.tid);
        self.ts.push(op.ts);
        self.dur.push(op.dur);
        self.seq.push(op.seq);
        self.fwd_tid.push(op.fwd_tid);
        self.stack.push(op.stack);
    }
}

/// A `ProfilerStep#N` span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct StepSpan {
    /// N.
    pub step: u64,
    /// Start (ns).
    pub ts: i64,
    /// End (ns).
    pub end: i64,
}

/// A task-queue event (`cat` `enqueue` or `dequeue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueEvent {
    /// True for `enqueue`, false for `dequeue`.
    pub enqueue: bool,
    /// Interned name (`Enqueue@aten::add`, `Dequeue@…`).
    pub name: u32,
    /// Thread id.
    pub tid: i64,
    /// Start (ns).
    pub ts: i64,
    /// Duration (ns).
    pub dur: i64,
    /// `args.correlation_id`, pairing an enqueue with its dequeue.
    pub correlation_id: Option<u64>,
}

/// What a trace scan keeps.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// `cpu_op` events in file order.
    pub ops: Ops,
    /// `ProfilerStep#N` spans (also present in `ops`).
    pub steps: Vec<StepSpan>,
    /// Enqueue/dequeue events.
    pub queue: Vec<QueueEvent>,
    /// Number of top-level events seen (kept or not).
    pub events: u64,
    /// Bytes scanned.
    pub bytes: u64,
    /// Skipped or damaged parts, with byte offsets.
    pub warnings: Vec<Diagnostic>,
}

/// How a scan is cut up.
#[derive(Debug, Clone, Copy)]
pub struct TraceOptions {
    /// Bytes read from the source per batch (raised to the source's
    /// [`preferred_read`](crate::source::Source::preferred_read)).
    pub batch: usize,
    /// Pieces a batch is cut into for parallel scanning.
    pub pieces: usize,
}

/// Bytes of a batch per thread of the pool, natively, with two threads or more. Half a MiB keeps
/// the batch the kernel copies into, and the scan reads right after, in the cores' caches (2 MiB of
/// L2 each on the benchmark machine) and costs few fresh pages: with 4 MiB per thread the batch
/// buffers of the ranks read at once outgrew the caches, and their first writes were a third of
/// the CLI's page faults (`--json` of the 2 × 2 job: 0.91× the CPU, `docs/benchmarks.md`).
#[cfg(not(target_arch = "wasm32"))]
const BATCH_PER_THREAD: usize = 512 << 10;

/// One thread's batch, natively: it scans one trace at a time and reads no batch ahead, so the
/// small batches gain nothing there, and their pieces' fixed costs (a sink, its interners' merge,
/// a fresh block cursor) made the one-thread scan 1.07× the CPU; it keeps the 4 MiB it had.
#[cfg(not(target_arch = "wasm32"))]
const BATCH_ONE_THREAD: usize = 4 << 20;

/// In wasm a batch is at least the page's read size anyway ([`crate::source::read_size`]).
#[cfg(target_arch = "wasm32")]
const BATCH_PER_THREAD: usize = 4 << 20;

/// See [`BATCH_PER_THREAD`].
#[cfg(target_arch = "wasm32")]
const BATCH_ONE_THREAD: usize = 4 << 20;

impl Default for TraceOptions {
    fn default() -> Self {
        let threads = rayon::current_num_threads().max(1);
        TraceOptions {
            batch: if threads == 1 {
                BATCH_ONE_THREAD
            } else {
                BATCH_PER_THREAD * threads.min(8)
            },
            pieces: threads * 2,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct RawOp {
    name: u32,
    pid: i64,
    tid: i64,
    ts: i64,
    dur: i64,
    seq: i64,
    fwd_tid: i64,
    stack: u32,
}

/// What the events of one piece hold for torch_npu; ids are local to the piece until merged.
#[derive(Default)]
struct TorchSink {
    ops: Vec<RawOp>,
    steps: Vec<StepSpan>,
    queue: Vec<QueueEvent>,
    names: Interner,
    stacks: Interner,
    /// Raw (still escaped) call stack spans already interned, by a hash of a sample of their
    /// bytes: a repeated stack is recognised by one short hash and one comparison, without
    /// decoding and hashing its kilobytes again. Values: [`SeenStack`]s in this piece's buffer.
    raw_stacks: std::collections::HashMap<u64, Vec<SeenStack>, foldhash::fast::FixedState>,
    cands: Cands,
}

impl EventSink for TorchSink {
    /// Finds the end of the event at `i`; parses it fully only if its category is one of the kept
    /// ones (most events are not, and are skipped without reading their other members).
    fn event(&mut self, b: &[u8], i: usize, skip: &mut Cursor, found: &mut Found) -> Scan {
        // Most events (nine in ten in a torch_npu trace) mention no kept category anywhere: for
        // them every branch below ends in the structural scan's end (a category read at its place
        // is not kept and the event is skipped to where [`Cursor::skip_nested`] ends it; no
        // category ends there too; the search finds nothing), so that end is taken at once, from
        // the masks alone, without walking the event's members. An event that mentions one
        // within the window after its start is walked (most of them are kept); an event cut by
        // the buffer's end must mention none up to that end.
        if event_walk() == EventWalk::Masks
            && !self.cands.hit(b, i, i.saturating_add(CANDIDATE_WINDOW))
        {
            match skip.skip_nested(b, i) {
                Scan::Done(end) if !self.cands.hit(b, i, end) => return Scan::Done(end),
                Scan::Cut if !self.cands.hit(b, i, b.len()) => return Scan::Cut,
                _ => {}
            }
        }
        self.event_by_members(b, i, skip, found)
    }
}

impl TorchSink {
    /// The event at `b[i]` read member by member up to its category (the walk every event took
    /// before the masks decided most of them; [`EventWalk::Members`] keeps it for all).
    fn event_by_members(
        &mut self,
        b: &[u8],
        i: usize,
        skip: &mut Cursor,
        found: &mut Found,
    ) -> Scan {
        // torch_npu writes `cat` among the short members before `args`: read it there, at its
        // place, and skip the events of other categories without searching their bytes. Events
        // without a `cat` (counters, device kernels: about a quarter of them) are walked member by
        // member to their end, their nested values skipped by blocks, which tells they have none.
        let mut walked = HeadMembers::default();
        match head_category(b, i, skip, &mut walked) {
            Head::Cat(cat, after) => {
                if !matches!(unquote(cat), b"cpu_op" | b"enqueue" | b"dequeue") {
                    // The members up to the category were read: the scan goes on from there.
                    return skip.skip_rest(b, i, after);
                }
                // A kept event: its parse goes on after the members walked.
                let from = walked.list().map(|m| (m, after));
                return scan_event(b, i, self, found, from);
            }
            Head::NoCat(end) => return Scan::Done(end),
            Head::Unsure => {}
        }
        // Otherwise (a nested `cat`, damage, or an event cut by the buffer's end) the event is
        // parsed when its own bytes mention a kept category (up to the buffer's end when it is
        // cut there), as in the masks' decision above. Not from a window of bytes after its
        // start: that window reached into the events after it as far as the batch went, so a
        // damaged event of another category was parsed, and its damage reported, or skipped
        // depending on where the batch ended.
        match skip.skip_nested(b, i) {
            Scan::Done(end) if !self.cands.hit(b, i, end) => Scan::Done(end),
            Scan::Cut if !self.cands.hit(b, i, b.len()) => Scan::Cut,
            _ => scan_event(b, i, self, found, None),
        }
    }
}

/// How events are told apart from the kept ones ([`use_event_walk`]); both give the same result
/// on any input, byte for byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventWalk {
    /// An event that mentions no kept category is ended by the structural scan alone (the
    /// default).
    Masks,
    /// Every event is walked member by member up to its category (the reader before the
    /// masks decided; kept to compare against, in benchmarks and fuzzing).
    Members,
}

static EVENT_WALK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Chooses the event walk for the whole process (for benchmarks and fuzzing; results are the
/// same with each).
pub fn use_event_walk(w: EventWalk) {
    EVENT_WALK.store(
        w == EventWalk::Members,
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// The event walk in use.
pub fn event_walk() -> EventWalk {
    if EVENT_WALK.load(std::sync::atomic::Ordering::Relaxed) {
        EventWalk::Members
    } else {
        EventWalk::Masks
    }
}

/// Bytes from an event's start within which a mention of a kept category makes the search parse
/// the event at once (a kept event names its category within its first few hundred bytes).
const CANDIDATE_WINDOW: usize = 256;

/// What the walk over an event's top-level members found.
#[derive(Debug, PartialEq, Eq)]
enum Head<'a> {
    /// The value (a string, quotes included) of the first top-level `cat` member, and where it
    /// ends (every member before it was well-formed, so [`Cursor::skip_rest`] may go on from
    /// there).
    Cat(&'a [u8], usize),
    /// A well-formed event without a top-level `cat`, ending (exclusive) here: the same end
    /// [`Cursor::skip_nested`] gives.
    NoCat(usize),
    /// Not decided here: a `cat` whose value is not a string, damage, an event cut by the
    /// buffer's end, or a member this strict walk does not take (the caller then searches).
    Unsure,
}

/// The members [`head_category`] walked up to and with the category, as `[key start, key end,
/// value start, value end]`: a kept event's parse ([`scan_event`]) goes on from there instead of
/// walking them again. Only members whose values are strings, numbers or literals are given (the
/// walk reads those exactly as [`scan_object_with`] does); a nested value among them, or more than
/// [`HeadMembers::MAX`] members, and the parse starts from the event's first byte.
#[derive(Default)]
struct HeadMembers {
    /// How many of `at` hold members, or [`HeadMembers::NONE`].
    n: usize,
    at: [[usize; 4]; HeadMembers::MAX],
}

impl HeadMembers {
    /// Members kept: torch_npu writes seven up to `cat` (`ph`, `name`, `pid`, `tid`, `ts`, `dur`).
    const MAX: usize = 8;
    /// Not to be used: a nested value or too many members.
    const NONE: usize = usize::MAX;

    #[inline(always)]
    fn push(&mut self, m: [usize; 4]) {
        match self.at.get_mut(self.n) {
            Some(slot) => {
                *slot = m;
                self.n += 1;
            }
            None => self.n = Self::NONE,
        }
    }

    /// The members walked, if the parse may go on after them.
    fn list(&self) -> Option<&[[usize; 4]]> {
        self.at.get(..self.n)
    }
}

/// Walks the top-level members of the event at `b[i]` up to its first `cat` or its end, skipping
/// nested values with `skip`. The first `cat` decides, here and in [`scan_event`], should an
/// event hold two. The walk takes only what the structural scan reads the same way (strings,
/// nested values ended by the scan itself, numbers and literals of plain characters, a closing
/// `}`), so [`Head::NoCat`] ends where the scan would.
fn head_category<'a>(
    b: &'a [u8],
    i: usize,
    skip: &mut Cursor,
    walked: &mut HeadMembers,
) -> Head<'a> {
    walked.n = 0;
    let mut j = skip_ws(b, i + 1);
    loop {
        if b.get(j) != Some(&b'"') {
            return Head::Unsure;
        }
        let Some(kend) = scan_string(b, j) else {
            return Head::Unsure;
        };
        let Some(key) = b.get(j + 1..kend - 1) else {
            return Head::Unsure;
        };
        let is_cat = key == b"cat";
        let key_at = j + 1;
        j = skip_ws(b, kend);
        if b.get(j) != Some(&b':') {
            return Head::Unsure;
        }
        j = skip_ws(b, j + 1);
        let vend = match b.get(j) {
            Some(b'"') => match scan_string(b, j) {
                Some(e) => e,
                None => return Head::Unsure,
            },
            _ if is_cat => return Head::Unsure,
            Some(b'{' | b'[') => match skip.skip_nested(b, j) {
                Scan::Done(e) => {
                    // Not given to the parse: it reads nested values its own way.
                    walked.n = HeadMembers::NONE;
                    e
                }
                _ => return Head::Unsure,
            },
            _ => match plain_value_end(b, j) {
                Some(e) => e,
                None => return Head::Unsure,
            },
        };
        walked.push([key_at, kend - 1, j, vend]);
        if is_cat {
            return b.get(j..vend).map_or(Head::Unsure, |v| Head::Cat(v, vend));
        }
        j = skip_ws(b, vend);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Head::NoCat(j + 1),
            _ => return Head::Unsure,
        }
    }
}

/// End of the number or literal at `b[j]` (the first `,`, `}`, `]` or blank, or the buffer's end),
/// in one pass that also checks its bytes are plain (letters, digits, `+`, `-`, `.`); `None` for
/// an empty value or one with any other byte.
fn plain_value_end(b: &[u8], j: usize) -> Option<usize> {
    let mut k = j;
    while let Some(&c) = b.get(k) {
        if c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.') {
            k += 1;
        } else if matches!(c, b',' | b'}' | b']') || is_ws(c) {
            break;
        } else {
            return None;
        }
    }
    (k > j).then_some(k)
}

/// An integer from a number or string span (decimals truncated); ids above 2^53 stay exact.
fn int_of(v: &[u8]) -> Option<i64> {
    let t = std::str::from_utf8(unquote(v)).ok()?;
    if let Ok(x) = t.parse::<i64>() {
        return Some(x);
    }
    if let Ok(x) = t.parse::<u64>() {
        return Some(x as i64); // packed CANN pids above 2^63 keep their bits
    }
    parse_scaled(t, 0, 1)
}

fn u64_of(v: &[u8]) -> Option<u64> {
    let t = std::str::from_utf8(unquote(v)).ok()?;
    t.parse::<u64>()
        .ok()
        .or_else(|| int_of(v).map(|x| x as u64))
}

/// Microseconds (string or number) → exact ns.
#[cfg(test)]
fn us_of(v: &[u8]) -> Option<i64> {
    let t = std::str::from_utf8(unquote(v)).ok()?;
    parse_scaled(t, 3, 1)
}

/// The bytes of a value span inside its quotes, if it is quoted, as `(start, end)` in `b` (the
/// span itself when it is not), as [`unquote`] cuts them.
#[inline(always)]
fn inner_span(b: &[u8], (s, e): (usize, usize)) -> (usize, usize) {
    if e >= s + 2 && b.get(s) == Some(&b'"') && b.get(e - 1) == Some(&b'"') {
        (s + 1, e - 1)
    } else {
        (s, e)
    }
}

/// [`us_of`] of the value `b[s..e]`, read where it lies in the event ([`parse_scaled_span`]:
/// the digits are read a word at a time, the bytes after them in `b` shifted out, nothing
/// copied). Bytes that are not UTF-8 are not digits either, so checking for UTF-8 first, as the
/// text path does, changes no answer.
#[inline]
fn us_at(b: &[u8], span: (usize, usize)) -> Option<i64> {
    let (s, e) = inner_span(b, span);
    parse_scaled_span(b, s, e, 3, 1)
}

/// [`int_of`] of the value `b[s..e]`: plain digits (at most 19, with an optional `-` before at
/// most 18) are read here, where both of `int_of`'s `str::parse` steps give the same bits; any
/// other text takes `int_of`.
#[inline]
fn int_at(b: &[u8], span: (usize, usize)) -> Option<i64> {
    let (s, e) = inner_span(b, span);
    let t = b.get(s..e).unwrap_or(&[]);
    let (neg, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    let max = if neg { 18 } else { 19 };
    if !digits.is_empty() && digits.len() <= max {
        let mut v = 0u64;
        let mut plain = true;
        for &c in digits {
            let d = c.wrapping_sub(b'0');
            plain &= d < 10;
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        }
        if plain {
            // Below 10^19 < 2^64: `i64` parses it, or `u64` does and its bits are kept.
            return Some(if neg { -(v as i64) } else { v as i64 });
        }
    }
    int_of(b.get(span.0..span.1).unwrap_or(&[]))
}

/// Where the next mention of a kept category is, found once and reused for every event up to it
/// (one search pass over the piece instead of one per event).
struct Cands {
    next: usize,
}

impl Default for Cands {
    fn default() -> Self {
        Cands::new()
    }
}

impl Cands {
    /// Not searched yet.
    const NOT_YET: usize = usize::MAX - 1;

    fn new() -> Self {
        Cands {
            next: Self::NOT_YET,
        }
    }

    /// True when `b[i..end]` mentions `"cpu_op"` or `queue"` (a mention starts there).
    fn hit(&mut self, b: &[u8], i: usize, end: usize) -> bool {
        if self.next == Self::NOT_YET || self.next < i {
            self.next = kept_mentions().find(b, i).unwrap_or(usize::MAX);
        }
        self.next < end
    }
}

/// The finder of the kept categories' mentions, `"cpu_op"` and `queue"` (`enqueue`, `dequeue`),
/// both in one pass: they end with the same quote and have a `u` four bytes before it.
fn kept_mentions() -> &'static Either {
    static F: std::sync::OnceLock<Either> = std::sync::OnceLock::new();
    F.get_or_init(|| Either::new(b"\"cpu_op\"", b"queue\""))
}

/// A hash of the length and three 32-byte windows (start, middle, end) of `raw`. foldhash with a
/// fixed seed rather than the standard SipHash: a few times faster on these short inputs, and the
/// hash only picks the candidates that are then compared in full.
fn sample_hash(raw: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = foldhash::fast::FixedState::with_seed(0x57ac_4a5e).build_hasher();
    let n = raw.len();
    n.hash(&mut h);
    let w = |a: usize| raw.get(a..(a + 32).min(n)).unwrap_or(&[]);
    w(0).hash(&mut h);
    w(n / 2).hash(&mut h);
    w(n.saturating_sub(32)).hash(&mut h);
    h.finish()
}

/// A call stack a piece has interned: its raw span in the piece's buffer, its local id, and
/// whether it did not decode (so that each event holding it is warned of, not only the first).
#[derive(Clone, Copy)]
struct SeenStack {
    start: usize,
    end: usize,
    id: u32,
    bad: bool,
}

/// The local id of the call stack whose JSON string is `b[span]`, decoding it only the first time.
///
/// A stack that does not decode is noted at every event that holds it, as a bad op name is: a
/// note only at a stack's first sight made the warnings depend on how the file was cut, since
/// each piece has its own cache (one note read whole, one per piece read in pieces).
fn intern_stack(b: &[u8], span: (usize, usize), out: &mut TorchSink, found: &mut Found) -> u32 {
    let raw = b.get(span.0..span.1).unwrap_or(&[]);
    let key = sample_hash(raw);
    if let Some(seen) = out.raw_stacks.get(&key) {
        for s in seen {
            if b.get(s.start..s.end)
                .is_some_and(|seen| crate::bytes::same_bytes(seen, raw))
            {
                if s.bad {
                    found.notes.push((span.0, BAD_STRING.to_string()));
                }
                return s.id;
            }
        }
    }
    let (id, bad) = match str_lossy(raw) {
        Some((s, bad)) if !s.is_empty() => (out.stacks.intern(&s), bad),
        _ => (0, false),
    };
    if bad {
        found.notes.push((span.0, BAD_STRING.to_string()));
    }
    out.raw_stacks.entry(key).or_default().push(SeenStack {
        start: span.0,
        end: span.1,
        id,
        bad,
    });
    id
}

/// The note for a kept string that did not decode.
const BAD_STRING: &str = "a string that is not valid UTF-8 or has a bad escape; kept with the \
                          bad bytes shown as U+FFFD";

/// Scans one event at `i`, keeping it if it is a `cpu_op` or a queue event. With `from`, the
/// members [`head_category`] walked and where the last of them ends: they are taken as the walk
/// would have met them, and the walk goes on from there.
fn scan_event(
    b: &[u8],
    i: usize,
    out: &mut TorchSink,
    found: &mut Found,
    from: Option<(&[[usize; 4]], usize)>,
) -> Scan {
    let mut name = (0, 0);
    let mut cat = (0, 0);
    let mut ph = (0, 0);
    let mut pid = (0, 0);
    let mut tid = (0, 0);
    let mut ts = (0, 0);
    let mut dur = (0, 0);
    // What `args` holds, read where the walk meets it: its call stack is the bulk of a kept
    // event, and reading `args` in place scans those bytes once (skipping `args` first and
    // walking it again afterwards scanned them twice). The last `args` member counts, as a JSON
    // object's last duplicate member does.
    let mut seq = -1i64;
    let mut fwd = 0i64;
    let mut corr = None;
    let mut stack_span = (0, 0);
    let mut on = |k: &[u8], s: usize, e: Option<usize>| {
        let Some(e) = e else {
            // Before the value: `args` is read here, in place.
            if k != b"args" {
                return None;
            }
            (seq, fwd, corr, stack_span) = (-1, 0, None, (0, 0));
            if b.get(s) != Some(&b'{') {
                return None;
            }
            let span = |s: usize, e: usize| b.get(s..e).unwrap_or(&[]);
            // A damaged `args` is read up to the damage, and its end is then found by skipping
            // it (`None`), as for any other value.
            return match scan_object(b, s, &mut |k, s, e| match k {
                b"Sequence number" => seq = int_at(b, (s, e)).unwrap_or(-1),
                b"Fwd thread id" => fwd = int_at(b, (s, e)).unwrap_or(0),
                b"Call stack" => stack_span = (s, e),
                b"correlation_id" => corr = u64_of(span(s, e)),
                _ => {}
            }) {
                Scan::Done(end) => Some(end),
                _ => None,
            };
        };
        match k {
            b"name" => name = (s, e),
            b"cat" if cat.1 == 0 => cat = (s, e),
            b"ph" => ph = (s, e),
            b"pid" => pid = (s, e),
            b"tid" => tid = (s, e),
            b"ts" => ts = (s, e),
            b"dur" => dur = (s, e),
            _ => {}
        }
        None
    };
    let r = match from {
        None => scan_object_with(b, i, &mut on),
        Some((walked, after)) => {
            // Each member as `scan_object_with` gives it: first before its value (a string or
            // plain value here, which `on` leaves to be skipped), then with its end.
            for &[ks, ke, vs, ve] in walked {
                let key = b.get(ks..ke).unwrap_or(&[]);
                if on(key, vs, None).is_none() {
                    on(key, vs, Some(ve));
                }
            }
            scan_object_after(b, after, &mut on)
        }
    };
    let Scan::Done(end) = r else { return r };
    if end - i > MAX_EVENT_BYTES {
        return Scan::Done(end);
    }
    let span = |(s, e): (usize, usize)| b.get(s..e).unwrap_or(&[]);
    let cat_v = unquote(span(cat));
    let kind = match cat_v {
        b"cpu_op" => 0,
        b"enqueue" => 1,
        b"dequeue" => 2,
        _ => return Scan::Done(end),
    };
    if !matches!(unquote(span(ph)), b"X" | b"") {
        return Scan::Done(end);
    }
    let Some(t) = us_at(b, ts) else {
        // Valid JSON, so a note of its own rather than an error of the scan.
        let what = if ts.1 > ts.0 {
            format!(
                "\"ts\" is not a time in microseconds, found {}",
                crate::quote::quote(unquote(span(ts)), crate::quote::SHORT)
            )
        } else {
            "event without \"ts\"".to_string()
        };
        found
            .notes
            .push((ts.0.max(i), format!("{what}; event skipped")));
        return Scan::Done(end);
    };
    let d = us_at(b, dur).unwrap_or(0).max(0);
    let name_s = match str_lossy(span(name)) {
        Some((s, bad)) => {
            if bad {
                found.notes.push((name.0, BAD_STRING.to_string()));
            }
            s
        }
        None => Default::default(),
    };
    let mut stack = 0u32;
    if stack_span.1 > stack_span.0 {
        stack = intern_stack(b, stack_span, out, found);
    }
    let name_id = out.names.intern(&name_s);
    let tid_v = int_at(b, tid).unwrap_or(0);
    if kind == 0 {
        out.ops.push(RawOp {
            name: name_id,
            pid: int_at(b, pid).unwrap_or(0),
            tid: tid_v,
            ts: t,
            dur: d,
            seq,
            fwd_tid: fwd,
            stack,
        });
        if let Some(n) = name_s.strip_prefix("ProfilerStep#") {
            if let Ok(step) = n.trim().parse::<u64>() {
                out.steps.push(StepSpan {
                    step,
                    ts: t,
                    end: t.saturating_add(d),
                });
            }
        }
    } else {
        out.queue.push(QueueEvent {
            enqueue: kind == 1,
            name: name_id,
            tid: tid_v,
            ts: t,
            dur: d,
            correlation_id: corr,
        });
    }
    Scan::Done(end)
}

/// Reads `trace_view.json` from `src`, interning op names into `names` and stacks into `stacks`.
///
/// `progress(done, total)` is called after each batch. Returns `Err` only when the file cannot be
/// read or is not a JSON array of events at all.
///
/// Memory: the batch being scanned, the tail of an event cut by the batch end (at most
/// [`MAX_EVENT_BYTES`], larger events are skipped), and what is kept — whatever the file size.
pub fn read_trace(
    src: &dyn Source,
    names: &mut Interner,
    stacks: &mut Interner,
    opts: TraceOptions,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<Trace, Diagnostic> {
    let mut trace = Trace::default();
    let mut name_map: Vec<u32> = Vec::new();
    let mut stack_map: Vec<u32> = Vec::new();
    let stream_opts = StreamOptions {
        // At least what the source reads best in (a browser `File`: larger reads).
        batch: crate::source::read_size(src, opts.batch),
        pieces: opts.pieces,
        wrapper: b"\"traceEvents\"",
        what: "trace events",
        event: "trace event",
    };
    let stream = scan_stream(src, stream_opts, progress, &mut |out: TorchSink| {
        // Merge the piece's local ids into the caller's interners, in file order.
        name_map.clear();
        name_map.extend((0..out.names.len()).map(|i| names.intern(out.names.get(i as u32))));
        stack_map.clear();
        stack_map.extend((0..out.stacks.len()).map(|i| stacks.intern(out.stacks.get(i as u32))));
        for op in &out.ops {
            let mut op = *op;
            op.name = name_map.get(op.name as usize).copied().unwrap_or(0);
            op.stack = stack_map.get(op.stack as usize).copied().unwrap_or(0);
            trace.ops.push(&op);
        }
        trace.steps.extend_from_slice(&out.steps);
        for q in &out.queue {
            let mut q = *q;
            q.name = name_map.get(q.name as usize).copied().unwrap_or(0);
            trace.queue.push(q);
        }
    })?;
    trace.events = stream.events;
    trace.bytes = stream.bytes;
    trace.warnings = stream.warnings;
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::BytesSource;

    fn read(text: &str, opts: TraceOptions) -> (Trace, Interner, Interner) {
        let src = BytesSource::new("t.json", text.as_bytes().to_vec());
        let mut n = Interner::new();
        let mut s = Interner::new();
        let t = read_trace(&src, &mut n, &mut s, opts, None).unwrap();
        (t, n, s)
    }

    const SMALL: &str = r#"[{"ph": "X", "name": "aten::add", "pid": 7, "tid": 7, "ts": "1736405443863674.400", "dur": 162.66, "cat": "cpu_op", "args": {"Sequence number": 12, "Fwd thread id": 0, "Call stack": "/a/main.py(3): f;\r\n<string>(1): <module>"}}, {"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 5, "cat": "python_function", "args": {"a": "}, {"}}, {"ph": "s", "id": 1736405443996246554, "pid": 3089232288, "tid": 2, "ts": "1.0", "cat": "async_npu"}, {"ph": "X", "name": "ProfilerStep#3", "pid": 7, "tid": 7, "ts": 1736405443863600.5, "dur": 1000, "cat": "cpu_op", "args": {}}, {"ph": "X", "name": "Dequeue@aten::add", "pid": 7, "tid": 9, "ts": "10.000", "dur": 1.5, "cat": "dequeue", "args": {"correlation_id": 18446744073709551615}},]"#;

    #[test]
    fn keeps_cpu_ops_steps_and_queue_and_tolerates_trailing_comma() {
        let (t, n, s) = read(
            SMALL,
            TraceOptions {
                batch: 1 << 20,
                pieces: 1,
            },
        );
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
        assert_eq!(t.events, 5);
        assert_eq!(t.ops.len(), 2);
        assert_eq!(n.get(t.ops.name[0]), "aten::add");
        assert_eq!(t.ops.ts[0], 1_736_405_443_863_674_400);
        assert_eq!(t.ops.dur[0], 162_660);
        assert_eq!(t.ops.seq[0], 12);
        assert_eq!(
            s.get(t.ops.stack[0]),
            "/a/main.py(3): f;\r\n<string>(1): <module>"
        );
        assert_eq!(
            t.steps,
            vec![StepSpan {
                step: 3,
                ts: 1_736_405_443_863_600_500,
                end: 1_736_405_443_864_600_500
            }]
        );
        assert_eq!(t.queue.len(), 1);
        assert_eq!(t.queue[0].correlation_id, Some(u64::MAX));
    }

    #[test]
    fn the_category_is_read_at_its_place_or_searched_for() {
        let head = |t: &str| match head_category(
            t.as_bytes(),
            0,
            &mut Cursor::default(),
            &mut HeadMembers::default(),
        ) {
            Head::Cat(v, _) => format!("cat {}", String::from_utf8_lossy(v)),
            Head::NoCat(e) => format!("end {e}"),
            Head::Unsure => "unsure".to_string(),
        };
        assert_eq!(
            head(r#"{"ph": "X", "ts": 1.5, "dur": -2, "cat": "cpu_op", "args": {}}"#),
            r#"cat "cpu_op""#
        );
        // After a nested value: found by the walk.
        assert_eq!(
            head(r#"{"args": {"cat": "x"}, "cat": "cpu_op"}"#),
            r#"cat "cpu_op""#
        );
        // No `cat` at the top: the event's end, as the scan finds it.
        let none = r#"{"ph": "C", "args": {"cat": "cpu_op", "v": [1, {"a": "}"}]}, "ts": 1e3} , "#;
        assert_eq!(head(none), format!("end {}", none.find(" , ").unwrap()));
        assert_eq!(
            Cursor::default().skip_nested(none.as_bytes(), 0),
            Scan::Done(none.find(" , ").unwrap())
        );
        assert_eq!(head(r#"{"ph": "X"}"#), "end 11");
        // Not a string, damaged, cut, or a value the walk does not take: left to the search.
        assert_eq!(head(r#"{"cat": 3}"#), "unsure");
        assert_eq!(head(r#"{"cat": {"a": 1}}"#), "unsure");
        assert_eq!(head(r#"{"ph" "X", "cat": "cpu_op"}"#), "unsure");
        assert_eq!(head(r#"{"ph": "X", "ca"#), "unsure");
        assert_eq!(head(r#"{"ph": "X", "args": {"a": 1"#), "unsure");
        assert_eq!(head(r#"{"ph": x"y}, "cat": "cpu_op"}"#), "unsure");
        assert_eq!(head(r#"{"ph": "X"]"#), "unsure");
        assert_eq!(head(r#"{}"#), "unsure");
        // Whichever way the category is found, the same events are kept; the first `cat` decides.
        let text = r#"[{"name": "a", "args": {"cat": "python_function"}, "cat": "cpu_op", "ts": 1},
            {"name": "b \"cpu_op\"", "ts": 2, "cat": "python_function", "args": {}},
            {"name": "c", "ts": 3, "cat": "cpu_op", "cat": "other"},
            {"name": "d", "ts": 4, "cat": "other", "cat": "cpu_op"},
            {"name": "e", "args": {}, "cat": "other", "cat": "cpu_op", "ts": 5},
            {"ts": 6, "cat": "enqueue", "name": "f"}]"#;
        let (t, n, _) = read(
            text,
            TraceOptions {
                batch: 1 << 20,
                pieces: 1,
            },
        );
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
        let ops: Vec<&str> = t.ops.name.iter().map(|&k| n.get(k)).collect();
        assert_eq!(ops, ["a", "c"]);
        assert_eq!(t.queue.len(), 1);
        assert_eq!(t.events, 6);
    }

    /// Wherever the head walk found a category, [`Cursor::skip_rest`] from the value's end
    /// gives the end the scalar reference gives from the event's start: checked from every event
    /// of a generated trace and of the real fixture traces, with the cursor the walk used and a
    /// new one, and on the first events damaged at every offset (a byte replaced by a quote, a
    /// backslash, a bracket or a letter) and cut at every length.
    #[test]
    fn the_scan_goes_on_after_the_category_as_from_the_start() {
        use crate::jsonscan::lex::skip_nested_scalar;
        let check = |b: &[u8], i: usize, checked: &mut usize| {
            let mut cur = Cursor::default();
            // The scanner hands a reader only events that start with `{`.
            if b.get(i) != Some(&b'{') {
                return;
            }
            if let Head::Cat(_, after) = head_category(b, i, &mut cur, &mut HeadMembers::default())
            {
                let want = skip_nested_scalar(b, i);
                assert_eq!(
                    cur.skip_rest(b, i, after),
                    want,
                    "from {i}, cat ends {after}: {}",
                    String::from_utf8_lossy(&b[i..b.len().min(i + 400)])
                );
                assert_eq!(
                    Cursor::default().skip_rest(b, i, after),
                    want,
                    "new cursor, from {i}, cat ends {after}"
                );
                *checked += 1;
            }
        };
        let texts = generated_and_fixture_traces(48 << 10, 5);
        assert!(texts.len() >= 2, "{} traces", texts.len());
        let mut checked = 0;
        for b in &texts {
            let starts = event_starts(b);
            for &i in &starts {
                check(b, i, &mut checked);
            }
        }
        let whole = checked;
        assert!(whole > 500, "{whole} events ended after their category");
        let b = &texts[0];
        let first = b.iter().position(|&c| c == b'{').unwrap();
        let mut i = first;
        for _ in 0..12 {
            let Scan::Done(end) = skip_nested_scalar(b, i) else {
                panic!("event at {i} not whole")
            };
            for k in i..end {
                for c in [b'"', b'\\', b'{', b'}', b']', b'x', b' '] {
                    let mut d = b[..(end + 80).min(b.len())].to_vec();
                    d[k] = c;
                    check(&d, i, &mut checked);
                }
                check(&b[..k], i, &mut checked);
            }
            i = skip_ws(b, end + 1);
        }
        assert!(checked > whole + 1000, "{} damaged events", checked - whole);
    }

    /// Everything one event's read leaves: the scan's answer, the warnings and notes, and what
    /// the sink kept (interned ids resolved).
    fn one_event(
        b: &[u8],
        i: usize,
        sink: &mut TorchSink,
        cur: &mut Cursor,
        members: bool,
    ) -> String {
        let mut found = Found::default();
        let r = if members {
            sink.event_by_members(b, i, cur, &mut found)
        } else {
            sink.event(b, i, cur, &mut found)
        };
        described(r, &found, sink)
    }

    /// The scan's answer, the warnings and notes, and what the sink kept (ids resolved).
    fn described(r: Scan, found: &Found, sink: &TorchSink) -> String {
        let ops: Vec<String> = sink
            .ops
            .iter()
            .map(|o| {
                format!(
                    "{} {} {} {} {} {} {} {}",
                    sink.names.get(o.name),
                    sink.stacks.get(o.stack),
                    o.pid,
                    o.tid,
                    o.ts,
                    o.dur,
                    o.seq,
                    o.fwd_tid
                )
            })
            .collect();
        let queue: Vec<String> = sink
            .queue
            .iter()
            .map(|q| format!("{} {} {:?}", sink.names.get(q.name), q.ts, q.correlation_id))
            .collect();
        format!("{r:?} {found:?} {ops:?} {:?} {queue:?}", sink.steps)
    }

    /// Event starts of a text: a `{` after `[` or `,` (blanks aside).
    fn event_starts(b: &[u8]) -> Vec<usize> {
        (0..b.len())
            .filter(|&i| {
                b[i] == b'{'
                    && b[..i]
                        .iter()
                        .rev()
                        .find(|c| !is_ws(**c))
                        .is_some_and(|&c| c == b'[' || c == b',')
            })
            .collect()
    }

    /// The masks' decision (an event mentioning no kept category ends where the structural scan
    /// ends it) against the member walk every event took before: the same answer, warnings and
    /// kept values for every event of a generated trace, the real fixture traces and events made
    /// to mislead it (kept categories named in other members, in nested `args`, in strings with
    /// braces, quotes and escapes, past the first 256 bytes, in the next event), one sink and
    /// cursor going through each text as a piece's scan does; then on events damaged at every
    /// offset (a byte replaced by a quote, a backslash, a bracket, a comma or a letter) and cut at
    /// every length, each read by a fresh sink.
    #[test]
    fn the_masks_decide_as_the_member_walk() {
        let mut texts = generated_and_fixture_traces(64 << 10, 14);
        let long = "y".repeat(300);
        let tricky = format!(
            r#"[{{"ph": "X", "name": "a \"cpu_op\"", "ts": 1, "cat": "python_function", "args": {{}}}},
            {{"ph": "C", "name": "b", "args": {{"cat": "cpu_op", "s": "}}, {{\"cat\": \"cpu_op\""}}, "ts": 2}},
            {{"ph": "X", "name": "{long}", "ts": "3.5", "dur": 2, "cat": "cpu_op", "args": {{"Sequence number": -4}}}},
            {{"ph": "X", "name": "c", "pid": -7, "tid": "18446744073709551615", "ts": " 4.25 ", "dur": "1e1", "cat": "enqueue", "args": {{"correlation_id": 12}}}},
            {{"ph": "X", "name": "d\\u0041", "ts": 5, "cat": "dequeue", "args": {{"correlation_id": "x"}}}},
            {{"ph": "X", "name": "e", "ts": 6, "cat": "other", "args": {{"a": "\\\"}}{{[", "b": [1, {{"c": "cpu_op"}}]}}}},
            {{"ph": "X", "name": "{long}", "ts": 7, "cat": "python_function", "args": {{"n": "queue\""}}}},
            {{"name": "f", "ts": 8, "pid": 1}},
            {{"ph": "X", "name": "ProfilerStep#2", "ts": "9.000", "dur": 1.5, "cat": "cpu_op", "args": {{"Call stack": "x.py(1): f;\r\ny.py(2): g"}}}}]"#
        );
        texts.push(tricky.into_bytes());
        let mut checked = 0;
        for b in &texts {
            let starts = event_starts(b);
            let (mut fast, mut slow) = (TorchSink::default(), TorchSink::default());
            let (mut cf, mut cs) = (Cursor::default(), Cursor::default());
            for &i in &starts {
                assert_eq!(
                    one_event(b, i, &mut fast, &mut cf, false),
                    one_event(b, i, &mut slow, &mut cs, true),
                    "event at {i}: {}",
                    String::from_utf8_lossy(&b[i..b.len().min(i + 300)])
                );
                checked += 1;
            }
        }
        assert!(checked > 500, "{checked} events");
        let fresh = |b: &[u8], i: usize| {
            assert_eq!(
                one_event(
                    b,
                    i,
                    &mut TorchSink::default(),
                    &mut Cursor::default(),
                    false
                ),
                one_event(
                    b,
                    i,
                    &mut TorchSink::default(),
                    &mut Cursor::default(),
                    true
                ),
                "event at {i}: {}",
                String::from_utf8_lossy(&b[i..b.len().min(i + 300)])
            );
        };
        let mut damaged = 0;
        for b in [&texts[0], texts.last().unwrap()] {
            let starts = event_starts(b);
            for w in starts.windows(2).take(10) {
                let (i, next) = (w[0], w[1]);
                for k in i + 1..next {
                    for c in [b'"', b'\\', b'{', b'}', b']', b',', b'x'] {
                        let mut d = b[..(next + 300).min(b.len())].to_vec();
                        d[k] = c;
                        fresh(&d, i);
                        damaged += 1;
                    }
                    fresh(&b[..k], i);
                }
            }
        }
        assert!(damaged > 5000, "{damaged} damaged events");
    }

    /// A kept event read with [`scan_event`] from its first byte, or going on after the members
    /// [`head_category`] walked (`resume`); `None` when the walk finds no kept category or, with
    /// `resume`, gives no members to go on from.
    fn parse_kept(b: &[u8], i: usize, resume: bool) -> Option<String> {
        let mut walked = HeadMembers::default();
        let Head::Cat(cat, after) = head_category(b, i, &mut Cursor::default(), &mut walked) else {
            return None;
        };
        if !matches!(unquote(cat), b"cpu_op" | b"enqueue" | b"dequeue") {
            return None;
        }
        let from = if resume {
            Some((walked.list()?, after))
        } else {
            None
        };
        let (mut sink, mut found) = (TorchSink::default(), Found::default());
        let r = scan_event(b, i, &mut sink, &mut found, from);
        Some(described(r, &found, &sink))
    }

    /// A kept event's parse that goes on after the members the category's walk read gives what
    /// the parse from the event's first byte gives (answer, warnings, kept values): for every
    /// event of a generated trace, the real fixture traces and events of unusual shapes (members
    /// repeated, `args` or nested values before `cat`, as many members up to it as are kept and
    /// more, damage after `cat`), then on the first events damaged at every offset and cut at every length.
    #[test]
    fn a_kept_event_read_on_from_its_category_as_from_its_start() {
        let mut texts = generated_and_fixture_traces(64 << 10, 21);
        let shapes = r#"[{"cat": "cpu_op", "name": "a", "ts": 1, "dur": 2, "args": {"Sequence number": 3}},
            {"name": "b", "name": "b2", "ts": "2.5", "ts": 3, "cat": "cpu_op", "cat": "other", "args": {}},
            {"args": "x", "name": "c", "ts": 4, "cat": "cpu_op"},
            {"args": {"Call stack": "p.py(1): f"}, "name": "d", "ts": 5, "cat": "cpu_op", "args": {"Sequence number": 9}},
            {"name": "e", "v": [1, 2], "ts": 6, "cat": "enqueue", "args": {"correlation_id": 4}},
            {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "name": "f", "ts": 7, "cat": "cpu_op"},
            {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "name": "g", "ts": 8, "cat": "cpu_op"},
            {"ph": "B", "name": "h", "ts": 9, "cat": "cpu_op", "args": {}},
            {"ph": "X", "name": "i", "ts": true, "cat": "dequeue", "args": {}},
            {"ph": "X", "name": "j", "ts": 10, "cat": "cpu_op" "args": {}},
            {"ph": "X", "name": "k", "ts": 11, "cat": "cpu_op", "args": {"Sequence number": 1,}},
            {"ph": "X", "name": "l", "ts": 12, "cat": "cpu_op", "dur": ,"args": {}},
            {"ph": "X", "name": "m\u0041", "ts": 13, "cat": "cpu_op"}]"#;
        texts.push(shapes.as_bytes().to_vec());
        let check = |b: &[u8], i: usize, resumed: &mut usize| {
            if let Some(want) = parse_kept(b, i, false) {
                if let Some(got) = parse_kept(b, i, true) {
                    assert_eq!(
                        got,
                        want,
                        "event at {i}: {}",
                        String::from_utf8_lossy(&b[i..b.len().min(i + 300)])
                    );
                    *resumed += 1;
                }
            }
        };
        let mut resumed = 0;
        for b in &texts {
            for i in event_starts(b) {
                check(b, i, &mut resumed);
            }
        }
        let whole = resumed;
        assert!(
            whole > 1000,
            "{whole} kept events read on from their category"
        );
        for b in [&texts[0], texts.last().unwrap()] {
            let starts = event_starts(b);
            for w in starts.windows(2).take(12) {
                let (i, next) = (w[0], w[1]);
                for k in i + 1..next {
                    for c in [b'"', b'\\', b'{', b'}', b']', b',', b':', b'x', b' '] {
                        let mut d = b[..(next + 300).min(b.len())].to_vec();
                        d[k] = c;
                        check(&d, i, &mut resumed);
                    }
                    check(&b[..k], i, &mut resumed);
                }
            }
        }
        assert!(resumed > whole + 2000, "{} damaged events", resumed - whole);
    }

    /// Numbers read where they lie give what the text path gives (and, for plain integers, what
    /// `str::parse` gives), before any bytes and near the buffer's end.
    #[test]
    fn numbers_in_place_read_as_their_text() {
        let mut rng = fastrand::Rng::with_seed(16);
        let mut values: Vec<String> = [
            "0",
            "-0",
            "7",
            "-1",
            "+5",
            "3000000",
            "\"3000000\"",
            "-123456789012345678",
            "-1234567890123456789",
            "9223372036854775807",
            "9223372036854775808",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "1.5",
            "\"1736405443863674.400\"",
            "162.66",
            "1e3",
            "\" 12 \"",
            "\"\"",
            "\"",
            "-",
            "",
            "12a",
            "\"-\"",
            "0x10",
            "996.9599375",
            "\"\u{e9}\"",
            "1.74E+15",
        ]
        .iter()
        .map(|v| v.to_string())
        .collect();
        for _ in 0..3000 {
            let n = rng.usize(1..21);
            let mut v: String = (0..n).map(|_| char::from(b'0' + rng.u8(0..10))).collect();
            if rng.u8(0..4) == 0 {
                v.insert(0, '-');
            }
            if rng.u8(0..3) == 0 {
                let at = rng.usize(0..=v.len());
                v.insert(at, '.');
            }
            if rng.bool() {
                v = format!("\"{v}\"");
            }
            values.push(v);
        }
        for v in &values {
            for after in [
                &b""[..],
                b",",
                b"}, {\"ph\": \"X\", \"name\": \"aten::add\"}",
            ] {
                let mut b = b"{\"ts\": ".to_vec();
                let s = b.len();
                b.extend_from_slice(v.as_bytes());
                let e = b.len();
                b.extend_from_slice(after);
                let text = v.as_bytes();
                assert_eq!(int_at(&b, (s, e)), int_of(text), "int {v} then {after:?}");
                assert_eq!(us_at(&b, (s, e)), us_of(text), "us {v} then {after:?}");
                let plain = unquote(text);
                if !plain.is_empty() && plain.iter().all(|c| c.is_ascii_digit()) {
                    let t = std::str::from_utf8(plain).unwrap();
                    let want = t
                        .parse::<i64>()
                        .ok()
                        .or(t.parse::<u64>().ok().map(|x| x as i64));
                    if want.is_some() {
                        assert_eq!(int_at(&b, (s, e)), want, "parse {v}");
                    }
                }
            }
        }
    }

    /// A generated trace read in batches of 1 byte to 1 MiB keeps what serde_json reads in it:
    /// every event counted, the `cpu_op` events' names and the queue events in file order.
    #[test]
    fn batches_of_any_size_keep_what_serde_reads() {
        let text = crate::profiler::generate::one_trace(40 << 10, 15).unwrap();
        let all: Vec<serde_json::Value> = serde_json::from_slice(&text).unwrap();
        let cat = |e: &serde_json::Value| {
            e.get("cat")
                .and_then(|c| c.as_str())
                .unwrap_or("")
                .to_string()
        };
        let want_ops: Vec<String> = all
            .iter()
            .filter(|e| cat(e) == "cpu_op")
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect();
        let want_queue = all
            .iter()
            .filter(|e| matches!(cat(e).as_str(), "enqueue" | "dequeue"))
            .count();
        assert!(
            want_ops.len() > 10 && want_queue > 0,
            "{} ops, {want_queue} queue",
            want_ops.len()
        );
        let src = std::str::from_utf8(&text).unwrap();
        for batch in [1, 7, 64, 1000, 4096, 65_536, 1 << 20] {
            for pieces in [1, 3] {
                let (t, n, _) = read(src, TraceOptions { batch, pieces });
                assert!(t.warnings.is_empty(), "batch {batch}: {:?}", t.warnings);
                assert_eq!(t.events, all.len() as u64, "batch {batch}");
                let ops: Vec<&str> = t.ops.name.iter().map(|&k| n.get(k)).collect();
                assert_eq!(ops, want_ops, "batch {batch}");
                assert_eq!(t.queue.len(), want_queue, "batch {batch}");
            }
        }
    }

    /// A generated one-rank trace (`trace_bytes` long, from `seed`) and the real fixture export's
    /// traces: the texts the walk's tests go through.
    fn generated_and_fixture_traces(trace_bytes: u64, seed: u64) -> Vec<Vec<u8>> {
        let mut texts = vec![crate::profiler::generate::one_trace(trace_bytes, seed).unwrap()];
        let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/torch_npu/msinsight-level0");
        for e in walk_files(&real) {
            if e.file_name().is_some_and(|n| n == "trace_view.json") {
                texts.push(std::fs::read(e).unwrap());
            }
        }
        texts
    }

    fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk_files(&p));
            } else {
                out.push(p);
            }
        }
        out
    }

    #[test]
    fn args_are_read_in_place_the_last_one_counting() {
        let text = r#"[{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "args": {"Sequence number": 5, "Call stack": "s"}, "args": {"Fwd thread id": 3}},
            {"ph": "X", "cat": "cpu_op", "name": "b", "ts": 2, "args": {"Sequence number": 7, "x" 1, "Call stack": "t"}, "dur": 4},
            {"ph": "X", "cat": "cpu_op", "name": "c", "ts": 3, "args": 5, "dur": 2},
            {"ph": "X", "cat": "cpu_op", "name": "d", "ts": 4, "args": {"Call stack": "u;\r\nv", "Sequence number": "8"}}]"#;
        let (t, n, s) = read(text, TraceOptions::default());
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
        let names: Vec<&str> = t.ops.name.iter().map(|&k| n.get(k)).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        // The second `args` of `a` replaces the first; `b`'s damaged `args` is read up to the
        // damage and skipped to its end (its `dur` after it is read).
        assert_eq!(t.ops.seq, [-1, 7, -1, 8]);
        assert_eq!(t.ops.fwd_tid, [3, 0, 0, 0]);
        assert_eq!(t.ops.dur, [0, 4_000, 2_000, 0]);
        let stacks: Vec<&str> = t.ops.stack.iter().map(|&k| s.get(k)).collect();
        assert_eq!(stacks, ["", "", "", "u;\r\nv"]);
    }

    #[test]
    fn tiny_batches_and_many_pieces_give_the_same_result() {
        let mut big = String::from("[");
        for k in 0..3000 {
            if k > 0 {
                big.push_str(", ");
            }
            big.push_str(&format!(
                r#"{{"ph": "X", "name": "op{}", "pid": 1, "tid": 1, "ts": "{}.000", "dur": 1.0, "cat": "{}", "args": {{"Call stack": "s}}, {{{}"}}}}"#,
                k % 7,
                1000 + k,
                if k % 3 == 0 { "cpu_op" } else { "other" },
                k % 5
            ));
        }
        big.push(']');
        let (a, na, _) = read(
            &big,
            TraceOptions {
                batch: 1 << 24,
                pieces: 1,
            },
        );
        let (b, nb, _) = read(
            &big,
            TraceOptions {
                batch: 70_000,
                pieces: 7,
            },
        );
        assert_eq!(a.events, 3000);
        assert_eq!(b.events, 3000);
        assert_eq!(a.ops.ts, b.ops.ts);
        let names_a: Vec<&str> = a.ops.name.iter().map(|&i| na.get(i)).collect();
        let names_b: Vec<&str> = b.ops.name.iter().map(|&i| nb.get(i)).collect();
        assert_eq!(names_a, names_b);
        assert!(b.warnings.is_empty());
    }

    #[test]
    fn escapes_at_every_offset_are_skipped_right() {
        for pad in 0..20 {
            let name = format!("{}a\\\"b\\\\", "x".repeat(pad));
            let text = format!(
                r#"[{{"ph": "X", "name": "{name}", "ts": "1.0", "dur": 1, "cat": "cpu_op"}}, {{"ph": "X", "name": "{name}{{", "ts": "2", "cat": "other"}}, {{"cat": "cpu_op", "name": "z", "ts": 3}}]"#
            );
            let (t, n, _) = read(&text, TraceOptions::default());
            assert!(t.warnings.is_empty(), "{pad}: {:?}", t.warnings);
            assert_eq!(t.events, 3, "{pad}");
            assert_eq!(t.ops.len(), 2);
            assert_eq!(n.get(t.ops.name[0]), format!("{}a\"b\\", "x".repeat(pad)));
        }
    }

    #[test]
    fn truncated_and_damaged_files_warn() {
        let (t, _, _) = read(
            r#"[{"ph": "X", "cat": "cpu_op", "name": "a", "ts": "1.0", "dur": 1}, {"ph": "X", "cat": "cpu"#,
            TraceOptions::default(),
        );
        assert_eq!(t.ops.len(), 1);
        assert_eq!(t.warnings.len(), 1);
        let (t, _, _) = read(
            r#"[{"ph": "X" "cat": "cpu_op"}, {"ph": "X", "cat": "cpu_op", "name": "b", "ts": 2, "dur": 1}]"#,
            TraceOptions::default(),
        );
        assert_eq!(t.ops.len(), 1);
        assert_eq!(t.warnings.len(), 1);
        assert_eq!(t.warnings[0].byte, Some(12));
    }
}
