//! The allocator state at the snapshot: one bar per segment, its blocks inside it coloured by
//! state, as rectangles for [`crate::chart::RectIndex`].
//!
//! Layout (memory_viz's): segments sorted by size (then address) are packed left to right into
//! rows as wide as the largest segment, so a few huge segments and hundreds of 2 MiB ones both
//! show. Data coordinates: x = bytes from the row's start, y = row (a row's bars span
//! `[10·row + 1, 10·row + 9)`, so neighbouring rows keep a gap).

use super::analysis::DeviceAnalysis;
use super::model::{BlockState, Snapshot};
use crate::chart::{RectIndex, RectSet};

/// Class of a segment's own bar (free space not listed as a block shows through).
pub const CLASS_SEGMENT: u8 = 0;
/// Class of `inactive` blocks.
pub const CLASS_FREE: u8 = 1;
/// Class of blocks freed by the program but waiting for streams.
pub const CLASS_PENDING: u8 = 2;
/// Class of `active_allocated` blocks.
pub const CLASS_ALLOCATED: u8 = 3;
/// Class of the blocks of the highlighted group (drawn on top).
pub const CLASS_HIGHLIGHT: u8 = 4;
/// Ids of segment bars have this bit set (block ids are block indices).
pub const SEGMENT_ID: u32 = 1 << 31;

/// Rows per segment, in data units.
pub const ROW: u64 = 10;

/// Where each segment of a device sits in the view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// Per segment of [`DeviceAnalysis::segments`] (same order): `(row, x of its start)`.
    pub at: Vec<(u32, u64)>,
    /// Rows used.
    pub rows: u32,
    /// Width of a row: the largest segment.
    pub width: u64,
}

/// Packs `d`'s segments into rows (see the module docs).
pub fn place_segments(snap: &Snapshot, d: &DeviceAnalysis) -> Placement {
    let size = |k: usize| snap.segments[d.segments[k] as usize].total_size;
    let width = (0..d.segments.len()).map(size).max().unwrap_or(0);
    // A gap between neighbours of a row, about one pixel of a full-width view.
    let gap = width / 1000;
    let mut order: Vec<usize> = (0..d.segments.len()).collect();
    order.sort_by_key(|&k| (size(k), snap.segments[d.segments[k] as usize].address));
    let mut at = vec![(0u32, 0u64); d.segments.len()];
    let (mut row, mut x) = (0u32, 0u64);
    for (n, k) in order.into_iter().enumerate() {
        if n > 0 && x.saturating_add(size(k)) > width {
            row += 1;
            x = 0;
        }
        at[k] = (row, x);
        x = x.saturating_add(size(k)).saturating_add(gap);
    }
    Placement {
        rows: if d.segments.is_empty() { 0 } else { row + 1 },
        at,
        width,
    }
}

/// The bars of `d`'s segments placed by `place`; blocks whose stack's top frame is `highlight`
/// get [`CLASS_HIGHLIGHT`]. `top_frame[stack]` is the analysis' top user frame of each stack.
pub fn segment_bars(
    snap: &Snapshot,
    d: &DeviceAnalysis,
    place: &Placement,
    top_frame: &[u32],
    highlight: Option<u32>,
) -> RectIndex {
    let n = d
        .segments
        .iter()
        .map(|&si| 1 + snap.blocks_of(&snap.segments[si as usize]).len())
        .sum();
    let mut rects = RectSet::with_capacity(n);
    // Bytes past i64::MAX cannot be drawn apart anyway; a segment bar spans its row's band.
    let mut push = |a: u64, b: u64, row: u64, c: u8, i: u32| {
        let x = |v: u64| v.min(i64::MAX as u64) as i64;
        rects.push((x(a), x(b)), (row * ROW + 1, row * ROW + 9), c, i);
    };
    for (k, &si) in d.segments.iter().enumerate() {
        let s = &snap.segments[si as usize];
        let (row, x) = place.at[k];
        let row = u64::from(row);
        push(
            x,
            x.saturating_add(s.total_size),
            row,
            CLASS_SEGMENT,
            SEGMENT_ID | si,
        );
        let first = s.first_block;
        for (j, b) in snap.blocks_of(s).iter().enumerate() {
            let c = match b.state {
                BlockState::ActiveAllocated => {
                    let top = top_frame.get(b.stack as usize).copied();
                    if highlight.is_some() && top == highlight {
                        CLASS_HIGHLIGHT
                    } else {
                        CLASS_ALLOCATED
                    }
                }
                BlockState::ActivePendingFree | BlockState::ActiveAwaitingFree => CLASS_PENDING,
                BlockState::Inactive | BlockState::Unknown => CLASS_FREE,
            };
            let off = x.saturating_add(b.address.saturating_sub(s.address));
            push(off, off.saturating_add(b.size), row, c, first + j as u32);
        }
    }
    RectIndex::new(rects)
}
