//! Streaming reader of `trace_view.json` (Chrome trace array, reaching gigabytes).
//!
//! Only what attribution needs is kept: `cpu_op` events (name, pid, tid, ts, dur, sequence number,
//! forward thread id, call stack interned once), `ProfilerStep#N` spans, and the task-queue
//! `enqueue`/`dequeue` events. Everything else is only *skipped*: the scanner finds where an event
//! ends (jumping through strings with `memchr`) and reads its `cat` value, nothing more.
//!
//! How it stays fast and bounded:
//! - the caller's thread reads the source in batches (a browser `File` can only be read on the
//!   worker that owns it); memory = one batch + the tail of an event cut by the batch end + what
//!   is kept;
//! - a batch is cut into pieces at *probable* event boundaries (`}, {`) and the pieces are
//!   scanned in parallel with rayon; each piece must end exactly where the next one starts, which
//!   proves the guess (a `}, {` inside a string would break that), otherwise the piece after it is
//!   scanned again from the proven position;
//! - numbers are read from their text: `ts` as a string or a number, exactly, to integer ns;
//!   ids above 2^53 as integers (never through `f64`).
//!
//! Tolerated damage: a trailing `,]` (torch_npu concatenation bug), a `{"traceEvents": [...]}`
//! wrapper, a file cut inside the last event (reported).

use super::csv_common::parse_scaled;
use super::Interner;
use crate::diag::Diagnostic;
use crate::source::Source;
use memchr::{memchr, memchr2};
use rayon::prelude::*;

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
    /// Bytes read from the source per batch.
    pub batch: usize,
    /// Pieces a batch is cut into for parallel scanning.
    pub pieces: usize,
}

