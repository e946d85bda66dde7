//! Level-of-detail reductions for the views: curves reduced to pixel columns, rectangle sets
//! reduced to what a viewport shows.
//!
//! The page never receives a whole curve or a whole tensor layout: it asks for the pixel width it
//! draws, and gets back at most a few values per pixel column (a min/max envelope, so peaks stay
//! exact whatever the zoom) or the rectangles visible in its viewport, with sub-pixel rectangles
//! merged into runs of pixels.
//!
//! Why one file of ~900 lines: about 300 of them are the tests of the reductions, kept beside
//! the code they pin; the code itself is under 600 lines.

/// A step function reduced to pixel columns over `[x_start, x_end)`.
///
/// Column `c` covers `[x_start + c·span/columns, x_start + (c+1)·span/columns)` (real-valued
/// boundaries). Every value the function takes inside a column — including values that last zero
/// time, such as several events at the same timestamp — is reflected in its `min` and `max`, so a
/// peak is never lost to sampling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// First x of the window.
    pub x_start: i64,
    /// End of the window (exclusive).
    pub x_end: i64,
    /// Smallest value in each column.
    pub min: Vec<u64>,
    /// Largest value in each column.
    pub max: Vec<u64>,
    /// Value at the start of each column (the first value seen in it).
    pub first: Vec<u64>,
    /// Value at the end of each column (the last value seen in it).
    pub last: Vec<u64>,
    /// False for columns the function does not reach (before its first point).
    pub defined: Vec<bool>,
    /// The x at which each column's maximum is first reached (clamped to the column start).
    pub argmax: Vec<i64>,
}

/// Reduces the step function `ys[i]` on `[xs[i], xs[i+1])` (the last value holds forever) to
/// `columns` columns over `[x_start, x_end)`.
///
/// `xs` must be ascending (ties allowed: equal x's are instantaneous values, all kept). Runs in
/// `O(log n + points in the window + columns)`.
pub fn step_envelope(xs: &[i64], ys: &[u64], x_start: i64, x_end: i64, columns: usize) -> Envelope {
    let mut env = Envelope {
        x_start,
        x_end,
        min: vec![0; columns],
        max: vec![0; columns],
        first: vec![0; columns],
        last: vec![0; columns],
        defined: vec![false; columns],
        argmax: vec![0; columns],
    };
    let n = xs.len().min(ys.len());
    if n == 0 || columns == 0 || x_end <= x_start {
        return env;
    }
    let span = i128::from(x_end) - i128::from(x_start);
    let cols = columns as i128;
    // Column containing x (x inside the window).
    let col_floor = |x: i64| -> usize {
        let c = (i128::from(x) - i128::from(x_start)) * cols / span;
        c.clamp(0, cols - 1) as usize
    };
    // One past the last column touched by a segment ending (exclusively) at x.
    let col_ceil = |x: i64| -> usize {
        let num = (i128::from(x) - i128::from(x_start)) * cols;
        let c = num / span + i128::from(num % span != 0);
        c.clamp(0, cols) as usize
    };
    // First x of column c.
    let col_start = |c: usize| -> i64 {
        let num = c as i128 * span;
        let off = num / cols + i128::from(num % cols != 0);
        (i128::from(x_start) + off) as i64
    };

    let first_in = xs[..n].partition_point(|&x| x < x_start);
    let mut i = first_in.saturating_sub(1);
    while i < n {
        let x = xs[i];
        if x >= x_end {
            break;
        }
        let next = if i + 1 < n { xs[i + 1] } else { x_end };
        let seg_start = x.max(x_start);
        let seg_end = next.min(x_end);
        if x < x_start && seg_end <= x_start {
            // Carried-in segment that ends exactly where the window starts.
            i += 1;
            continue;
        }
        let c0 = col_floor(seg_start);
        let c1 = if seg_end > seg_start {
            col_ceil(seg_end).max(c0 + 1)
        } else {
            c0 + 1
        };
        let v = ys[i];
        for c in c0..c1.min(columns) {
            if !env.defined[c] {
                env.defined[c] = true;
                env.first[c] = v;
                env.min[c] = v;
                env.max[c] = v;
                env.argmax[c] = seg_start.max(col_start(c));
            } else {
                if v < env.min[c] {
                    env.min[c] = v;
                }
                if v > env.max[c] {
                    env.max[c] = v;
                    env.argmax[c] = seg_start.max(col_start(c));
                }
            }
            env.last[c] = v;
        }
        i += 1;
    }
    env
}

