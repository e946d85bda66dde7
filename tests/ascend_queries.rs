//! The view queries of a rank (table pages, live set at a time, curves for a window) on the
//! committed example job, checked against brute force over the same rows.

use memlens::ascend::analysis::{analyze_job, AnalyzeOptions, SortKey, TableQuery};
use memlens::ascend::memory_record::Metric;
use memlens::ascend::{discover_job, InputSet, JobAnalysis};
use std::path::Path;

fn example() -> JobAnalysis {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/examples/two-rank-job");
    let inputs = InputSet::from_paths(&[p]);
    let job = discover_job(&inputs.classify());
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
    let q = TableQuery {
        name: Some("^aten::empty".to_string()),
        min_size: Some(1 << 20),
        sort: SortKey::Size,
        descending: true,
        limit: 5,
        ..TableQuery::default()
    };
    let page = r.table(&q).unwrap();
    let want: Vec<usize> = (0..r.rows.len())
        .filter(|&i| r.name(i).starts_with("aten::empty") && r.rows[i].size >= 1 << 20)
        .collect();
    assert_eq!(page.total as usize, want.len());
    assert!(page.rows.len() <= 5);
    let sizes: Vec<u64> = page.rows.iter().map(|&i| r.rows[i as usize].size).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
    let max = want.iter().map(|&i| r.rows[i].size).max().unwrap_or(0);
    assert_eq!(sizes.first().copied().unwrap_or(0), max);
    assert!(r
        .table(&TableQuery {
            stack: Some("(".to_string()),
            ..TableQuery::default()
        })
        .is_err());
    let by_stack = r
        .table(&TableQuery {
            stack: Some("model\\.py".to_string()),
            limit: 1000,
            ..TableQuery::default()
        })
        .unwrap();
    assert!(by_stack
        .rows
        .iter()
        .all(|&i| r.stack(i as usize).contains("model.py")));
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
            x.source == memlens::ascend::operator_memory::RowSource::Pta
                && !x.negative
                && x.alloc_ns.is_some_and(|a| a <= t)
                && x.release_ns.is_none_or(|e| e > t)
        })
        .map(|x| x.size)
        .sum();
    assert_eq!(live.iter().map(|g| g.bytes).sum::<u64>(), brute);
    let (xs, ys) = r.curve("PTA", Metric::Allocated);
    let (x0, x1) = (xs[0], *xs.last().unwrap() + 1);
    let env = r.curve_window("PTA", Metric::Allocated, x0, x1, 50);
    let top = env.max.iter().copied().max().unwrap_or(0);
    assert_eq!(top, *ys.iter().max().unwrap());
    assert_eq!(top, r.summary.peak_allocated_bytes);
}
