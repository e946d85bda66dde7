//! Per-device analysis of a snapshot: reserved and allocated memory at the snapshot, counts per
//! action, OOM events, the allocated-bytes curve over the trace with its peak, who holds memory at
//! the peak and at the snapshot (by top user frame), and fragmentation per segment.
//!
//! The curve replays `alloc` (+size) and `free_completed` (−size) from a baseline equal to the
//! allocated bytes at the snapshot minus the trace's net change, so it ends at the snapshot's
//! figure (the trace is a ring buffer: it may start long after the first allocation). Every
//! allocation the trace or the snapshot shows becomes an [`Element`] with the entry interval it is
//! alive in; the timeline view stacks them, the peak tables group those alive at the peak.

use super::model::{Action, BlockState, Snapshot, Trace, NO_TIME};
use crate::frames::{is_library_path, is_python_source};
use std::collections::{BTreeMap, HashMap};

/// "None" for entry indices; as a group's frame: the stack has no Python frame.
pub const NONE: u32 = u32::MAX;
/// As a group's frame: no stack was recorded for the allocation.
pub const NO_STACK: u32 = u32::MAX - 1;

/// Where an [`Element`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// An `alloc` entry of the trace (its stack is the allocation's).
    Alloc,
    /// A `free_completed` entry whose `alloc` came before the trace began (its stack is the
    /// free's: the allocation's is unknown).
    FreeOnly,
    /// A block allocated at the snapshot whose `alloc` came before the trace began.
    Block,
}

/// One allocation over the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    /// Entry index of its `alloc`, or [`NONE`] when allocated before the trace.
    pub start: u32,
    /// Entry index of its `free_completed`, or [`NONE`] when still allocated at the snapshot.
    pub end: u32,
    /// Bytes.
    pub size: u64,
    /// Address.
    pub addr: u64,
    /// Stack id.
    pub stack: u32,
    /// Where it comes from.
    pub origin: Origin,
}

impl Element {
    /// True when allocated after entry `at` is applied (`None`: before the first entry).
    pub fn live_at(&self, at: Option<u32>) -> bool {
        match at {
            None => self.start == NONE,
            Some(p) => {
                (self.start == NONE || self.start <= p) && (self.end == NONE || self.end > p)
            }
        }
    }
}

/// Allocations grouped by the top user frame of their stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameGroup {
    /// Frame id, [`NONE`] when the stack has no Python frame, [`NO_STACK`] when there is no stack.
    pub frame: u32,
    /// Bytes held.
    pub bytes: u64,
    /// Number of allocations.
    pub count: u64,
    /// The stack of the group's largest allocation.
    pub stack: u32,
}

/// An `oom` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oom {
    /// Entry index.
    pub index: u32,
    /// Microseconds since the epoch, if recorded.
    pub time_us: Option<i64>,
    /// Bytes requested.
    pub size: u64,
    /// Free device memory the allocator reported.
    pub device_free: Option<u64>,
    /// Stream handle.
    pub stream: u64,
}

/// Free space of one segment at the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFree {
    /// Index into [`Snapshot::segments`].
    pub segment: u32,
    /// Bytes reserved.
    pub reserved: u64,
    /// Bytes in `active_allocated` blocks.
    pub allocated: u64,
    /// `reserved − allocated`.
    pub free: u64,
    /// Largest `inactive` block.
    pub largest_free_block: u64,
}

/// Count and bytes of blocks in one state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StateTotal {
    /// Blocks.
    pub count: u64,
    /// Σ size.
    pub bytes: u64,
}

