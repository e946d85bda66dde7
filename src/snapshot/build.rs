//! The snapshot schema: what each container of the pickle is, and how its items fold into the
//! model the moment they arrive.
//!
//! The pickle machine ([`super::pickle`]) asks [`Builder::create`] for a slot when a dict or list
//! starts; the builder gives it a [`Kind`] from where it stands (its parent's kind and key), and
//! [`Builder::attach`] folds each item into its parent: a frame dict becomes a frame id, a frame
//! list a stack id, a trace entry one row of its device's columns, a block a row of its segment.
//! Nothing else of the file is kept. A prediction that turns out wrong is harmless: a record only
//! reaches the model when it is attached where the schema expects it; anything else is counted in
//! a warning.
//!
//! Why one file of ~1,190 lines: the schema is one table — which kind each container is
//! ([`Kind`], chosen from its parent's kind and key) and how an item of each kind folds into its
//! parent — and the two halves are the two sides of every match; split, each change to a field
//! would touch two files.

use super::batches::{Batches, RunRef};
use super::intern::{Frame, Frames, Stacks, Strings};
use super::model::{
    Action, Annotation, Block, BlockState, Layout, Segment, SegmentType, Snapshot, Trace, NO_TIME,
};
use super::pickle::{Fail, Memo, Val};
use crate::diag::Diagnostic;
use std::collections::HashMap;

/// What a container is, by its place in the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    RootDict,
    Segments,
    Segment,
    Blocks,
    Block,
    History,
    HistoryEntry,
    Frames,
    Frame,
    DeviceTraces,
    Trace,
    TraceEntry,
    Annotations,
    Annotation,
    Settings,
    PoolId,
    Skip,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::RootDict => "the top-level dict",
            Kind::Segments => "the segment list",
            Kind::Segment => "a segment",
            Kind::Blocks => "a segment's block list",
            Kind::Block => "a block",
            Kind::History => "a block's history",
            Kind::HistoryEntry => "a block history entry",
            Kind::Frames => "a frame list",
            Kind::Frame => "a frame",
            Kind::DeviceTraces => "device_traces",
            Kind::Trace => "a device trace",
            Kind::TraceEntry => "a trace entry",
            Kind::Annotations => "external_annotations",
            Kind::Annotation => "an annotation",
            Kind::Settings => "allocator_settings",
            Kind::PoolId => "a segment's pool id",
            Kind::Skip => "an ignored value",
        }
    }
}

// Words the schema matches, interned first so their ids are these constants.
const WORDS: [&str; 43] = [
    "segments",
    "device_traces",
    "allocator_settings",
    "external_annotations",
    "device",
    "address",
    "total_size",
    "allocated_size",
    "active_size",
    "requested_size",
    "stream",
    "segment_type",
    "segment_pool_id",
    "is_expandable",
    "frames",
    "blocks",
    "size",
    "state",
    "history",
    "addr",
    "real_size",
    "action",
    "time_us",
    "device_free",
    "name",
    "filename",
    "line",
    "stage",
    "alloc",
    "free_requested",
    "free_completed",
    "segment_alloc",
    "segment_free",
    "segment_map",
    "segment_unmap",
    "oom",
    "snapshot",
    "active_allocated",
    "active_awaiting_free",
    "active_pending_free",
    "inactive",
    "large",
    "small",
];
const K_SEGMENTS: u32 = 0;
const K_DEVICE_TRACES: u32 = 1;
const K_SETTINGS: u32 = 2;
const K_ANNOTATIONS: u32 = 3;
const K_DEVICE: u32 = 4;
const K_ADDRESS: u32 = 5;
const K_TOTAL_SIZE: u32 = 6;
const K_ALLOCATED_SIZE: u32 = 7;
const K_ACTIVE_SIZE: u32 = 8;
const K_REQUESTED_SIZE: u32 = 9;
const K_STREAM: u32 = 10;
const K_SEGMENT_TYPE: u32 = 11;
const K_POOL_ID: u32 = 12;
const K_EXPANDABLE: u32 = 13;
const K_FRAMES: u32 = 14;
const K_BLOCKS: u32 = 15;
const K_SIZE: u32 = 16;
const K_STATE: u32 = 17;
const K_HISTORY: u32 = 18;
const K_ADDR: u32 = 19;
const K_REAL_SIZE: u32 = 20;
const K_ACTION: u32 = 21;
const K_TIME_US: u32 = 22;
const K_DEVICE_FREE: u32 = 23;
const K_NAME: u32 = 24;
const K_FILENAME: u32 = 25;
const K_LINE: u32 = 26;
const K_STAGE: u32 = 27;
const W_ACTIONS: u32 = 28;
const W_STATES: u32 = 37;
const W_LARGE: u32 = 41;
const W_SMALL: u32 = 42;

const NO_MEMO: u32 = u32::MAX;

/// A segment being read.
#[derive(Debug, Default)]
struct PSeg {
    device: Option<i64>,
    address: Option<u64>,
    total_size: Option<u64>,
    allocated_size: u64,
    active_size: u64,
    requested_size: u64,
    stream: u64,
    segment_type: Option<SegmentType>,
    pool_id: Option<(i32, i32)>,
    is_expandable: Option<bool>,
    stack: u32,
    blocks: Vec<PBlock>,
}

/// A block being read.
#[derive(Debug, Default)]
struct PBlock {
    address: Option<u64>,
    size: Option<u64>,
    requested_size: Option<u64>,
    state: Option<BlockState>,
    stack: Option<u32>,
    history: Option<PHist>,
}