/// A data-space window: `[x0, x1) × [y0, y1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    /// Left edge (data x).
    pub x0: f64,
    /// Right edge (data x).
    pub x1: f64,
    /// Bottom edge (data y).
    pub y0: f64,
    /// Top edge (data y).
    pub y1: f64,
}

/// Rectangles in data space, stored column-wise: `[x0, x1) × [y0, y1)` with a class and an id.
///
/// Classes order the drawing: where rectangles of several classes meet in one merged pixel run,
/// the highest class wins, so give the most important class (e.g. conflicts) the highest number.
#[derive(Debug, Clone, Default)]
pub struct RectSet {
    x0: Vec<i64>,
    x1: Vec<i64>,
    y0: Vec<u64>,
    y1: Vec<u64>,
    class: Vec<u8>,
    id: Vec<u32>,
}

/// What a viewport shows of a [`RectSet`], in canvas pixels (origin top-left, y down, data y up).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lod {
    /// Left edge of each drawn rectangle, in pixels.
    pub x: Vec<f32>,
    /// Top edge, in pixels.
    pub y: Vec<f32>,
    /// Width, in pixels (at least 1).
    pub w: Vec<f32>,
    /// Height, in pixels (at least 1).
    pub h: Vec<f32>,
    /// Class of each drawn rectangle.
    pub class: Vec<u8>,
    /// Id of the data rectangle, or `u32::MAX` for a run that merges sub-pixel rectangles.
    pub id: Vec<u32>,
    /// Data rectangles intersecting the viewport.
    pub visible: u64,
    /// Of those, how many were drawn individually.
    pub individual: u64,
    /// Of those, how many were merged into pixel runs.
    pub merged: u64,
}

/// A level of detail crosses to the page as typed arrays: `x, y, w, h` (f32), `cls` (u8), `id`
/// (u32) and the counts.
impl crate::bulk::Bulk for Lod {
    fn fields(&self) -> Vec<(&'static str, crate::bulk::Field<'_>)> {
        use crate::bulk::Field;
        vec![
            ("x", Field::F32(&self.x)),
            ("y", Field::F32(&self.y)),
            ("w", Field::F32(&self.w)),
            ("h", Field::F32(&self.h)),
            ("cls", Field::U8(&self.class)),
            ("id", Field::U32(&self.id)),
            ("visible", Field::Num(self.visible as f64)),
            ("individual", Field::Num(self.individual as f64)),
            ("merged", Field::Num(self.merged as f64)),
        ]
    }
}

impl Lod {
    fn push(&mut self, x: f32, y: f32, w: f32, h: f32, class: u8, id: u32) {
        self.x.push(x);
        self.y.push(y);
        self.w.push(w);
        self.h.push(h);
        self.class.push(class);
        self.id.push(id);
    }

    /// Number of drawn rectangles.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// True when nothing is drawn.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

/// Rectangles at least this many pixels in both directions are drawn individually.
const MIN_INDIVIDUAL_PX: f64 = 1.5;

/// Puts the rectangles of a [`RectSet`] on a `px_w × px_h` canvas showing `view`: shared by the
/// levels of detail of [`RectSet::visible`] and [`RectIndex::visible`].
struct Placer<'a> {
    view: &'a Viewport,
    scale: (f64, f64),
    size: (f64, f64),
    px: (u32, u32),
    max_rects: usize,
}

impl<'a> Placer<'a> {
    /// `None` when nothing can show (an empty canvas or viewport).
    fn new(view: &'a Viewport, px_w: u32, px_h: u32, max_rects: usize) -> Option<Self> {
        let (vw, vh) = (view.x1 - view.x0, view.y1 - view.y0);
        if px_w == 0 || px_h == 0 || vw <= 0.0 || vh <= 0.0 {
            return None;
        }
        let size = (f64::from(px_w), f64::from(px_h));
        Some(Placer {
            view,
            scale: (size.0 / vw, size.1 / vh),
            size,
            px: (px_w, px_h),
            max_rects,
        })
    }

