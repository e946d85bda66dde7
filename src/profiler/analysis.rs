//! Per-rank and per-job analysis: reading a rank's run folders, the attribution join, peaks, the
//! live set at a time grouped by top user frame, leak candidates, fragmentation, per-step peaks,
//! the role × rank matrix and outliers; plus the queries a view needs (table pages, curves).

use super::attribution::{self, Attribution, StackSource};
use super::discover::{Job, RankInput};
use super::memory_record::{allocator_series, Metric, Series};
use super::module_mem::ModuleSeries;
use super::operator_memory::{MemRow, RowSource};
use super::run::{self, DbLayout};
use super::trace::{self, StepSpan, TraceOptions};
use super::Interner;
use crate::diag::Diagnostic;
use crate::input::FileOpener;
use crate::source::Stopped;
use serde::Serialize;

/// How to analyse.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnalyzeOptions {
    /// How `trace_view.json` is cut up.
    pub trace: TraceOptions,
}

/// Counts of rows by [`StackSource`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StackCounts {
    /// Containing op has the stack.
    pub direct: u64,
    /// Stack of the forward op of a backward op.
    pub via_forward: u64,
    /// Python tool's nearest-earlier rule.
    pub approximate: u64,
    /// No stack (includes every `cann::` row).
    pub none: u64,
}

/// Bytes and count of live allocations sharing a top user frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FrameGroup {
    /// The top user frame (`(no stack)` for rows without one).
    pub frame: String,
    /// Bytes alive.
    pub bytes: u64,
    /// Allocations alive.
    pub count: u64,
    /// `[min, max]` sizes (bytes) of a size-class group ([`GROUP_BY_SIZE_CLASS`]); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_range: Option<[u64; 2]>,
}

/// The group of rows without a call stack (`cann::` rows, unattributed PTA rows).
pub const NO_STACK: &str = "(no stack)";

/// Groups by the top user frame of each row's call stack.
pub const GROUP_BY_FRAME: &str = "frame";

/// Groups by op name: the rank has no call stack at all (its trace_view.json was not dropped or
/// not read), and one "(no stack)" group would hide everything; the name of the op that made an
/// allocation is the next best hint of what holds the memory.
pub const GROUP_BY_OP_NAME: &str = "op_name";

/// Groups by size class (power-of-two ranges, see [`super::size_class`]): what a rank without
/// call stacks and without op names still tells, and a choice beside op names.
pub const GROUP_BY_SIZE_CLASS: &str = "size_class";

/// The op-name group of rows without a name.
pub const NO_NAME: &str = "(no name)";

/// Memory records of a rank drawn on their own time range: they do not overlap the allocation
/// rows in time, so one axis for both would span the gap between two runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecordsAside {
    /// The file they came from (`memory_record.csv`, or the database export).
    pub file: String,
    /// First record (ns).
    pub start_ns: i64,
    /// Last record (ns).
    pub end_ns: i64,
    /// Highest framework-allocator allocated bytes among them (0 without framework records).
    pub peak_allocated_bytes: u64,
    /// When it was first reached (ns).
    pub peak_time_ns: i64,
    /// Highest framework-allocator reserved bytes among them.
    pub peak_reserved_bytes: u64,
}

/// An op the attribution join picked for a row (the op containing the allocation time, or the op
/// whose stack is shown), kept so a view can say which op it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JoinedOp {
    /// Interned op name (in [`RankAnalysis::names`]).
    pub name: u32,
    /// Thread id.
    pub tid: i64,
    /// Start (ns).
    pub ts: i64,
    /// Duration (ns).
    pub dur: i64,
    /// Autograd `Sequence number` (-1 when absent).
    pub seq: i64,
}

/// "No op" in [`RankAnalysis::row_ops`].
pub const NO_OP: u32 = u32::MAX;

/// The live-set group of bytes counted by the allocator at the peak but absent from
/// operator_memory (allocated before the capture started).
pub const UNTRACKED: &str = "(allocated before the capture: no operator_memory row)";

/// The peak of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepPeak {
    /// Step number (`ProfilerStep#N`).
    pub step: u64,
    /// Step start (ns).
    pub start_ns: i64,
    /// Step end (ns).
    pub end_ns: i64,
    /// Highest framework-allocator allocated bytes within the step.
    pub peak_allocated_bytes: u64,
    /// When it was reached.
    pub peak_time_ns: i64,
}

/// The peak reserved memory of one CANN module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModulePeak {
    /// Module name (`GE`, `HCCL`, `RUNTIME`, …).
    pub module: String,
    /// Peak reserved bytes.
    pub peak_reserved_bytes: u64,
    /// When it was first reached (ns).
    pub time_ns: i64,
}

/// Serialises an optional rank as a number, or `"unknown"`.
fn rank_json<S: serde::Serializer>(rank: &Option<u32>, s: S) -> Result<S::Ok, S::Error> {
    match rank {
        Some(r) => s.serialize_u32(*r),
        None => s.serialize_str("unknown"),
    }
}