/// The first entry of a torch-2.0-era block history (the allocation that made the block).
#[derive(Debug, Default, Clone, Copy)]
struct PHist {
    real_size: Option<u64>,
    stack: u32,
}

/// A trace entry being read.
#[derive(Debug, Clone, Copy)]
struct PTrace {
    action: Option<(Action, u32)>,
    addr: u64,
    size: u64,
    stream: u64,
    time_us: i64,
    stack: u32,
    device_free: Option<u64>,
}

impl Default for PTrace {
    fn default() -> Self {
        PTrace {
            action: None,
            addr: 0,
            size: 0,
            stream: 0,
            time_us: NO_TIME,
            stack: 0,
            device_free: None,
        }
    }
}

#[derive(Debug, Default)]
struct PAnnot {
    stage: String,
    name: String,
    device: i64,
    time_us: Option<i64>,
}

/// Segments with their blocks, block indices relative to this list.
#[derive(Debug, Default)]
struct SegAcc {
    segments: Vec<Segment>,
    blocks: Vec<Block>,
}

/// What a container under construction holds.
#[derive(Debug)]
enum State {
    Empty,
    Segments(Box<SegAcc>),
    Segment(Box<PSeg>),
    Blocks(Vec<PBlock>),
    Block(Box<PBlock>),
    History(Option<PHist>),
    HistoryEntry(PHist),
    Frames(Vec<u32>),
    Frame(Frame),
    DeviceTraces(Vec<Trace>),
    Trace(Box<Trace>),
    TraceEntry(Box<PTrace>),
    Annotations(Vec<Annotation>),
    Annotation(Box<PAnnot>),
    Settings(Vec<(String, String)>),
    /// A pool id written as a list (the JSON form of the pickle's tuple): its integers so far.
    PoolId(Vec<i64>),
}

impl State {
    fn new(kind: Kind) -> State {
        match kind {
            Kind::RootDict | Kind::Skip => State::Empty,
            Kind::Segments => State::Segments(Box::default()),
            Kind::Segment => State::Segment(Box::default()),
            Kind::Blocks => State::Blocks(Vec::new()),
            Kind::Block => State::Block(Box::default()),
            Kind::History => State::History(None),
            Kind::HistoryEntry => State::HistoryEntry(PHist::default()),
            Kind::Frames => State::Frames(Vec::new()),
            Kind::Frame => State::Frame(Frame {
                name: u32::MAX,
                filename: u32::MAX,
                line: 0,
            }),
            Kind::DeviceTraces => State::DeviceTraces(Vec::new()),
            Kind::Trace => State::Trace(Box::default()),
            Kind::TraceEntry => State::TraceEntry(Box::default()),
            Kind::Annotations => State::Annotations(Vec::new()),
            Kind::Annotation => State::Annotation(Box::default()),
            Kind::Settings => State::Settings(Vec::new()),
            Kind::PoolId => State::PoolId(Vec::new()),
        }
    }
}

struct Slot {
    kind: Kind,
    dict: bool,
    /// No item received yet (may still receive a single `APPEND`/`SETITEM`).
    fresh: bool,
    memo: u32,
    state: State,
    /// A frame list whose items so far are exactly one cached run of references: its stack id
    /// may be known already ([`Batches::stack`]).
    run: Option<RunRef>,
}

/// A finished item on its way into its parent.
enum Fin {
    Val(Val),
    Rec(Kind, State),
}

impl Fin {
    fn describe(&self) -> &'static str {
        match self {
            Fin::Val(v) => v.describe(),
            Fin::Rec(k, _) => k.noun(),
        }
    }
}

/// Warnings counted by message.
#[derive(Default)]
struct Warnings {
    index: HashMap<String, usize>,
    list: Vec<(String, u64, u64)>,
}

impl Warnings {
    fn add(&mut self, msg: String, at: u64) {
        match self.index.get(&msg) {
            Some(&i) => self.list[i].1 += 1,
            None => {
                self.index.insert(msg.clone(), self.list.len());
                self.list.push((msg, 1, at));
            }
        }
    }
}

/// Everything but the slots, so a parent's state can be updated while the tables change.
struct Ctx {
    strings: Strings,
    frames: Frames,
    stacks: Stacks,
    streams: Vec<u64>,
    stream_ids: HashMap<u64, u32>,
    last_stream: Option<(u64, u32)>,
    warnings: Warnings,
    root_keys: Vec<String>,
    segments: SegAcc,
    traces: Option<Vec<Trace>>,
    settings: Vec<(String, String)>,
    annotations: Vec<Annotation>,
    long_strings: (u64, u64),
    invalid_utf8: (u64, u64),
    /// Emptied frame lists and trace-entry boxes, reused: a snapshot has millions of each, and
    /// taking them from here instead of the allocator saves two allocations per trace entry.
    spare_lists: Vec<Vec<u32>>,
    // Boxed on purpose: a trace entry's state is a box, and these are those boxes, kept whole.
    #[allow(clippy::vec_box)]
    spare_entries: Vec<Box<PTrace>>,
}

/// Spares kept at most (each kind), and the longest frame list kept for reuse.
const MAX_SPARES: usize = 64;
const MAX_SPARE_LIST: usize = 4096;

/// Builds a [`Snapshot`] from the calls of the pickle machine.
pub(crate) struct Builder {
    file: String,
    ctx: Ctx,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Frame-list batches read before (the pickle machine's fast path fills and reads it).
    batches: Batches,
}

/// What the file is, in words, by its protocol (0: the JSON form).
fn form(protocol: u8) -> &'static str {
    if protocol == 0 {
        "JSON"
    } else {
        "pickle"
    }
}