/// The analysis of one device.
#[derive(Debug, Clone)]
pub struct DeviceAnalysis {
    /// Device id.
    pub device: i64,
    /// Indices into [`Snapshot::segments`] of this device's segments, by address.
    pub segments: Vec<u32>,
    /// Σ segment `total_size`.
    pub reserved_bytes: u64,
    /// Σ size of `active_allocated` blocks.
    pub allocated_bytes: u64,
    /// Σ `requested_size` of `active_allocated` blocks.
    pub requested_bytes: u64,
    /// Number of blocks.
    pub blocks: u64,
    /// Blocks per state, in [`BlockState::ALL`] order.
    pub by_state: [StateTotal; 5],
    /// Index into [`Snapshot::traces`] of this device's trace, if it has one.
    pub trace: Option<usize>,
    /// Number of trace entries.
    pub trace_entries: u64,
    /// Entries per action word (known words always present, in [`Action::KNOWN`] order, then
    /// the others by name).
    pub actions: Vec<(String, u64)>,
    /// `oom` entries.
    pub ooms: Vec<Oom>,
    /// Allocated bytes before the first entry (may be negative if the trace and the snapshot
    /// disagree).
    pub baseline_bytes: i64,
    /// Highest allocated bytes over the trace (the snapshot's figure without a trace).
    pub peak_allocated_bytes: i64,
    /// Entry after which the peak is first reached (`None`: before the first entry).
    pub peak_trace_index: Option<u32>,
    /// Time of that entry.
    pub peak_time_us: Option<i64>,
    /// Allocations known over the trace, in stacking order (bottom first).
    pub elements: Vec<Element>,
    /// Elements alive at the peak by top user frame, largest first.
    pub live_at_peak: Vec<FrameGroup>,
    /// `active_allocated` blocks at the snapshot by top user frame, largest first.
    pub live_at_snapshot: Vec<FrameGroup>,
    /// Free space per segment, by address.
    pub fragmentation: Vec<SegmentFree>,
    /// Largest `inactive` block of the device.
    pub largest_free_block: u64,
    /// `time_us` of the first and last entries that have one.
    pub time_range: Option<(i64, i64)>,
}

/// The analysis of a whole snapshot.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Devices by id.
    pub devices: Vec<DeviceAnalysis>,
    /// Top user frame of every stack (index = stack id; [`NONE`] when it has no Python frame,
    /// [`NO_STACK`] for the empty stack).
    pub top_frame: Vec<u32>,
}

impl Analysis {
    /// The device with id `device`.
    pub fn device(&self, device: i64) -> Option<&DeviceAnalysis> {
        self.devices.iter().find(|d| d.device == device)
    }
}

/// The top user frame of every stack: the first (innermost) Python frame outside libraries,
/// else the innermost Python frame, else [`NONE`] ([`NO_STACK`] for the empty stack).
pub fn top_frames(snap: &Snapshot) -> Vec<u32> {
    let mut user = vec![None::<bool>; snap.frames.len()];
    let mut classify = |f: u32| -> (bool, bool) {
        let Some(frame) = snap.frames.get(f) else {
            return (false, false);
        };
        let file = snap.strings.get(frame.filename);
        let py = is_python_source(file);
        let u = *user[f as usize].get_or_insert_with(|| py && !is_library_path(file));
        (py, u)
    };
    (0..snap.stacks.len() as u32)
        .map(|s| {
            if snap.stacks.get(s).is_empty() {
                return NO_STACK;
            }
            let mut first_py = NONE;
            for &f in snap.stacks.get(s) {
                let (py, u) = classify(f);
                if u {
                    return f;
                }
                if py && first_py == NONE {
                    first_py = f;
                }
            }
            first_py
        })
        .collect()
}

/// Groups `(size, stack)` items by top user frame: largest first, ties by file, line and name,
/// the frameless groups last.
fn group(
    snap: &Snapshot,
    elements: impl Iterator<Item = (u64, u32)>,
    top_frame: &[u32],
) -> Vec<FrameGroup> {
    let mut by: HashMap<u32, FrameGroup> = HashMap::new();
    let mut biggest: HashMap<u32, u64> = HashMap::new();
    for (size, stack) in elements {
        let frame = top_frame.get(stack as usize).copied().unwrap_or(NONE);
        let g = by.entry(frame).or_insert(FrameGroup {
            frame,
            bytes: 0,
            count: 0,
            stack,
        });
        g.bytes = g.bytes.saturating_add(size);
        g.count += 1;
        let b = biggest.entry(frame).or_insert(0);
        if size > *b {
            *b = size;
            g.stack = stack;
        }
    }
    let mut v: Vec<FrameGroup> = by.into_values().collect();
    let key = |g: &FrameGroup| match snap.frames.get(g.frame) {
        Some(f) => (
            0,
            snap.strings.get(f.filename),
            f.line,
            snap.strings.get(f.name),
        ),
        None => (if g.frame == NONE { 1 } else { 2 }, "", 0, ""),
    };
    v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| key(a).cmp(&key(b))));
    v
}

