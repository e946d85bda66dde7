//! The snapshot view model against `fixtures/snapshots/expected.json` (derived with Python's
//! `pickle`): the stacked timeline puts every allocation where the independent stacking puts it,
//! columns reach the stack's height, curves peak where the summary says, the allocator state
//! view finds every block, tables list the groups, and the export equals the summary.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::snapshot::view::{CurveRequest, HitRequest, SnapshotView, TableRequest, ViewRequest};
use memlens::source::PathSource;
use memlens::table::{Query, TextFilter};
use serde_json::Value;
use std::path::Path;

const TINY: &str = "cs336_tiny_mem_snapshot.pickle";
const MEDIUM: &str = "cs336_medium_128_training_memory_snapshot.pickle";

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/snapshots"))
}

fn open(name: &str) -> SnapshotView {
    let src = PathSource::open(&dir().join(name), name).unwrap();
    SnapshotView::open(&src).unwrap_or_else(|d| panic!("{d}"))
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(dir().join("expected.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v[name]["devices"]["0"].clone()
}

#[test]
fn every_allocation_sits_where_the_independent_stacking_puts_it() {
    let mut v = open(TINY);
    let e = expected(TINY);
    let ov = v.overview();
    let d = &ov.devices[0];
    assert_eq!(
        d.allocations as u64,
        e["timeline_allocations"].as_u64().unwrap()
    );
    let stacks = e["stack_after"].as_array().unwrap();
    let max = stacks
        .iter()
        .map(|s| s["height"].as_u64().unwrap())
        .max()
        .unwrap();
    assert_eq!(d.max_stack_bytes, max);
    let mut checked = 0;
    for (p, s) in stacks.iter().enumerate() {
        for row in s["allocations"].as_array().unwrap() {
            let (addr, size, offset) = (
                row[0].as_u64().unwrap(),
                row[1].as_u64().unwrap(),
                row[2].as_u64().unwrap(),
            );
            if size == 0 {
                continue;
            }
            let hit = v
                .timeline_hit(&HitRequest {
                    device: 0,
                    x: p as f64 + 0.5,
                    y: offset as f64 + size as f64 / 2.0,
                    dx: 0.0,
                    dy: 0.0,
                })
                .unwrap()
                .unwrap_or_else(|| panic!("entry {p}: nothing at offset {offset}"));
            assert_eq!(hit.address, format!("0x{addr:x}"), "entry {p}");
            assert_eq!((hit.size, hit.offset), (size, Some(offset)), "entry {p}");
            checked += 1;
        }
        // Above the stack: nothing.
        let above = v
            .timeline_hit(&HitRequest {
                device: 0,
                x: p as f64 + 0.5,
                y: s["height"].as_u64().unwrap() as f64 + 1.0,
                dx: 0.0,
                dy: 0.0,
            })
            .unwrap();
        assert!(above.is_none(), "entry {p}");
    }
    assert!(checked > 500, "{checked}");
}

#[test]
fn each_column_reaches_the_height_of_its_entry() {
    let mut v = open(TINY);
    let e = expected(TINY);
    let stacks = e["stack_after"].as_array().unwrap();
    let n = stacks.len();
    let max = v.overview().devices[0].max_stack_bytes as f64;
    let height = 2000u32;
    let lod = v
        .timeline_view(&ViewRequest {
            device: 0,
            x0: 0.0,
            x1: n as f64,
            y0: 0.0,
            y1: max,
            width: n as u32,
            height,
            highlight: None,
        })
        .unwrap();
    assert!(lod.individual > 0 && lod.merged > 0);
    for (c, s) in stacks.iter().enumerate() {
        let h = s["height"].as_u64().unwrap() as f64;
        let top = (0..lod.len())
            .filter(|&i| lod.x[i] as usize <= c && c < (lod.x[i] + lod.w[i]) as usize)
            .map(|i| lod.y[i])
            .fold(f32::INFINITY, f32::min);
        let want = (max - h) * f64::from(height) / max;
        if h == 0.0 {
            assert!(top.is_infinite(), "column {c}");
        } else {
            assert!(
                (f64::from(top) - want).abs() <= 1.0,
                "column {c}: top {top}, want {want}"
            );
        }
    }
    // One column over the whole trace shows the highest entry: the peak.
    let one = v
        .timeline_view(&ViewRequest {
            device: 0,
            x0: 0.0,
            x1: n as f64,
            y0: 0.0,
            y1: max,
            width: 1,
            height,
            highlight: None,
        })
        .unwrap();
    let top = one.y.iter().copied().fold(f32::INFINITY, f32::min);
    assert!(top <= 1.0, "{top}");
}

#[test]
fn curves_peak_where_the_summary_says() {
    for name in [TINY, MEDIUM] {
        let mut v = open(name);
        let e = expected(name);
        let n = e["trace_entries"].as_u64().unwrap() as f64;
        let c = v
            .curve(&CurveRequest {
                device: 0,
                x0: 0.0,
                x1: n,
                columns: 1,
            })
            .unwrap();
        assert_eq!(
            c.allocated.max[0],
            e["peak_allocated_bytes"].as_f64().unwrap(),
            "{name}"
        );
        assert_eq!(
            c.reserved.max[0],
            e["reserved_curve_max"].as_f64().unwrap(),
            "{name}"
        );
        assert_eq!(
            c.reserved.min[0],
            e["reserved_curve_min"].as_f64().unwrap(),
            "{name}"
        );
        // 1000 columns: the envelope's highest column is the peak too, at the peak's entry.
        let wide = v
            .curve(&CurveRequest {
                device: 0,
                x0: 0.0,
                x1: n,
                columns: 1000,
            })
            .unwrap();
        let (col, max) = wide
            .allocated
            .max
            .iter()
            .enumerate()
            .fold((0, 0.0), |a, (i, &m)| if m > a.1 { (i, m) } else { a });
        assert_eq!(max, e["peak_allocated_bytes"].as_f64().unwrap());
        let peak = e["peak_trace_index"].as_f64().unwrap();
        assert_eq!(col, (peak * 1000.0 / n) as usize, "{name}");
    }
}

#[test]
fn the_state_view_finds_every_block_and_the_tables_list_the_groups() {
    let mut v = open(MEDIUM);
    let e = expected(MEDIUM);
    let segs: Vec<_> = v.analysis.devices[0].segments.clone();
    assert_eq!(segs.len() as u64, e["segments"].as_u64().unwrap());
    // Segments are packed into rows as wide as the largest one, without overlapping.
    let place = v.state_layout(0).unwrap();
    assert!(
        place.rows >= 1 && (place.rows as usize) < segs.len(),
        "{} rows",
        place.rows
    );
    let mut spans: Vec<(u32, u64, u64)> = segs
        .iter()
        .zip(&place.at)
        .map(|(&si, &(r, x))| (r, x, x + v.snap.segments[si as usize].total_size))
        .collect();
    spans.sort();
    for w in spans.windows(2) {
        assert!(w[0].0 != w[1].0 || w[0].2 <= w[1].1, "{w:?} overlap");
    }
    assert!(spans.iter().all(|s| s.2 <= place.width));
    let mut allocated = 0;
    for (k, &si) in segs.iter().enumerate() {
        let s = v.snap.segments[si as usize].clone();
        let (row, x0) = place.at[k];
        let blocks: Vec<_> = v.snap.blocks_of(&s).to_vec();
        for b in blocks {
            let hit = v
                .state_hit(&HitRequest {
                    device: 0,
                    x: x0 as f64 + (b.address - s.address) as f64 + b.size as f64 / 2.0,
                    y: f64::from(row) * 10.0 + 5.0,
                    dx: 0.0,
                    dy: 0.0,
                })
                .unwrap()
                .unwrap();
            assert_eq!(hit.address, format!("0x{:x}", b.address));
            assert_eq!(hit.size, b.size);
            if hit.state == "active_allocated" {
                allocated += hit.size;
            }
        }
    }
    assert_eq!(allocated, e["allocated_bytes"].as_u64().unwrap());
    let lod = v
        .state_view(&ViewRequest {
            device: 0,
            x0: 0.0,
            x1: place.width as f64,
            y0: 0.0,
            y1: f64::from(place.rows) * 10.0,
            width: 1440,
            height: 900,
            highlight: None,
        })
        .unwrap();
    // Every segment bar and block once.
    assert_eq!(
        lod.visible,
        e["segments"].as_u64().unwrap() + e["blocks"].as_u64().unwrap()
    );

    // Groups at the peak, largest first: the expected top groups, in order.
    let t = v
        .table(&TableRequest {
            device: 0,
            table: "peak".into(),
            query: Query {
                sort: vec![("bytes".into(), true)],
                ..Default::default()
            },
            offset: 0,
            limit: 3,
            locate: None,
        })
        .unwrap();
    let groups = &e["live_at_peak_by_frame"];
    assert_eq!(t.page.total as u64, groups["groups"].as_u64().unwrap());
    let bytes: Vec<u64> = t
        .page
        .column("bytes")
        .unwrap()
        .iter()
        .map(|c| serde_json::to_value(c).unwrap().as_u64().unwrap())
        .collect();
    let want: Vec<u64> = groups["top"].as_array().unwrap()[..3]
        .iter()
        .map(|g| g["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(bytes, want);
    let a = v
        .table(&TableRequest {
            device: 0,
            table: "allocations".into(),
            query: Query {
                text: vec![TextFilter {
                    pattern: "optimizer.py".into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
            offset: 0,
            limit: 10,
            locate: None,
        })
        .unwrap();
    let total = a.page.total as u64;
    assert!(total > 0 && total < e["timeline_allocations"].as_u64().unwrap());
    assert!(v
        .table(&TableRequest {
            device: 0,
            table: "nope".into(),
            query: Query::default(),
            offset: 0,
            limit: 10,
            locate: None,
        })
        .is_err());
    assert_eq!(
        String::from_utf8(v.export("summary.json").unwrap()).unwrap(),
        v.summary_json()
    );
    assert!(v.export("nope.csv").is_err());
}

/// The allocator state view's drawing list, read back against the snapshot itself: every
/// rectangle drawn on its own is the segment bar or the block its id names, at that segment's
/// place in the row plus the block's offset in the segment, in its row's band, of its state's class.
#[test]
fn the_state_view_draws_each_segment_and_block_where_the_snapshot_says() {
    use memlens::snapshot::model::BlockState;
    use memlens::snapshot::state::{
        CLASS_ALLOCATED, CLASS_FREE, CLASS_PENDING, CLASS_SEGMENT, SEGMENT_ID,
    };
    let mut v = open(MEDIUM);
    let place = v.state_layout(0).unwrap();
    let segs: Vec<u32> = v.analysis.devices[0].segments.clone();
    let (px_w, px_h) = (16_384u32, 16_384u32);
    let (y1_view, width) = (f64::from(place.rows) * 10.0, place.width as f64);
    let lod = v
        .state_view(&ViewRequest {
            device: 0,
            x0: 0.0,
            x1: width,
            y0: 0.0,
            y1: y1_view,
            width: px_w,
            height: px_h,
            highlight: None,
        })
        .unwrap();
    let (sx, sy) = (f64::from(px_w) / width, f64::from(px_h) / y1_view);
    // Where the rectangle of (segment position k, byte offset, bytes) must be, in pixels.
    let expect = |k: usize, off: u64, size: u64| {
        let (row, x) = place.at[k];
        let left = (x + off) as f64 * sx;
        let right = ((x + off + size) as f64).min(width) * sx;
        let top = (y1_view - (f64::from(row) * 10.0 + 9.0)) * sy;
        (left, top, right - left, 8.0 * sy)
    };
    let close = |a: f32, b: f64| (f64::from(a) - b).abs() <= 1e-3 * b.abs().max(1.0);
    let (mut bars, mut blocks) = (0, 0);
    for i in 0..lod.len() {
        let id = lod.id[i];
        if id == u32::MAX {
            continue;
        }
        let (want, class) = if id & SEGMENT_ID != 0 {
            let si = id & !SEGMENT_ID;
            let k = segs
                .iter()
                .position(|&s| s == si)
                .expect("a segment of the device");
            bars += 1;
            let s = &v.snap.segments[si as usize];
            (expect(k, 0, s.total_size), CLASS_SEGMENT)
        } else {
            let b = &v.snap.blocks[id as usize];
            let k = segs
                .iter()
                .position(|&si| {
                    let s = &v.snap.segments[si as usize];
                    (s.first_block..s.first_block + s.block_count).contains(&id)
                })
                .expect("a block of a segment of the device");
            blocks += 1;
            let s = &v.snap.segments[segs[k] as usize];
            let class = match b.state {
                BlockState::ActiveAllocated => CLASS_ALLOCATED,
                BlockState::ActiveAwaitingFree | BlockState::ActivePendingFree => CLASS_PENDING,
                BlockState::Inactive | BlockState::Unknown => CLASS_FREE,
            };
            (expect(k, b.address - s.address, b.size), class)
        };
        let got = (lod.x[i], lod.y[i], lod.w[i], lod.h[i]);
        assert!(
            close(got.0, want.0)
                && close(got.1, want.1)
                && close(got.2, want.2)
                && close(got.3, want.3),
            "rectangle {i} (id {id:#x}): drawn at {got:?}, the snapshot puts it at {want:?}"
        );
        assert_eq!(lod.class[i], class, "rectangle {i} (id {id:#x})");
    }
    // Every segment bar is wide enough to be drawn on its own; so are many blocks.
    assert_eq!(bars, segs.len());
    assert!(blocks > 100, "{blocks} blocks drawn on their own");
}

/// The timed open reads the same snapshot as the plain one, and gives each of its three steps the
/// span of the clock between them: a clock that advances 1 ms per question is asked three times
/// for the read (its start, the parse's end, the model's end) and twice for the analysis, so every
/// step took exactly 1 ms.
#[test]
fn a_timed_open_times_each_step_by_the_callers_clock_and_reads_the_same() {
    let ticks = std::cell::Cell::new(0.0);
    let clock = || {
        let t = ticks.get();
        ticks.set(t + 1.0);
        t
    };
    let src = PathSource::open(&dir().join(TINY), TINY).unwrap();
    let timed = SnapshotView::open_timed(&src, &clock).unwrap_or_else(|d| panic!("{d}"));
    let t = timed.timings();
    assert_eq!((t.parse_ms, t.model_ms, t.analyse_ms), (1.0, 1.0, 1.0));
    assert_eq!(ticks.get(), 5.0);
    assert_eq!(timed.summary_json(), open(TINY).summary_json());
    // The plain open has no clock: its steps say nothing.
    assert_eq!(open(TINY).timings().parse_ms, 0.0);
}