fn key_id(key: Option<Val>) -> Option<u32> {
    match key {
        Some(Val::Str(id)) => Some(id),
        _ => None,
    }
}

/// The kind of a container of type `dict` inside `parent` under `key`; `None` when the schema has
/// no container of that type there.
fn child_kind(parent: Kind, key: Option<Val>, dict: bool) -> Option<Kind> {
    use Kind::*;
    let k = key_id(key);
    Some(match parent {
        RootDict => match (k, dict) {
            (Some(K_SEGMENTS), false) => Segments,
            (Some(K_DEVICE_TRACES), false) => DeviceTraces,
            (Some(K_SETTINGS), true) => Settings,
            (Some(K_ANNOTATIONS), false) => Annotations,
            _ => Skip,
        },
        Segments | Blocks | History | Frames | Trace | Annotations => {
            if !dict {
                return None;
            }
            match parent {
                Segments => Segment,
                Blocks => Block,
                History => HistoryEntry,
                Frames => Frame,
                Trace => TraceEntry,
                _ => Annotation,
            }
        }
        DeviceTraces => {
            if dict {
                return None;
            }
            Trace
        }
        Segment => match (k, dict) {
            (Some(K_BLOCKS), false) => Blocks,
            (Some(K_FRAMES), false) => Frames,
            (Some(K_POOL_ID), false) => PoolId,
            _ => Skip,
        },
        Block => match (k, dict) {
            (Some(K_FRAMES), false) => Frames,
            (Some(K_HISTORY), false) => History,
            _ => Skip,
        },
        HistoryEntry | TraceEntry => match (k, dict) {
            (Some(K_FRAMES), false) => Frames,
            _ => Skip,
        },
        Frame | Annotation | Settings | PoolId | Skip => Skip,
    })
}

impl Ctx {
    fn warn(&mut self, at: u64, msg: String) {
        self.warnings.add(msg, at);
    }

    fn mismatch(&mut self, at: u64, parent: Kind, field: Option<u32>, expected: &str, found: &str) {
        let msg = match field {
            Some(k) => format!(
                "field '{}' of {}: expected {expected}, found {found}; ignored",
                self.strings.get(k),
                parent.noun()
            ),
            None => format!(
                "an item of {}: expected {expected}, found {found}; ignored",
                parent.noun()
            ),
        };
        self.warn(at, msg);
    }

    fn uint(&mut self, v: &Fin, parent: Kind, k: u32, at: u64) -> Option<u64> {
        match v {
            Fin::Val(Val::Int(i)) if *i >= 0 => Some(*i as u64),
            Fin::Val(Val::None) => None,
            other => {
                let found = match other {
                    Fin::Val(Val::Int(_)) => "a negative integer",
                    o => o.describe(),
                };
                self.mismatch(at, parent, Some(k), "a non-negative integer", found);
                None
            }
        }
    }

    fn int(&mut self, v: &Fin, parent: Kind, k: u32, at: u64) -> Option<i64> {
        match v {
            Fin::Val(Val::Int(i)) => Some(*i),
            Fin::Val(Val::None) => None,
            other => {
                let found = other.describe();
                self.mismatch(at, parent, Some(k), "an integer", found);
                None
            }
        }
    }

    fn stack(&mut self, v: Fin, parent: Kind, k: u32, at: u64) -> Option<u32> {
        match v {
            Fin::Val(Val::Stack(id)) => Some(id),
            Fin::Val(Val::None) => None,
            other => {
                let found = other.describe();
                self.mismatch(at, parent, Some(k), "a list of frames", found);
                None
            }
        }
    }

    fn string(&mut self, v: &Fin, parent: Kind, k: u32, at: u64) -> Option<u32> {
        match v {
            Fin::Val(Val::Str(id)) => Some(*id),
            Fin::Val(Val::None) => None,
            other => {
                let found = other.describe();
                self.mismatch(at, parent, Some(k), "a string", found);
                None
            }
        }
    }

    fn stream_index(&mut self, s: u64) -> u32 {
        // Nearly every entry is on the stream of the one before.
        if let Some((last, i)) = self.last_stream {
            if last == s {
                return i;
            }
        }
        let i = self.stream_lookup(s);
        self.last_stream = Some((s, i));
        i
    }

    fn stream_lookup(&mut self, s: u64) -> u32 {
        if let Some(&i) = self.stream_ids.get(&s) {
            return i;
        }
        let i = self.streams.len() as u32;
        self.streams.push(s);
        self.stream_ids.insert(s, i);
        i
    }

