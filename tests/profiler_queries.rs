//! The view queries of a rank (table pages, live set at a time, curves for a window) on the
//! committed example job, checked against brute force over the same rows; the table through the
//! view model's requests, as the page asks.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::memory_record::Metric;
use memlens::profiler::queries::{curve_window, RowFilter};
use memlens::profiler::view::{JobView, Request};
use memlens::profiler::{discover_job, JobAnalysis};
use serde_json::{json, Value};
use std::path::Path;

fn example_view() -> JobView {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/examples/two-rank-job");
    let mut inputs = memlens::families::input_set_from_paths(&[p]);
    let mut view = JobView::open(&mut inputs);
    view.analyze(&inputs);
    view
}

fn ask(view: &mut JobView, method: &str, params: Value) -> Result<Value, String> {
    let r: Request = serde_json::from_value(json!({ "method": method, "params": params })).unwrap();
    view.answer(&r).map(|t| serde_json::from_str(&t).unwrap())
}

fn example() -> JobAnalysis {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/examples/two-rank-job");
    let mut inputs = memlens::families::input_set_from_paths(&[p]);
    let job = discover_job(inputs.classify());
    analyze_job(&inputs, &job, &AnalyzeOptions::default(), &mut |_| {})
}

#[test]
fn example_job_is_small_and_complete() {
    let a = example();
    assert_eq!(a.ranks.len(), 2);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    for r in &a.ranks {
        let s = &r.summary;
        assert_eq!(s.rows, 300);
        assert!(
            s.rows_ge > 0
                && s.stacks.direct > 0
                && s.stacks.via_forward > 0
                && s.unreleased_rows > 0
        );
        assert_eq!(s.step_peaks.len(), 2);
        assert!(!s.module_peaks.is_empty());
    }
}