/// What the CLI's `--json` prints per rank (and the page's job summary shows).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RankReport {
    /// Role (empty when unknown).
    pub role: String,
    /// Rank number, or `"unknown"`.
    #[serde(serialize_with = "rank_json")]
    pub rank: Option<u32>,
    /// Step folder, if any.
    pub step: Option<u32>,
    /// Run folders, in timestamp order.
    pub run_dirs: Vec<String>,
    /// operator_memory rows read.
    pub rows: u64,
    /// PTA rows.
    pub rows_pta: u64,
    /// `cann::` (GE) rows.
    pub rows_ge: u64,
    /// Rows by how their stack was found.
    pub stacks: StackCounts,
    /// Peak of the framework allocator's total allocated.
    pub peak_allocated_bytes: u64,
    /// Peak of total reserved.
    pub peak_reserved_bytes: u64,
    /// Peak of total active.
    pub peak_active_bytes: u64,
    /// When allocated peaked (ns).
    pub peak_time_ns: i64,
    /// `memory_record` or `operator_memory` (reconstructed), or `none`.
    pub peak_source: &'static str,
    /// Reserved minus allocated at the allocated peak.
    pub fragmentation_bytes: u64,
    /// Rows not released within the capture (leak candidates).
    pub unreleased_rows: u64,
    /// Their bytes.
    pub unreleased_bytes: u64,
    /// How the live-set and unreleased groups are formed: [`GROUP_BY_FRAME`], or
    /// [`GROUP_BY_OP_NAME`] when no row of the rank has a call stack (no trace_view.json was read),
    /// or [`GROUP_BY_SIZE_CLASS`] when no row has an op name either.
    pub group_by: &'static str,
    /// PTA allocations alive at the peak, grouped as `group_by` says, largest first.
    pub live_at_peak: Vec<FrameGroup>,
    /// The memory records set aside because they cover a time range disjoint from the
    /// allocations' (files copied together from different runs); absent otherwise. The peak
    /// above is then the allocations'; this is the records' own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records_aside: Option<RecordsAside>,
    /// Per-step peaks (when `ProfilerStep#N` spans exist).
    pub step_peaks: Vec<StepPeak>,
    /// Peak reserved bytes per CANN module (npu_module_mem.csv), largest first, modules that
    /// never reserved anything left out.
    pub module_peaks: Vec<ModulePeak>,
    /// `cpu_op` events kept from the traces.
    pub trace_ops: u64,
    /// Trace events seen (for a db run: rows of `PYTORCH_API`).
    pub trace_events: u64,
    /// What was read: `text` (the CSV and JSON files), `db` (the database export), `text+db`
    /// (runs of both kinds), or `none`.
    pub source: &'static str,
    /// [`DB_LAYOUT_MSPROF`] when a run of the rank was read from a database export in msprof's
    /// layout (MindSpore's `ascend_mindspore_profiler[_N].db`, msprof's `msprof_N.db`), whose
    /// tables are not torch_npu's; absent otherwise. The page and the warnings name the tables
    /// read after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_layout: Option<&'static str>,
    /// Which framework wrote the rank: `MindSpore` (an `*_ascend_ms` folder, or a `MindSpore`
    /// component in memory_record), `torch_npu` (an `*_ascend_pt` folder, or a `PTA` component),
    /// or empty when nothing tells. The page names the allocator after it.
    pub framework: &'static str,
    /// The device every allocation row names (`Device Type` `NPU:N`), when they all name the same
    /// one. A rank whose `profiler_info` gives no rank number (MindSpore's often do not) is still
    /// told apart by it.
    pub device: Option<u32>,
}

impl RankReport {
    /// Whether the rank has something to draw: an allocation row or an allocator curve. A rank
    /// without (its files refused, or holding no memory data) is still a rank of the job, but
    /// not one whose peak can be the job's highest; the job summary marks it `error`.
    pub fn has_data(&self) -> bool {
        self.rows > 0 || matches!(self.peak_source, "memory_record" | "operator_memory")
    }
}

/// One rank: its data (columnar where large) and summary.
#[derive(Debug, Clone, Default)]
pub struct RankAnalysis {
    /// The summary (JSON).
    pub summary: RankReport,
    /// Op names and other short strings.
    pub names: Interner,
    /// Call stacks.
    pub stacks: Interner,
    /// Frames (top and innermost) of the stacks.
    pub frames: Interner,
    /// `(top, innermost)` frame ids per stack id.
    pub stack_frames: Vec<(u32, u32)>,
    /// operator_memory rows of all run folders, in run then file order.
    pub rows: Vec<MemRow>,
    /// The join result per row.
    pub attribution: Vec<Attribution>,
    /// Per row, indices into [`RankAnalysis::joined_ops`] of the containing op and of the op whose
    /// stack is used ([`NO_OP`] when none). [`Attribution::op`] indexes a trace that is not kept.
    pub row_ops: Vec<(u32, u32)>,
    /// The ops referenced by [`RankAnalysis::row_ops`], each once.
    pub joined_ops: Vec<JoinedOp>,
    /// Run folder index per row.
    pub row_run: Vec<u32>,
    /// The database export each run folder's plan read (index as in `summary.run_dirs`), None
    /// for a run read from its text files ([`run::source_name`] says which in one word).
    pub run_dbs: Vec<Option<super::run::DbFile>>,
    /// Step per row (`ProfilerStep#N` containing the allocation time).
    pub row_step: Vec<Option<u64>>,
    /// memory_record series per component (all runs), sorted by time; reconstructed `PTA` when
    /// there was no memory_record.
    pub memory: Vec<Series>,
    /// memory_record series set aside: they cover a time range disjoint from the allocation
    /// rows' ([`RankReport::records_aside`]); empty otherwise.
    pub memory_aside: Vec<Series>,
    /// npu_module_mem series.
    pub modules: Vec<ModuleSeries>,
    /// Step spans.
    pub steps: Vec<StepSpan>,
    /// End of the capture: the last time seen (open ends of unreleased rows).
    pub capture_end_ns: i64,
    /// Problems met in this rank's files.
    pub warnings: Vec<Diagnostic>,
}