    fn finish_segment(&mut self, seg: PSeg, acc: &mut SegAcc, at: u64) {
        let (Some(address), Some(total_size)) = (seg.address, seg.total_size) else {
            self.warn(
                at,
                "a segment without 'address' or 'total_size' was skipped".to_string(),
            );
            return;
        };
        let device = seg.device.unwrap_or_else(|| {
            self.warn(
                at,
                "a segment without 'device' was taken as device 0".to_string(),
            );
            0
        });
        let first_block = acc.blocks.len() as u32;
        let mut next = address;
        for b in seg.blocks {
            let size = b.size.unwrap_or_else(|| {
                self.warn(
                    at,
                    "a block without 'size' was taken as 0 bytes".to_string(),
                );
                0
            });
            let addr = b.address.unwrap_or(next);
            next = addr.saturating_add(size);
            let state = b.state.unwrap_or_else(|| {
                self.warn(at, "a block without 'state' was marked unknown".to_string());
                BlockState::Unknown
            });
            let hist = b.history;
            acc.blocks.push(Block {
                address: addr,
                size,
                requested_size: b
                    .requested_size
                    .or(hist.and_then(|h| h.real_size))
                    .unwrap_or(size),
                state,
                stack: b.stack.or(hist.map(|h| h.stack)).unwrap_or(0),
            });
        }
        let block_count = acc.blocks.len() as u32 - first_block;
        acc.segments.push(Segment {
            device,
            address,
            total_size,
            allocated_size: seg.allocated_size,
            active_size: seg.active_size,
            requested_size: seg.requested_size,
            stream: seg.stream,
            segment_type: seg.segment_type.unwrap_or(SegmentType::Unknown),
            pool_id: seg.pool_id,
            is_expandable: seg.is_expandable,
            stack: seg.stack,
            first_block,
            block_count,
        });
    }

    fn push_entry(&mut self, t: &mut Trace, e: PTrace, at: u64) {
        let Some((action, word)) = e.action else {
            self.warn(at, "a trace entry without 'action' was skipped".to_string());
            return;
        };
        let i = t.action.len() as u32;
        if t.action.len() == t.action.capacity() {
            // Grow the columns by a quarter, not double: a 1 GB snapshot's trace columns hold
            // hundreds of MB, and doubling would leave up to half of that unused (and hold old
            // and new copies at once while growing).
            let more = (t.action.len() / 4).max(1024);
            t.action.reserve_exact(more);
            t.addr.reserve_exact(more);
            t.size.reserve_exact(more);
            t.stream.reserve_exact(more);
            t.time_us.reserve_exact(more);
            t.stack.reserve_exact(more);
        }
        t.action.push(action);
        t.addr.push(e.addr);
        t.size.push(e.size);
        let s = self.stream_index(e.stream);
        t.stream.push(s);
        t.time_us.push(e.time_us);
        t.stack.push(e.stack);
        if let Some(f) = e.device_free {
            t.device_free.push((i, f));
        }
        if action == Action::Other {
            t.other_actions.push((i, word));
        }
    }

