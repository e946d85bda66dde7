//! A small pickle machine that reads a snapshot without building a value tree of the file.
//!
//! Input: a [`Source`] holding a pickle of protocol 2 to 5 made of built-in types only (dict, list,
//! tuple, str, bytes, int, float, bool, None). Output: the calls it makes on the [`Builder`], which
//! turns each container into what the analysis keeps the moment it is complete.
//!
//! Why this shape: a snapshot of 1 GB holds millions of small dicts, and a generic tree of them
//! would take several times the file size. Python's pickler writes a container first (`EMPTY_DICT`,
//! `EMPTY_LIST`), memoizes it, then its items (`SETITEM(S)`/`APPEND(S)`), so when a container is
//! created the stack tells where it will go: the builder picks its *kind* from its parent's kind and
//! key ([`Builder::predict`]), and each item is folded into its parent as soon as the parent
//! receives it. Strings are interned, frames and stacks too, so the memo (which a pickle may
//! reference at any time) holds 4-byte handles, not values.
//!
//! Safety: nothing is imported or called. Every opcode that names a class or calls something
//! (`GLOBAL`, `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`, `NEWOBJ`, `NEWOBJ_EX`, `EXT1/2/4`,
//! `PERSID`, `BINPERSID`, buffers) is refused with its name and byte offset. Declared lengths are
//! checked against the bytes that remain, the stack, the nesting and the memo are bounded, strings
//! past [`MAX_STRING`] are skipped, and no code path recurses on the input's nesting.
//!
//! Why one file of ~1,110 lines: one opcode interpreter (the input buffer, the memo in pages and
//! the dispatch loop over about 60 opcodes with their bounds checks); its refusals and limits are
//! easier to audit in one place.

use super::batches::Batches;
use super::build::Builder;
use crate::diag::Diagnostic;

/// Errors travel boxed: the hot paths return `Result`s, and a small error keeps them cheap.
pub(crate) type Fail = Box<Diagnostic>;
use crate::source::{read_size, Source, DEFAULT_CHUNK, STOP_CHECK_BYTES};

/// Longest string kept (longer ones are skipped and counted): a frame name is a few KiB at most.
pub const MAX_STRING: usize = 1 << 20;
/// Most values the pickle stack may hold at once (Python's pickler needs about 1,000 per level).
pub const MAX_STACK: usize = 1 << 20;
/// Deepest nesting of marks.
pub const MAX_MARKS: usize = 4096;
/// How far past the current memo size a `BINPUT` index may point.
pub const MAX_MEMO_GAP: usize = 1 << 20;

/// One value on the pickle stack. Containers under construction are `Obj` (a slot of the
/// builder); finished frames and frame lists are their interned ids.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Val {
    /// A `MARK` on the stack.
    Mark,
    /// Python `None`.
    None,
    /// A bool.
    Bool(bool),
    /// An integer that fits in `i64`.
    Int(i64),
    /// An integer that does not fit in `i64`.
    BigInt,
    /// A float.
    Float(f64),
    /// An interned string.
    Str(u32),
    /// A string longer than [`MAX_STRING`] (not kept).
    LongStr,
    /// Bytes or a bytearray (not kept).
    Bytes,
    /// A 2-tuple of small integers (a segment's pool id).
    Pair(i32, i32),
    /// A container under construction: builder slot.
    Obj(u32),
    /// A finished frame dict: frame id.
    Frame(u32),
    /// A finished list of frames: stack id.
    Stack(u32),
    /// A value not kept (an unknown field, another tuple, a set, a consumed record).
    Skipped,
}

impl Val {
    /// What the value is, in words, for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Val::Mark => "a mark",
            Val::None => "None",
            Val::Bool(_) => "a bool",
            Val::Int(_) => "an integer",
            Val::BigInt => "an integer beyond 64 bits",
            Val::Float(_) => "a float",
            Val::Str(_) => "a string",
            Val::LongStr => "a string longer than 1 MiB",
            Val::Bytes => "bytes",
            Val::Pair(..) => "a tuple",
            Val::Obj(_) => "a container",
            Val::Frame(_) => "a frame",
            Val::Stack(_) => "a list of frames",
            Val::Skipped => "an unsupported value",
        }
    }
}

/// Memo handles in pages of 64 Ki entries: the memo of a 1 GB snapshot holds tens of millions
/// of entries, and growing one vector by doubling would need its old and new copies at once.
#[derive(Default)]
struct Slots {
    pages: Vec<Box<[u32]>>,
    len: usize,
}

const PAGE_BITS: u32 = 16;
const PAGE: usize = 1 << PAGE_BITS;