    /// Places rectangle `i` of `set`: counts it as visible, and pushes it to `lod` one by one when
    /// it is at least [`MIN_INDIVIDUAL_PX`] in both directions and `max_rects` is not reached.
    /// Returns the pixels `(c0, c1, r0, r1)` (ends exclusive) it covers when it must be merged
    /// instead; `None` when it is out of view or was pushed. A zero-width rectangle exactly at the
    /// left edge still shows.
    fn place(&self, lod: &mut Lod, set: &RectSet, i: usize) -> Option<(u32, u32, u32, u32)> {
        let view = self.view;
        let (x0, x1) = (set.x0[i] as f64, set.x1[i] as f64);
        let (y0, y1) = (set.y0[i] as f64, set.y1[i] as f64);
        if x1 <= view.x0 || x0 >= view.x1 || y1 <= view.y0 || y0 >= view.y1 {
            let edge = x0 == x1 && x0 >= view.x0 && x0 < view.x1 && y1 > view.y0 && y0 < view.y1;
            if !edge {
                return None;
            }
        }
        lod.visible += 1;
        // Clip to the viewport, then to pixels (canvas y grows downwards).
        let ((sx, sy), (pw, ph)) = (self.scale, self.size);
        let left = ((x0.max(view.x0) - view.x0) * sx).max(0.0);
        let right = ((x1.min(view.x1) - view.x0) * sx).min(pw);
        let top = ((view.y1 - y1.min(view.y1)) * sy).max(0.0);
        let bottom = ((view.y1 - y0.max(view.y0)) * sy).min(ph);
        let (w, h) = (right - left, bottom - top);
        if w >= MIN_INDIVIDUAL_PX
            && h >= MIN_INDIVIDUAL_PX
            && (lod.individual as usize) < self.max_rects
        {
            lod.individual += 1;
            lod.push(
                left as f32,
                top as f32,
                w as f32,
                h as f32,
                set.class[i],
                set.id[i],
            );
            return None;
        }
        lod.merged += 1;
        let (px_w, px_h) = self.px;
        let c0 = (left.floor() as u32).min(px_w - 1);
        let c1 = (right.ceil() as u32).clamp(c0 + 1, px_w);
        let r0 = (top.floor() as u32).min(px_h - 1);
        let r1 = (bottom.ceil() as u32).clamp(r0 + 1, px_h);
        Some((c0, c1, r0, r1))
    }
}

impl RectSet {
    /// Builds a set from columns of equal length (extra items in longer columns are ignored).
    pub fn new(
        x0: Vec<i64>,
        x1: Vec<i64>,
        y0: Vec<u64>,
        y1: Vec<u64>,
        class: Vec<u8>,
        id: Vec<u32>,
    ) -> Self {
        let n = x0
            .len()
            .min(x1.len())
            .min(y0.len())
            .min(y1.len())
            .min(class.len())
            .min(id.len());
        let mut s = RectSet {
            x0,
            x1,
            y0,
            y1,
            class,
            id,
        };
        s.x0.truncate(n);
        s.x1.truncate(n);
        s.y0.truncate(n);
        s.y1.truncate(n);
        s.class.truncate(n);
        s.id.truncate(n);
        s
    }

    /// An empty set with room for `n` rectangles, filled with [`RectSet::push`].
    pub fn with_capacity(n: usize) -> Self {
        RectSet {
            x0: Vec::with_capacity(n),
            x1: Vec::with_capacity(n),
            y0: Vec::with_capacity(n),
            y1: Vec::with_capacity(n),
            class: Vec::with_capacity(n),
            id: Vec::with_capacity(n),
        }
    }

    /// Adds the rectangle `[x0, x1) × [y0, y1)` of `class`, known to the views as `id`.
    pub fn push(&mut self, (x0, x1): (i64, i64), (y0, y1): (u64, u64), class: u8, id: u32) {
        self.x0.push(x0);
        self.x1.push(x1);
        self.y0.push(y0);
        self.y1.push(y1);
        self.class.push(class);
        self.id.push(id);
    }

    /// Number of rectangles.
    pub fn len(&self) -> usize {
        self.x0.len()
    }