/// A cell of the role × rank matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MatrixCell {
    /// Role.
    pub role: String,
    /// Rank or `"unknown"`.
    #[serde(serialize_with = "rank_json")]
    pub rank: Option<u32>,
    /// Step.
    pub step: Option<u32>,
    /// Peak allocated.
    pub peak_allocated_bytes: u64,
    /// Peak reserved.
    pub peak_reserved_bytes: u64,
}

/// A rank whose peak stands out from the other ranks of its role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outlier {
    /// Role.
    pub role: String,
    /// Rank.
    #[serde(serialize_with = "rank_json")]
    pub rank: Option<u32>,
    /// Step.
    pub step: Option<u32>,
    /// The rank's peak allocated.
    pub peak_allocated_bytes: u64,
    /// The median of its role.
    pub role_median_bytes: u64,
    /// Deviation from the median in per mille (signed).
    pub deviation_permille: i64,
}

/// A whole job.
#[derive(Debug, Clone, Default)]
pub struct JobAnalysis {
    /// Ranks, in discovery order.
    pub ranks: Vec<RankAnalysis>,
    /// Role × rank peaks.
    pub matrix: Vec<MatrixCell>,
    /// Ranks that stand out from their role.
    pub outliers: Vec<Outlier>,
    /// Discovery problems and every rank's file problems.
    pub warnings: Vec<Diagnostic>,
}

/// One allocator event of the reconstruction: time, 1 = allocation / 0 = release (releases first
/// at equal times), and the index of its row (the totals and the size are read from the row when
/// the curve is made). 16 bytes: two per row, so that the events of a large operator_memory.csv
/// stay small beside its rows.
type Event = (i64, u8, u32);

/// Reads and analyses the run folders of one rank. `progress(bytes)` is called with the bytes
/// read since the previous call.
pub fn analyze_rank(
    files: &dyn FileOpener,
    input: &RankInput,
    opts: &AnalyzeOptions,
    progress: &mut dyn FnMut(u64),
) -> RankAnalysis {
    let Ok(a) = analyze_rank_in(files, None, input, opts, progress, &never_stopped);
    a
}

/// The stop question of the analyses that run to their end whatever their opener says.
fn never_stopped() -> Result<(), std::convert::Infallible> {
    Ok(())
}

/// The stop question of [`try_analyze_job`]: the opener's answer.
fn opener_stop(files: &dyn FileOpener) -> Result<(), Stopped> {
    if files.stopped() {
        Err(Stopped)
    } else {
        Ok(())
    }
}

