//! The active memory timeline at any zoom: allocations stacked over trace entries, reduced in
//! Rust to what a viewport of `W × H` pixels shows.
//!
//! Stacking is memory_viz's: the allocations alive after an entry lie on top of each other in
//! their stacking order ([`super::analysis::elements`]), so one freed below drops the ones above.
//! For each pixel column the view takes the entry of the column where the stack is highest (a
//! peak is never lost to sampling), puts the allocations alive there at their offsets, draws those
//! at least one pixel tall one by one and merges each run of thinner ones into one band. Equal
//! bands of neighbouring columns become one rectangle.
//!
//! Cost: the allocations alive at the window's first entry are found by one pass over the
//! elements; the window's entries are then applied one by one to a three-level sum tree
//! (constant time each), and a column lists its bands by skipping whole groups of 64 and 4,096
//! allocations that hold nothing visible. A window of millions of entries answers in tens of
//! milliseconds.

use super::analysis::{Element, NONE};
use crate::chart::Lod;
use std::collections::HashMap;

const B1: usize = 64;
const B2: usize = 64 * 64;

/// Live sizes in stacking order with sums and maxima per block of 64 and of 4,096.
struct Stack {
    leaf: Vec<u64>,
    sum1: Vec<u64>,
    max1: Vec<u64>,
    sum2: Vec<u64>,
    max2: Vec<u64>,
}

impl Stack {
    fn new(n: usize) -> Stack {
        Stack {
            leaf: vec![0; n],
            sum1: vec![0; n.div_ceil(B1)],
            max1: vec![0; n.div_ceil(B1)],
            sum2: vec![0; n.div_ceil(B2)],
            max2: vec![0; n.div_ceil(B2)],
        }
    }

    fn set(&mut self, i: usize, size: u64) {
        let old = std::mem::replace(&mut self.leaf[i], size);
        let (b1, b2) = (i / B1, i / B2);
        self.sum1[b1] = self.sum1[b1] - old + size;
        self.sum2[b2] = self.sum2[b2] - old + size;
        // Maxima only grow here; a stale (too high) one is refreshed when a column looks inside.
        self.max1[b1] = self.max1[b1].max(size);
        self.max2[b2] = self.max2[b2].max(size);
    }

    /// Calls `band(lo, hi, Some(i))` for each allocation at least `min` bytes tall overlapping
    /// `[y0, y1)` and `band(lo, hi, None)` for each run of thinner ones between them, bottom up.
    fn bands(&mut self, y0: f64, y1: f64, min: f64, mut band: impl FnMut(f64, f64, Option<u32>)) {
        let mut at = 0f64;
        let mut run: Option<f64> = None;
        let flush =
            |run: &mut Option<f64>, at: f64, band: &mut dyn FnMut(f64, f64, Option<u32>)| {
                if let Some(lo) = run.take() {
                    if at > lo {
                        band(lo, at, None);
                    }
                }
            };
        for b2 in 0..self.sum2.len() {
            if at >= y1 {
                break;
            }
            let s2 = self.sum2[b2] as f64;
            if s2 == 0.0 {
                continue;
            }
            if at + s2 <= y0 || (self.max2[b2] as f64) < min {
                if at + s2 > y0 {
                    run.get_or_insert(at.max(y0));
                }
                at += s2;
                continue;
            }
            let mut m2 = 0;
            let end1 = ((b2 + 1) * (B2 / B1)).min(self.sum1.len());
            for b1 in b2 * (B2 / B1)..end1 {
                let s1 = self.sum1[b1] as f64;
                if s1 == 0.0 {
                    self.max1[b1] = 0;
                    continue;
                }
                if at >= y1 {
                    m2 = m2.max(self.max1[b1]);
                    continue;
                }
                if at + s1 <= y0 || (self.max1[b1] as f64) < min {
                    if at + s1 > y0 {
                        run.get_or_insert(at.max(y0));
                    }
                    at += s1;
                    m2 = m2.max(self.max1[b1]);
                    continue;
                }
                let mut m1 = 0;
                let end0 = ((b1 + 1) * B1).min(self.leaf.len());
                for i in b1 * B1..end0 {
                    let s = self.leaf[i];
                    if s == 0 {
                        continue;
                    }
                    m1 = m1.max(s);
                    let sf = s as f64;
                    if at + sf > y0 && at < y1 {
                        if sf >= min {
                            flush(&mut run, at, &mut band);
                            band(at, at + sf, Some(i as u32));
                        } else {
                            run.get_or_insert(at.max(y0));
                        }
                    }
                    at += sf;
                }
                self.max1[b1] = m1;
                m2 = m2.max(m1);
            }
            self.max2[b2] = m2;
        }
        flush(&mut run, at.min(y1), &mut band);
    }