impl Slots {
    #[inline]
    fn get(&self, idx: usize) -> Option<&u32> {
        if idx >= self.len {
            return None;
        }
        self.pages
            .get(idx >> PAGE_BITS)
            .and_then(|p| p.get(idx & (PAGE - 1)))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn set(&mut self, idx: usize, h: u32, fill: u32) {
        while (idx >> PAGE_BITS) >= self.pages.len() {
            self.pages.push(vec![fill; PAGE].into_boxed_slice());
        }
        if idx >= self.len {
            self.len = idx + 1;
        }
        self.pages[idx >> PAGE_BITS][idx & (PAGE - 1)] = h;
    }
}

/// The memo as 4-byte handles: tag in the top 3 bits, payload below; anything that does not fit
/// goes to a side table.
#[derive(Default)]
pub(crate) struct Memo {
    slots: Slots,
    side: Vec<Val>,
    /// How often an entry holding a frame was overwritten (the frame-list cache's validity).
    frame_overwrites: u64,
}

const TAG_SHIFT: u32 = 29;
const PAYLOAD: u32 = (1 << TAG_SHIFT) - 1;
const T_SKIPPED: u32 = 0;
const T_STR: u32 = 1;
const T_FRAME: u32 = 2;
const T_STACK: u32 = 3;
const T_OBJ: u32 = 4;
const T_CONST: u32 = 5;
const T_SIDE: u32 = 6;

impl Memo {
    fn encode(&mut self, v: Val) -> u32 {
        let small = |tag: u32, id: u32| (id <= PAYLOAD).then_some((tag << TAG_SHIFT) | id);
        let packed = match v {
            Val::Skipped | Val::Mark => Some(T_SKIPPED << TAG_SHIFT),
            Val::Str(id) => small(T_STR, id),
            Val::Frame(id) => small(T_FRAME, id),
            Val::Stack(id) => small(T_STACK, id),
            Val::Obj(slot) => small(T_OBJ, slot),
            Val::None => small(T_CONST, 0),
            Val::Bool(false) => small(T_CONST, 1),
            Val::Bool(true) => small(T_CONST, 2),
            Val::Bytes => small(T_CONST, 3),
            Val::LongStr => small(T_CONST, 4),
            Val::BigInt => small(T_CONST, 5),
            _ => None,
        };
        match packed {
            Some(p) => p,
            None => {
                let i = self.side.len() as u32;
                if i > PAYLOAD {
                    return T_SKIPPED << TAG_SHIFT;
                }
                self.side.push(v);
                (T_SIDE << TAG_SHIFT) | i
            }
        }
    }

    #[inline]
    fn decode(&self, h: u32) -> Val {
        let id = h & PAYLOAD;
        match h >> TAG_SHIFT {
            T_STR => Val::Str(id),
            T_FRAME => Val::Frame(id),
            T_STACK => Val::Stack(id),
            T_OBJ => Val::Obj(id),
            T_CONST => match id {
                0 => Val::None,
                1 => Val::Bool(false),
                2 => Val::Bool(true),
                3 => Val::Bytes,
                4 => Val::LongStr,
                _ => Val::BigInt,
            },
            T_SIDE => self.side.get(id as usize).copied().unwrap_or(Val::Skipped),
            _ => Val::Skipped,
        }
    }

    fn get(&self, idx: usize) -> Option<Val> {
        self.slots.get(idx).map(|&h| self.decode(h))
    }

    /// Stores `v` at `idx`.
    pub(crate) fn set(&mut self, idx: usize, v: Val) {
        let h = self.encode(v);
        if let Some(&old) = self.slots.get(idx) {
            if old >> TAG_SHIFT == T_FRAME && old != h {
                self.frame_overwrites += 1;
            }
        }
        self.slots.set(idx, h, T_SKIPPED << TAG_SHIFT);
    }
}

/// Buffered forward reading of a [`Source`] with the byte offset of every position.
struct Input<'a> {
    src: &'a dyn Source,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    len: u64,
}

impl<'a> Input<'a> {
    fn new(src: &'a dyn Source) -> Self {
        Input {
            src,
            buf: Vec::new(),
            pos: 0,
            end: 0,
            base: 0,
            len: src.len(),
        }
    }