/// [`analyze_rank`], its files read from several threads at once when `shared` says they may be;
/// `stop()` is asked after each run folder and before the rank's figures, and its error ends the
/// analysis.
fn analyze_rank_in<E>(
    files: &dyn FileOpener,
    shared: Option<run::Shared<'_>>,
    input: &RankInput,
    opts: &AnalyzeOptions,
    progress: &mut dyn FnMut(u64),
    stop: &dyn Fn() -> Result<(), E>,
) -> Result<RankAnalysis, E> {
    let mut a = RankAnalysis::default();
    a.summary.role = input.role.clone();
    a.summary.rank = input.rank;
    a.summary.step = input.step;
    let mut memory: Vec<Series> = Vec::new();
    let mut any_record = false;
    for (run_idx, run) in input.runs.iter().enumerate() {
        a.summary.run_dirs.push(run.path.clone());
        let mut warnings = Vec::new();
        let data = run::read_run(
            files,
            shared,
            run,
            opts,
            (&mut a.names, &mut a.stacks),
            &mut warnings,
            progress,
        );
        // A stopped load's reader ended with an error (a warning of this run): what was read
        // is not the run, so nothing of it is analysed.
        stop()?;
        if a.summary.rank.is_none() {
            a.summary.rank = data.rank;
        }
        let run::RunData {
            mut trace,
            operator_memory,
            memory_record,
            module_mem,
            db,
            ..
        } = data;
        a.run_dbs.push(db);
        if let Some(t) = &mut trace {
            warnings.append(&mut t.warnings);
            a.summary.trace_ops += t.ops.len() as u64;
            a.summary.trace_events += t.events;
            a.steps.extend_from_slice(&t.steps);
        }
        if let Some(mut om) = operator_memory {
            warnings.append(&mut om.warnings);
            let attr = match &trace {
                Some(t) => attribution::attribute_rows(&om.rows, &t.ops),
                None => attribution::attribute_rows(&om.rows, &Default::default()),
            };
            a.row_run
                .extend(std::iter::repeat_n(run_idx as u32, om.rows.len()));
            a.row_ops.reserve_exact(attr.len());
            if let Some(t) = &trace {
                keep_joined_ops(&mut a, &attr, &t.ops);
            } else {
                a.row_ops
                    .extend(std::iter::repeat_n((NO_OP, NO_OP), attr.len()));
            }
            // The first run's rows are moved, not copied: a copy would hold the rows twice.
            if a.rows.is_empty() {
                a.rows = std::mem::take(&mut om.rows);
                a.attribution = attr;
            } else {
                a.rows.append(&mut om.rows);
                a.attribution.extend(attr);
            }
        }
        if let Some(mut mr) = memory_record {
            any_record = true;
            warnings.append(&mut mr.warnings);
            for s in mr.series {
                match memory.iter_mut().find(|m| m.component == s.component) {
                    Some(m) => {
                        m.ts.extend(s.ts);
                        m.allocated.append(&s.allocated);
                        m.reserved.append(&s.reserved);
                        m.active.append(&s.active);
                    }
                    None => memory.push(s),
                }
            }
        }
        if let Some(mut mm) = module_mem {
            warnings.append(&mut mm.warnings);
            a.modules.append(&mut mm.modules);
        }
        a.warnings.append(&mut warnings);
        // The join of a large run's rows takes a while.
        stop()?;
    }
    let mut sources: Vec<&'static str> = a
        .run_dbs
        .iter()
        .map(|db| run::source_name(db.as_ref()))
        .collect();
    sources.dedup();
    a.summary.source = match sources[..] {
        [one] => one,
        [] => "none",
        _ => "text+db",
    };
    for s in &mut memory {
        s.sort_by_time();
        s.shrink_to_fit();
    }
    a.rows.shrink_to_fit();
    a.attribution.shrink_to_fit();
    a.row_ops.shrink_to_fit();
    a.joined_ops.shrink_to_fit();
    a.memory = memory;
    a.summary.db_layout = a
        .run_dbs
        .iter()
        .flatten()
        .any(|db| db.layout == DbLayout::Msprof)
        .then_some(DB_LAYOUT_MSPROF);
    a.summary.framework = framework_of(input, &a.memory);
    a.summary.device = single_device(&a.rows, &a.names);
    if let Some((w, file)) = disjoint_record(&a, input) {
        // One axis for both would span the gap between two runs and put the peak outside the
        // allocations: the records are kept aside, drawn on their own range, and the curve of
        // the allocations is rebuilt from the rows, with a warning naming both ranges.
        a.warnings.push(w);
        a.memory_aside = std::mem::take(&mut a.memory);
        a.summary.records_aside = Some(records_aside(&a.memory_aside, file));
        any_record = false;
    }
    a.stack_frames = attribution::frame_table(&a.stacks, &mut a.frames);
    a.steps.sort_by_key(|s| (s.ts, s.step));
    let steps = a.steps.clone();
    a.row_step = a
        .rows
        .iter()
        .map(|r| {
            let t = r.time_ns()?;
            let k = steps.partition_point(|s| s.ts <= t);
            steps
                .get(k.checked_sub(1)?)
                .filter(|s| s.end >= t)
                .map(|s| s.step)
        })
        .collect();
    // The framework curve comes from memory_record.csv when that file has one; otherwise it is
    // rebuilt (also when memory_record.csv was read but holds no PTA/MindSpore rows).
    let from_record = any_record && a.framework().is_some();
    // Between the steps that go over every row (a stop asked after the last read ends here,
    // not after the rank's figures).
    stop()?;
    if !from_record {
        if let Some(mut s) = reconstruct(&a.rows) {
            if a.summary.framework == FRAMEWORK_MINDSPORE {
                // MindSpore's allocator component is called MindSpore, not PTA.
                s.component = "MindSpore".to_string();
            }
            a.memory.push(s);
        }
    }
    a.capture_end_ns = capture_end(&a);
    stop()?;
    summarize(&mut a, from_record);
    Ok(a)
}

/// [`RankReport::framework`] of a MindSpore rank.
pub const FRAMEWORK_MINDSPORE: &str = "MindSpore";
/// [`RankReport::framework`] of a torch_npu rank.
pub const FRAMEWORK_TORCH_NPU: &str = "torch_npu";

/// The framework that wrote the rank: the run folders' name suffix first, then the framework
/// component of the memory records; empty when neither tells.
fn framework_of(input: &RankInput, memory: &[Series]) -> &'static str {
    let folders: Vec<&str> = input.runs.iter().filter_map(|r| r.framework).collect();
    if folders.contains(&"ms") {
        FRAMEWORK_MINDSPORE
    } else if folders.contains(&"pt") {
        FRAMEWORK_TORCH_NPU
    } else if memory.iter().any(|s| s.component == "MindSpore") {
        FRAMEWORK_MINDSPORE
    } else if memory.iter().any(|s| s.component == "PTA") {
        FRAMEWORK_TORCH_NPU
    } else {
        ""
    }
}

