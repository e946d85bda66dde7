//! The input set as every front end uses it: files from any origin (host files counted as they
//! are opened, bytes, archives, unreadable entries), archives expanded once, classification once,
//! heads read only where a family asks, and the reading plan the analysis follows.
//!
//! Expectations are written from the fixtures' layout (which files a run folder holds, what
//! torch_npu reads first), not taken from the code under test.

mod common;

use memlens::input::{CountingOpener, FileOpener, HostFile, LoadStep};
use memlens::profiler::analysis::{analyze_job, AnalyzeOptions};
use memlens::profiler::plan::{job_plan, Reader};
use memlens::profiler::{job_of, ProfilerRun};
use memlens::somas::recognize::SomasFile;
use memlens::source::{BytesSource, Source, SourceError};
use std::sync::{Arc, Mutex};

/// A front end's file that records every open (a browser `File`, a file of a serving machine).
struct Recorded {
    bytes: Arc<[u8]>,
    opens: Arc<Mutex<Vec<String>>>,
}

impl HostFile for Recorded {
    fn open(&self, name: &str) -> Result<Box<dyn Source + '_>, SourceError> {
        self.opens.lock().unwrap().push(name.to_string());
        Ok(Box::new(BytesSource::new(name, self.bytes.clone())))
    }
}

/// The real rank-0 run folder and the toy SOMAS dump as host files, plus a zip of rank 1.
fn drop_set(opens: &Arc<Mutex<Vec<String>>>) -> memlens::input::InputSet {
    let mut set = memlens::families::input_set();
    for (path, bytes) in common::run_folder("job", 0, &[]) {
        let size = bytes.len() as u64;
        let file = Recorded {
            bytes: bytes.into(),
            opens: opens.clone(),
        };
        set.add_host(&path, size, Box::new(file));
    }
    let dump = std::fs::read(common::fixture(
        "examples/somas-toy/Ascend_somas_tensor_offset_7.ir",
    ))
    .unwrap();
    set.add_host(
        "job/plan.ir",
        dump.len() as u64,
        Box::new(Recorded {
            bytes: dump.into(),
            opens: opens.clone(),
        }),
    );
    let members: Vec<(String, Vec<u8>)> = common::run_folder("inner", 1, &[]);
    let zip = zip_of(&members);
    set.add_host(
        "job/rank1.zip",
        zip.len() as u64,
        Box::new(Recorded {
            bytes: zip.into(),
            opens: opens.clone(),
        }),
    );
    set.add_unreadable("job/locked.csv", 12, "permission denied");
    set
}

fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut buf);
    for (path, bytes) in files {
        w.start_file(path.as_str(), zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap();
    buf.into_inner()
}

#[test]
fn archives_expand_once_and_classification_reads_only_the_heads_it_needs() {
    let opens = Arc::new(Mutex::new(Vec::new()));
    let mut set = drop_set(&opens);
    let mut steps = Vec::new();
    let units: Vec<(String, String)> = set
        .classify_with(&mut |s| {
            steps.push(match s {
                LoadStep::Expanding { path, .. } => format!("expanding {path}"),
                LoadStep::Heads { total, .. } => format!("heads of {total}"),
            })
        })
        .units
        .iter()
        .map(|u| (u.kind().to_string(), u.path().to_string()))
        .collect();
    assert_eq!(
        units,
        [
            ("unknown", "job/locked.csv"),
            ("somas", "job/plan.ir"),
            ("ascend-run", "job/rank0_ascend_pt"),
            ("ascend-run", "job/rank1.zip/inner/rank1_ascend_pt"),
        ]
        .map(|(k, p)| (k.to_string(), p.to_string()))
    );
    assert!(steps.iter().any(|s| s == "expanding job/rank1.zip"));
    // The zip is opened once (expanded), the profiler JSON files and the loose dump for their
    // heads; the memory files are not touched before the analysis.
    let mut seen = opens.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            "job/plan.ir",
            "job/rank0_ascend_pt/profiler_info_0.json",
            "job/rank0_ascend_pt/profiler_metadata.json",
            "job/rank1.zip",
        ]
    );
    // The zip's members are files of the set now; the archive itself is not.
    assert!(set.entries().iter().all(|e| e.path != "job/rank1.zip"));
    assert_eq!(
        set.size("job/rank1.zip/inner/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
        common::npu(1, "ASCEND_PROFILER_OUTPUT/operator_memory.csv").len() as u64
    );

    // Classification happens once: asking again opens nothing.
    opens.lock().unwrap().clear();
    let again = set.classify().units.len();
    assert_eq!(again, 4);
    assert!(opens.lock().unwrap().is_empty());
    let inv = set.inventory().unwrap();
    assert_eq!(inv.units_of::<ProfilerRun>().count(), 2);
    assert_eq!(inv.units_of::<SomasFile>().count(), 1);

    // A file added later makes the next classification start over.
    set.add_bytes("job/late.txt", b"late".to_vec());
    assert!(set.inventory().is_none());
    assert_eq!(set.classify().units.len(), 5);
}

#[test]
fn the_analysis_reads_the_plan_in_its_order_and_reports_every_byte() {
    let opens = Arc::new(Mutex::new(Vec::new()));
    let mut set = drop_set(&opens);
    let job = job_of(&mut set);
    let plan = job_plan(&job, &set);
    // torch_npu order: the trace first (rows join against it), then the allocation rows, the
    // allocator curves and the module memory. Ranks go by role, and the roles come from the
    // folders above the runs: `inner` (rank 1, in the zip) before `job` (rank 0).
    let expected: Vec<(String, Reader)> =
        ["job/rank1.zip/inner/rank1_ascend_pt", "job/rank0_ascend_pt"]
            .iter()
            .flat_map(|run| {
                [
                    ("trace_view.json", Reader::Trace),
                    ("operator_memory.csv", Reader::OperatorMemory),
                    ("memory_record.csv", Reader::MemoryRecord),
                    ("npu_module_mem.csv", Reader::ModuleMem),
                ]
                .map(|(f, r)| (format!("{run}/ASCEND_PROFILER_OUTPUT/{f}"), r))
            })
            .collect();
    let planned: Vec<(String, Reader)> = plan.iter().map(|p| (p.path.clone(), p.reader)).collect();
    assert_eq!(planned, expected);

    // What the analysis opens, through the same counting opener the page uses.
    let reads = Mutex::new(Vec::<(String, u64, u64)>::new());
    let report = |path: &str, done: u64, total: u64| {
        let mut r = reads.lock().unwrap();
        match r.last_mut() {
            Some(last) if last.0 == path => last.1 = done,
            _ => r.push((path.to_string(), done, total)),
        }
    };
    let counting = CountingOpener::new(&set, &report);
    let a = analyze_job(&counting, &job, &AnalyzeOptions::default(), &mut |_| {});
    assert_eq!(a.ranks.len(), 2);
    let reads = reads.into_inner().unwrap();
    let order: Vec<&str> = reads.iter().map(|r| r.0.as_str()).collect();
    let want: Vec<&str> = expected.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(order, want);
    for ((path, done, total), p) in reads.iter().zip(&plan) {
        assert_eq!(
            (done, total),
            (&p.bytes, &p.bytes),
            "{path} read to its end"
        );
    }
    // The set opens by path for every reader, whatever the origin.
    assert!(set
        .open("job/rank1.zip/inner/rank1_ascend_pt/profiler_info_1.json")
        .is_ok());
    let locked = set.open("job/locked.csv").err().unwrap();
    assert!(locked.to_string().contains("permission denied"), "{locked}");
}