    /// True when the set is empty.
    pub fn is_empty(&self) -> bool {
        self.x0.is_empty()
    }

    /// Bounding box of all rectangles, or `None` when empty.
    pub fn bounds(&self) -> Option<Viewport> {
        if self.is_empty() {
            return None;
        }
        Some(Viewport {
            x0: *self.x0.iter().min()? as f64,
            x1: *self.x1.iter().max()? as f64,
            y0: *self.y0.iter().min()? as f64,
            y1: *self.y1.iter().max()? as f64,
        })
    }

    /// The rectangles `view` shows on a `px_w × px_h` canvas.
    ///
    /// Rectangles at least 1.5 px in both directions are returned one by one (with their id), up
    /// to `max_rects`; smaller ones — and any beyond `max_rects` — are snapped to whole pixels and
    /// merged into horizontal runs per pixel row and class, so the result stays small however many
    /// rectangles the set holds.
    pub fn visible(&self, view: &Viewport, px_w: u32, px_h: u32, max_rects: usize) -> Lod {
        let mut lod = Lod::default();
        let Some(placer) = Placer::new(view, px_w, px_h, max_rects).filter(|_| !self.is_empty())
        else {
            return lod;
        };
        // Runs of merged rectangles: (class, row, first column, end column).
        let mut runs: Vec<(u8, u32, u32, u32)> = Vec::new();
        for i in 0..self.len() {
            let Some((c0, c1, r0, r1)) = placer.place(&mut lod, self, i) else {
                continue;
            };
            for row in r0..r1 {
                runs.push((self.class[i], row, c0, c1));
            }
        }
        // Merge runs per (class, row), drawing lower classes first.
        runs.sort_unstable();
        let mut k = 0;
        while k < runs.len() {
            let (class, row, start, mut end) = runs[k];
            k += 1;
            while k < runs.len() && runs[k].0 == class && runs[k].1 == row && runs[k].2 <= end {
                end = end.max(runs[k].3);
                k += 1;
            }
            if end > start {
                lod.push(
                    start as f32,
                    row as f32,
                    (end - start) as f32,
                    1.0,
                    class,
                    u32::MAX,
                );
            }
        }
        lod
    }

    /// The id of the rectangle under the data point `(x, y)`: among overlapping ones, the highest
    /// class, then the smallest area. Zero-width rectangles are hit at their x.
    pub fn hit(&self, x: f64, y: f64) -> Option<u32> {
        let mut best: Option<(u8, f64, u32)> = None;
        for i in 0..self.len() {
            let (x0, x1) = (self.x0[i] as f64, self.x1[i] as f64);
            let (y0, y1) = (self.y0[i] as f64, self.y1[i] as f64);
            let in_x = (x >= x0 && x < x1) || (x0 == x1 && x == x0);
            if !in_x || y < y0 || y >= y1 {
                continue;
            }
            let area = (x1 - x0).max(1.0) * (y1 - y0);
            let better = match best {
                None => true,
                Some((c, a, _)) => self.class[i] > c || (self.class[i] == c && area < a),
            };
            if better {
                best = Some((self.class[i], area, self.id[i]));
            }
        }
        best.map(|b| b.2)
    }
}

impl RectSet {
    /// Like [`RectSet::hit`], but when no rectangle contains `(x, y)` it takes the rectangles
    /// within `dx`, `dy` of it (highest class, then smallest area): a pointer can then find a
    /// rectangle that is thinner than a pixel on screen.
    pub fn hit_near(&self, x: f64, y: f64, dx: f64, dy: f64) -> Option<u32> {
        if let Some(id) = self.hit(x, y) {
            return Some(id);
        }
        let (bx0, bx1, by0, by1) = (x - dx.abs(), x + dx.abs(), y - dy.abs(), y + dy.abs());
        let mut best: Option<(u8, f64, u32)> = None;
        for i in 0..self.len() {
            let (x0, x1) = (self.x0[i] as f64, self.x1[i] as f64);
            let (y0, y1) = (self.y0[i] as f64, self.y1[i] as f64);
            if x1 < bx0 || x0 > bx1 || y1 < by0 || y0 > by1 {
                continue;
            }
            let area = (x1 - x0).max(1.0) * (y1 - y0);
            let better = match best {
                None => true,
                Some((c, a, _)) => self.class[i] > c || (self.class[i] == c && area < a),
            };
            if better {
                best = Some((self.class[i], area, self.id[i]));
            }
        }
        best.map(|b| b.2)
    }
}