impl Default for TraceOptions {
    fn default() -> Self {
        let threads = rayon::current_num_threads().max(1);
        TraceOptions {
            batch: (4 << 20) * threads.min(8),
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

/// What one piece scan found; ids are local to the piece until merged.
#[derive(Default)]
struct PieceOut {
    start: usize,
    /// Where the scan stopped: the first event start at or past the piece limit, the end of the
    /// array, or the start of an event cut by the buffer end.
    stop: usize,
    /// True when the scan stopped at an event cut by the end of the buffer.
    cut: bool,
    /// True when the closing `]` was reached.
    ended: bool,
    ops: Vec<RawOp>,
    steps: Vec<StepSpan>,
    queue: Vec<QueueEvent>,
    names: Interner,
    stacks: Interner,
    /// Raw (still escaped) call stack spans already interned, by a hash of a sample of their
    /// bytes: a repeated stack is recognised by one short hash and one `memcmp`, without decoding
    /// and hashing its kilobytes again. Values: (start, end, id) in this piece's buffer.
    raw_stacks: std::collections::HashMap<u64, Vec<(usize, usize, u32)>>,
    events: u64,
    /// (offset in buffer, message) of damage found; the scan resumed at the next boundary.
    errors: Vec<(usize, String)>,
    /// (offset in buffer, message) of damaged values in kept events, and of oversized events.
    notes: Vec<(usize, String)>,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|&c| is_ws(c)) {
        i += 1;
    }
    i
}

/// End (exclusive) of the string starting at `i` (`b[i] == '"'`); `None` if the buffer ends first.
fn scan_string(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    // Most strings (member names, numbers as text, short names) end within a few words: test 8
    // bytes at a time for `"` or `\` (SWAR), and hand long strings (call stacks) to `memchr`.
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
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
    loop {
        let k = j + memchr2(b'"', b'\\', b.get(j..)?)?;
        if b.get(k) == Some(&b'\\') {
            j = k + 2;
        } else {
            return Some(k + 1);
        }
    }
}

enum Scan {
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

/// End of the object or array starting at `i`: a tight loop over structural bytes that jumps
/// through strings with `memchr`. It does not validate the JSON inside (only kept events are
/// parsed fully, by [`scan_object`]).
fn skip_nested(b: &[u8], i: usize) -> Scan {
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
            1 => match scan_string(b, j) {
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
fn skip_plain(b: &[u8], mut j: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
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
fn skip_value(b: &[u8], i: usize) -> Scan {
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
fn scan_object(b: &[u8], i: usize, on: &mut dyn FnMut(&[u8], usize, usize)) -> Scan {
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Scan::Done(j + 1);
    }
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
        let vend = match skip_value(b, j) {
            Scan::Done(e) => e,
            other => return other,
        };
        on(key, j, vend);
        j = skip_ws(b, vend);
        match b.get(j) {
            None => return Scan::Cut,
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Scan::Done(j + 1),
            Some(_) => return Scan::Bad(j, "expected ',' or '}' after a member"),
        }
    }
}

/// The text of a scalar value span, quotes removed.
fn unquote(v: &[u8]) -> &[u8] {
    if v.len() >= 2 && v.first() == Some(&b'"') && v.last() == Some(&b'"') {
        v.get(1..v.len() - 1).unwrap_or(&[])
    } else {
        v
    }
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
fn us_of(v: &[u8]) -> Option<i64> {
    let t = std::str::from_utf8(unquote(v)).ok()?;
    parse_scaled(t, 3, 1)
}

/// A JSON string span decoded (escapes resolved); `None` for a non-string.
fn str_of(v: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
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
fn str_lossy(v: &[u8]) -> Option<(std::borrow::Cow<'_, str>, bool)> {
    if v.first() != Some(&b'"') {
        return None;
    }
    match str_of(v) {
        Some(s) => Some((s, false)),
        None => Some((String::from_utf8_lossy(unquote(v)), true)),
    }
}

/// After garbage between events (not inside one): the next `{` preceded (blanks aside) by `,`.
fn next_after_garbage(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    loop {
        let k = i + memchr(b'{', b.get(i..)?)?;
        let before = b.get(..k)?.iter().rposition(|&c| !is_ws(c));
        if before.and_then(|p| b.get(p)) == Some(&b',') {
            return Some(k);
        }
        i = k + 1;
    }
}

/// Next probable event start at or after `from`: a `{` preceded (blanks aside) by `,` and `}`.
fn next_boundary(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    loop {
        let k = i + memchr(b'{', b.get(i..)?)?;
        let mut p = k;
        let mut ok = false;
        while p > 0 {
            p -= 1;
            match b.get(p) {
                Some(&c) if is_ws(c) => continue,
                Some(b',') => {
                    let mut q = p;
                    while q > 0 {
                        q -= 1;
                        match b.get(q) {
                            Some(&c) if is_ws(c) => continue,
                            Some(b'}') => ok = true,
                            _ => {}
                        }
                        break;
                    }
                }
                _ => {}
            }
            break;
        }
        if ok {
            return Some(k);
        }
        i = k + 1;
    }
}

/// Scans events of `b` starting at `start` until an event starts at or past `limit`.
fn scan_piece(b: &[u8], start: usize, limit: usize) -> PieceOut {
    let mut out = PieceOut {
        start,
        ..PieceOut::default()
    };
    let mut i = start;
    let mut cands = Cands::new();
    loop {
        // Between events: blanks, commas (a trailing `,]` included), the opening `[`.
        while let Some(&c) = b.get(i) {
            if is_ws(c) || c == b',' || c == b'[' {
                i += 1;
            } else {
                break;
            }
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
            Some(b'{') => match scan_or_skip(b, i, &mut out, &mut cands) {
                Scan::Done(e) => {
                    out.events += 1;
                    if e - i > MAX_EVENT_BYTES {
                        // Whole in this buffer, but too large to be real (never kept, see
                        // `scan_event`); said the same way as when it is skipped in a stream.
                        out.notes.push((i, oversized(e - i)));
                    }
                    i = e;
                }
                Scan::Cut => {
                    out.cut = true;
                    out.stop = i;
                    return out;
                }
                Scan::Bad(at, msg) => {
                    out.errors.push((at, msg.to_string()));
                    match next_boundary(b, at + 1) {
                        Some(n) => i = n,
                        None => {
                            // No boundary after the damage in this buffer: treat the rest as cut,
                            // so the next batch (with more bytes) tries again from here.
                            out.cut = true;
                            out.stop = b.len();
                            return out;
                        }
                    }
                }
            },
            Some(_) => {
                out.errors
                    .push((i, "expected '{' (an event) or ']'".to_string()));
                match next_after_garbage(b, i + 1) {
                    Some(n) => i = n,
                    None => {
                        out.cut = true;
                        out.stop = b.len();
                        return out;
                    }
                }
            }
            None => {
                out.stop = i;
                return out;
            }
        }
    }
}

/// Where the next mentions of the kept categories are, found once and reused for every event up
/// to them (one search pass over the piece instead of one per event).
struct Cands {
    cpu: usize,
    queue: usize,
}

impl Cands {
    /// Not searched yet.
    const NOT_YET: usize = usize::MAX - 1;

    fn new() -> Self {
        Cands {
            cpu: Self::NOT_YET,
            queue: Self::NOT_YET,
        }
    }

    /// True when `b[i..end]` mentions `"cpu_op"` or `queue"`.
    fn hit(&mut self, b: &[u8], i: usize, end: usize) -> bool {
        let f = finders();
        let rest = b.get(i..).unwrap_or(&[]);
        if self.cpu == Self::NOT_YET || self.cpu < i {
            self.cpu = f.0.find(rest).map_or(usize::MAX, |k| i + k);
        }
        if self.queue == Self::NOT_YET || self.queue < i {
            self.queue = f.1.find(rest).map_or(usize::MAX, |k| i + k);
        }
        self.cpu < end || self.queue < end
    }
}

/// Finds the end of the event at `i`; parses it fully only if its bytes mention one of the kept
/// categories (most events do not, and are skipped without reading their members).
fn scan_or_skip(b: &[u8], i: usize, out: &mut PieceOut, cands: &mut Cands) -> Scan {
    // torch_npu writes `cat` before `args`, so in a kept event the category shows within its
    // first few hundred bytes: parse such an event directly instead of skipping it first and
    // parsing it again (a wrong guess only costs a full parse of one small event).
    if cands.hit(b, i, i.saturating_add(256)) {
        return scan_event(b, i, out);
    }
    let end = match skip_nested(b, i) {
        Scan::Done(e) => e,
        other => return other,
    };
    if cands.hit(b, i, end) {
        scan_event(b, i, out)
    } else {
        Scan::Done(end)
    }
}

/// Substring finders of the kept categories: `"cpu_op"`, and `queue"` (`enqueue`, `dequeue`).
fn finders() -> &'static (
    memchr::memmem::Finder<'static>,
    memchr::memmem::Finder<'static>,
) {
    static F: std::sync::OnceLock<(
        memchr::memmem::Finder<'static>,
        memchr::memmem::Finder<'static>,
    )> = std::sync::OnceLock::new();
    F.get_or_init(|| {
        (
            memchr::memmem::Finder::new(b"\"cpu_op\""),
            memchr::memmem::Finder::new(b"queue\""),
        )
    })
}

/// A hash of the length and three 32-byte windows (start, middle, end) of `raw`.
fn sample_hash(raw: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let n = raw.len();
    n.hash(&mut h);
    let w = |a: usize| raw.get(a..(a + 32).min(n)).unwrap_or(&[]);
    w(0).hash(&mut h);
    w(n / 2).hash(&mut h);
    w(n.saturating_sub(32)).hash(&mut h);
    h.finish()
}

/// The local id of the call stack whose JSON string is `b[span]`, decoding it only the first time.
fn intern_stack(b: &[u8], span: (usize, usize), out: &mut PieceOut) -> u32 {
    let raw = b.get(span.0..span.1).unwrap_or(&[]);
    let key = sample_hash(raw);
    if let Some(seen) = out.raw_stacks.get(&key) {
        for &(s, e, id) in seen {
            if b.get(s..e) == Some(raw) {
                return id;
            }
        }
    }
    let id = match str_lossy(raw) {
        Some((s, bad)) if !s.is_empty() => {
            if bad {
                out.notes.push((span.0, BAD_STRING.to_string()));
            }
            out.stacks.intern(&s)
        }
        _ => 0,
    };
    out.raw_stacks
        .entry(key)
        .or_default()
        .push((span.0, span.1, id));
    id
}

/// The note for a kept string that did not decode.
const BAD_STRING: &str = "a string that is not valid UTF-8 or has a bad escape; kept with the \
                          bad bytes shown as U+FFFD";

/// Scans one event at `i`, keeping it if it is a `cpu_op` or a queue event.
fn scan_event(b: &[u8], i: usize, out: &mut PieceOut) -> Scan {
    let mut name = (0, 0);
    let mut cat = (0, 0);
    let mut ph = (0, 0);
    let mut pid = (0, 0);
    let mut tid = (0, 0);
    let mut ts = (0, 0);
    let mut dur = (0, 0);
    let mut args = (0, 0);
    let r = scan_object(b, i, &mut |k, s, e| match k {
        b"name" => name = (s, e),
        b"cat" => cat = (s, e),
        b"ph" => ph = (s, e),
        b"pid" => pid = (s, e),
        b"tid" => tid = (s, e),
        b"ts" => ts = (s, e),
        b"dur" => dur = (s, e),
        b"args" => args = (s, e),
        _ => {}
    });
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
    let Some(t) = us_of(span(ts)) else {
        out.errors.push((
            ts.0.max(i),
            "event without a valid \"ts\"; event skipped".to_string(),
        ));
        return Scan::Done(end);
    };
    let d = us_of(span(dur)).unwrap_or(0).max(0);
    let name_s = match str_lossy(span(name)) {
        Some((s, bad)) => {
            if bad {
                out.notes.push((name.0, BAD_STRING.to_string()));
            }
            s
        }
        None => Default::default(),
    };
    let mut seq = -1i64;
    let mut fwd = 0i64;
    let mut stack = 0u32;
    let mut corr = None;
    if args.1 > args.0 && b.get(args.0) == Some(&b'{') {
        let mut stack_span = (0, 0);
        let _ = scan_object(b, args.0, &mut |k, s, e| match k {
            b"Sequence number" => seq = int_of(span((s, e))).unwrap_or(-1),
            b"Fwd thread id" => fwd = int_of(span((s, e))).unwrap_or(0),
            b"Call stack" => stack_span = (s, e),
            b"correlation_id" => corr = u64_of(span((s, e))),
            _ => {}
        });
        if stack_span.1 > stack_span.0 {
            stack = intern_stack(b, stack_span, out);
        }
    }
    let name_id = out.names.intern(&name_s);
    let tid_v = int_of(span(tid)).unwrap_or(0);
    if kind == 0 {
        out.ops.push(RawOp {
            name: name_id,
            pid: int_of(span(pid)).unwrap_or(0),
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

/// Scans a whole buffer from `start`: cuts it into `pieces`, scans them in parallel, and checks
/// that each piece starts where the previous one stopped (re-scanning when it does not).
fn scan_buffer(b: &[u8], start: usize, pieces: usize, min_split: usize) -> Vec<PieceOut> {
    let len = b.len();
    let mut starts = vec![start];
    if pieces > 1 && len > start + min_split {
        let step = (len - start) / pieces;
        for k in 1..pieces {
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
    let mut outs: Vec<PieceOut> = bounds
        .par_iter()
        .map(|&(s, lim)| scan_piece(b, s, lim))
        .collect();
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
            outs.push(scan_piece(b, stop, usize::MAX));
            break;
        }
        k += 1;
    }
    outs
}

/// Largest single trace event held in memory, in bytes (and largest part of the file before the
/// event array). Real events are at most a few KiB (long call stacks); a bigger one is skipped in a
/// streaming pass that keeps none of it, with a warning.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// The warning for an event larger than [`MAX_EVENT_BYTES`].
fn oversized(len: usize) -> String {
    format!("event of {len} bytes, more than the {MAX_EVENT_BYTES} bytes one trace event may have; skipped")
}

/// Warnings listed one by one per trace file; further ones are counted in one last warning.
pub const MAX_WARNINGS: usize = 100;

/// Finds the end of a JSON value that started at a `{` or `[` given in pieces, keeping only its
/// nesting depth and string state (to skip an event too large to hold).
#[derive(Debug, Default)]
struct Skipper {
    depth: usize,
    in_str: bool,
    esc: bool,
}

impl Skipper {
    /// Feeds the next bytes; `Some(i)` when the value ends just before `b[i]`.
    fn feed(&mut self, b: &[u8]) -> Option<usize> {
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

/// Reads up to `want` bytes at `off` into `dst[..want]` (grown as needed); returns how many.
fn read_into(
    src: &dyn Source,
    off: u64,
    store: &mut Vec<u8>,
    at: usize,
    want: usize,
) -> Result<usize, Diagnostic> {
    if store.len() < at + want {
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

/// Like [`read_into`], but takes the batch prefetched at `off` while the previous one was scanned,
/// if there is one.
fn fill(
    src: &dyn Source,
    off: u64,
    store: &mut Vec<u8>,
    at: usize,
    want: usize,
    prefetched: &mut Option<Result<Vec<u8>, crate::source::SourceError>>,
) -> Result<usize, Diagnostic> {
    let Some(pre) = prefetched.take() else {
        return read_into(src, off, store, at, want);
    };
    let pre = pre?;
    let got = pre.len().min(want);
    if store.len() < at + got {
        store.resize(at + got, 0);
    }
    if let (Some(dst), Some(bytes)) = (store.get_mut(at..at + got), pre.get(..got)) {
        dst.copy_from_slice(bytes);
    }
    Ok(got)
}

/// Warnings of one trace file, at most [`MAX_WARNINGS`] listed.
struct TraceWarnings {
    file: String,
    list: Vec<Diagnostic>,
    more: u64,
    first_more: u64,
}

impl TraceWarnings {
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
    mut progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<Trace, Diagnostic> {
    let file = src.name().to_string();
    let total = src.len();
    let mut trace = Trace::default();
    let mut warn = TraceWarnings {
        file: file.clone(),
        list: Vec::new(),
        more: 0,
        first_more: 0,
    };
    // Any batch size works (fuzzing uses a few bytes, to cut events everywhere); buffers smaller
    // than a piece's worth are not split.
    let batch = opts.batch.max(1);
    let min_split = (batch / opts.pieces.max(1)).clamp(1, 64 * 1024);
    // `store[..filled]` holds the bytes being scanned; its length only grows (to the largest
    // batch plus carried tail), so no batch pays for zeroing memory again.
    let mut store: Vec<u8> = Vec::new();
    let mut filled = 0usize;
    let mut buf_off: u64 = 0; // file offset of store[0]
    let mut read_off: u64 = 0;
    let mut first = true;
    let mut ended = false;
    let mut name_map: Vec<u32> = Vec::new();
    let mut stack_map: Vec<u32> = Vec::new();
    let batch_len = |read_off: u64| {
        usize::try_from(total.saturating_sub(read_off))
            .unwrap_or(usize::MAX)
            .min(batch)
    };
    // With a thread pool, the next batch is read on this thread while the pool scans the current
    // one: a `Source` need not be `Send` (a browser `File` can only be read on the thread that
    // owns it), so reading stays here and only the scan moves. Every later read goes through
    // `fill`, which takes the prefetched bytes first, so they are always used at their offset.
    let pipelined = rayon::current_num_threads() > 1;
    let mut prefetched: Option<Result<Vec<u8>, crate::source::SourceError>> = None;
    'batches: while !ended {
        let got = fill(
            src,
            read_off,
            &mut store,
            filled,
            batch_len(read_off),
            &mut prefetched,
        )?;
        filled += got;
        let buf: &[u8] = store.get(..filled).unwrap_or(&[]);
        let eof = got == 0;
        read_off += got as u64;
        let mut start = 0;
        if first {
            let i = skip_ws(buf, 0);
            match buf.get(i) {
                Some(b'[') => start = i + 1,
                Some(b'{') => {
                    // `{"traceEvents": [ … ]}` (Kineto / chrome export): start inside the array.
                    let key = memchr::memmem::find(buf, b"\"traceEvents\"");
                    match key.and_then(|k| memchr(b'[', buf.get(k..)?).map(|p| k + p)) {
                        Some(p) => start = p + 1,
                        None if !eof && buf.len() <= MAX_EVENT_BYTES => continue,
                        None => {
                            let what = if eof {
                                "found an object without a \"traceEvents\" array".to_string()
                            } else {
                                format!(
                                    "found an object with no \"traceEvents\" array in its first \
                                     {MAX_EVENT_BYTES} bytes"
                                )
                            };
                            return Err(Diagnostic::error(
                                &file,
                                format!(
                                    "expected a JSON array of trace events ('[' first, or a \
                                     {{\"traceEvents\": [...]}} object): {what}"
                                ),
                            )
                            .at_byte(buf_off + i as u64));
                        }
                    }
                }
                None if !eof => {
                    // Only blanks so far: drop them (a file of blanks must not fill memory).
                    buf_off += filled as u64;
                    filled = 0;
                    continue;
                }
                None => {
                    return Err(Diagnostic::error(
                        &file,
                        "empty file: expected a JSON array of trace events",
                    ))
                }
                Some(&c) => {
                    return Err(Diagnostic::error(
                        &file,
                        format!(
                            "expected a JSON array of trace events ('[' first), found {}",
                            describe_byte(c)
                        ),
                    )
                    .at_byte(buf_off + i as u64))
                }
            }
            first = false;
        }
        let next_want = batch_len(read_off);
        let outs = if pipelined && !eof && next_want > 0 {
            let mut outs = Vec::new();
            let mut pre = None;
            rayon::in_place_scope(|scope| {
                scope.spawn(|_| outs = scan_buffer(buf, start, opts.pieces.max(1), min_split));
                pre = Some(src.read_range(read_off, next_want));
            });
            prefetched = pre;
            outs
        } else {
            scan_buffer(buf, start, opts.pieces.max(1), min_split)
        };
        let mut resume = buf.len();
        for out in outs {
            // Merge local ids into the caller's interners.
            name_map.clear();
            name_map.extend((0..out.names.len()).map(|i| names.intern(out.names.get(i as u32))));
            stack_map.clear();
            stack_map
                .extend((0..out.stacks.len()).map(|i| stacks.intern(out.stacks.get(i as u32))));
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
            trace.events += out.events;
            for (at, msg) in &out.errors {
                warn.push(
                    buf_off + *at as u64,
                    format!("invalid JSON: {msg}; skipped to the next event"),
                );
            }
            for (at, msg) in &out.notes {
                warn.push(buf_off + *at as u64, msg.clone());
            }
            if out.ended {
                ended = true;
            }
            resume = out.stop;
            if out.cut {
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
                if let Some(e) = skipper.feed(store.get(from..filled).unwrap_or(&[])) {
                    let end = from + e;
                    trace.events += 1;
                    warn.push(
                        event_at,
                        oversized((buf_off + end as u64 - event_at) as usize),
                    );
                    store.copy_within(end..filled, 0);
                    filled -= end;
                    buf_off += end as u64;
                    continue 'batches;
                }
                buf_off += filled as u64;
                from = 0;
                let got = fill(
                    src,
                    read_off,
                    &mut store,
                    0,
                    batch_len(read_off),
                    &mut prefetched,
                )?;
                read_off += got as u64;
                filled = got;
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
        store.copy_within(keep..filled, 0);
        filled -= keep;
        buf_off += keep as u64;
    }
    trace.bytes = read_off;
    trace.warnings = warn.finish();
    Ok(trace)
}

/// A byte as shown in a message: the character, or its value when not printable.
fn describe_byte(c: u8) -> String {
    if c.is_ascii_graphic() {
        format!("'{}'", char::from(c))
    } else {
        format!("byte 0x{c:02x}")
    }
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
