//! Shared by the fuzz targets: the invariants checked on every parsed model or diagnostic.
#![allow(dead_code)]

use memlens::diag::Diagnostic;
use memlens::export::curves::{PNG_HEIGHT, PNG_WIDTH};
use memlens::export::somas::{chart_pixels, file_set, log, write_file, Content, Image, QuerySet};
use memlens::somas::{self, queries, summary::summary, SomasModel, TaskInfo};

/// Every diagnostic names the file it is about (`name`, or a member path under it).
pub fn names_file(d: &Diagnostic, name: &str) {
    assert!(
        d.file == name || d.file.starts_with(&format!("{name}/")),
        "diagnostic names {:?}, not {name:?}: {d}",
        d.file
    );
    assert!(!d.message.is_empty(), "empty message: {d:?}");
    assert!(d.count >= 1);
}

/// An analysed profiler job from a database export: each rank's source is `db`, its stack counts
/// add up to its rows, its summary serialises, its rows' names and stacks and its live set at the
/// peak resolve, and every export of the job runs.
pub fn exercise_db_job(a: &memlens::profiler::analysis::JobAnalysis) {
    use memlens::export::profiler as exp;
    for r in &a.ranks {
        let s = &r.summary;
        let st = &s.stacks;
        assert_eq!(s.source, "db");
        assert_eq!(
            st.direct + st.via_forward + st.approximate + st.none,
            s.rows
        );
        let _ = serde_json::to_string(s).expect("summary serialises");
        for i in 0..r.rows.len().min(16) {
            let _ = (r.stack(i), r.top_frame(i), r.innermost_frame(i), r.name(i));
        }
        let _ = r.live_at(s.peak_time_ns);
    }
    exp::write_memory_events(a, std::io::sink()).expect("memory_events");
    exp::write_rank_summary(a, std::io::sink()).expect("rank_summary");
    exp::write_peak_attribution(a, std::io::sink()).expect("peak_attribution");
    exp::write_step_peaks(a, std::io::sink()).expect("step_peaks");
}

/// A parsed SOMAS model: cross references resolve, the analysis, summary, queries and every
/// export run without panicking (the PNG charts drawn, not encoded), and the curves have one entry
/// per execution index.
pub fn exercise_somas(model: &SomasModel, task: Option<&TaskInfo>) {
    let nt = model.tensors.len() as u32;
    for r in 0..model.nodes.len() {
        assert!(model.nodes.outputs.row(r).iter().all(|&t| t < nt));
    }
    let an = somas::analyze(model, task);
    assert_eq!(an.in_use.len(), model.max_index() as usize + 1);
    assert_eq!(an.total.len(), an.in_use.len());
    for &(a, b) in &an.conflicts.pairs {
        assert!(a < b, "conflict pair not ordered: {a}, {b}");
    }
    let s = summary(model, &an, task);
    let _ = serde_json::to_string(&s).expect("summary serialises");
    for t in 0..nt.min(32) {
        let _ = queries::tensor_query(model, &an, t);
    }
    for n in 0..(model.nodes.len() as u32).min(32) {
        let _ = queries::node_query(model, &an, n);
    }
    let _ = queries::range_query(model, &an, 0, u64::MAX);
    let _ = queries::address_query(model, &an, 0x200);
    let _ = somas::analysis::tensor_rects(model, &an);
    let q = QuerySet {
        node: (!model.nodes.is_empty()).then_some(0),
        tensor: (nt > 0).then_some(0),
        address: Some(0x200),
        range: Some((0, 0x1000)),
    };
    for f in file_set(model, &an, &s, &q, &log(model, &an, &s)) {
        match f.content {
            // A PNG chart is drawn (every pixel the dump decides) but not encoded: encoding the
            // fixed-size image at the png crate's high compression was ~95 % of an execution
            // (perf of the fuzz build), and what it encodes has the same size whatever the dump.
            Content::Chart(chart, Image::Png) => {
                let pixels = chart_pixels(&an, chart);
                assert_eq!(pixels.len(), PNG_WIDTH as usize * PNG_HEIGHT as usize * 3);
            }
            _ => {
                let _ = write_file(&f, model, &an, std::io::sink());
            }
        }
    }
}

/// A read snapshot: every index in the model resolves, the analysis, summary and every export
/// run without panicking.
pub fn exercise_snapshot(snap: &memlens::snapshot::Snapshot) {
    use memlens::snapshot::{analysis, summary};
    let nb = snap.blocks.len();
    for s in &snap.segments {
        assert!(s.first_block as usize + s.block_count as usize <= nb);
        assert!((s.stack as usize) < snap.stacks.len());
    }
    for b in &snap.blocks {
        assert!((b.stack as usize) < snap.stacks.len());
    }
    for t in &snap.traces {
        let n = t.len();
        assert!(t.addr.len() == n && t.size.len() == n && t.stream.len() == n);
        assert!(t.time_us.len() == n && t.stack.len() == n);
        assert!(t.stack.iter().all(|&s| (s as usize) < snap.stacks.len()));
        assert!(t.stream.iter().all(|&s| (s as usize) < snap.streams.len()));
    }
    for s in 0..snap.stacks.len() as u32 {
        assert!(snap
            .stacks
            .get(s)
            .iter()
            .all(|&f| (f as usize) < snap.frames.len()));
    }
    let a = analysis::analyse(snap);
    let _ = serde_json::to_string(&summary::summary(snap, &a)).expect("summary serialises");
    for name in memlens::export::snapshot::FILES {
        let _ = memlens::export::snapshot::write_named(name, snap, &a, std::io::sink());
    }
}

/// Runs `f` on a one-thread rayon pool, from inside it: parallel code keeps its chunking (pieces,
/// chunks, splits) but runs inline, without a cross-thread hand-off per call, so executions are
/// many times faster and deterministic.
pub fn in_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a one-thread pool")
    })
    .install(f)
}
