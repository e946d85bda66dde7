//! The snapshot model: what the reader keeps of a `_dump_snapshot` pickle.
//!
//! Segments and blocks are rows of plain structs (there are thousands); the trace — millions of
//! entries in a large snapshot — is columnar per device. Frames and stacks are interned
//! ([`super::intern`]), so an entry costs 33 bytes whatever the depth of its stack.

use super::intern::{Frames, Stacks, Strings};
use crate::diag::Diagnostic;

/// "No time": the trace entry has no `time_us` (snapshots before torch 2.1).
pub const NO_TIME: i64 = i64::MIN;

/// How the top level of the pickle is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// A dict (`segments`, `device_traces` and, in newer versions, `allocator_settings` and
    /// `external_annotations`); the keys found, in file order.
    Dict(Vec<String>),
    /// A bare list of segments (`torch.cuda.memory_snapshot()` output): no trace.
    SegmentList,
}

/// Kind of a segment's pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SegmentType {
    /// Large-allocation pool.
    Large,
    /// Small-allocation pool (≤ 1 MiB blocks).
    Small,
    /// Not given or another word.
    Unknown,
}

impl SegmentType {
    /// The word the snapshot uses.
    pub fn label(self) -> &'static str {
        match self {
            SegmentType::Large => "large",
            SegmentType::Small => "small",
            SegmentType::Unknown => "unknown",
        }
    }
}

/// State of a block inside a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockState {
    /// Allocated to a tensor.
    ActiveAllocated,
    /// Freed by the program, waiting for stream events before it is reused.
    ActiveAwaitingFree,
    /// Freed, free pending (older name of the above).
    ActivePendingFree,
    /// Free space in the segment.
    Inactive,
    /// Another word.
    Unknown,
}

impl BlockState {
    /// The word the snapshot uses.
    pub fn label(self) -> &'static str {
        match self {
            BlockState::ActiveAllocated => "active_allocated",
            BlockState::ActiveAwaitingFree => "active_awaiting_free",
            BlockState::ActivePendingFree => "active_pending_free",
            BlockState::Inactive => "inactive",
            BlockState::Unknown => "unknown",
        }
    }

    /// All states, in display order.
    pub const ALL: [BlockState; 5] = [
        BlockState::ActiveAllocated,
        BlockState::ActivePendingFree,
        BlockState::ActiveAwaitingFree,
        BlockState::Inactive,
        BlockState::Unknown,
    ];
}

/// What a trace entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Action {
    /// A block was handed to the program.
    Alloc,
    /// The program freed a block; it may wait for streams.
    FreeRequested,
    /// The block is free for reuse.
    FreeCompleted,
    /// A segment was reserved from the device (`cudaMalloc`).
    SegmentAlloc,
    /// A segment was returned to the device.
    SegmentFree,
    /// Pages were mapped into an expandable segment.
    SegmentMap,
    /// Pages were unmapped from an expandable segment.
    SegmentUnmap,
    /// An allocation failed; `device_free` tells the free memory then.
    Oom,
    /// A snapshot was taken (a marker).
    Snapshot,
    /// Another word (kept by name in [`Trace::other_actions`]).
    Other,
}

impl Action {
    /// Known actions, in display order.
    pub const KNOWN: [Action; 9] = [
        Action::Alloc,
        Action::FreeRequested,
        Action::FreeCompleted,
        Action::SegmentAlloc,
        Action::SegmentFree,
        Action::SegmentMap,
        Action::SegmentUnmap,
        Action::Oom,
        Action::Snapshot,
    ];

    /// The word the snapshot uses.
    pub fn label(self) -> &'static str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Oom => "oom",
            Action::Snapshot => "snapshot",
            Action::Other => "other",
        }
    }
}

/// A segment: memory reserved from the device, cut into blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Device index.
    pub device: i64,
    /// First address.
    pub address: u64,
    /// Bytes reserved.
    pub total_size: u64,
    /// Bytes in allocated blocks, as the snapshot states it.
    pub allocated_size: u64,
    /// Bytes in active blocks (allocated or awaiting free), as stated.
    pub active_size: u64,
    /// Bytes the program asked for in its blocks, as stated.
    pub requested_size: u64,
    /// Stream (the raw handle value).
    pub stream: u64,
    /// Large or small pool.
    pub segment_type: SegmentType,
    /// Memory pool id (absent in torch-2.0-era snapshots).
    pub pool_id: Option<(i32, i32)>,
    /// Expandable segment (absent in torch-2.0-era snapshots).
    pub is_expandable: Option<bool>,
    /// Stack that reserved the segment (0 = none recorded).
    pub stack: u32,
    /// This segment's blocks are `blocks[first_block .. first_block + block_count]`.
    pub first_block: u32,
    /// Number of blocks.
    pub block_count: u32,
}