    #[inline]
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.offset())
    }

    /// Makes `n` bytes available at `pos`, or fails with a truncation message.
    #[inline]
    fn need(&mut self, n: usize, what: &str) -> Result<(), Fail> {
        if self.end - self.pos >= n {
            return Ok(());
        }
        self.refill(n, what)
    }

    #[cold]
    fn refill(&mut self, n: usize, what: &str) -> Result<(), Fail> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.base += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        // A chunk at a time, but never more than the file holds (small files stay small).
        let left = usize::try_from(self.len.saturating_sub(self.base)).unwrap_or(usize::MAX);
        let want = n.max(read_size(self.src, DEFAULT_CHUNK).min(left));
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        while self.end < n {
            let at = self.base + self.end as u64;
            let got = self
                .src
                .read_at(at, &mut self.buf[self.end..])
                .map_err(|e| Box::new(Diagnostic::from(e)))?;
            if got == 0 {
                return Err(Box::new(
                    Diagnostic::error(
                        self.src.name(),
                        format!(
                            "the file ends inside {what}: {n} bytes needed, {} left (truncated file?)",
                            self.end
                        ),
                    )
                    .at_byte(self.base),
                ));
            }
            self.end += got;
        }
        Ok(())
    }

    #[inline]
    fn u8(&mut self, what: &str) -> Result<u8, Fail> {
        self.need(1, what)?;
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(b)
    }

    #[inline]
    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Fail> {
        self.need(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        Ok(a)
    }

    /// Borrows the next `n` bytes (n ≤ [`MAX_STRING`]).
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], Fail> {
        self.need(n, what)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Skips `n` bytes without keeping them (the opcode at `at` declared them).
    fn skip(&mut self, n: u64, what: &str, at: u64) -> Result<(), Fail> {
        let in_buf = (self.end - self.pos) as u64;
        if n <= in_buf {
            self.pos += n as usize;
            return Ok(());
        }
        if n > self.remaining() {
            return Err(self.truncated(n, what, at));
        }
        self.base = self.offset() + n;
        self.pos = 0;
        self.end = 0;
        Ok(())
    }

    fn truncated(&self, n: u64, what: &str, at: u64) -> Fail {
        Box::new(
            Diagnostic::error(
                self.src.name(),
                format!(
                "{what} declares {n} bytes but only {} remain in the file (truncated or corrupt)",
                self.remaining()
            ),
            )
            .at_byte(at),
        )
    }

    /// The file's bytes from offset `at` for a message, quoted: at most 15 (a pickle is binary,
    /// and 15 bytes of `\xNN` fill a short quote), read from the source again: the buffer may no
    /// longer hold them. The bytes of the file after them are counted, so that the quote does
    /// not look like the whole rest of the file.
    #[cold]
    fn shown_at(&self, at: u64) -> String {
        let mut b = [0u8; 15];
        let n = self.src.read_at(at, &mut b).unwrap_or(0);
        let after = self.len.saturating_sub(at.saturating_add(n as u64));
        crate::quote::quote_part(b.get(..n).unwrap_or(&[]), crate::quote::SHORT, after)
    }

    /// One text line (for the refused text opcodes' messages), at most 256 bytes of it, and
    /// whether it ended (a line end or the file's end) within them.
    fn line(&mut self) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        while out.len() < 256 {
            match self.u8("a line") {
                Ok(b'\n') | Err(_) => return (out, true),
                Ok(b) => out.push(b),
            }
        }
        (out, false)
    }
}

/// Opcode names, for messages.
fn op_name(op: u8) -> &'static str {
    match op {
        b'(' => "MARK",
        b'.' => "STOP",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        b'F' => "FLOAT",
        b'I' => "INT",
        b'J' => "BININT",
        b'K' => "BININT1",
        b'L' => "LONG",
        b'M' => "BININT2",
        b'N' => "NONE",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        b'R' => "REDUCE",
        b'S' => "STRING",
        b'T' => "BINSTRING",
        b'U' => "SHORT_BINSTRING",
        b'V' => "UNICODE",
        b'X' => "BINUNICODE",
        b'a' => "APPEND",
        b'b' => "BUILD",
        b'c' => "GLOBAL",
        b'd' => "DICT",
        b'}' => "EMPTY_DICT",
        b'e' => "APPENDS",
        b'g' => "GET",
        b'h' => "BINGET",
        b'i' => "INST",
        b'j' => "LONG_BINGET",
        b'l' => "LIST",
        b']' => "EMPTY_LIST",
        b'o' => "OBJ",
        b'p' => "PUT",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        b's' => "SETITEM",
        b't' => "TUPLE",
        b')' => "EMPTY_TUPLE",
        b'u' => "SETITEMS",
        b'G' => "BINFLOAT",
        0x80 => "PROTO",
        0x81 => "NEWOBJ",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        0x88 => "NEWTRUE",
        0x89 => "NEWFALSE",
        0x8a => "LONG1",
        0x8b => "LONG4",
        b'B' => "BINBYTES",
        b'C' => "SHORT_BINBYTES",
        0x8c => "SHORT_BINUNICODE",
        0x8d => "BINUNICODE8",
        0x8e => "BINBYTES8",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        0x92 => "NEWOBJ_EX",
        0x93 => "STACK_GLOBAL",
        0x94 => "MEMOIZE",
        0x95 => "FRAME",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => "",
    }
}

/// The machine: stack, marks and memo over an [`Input`], driving a [`Builder`].
pub(crate) struct Machine<'a> {
    input: Input<'a>,
    stack: Vec<Val>,
    marks: Vec<usize>,
    memo: Memo,
    /// Items of the batch being attached (reused, so batches allocate nothing).
    scratch: Vec<Val>,
    /// Frame ids of the frame-list batch being read (reused).
    frame_ids: Vec<u32>,
    /// The pickle protocol from the `PROTO` opcode.
    pub protocol: u8,
    /// The offset at which the next opcode asks whether the load was stopped
    /// ([`Source::check_stop`], every [`STOP_CHECK_BYTES`]); never for a source that cannot be
    /// stopped, so files on disk and bytes pay one comparison per opcode and nothing else.
    next_check: u64,
}

impl<'a> Machine<'a> {
    /// A machine over `src`.
    pub fn new(src: &'a dyn Source) -> Self {
        Machine {
            input: Input::new(src),
            stack: Vec::with_capacity(1024),
            marks: Vec::with_capacity(64),
            memo: Memo::default(),
            scratch: Vec::with_capacity(1024),
            frame_ids: Vec::with_capacity(512),
            protocol: 0,
            next_check: if src.may_stop() {
                STOP_CHECK_BYTES
            } else {
                u64::MAX
            },
        }
    }