/// A [`RectSet`] indexed for interactive views: [`RectIndex::visible`] touches only the
/// rectangles near the viewport's x range and merges sub-pixel ones on a pixel raster, so a pan
/// over a million rectangles costs what the viewport shows, not what the set holds.
///
/// Rectangles are grouped by width (powers of two); each group is sorted by left edge, so the
/// candidates of a window `[x0, x1)` in a group of widths below `w` are exactly those with a left
/// edge in `[x0 - w, x1)`: two binary searches per group.
#[derive(Debug, Clone, Default)]
pub struct RectIndex {
    set: RectSet,
    groups: Vec<WidthGroup>,
}

#[derive(Debug, Clone, Default)]
struct WidthGroup {
    /// Widest rectangle of the group.
    max_width: i64,
    /// Left edges, ascending.
    x0: Vec<i64>,
    /// Rectangle indices in the same order.
    order: Vec<u32>,
}

impl RectIndex {
    /// Indexes `set`.
    pub fn new(set: RectSet) -> Self {
        let mut by_group: Vec<Vec<(i64, u32)>> = Vec::new();
        for i in 0..set.len() {
            let w = (set.x1[i] - set.x0[i]).max(0) as u64;
            let g = (64 - w.leading_zeros()) as usize; // 0 for width 0, k+1 for [2^k, 2^(k+1))
            if by_group.len() <= g {
                by_group.resize_with(g + 1, Vec::new);
            }
            by_group[g].push((set.x0[i], i as u32));
        }
        let mut groups = Vec::new();
        // Widest first: when more rectangles are visible than may be drawn one by one, the wide
        // ones keep their outline.
        for list in by_group.iter_mut().rev() {
            if list.is_empty() {
                continue;
            }
            rayon::slice::ParallelSliceMut::par_sort_unstable(list.as_mut_slice());
            let max_width = list
                .iter()
                .map(|&(_, i)| set.x1[i as usize] - set.x0[i as usize])
                .max()
                .unwrap_or(0);
            groups.push(WidthGroup {
                max_width,
                x0: list.iter().map(|p| p.0).collect(),
                order: list.iter().map(|p| p.1).collect(),
            });
        }
        RectIndex { set, groups }
    }

    /// The indexed set.
    pub fn set(&self) -> &RectSet {
        &self.set
    }

    /// Number of rectangles.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// True when the set is empty.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Calls `f(i)` for every rectangle whose x range may meet `[x0, x1]` (a superset of those
    /// that do; zero-width rectangles included), widest group first, each group by left edge.
    fn candidates(&self, x0: f64, x1: f64, mut f: impl FnMut(usize)) {
        for g in &self.groups {
            let lo = x0 - g.max_width as f64;
            let a = g.x0.partition_point(|&x| (x as f64) < lo);
            let b = g.x0.partition_point(|&x| (x as f64) <= x1);
            for &i in g.order.get(a..b.max(a)).unwrap_or(&[]) {
                f(i as usize);
            }
        }
    }

