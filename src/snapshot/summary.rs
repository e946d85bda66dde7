//! The summary of a snapshot and its analysis as one serialisable object: what
//! `memlens snapshot --json` prints and the page's `summary.json`. Keys are stable (documented
//! in `docs/snapshot.md`).

use super::analysis::{Analysis, DeviceAnalysis, FrameGroup, NONE, NO_STACK};
use super::model::{BlockState, Layout, Snapshot};
use crate::diag::Diagnostic;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// How many frame groups the summary lists (the views and CSV files list all).
pub const TOP_GROUPS: usize = 10;

/// One group of allocations by top user frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupRow {
    /// Source file of the frame (`null` for the frameless groups).
    pub filename: Option<String>,
    /// Line.
    pub line: Option<i64>,
    /// Function.
    pub name: Option<String>,
    /// False for the group of allocations without any recorded stack.
    pub stack_recorded: bool,
    /// Bytes held.
    pub bytes: u64,
    /// Allocations.
    pub count: u64,
}

/// Groups by top user frame: how many, their total, the largest ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Groups {
    /// Number of groups.
    pub groups: usize,
    /// Σ bytes of all groups.
    pub bytes: u64,
    /// The [`TOP_GROUPS`] largest.
    pub top: Vec<GroupRow>,
}

/// Count and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CountBytes {
    /// How many.
    pub count: u64,
    /// Σ bytes.
    pub bytes: u64,
}

/// An `oom` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OomRow {
    /// Entry index.
    pub trace_index: u32,
    /// Time, if recorded.
    pub time_us: Option<i64>,
    /// Bytes requested.
    pub size: u64,
    /// Free device memory reported.
    pub device_free: Option<u64>,
    /// Stream handle.
    pub stream: u64,
}

/// Ordered map (serde_json sorts its own maps; device "10" must follow "9").
#[derive(Debug, Clone, PartialEq)]
pub struct Ordered<V>(pub Vec<(String, V)>);

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The figures of one device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceSummary {
    /// Segments.
    pub segments: usize,
    /// Σ segment `total_size`.
    pub reserved_bytes: u64,
    /// Σ size of `active_allocated` blocks.
    pub allocated_bytes: u64,
    /// Σ `requested_size` of `active_allocated` blocks.
    pub requested_bytes: u64,
    /// Blocks.
    pub blocks: u64,
    /// Blocks per state.
    pub blocks_by_state: Ordered<CountBytes>,
    /// Trace entries.
    pub trace_entries: u64,
    /// Entries per action (every known action, then others by name).
    pub actions: Ordered<u64>,
    /// Number of `oom` entries.
    pub oom_events: usize,
    /// The `oom` entries.
    pub ooms: Vec<OomRow>,
    /// Allocated bytes before the first entry.
    pub baseline_allocated_bytes: i64,
    /// Highest allocated bytes over the trace.
    pub peak_allocated_bytes: i64,
    /// Entry after which the peak is first reached (`null`: before the first entry).
    pub peak_trace_index: Option<u32>,
    /// Its time.
    pub peak_time_us: Option<i64>,
    /// Time of the first entry with one.
    pub first_time_us: Option<i64>,
    /// Time of the last entry with one.
    pub last_time_us: Option<i64>,
    /// Allocations alive at the peak by top user frame.
    pub live_at_peak_by_frame: Groups,
    /// `active_allocated` blocks at the snapshot by top user frame (leak candidates).
    pub live_at_snapshot_by_frame: Groups,
    /// Σ (segment `total_size` − its allocated blocks).
    pub free_in_segments_bytes: u64,
    /// Largest `inactive` block.
    pub largest_free_block: u64,
}

/// A `key = value` of `allocator_settings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// Key.
    pub key: String,
    /// Value as Python would print it (`{…}` for nested dicts).
    pub value: String,
}

/// The summary object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The file.
    pub file: String,
    /// Its size.
    pub bytes: u64,
    /// Pickle protocol; 0 for the JSON form.
    pub protocol: u8,
    /// `dict` or `segment_list`.
    pub layout: &'static str,
    /// Top-level keys, in file order (empty for a segment list).
    pub keys: Vec<String>,
    /// Devices by id.
    pub devices: Ordered<DeviceSummary>,
    /// Distinct frames.
    pub distinct_frames: usize,
    /// Distinct non-empty stacks.
    pub distinct_stacks: usize,
    /// Distinct streams in the trace.
    pub streams: usize,
    /// `allocator_settings`.
    pub allocator_settings: Vec<Setting>,
    /// Number of `external_annotations`.
    pub annotations: usize,
    /// Warnings of the reader.
    pub warnings: Vec<Diagnostic>,
}

