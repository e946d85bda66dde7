//! The snapshot view model against `fixtures/snapshots/expected.json` (derived with Python's
//! `pickle`): the stacked timeline puts every allocation where the independent stacking puts it,
//! columns reach the stack's height, curves peak where the summary says, the allocator state
//! view finds every block, tables list the groups, and the export equals the summary.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::snapshot::view::{
    CurveRequest, HitRequest, PositionRequest, SnapshotView, TableRequest, ViewRequest,
};
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

/// Every row of table `name` of device 0, unsorted and unfiltered, as the table answers it: the
/// row ids (in row order), one column's numbers and the text of the `frame` column.
fn rows_of(v: &mut SnapshotView, name: &str, column: &str) -> Vec<(u32, u64, String)> {
    let mut out = Vec::new();
    loop {
        let t = v
            .table(&TableRequest {
                device: 0,
                table: name.into(),
                query: Query::default(),
                offset: out.len(),
                limit: 5000,
            })
            .unwrap();
        let nums = t.page.column(column).unwrap();
        let frames = t.page.column("frame").unwrap();
        for (k, &id) in t.page.ids.iter().enumerate() {
            let n = serde_json::to_value(nums[k]).unwrap().as_u64().unwrap();
            let f = serde_json::to_value(frames[k]).unwrap();
            out.push((id, n, f.as_str().unwrap().to_string()));
        }
        if out.len() >= t.page.total {
            return out;
        }
    }
}

fn at(table: &str, query: Query, row: Option<u32>, group: Option<u32>) -> PositionRequest {
    PositionRequest {
        device: 0,
        table: table.into(),
        query,
        row,
        group,
    }
}

/// Where a selection sits in a table, against the table's own rows ordered in the test: sorted by
/// size both ways (ties in row order), filtered by a frame's file (a hidden row has none), a group
/// in the table of groups at the peak (and one that is not at the peak); unknown devices, rows and
/// group questions to the OOMs are errors. (Seen failing with a position read off the unsorted
/// rows: the first sorted position checked differed.)
#[test]
fn a_selected_row_is_found_where_the_sorted_filtered_table_shows_it() {
    let mut v = open(MEDIUM);
    let rows = rows_of(&mut v, "allocations", "size");
    assert!(rows.len() > 1000, "{} allocations", rows.len());
    // A selection far down the table (the page fetches 200 rows at a time).
    let sizes: Vec<u64> = rows.iter().map(|r| r.1).collect();
    assert!(
        sizes.windows(2).any(|w| w[0] != w[1]),
        "sizes differ, so the sort moves rows"
    );
    for desc in [false, true] {
        let mut want: Vec<&(u32, u64, String)> = rows.iter().collect();
        // A stable sort: equal sizes keep their row order, in both directions.
        want.sort_by(|a, b| if desc { b.1.cmp(&a.1) } else { a.1.cmp(&b.1) });
        let query = Query {
            sort: vec![("size".into(), desc)],
            ..Default::default()
        };
        let step = (want.len() / 300).max(1);
        for (i, r) in want.iter().enumerate().step_by(step) {
            let got = v
                .position(&at("allocations", query.clone(), Some(r.0), None))
                .unwrap();
            assert_eq!(got, Some(i), "row {} sorted by size, desc {desc}", r.0);
        }
    }
    // Filtered: the rows whose frame names optimizer.py, in row order; the others are hidden.
    let query = Query {
        text: vec![TextFilter {
            pattern: "optimizer.py".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let shown: Vec<u32> = rows
        .iter()
        .filter(|r| r.2.to_lowercase().contains("optimizer.py"))
        .map(|r| r.0)
        .collect();
    assert!(!shown.is_empty() && shown.len() < rows.len());
    let mut hidden = 0;
    for r in rows.iter().step_by(7) {
        let got = v
            .position(&at("allocations", query.clone(), Some(r.0), None))
            .unwrap();
        let want = shown.iter().position(|&id| id == r.0);
        assert_eq!(got, want, "row {} filtered", r.0);
        hidden += usize::from(want.is_none());
    }
    assert!(hidden > 0, "some rows checked are hidden");

    // Groups at the peak, largest first: a group is found at its row of the sorted groups.
    let peak = rows_of(&mut v, "peak", "bytes");
    let peak_groups = v
        .table(&TableRequest {
            device: 0,
            table: "peak".into(),
            query: Query::default(),
            offset: 0,
            limit: peak.len(),
        })
        .unwrap()
        .groups;
    let mut want: Vec<(usize, u64)> = peak.iter().map(|r| (r.0 as usize, r.1)).collect();
    want.sort_by_key(|r| std::cmp::Reverse(r.1));
    let by_bytes = Query {
        sort: vec![("bytes".into(), true)],
        ..Default::default()
    };
    for (i, &(id, _)) in want.iter().enumerate() {
        let g = peak_groups[id];
        let got = v.position(&at("peak", by_bytes.clone(), None, Some(g)));
        assert_eq!(got, Ok(Some(i)), "group {g}");
    }
    // A group of an allocation that is not alive at the peak is not in the table.
    let all_groups = v
        .table(&TableRequest {
            device: 0,
            table: "allocations".into(),
            query: Query::default(),
            offset: 0,
            limit: 10_000,
        })
        .unwrap()
        .groups;
    let absent = all_groups
        .iter()
        .copied()
        .find(|g| !peak_groups.contains(g))
        .expect("a group not alive at the peak");
    assert_eq!(
        v.position(&at("peak", by_bytes.clone(), None, Some(absent))),
        Ok(None)
    );

    // Errors: an unknown device, a row past the table, a group of the OOMs, neither or both.
    let mut bad = at("allocations", Query::default(), Some(0), None);
    bad.device = 7;
    assert!(v.position(&bad).unwrap_err().contains("device"));
    let past = rows.len() as u32;
    let e = v
        .position(&at("allocations", Query::default(), Some(past), None))
        .unwrap_err();
    assert!(e.contains(&format!("no row {past}")), "{e}");
    assert!(v
        .position(&at("ooms", Query::default(), None, Some(0)))
        .unwrap_err()
        .contains("no groups"));
    assert!(v
        .position(&at("allocations", Query::default(), None, None))
        .is_err());
    assert!(v
        .position(&at("allocations", Query::default(), Some(0), Some(0)))
        .is_err());
    assert!(v
        .position(&at("nope", Query::default(), Some(0), None))
        .is_err());
}