/// The device number all `rows` name (`NPU:N`), or None when there are none, they differ, or one
/// is not of that form.
fn single_device(rows: &[MemRow], names: &Interner) -> Option<u32> {
    let mut ids = rows.iter().map(|r| r.device);
    let first = ids.next()?;
    if ids.any(|d| d != first) {
        return None;
    }
    names
        .get(first)
        .trim()
        .strip_prefix("NPU:")?
        .trim()
        .parse()
        .ok()
}

/// `[first, last]` of `times`, or None when it is empty.
fn span(times: impl Iterator<Item = i64>) -> Option<(i64, i64)> {
    times.fold(None, |acc, t| match acc {
        None => Some((t, t)),
        Some((lo, hi)) => Some((lo.min(t), hi.max(t))),
    })
}

/// Absolute ns as the files write them: µs since the epoch with 3 decimals.
fn us_text(ns: i64) -> String {
    format!("{}.{:03} us", ns.div_euclid(1000), ns.rem_euclid(1000))
}

/// A warning when the rank's memory records and allocation rows cover time ranges that do not
/// overlap at all: files copied together from different runs. None otherwise. It names the file
/// the records came from — a run's `memory_record.csv`, or its database export with the tables —
/// so that a db run's warning points at the db and not at a text file it never read.
fn disjoint_record(a: &RankAnalysis, input: &RankInput) -> Option<(Diagnostic, String)> {
    let rows = span(
        a.rows
            .iter()
            .flat_map(|r| [r.alloc_ns(), r.release_ns()])
            .flatten(),
    )?;
    let record = span(a.memory.iter().flat_map(|s| s.ts.iter().copied()))?;
    if rows.1 >= record.0 && record.1 >= rows.0 {
        return None;
    }
    let (file, records, allocations) = input
        .runs
        .iter()
        .zip(&a.run_dbs)
        .find_map(|(run, db)| match db {
            Some(db) => {
                let (records, allocations) = db.layout.tables();
                Some((db.path.clone(), records, allocations))
            }
            None => run
                .files
                .memory_record
                .clone()
                .map(|f| (f, "memory_record.csv", "operator_memory.csv")),
        })
        .unwrap_or_default();
    let w = Diagnostic::warning(
        file.clone(),
        format!(
            "{records} covers {} – {} but {allocations} covers {} – {}: the two do not overlap \
             in time (copied from different runs?); the memory records are drawn on their own \
             range, and the memory curve and peak of the allocations are rebuilt from them",
            us_text(record.0),
            us_text(record.1),
            us_text(rows.0),
            us_text(rows.1)
        ),
    );
    Some((w, file))
}

/// [`RankReport::db_layout`] of a rank read from a database export in msprof's layout.
pub const DB_LAYOUT_MSPROF: &str = "msprof";

/// The range and peaks of records set aside (`memory` non-empty, sorted by time).
fn records_aside(memory: &[Series], file: String) -> RecordsAside {
    let (start_ns, end_ns) =
        span(memory.iter().flat_map(|s| s.ts.iter().copied())).unwrap_or_default();
    let fw = allocator_series(memory);
    let peak = fw.and_then(|s| s.peak(Metric::Allocated));
    RecordsAside {
        file,
        start_ns,
        end_ns,
        peak_allocated_bytes: peak.map_or(0, |p| p.bytes),
        peak_time_ns: peak.map_or(start_ns, |p| p.time_ns),
        peak_reserved_bytes: fw
            .and_then(|s| s.peak(Metric::Reserved))
            .map_or(0, |p| p.bytes),
    }
}

/// Records, for every row of `attr`, the ops the join picked (copied out of the run's trace,
/// which is dropped after the join).
fn keep_joined_ops(a: &mut RankAnalysis, attr: &[Attribution], ops: &trace::Ops) {
    // Each op's place in `joined_ops` by op id (`NO_OP`: not kept yet): ids are dense, and a
    // hash map of them was ~2 % of a rank's instructions (`callgrind`). One slot more, at
    // `ops.len()`, stands for every id past the ops: such a row names an op with no columns,
    // kept once as the empty op rather than once per row.
    let mut seen = vec![NO_OP; ops.len() + 1];
    let mut keep = |op: Option<u32>, out: &mut Vec<JoinedOp>| -> u32 {
        let Some(i) = op else { return NO_OP };
        let k = (i as usize).min(ops.len());
        let slot = &mut seen[k];
        if *slot == NO_OP {
            out.push(JoinedOp {
                name: ops.name.get(k).copied().unwrap_or(0),
                tid: ops.tid.get(k).copied().unwrap_or(0),
                ts: ops.ts.get(k).copied().unwrap_or(0),
                dur: ops.dur.get(k).copied().unwrap_or(0),
                seq: ops.seq.get(k).copied().unwrap_or(-1),
            });
            *slot = u32::try_from(out.len() - 1).unwrap_or(NO_OP);
        }
        *slot
    };
    for at in attr {
        let op = keep(at.op, &mut a.joined_ops);
        let stack_op = keep(at.stack_op, &mut a.joined_ops);
        a.row_ops.push((op, stack_op));
    }
}