/// Elements of a trace, in stacking order: blocks allocated before the trace and still allocated
/// at the bottom, then allocations freed in the trace whose `alloc` came before it (the one freed
/// last lowest), then the trace's allocations in order.
pub fn elements(trace: &Trace, device_blocks: &[(u64, u64, u32)]) -> Vec<Element> {
    let n = trace.len();
    // Sized up front: for a large trace this is one of the biggest arrays kept.
    let n_allocs = trace.action.iter().filter(|a| **a == Action::Alloc).count();
    let mut allocs: Vec<Element> = Vec::with_capacity(n_allocs);
    let mut free_only: Vec<Element> = Vec::new();
    let mut live: HashMap<u64, usize> = HashMap::new();
    for i in 0..n {
        let addr = trace.addr[i];
        match trace.action[i] {
            Action::Alloc => {
                live.insert(addr, allocs.len());
                allocs.push(Element {
                    start: i as u32,
                    end: NONE,
                    size: trace.size[i],
                    addr,
                    stack: trace.stack[i],
                    origin: Origin::Alloc,
                });
            }
            Action::FreeCompleted => match live.remove(&addr) {
                Some(e) => allocs[e].end = i as u32,
                None => free_only.push(Element {
                    start: NONE,
                    end: i as u32,
                    size: trace.size[i],
                    addr,
                    stack: trace.stack[i],
                    origin: Origin::FreeOnly,
                }),
            },
            _ => {}
        }
    }
    // The trace's allocations go last: the others are put in front of them in place (one
    // buffer, not two of the largest array).
    free_only.reverse();
    let before: Vec<Element> = device_blocks
        .iter()
        .filter(|(addr, _, _)| !live.contains_key(addr))
        .map(|&(addr, size, stack)| Element {
            start: NONE,
            end: NONE,
            size,
            addr,
            stack,
            origin: Origin::Block,
        })
        .chain(free_only)
        .collect();
    allocs.splice(0..0, before);
    allocs
}

/// Allocated bytes after each entry, starting from `baseline` (entry `i` → element `i`).
pub fn allocated_curve(trace: &Trace, baseline: i64) -> Vec<i64> {
    let mut v = baseline;
    trace
        .action
        .iter()
        .zip(&trace.size)
        .map(|(a, &s)| {
            match a {
                Action::Alloc => v = v.saturating_add(s as i64),
                Action::FreeCompleted => v = v.saturating_sub(s as i64),
                _ => {}
            }
            v
        })
        .collect()
}

fn net_change(trace: &Trace) -> i128 {
    trace
        .action
        .iter()
        .zip(&trace.size)
        .map(|(a, &s)| match a {
            Action::Alloc => s as i128,
            Action::FreeCompleted => -(s as i128),
            _ => 0,
        })
        .sum()
}

