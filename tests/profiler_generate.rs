//! The generator plants known outcomes (direct, via forward, approximate, none, unreleased); the
//! analysis must find exactly them. Also: determinism, and archives giving the same answer.
// Reads files on disk (or uses native-only parts of the library): not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use memlens::input::InputSet;
use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::generate::{generate, GenSpec, Planted};
use memlens::profiler::{discover_job, JobAnalysis};
use std::io::Write;

const SPEC: GenSpec = GenSpec {
    roles: 2,
    ranks: 2,
    trace_bytes: 256 << 10,
    rows: 600,
    steps: 3,
    seed: 7,
    outlier: false,
};

fn files(spec: &GenSpec) -> (Vec<(String, Vec<u8>)>, Vec<Planted>) {
    let mut out = Vec::new();
    let planted = generate(spec, &mut |p, b| {
        out.push((p.to_string(), b));
        Ok(())
    })
    .unwrap();
    (out, planted)
}

fn analyze(set: &mut InputSet) -> JobAnalysis {
    let job = discover_job(set.classify());
    analyze_job(set, &job, &AnalyzeOptions::default(), &mut |_| {})
}

#[test]
fn analysis_finds_what_the_generator_planted() {
    let (fs, planted) = files(&SPEC);
    let mut set = memlens::families::input_set();
    for (p, b) in &fs {
        set.add_bytes(&format!("job/{p}"), b.clone());
    }
    let a = analyze(&mut set);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    assert_eq!(a.ranks.len(), planted.len());
    for (r, p) in a.ranks.iter().zip(&planted) {
        let s = &r.summary;
        assert_eq!(s.rows, p.rows);
        assert_eq!(s.rows, u64::from(SPEC.rows));
        assert_eq!(s.rows_ge, p.rows_ge);
        assert_eq!(s.stacks.direct, p.direct, "{}/{:?}", s.role, s.rank);
        assert_eq!(s.stacks.via_forward, p.via_forward);
        assert_eq!(s.stacks.approximate, p.approximate);
        assert_eq!(s.stacks.none, p.rows_ge + p.none_pta);
        assert_eq!(s.unreleased_rows, p.unreleased);
        assert!(
            p.direct > 0
                && p.via_forward > 0
                && p.approximate > 0
                && p.none_pta > 0
                && p.unreleased > 0
        );
        assert_eq!(s.step_peaks.len(), SPEC.steps as usize);
        assert_eq!(s.peak_source, "memory_record");
        assert!(
            s.trace_events > s.trace_ops * 2,
            "most events are not cpu_op"
        );
        // Every top frame is the user's code.
        for i in 0..r.rows.len() {
            let t = r.top_frame(i);
            assert!(t.is_empty() || t.starts_with("/home/user/project/"), "{t}");
        }
    }
}

#[test]
fn generation_is_deterministic_and_sized() {
    let (a, _) = files(&SPEC);
    let (b, _) = files(&SPEC);
    assert_eq!(a, b);
    for (p, bytes) in &a {
        if p.ends_with("trace_view.json") {
            let n = bytes.len() as u64;
            // The ops alone may exceed the target; filler events only ever add to it.
            assert!(n >= SPEC.trace_bytes, "{p}: {n}");
            let v: serde_json::Value = serde_json::from_slice(bytes).expect("valid JSON");
            assert!(v.as_array().is_some());
        }
    }
}

#[test]
fn trace_size_follows_the_target_when_ops_are_few() {
    let spec = GenSpec {
        roles: 1,
        ranks: 1,
        trace_bytes: 1 << 20,
        rows: 40,
        ..SPEC
    };
    let (fs, _) = files(&spec);
    let (_, tv) = fs
        .iter()
        .find(|(p, _)| p.ends_with("trace_view.json"))
        .unwrap();
    let n = tv.len() as u64;
    assert!(n >= spec.trace_bytes && n < spec.trace_bytes + 4096, "{n}");
}