/// The PTA curve rebuilt from operator_memory rows when memory_record is missing: the allocator
/// totals recorded at each allocation and release where present, else a running sum of sizes.
pub fn reconstruct(rows: &[MemRow]) -> Option<Series> {
    let pta = |r: &&MemRow| r.source == RowSource::Pta && !r.negative;
    let mut has_totals = true;
    let mut events = 0usize;
    for r in rows.iter().filter(pta) {
        has_totals &= r.alloc_total_allocated().is_some();
        events += usize::from(r.alloc_ns().is_some()) + usize::from(r.release_ns().is_some());
    }
    if !rows.iter().any(|r| pta(&r)) {
        return None;
    }
    let mut ev: Vec<Event> = Vec::with_capacity(events);
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| pta(r)) {
        // Rows are indexed by u32 elsewhere too (a file of 4 billion rows is far past any limit).
        let Ok(i) = u32::try_from(i) else { break };
        if let Some(t) = r.alloc_ns() {
            ev.push((t, 1, i));
        }
        if let Some(t) = r.release_ns() {
            ev.push((t, 0, i));
        }
    }
    // Stable: events at the same time and kind keep the rows' order.
    ev.sort_by_key(|e| (e.0, e.1));
    let mut s = Series {
        component: "PTA".to_string(),
        ..Series::default()
    };
    s.reserve(ev.len());
    let mut sum: i128 = 0;
    for (t, kind, i) in ev {
        let Some(r) = rows.get(i as usize) else {
            continue;
        };
        let (al, re, ac) = if kind == 1 {
            sum += i128::from(r.size);
            (
                r.alloc_total_allocated(),
                r.alloc_total_reserved(),
                r.alloc_total_active(),
            )
        } else {
            sum -= i128::from(r.size);
            (
                r.release_total_allocated(),
                r.release_total_reserved(),
                r.release_total_active(),
            )
        };
        s.ts.push(t);
        if has_totals {
            s.allocated.push(al);
            s.reserved.push(re);
            s.active.push(ac);
        } else {
            let v = u64::try_from(sum.max(0)).ok();
            s.allocated.push(v);
            s.reserved.push(None);
            s.active.push(v);
        }
    }
    Some(s)
}

fn capture_end(a: &RankAnalysis) -> i64 {
    let mut end = i64::MIN;
    for r in &a.rows {
        for t in [r.alloc_ns(), r.release_ns(), r.active_release_ns()]
            .into_iter()
            .flatten()
        {
            end = end.max(t);
        }
    }
    for s in &a.memory {
        if let Some(&t) = s.ts.last() {
            end = end.max(t);
        }
    }
    end
}

fn summarize(a: &mut RankAnalysis, from_record: bool) {
    let s = &mut a.summary;
    s.rows = a.rows.len() as u64;
    s.rows_pta = a.rows.iter().filter(|r| r.source == RowSource::Pta).count() as u64;
    s.rows_ge = s.rows - s.rows_pta;
    for at in &a.attribution {
        match at.source {
            StackSource::Direct => s.stacks.direct += 1,
            StackSource::ViaForward => s.stacks.via_forward += 1,
            StackSource::Approximate => s.stacks.approximate += 1,
            StackSource::None => s.stacks.none += 1,
        }
    }
    s.group_by = if s.rows > 0 && s.stacks.direct + s.stacks.via_forward + s.stacks.approximate == 0
    {
        if a.rows.iter().all(|r| a.names.get(r.name).trim().is_empty()) {
            GROUP_BY_SIZE_CLASS
        } else {
            GROUP_BY_OP_NAME
        }
    } else {
        GROUP_BY_FRAME
    };
    for r in &a.rows {
        if r.release_ns().is_none() && !r.negative {
            s.unreleased_rows += 1;
            s.unreleased_bytes = s.unreleased_bytes.saturating_add(r.size);
        }
    }
    if let Some(fw) = allocator_series(&a.memory) {
        if let Some(p) = fw.peak(Metric::Allocated) {
            s.peak_allocated_bytes = p.bytes;
            s.peak_time_ns = p.time_ns;
            s.peak_source = if from_record {
                "memory_record"
            } else {
                "operator_memory"
            };
            let reserved_then = fw.value_at(Metric::Reserved, p.time_ns).unwrap_or(0);
            s.fragmentation_bytes = reserved_then.saturating_sub(p.bytes);
        }
        s.peak_reserved_bytes = fw.peak(Metric::Reserved).map_or(0, |p| p.bytes);
        s.peak_active_bytes = fw.peak(Metric::Active).map_or(0, |p| p.bytes);
        s.step_peaks = a
            .steps
            .iter()
            .filter_map(|st| {
                let mut best: Option<(u64, i64)> =
                    fw.value_at(Metric::Allocated, st.ts).map(|v| (v, st.ts));
                let k0 = fw.ts.partition_point(|&t| t < st.ts);
                let k1 = fw.ts.partition_point(|&t| t <= st.end);
                for k in k0..k1 {
                    if let (Some(&t), Some(v)) = (fw.ts.get(k), fw.allocated.get(k)) {
                        if best.is_none_or(|b| v > b.0) {
                            best = Some((v, t));
                        }
                    }
                }
                best.map(|(v, t)| StepPeak {
                    step: st.step,
                    start_ns: st.ts,
                    end_ns: st.end,
                    peak_allocated_bytes: v,
                    peak_time_ns: t,
                })
            })
            .collect();
    } else {
        s.peak_source = "none";
    }
    let mut modules: Vec<ModulePeak> = Vec::new();
    for m in &a.modules {
        if let Some((bytes, t)) = m.peak().filter(|p| p.0 > 0) {
            match modules.iter_mut().find(|x| x.module == m.module) {
                Some(x) if x.peak_reserved_bytes >= bytes => {}
                Some(x) => {
                    x.peak_reserved_bytes = bytes;
                    x.time_ns = t;
                }
                None => modules.push(ModulePeak {
                    module: m.module.clone(),
                    peak_reserved_bytes: bytes,
                    time_ns: t,
                }),
            }
        }
    }
    modules.sort_by(|x, y| {
        y.peak_reserved_bytes
            .cmp(&x.peak_reserved_bytes)
            .then(x.module.cmp(&y.module))
    });
    a.summary.module_peaks = modules;
    if a.summary.peak_source != "none" {
        let live = a.live_groups(a.summary.peak_time_ns, Some(a.summary.peak_allocated_bytes));
        a.summary.live_at_peak = live;
    }
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    let n = v.len();
    match n {
        0 => 0,
        _ if n % 2 == 1 => v.get(n / 2).copied().unwrap_or(0),
        _ => {
            let a = v.get(n / 2 - 1).copied().unwrap_or(0);
            let b = v.get(n / 2).copied().unwrap_or(0);
            ((u128::from(a) + u128::from(b)) / 2) as u64
        }
    }
}