    /// Folds `v` (under `key` for dicts) into `state` of a container of kind `kind`.
    fn accept(&mut self, kind: Kind, state: &mut State, key: Option<Val>, v: Fin, at: u64) {
        let k = key_id(key);
        match (state, kind) {
            (State::Empty, Kind::RootDict) => {
                let name = match key {
                    Some(Val::Str(id)) => self.strings.get(id).to_string(),
                    Some(other) => format!("<{}>", other.describe()),
                    None => String::new(),
                };
                self.root_keys.push(name);
                match (k, v) {
                    (Some(K_SEGMENTS), Fin::Rec(_, State::Segments(acc))) => self.segments = *acc,
                    (Some(K_DEVICE_TRACES), Fin::Rec(_, State::DeviceTraces(t))) => {
                        self.traces = Some(t)
                    }
                    (Some(K_SETTINGS), Fin::Rec(_, State::Settings(s))) => self.settings = s,
                    (Some(K_ANNOTATIONS), Fin::Rec(_, State::Annotations(a))) => {
                        self.annotations = a
                    }
                    (Some(K_SEGMENTS), v) => {
                        let f = v.describe();
                        self.mismatch(at, kind, k, "a list of segments", f)
                    }
                    (Some(K_DEVICE_TRACES), v) => {
                        let f = v.describe();
                        self.mismatch(at, kind, k, "a list of traces", f)
                    }
                    _ => {}
                }
            }
            (State::Empty, _) => {}
            (State::Segments(acc), _) => match v {
                Fin::Rec(_, State::Segment(seg)) => self.finish_segment(*seg, acc, at),
                other => self.mismatch(at, kind, None, "a segment dict", other.describe()),
            },
            (State::Segment(s), _) => match k {
                Some(K_DEVICE) => s.device = self.int(&v, kind, K_DEVICE, at),
                Some(K_ADDRESS) => s.address = self.uint(&v, kind, K_ADDRESS, at),
                Some(K_TOTAL_SIZE) => s.total_size = self.uint(&v, kind, K_TOTAL_SIZE, at),
                Some(K_ALLOCATED_SIZE) => {
                    s.allocated_size = self.uint(&v, kind, K_ALLOCATED_SIZE, at).unwrap_or(0)
                }
                Some(K_ACTIVE_SIZE) => {
                    s.active_size = self.uint(&v, kind, K_ACTIVE_SIZE, at).unwrap_or(0)
                }
                Some(K_REQUESTED_SIZE) => {
                    s.requested_size = self.uint(&v, kind, K_REQUESTED_SIZE, at).unwrap_or(0)
                }
                Some(K_STREAM) => s.stream = self.uint(&v, kind, K_STREAM, at).unwrap_or(0),
                Some(K_SEGMENT_TYPE) => {
                    s.segment_type = self.string(&v, kind, K_SEGMENT_TYPE, at).map(|w| match w {
                        W_LARGE => SegmentType::Large,
                        W_SMALL => SegmentType::Small,
                        _ => SegmentType::Unknown,
                    })
                }
                Some(K_POOL_ID) => match v {
                    Fin::Val(Val::Pair(a, b)) => s.pool_id = Some((a, b)),
                    other => self.mismatch(at, kind, k, "a pair of integers", other.describe()),
                },
                Some(K_EXPANDABLE) => match v {
                    Fin::Val(Val::Bool(b)) => s.is_expandable = Some(b),
                    other => self.mismatch(at, kind, k, "a bool", other.describe()),
                },
                Some(K_FRAMES) => s.stack = self.stack(v, kind, K_FRAMES, at).unwrap_or(0),
                Some(K_BLOCKS) => match v {
                    Fin::Rec(_, State::Blocks(b)) => s.blocks = b,
                    other => self.mismatch(at, kind, k, "a list of blocks", other.describe()),
                },
                _ => {}
            },
            (State::Blocks(list), _) => match v {
                Fin::Rec(_, State::Block(b)) => list.push(*b),
                other => self.mismatch(at, kind, None, "a block dict", other.describe()),
            },
            (State::Block(b), _) => match k {
                Some(K_ADDRESS) => b.address = self.uint(&v, kind, K_ADDRESS, at),
                Some(K_SIZE) => b.size = self.uint(&v, kind, K_SIZE, at),
                Some(K_REQUESTED_SIZE) => {
                    b.requested_size = self.uint(&v, kind, K_REQUESTED_SIZE, at)
                }
                Some(K_STATE) => {
                    b.state = self.string(&v, kind, K_STATE, at).map(|w| match w {
                        x if x == W_STATES => BlockState::ActiveAllocated,
                        x if x == W_STATES + 1 => BlockState::ActiveAwaitingFree,
                        x if x == W_STATES + 2 => BlockState::ActivePendingFree,
                        x if x == W_STATES + 3 => BlockState::Inactive,
                        _ => BlockState::Unknown,
                    })
                }
                Some(K_FRAMES) => b.stack = self.stack(v, kind, K_FRAMES, at),
                Some(K_HISTORY) => match v {
                    Fin::Rec(_, State::History(h)) => b.history = h,
                    other => {
                        self.mismatch(at, kind, k, "a list of history entries", other.describe())
                    }
                },
                _ => {}
            },
            (State::History(first), _) => match v {
                Fin::Rec(_, State::HistoryEntry(h)) => {
                    if first.is_none() {
                        *first = Some(h);
                    }
                }
                other => self.mismatch(at, kind, None, "a history dict", other.describe()),
            },
            (State::HistoryEntry(h), _) => match k {
                Some(K_REAL_SIZE) => h.real_size = self.uint(&v, kind, K_REAL_SIZE, at),
                Some(K_FRAMES) => h.stack = self.stack(v, kind, K_FRAMES, at).unwrap_or(0),
                _ => {}
            },
            (State::Frames(list), _) => match v {
                Fin::Val(Val::Frame(id)) => list.push(id),
                other => self.mismatch(at, kind, None, "a frame dict", other.describe()),
            },
            (State::Frame(f), _) => match k {
                Some(K_NAME) => {
                    if let Some(s) = self.string(&v, kind, K_NAME, at) {
                        f.name = s
                    }
                }
                Some(K_FILENAME) => {
                    if let Some(s) = self.string(&v, kind, K_FILENAME, at) {
                        f.filename = s
                    }
                }
                Some(K_LINE) => f.line = self.int(&v, kind, K_LINE, at).unwrap_or(0),
                _ => {}
            },
            (State::DeviceTraces(list), _) => match v {
                Fin::Rec(_, State::Trace(t)) => list.push(*t),
                other => self.mismatch(at, kind, None, "a list of trace entries", other.describe()),
            },
            (State::Trace(t), _) => match v {
                Fin::Rec(_, State::TraceEntry(e)) => {
                    self.push_entry(t, *e, at);
                    if self.spare_entries.len() < MAX_SPARES {
                        self.spare_entries.push(e);
                    }
                }
                other => self.mismatch(at, kind, None, "a trace entry dict", other.describe()),
            },
            (State::TraceEntry(e), _) => match k {
                Some(K_ACTION) => {
                    if let Some(w) = self.string(&v, kind, K_ACTION, at) {
                        let a = if (W_ACTIONS..W_ACTIONS + 9).contains(&w) {
                            Action::KNOWN[(w - W_ACTIONS) as usize]
                        } else {
                            Action::Other
                        };
                        e.action = Some((a, w));
                    }
                }
                Some(K_ADDR) => e.addr = self.uint(&v, kind, K_ADDR, at).unwrap_or(0),
                Some(K_SIZE) => e.size = self.uint(&v, kind, K_SIZE, at).unwrap_or(0),
                Some(K_STREAM) => e.stream = self.uint(&v, kind, K_STREAM, at).unwrap_or(0),
                Some(K_TIME_US) => e.time_us = self.int(&v, kind, K_TIME_US, at).unwrap_or(NO_TIME),
                Some(K_FRAMES) => e.stack = self.stack(v, kind, K_FRAMES, at).unwrap_or(0),
                Some(K_DEVICE_FREE) => e.device_free = self.uint(&v, kind, K_DEVICE_FREE, at),
                _ => {}
            },
            (State::Annotations(list), _) => match v {
                Fin::Rec(_, State::Annotation(a)) => list.push(Annotation {
                    stage: a.stage,
                    name: a.name,
                    device: a.device,
                    time_us: a.time_us.unwrap_or(NO_TIME),
                }),
                other => self.mismatch(at, kind, None, "an annotation dict", other.describe()),
            },
            (State::Annotation(a), _) => match k {
                Some(K_STAGE) => {
                    if let Some(s) = self.string(&v, kind, K_STAGE, at) {
                        a.stage = self.strings.get(s).to_string()
                    }
                }
                Some(K_NAME) => {
                    if let Some(s) = self.string(&v, kind, K_NAME, at) {
                        a.name = self.strings.get(s).to_string()
                    }
                }
                Some(K_DEVICE) => a.device = self.int(&v, kind, K_DEVICE, at).unwrap_or(0),
                Some(K_TIME_US) => a.time_us = self.int(&v, kind, K_TIME_US, at),
                _ => {}
            },
            (State::PoolId(items), _) => match v {
                // Anything but a pair of integers fails the segment's check (three items, say).
                Fin::Val(Val::Int(i)) if items.len() < 3 => items.push(i),
                _ => items.push(i64::MIN),
            },
            (State::Settings(list), _) => {
                let Some(k) = k else { return };
                let text = match v {
                    Fin::Val(Val::Str(id)) => format!("'{}'", self.strings.get(id)),
                    Fin::Val(Val::Int(i)) => i.to_string(),
                    // Debug keeps the point of a whole float, as Python's repr does (0.0, not 0).
                    Fin::Val(Val::Float(f)) => format!("{f:?}"),
                    Fin::Val(Val::Bool(b)) => if b { "True" } else { "False" }.to_string(),
                    Fin::Val(Val::None) => "None".to_string(),
                    Fin::Val(Val::Pair(a, b)) => format!("({a}, {b})"),
                    _ => "{…}".to_string(),
                };
                if list.len() < 1000 {
                    list.push((self.strings.get(k).to_string(), text));
                }
            }
        }
    }
}