    /// What `view` shows on a `px_w × px_h` canvas, like [`RectSet::visible`]: rectangles at
    /// least 1.5 px in both directions one by one (up to `max_rects`, widest first), the others
    /// snapped to pixels and merged into horizontal runs. Where merged rectangles of several
    /// classes share a pixel the highest class takes it, so runs never overlap and each pixel
    /// is drawn once.
    pub fn visible(&self, view: &Viewport, px_w: u32, px_h: u32, max_rects: usize) -> Lod {
        let mut lod = Lod::default();
        let s = &self.set;
        let Some(placer) = Placer::new(view, px_w, px_h, max_rects).filter(|_| !s.is_empty())
        else {
            return lod;
        };
        // Highest class + 1 of the merged rectangles covering each pixel (0: none).
        let mut cover: Vec<u8> = Vec::new();
        self.candidates(view.x0, view.x1, |i| {
            let Some((c0, c1, r0, r1)) = placer.place(&mut lod, s, i) else {
                return;
            };
            if cover.is_empty() {
                cover = vec![0; px_w as usize * px_h as usize];
            }
            let v = s.class[i].saturating_add(1);
            for row in r0..r1 {
                let base = row as usize * px_w as usize;
                for px in &mut cover[base + c0 as usize..base + c1 as usize] {
                    if *px < v {
                        *px = v;
                    }
                }
            }
        });
        // Runs of equal class along each row.
        for (row, line) in cover.chunks_exact(px_w as usize).enumerate() {
            let mut c = 0;
            while c < line.len() {
                let v = line[c];
                let start = c;
                while c < line.len() && line[c] == v {
                    c += 1;
                }
                if v > 0 {
                    lod.push(
                        start as f32,
                        row as f32,
                        (c - start) as f32,
                        1.0,
                        v - 1,
                        u32::MAX,
                    );
                }
            }
        }
        lod
    }

