//! The allocator state at the snapshot: one bar per segment (by address), its blocks inside it
//! coloured by state, as rectangles for [`crate::chart::RectIndex`].
//!
//! Data coordinates: x = byte offset inside the segment, y = row (a segment's bar spans
//! `[10·row + 1, 10·row + 9)`, so neighbouring bars keep a gap).

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

/// The bars of `d`'s segments; blocks whose stack's top frame is `highlight` get
/// [`CLASS_HIGHLIGHT`]. `top_frame[stack]` is the analysis' top user frame of each stack.
pub fn segment_bars(
    snap: &Snapshot,
    d: &DeviceAnalysis,
    top_frame: &[u32],
    highlight: Option<u32>,
) -> RectIndex {
    let (mut x0, mut x1, mut y0, mut y1, mut class, mut id) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut push = |a: u64, b: u64, row: u64, c: u8, i: u32| {
        x0.push(a.min(i64::MAX as u64) as i64);
        x1.push(b.min(i64::MAX as u64) as i64);
        y0.push(row * ROW + 1);
        y1.push(row * ROW + 9);
        class.push(c);
        id.push(i);
    };
    for (row, &si) in d.segments.iter().enumerate() {
        let s = &snap.segments[si as usize];
        push(0, s.total_size, row as u64, CLASS_SEGMENT, SEGMENT_ID | si);
        let first = s.first_block;
        for (k, b) in snap.blocks_of(s).iter().enumerate() {
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
            let off = b.address.saturating_sub(s.address);
            push(
                off,
                off.saturating_add(b.size),
                row as u64,
                c,
                first + k as u32,
            );
        }
    }
    RectIndex::new(RectSet::new(x0, x1, y0, y1, class, id))
}