impl Builder {
    /// A builder for the file named `file`.
    pub fn new(file: &str) -> Self {
        let mut strings = Strings::default();
        for w in WORDS {
            let _ = strings.intern(w);
        }
        Builder {
            file: file.to_string(),
            ctx: Ctx {
                strings,
                frames: Frames::default(),
                stacks: Stacks::default(),
                streams: Vec::new(),
                stream_ids: HashMap::new(),
                last_stream: None,
                warnings: Warnings::default(),
                root_keys: Vec::new(),
                segments: SegAcc::default(),
                traces: None,
                settings: Vec::new(),
                annotations: Vec::new(),
                long_strings: (0, 0),
                invalid_utf8: (0, 0),
                spare_lists: Vec::new(),
                spare_entries: Vec::new(),
            },
            slots: Vec::new(),
            free: Vec::new(),
            batches: Batches::default(),
        }
    }

    /// The frame-list batches read before.
    pub fn batches(&mut self) -> &mut Batches {
        &mut self.batches
    }

    #[cold]
    fn limit(&self, at: u64, what: &str) -> Fail {
        Box::new(
            Diagnostic::error(
                &self.file,
                format!("more than 4 GiB of distinct {what}: beyond what memlens reads"),
            )
            .at_byte(at),
        )
    }

    /// Interns a string's UTF-8 bytes (invalid sequences are replaced and counted).
    pub fn intern_bytes(&mut self, bytes: &[u8], at: u64) -> Result<u32, Fail> {
        let id = match std::str::from_utf8(bytes) {
            Ok(s) => self.ctx.strings.intern(s),
            Err(_) => {
                let c = &mut self.ctx.invalid_utf8;
                if c.0 == 0 {
                    c.1 = at;
                }
                c.0 += 1;
                self.ctx.strings.intern(&String::from_utf8_lossy(bytes))
            }
        };
        id.ok_or_else(|| self.limit(at, "strings"))
    }

    /// Counts a string too long to keep.
    pub fn note_long_string(&mut self, at: u64) {
        let c = &mut self.ctx.long_strings;
        if c.0 == 0 {
            c.1 = at;
        }
        c.0 += 1;
    }

    fn predict(&self, stack: &[Val], top_mark: Option<usize>, dict: bool) -> Kind {
        let p = stack.len();
        if p == 0 {
            return if dict { Kind::RootDict } else { Kind::Segments };
        }
        let region = top_mark.and_then(|m| match m.checked_sub(1).map(|i| stack[i]) {
            Some(Val::Obj(o)) => Some((o, m + 1)),
            _ => None,
        });
        let start = region.map_or(0, |(_, s)| s);
        let slot = |v: Val| match v {
            Val::Obj(o) => self.slots.get(o as usize),
            _ => None,
        };
        // The list right below, still empty: this container may be its single APPEND item.
        let a = (p > start)
            .then(|| slot(stack[p - 1]))
            .flatten()
            .filter(|s| !s.dict && s.fresh)
            .and_then(|s| child_kind(s.kind, None, dict));
        // A key above an empty dict: this container may be its single SETITEM value.
        let b = (p >= start + 2 && matches!(stack[p - 1], Val::Str(_)))
            .then(|| slot(stack[p - 2]))
            .flatten()
            .filter(|s| s.dict && s.fresh)
            .and_then(|s| child_kind(s.kind, Some(stack[p - 1]), dict));
        // An item of the container that owns the current MARK batch.
        let c = region.and_then(|(o, start)| {
            let s = self.slots.get(o as usize)?;
            if s.dict {
                if (p - start) % 2 == 1 {
                    child_kind(s.kind, Some(stack[p - 1]), dict)
                } else {
                    Some(Kind::Skip)
                }
            } else {
                child_kind(s.kind, None, dict)
            }
        });
        // The nearest reading the schema knows wins; a wrong guess only costs a warning later.
        [a, b, c]
            .into_iter()
            .flatten()
            .find(|k| *k != Kind::Skip)
            .unwrap_or(Kind::Skip)
    }