    fn offset_of(&self, i: usize) -> u64 {
        let (b1, b2) = (i / B1, i / B2);
        let mut at: u64 = self.sum2[..b2].iter().sum();
        at += self.sum1[b2 * (B2 / B1)..b1].iter().sum::<u64>();
        at + self.leaf[b1 * B1..i].iter().sum::<u64>()
    }
}

/// A device's allocations indexed for the timeline.
pub struct Timeline {
    /// Trace entries.
    pub entries: u32,
    /// For each entry, the element it starts or ends (`NONE` when neither).
    entry_elem: Vec<u32>,
    /// Sizes of the elements (stacking order).
    size: Vec<u64>,
    start: Vec<u32>,
    end: Vec<u32>,
    /// Drawing class of each element (1 to 10, from its top frame).
    class: Vec<u8>,
    /// Group key (top frame id) of each element, for highlighting.
    group: Vec<u32>,
}

/// What a timeline request asks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// First x (entry index; entry `i` is drawn over `[i, i + 1)`).
    pub x0: f64,
    /// End x.
    pub x1: f64,
    /// Lowest bytes shown.
    pub y0: f64,
    /// Highest bytes shown.
    pub y1: f64,
    /// Canvas width in pixels.
    pub width: u32,
    /// Canvas height in pixels.
    pub height: u32,
}

/// The entries `[a, b)` a pixel column `[xa, xb)` of a chart over entries shows: those whose
/// left edge `i` lies in it, or, when the column is narrower than an entry, the entry under it.
/// Every entry belongs to exactly one column of a window.
pub fn column_entries(xa: f64, xb: f64, entries: usize) -> (usize, usize) {
    let a = xa.ceil().max(0.0) as usize;
    let b = (xb.ceil().max(0.0) as usize).min(entries);
    if a < b {
        return (a, b);
    }
    let i = xa.floor();
    if i >= 0.0 && (i as usize) < entries {
        (i as usize, i as usize + 1)
    } else {
        (0, 0)
    }
}

/// Class of merged runs of thin allocations.
pub const CLASS_MERGED: u8 = 0;
/// Class of the allocations of the highlighted group.
pub const CLASS_HIGHLIGHT: u8 = 11;
/// Colour classes for frame groups.
pub const GROUP_CLASSES: u32 = 10;