    /// Like [`RectSet::hit_near`], over the rectangles near `x` only.
    pub fn hit_near(&self, x: f64, y: f64, dx: f64, dy: f64) -> Option<u32> {
        let s = &self.set;
        let (dx, dy) = (dx.abs(), dy.abs());
        // (exact hit, class, area, id): an exact hit beats a near one, then as RectSet::hit.
        let mut best: Option<(bool, u8, f64, u32)> = None;
        self.candidates(x - dx, x + dx, |i| {
            let (x0, x1) = (s.x0[i] as f64, s.x1[i] as f64);
            let (y0, y1) = (s.y0[i] as f64, s.y1[i] as f64);
            let exact = ((x >= x0 && x < x1) || (x0 == x1 && x == x0)) && y >= y0 && y < y1;
            let near = !(x1 < x - dx || x0 > x + dx || y1 < y - dy || y0 > y + dy);
            if !exact && !near {
                return;
            }
            let area = (x1 - x0).max(1.0) * (y1 - y0);
            let better = match best {
                None => true,
                Some((e, c, a, _)) => {
                    (exact && !e)
                        || (exact == e && (s.class[i] > c || (s.class[i] == c && area < a)))
                }
            };
            if better {
                best = Some((exact, s.class[i], area, s.id[i]));
            }
        });
        best.map(|b| b.3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: every value the step function takes in column c's real interval.
    fn brute(xs: &[i64], ys: &[u64], x0: i64, x1: i64, cols: usize) -> Vec<Option<(u64, u64)>> {
        let span = (x1 - x0) as f64;
        (0..cols)
            .map(|c| {
                let a = x0 as f64 + c as f64 * span / cols as f64;
                let b = x0 as f64 + (c + 1) as f64 * span / cols as f64;
                let mut mm: Option<(u64, u64)> = None;
                for i in 0..xs.len() {
                    let s = xs[i] as f64;
                    let e = if i + 1 < xs.len() {
                        xs[i + 1] as f64
                    } else {
                        f64::INFINITY
                    };
                    // Segment [s, e) (or the point s when e == s) intersects [a, b)?
                    let hits = if e > s {
                        s < b && e > a
                    } else {
                        s >= a && s < b
                    };
                    let inside_window =
                        s < x1 as f64 && (e > x0 as f64 || (e == s && s >= x0 as f64));
                    if hits && inside_window {
                        let v = ys[i];
                        mm = Some(mm.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
                    }
                }
                mm
            })
            .collect()
    }

    #[test]
    fn envelope_keeps_instantaneous_peaks() {
        // Three events at x=10: 5 → 100 → 7; the 100 lasts zero time but must show.
        let xs = [0, 10, 10, 10, 20];
        let ys = [1, 5, 100, 7, 3];
        let env = step_envelope(&xs, &ys, 0, 40, 4);
        assert_eq!(env.max, vec![1, 100, 3, 3]);
        assert_eq!(env.min, vec![1, 5, 3, 3]);
        assert_eq!(env.argmax[1], 10);
        assert_eq!(env.last[1], 7);
        assert!(env.defined.iter().all(|d| *d));
    }

    #[test]
    fn envelope_matches_brute_force_on_many_windows() {
        // Deterministic pseudo-random step function.
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        let mut x = -50i64;
        for _ in 0..300 {
            x += (next() % 4) as i64; // ties included
            xs.push(x);
            ys.push(next() % 1000);
        }
        for (x0, x1, cols) in [
            (-60, 700, 7),
            (0, 100, 100),
            (13, 17, 50),
            (-50, 600, 1),
            (100, 350, 33),
        ] {
            let env = step_envelope(&xs, &ys, x0, x1, cols);
            let want = brute(&xs, &ys, x0, x1, cols);
            for (c, w) in want.iter().enumerate() {
                match *w {
                    None => assert!(!env.defined[c], "col {c} of {x0}..{x1}/{cols}"),
                    Some((lo, hi)) => {
                        assert!(env.defined[c], "col {c} of {x0}..{x1}/{cols}");
                        assert_eq!(
                            (env.min[c], env.max[c]),
                            (lo, hi),
                            "col {c} of {x0}..{x1}/{cols}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn envelope_with_more_columns_than_points_fills_every_column() {
        let xs = [0, 1, 2];
        let ys = [4, 9, 2];
        let env = step_envelope(&xs, &ys, 0, 3, 9);
        assert_eq!(env.max, vec![4, 4, 4, 9, 9, 9, 2, 2, 2]);
    }

    fn set() -> RectSet {
        // id 0: big; id 1, 2: tiny and adjacent (merge into one run); id 3: outside.
        RectSet::new(
            vec![0, 50, 51, 500],
            vec![40, 51, 52, 510],
            vec![0, 10, 10, 0],
            vec![100, 11, 11, 5],
            vec![0, 1, 1, 0],
            vec![0, 1, 2, 3],
        )
    }

    #[test]
    fn visible_draws_big_rects_and_merges_tiny_ones() {
        let view = Viewport {
            x0: 0.0,
            x1: 100.0,
            y0: 0.0,
            y1: 100.0,
        };
        let lod = set().visible(&view, 100, 100, 1000);
        assert_eq!(lod.visible, 3);
        assert_eq!(lod.individual, 1);
        assert_eq!(lod.merged, 2);
        let big = lod.id.iter().position(|&id| id == 0).unwrap();
        assert_eq!(
            (lod.x[big], lod.y[big], lod.w[big], lod.h[big]),
            (0.0, 0.0, 40.0, 100.0)
        );
        let runs: Vec<usize> = (0..lod.len()).filter(|&k| lod.id[k] == u32::MAX).collect();
        assert_eq!(runs.len(), 1);
        let r = runs[0];
        // x 50..52 → pixels 50..52; y 10..11 → canvas row 89.
        assert_eq!(
            (lod.x[r], lod.y[r], lod.w[r], lod.h[r]),
            (50.0, 89.0, 2.0, 1.0)
        );
    }

    #[test]
    fn max_rects_demotes_the_rest_to_runs() {
        let view = Viewport {
            x0: 0.0,
            x1: 100.0,
            y0: 0.0,
            y1: 100.0,
        };
        let lod = set().visible(&view, 100, 100, 0);
        assert_eq!(lod.individual, 0);
        assert_eq!(lod.merged, 3);
        assert!(lod.id.iter().all(|&id| id == u32::MAX));
    }

    #[test]
    fn hit_prefers_higher_class_then_smaller_area() {
        let s = RectSet::new(
            vec![0, 0, 5],
            vec![10, 10, 6],
            vec![0, 0, 0],
            vec![10, 5, 10],
            vec![0, 0, 2],
            vec![7, 8, 9],
        );
        assert_eq!(s.hit(1.0, 1.0), Some(8));
        assert_eq!(s.hit(1.0, 7.0), Some(7));
        assert_eq!(s.hit(5.5, 1.0), Some(9));
        assert_eq!(s.hit(20.0, 1.0), None);
    }

    #[test]
    fn hit_near_finds_thin_rects_beside_the_point() {
        let s = RectSet::new(
            vec![0, 50, 52],
            vec![10, 51, 53],
            vec![0, 0, 0],
            vec![10, 10, 10],
            vec![0, 0, 3],
            vec![1, 2, 3],
        );
        // Inside a rectangle: the exact hit wins.
        assert_eq!(s.hit_near(5.0, 5.0, 3.0, 1.0), Some(1));
        // Between the thin ones: both are near, the higher class wins.
        assert_eq!(s.hit_near(51.5, 5.0, 1.0, 1.0), Some(3));
        // Only the first is within reach.
        assert_eq!(s.hit_near(49.5, 5.0, 1.0, 1.0), Some(2));
        assert_eq!(s.hit_near(30.0, 5.0, 1.0, 1.0), None);
    }

    /// Pseudo-random rectangles of every width, for the index tests.
    fn random_set(n: usize, seed: u64) -> RectSet {
        let mut state = seed;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut set = RectSet::with_capacity(n);
        for i in 0..n {
            let a = (next() % 10_000) as i64;
            let w = match next() % 4 {
                0 => 0,
                1 => (next() % 3) as i64,
                2 => (next() % 200) as i64,
                _ => (next() % 10_000) as i64,
            };
            let b = next() % 1_000_000;
            let h = 1 + next() % 20_000;
            let class = (next() % 5) as u8;
            set.push((a, a + w), (b, b + h), class, i as u32);
        }
        set
    }

    /// Highest class + 1 per pixel painted by a Lod's merged runs.
    fn runs_raster(lod: &Lod, w: u32, h: u32) -> Vec<u8> {
        let mut r = vec![0u8; (w * h) as usize];
        for k in 0..lod.len() {
            if lod.id[k] != u32::MAX {
                continue;
            }
            let row = lod.y[k] as u32;
            for c in lod.x[k] as u32..(lod.x[k] + lod.w[k]) as u32 {
                let p = &mut r[(row * w + c) as usize];
                *p = (*p).max(lod.class[k] + 1);
            }
        }
        r
    }

    #[test]
    fn index_shows_what_the_plain_set_shows() {
        let set = random_set(3000, 99);
        let index = RectIndex::new(set.clone());
        for (x0, x1, y0, y1) in [
            (0.0, 10_000.0, 0.0, 1_020_000.0),
            (2_000.0, 2_100.0, 400_000.0, 420_000.0),
            (9_990.0, 10_000.0, 0.0, 50_000.0),
            (-50.0, 10.5, 0.0, 1_000.0),
            (5_000.0, 5_000.5, 0.0, 1_020_000.0),
        ] {
            let view = Viewport { x0, x1, y0, y1 };
            let (w, h) = (300, 200);
            let a = set.visible(&view, w, h, usize::MAX);
            let b = index.visible(&view, w, h, usize::MAX);
            assert_eq!(
                (a.visible, a.individual, a.merged),
                (b.visible, b.individual, b.merged)
            );
            let ind = |l: &Lod| {
                let mut v: Vec<(u32, u8, [u32; 4])> = (0..l.len())
                    .filter(|&k| l.id[k] != u32::MAX)
                    .map(|k| {
                        (
                            l.id[k],
                            l.class[k],
                            [l.x[k], l.y[k], l.w[k], l.h[k]].map(f32::to_bits),
                        )
                    })
                    .collect();
                v.sort_unstable();
                v
            };
            assert_eq!(ind(&a), ind(&b));
            assert_eq!(runs_raster(&a, w, h), runs_raster(&b, w, h));
            // Runs of the index never overlap: one per pixel at most.
            let painted: f32 = (0..b.len())
                .filter(|&k| b.id[k] == u32::MAX)
                .map(|k| b.w[k])
                .sum();
            assert_eq!(
                painted as usize,
                runs_raster(&b, w, h).iter().filter(|&&p| p > 0).count()
            );
        }
    }

    #[test]
    fn index_hits_like_the_plain_set() {
        let set = random_set(2000, 7);
        let index = RectIndex::new(set.clone());
        let mut state = 5u64;
        for _ in 0..500 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let x = (state >> 40) as f64 % 10_050.0;
            let y = (state >> 20) as f64 % 1_000_000.0;
            for (dx, dy) in [(0.0, 0.0), (3.0, 500.0), (40.0, 9000.0)] {
                assert_eq!(
                    index.hit_near(x, y, dx, dy),
                    set.hit_near(x, y, dx, dy),
                    "{x} {y} {dx} {dy}"
                );
            }
        }
    }
}