/// A block of a segment.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// First address (computed from the segment and the sizes before it when the block has none).
    pub address: u64,
    /// Bytes of the block.
    pub size: u64,
    /// Bytes the program asked for.
    pub requested_size: u64,
    /// Allocated, awaiting free or free.
    pub state: BlockState,
    /// Stack that allocated it (0 = none recorded).
    pub stack: u32,
}

/// The trace of one device, columnar: entry `i` is the `i`-th element of every column.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// What happened.
    pub action: Vec<Action>,
    /// Address (0 when the entry has none, as for `oom`).
    pub addr: Vec<u64>,
    /// Bytes.
    pub size: Vec<u64>,
    /// Stream: index into [`Snapshot::streams`].
    pub stream: Vec<u32>,
    /// Microseconds since the epoch, or [`NO_TIME`].
    pub time_us: Vec<i64>,
    /// Stack id.
    pub stack: Vec<u32>,
    /// `(entry index, device_free)` of the entries that carry `device_free` (the `oom` ones).
    pub device_free: Vec<(u32, u64)>,
    /// `(entry index, action name id)` of entries with an action outside [`Action::KNOWN`].
    pub other_actions: Vec<(u32, u32)>,
}

impl Trace {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.action.len()
    }

    /// True when the trace holds no entry.
    pub fn is_empty(&self) -> bool {
        self.action.is_empty()
    }

    /// `device_free` of entry `i`, if it has one.
    pub fn device_free_of(&self, i: u32) -> Option<u64> {
        self.device_free
            .binary_search_by_key(&i, |&(j, _)| j)
            .ok()
            .map(|k| self.device_free[k].1)
    }
}

/// An external annotation (`external_annotations`: a named phase starting or ending).
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    /// `START` or `END`.
    pub stage: String,
    /// The phase's name.
    pub name: String,
    /// Device index.
    pub device: i64,
    /// Microseconds since the epoch, or [`NO_TIME`].
    pub time_us: i64,
}

/// Everything the reader keeps of one snapshot file.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The file's display name.
    pub file: String,
    /// Size of the file in bytes.
    pub file_bytes: u64,
    /// Pickle protocol; 0 for the JSON form.
    pub protocol: u8,
    /// Top-level layout.
    pub layout: Layout,
    /// Interned strings (frame names and files, action words, …).
    pub strings: Strings,
    /// Interned frames.
    pub frames: Frames,
    /// Interned stacks (id 0 = empty).
    pub stacks: Stacks,
    /// Segments in file order.
    pub segments: Vec<Segment>,
    /// Blocks of all segments, segment after segment.
    pub blocks: Vec<Block>,
    /// One trace per entry of `device_traces` (its index is the device id).
    pub traces: Vec<Trace>,
    /// Distinct stream handles; trace entries refer to them by index.
    pub streams: Vec<u64>,
    /// `allocator_settings` flattened to `key = value` text (nested dicts are shown as `{…}`).
    pub allocator_settings: Vec<(String, String)>,
    /// `external_annotations`.
    pub annotations: Vec<Annotation>,
    /// What was skipped or guessed while reading, with counts.
    pub warnings: Vec<Diagnostic>,
}

impl Snapshot {
    /// The blocks of segment `s`.
    pub fn blocks_of(&self, s: &Segment) -> &[Block] {
        let a = s.first_block as usize;
        let b = a + s.block_count as usize;
        self.blocks.get(a..b).unwrap_or(&[])
    }

    /// The frames of stack `id`, innermost first.
    pub fn stack_frames(&self, id: u32) -> impl Iterator<Item = &super::intern::Frame> + '_ {
        self.stacks
            .get(id)
            .iter()
            .filter_map(move |&f| self.frames.get(f))
    }

    /// Approximate heap bytes held by the model (for the benchmark's memory figures).
    pub fn heap_bytes(&self) -> usize {
        let trace: usize = self
            .traces
            .iter()
            .map(|t| {
                t.action.capacity()
                    + 8 * (t.addr.capacity() + t.size.capacity() + t.time_us.capacity())
                    + 4 * (t.stream.capacity() + t.stack.capacity())
                    + 16 * t.device_free.capacity()
                    + 8 * t.other_actions.capacity()
            })
            .sum();
        trace
            + self.segments.capacity() * std::mem::size_of::<Segment>()
            + self.blocks.capacity() * std::mem::size_of::<Block>()
            + self.strings.arena_bytes()
            + self.strings.len() * 12
            + self.frames.len() * 24
            + self.stacks.flat_len() * 4
            + self.stacks.len() * 12
    }
}