impl Timeline {
    /// Indexes `elements` (in stacking order) of a trace of `entries` entries; `group[i]` is the
    /// top-frame id of element `i`.
    pub fn new(elements: &[Element], entries: u32, group: Vec<u32>) -> Timeline {
        let mut entry_elem = vec![NONE; entries as usize];
        for (i, e) in elements.iter().enumerate() {
            for at in [e.start, e.end] {
                if let Some(slot) = entry_elem.get_mut(at as usize) {
                    *slot = i as u32;
                }
            }
        }
        let class = group
            .iter()
            .map(|&g| {
                // A stable colour per frame: the same source line has the same colour everywhere.
                let h = g.wrapping_mul(0x9e37_79b9) >> 16;
                (h % GROUP_CLASSES) as u8 + 1
            })
            .collect();
        Timeline {
            entries,
            entry_elem,
            size: elements.iter().map(|e| e.size).collect(),
            start: elements.iter().map(|e| e.start).collect(),
            end: elements.iter().map(|e| e.end).collect(),
            class,
            group,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.size.len()
    }

    /// True without elements.
    pub fn is_empty(&self) -> bool {
        self.size.is_empty()
    }

    fn live_after(&self, i: usize, p: Option<u32>) -> bool {
        let (s, e) = (self.start[i], self.end[i]);
        match p {
            None => s == NONE,
            Some(p) => (s == NONE || s <= p) && (e == NONE || e > p),
        }
    }

    /// The state after entry `p` (`None`: before the first), built from scratch.
    fn stack_after(&self, p: Option<u32>) -> (Stack, u64) {
        let mut st = Stack::new(self.len());
        let mut total = 0u64;
        for i in 0..self.len() {
            if self.live_after(i, p) {
                st.set(i, self.size[i]);
                total += self.size[i];
            }
        }
        (st, total)
    }

    /// The change entry `i` makes to the stack: `(element, added)`.
    fn change(&self, i: usize) -> Option<(usize, bool)> {
        let e = *self.entry_elem.get(i)?;
        if e == NONE {
            return None;
        }
        Some((e as usize, self.start[e as usize] == i as u32))
    }

    /// The highest stack over the trace (the y extent of the chart).
    pub fn max_total(&self) -> u64 {
        let (_, mut total) = self.stack_after(None);
        let mut max = total;
        for i in 0..self.entries as usize {
            if let Some((e, add)) = self.change(i) {
                if add {
                    total += self.size[e];
                } else {
                    total -= self.size[e];
                }
                max = max.max(total);
            }
        }
        max
    }

    /// The rectangles `w` shows, in canvas pixels; `highlight` is a group whose allocations get
    /// [`CLASS_HIGHLIGHT`]. Ids are element indices (`u32::MAX` for merged runs).
    pub fn view(&self, w: &Window, highlight: Option<u32>) -> Lod {
        let mut lod = Lod::default();
        let (cols, rows) = (w.width as usize, w.height as f64);
        if cols == 0 || w.height == 0 || w.x1 <= w.x0 || w.y1 <= w.y0 {
            return lod;
        }
        let n = self.entries as usize;
        // Without a trace, the snapshot's allocations are the one state shown, over [0, 1).
        let span = w.x1 - w.x0;
        let col_x = |c: usize| w.x0 + span * c as f64 / cols as f64;
        let sy = rows / (w.y1 - w.y0);
        let min_bytes = 1.0 / sy;
        let first = column_entries(col_x(0), col_x(1), n.max(1)).0.min(n);
        let (mut st, mut total) = self.stack_after(first.checked_sub(1).map(|p| p as u32));
        let mut applied = first; // entries < applied are in `st`
        let mut prev: HashMap<(u32, u32, u32), usize> = HashMap::new();
        let mut cur: HashMap<(u32, u32, u32), usize> = HashMap::new();
        let px = |y: f64| ((w.y1 - y) * sy) as f32;
        for c in 0..cols {
            let (xa, xb) = (col_x(c), col_x(c + 1));
            let (lo, hi) = column_entries(xa, xb, n.max(1));
            if lo >= hi {
                prev.clear();
                continue;
            }
            if n > 0 {
                // Catch up to the column, then find its highest entry.
                while applied < lo {
                    if let Some((e, add)) = self.change(applied) {
                        st.set(e, if add { self.size[e] } else { 0 });
                        total = if add {
                            total + self.size[e]
                        } else {
                            total - self.size[e]
                        };
                    }
                    applied += 1;
                }
                let (mut best, mut best_total, mut t) = (lo, None, total);
                for i in lo..hi {
                    if i >= applied {
                        if let Some((e, add)) = self.change(i) {
                            t = if add {
                                t + self.size[e]
                            } else {
                                t - self.size[e]
                            };
                        }
                    }
                    if best_total.is_none_or(|b| t > b) {
                        best = i;
                        best_total = Some(t);
                    }
                }
                while applied <= best {
                    if let Some((e, add)) = self.change(applied) {
                        st.set(e, if add { self.size[e] } else { 0 });
                        total = if add {
                            total + self.size[e]
                        } else {
                            total - self.size[e]
                        };
                    }
                    applied += 1;
                }
            }
            cur.clear();
            st.bands(w.y0, w.y1, min_bytes, |lo_b, hi_b, id| {
                let (class, id) = match id {
                    Some(i) => {
                        let i = i as usize;
                        let class = if highlight.is_some_and(|g| g == self.group[i]) {
                            CLASS_HIGHLIGHT
                        } else {
                            self.class[i]
                        };
                        (class, i as u32)
                    }
                    None => (CLASS_MERGED, u32::MAX),
                };
                let (top, bottom) = (px(hi_b.min(w.y1)), px(lo_b.max(w.y0)));
                let key = (id, top.to_bits(), bottom.to_bits());
                if let Some(&r) = prev.get(&key) {
                    lod.w[r] += 1.0;
                    cur.insert(key, r);
                    return;
                }
                lod.x.push(c as f32);
                lod.y.push(top);
                lod.w.push(1.0);
                lod.h.push((bottom - top).max(1.0));
                lod.class.push(class);
                lod.id.push(id);
                if id == u32::MAX {
                    lod.merged += 1;
                } else {
                    lod.individual += 1;
                }
                cur.insert(key, lod.x.len() - 1);
            });
            std::mem::swap(&mut prev, &mut cur);
        }
        lod.visible = lod.individual + lod.merged;
        lod
    }

    /// The element under `(x, y)` (entry coordinate, bytes) and its offset in the stack there.
    pub fn hit(&self, x: f64, y: f64) -> Option<(u32, u64)> {
        if x < 0.0 || y < 0.0 {
            return None;
        }
        let n = self.entries as usize;
        let p = if n == 0 {
            None
        } else {
            Some((x.floor() as usize).min(n - 1) as u32)
        };
        let (st, _) = self.stack_after(p);
        let mut at = 0u64;
        for (i, &s) in st.leaf.iter().enumerate() {
            if s == 0 {
                continue;
            }
            if (at as f64) <= y && y < (at + s) as f64 {
                return Some((i as u32, at));
            }
            at += s;
        }
        None
    }

    /// Offset of element `i` in the stack after entry `p`, if it is alive there.
    pub fn offset_after(&self, i: u32, p: Option<u32>) -> Option<u64> {
        let i = i as usize;
        if i >= self.len() || !self.live_after(i, p) {
            return None;
        }
        let (st, _) = self.stack_after(p);
        Some(st.offset_of(i))
    }
}

#[cfg(test)]
mod tests {
    use super::super::analysis::Origin;
    use super::*;