/// Builds the matrix and the outliers: a rank stands out when its role has at least 3 ranks and
/// its peak allocated differs from the role's median by more than 10% and more than 64 MiB (with
/// 2 ranks the median sits halfway and cannot single one out). Only the ranks with data are in
/// it, as in a merged job summary: a rank without (its files refused) has no peak to set against
/// its role's, and one reader and a pool of them find the same outliers.
pub fn job_matrix(ranks: &[RankAnalysis]) -> (Vec<MatrixCell>, Vec<Outlier>) {
    matrix_outliers(
        ranks
            .iter()
            .filter(|r| r.summary.has_data())
            .map(|r| MatrixCell {
                role: r.summary.role.clone(),
                rank: r.summary.rank,
                step: r.summary.step,
                peak_allocated_bytes: r.summary.peak_allocated_bytes,
                peak_reserved_bytes: r.summary.peak_reserved_bytes,
            })
            .collect(),
    )
}

/// The outliers of a matrix (see [`job_matrix`]), returned with it: the one rule for analysed
/// jobs and merged job summaries alike.
pub fn matrix_outliers(matrix: Vec<MatrixCell>) -> (Vec<MatrixCell>, Vec<Outlier>) {
    let mut outliers = Vec::new();
    let mut roles: Vec<(&str, Option<u32>)> =
        matrix.iter().map(|c| (c.role.as_str(), c.step)).collect();
    roles.sort();
    roles.dedup();
    for (role, step) in roles {
        let cells: Vec<&MatrixCell> = matrix
            .iter()
            .filter(|c| c.role == role && c.step == step)
            .collect();
        if cells.len() < 3 {
            continue;
        }
        let mut peaks: Vec<u64> = cells.iter().map(|c| c.peak_allocated_bytes).collect();
        let med = median(&mut peaks);
        for c in cells {
            let d = i128::from(c.peak_allocated_bytes) - i128::from(med);
            if d.unsigned_abs() * 10 > u128::from(med) && d.unsigned_abs() > 64 << 20 {
                outliers.push(Outlier {
                    role: c.role.clone(),
                    rank: c.rank,
                    step: c.step,
                    peak_allocated_bytes: c.peak_allocated_bytes,
                    role_median_bytes: med,
                    deviation_permille: if med == 0 {
                        0
                    } else {
                        (d * 1000 / i128::from(med)) as i64
                    },
                });
            }
        }
    }
    (matrix, outliers)
}

fn finish(job: &Job, ranks: Vec<RankAnalysis>) -> JobAnalysis {
    let (matrix, outliers) = job_matrix(&ranks);
    let mut warnings = job.warnings.clone();
    for r in &ranks {
        warnings.extend(r.warnings.iter().cloned());
    }
    JobAnalysis {
        ranks,
        matrix,
        outliers,
        warnings,
    }
}

/// Analyses every rank of `job`, one after the other (each rank's trace still scans in parallel).
/// `progress(bytes)` receives bytes read since its previous call.
pub fn analyze_job(
    files: &dyn FileOpener,
    job: &Job,
    opts: &AnalyzeOptions,
    progress: &mut dyn FnMut(u64),
) -> JobAnalysis {
    let ranks = job
        .ranks
        .iter()
        .map(|r| analyze_rank(files, r, opts, progress))
        .collect();
    finish(job, ranks)
}