/// One group as a row.
pub fn group_row(snap: &Snapshot, g: &FrameGroup) -> GroupRow {
    let f = snap.frames.get(g.frame);
    GroupRow {
        filename: f.map(|f| snap.strings.get(f.filename).to_string()),
        line: f.map(|f| f.line),
        name: f.map(|f| snap.strings.get(f.name).to_string()),
        stack_recorded: g.frame != NO_STACK,
        bytes: g.bytes,
        count: g.count,
    }
}

/// The label of a group's frame: `file:line name`, or the frameless groups' words.
pub fn group_label(snap: &Snapshot, frame: u32) -> String {
    match snap.frames.get(frame) {
        Some(f) => format!(
            "{}:{} {}",
            snap.strings.get(f.filename),
            f.line,
            snap.strings.get(f.name)
        ),
        None if frame == NONE => "(no Python frame)".to_string(),
        None => "(no stack recorded)".to_string(),
    }
}

fn groups(snap: &Snapshot, v: &[FrameGroup]) -> Groups {
    Groups {
        groups: v.len(),
        bytes: v.iter().map(|g| g.bytes).fold(0u64, u64::saturating_add),
        top: v
            .iter()
            .take(TOP_GROUPS)
            .map(|g| group_row(snap, g))
            .collect(),
    }
}

fn device(snap: &Snapshot, d: &DeviceAnalysis) -> DeviceSummary {
    DeviceSummary {
        segments: d.segments.len(),
        reserved_bytes: d.reserved_bytes,
        allocated_bytes: d.allocated_bytes,
        requested_bytes: d.requested_bytes,
        blocks: d.blocks,
        blocks_by_state: Ordered(
            BlockState::ALL
                .iter()
                .zip(d.by_state)
                .filter(|(s, t)| **s != BlockState::Unknown || t.count > 0)
                .map(|(s, t)| {
                    (
                        s.label().to_string(),
                        CountBytes {
                            count: t.count,
                            bytes: t.bytes,
                        },
                    )
                })
                .collect(),
        ),
        trace_entries: d.trace_entries,
        actions: Ordered(d.actions.clone()),
        oom_events: d.ooms.len(),
        ooms: d
            .ooms
            .iter()
            .map(|o| OomRow {
                trace_index: o.index,
                time_us: o.time_us,
                size: o.size,
                device_free: o.device_free,
                stream: o.stream,
            })
            .collect(),
        baseline_allocated_bytes: d.baseline_bytes,
        peak_allocated_bytes: d.peak_allocated_bytes,
        peak_trace_index: d.peak_trace_index,
        peak_time_us: d.peak_time_us,
        first_time_us: d.time_range.map(|r| r.0),
        last_time_us: d.time_range.map(|r| r.1),
        live_at_peak_by_frame: groups(snap, &d.live_at_peak),
        live_at_snapshot_by_frame: groups(snap, &d.live_at_snapshot),
        free_in_segments_bytes: d
            .fragmentation
            .iter()
            .map(|f| f.free)
            .fold(0u64, u64::saturating_add),
        largest_free_block: d.largest_free_block,
    }
}

/// The summary of `snap` with its analysis `a`.
pub fn summary(snap: &Snapshot, a: &Analysis) -> Summary {
    let (layout, keys) = match &snap.layout {
        Layout::Dict(keys) => ("dict", keys.clone()),
        Layout::SegmentList => ("segment_list", Vec::new()),
    };
    Summary {
        file: snap.file.clone(),
        bytes: snap.file_bytes,
        protocol: snap.protocol,
        layout,
        keys,
        devices: Ordered(
            a.devices
                .iter()
                .map(|d| (d.device.to_string(), device(snap, d)))
                .collect(),
        ),
        distinct_frames: snap.frames.len(),
        distinct_stacks: snap.stacks.len() - 1,
        streams: snap.streams.len(),
        allocator_settings: snap
            .allocator_settings
            .iter()
            .map(|(k, v)| Setting {
                key: k.clone(),
                value: v.clone(),
            })
            .collect(),
        annotations: snap.annotations.len(),
        warnings: snap.warnings.clone(),
    }
}

/// The summary as the JSON text `--json` prints (pretty, with a final newline).
pub fn to_json(s: &Summary) -> String {
    let mut t =
        serde_json::to_string_pretty(s).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    t.push('\n');
    t
}