#[test]
fn table_filters_sorts_and_pages() {
    let a = example();
    let r = &a.ranks[0];
    let mut view = example_view();
    let page = ask(
        &mut view,
        "table",
        json!({"rank": 0, "offset": 0, "limit": 5,
               "query": {"name": "^aten::empty", "min_size": 1048576, "sort": "size", "descending": true}}),
    )
    .unwrap();
    let want: Vec<usize> = (0..r.rows.len())
        .filter(|&i| r.name(i).starts_with("aten::empty") && r.rows[i].size >= 1 << 20)
        .collect();
    assert_eq!(page["total"].as_u64().unwrap() as usize, want.len());
    let ids: Vec<usize> = page["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    assert!(!ids.is_empty() && ids.len() <= 5);
    // Cells cross by column name, and they are the rows' own values.
    let sizes: Vec<u64> = page["columns"]["size"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(
        sizes,
        ids.iter().map(|&i| r.rows[i].size).collect::<Vec<_>>()
    );
    for (k, &i) in ids.iter().enumerate() {
        assert_eq!(page["columns"]["name"][k], r.name(i));
        assert_eq!(page["columns"]["top_frame"][k], r.top_frame(i));
    }
    assert!(
        page["columns"].get("stack").is_none(),
        "the stack is searched, not sent"
    );
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
    let max = want.iter().map(|&i| r.rows[i].size).max().unwrap_or(0);
    assert_eq!(sizes.first().copied().unwrap_or(0), max);
    // Descending mirrors ascending exactly, ties included.
    let all = |desc: bool, view: &mut JobView| -> Vec<u64> {
        let p = ask(
            view,
            "table",
            json!({"rank": 0, "offset": 0, "limit": 10000, "query": {"sort": "size", "descending": desc}}),
        )
        .unwrap();
        p["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let mut up = all(false, &mut view);
    up.reverse();
    assert_eq!(up, all(true, &mut view));
    assert!(ask(
        &mut view,
        "table",
        json!({"rank": 0, "offset": 0, "limit": 5, "query": {"stack": "("}})
    )
    .is_err());
    let by_stack = ask(
        &mut view,
        "table",
        json!({"rank": 0, "offset": 0, "limit": 1000, "query": {"stack": "model\\.py"}}),
    )
    .unwrap();
    assert!(by_stack["total"].as_u64().unwrap() > 0);
    assert!(by_stack["ids"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| r.stack(i.as_u64().unwrap() as usize).contains("model.py")));
    // A row's position in the view is where its page shows it.
    let q = json!({"sort": "size", "descending": true});
    let p = ask(
        &mut view,
        "table",
        json!({"rank": 0, "offset": 7, "limit": 1, "query": q}),
    )
    .unwrap();
    let row = p["ids"][0].as_u64().unwrap();
    let pos = ask(
        &mut view,
        "position",
        json!({"rank": 0, "row": row, "query": q}),
    )
    .unwrap();
    assert_eq!(pos, 7);
}

#[test]
fn live_set_and_curve_window_match_brute_force() {
    let a = example();
    let r = &a.ranks[1];
    let t = r.summary.peak_time_ns;
    let live = r.live_at(t);
    let brute: u64 = r
        .rows
        .iter()
        .filter(|x| {
            x.source == memlens::profiler::operator_memory::RowSource::Pta
                && !x.negative
                && x.alloc_ns().is_some_and(|a| a <= t)
                && x.release_ns().is_none_or(|e| e > t)
        })
        .map(|x| x.size)
        .sum();
    assert_eq!(live.iter().map(|g| g.bytes).sum::<u64>(), brute);
    let (xs, ys) = r.curve("PTA", Metric::Allocated);
    let (x0, x1) = (xs[0], *xs.last().unwrap() + 1);
    let env = curve_window(&r.memory, "PTA", Metric::Allocated, x0, x1, 50);
    let top = env.max.iter().copied().max().unwrap_or(0);
    assert_eq!(top, *ys.iter().max().unwrap());
    assert_eq!(top, r.summary.peak_allocated_bytes);
}

/// The queries the page's views add (src/profiler/view.rs and the table's group filters), on the
/// example job, against brute force over the rows.
#[test]
fn view_queries_match_brute_force() {
    use memlens::profiler::analysis::{NO_OP, NO_STACK, UNTRACKED};
    use memlens::profiler::view::lifetime_layout;
    let a = example();
    for r in &a.ranks {
        let s = &r.summary;
        // The peak's groups, rebuilt through live_groups, are the summary's.
        let at_peak = r.live_groups(s.peak_time_ns, Some(s.peak_allocated_bytes));
        assert_eq!(at_peak, s.live_at_peak);
        assert_eq!(
            at_peak.iter().map(|g| g.bytes).sum::<u64>(),
            s.peak_allocated_bytes
        );
        // Each group's table filter lists exactly its live rows.
        for g in at_peak.iter().filter(|g| g.frame != UNTRACKED) {
            let ids = r.rows_matching(&RowFilter {
                live_at: Some(s.peak_time_ns),
                top_frame: Some(g.frame.clone()),
                ..RowFilter::default()
            });
            assert_eq!(ids.len() as u64, g.count, "{}", g.frame);
            let bytes: u64 = ids.iter().map(|&i| r.rows[i as usize].size).sum();
            assert_eq!(bytes, g.bytes);
        }
        // Unreleased over the whole capture = the summary's leak candidates.
        let unrel = r.unreleased_groups(None, None);
        assert_eq!(
            unrel.iter().map(|g| g.count).sum::<u64>(),
            s.unreleased_rows
        );
        assert_eq!(
            unrel.iter().map(|g| g.bytes).sum::<u64>(),
            s.unreleased_bytes
        );
        // In a window: allocated in it and still held at its end, by brute force.
        let t0 = r.rows.iter().filter_map(|m| m.alloc_ns()).min().unwrap();
        let t1 = r.capture_end_ns;
        let (ws, we) = (t0 + (t1 - t0) / 3, t0 + 2 * (t1 - t0) / 3);
        let want: Vec<usize> = (0..r.rows.len())
            .filter(|&i| {
                let m = &r.rows[i];
                let t = m.time_ns().unwrap_or(i64::MIN);
                !m.negative && t >= ws && t <= we && m.release_ns().is_none_or(|x| x > we)
            })
            .collect();
        let win = r.unreleased_groups(Some(ws), Some(we));
        assert_eq!(win.iter().map(|g| g.count).sum::<u64>(), want.len() as u64);
        assert!(want
            .iter()
            .all(|&i| win.iter().any(|g| g.frame == r.group_of(i))));
        assert!(win
            .iter()
            .all(|g| g.frame != NO_STACK || want.iter().any(|&i| r.top_frame(i).is_empty())));
        // Every row with a containing op names it; the op's interval holds the allocation.
        for (i, &(op, _)) in r.row_ops.iter().enumerate() {
            if op == NO_OP {
                continue;
            }
            let o = r.joined_ops[op as usize];
            let t = r.rows[i].alloc_ns().unwrap();
            assert!(o.ts <= t && t <= o.ts + o.dur);
            assert_eq!(r.names.get(o.name), r.name(i));
        }
        // The timeline: one bar per allocation with a time, unreleased ones to the capture end,
        // and no two bars overlapping while both blocks are held.
        let origin = r.capture_start_ns();
        let l = lifetime_layout(r, origin);
        let drawn: Vec<usize> = (0..r.rows.len())
            .filter(|&i| !r.rows[i].negative && r.rows[i].alloc_ns().is_some())
            .collect();
        assert_eq!(l.rects.len(), drawn.len());
        let mut bars: Vec<(i64, i64, u64, u64)> = Vec::new();
        for &i in &drawn {
            let m = &r.rows[i];
            let o = l.offsets[i].unwrap();
            let a0 = m.alloc_ns().unwrap() - origin;
            let a1 = m
                .release_ns()
                .unwrap_or(r.capture_end_ns)
                .max(m.alloc_ns().unwrap())
                - origin;
            if m.size > 0 {
                bars.push((a0, a1, o, o + m.size));
            }
            let id = l.rects.hit(a0 as f64, o as f64 + m.size as f64 / 2.0);
            assert!(id.is_some());
        }
        for (k, x) in bars.iter().enumerate() {
            for y in &bars[k + 1..] {
                let t = x.0 < y.1 && y.0 < x.1;
                let b = x.2 < y.3 && y.2 < x.3;
                assert!(!(t && b), "{x:?} overlaps {y:?}");
            }
        }
        assert!(l.height >= bars.iter().map(|b| b.3 - b.2).max().unwrap_or(0));
    }
}