/// [`analyze_job`] for a load that may be stopped (the page's Cancel, a new drop): asks the
/// opener ([`FileOpener::stopped`]) after each file, run folder and rank and before the job's
/// figures, and ends with [`Stopped`] once it says so, never with what was read so far as the
/// job. The readers ask their sources as they parse ([`crate::source::Source::check_stop`]);
/// a stopped read or parse ends the file's reader with an error, and the opener's answer
/// after it ends the analysis. Unstopped, the same result as [`analyze_job`].
pub fn try_analyze_job(
    files: &dyn FileOpener,
    job: &Job,
    opts: &AnalyzeOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<JobAnalysis, Stopped> {
    let stop = || opener_stop(files);
    let mut ranks = Vec::with_capacity(job.ranks.len());
    for r in &job.ranks {
        stop()?;
        ranks.push(analyze_rank_in(files, None, r, opts, progress, &stop)?);
    }
    stop()?;
    Ok(finish(job, ranks))
}

/// Like [`analyze_job`], with ranks also in parallel (native: each task opens its own files), and
/// each rank's CSV files read while its trace is scanned. The same result as [`analyze_job`].
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_job_parallel(
    files: &(dyn FileOpener + Sync),
    job: &Job,
    opts: &AnalyzeOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> JobAnalysis {
    use rayon::prelude::*;
    let ranks = job
        .ranks
        .par_iter()
        .map(|r| {
            let shared = run::Shared { files, progress };
            let Ok(a) = analyze_rank_in(
                files,
                Some(shared),
                r,
                opts,
                &mut |b| progress(b),
                &never_stopped,
            );
            a
        })
        .collect();
    finish(job, ranks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row's two ops point at a kept copy of that op's columns; each op is kept once per
    /// run, in the order first named, after what earlier runs kept (the expectation built by a
    /// linear search of the ids seen, not by the code's index).
    #[test]
    fn joined_ops_keep_each_op_once_in_first_seen_order() {
        let mut rng = fastrand::Rng::with_seed(16);
        let mut ops = trace::Ops::default();
        for k in 0..40i64 {
            ops.name.push(k as u32 + 100);
            ops.pid.push(1);
            ops.tid.push(k % 3);
            ops.ts.push(1_000 + k);
            ops.dur.push(7 * k);
            ops.seq.push(k - 20);
            ops.fwd_tid.push(0);
            ops.stack.push(0);
        }
        let some = |rng: &mut fastrand::Rng| rng.bool().then(|| rng.u32(0..40));
        let mut a = RankAnalysis::default();
        let mut want_ops: Vec<JoinedOp> = Vec::new();
        let mut want_rows: Vec<(u32, u32)> = Vec::new();
        for _run in 0..3 {
            let attr: Vec<Attribution> = (0..200)
                .map(|_| Attribution {
                    op: some(&mut rng),
                    stack_op: some(&mut rng),
                    stack: 0,
                    source: StackSource::None,
                })
                .collect();
            let before = want_ops.len();
            let mut seen: Vec<u32> = Vec::new();
            let mut place = |op: Option<u32>, out: &mut Vec<JoinedOp>| match op {
                None => NO_OP,
                Some(i) => match seen.iter().position(|&s| s == i) {
                    Some(p) => (before + p) as u32,
                    None => {
                        seen.push(i);
                        let k = i as i64;
                        out.push(JoinedOp {
                            name: i + 100,
                            tid: k % 3,
                            ts: 1_000 + k,
                            dur: 7 * k,
                            seq: k - 20,
                        });
                        (out.len() - 1) as u32
                    }
                },
            };
            for at in &attr {
                let op = place(at.op, &mut want_ops);
                let stack_op = place(at.stack_op, &mut want_ops);
                want_rows.push((op, stack_op));
            }
            keep_joined_ops(&mut a, &attr, &ops);
        }
        assert_eq!(a.joined_ops, want_ops);
        assert_eq!(a.row_ops, want_rows);
    }

    /// An op id past the run's ops (a join that named an op the trace does not hold) gets the
    /// empty op, kept once however many rows name such ids, next to the real ops kept as usual.
    #[test]
    fn op_ids_past_the_ops_share_one_empty_op() {
        let mut ops = trace::Ops::default();
        for k in 0..3i64 {
            ops.name.push(k as u32 + 7);
            ops.pid.push(1);
            ops.tid.push(k);
            ops.ts.push(50 + k);
            ops.dur.push(2);
            ops.seq.push(k);
            ops.fwd_tid.push(0);
            ops.stack.push(0);
        }
        let row = |op: Option<u32>, stack_op: Option<u32>| Attribution {
            op,
            stack_op,
            stack: 0,
            source: StackSource::None,
        };
        let attr = [
            row(Some(3), Some(1)),
            row(Some(1), Some(9)),
            row(Some(u32::MAX), None),
            row(None, Some(3)),
        ];
        let mut a = RankAnalysis::default();
        keep_joined_ops(&mut a, &attr, &ops);
        let empty = JoinedOp {
            name: 0,
            tid: 0,
            ts: 0,
            dur: 0,
            seq: -1,
        };
        let one = JoinedOp {
            name: 8,
            tid: 1,
            ts: 51,
            dur: 2,
            seq: 1,
        };
        assert_eq!(a.joined_ops, vec![empty, one]);
        assert_eq!(a.row_ops, vec![(0, 1), (1, 0), (0, NO_OP), (NO_OP, 0)]);
    }
}