    /// Byte offset of the next opcode (after `STOP`: the end of the pickle).
    pub fn offset(&self) -> u64 {
        self.input.offset()
    }

    /// Asks the source whether the load was stopped (at `at`, the opcode's offset); its error
    /// ends the pickle as a failed read would, never with what was read so far.
    #[cold]
    fn check_stop(&mut self, at: u64) -> Result<(), Fail> {
        self.input
            .src
            .check_stop(at)
            .map_err(|e| Box::new(Diagnostic::from(e)))?;
        self.next_check = at.saturating_add(STOP_CHECK_BYTES);
        Ok(())
    }

    #[cold]
    fn err(&self, at: u64, msg: impl Into<String>) -> Fail {
        Box::new(Diagnostic::error(self.input.src.name(), msg).at_byte(at))
    }

    #[inline(always)]
    fn push(&mut self, v: Val, at: u64) -> Result<(), Fail> {
        if self.stack.len() >= MAX_STACK {
            return Err(self.err(
                at,
                format!("more than {MAX_STACK} values on the pickle stack at once: not a snapshot pickle"),
            ));
        }
        self.stack.push(v);
        Ok(())
    }

    #[inline]
    fn pop(&mut self, op: u8, at: u64) -> Result<Val, Fail> {
        let floor = self.marks.last().map_or(0, |&m| m + 1);
        if self.stack.len() <= floor {
            return Err(self.err(
                at,
                format!(
                    "{} finds no value on the stack (corrupt pickle)",
                    op_name(op)
                ),
            ));
        }
        Ok(self.stack.pop().unwrap_or(Val::Skipped))
    }

    fn pop_mark(&mut self, op: u8, at: u64) -> Result<usize, Fail> {
        self.marks.pop().ok_or_else(|| {
            self.err(
                at,
                format!("{} without a MARK before it (corrupt pickle)", op_name(op)),
            )
        })
    }

    #[cold]
    fn refused(&mut self, op: u8, at: u64) -> Fail {
        let what = match op {
            b'c' | b'i' => {
                // `module.name` from the lines `module` and `name`. A line cut at its 256 bytes
                // goes on in the file: the quote counts the bytes after it (the `.` stands for
                // the line end it replaces, so the count is the file's).
                let (mut named, mut ended) = self.input.line();
                if ended {
                    named.push(b'.');
                    let (name, name_ended) = self.input.line();
                    named.extend(name);
                    ended = name_ended;
                }
                let after = if ended { 0 } else { self.input.remaining() };
                format!(
                    " naming {}",
                    crate::quote::quote_part(&named, crate::quote::SHORT, after)
                )
            }
            0x93 => {
                let n = self.stack.len();
                match (n >= 2).then(|| (self.stack[n - 2], self.stack[n - 1])) {
                    Some((Val::Str(_), Val::Str(_))) => " naming a class".to_string(),
                    _ => String::new(),
                }
            }
            _ => String::new(),
        };
        self.err(
            at,
            format!(
                "opcode {} (0x{op:02x}){what}: this pickle refers to a Python class or calls code; a memory \
                 snapshot holds only dicts, lists, tuples, strings and numbers, and memlens never imports \
                 or calls anything",
                op_name(op)
            ),
        )
    }

    fn memo_get(&mut self, b: &mut Builder, idx: usize, op: u8, at: u64) -> Result<Val, Fail> {
        let v = self.memo.get(idx).ok_or_else(|| {
            self.err(
                at,
                format!(
                    "{} refers to memo entry {idx}, which was never stored (corrupt pickle)",
                    op_name(op)
                ),
            )
        })?;
        Ok(match v {
            // A container still being built is referenced again: frames and frame lists are
            // interned as they stand; any other record cannot be shared.
            Val::Obj(slot) => b.provisional(slot, at),
            v => v,
        })
    }