fn analyse_device<E>(
    snap: &Snapshot,
    device: i64,
    segs: Vec<u32>,
    trace_idx: Option<usize>,
    top_frame: &[u32],
    stop: &mut dyn FnMut() -> Result<(), E>,
) -> Result<DeviceAnalysis, E> {
    let mut reserved = 0u64;
    let mut allocated = 0u64;
    let mut requested = 0u64;
    let mut blocks = 0u64;
    let mut by_state = [StateTotal::default(); 5];
    let mut frag = Vec::with_capacity(segs.len());
    let mut largest_free_block = 0u64;
    let mut alive: Vec<(u64, u64, u32)> = Vec::new();
    for &si in &segs {
        let s = &snap.segments[si as usize];
        reserved = reserved.saturating_add(s.total_size);
        let mut seg_alloc = 0u64;
        let mut seg_largest = 0u64;
        for b in snap.blocks_of(s) {
            blocks += 1;
            let k = BlockState::ALL
                .iter()
                .position(|x| *x == b.state)
                .unwrap_or(4);
            by_state[k].count += 1;
            by_state[k].bytes = by_state[k].bytes.saturating_add(b.size);
            match b.state {
                BlockState::ActiveAllocated => {
                    seg_alloc = seg_alloc.saturating_add(b.size);
                    requested = requested.saturating_add(b.requested_size);
                    alive.push((b.address, b.size, b.stack));
                }
                BlockState::Inactive => seg_largest = seg_largest.max(b.size),
                _ => {}
            }
        }
        allocated = allocated.saturating_add(seg_alloc);
        largest_free_block = largest_free_block.max(seg_largest);
        frag.push(SegmentFree {
            segment: si,
            reserved: s.total_size,
            allocated: seg_alloc,
            free: s.total_size.saturating_sub(seg_alloc),
            largest_free_block: seg_largest,
        });
    }
    stop()?;
    let live_at_snapshot = group(snap, alive.iter().map(|&(_, s, st)| (s, st)), top_frame);
    stop()?;

    let empty = Trace::default();
    let trace = trace_idx.map_or(&empty, |i| &snap.traces[i]);
    let mut counts = [0u64; 9];
    let mut others: BTreeMap<String, u64> = BTreeMap::new();
    for &a in &trace.action {
        if let Some(k) = Action::KNOWN.iter().position(|x| *x == a) {
            counts[k] += 1;
        }
    }
    for &(_, w) in &trace.other_actions {
        *others.entry(snap.strings.get(w).to_string()).or_insert(0) += 1;
    }
    let mut actions: Vec<(String, u64)> = Action::KNOWN
        .iter()
        .zip(counts)
        .map(|(a, c)| (a.label().to_string(), c))
        .collect();
    actions.extend(others);

    let ooms = trace
        .action
        .iter()
        .enumerate()
        .filter(|(_, a)| **a == Action::Oom)
        .map(|(i, _)| Oom {
            index: i as u32,
            time_us: Some(trace.time_us[i]).filter(|&t| t != NO_TIME),
            size: trace.size[i],
            device_free: trace.device_free_of(i as u32),
            stream: snap
                .streams
                .get(trace.stream[i] as usize)
                .copied()
                .unwrap_or(0),
        })
        .collect();

    let baseline =
        (allocated as i128 - net_change(trace)).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    let mut peak = baseline;
    let mut peak_idx = None;
    let mut v = baseline;
    for (i, (a, &s)) in trace.action.iter().zip(&trace.size).enumerate() {
        match a {
            Action::Alloc => v = v.saturating_add(s as i64),
            Action::FreeCompleted => v = v.saturating_sub(s as i64),
            _ => continue,
        }
        if v > peak {
            peak = v;
            peak_idx = Some(i as u32);
        }
    }
    let peak_time_us = peak_idx
        .map(|i| trace.time_us[i as usize])
        .filter(|&t| t != NO_TIME);
    stop()?;

    let elements = elements(trace, &alive);
    stop()?;
    let live_at_peak = group(
        snap,
        elements
            .iter()
            .filter(|e| e.live_at(peak_idx))
            .map(|e| (e.size, e.stack)),
        top_frame,
    );
    let times = trace.time_us.iter().copied().filter(|&t| t != NO_TIME);
    let mut times = times;
    let time_range = times.next().map(|a| (a, times.next_back().unwrap_or(a)));

    Ok(DeviceAnalysis {
        device,
        segments: segs,
        reserved_bytes: reserved,
        allocated_bytes: allocated,
        requested_bytes: requested,
        blocks,
        by_state,
        trace: trace_idx,
        trace_entries: trace.len() as u64,
        actions,
        ooms,
        baseline_bytes: baseline,
        peak_allocated_bytes: peak,
        peak_trace_index: peak_idx,
        peak_time_us,
        elements,
        live_at_peak,
        live_at_snapshot,
        fragmentation: frag,
        largest_free_block,
        time_range,
    })
}

/// Analyses every device that has segments or a non-empty trace.
pub fn analyse(snap: &Snapshot) -> Analysis {
    match analyse_with(snap, &mut || Ok::<(), std::convert::Infallible>(())) {
        Ok(a) => a,
        Err(never) => match never {},
    }
}

/// [`analyse`], asking `stop` between the steps of each device's analysis (its segments, the
/// blocks alive grouped by frame, the trace's replay to the peak, the elements, those live at
/// the peak grouped): a load that may be stopped ends with `stop`'s error within one step, not
/// after every device's timeline.
pub fn analyse_with<E>(
    snap: &Snapshot,
    stop: &mut dyn FnMut() -> Result<(), E>,
) -> Result<Analysis, E> {
    let top_frame = top_frames(snap);
    let mut by_device: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
    for (i, s) in snap.segments.iter().enumerate() {
        by_device.entry(s.device).or_default().push(i as u32);
    }
    for (d, t) in snap.traces.iter().enumerate() {
        if !t.is_empty() {
            by_device.entry(d as i64).or_default();
        }
    }
    let devices = by_device
        .into_iter()
        .map(|(device, mut segs)| {
            segs.sort_by_key(|&i| snap.segments[i as usize].address);
            let trace = usize::try_from(device)
                .ok()
                .filter(|&d| d < snap.traces.len());
            analyse_device(snap, device, segs, trace, &top_frame, &mut *stop)
        })
        .collect::<Result<_, E>>()?;
    Ok(Analysis { devices, top_frame })
}