#[test]
fn zip_and_tar_gz_of_a_job_give_the_same_summaries() {
    let (fs, _) = files(&GenSpec {
        roles: 1,
        ranks: 2,
        trace_bytes: 64 << 10,
        rows: 120,
        ..SPEC
    });
    let mut plain = memlens::families::input_set();
    for (p, b) in &fs {
        plain.add_bytes(&format!("job/{p}"), b.clone());
    }
    let want: Vec<_> = analyze(&mut plain)
        .ranks
        .into_iter()
        .map(|r| {
            let mut s = r.summary;
            s.run_dirs.clear();
            s
        })
        .collect();

    let mut zbuf = std::io::Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut zbuf);
        for (p, b) in &fs {
            z.start_file(format!("job/{p}"), zip::write::SimpleFileOptions::default())
                .unwrap();
            z.write_all(b).unwrap();
        }
        z.finish().unwrap();
    }
    let mut tarb = tar::Builder::new(Vec::new());
    for (p, b) in &fs {
        let mut h = tar::Header::new_ustar();
        h.set_size(b.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tarb.append_data(&mut h, format!("job/{p}"), &b[..])
            .unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tarb.into_inner().unwrap()).unwrap();
    for (name, bytes) in [
        ("up/job.zip", zbuf.into_inner()),
        ("up/job.tar.gz", gz.finish().unwrap()),
    ] {
        let mut set = memlens::families::input_set();
        set.add_bytes(name, bytes);
        let a = analyze(&mut set);
        assert!(a.ranks[0].summary.run_dirs[0].starts_with(&format!("{name}/job/")));
        let got: Vec<_> = a
            .ranks
            .into_iter()
            .map(|r| {
                let mut s = r.summary;
                s.run_dirs.clear();
                s
            })
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn committed_example_job_is_what_the_documented_command_writes() {
    // docs/profiler.md: memlens generate profiler --out fixtures/examples/two-rank-job --roles 1
    //   --ranks 2 --trace-mb 0.25 --rows 300 --steps 2 --seed 42
    let spec = GenSpec {
        roles: 1,
        ranks: 2,
        trace_bytes: (0.25 * (1u64 << 20) as f64) as u64,
        rows: 300,
        steps: 2,
        seed: 42,
        outlier: false,
    };
    let (fs, _) = files(&spec);
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/examples/two-rank-job");
    let mut total = 0;
    for (p, b) in &fs {
        let on_disk = std::fs::read(root.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(
            on_disk == *b,
            "{p} differs from the generator's output: regenerate the example"
        );
        total += b.len();
    }
    assert!(
        total < 1 << 20,
        "example job should stay under 1 MiB, is {total} bytes"
    );
}

#[test]
fn streaming_trace_reader_agrees_with_a_full_json_parse() {
    use memlens::profiler::trace::{read_trace, TraceOptions};
    use memlens::profiler::Interner;
    use memlens::source::BytesSource;
    let (fs, _) = files(&GenSpec {
        roles: 1,
        ranks: 1,
        trace_bytes: 600 << 10,
        rows: 300,
        ..SPEC
    });
    let (_, tv) = fs
        .iter()
        .find(|(p, _)| p.ends_with("trace_view.json"))
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(tv).unwrap();
    let events = v.as_array().unwrap();
    let cpu: Vec<&serde_json::Value> = events.iter().filter(|e| e["cat"] == "cpu_op").collect();
    let queue = events
        .iter()
        .filter(|e| e["cat"] == "enqueue" || e["cat"] == "dequeue")
        .count();
    for (batch, pieces) in [(1 << 24, 1), (64 << 10, 5), (70_001, 3)] {
        let src = BytesSource::new("trace_view.json", tv.clone());
        let (mut n, mut s) = (Interner::new(), Interner::new());
        let t = read_trace(&src, &mut n, &mut s, TraceOptions { batch, pieces }, None).unwrap();
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
        assert_eq!(t.events as usize, events.len());
        assert_eq!(t.ops.len(), cpu.len());
        assert_eq!(t.queue.len(), queue);
        for (k, e) in cpu.iter().enumerate() {
            assert_eq!(n.get(t.ops.name[k]), e["name"].as_str().unwrap());
            assert_eq!(
                s.get(t.ops.stack[k]),
                e["args"]["Call stack"].as_str().unwrap_or("")
            );
            assert_eq!(t.ops.seq[k], e["args"]["Sequence number"].as_i64().unwrap());
        }
    }
}

/// Ranks read in parallel, each rank's CSV files read while its trace is scanned
/// (`analyze_job_parallel`), give exactly what the ranks read one after another, each file after
/// the other (`analyze_job`) gives: every rank's whole analysis, interned ids included, on a
/// generated job and on the real sample, with a pool of 2 threads and of 1.
#[test]
fn ranks_and_files_read_in_parallel_give_the_sequential_analysis() {
    use memlens::profiler::analysis::analyze_job_parallel;
    let (fs, _) = files(&SPEC);
    let mut generated = memlens::families::input_set();
    for (p, b) in &fs {
        generated.add_bytes(&format!("job/{p}"), b.clone());
    }
    let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/torch_npu");
    let mut sample = memlens::families::input_set_from_paths(&[real]);
    for set in [&mut generated, &mut sample] {
        let job = discover_job(set.classify());
        assert!(job.ranks.len() >= 2, "{} ranks", job.ranks.len());
        let want = analyze_job(&*set, &job, &AnalyzeOptions::default(), &mut |_| {});
        let text = |a: &JobAnalysis| format!("{:?} {:?}", a.ranks, a.warnings);
        for threads in [2, 1] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let got = pool
                .install(|| analyze_job_parallel(&*set, &job, &AnalyzeOptions::default(), &|_| {}));
            assert!(text(&got) == text(&want), "{threads} threads");
        }
    }
}