    fn el(start: u32, end: u32, size: u64) -> Element {
        Element {
            start,
            end,
            size,
            addr: 0,
            stack: 0,
            origin: Origin::Alloc,
        }
    }

    #[test]
    fn bands_follow_the_stack_and_merge_thin_ones() {
        // 0 alive before the trace; entry 0 allocates 1, entry 1 allocates 2 (1 byte), entry 2
        // allocates 3, entry 3 frees 1.
        let els = [
            el(NONE, NONE, 100),
            el(0, 3, 50),
            el(1, NONE, 1),
            el(2, NONE, 30),
        ];
        let t = Timeline::new(&els, 4, vec![0, 1, 2, 3]);
        assert_eq!(t.max_total(), 181);
        // One column per entry, 181 px tall: 1 byte per pixel.
        let w = Window {
            x0: 0.0,
            x1: 4.0,
            y0: 0.0,
            y1: 181.0,
            width: 4,
            height: 181,
        };
        let lod = t.view(&w, Some(3));
        let rects: Vec<_> = (0..lod.len())
            .map(|i| {
                (
                    lod.x[i],
                    lod.w[i],
                    lod.y[i],
                    lod.h[i],
                    lod.id[i],
                    lod.class[i],
                )
            })
            .collect();
        // Element 0: all four columns at the bottom.
        assert!(
            rects.contains(&(0.0, 4.0, 81.0, 100.0, 0, t.class[0])),
            "{rects:?}"
        );
        // Element 1 after entries 0 to 2 (freed at entry 3).
        assert!(rects.contains(&(0.0, 3.0, 31.0, 50.0, 1, t.class[1])));
        // Element 2, 1 byte = 1 px: drawn individually, then dropped by 50 when 1 is freed.
        assert!(rects.contains(&(1.0, 2.0, 30.0, 1.0, 2, t.class[2])));
        assert!(rects.contains(&(3.0, 1.0, 80.0, 1.0, 2, t.class[2])));
        // Element 3 (highlighted) on top, then dropped by 50.
        assert!(rects.contains(&(2.0, 1.0, 0.0, 30.0, 3, CLASS_HIGHLIGHT)));
        assert!(rects.contains(&(3.0, 1.0, 50.0, 30.0, 3, CLASS_HIGHLIGHT)));
        assert_eq!(lod.len(), 6);
        // At 10 bytes per pixel element 2 is thinner than a pixel: a merged run.
        let lod = t.view(&Window { height: 18, ..w }, None);
        assert!(lod.id.contains(&u32::MAX));
        assert!(!lod.id.contains(&2));
        assert_eq!(t.hit(1.5, 150.5), Some((2, 150)));
        assert_eq!(t.hit(3.5, 120.0), Some((3, 101)));
        assert_eq!(t.hit(3.5, 140.0), None);
        assert_eq!(t.offset_after(3, Some(2)), Some(151));
    }

    #[test]
    fn a_column_shows_its_highest_entry() {
        // 8 entries in one column: an allocation of 1000 lives only at entry 3.
        let els = [el(NONE, NONE, 10), el(3, 4, 1000)];
        let t = Timeline::new(&els, 8, vec![0, 1]);
        let lod = t.view(
            &Window {
                x0: 0.0,
                x1: 8.0,
                y0: 0.0,
                y1: 1010.0,
                width: 1,
                height: 101,
            },
            None,
        );
        assert!(lod.id.contains(&1), "{:?}", lod.id);
    }
}