    /// A new container (`dict` or list) starts with the stack as it is; returns its slot.
    pub fn create(
        &mut self,
        stack: &[Val],
        top_mark: Option<usize>,
        dict: bool,
        _at: u64,
    ) -> Result<u32, Fail> {
        let kind = self.predict(stack, top_mark, dict);
        let slot = Slot {
            kind,
            dict,
            fresh: true,
            memo: NO_MEMO,
            run: None,
            state: match kind {
                Kind::Frames => State::Frames(self.ctx.spare_lists.pop().unwrap_or_default()),
                Kind::TraceEntry => State::TraceEntry(match self.ctx.spare_entries.pop() {
                    Some(mut e) => {
                        *e = PTrace::default();
                        e
                    }
                    None => Box::default(),
                }),
                k => State::new(k),
            },
        };
        Ok(match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        })
    }

    /// Records that the container in `slot` is stored at memo `idx`; returns its previous entry.
    pub fn set_memo(&mut self, slot: u32, idx: u32) -> Option<u32> {
        let s = self.slots.get_mut(slot as usize)?;
        let old = std::mem::replace(&mut s.memo, idx);
        (old != NO_MEMO && old != idx).then_some(old)
    }

    /// Memo entry `idx` of the container in `slot` is being overwritten.
    pub fn clear_memo(&mut self, slot: u32, idx: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            if s.memo == idx {
                s.memo = NO_MEMO;
            }
        }
    }

    /// Appends `items` to the frame list in `slot` when they are all finished frames (the common
    /// case); returns false, changing nothing, otherwise.
    pub fn extend_frames(&mut self, slot: u32, items: &[Val]) -> bool {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return false;
        };
        let State::Frames(list) = &mut s.state else {
            return false;
        };
        if !items.iter().all(|v| matches!(v, Val::Frame(_))) {
            return false;
        }
        list.extend(items.iter().map(|v| match v {
            Val::Frame(id) => *id,
            _ => 0,
        }));
        s.fresh = false;
        s.run = None;
        true
    }

    /// True when the container in `slot` is a frame list.
    pub fn is_frame_list(&self, slot: u32) -> bool {
        matches!(
            self.slots.get(slot as usize),
            Some(Slot {
                state: State::Frames(_),
                ..
            })
        )
    }

    /// Appends frame ids to the frame list in `slot` (a batch read by the machine's fast path).
    pub fn extend_frame_ids(&mut self, slot: u32, ids: &[u32]) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            if let State::Frames(list) = &mut s.state {
                list.extend_from_slice(ids);
                s.fresh = false;
                s.run = None;
            }
        }
    }

    /// Appends the frame ids of the cached run `r` to the frame list in `slot`; an empty list
    /// remembers the run, so that it may take the run's stack id when it is finished.
    pub fn extend_from_run(&mut self, slot: u32, r: RunRef) {
        let Builder { slots, batches, .. } = self;
        if let Some(s) = slots.get_mut(slot as usize) {
            if let State::Frames(list) = &mut s.state {
                s.run = list.is_empty().then_some(r);
                list.extend_from_slice(batches.ids(r));
                s.fresh = false;
            }
        }
    }

    /// A batch of items (`APPENDS`, `SETITEMS`) was added to the container in `slot`.
    pub fn batch_done(&mut self, slot: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            s.fresh = false;
        }
    }

    /// The interned value of a frame or frame list as it stands (a container referenced again
    /// while still on the stack); anything else cannot be shared and becomes `Skipped`.
    pub fn provisional(&mut self, slot: u32, at: u64) -> Val {
        let Some(s) = self.slots.get(slot as usize) else {
            return Val::Skipped;
        };
        match &s.state {
            State::Frame(f) => self.frame_id(*f).map_or(Val::Skipped, Val::Frame),
            State::Frames(list) => {
                let list = list.clone();
                self.ctx
                    .stacks
                    .intern(&list)
                    .map_or(Val::Skipped, Val::Stack)
            }
            _ => {
                let noun = s.kind.noun();
                if s.kind != Kind::Skip {
                    self.ctx.warn(
                        at,
                        format!("{noun} is referenced again while still being read; the reference is ignored"),
                    );
                }
                Val::Skipped
            }
        }
    }

    fn frame_id(&mut self, mut f: Frame) -> Option<u32> {
        let empty = self.ctx.strings.intern("")?;
        if f.name == u32::MAX {
            f.name = empty;
        }
        if f.filename == u32::MAX {
            f.filename = empty;
        }
        self.ctx.frames.intern(f)
    }

    /// Takes the container out of `slot`: frames and frame lists become their ids, records their
    /// state; its memo entry becomes what it turned into.
    fn take(&mut self, slot: u32, at: u64, memo_out: &mut Memo) -> Result<Fin, Fail> {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return Ok(Fin::Val(Val::Skipped));
        };
        let kind = s.kind;
        let memo = s.memo;
        let run = s.run.take();
        let state = std::mem::replace(&mut s.state, State::Empty);
        self.free.push(slot);
        let fin = match state {
            State::Frame(f) => match self.frame_id(f) {
                Some(id) => Fin::Val(Val::Frame(id)),
                None => return Err(self.limit(at, "frames")),
            },
            State::Frames(mut list) => {
                // A list of one cached run is the stack the run made before, if it made one.
                let id = match run.and_then(|r| self.batches.stack(r)) {
                    Some(id) => Some(id),
                    None => {
                        let id = self.ctx.stacks.intern(&list);
                        if let (Some(r), Some(id)) = (run, id) {
                            self.batches.set_stack(r, id);
                        }
                        id
                    }
                };
                if self.ctx.spare_lists.len() < MAX_SPARES && list.capacity() <= MAX_SPARE_LIST {
                    list.clear();
                    self.ctx.spare_lists.push(list);
                }
                match id {
                    Some(id) => Fin::Val(Val::Stack(id)),
                    None => return Err(self.limit(at, "stack frames")),
                }
            }
            // A pool id written as a list is the pickle's tuple; anything else is not a pool id.
            State::PoolId(items) => Fin::Val(match items[..] {
                [a, b] => match (i32::try_from(a), i32::try_from(b)) {
                    (Ok(a), Ok(b)) => Val::Pair(a, b),
                    _ => Val::Skipped,
                },
                _ => Val::Skipped,
            }),
            st => Fin::Rec(kind, st),
        };
        if memo != NO_MEMO {
            let v = match &fin {
                Fin::Val(v) => *v,
                Fin::Rec(..) => Val::Skipped,
            };
            memo_out.set(memo as usize, v);
        }
        Ok(fin)
    }

    /// Drops a container that goes nowhere (popped, an item of an ignored value, the leftovers
    /// at `STOP`).
    pub fn discard(&mut self, slot: u32, memo: &mut Memo) {
        let _ = self.take(slot, 0, memo);
    }

    /// Folds `child` (under `key` for a dict) into the container in `parent`.
    pub fn attach(
        &mut self,
        parent: u32,
        key: Option<Val>,
        child: Val,
        at: u64,
        memo: &mut Memo,
    ) -> Result<(), Fail> {
        let fin = match child {
            Val::Obj(c) => self.take(c, at, memo)?,
            v => Fin::Val(v),
        };
        if let Some(Val::Obj(k)) = key {
            let _ = self.take(k, at, memo)?;
        }
        let Some(p) = self.slots.get_mut(parent as usize) else {
            return Ok(());
        };
        p.fresh = false;
        p.run = None;
        if p.dict != key.is_some() {
            let what = if p.dict { "SETITEM" } else { "APPEND" };
            return Err(Box::new(
                Diagnostic::error(
                    &self.file,
                    format!(
                        "items are added to a {} as if it were a {} (corrupt pickle)",
                        if p.dict { "dict" } else { "list" },
                        if p.dict { "list" } else { "dict" }
                    ),
                )
                .at_byte(at)
                .in_field(what),
            ));
        }
        let kind = p.kind;
        self.ctx.accept(kind, &mut p.state, key, fin, at);
        Ok(())
    }

    /// Builds the model once the machine reached `STOP` with `top` as the pickle's value.
    pub fn finish(mut self, top: Val, protocol: u8, file_bytes: u64) -> Result<Snapshot, Fail> {
        let mut memo = Memo::default();
        let root = match top {
            Val::Obj(slot) => Some(self.take(slot, file_bytes, &mut memo)?),
            _ => None,
        };
        let layout = match root {
            Some(Fin::Rec(Kind::RootDict, _)) => {
                if !self
                    .ctx
                    .root_keys
                    .iter()
                    .any(|k| k == "segments" || k == "device_traces")
                {
                    return Err(Box::new(Diagnostic::error(
                        &self.file,
                        format!(
                            "the {} holds a dict without 'segments' or 'device_traces' (keys: {}); not a memory snapshot",
                            form(protocol),
                            self.ctx.root_keys.join(", ")
                        ),
                    )));
                }
                Layout::Dict(std::mem::take(&mut self.ctx.root_keys))
            }
            Some(Fin::Rec(Kind::Segments, State::Segments(acc))) => {
                self.ctx.segments = *acc;
                Layout::SegmentList
            }
            _ => {
                let found = match &root {
                    Some(f) => f.describe(),
                    None => top.describe(),
                };
                return Err(Box::new(Diagnostic::error(
                    &self.file,
                    format!(
                        "the {} holds {found}; a memory snapshot is a dict with 'segments' and 'device_traces' or a list of segments",
                        form(protocol)
                    ),
                )));
            }
        };
        let ctx = self.ctx;
        let mut warnings: Vec<Diagnostic> = ctx
            .warnings
            .list
            .into_iter()
            .map(|(msg, n, at)| Diagnostic::warning(&self.file, msg).at_byte(at).times(n))
            .collect();
        if ctx.long_strings.0 > 0 {
            warnings.push(
                Diagnostic::warning(&self.file, "strings longer than 1 MiB were skipped")
                    .at_byte(ctx.long_strings.1)
                    .times(ctx.long_strings.0),
            );
        }
        if ctx.invalid_utf8.0 > 0 {
            warnings.push(
                Diagnostic::warning(
                    &self.file,
                    "strings that are not valid UTF-8 were kept with U+FFFD in place of the bad bytes",
                )
                .at_byte(ctx.invalid_utf8.1)
                .times(ctx.invalid_utf8.0),
            );
        }
        Ok(Snapshot {
            file: self.file,
            file_bytes,
            protocol,
            layout,
            strings: ctx.strings,
            frames: ctx.frames,
            stacks: ctx.stacks,
            segments: ctx.segments.segments,
            blocks: ctx.segments.blocks,
            traces: ctx.traces.unwrap_or_default(),
            streams: ctx.streams,
            allocator_settings: ctx.settings,
            annotations: ctx.annotations,
            warnings,
        })
    }
}