    /// The batch of a frame list is nearly always `MARK`, references to frame dicts read before,
    /// `APPENDS`: this reads such a batch straight from the buffer into the list. At anything
    /// else (a new frame dict, another value, the end of the buffer) it leaves the frames read so
    /// far on the stack and the main loop goes on as usual.
    fn frame_batch(&mut self, b: &mut Builder, slot: u32) {
        // The run's extent (memo references up to APPENDS), then the cache of runs read before.
        let start = self.input.pos;
        let buf = &self.input.buf[..self.input.end];
        let mut p = start;
        let run_end = loop {
            match buf.get(p) {
                Some(b'h') => p += 2,
                Some(b'j') => p += 5,
                Some(b'e') => break Some(p),
                _ => break None,
            }
        };
        let mut key = None;
        if let Some(e) = run_end {
            let batches = b.batches();
            batches.check(self.memo.frame_overwrites);
            let h = Batches::hash(&buf[start..e]);
            if let Some(r) = batches.find(h, &buf[start..e]) {
                self.input.pos = e + 1;
                self.marks.pop();
                self.stack.pop();
                b.extend_from_run(slot, r);
                return;
            }
            key = Some((h, e));
        }
        let mut ids = std::mem::take(&mut self.frame_ids);
        ids.clear();
        let mut pos = self.input.pos;
        let end = self.input.end;
        let buf = &self.input.buf;
        let slots = &self.memo.slots;
        let done = loop {
            let (idx, len) = match buf.get(pos..end) {
                Some([b'h', i, ..]) => (*i as usize, 2),
                Some([b'j', a, b1, c, d, ..]) => {
                    (u32::from_le_bytes([*a, *b1, *c, *d]) as usize, 5)
                }
                Some([b'e', ..]) => break true,
                _ => break false,
            };
            match slots.get(idx) {
                Some(&h) if h >> TAG_SHIFT == T_FRAME => ids.push(h & PAYLOAD),
                _ => break false,
            }
            pos += len;
        };
        if done {
            let cached = key
                .filter(|&(_, e)| e == pos)
                .and_then(|(h, e)| b.batches().insert(h, &buf[start..e], &ids));
            // APPENDS: the mark and the batch are consumed here.
            self.input.pos = pos + 1;
            self.marks.pop();
            self.stack.pop();
            match cached {
                Some(r) => b.extend_from_run(slot, r),
                None => b.extend_frame_ids(slot, &ids),
            }
        } else if self.stack.len() + ids.len() < MAX_STACK {
            self.input.pos = pos;
            self.stack.extend(ids.iter().map(|&id| Val::Frame(id)));
        }
        self.frame_ids = ids;
    }

    /// Memo references come in long runs (a frame list is a run of references to frame dicts):
    /// this reads the rest of a run straight from the buffer, stopping at any other opcode or
    /// near the end of the buffer (the main loop then reads on with its bounds checks).
    fn get_run(&mut self, b: &mut Builder) -> Result<(), Fail> {
        loop {
            let pos = self.input.pos;
            let Some(buf) = self.input.buf.get(pos..self.input.end) else {
                return Ok(());
            };
            let (idx, len) = match buf {
                [b'h', i, ..] => (*i as usize, 2),
                [b'j', a, b1, c, d, ..] => (u32::from_le_bytes([*a, *b1, *c, *d]) as usize, 5),
                _ => return Ok(()),
            };
            let at = self.input.base + pos as u64;
            self.input.pos += len;
            if self.stack.len() >= MAX_STACK {
                return self.push(Val::Skipped, at);
            }
            // Frames first, written straight into the stack's slot: the general path below
            // builds the value in a temporary, which costs a store-forwarding stall per item.
            if let Some(&h) = self.memo.slots.get(idx) {
                if h >> TAG_SHIFT == T_FRAME {
                    self.stack.push(Val::Frame(h & PAYLOAD));
                    continue;
                }
            }
            let v = match self.memo.slots.get(idx) {
                Some(&h) => match self.memo.decode(h) {
                    Val::Obj(slot) => b.provisional(slot, at),
                    v => v,
                },
                None => {
                    let op = buf[0];
                    return Err(self.err(
                        at,
                        format!(
                            "{} refers to memo entry {idx}, which was never stored (corrupt pickle)",
                            op_name(op)
                        ),
                    ));
                }
            };
            self.stack.push(v);
        }
    }

    fn memo_put(&mut self, b: &mut Builder, idx: usize, at: u64) -> Result<(), Fail> {
        if idx > self.memo.slots.len() + MAX_MEMO_GAP {
            return Err(self.err(
                at,
                format!(
                    "memo index {idx} is far beyond the {} entries stored so far (corrupt pickle)",
                    self.memo.slots.len()
                ),
            ));
        }
        let top = *self
            .stack
            .last()
            .filter(|v| **v != Val::Mark)
            .ok_or_else(|| self.err(at, "memo store with an empty stack (corrupt pickle)"))?;
        if let Val::Obj(slot) = top {
            if let Some(old) = b.set_memo(slot, idx as u32) {
                self.memo.set(old as usize, Val::Skipped);
            }
        }
        if let Some(Val::Obj(slot)) = self.memo.get(idx) {
            // Overwriting the entry of a live container: it no longer has a memo entry.
            b.clear_memo(slot, idx as u32);
        }
        self.memo.set(idx, top);
        Ok(())
    }

    /// Removes a value from the machine for good: a container's slot is finalized or freed and
    /// its memo entry replaced by what it became.
    fn discard(&mut self, b: &mut Builder, v: Val) {
        if let Val::Obj(slot) = v {
            b.discard(slot, &mut self.memo);
        }
    }

    fn attach(
        &mut self,
        b: &mut Builder,
        parent: Val,
        key: Option<Val>,
        child: Val,
        at: u64,
    ) -> Result<(), Fail> {
        match parent {
            Val::Obj(p) => b.attach(p, key, child, at, &mut self.memo),
            Val::Skipped => {
                if let Some(k) = key {
                    self.discard(b, k);
                }
                self.discard(b, child);
                Ok(())
            }
            other => Err(self.err(
                at,
                format!(
                    "items are added to {} instead of a dict or list (corrupt pickle)",
                    other.describe()
                ),
            )),
        }
    }

    fn new_container(&mut self, b: &mut Builder, dict: bool, at: u64) -> Result<(), Fail> {
        let marks_top = self.marks.last().copied();
        let slot = b.create(&self.stack, marks_top, dict, at)?;
        self.push(Val::Obj(slot), at)
    }

    fn string(&mut self, b: &mut Builder, n: u64, what: &str, at: u64) -> Result<(), Fail> {
        if n > self.input.remaining() {
            return Err(self.input.truncated(n, what, at));
        }
        let v = if n as usize > MAX_STRING {
            self.input.skip(n, what, at)?;
            b.note_long_string(at);
            Val::LongStr
        } else {
            let bytes = self.input.take(n as usize, what)?;
            let id = b.intern_bytes(bytes, at)?;
            Val::Str(id)
        };
        self.push(v, at)
    }

    fn skip_bytes(&mut self, n: u64, what: &str, at: u64) -> Result<(), Fail> {
        if n > self.input.remaining() {
            return Err(self.input.truncated(n, what, at));
        }
        self.input.skip(n, what, at)?;
        self.push(Val::Bytes, at)
    }

    fn long(&mut self, n: u64, at: u64) -> Result<(), Fail> {
        if n > self.input.remaining() {
            return Err(self.input.truncated(n, "LONG4", at));
        }
        let v = if n == 0 {
            Val::Int(0)
        } else if n <= 8 {
            let raw = self.input.take(n as usize, "LONG")?;
            let mut a = [0u8; 8];
            a[..raw.len()].copy_from_slice(raw);
            let fill = if raw[raw.len() - 1] & 0x80 != 0 {
                0xff
            } else {
                0
            };
            for x in a.iter_mut().skip(raw.len()) {
                *x = fill;
            }
            Val::Int(i64::from_le_bytes(a))
        } else {
            // Two's complement longer than 8 bytes may still be a small value (sign padding).
            let take = (n as usize).min(MAX_STRING);
            if take < n as usize {
                self.input.skip(n, "LONG4", at)?;
                Val::BigInt
            } else {
                let raw = self.input.take(take, "LONG")?;
                let neg = raw[raw.len() - 1] & 0x80 != 0;
                let pad = if neg { 0xff } else { 0 };
                if raw[8..].iter().all(|&x| x == pad) && ((raw[7] & 0x80 != 0) == neg) {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&raw[..8]);
                    Val::Int(i64::from_le_bytes(a))
                } else {
                    Val::BigInt
                }
            }
        };
        self.push(v, at)
    }

    /// Runs the pickle to its `STOP` and returns the top-level value.
    pub fn run(&mut self, b: &mut Builder) -> Result<Val, Fail> {
        let at0 = self.input.offset();
        if self.input.len == 0 {
            return Err(self.err(0, "the file is empty; expected a pickle (protocol 2 to 5)"));
        }
        let first = self.input.u8("the first opcode")?;
        if first != 0x80 {
            return Err(self.err(
                at0,
                format!(
                    "expected a pickle of protocol 2 to 5 (starting with the PROTO opcode 0x80), found {}",
                    self.input.shown_at(at0)
                ),
            ));
        }
        let proto = self.input.u8("PROTO")?;
        if !(2..=5).contains(&proto) {
            return Err(self.err(
                at0 + 1,
                format!("pickle protocol {proto} is not supported (2 to 5 are)"),
            ));
        }
        self.protocol = proto;
        loop {
            let at = self.input.offset();
            if at >= self.next_check {
                self.check_stop(at)?;
            }
            let op = self.input.u8("an opcode")?;
            match op {
                0x95 => {
                    // FRAME: a length hint for buffered readers; nothing to do.
                    self.input.bytes::<8>("FRAME")?;
                }
                b'}' => self.new_container(b, true, at)?,
                b']' => self.new_container(b, false, at)?,
                0x94 => {
                    let idx = self.memo.slots.len();
                    self.memo_put(b, idx, at)?;
                }
                b'q' => {
                    let idx = self.input.u8("BINPUT")? as usize;
                    self.memo_put(b, idx, at)?;
                }
                b'r' => {
                    let idx = u32::from_le_bytes(self.input.bytes::<4>("LONG_BINPUT")?) as usize;
                    self.memo_put(b, idx, at)?;
                }
                b'h' => {
                    let idx = self.input.u8("BINGET")? as usize;
                    let v = self.memo_get(b, idx, op, at)?;
                    self.push(v, at)?;
                    self.get_run(b)?;
                }
                b'j' => {
                    let idx = u32::from_le_bytes(self.input.bytes::<4>("LONG_BINGET")?) as usize;
                    let v = self.memo_get(b, idx, op, at)?;
                    self.push(v, at)?;
                    self.get_run(b)?;
                }
                b'(' => {
                    if self.marks.len() >= MAX_MARKS {
                        return Err(self.err(
                            at,
                            format!("more than {MAX_MARKS} nested MARKs: not a snapshot pickle"),
                        ));
                    }
                    self.marks.push(self.stack.len());
                    self.push(Val::Mark, at)?;
                    let n = self.stack.len();
                    if let Some(&Val::Obj(slot)) = n.checked_sub(2).and_then(|i| self.stack.get(i)) {
                        if b.is_frame_list(slot) {
                            self.frame_batch(b, slot);
                        }
                    }
                }
                0x8c => {
                    let n = self.input.u8("SHORT_BINUNICODE")? as u64;
                    self.string(b, n, "SHORT_BINUNICODE", at)?;
                }
                b'X' => {
                    let n = u32::from_le_bytes(self.input.bytes::<4>("BINUNICODE")?) as u64;
                    self.string(b, n, "BINUNICODE", at)?;
                }
                0x8d => {
                    let n = u64::from_le_bytes(self.input.bytes::<8>("BINUNICODE8")?);
                    self.string(b, n, "BINUNICODE8", at)?;
                }
                b'U' => {
                    let n = self.input.u8("SHORT_BINSTRING")? as u64;
                    self.string(b, n, "SHORT_BINSTRING", at)?;
                }
                b'T' => {
                    let n = u32::from_le_bytes(self.input.bytes::<4>("BINSTRING")?) as u64;
                    self.string(b, n, "BINSTRING", at)?;
                }
                b'C' => {
                    let n = self.input.u8("SHORT_BINBYTES")? as u64;
                    self.skip_bytes(n, "SHORT_BINBYTES", at)?;
                }
                b'B' => {
                    let n = u32::from_le_bytes(self.input.bytes::<4>("BINBYTES")?) as u64;
                    self.skip_bytes(n, "BINBYTES", at)?;
                }
                0x8e => {
                    let n = u64::from_le_bytes(self.input.bytes::<8>("BINBYTES8")?);
                    self.skip_bytes(n, "BINBYTES8", at)?;
                }
                0x96 => {
                    let n = u64::from_le_bytes(self.input.bytes::<8>("BYTEARRAY8")?);
                    self.skip_bytes(n, "BYTEARRAY8", at)?;
                }
                b'K' => {
                    let v = self.input.u8("BININT1")?;
                    self.push(Val::Int(v as i64), at)?;
                }
                b'M' => {
                    let v = u16::from_le_bytes(self.input.bytes::<2>("BININT2")?);
                    self.push(Val::Int(v as i64), at)?;
                }
                b'J' => {
                    let v = i32::from_le_bytes(self.input.bytes::<4>("BININT")?);
                    self.push(Val::Int(v as i64), at)?;
                }
                0x8a => {
                    let n = self.input.u8("LONG1")? as u64;
                    self.long(n, at)?;
                }
                0x8b => {
                    let n = i32::from_le_bytes(self.input.bytes::<4>("LONG4")?);
                    if n < 0 {
                        return Err(self.err(at, "LONG4 with a negative length (corrupt pickle)"));
                    }
                    self.long(n as u64, at)?;
                }
                b'G' => {
                    let v = f64::from_be_bytes(self.input.bytes::<8>("BINFLOAT")?);
                    self.push(Val::Float(v), at)?;
                }
                b'N' => self.push(Val::None, at)?,
                0x88 => self.push(Val::Bool(true), at)?,
                0x89 => self.push(Val::Bool(false), at)?,
                b')' => self.push(Val::Skipped, at)?,
                0x85 => {
                    let a = self.pop(op, at)?;
                    self.discard(b, a);
                    self.push(Val::Skipped, at)?;
                }
                0x86 => {
                    let y = self.pop(op, at)?;
                    let x = self.pop(op, at)?;
                    self.push(pair(x, y), at)?;
                    self.discard(b, x);
                    self.discard(b, y);
                }
                0x87 => {
                    for _ in 0..3 {
                        let v = self.pop(op, at)?;
                        self.discard(b, v);
                    }
                    self.push(Val::Skipped, at)?;
                }
                b't' => {
                    let m = self.pop_mark(op, at)?;
                    let items: Vec<Val> = self.stack.drain(m..).skip(1).collect();
                    let v = if items.len() == 2 {
                        pair(items[0], items[1])
                    } else {
                        Val::Skipped
                    };
                    for it in items {
                        self.discard(b, it);
                    }
                    self.push(v, at)?;
                }
                b'a' => {
                    let item = self.pop(op, at)?;
                    let list = self.pop(op, at)?;
                    self.attach(b, list, None, item, at)?;
                    self.push(list, at)?;
                }
                b'e' => {
                    let m = self.pop_mark(op, at)?;
                    if m == 0 {
                        return Err(self.err(at, "APPENDS with no list below its MARK (corrupt pickle)"));
                    }
                    let list = self.stack[m - 1];
                    // The common case, a list of frames already read: one copy, no per-item work.
                    if let Val::Obj(slot) = list {
                        if b.extend_frames(slot, &self.stack[m + 1..]) {
                            self.stack.truncate(m);
                            continue;
                        }
                    }
                    let mut items = std::mem::take(&mut self.scratch);
                    items.clear();
                    items.extend_from_slice(&self.stack[m + 1..]);
                    self.stack.truncate(m);
                    for &it in &items {
                        self.attach(b, list, None, it, at)?;
                    }
                    self.scratch = items;
                    if let Val::Obj(slot) = list {
                        b.batch_done(slot);
                    }
                }
                b's' => {
                    let v = self.pop(op, at)?;
                    let k = self.pop(op, at)?;
                    let dict = self.pop(op, at)?;
                    self.attach(b, dict, Some(k), v, at)?;
                    self.push(dict, at)?;
                }
                b'u' => {
                    let m = self.pop_mark(op, at)?;
                    if m == 0 {
                        return Err(self.err(at, "SETITEMS with no dict below its MARK (corrupt pickle)"));
                    }
                    let dict = self.stack[m - 1];
                    if (self.stack.len() - m - 1) % 2 != 0 {
                        return Err(self.err(at, "SETITEMS with an odd number of items (corrupt pickle)"));
                    }
                    let mut items = std::mem::take(&mut self.scratch);
                    items.clear();
                    items.extend_from_slice(&self.stack[m + 1..]);
                    self.stack.truncate(m);
                    for kv in items.chunks_exact(2) {
                        self.attach(b, dict, Some(kv[0]), kv[1], at)?;
                    }
                    self.scratch = items;
                    if let Val::Obj(slot) = dict {
                        b.batch_done(slot);
                    }
                }
                b'd' | b'l' => {
                    // DICT / LIST from a mark: older picklers. Items were built before the container
                    // existed, so nested containers among them were not recognised.
                    let m = self.pop_mark(op, at)?;
                    let items: Vec<Val> = self.stack.drain(m..).skip(1).collect();
                    let dict = op == b'd';
                    if dict && items.len() % 2 != 0 {
                        return Err(self.err(at, "DICT with an odd number of items (corrupt pickle)"));
                    }
                    self.new_container(b, dict, at)?;
                    let c = *self.stack.last().unwrap_or(&Val::Skipped);
                    if dict {
                        for kv in items.chunks_exact(2) {
                            self.attach(b, c, Some(kv[0]), kv[1], at)?;
                        }
                    } else {
                        for it in items {
                            self.attach(b, c, None, it, at)?;
                        }
                    }
                    if let Val::Obj(slot) = c {
                        b.batch_done(slot);
                    }
                }
                0x8f => self.push(Val::Skipped, at)?,
                0x90 => {
                    // ADDITEMS to a set: sets are not part of a snapshot; their items are dropped.
                    let m = self.pop_mark(op, at)?;
                    let items: Vec<Val> = self.stack.drain(m..).skip(1).collect();
                    for it in items {
                        self.discard(b, it);
                    }
                }
                0x91 => {
                    let m = self.pop_mark(op, at)?;
                    let items: Vec<Val> = self.stack.drain(m..).skip(1).collect();
                    for it in items {
                        self.discard(b, it);
                    }
                    self.push(Val::Skipped, at)?;
                }
                b'0' => {
                    if self.stack.last() == Some(&Val::Mark) {
                        self.pop_mark(op, at)?;
                        self.stack.pop();
                    } else {
                        let v = self.pop(op, at)?;
                        self.discard(b, v);
                    }
                }
                b'1' => {
                    let m = self.pop_mark(op, at)?;
                    let items: Vec<Val> = self.stack.drain(m..).skip(1).collect();
                    for it in items {
                        self.discard(b, it);
                    }
                }
                b'2' => {
                    let top = *self
                        .stack
                        .last()
                        .ok_or_else(|| self.err(at, "DUP with an empty stack (corrupt pickle)"))?;
                    let v = match top {
                        Val::Obj(slot) => b.provisional(slot, at),
                        v => v,
                    };
                    self.push(v, at)?;
                }
                b'.' => {
                    if !self.marks.is_empty() {
                        return Err(self.err(at, "STOP inside an unfinished MARK (corrupt pickle)"));
                    }
                    let top = self.pop(op, at)?;
                    for v in std::mem::take(&mut self.stack) {
                        self.discard(b, v);
                    }
                    return Ok(top);
                }
                b'c' | b'i' | 0x93 | b'R' | b'b' | b'o' | 0x81 | 0x92 | 0x82 | 0x83 | 0x84 | b'P'
                | b'Q' | 0x97 | 0x98 => return Err(self.refused(op, at)),
                b'I' | b'L' | b'F' | b'S' | b'V' | b'g' | b'p' => {
                    return Err(self.err(
                        at,
                        format!(
                            "text opcode {} (0x{op:02x}) belongs to pickle protocols 0 and 1; a snapshot is written with protocol 2 or newer",
                            op_name(op)
                        ),
                    ))
                }
                0x80 => {
                    return Err(self.err(at, "a second PROTO opcode inside the pickle (corrupt pickle)"))
                }
                _ => {
                    return Err(self.err(
                        at,
                        format!(
                            "byte 0x{op:02x} is not a pickle opcode (corrupt or not a pickle): \
                             expected an opcode, found {}",
                            self.input.shown_at(at)
                        ),
                    ))
                }
            }
        }
    }
}

fn pair(x: Val, y: Val) -> Val {
    match (x, y) {
        (Val::Int(a), Val::Int(b)) => match (i32::try_from(a), i32::try_from(b)) {
            (Ok(a), Ok(b)) => Val::Pair(a, b),
            _ => Val::Skipped,
        },
        _ => Val::Skipped,
    }
}
