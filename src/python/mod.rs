//! The Python module `memlens._native` (PyO3), compiled only with the `python` feature (the
//! wheel maturin builds). Like the CLI and the wasm layer it only converts: paths in, the core's
//! results out as JSON text, typed column buffers and CSV bytes, which the pure-Python package
//! (`python/memlens/`) turns into dicts, pandas DataFrames and pyarrow Tables. Errors become
//! `memlens.MemlensError` carrying the same diagnostics the CLI prints, of the subclass that
//! matches the CLI's exit status: `InputNotFoundError` (also a `FileNotFoundError`) for a path
//! that does not exist, `NothingToAnalyseError` where the CLI exits with 1.

use crate::export::columns::{Column, ColumnData};
use crate::export::{profiler as exp, snapshot as snap_exp, somas as somas_exp};
use crate::families;
use crate::input::{roots, FileOpener, InputSet, Inventory, Unit};
use crate::profiler::analysis::{analyze_job_parallel, AnalyzeOptions, JobAnalysis};
use crate::profiler::run_folder::{ProfilerRun, RunFolders};
use crate::profiler::view::{job_totals, Verdict};
use crate::profiler::{job_of, summary, Job};
use crate::snapshot::recognize::SnapshotFile;
use crate::snapshot::{self as snap_core, analysis::Analysis as SnapAnalysis, model::Snapshot};
use crate::somas::folder::{dump_in_folder, NoDump};
use crate::somas::recognize::SomasFile;
use crate::somas::{self as somas_core, tables::Table};
use crate::source::{PathSource, Source};
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyTuple, PyType};
use std::path::{Path, PathBuf};

create_exception!(
    memlens,
    MemlensError,
    PyValueError,
    "Bad or missing input: the message holds the same diagnostics the CLI prints (file, line or byte, what was expected)."
);

create_exception!(
    memlens,
    NothingToAnalyseError,
    MemlensError,
    "The paths exist but hold nothing this function analyses (the CLI exits with 1): the message says what was looked for and what was found, or why no rank yielded data."
);

fn err(text: impl Into<String>) -> PyErr {
    MemlensError::new_err(text.into())
}

/// `memlens.InputNotFoundError`: both a `MemlensError` and a `FileNotFoundError`, so
/// `except FileNotFoundError` catches a missing path as it does for `open()`. PyO3's exception
/// macro takes one base class; the class is made once with Python's `type()`.
fn input_not_found_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    TYPE.get_or_try_init(py, || {
        let bases = PyTuple::new(
            py,
            [
                py.get_type::<MemlensError>(),
                py.get_type::<PyFileNotFoundError>(),
            ],
        )?;
        let body = PyDict::new(py);
        body.set_item("__module__", "memlens")?;
        body.set_item(
            "__doc__",
            "A path that does not exist (the CLI exits with 2); the message is the CLI's, with a close name when there is one.",
        )?;
        let made = py
            .get_type::<PyType>()
            .call1(("InputNotFoundError", bases, body))?;
        Ok(made.cast_into::<PyType>()?.unbind())
    })
    .map(|t| t.bind(py))
}

/// True when `path` does not exist (`roots::check` words why; this only picks the class).
fn missing(path: &Path) -> bool {
    matches!(std::fs::metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// The CLI's refusal of paths that cannot be used (`roots::check`), one line per path; `None`
/// when every path can be looked at. An `InputNotFoundError` when every refused path is
/// missing (a permission problem stays a plain `MemlensError`).
fn refused(py: Python<'_>, paths: &[PathBuf]) -> Option<PyErr> {
    let problems = roots::check(paths);
    if problems.is_empty() {
        return None;
    }
    let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    let text = text.join("\n");
    if !problems.iter().all(|p| missing(Path::new(&p.path))) {
        return Some(err(text));
    }
    Some(match input_not_found_type(py) {
        Ok(t) => PyErr::from_type(t.clone(), text),
        Err(e) => e,
    })
}

/// This package's function for a unit of another family than the caller's, with the unit in
/// words: what a user who gave `analyze` a snapshot (or `somas` a job) should call instead.
fn function_for(unit: &Unit) -> Option<(&'static str, &'static str)> {
    if !unit.body().analysable() {
        None
    } else if unit.get::<ProfilerRun>().is_some() {
        Some(("analyze", "profiler output"))
    } else if unit.get::<SomasFile>().is_some() {
        Some(("somas", "a SOMAS dump"))
    } else if unit.get::<SnapshotFile>().is_some() {
        Some(("snapshot", "a memory snapshot"))
    } else {
        None
    }
}

/// `text` (a nothing-to-analyse message of `caller`) with one hint line per other function that
/// analyses something in `inv`, naming its first unit: the package's words for the CLI's hint
/// that `memlens PATH` analyses whatever the paths hold.
fn with_other_functions(mut text: String, inv: Option<&Inventory>, caller: &str) -> String {
    let mut seen: Vec<(&str, &str, &str, usize)> = Vec::new();
    for unit in inv.map(|i| i.units.as_slice()).unwrap_or_default() {
        let Some((function, what)) = function_for(unit).filter(|(f, _)| *f != caller) else {
            continue;
        };
        match seen.iter_mut().find(|s| s.0 == function) {
            Some(s) => s.3 += 1,
            None => seen.push((function, what, unit.path(), 0)),
        }
    }
    for (function, what, path, more) in seen {
        let more = match more {
            0 => String::new(),
            n => format!(" (and {n} more)"),
        };
        text.push_str(&format!(
            "\nhint: {path}{more} is {what}: memlens.{function}(path) analyses it"
        ));
    }
    text
}

/// An analysed torch_npu / MindSpore profiler job.
#[pyclass(module = "memlens._native", frozen)]
pub struct NativeJob {
    analysis: JobAnalysis,
    job: Job,
}

/// One column as `(name, kind, values, valid, offsets)`: `values` the little-endian buffer of
/// the values (text bytes for `str`, one byte per value for `bool`), `valid` one byte per row
/// (1 = present) or `None`, `offsets` the text's `int64` offsets or `None`.
type ColumnTuple<'py> = (
    &'static str,
    &'static str,
    Bound<'py, PyBytes>,
    Option<Bound<'py, PyBytes>>,
    Option<Bound<'py, PyBytes>>,
);

fn le_bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * N);
    for &x in v {
        out.extend_from_slice(&f(x));
    }
    out
}

fn bool_bytes(v: &[bool]) -> Vec<u8> {
    v.iter().map(|&b| u8::from(b)).collect()
}

fn column_tuple<'py>(py: Python<'py>, c: &Column) -> ColumnTuple<'py> {
    let b = |v: &[u8]| PyBytes::new(py, v);
    let valid = |v: &[bool]| (!v.iter().all(|&x| x)).then(|| b(&bool_bytes(v)));
    match &c.data {
        ColumnData::Str { offsets, bytes } => (
            c.name,
            "str",
            b(bytes),
            None,
            Some(b(&le_bytes(offsets, i64::to_le_bytes))),
        ),
        ColumnData::Int { values, valid: ok } => (
            c.name,
            "int",
            b(&le_bytes(values, i64::to_le_bytes)),
            valid(ok),
            None,
        ),
        ColumnData::Float { values, valid: ok } => (
            c.name,
            "float",
            b(&le_bytes(values, f64::to_le_bytes)),
            valid(ok),
            None,
        ),
        ColumnData::Bool(v) => (c.name, "bool", b(&bool_bytes(v)), None, None),
    }
}

#[pymethods]
impl NativeJob {
    /// The document `memlens profiler --json` prints, as JSON text.
    fn report_json(&self) -> PyResult<String> {
        exp::report_json(&self.analysis, &self.job).map_err(|e| err(e.to_string()))
    }

    /// `memory_events.csv` as typed columns (see [`ColumnTuple`]), in the CSV's column order.
    fn event_columns<'py>(&self, py: Python<'py>) -> Vec<ColumnTuple<'py>> {
        let cols = py.detach(|| exp::memory_events_columns(&self.analysis));
        cols.iter().map(|c| column_tuple(py, c)).collect()
    }

    /// `memory_events.csv`, byte for byte what the CLI writes.
    fn memory_events_csv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut buf = Vec::new();
        py.detach(|| exp::write_memory_events(&self.analysis, &mut buf))
            .map_err(|e| err(e.to_string()))?;
        Ok(PyBytes::new(py, &buf))
    }

    /// The job summary file's text for this job (what `memlens profiler PATH --summary` writes).
    fn summary_json(&self) -> PyResult<String> {
        summary::JobSummary::merge(summary::rank_summaries(&self.analysis))
            .to_json()
            .map_err(|e| err(e.to_string()))
    }

    /// The diagnostics of discovery and of every rank's files, as the CLI prints them.
    fn warnings(&self) -> Vec<String> {
        self.analysis
            .warnings
            .iter()
            .map(|d| d.to_string())
            .collect()
    }
}

/// Analyses profiler output under `paths` (run folders, whole jobs, archives). Raises
/// `MemlensError` with the CLI's messages when a path cannot be looked at, when nothing under the
/// paths is profiler output (what was looked for and what was found), or when no rank yields data
/// (the diagnostics): the cases where the CLI exits with 2 or 1.
#[pyfunction]
fn analyze(py: Python<'_>, paths: Vec<PathBuf>) -> PyResult<NativeJob> {
    if paths.is_empty() {
        return Err(err(
            "no paths given: name run folders, a job folder or archives",
        ));
    }
    if let Some(e) = refused(py, &paths) {
        return Err(e);
    }
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let shown = shown.join(", ");
    let (analysis, job) = py
        .detach(|| {
            let mut inputs = families::input_set_from_paths(&paths);
            let job = job_of(&mut inputs);
            if job.ranks.is_empty() {
                let nothing = inputs.nothing_to_analyse(&[&RunFolders], &|u| {
                    u.get::<ProfilerRun>()
                        .is_some_and(ProfilerRun::has_memory_files)
                });
                if let Some(nothing) = nothing {
                    let text = format!("{shown}: {nothing}");
                    return Err(with_other_functions(text, inputs.inventory(), "analyze"));
                }
            }
            let analysis = analyze_job_parallel(&inputs, &job, &AnalyzeOptions::default(), &|_| {});
            Ok((analysis, job))
        })
        .map_err(NothingToAnalyseError::new_err)?;
    if !exp::has_data(&analysis) {
        let mut text =
            format!("{shown}: the run folders hold no memory rows and no allocator curve");
        for w in &analysis.warnings {
            text.push('\n');
            text.push_str(&w.to_string());
        }
        // The class follows the CLI's exit status, the core's verdict: 1 (nothing to analyse)
        // when no file was refused, 2 (bad input) when some file could not be used.
        let verdict = Verdict::of(&job_totals(&analysis, &job));
        return Err(if verdict.exit_code == 1 {
            NothingToAnalyseError::new_err(text)
        } else {
            MemlensError::new_err(text)
        });
    }
    Ok(NativeJob { analysis, job })
}

/// An analysed SOMAS dump.
#[pyclass(module = "memlens._native", frozen)]
pub struct NativeSomas {
    model: somas_core::SomasModel,
    analysis: somas_core::Analysis,
    summary: somas_core::summary::Summary,
}

const SOMAS_TABLES: [Table; 4] = [
    Table::Tensors,
    Table::Nodes,
    Table::Parameters,
    Table::Conflicts,
];

#[pymethods]
impl NativeSomas {
    /// The document `memlens somas --json` prints (no queries), as JSON text.
    fn summary_json(&self) -> PyResult<String> {
        somas_exp::summary_json(
            &self.model,
            &self.analysis,
            &self.summary,
            &somas_exp::QuerySet::default(),
        )
        .map_err(|e| err(e.to_string()))
    }

    /// The table names (`tensors`, `nodes`, `parameters`, `conflicts`).
    fn table_names(&self) -> Vec<&'static str> {
        SOMAS_TABLES.iter().map(|t| t.key()).collect()
    }

    /// One table as CSV bytes with somas_tool's header, as `memlens somas --out` writes it.
    fn table_csv<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let table = SOMAS_TABLES
            .into_iter()
            .find(|t| t.key() == name)
            .ok_or_else(|| {
                err(format!(
                    "no SOMAS table {name:?}: expected one of tensors, nodes, parameters, conflicts"
                ))
            })?;
        let mut buf = Vec::new();
        somas_exp::write_table(&mut buf, &self.model, &self.analysis, table, None)
            .map_err(|e| err(e.to_string()))?;
        Ok(PyBytes::new(py, &buf))
    }
}

fn open(path: &Path) -> PyResult<PathSource> {
    PathSource::open(path, path.display().to_string()).map_err(|e| err(e.to_string()))
}

/// Reads and analyses a dump and its task-info file, as `memlens somas` does.
fn load_somas(dump: &dyn Source, task_info: Option<&dyn Source>) -> Result<NativeSomas, String> {
    let model = somas_core::load_dump(dump, None).map_err(|d| d.to_string())?;
    let task = task_info
        .map(|s| somas_core::load_task_info(s, None).map_err(|d| d.to_string()))
        .transpose()?;
    let analysis = somas_core::analyze(&model, task.as_ref());
    let summary = somas_core::summary::summary(&model, &analysis, task.as_ref());
    Ok(NativeSomas {
        model,
        analysis,
        summary,
    })
}

/// The one dump under `folder` (the core's search, as `memlens somas FOLDER`), with `task_info`
/// or else the task-info file of its graph beside it. The error's class is the CLI's exit status:
/// nothing to analyse (1) or several dumps to choose from (2).
fn somas_in_folder(folder: &Path, task_info: Option<&Path>) -> PyResult<NativeSomas> {
    let mut set: InputSet = families::input_set_from_paths(&[folder.to_path_buf()]);
    let found = match dump_in_folder(&mut set, &folder.display().to_string()) {
        Ok(found) => found,
        Err(NoDump::Nothing { nothing, .. }) => {
            let text = with_other_functions(nothing.said(), set.inventory(), "somas");
            return Err(NothingToAnalyseError::new_err(text));
        }
        Err(several) => return Err(err(several.to_string())),
    };
    let in_set = |path: &str| set.open(path).map_err(|d| err(d.to_string()));
    let dump = in_set(&found.dump.path)?;
    let task: Option<Box<dyn Source + '_>> = match (task_info, &found.task_info) {
        (Some(p), _) => Some(Box::new(open(p)?)),
        (None, Some(t)) => Some(in_set(&t.path)?),
        (None, None) => None,
    };
    load_somas(dump.as_ref(), task.as_deref()).map_err(err)
}

/// Analyses a SOMAS dump (and its task-info file), or the one dump a folder holds. Raises
/// `MemlensError` with the CLI's diagnostic when a file cannot be read or parsed, or when the
/// folder holds several dumps; `NothingToAnalyseError` when it holds none.
#[pyfunction]
#[pyo3(signature = (dump, task_info=None))]
fn somas(py: Python<'_>, dump: PathBuf, task_info: Option<PathBuf>) -> PyResult<NativeSomas> {
    let given: Vec<PathBuf> = std::iter::once(&dump).chain(&task_info).cloned().collect();
    if let Some(e) = refused(py, &given) {
        return Err(e);
    }
    if dump.is_dir() {
        return py.detach(|| somas_in_folder(&dump, task_info.as_deref()));
    }
    let src = open(&dump)?;
    let task_src = task_info.as_deref().map(open).transpose()?;
    py.detach(|| load_somas(&src, task_src.as_ref().map(|s| s as &dyn Source)))
        .map_err(err)
}

/// An analysed PyTorch / torch_npu memory snapshot.
#[pyclass(module = "memlens._native", frozen)]
pub struct NativeSnapshot {
    snap: Snapshot,
    analysis: SnapAnalysis,
}

#[pymethods]
impl NativeSnapshot {
    /// The document `memlens snapshot --json` prints (`summary.json`), as JSON text.
    fn summary_json(&self) -> String {
        snap_exp::summary_json(&self.snap, &self.analysis)
    }

    /// The table names: the CSV files `memlens snapshot --out` writes, without `.csv`.
    fn table_names(&self) -> Vec<&'static str> {
        snap_exp::FILES
            .iter()
            .filter_map(|f| f.strip_suffix(".csv"))
            .collect()
    }

    /// One table as the CSV bytes `memlens snapshot --out` writes to `<name>.csv`.
    fn table_csv<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let file = format!("{name}.csv");
        let mut buf = Vec::new();
        snap_exp::write_named(&file, &self.snap, &self.analysis, &mut buf)
            .ok_or_else(|| {
                let names = self.table_names().join(", ");
                err(format!(
                    "no snapshot table {name:?}: expected one of {names}"
                ))
            })?
            .map_err(|e| err(e.to_string()))?;
        Ok(PyBytes::new(py, &buf))
    }
}

/// Reads and analyses a memory snapshot pickle. Raises `MemlensError` with the CLI's diagnostic
/// (file and byte offset) when it cannot be read or parsed.
#[pyfunction]
fn snapshot(py: Python<'_>, path: PathBuf) -> PyResult<NativeSnapshot> {
    if let Some(e) = refused(py, std::slice::from_ref(&path)) {
        return Err(e);
    }
    let src = open(&path)?;
    py.detach(|| {
        let snap = snap_core::read(&src).map_err(|d| d.to_string())?;
        let analysis = snap_core::analysis::analyse(&snap);
        Ok::<_, String>(NativeSnapshot { snap, analysis })
    })
    .map_err(err)
}

fn json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| err(e.to_string()))
}

/// The ranks under `root` on this machine: JSON `{"groups": [RankGroup…], "warnings": [...]}`,
/// with `"problem"` (the CLI's words) and `"missing"` when `root` cannot be looked at here.
#[pyfunction]
fn discover(py: Python<'_>, root: PathBuf) -> PyResult<String> {
    let roots = [root];
    if let Some(problem) = roots::check(&roots).first() {
        return json(&serde_json::json!({
            "groups": [],
            "warnings": [],
            "problem": problem.to_string(),
            "missing": missing(&roots[0]),
        }));
    }
    let (groups, warnings) = py.detach(|| summary::discover_groups(&roots[0]));
    let warnings: Vec<String> = warnings.iter().map(|d| d.to_string()).collect();
    json(&serde_json::json!({ "groups": groups, "warnings": warnings }))
}

/// Summarises one rank group (JSON `RankGroup`) under `root`: a JSON list of rank summaries.
#[pyfunction]
fn summarize_group(py: Python<'_>, root: PathBuf, group: &str) -> PyResult<String> {
    let group: summary::RankGroup =
        serde_json::from_str(group).map_err(|e| err(format!("not a rank group: {e}")))?;
    let ranks = py.detach(|| summary::summarize_group(&root, &group));
    json(&ranks)
}

/// The summary of a group whose task failed (JSON `RankGroup`), with the reason.
#[pyfunction]
fn failed_rank(group: &str, reason: String) -> PyResult<String> {
    let g: summary::RankGroup =
        serde_json::from_str(group).map_err(|e| err(format!("not a rank group: {e}")))?;
    json(&summary::RankSummary::failed(
        g.role, g.rank, g.step, g.run_dirs, reason,
    ))
}

/// Merges rank summaries (JSON texts) into the job summary file's text.
#[pyfunction]
fn merge_summaries(ranks: Vec<String>) -> PyResult<String> {
    let ranks = ranks
        .iter()
        .map(|t| summary::parse_rank(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    summary::JobSummary::merge(ranks)
        .to_json()
        .map_err(|e| err(e.to_string()))
}

/// The rank summaries (JSON texts) of a job summary file's text; `file` names it in errors.
#[pyfunction]
fn read_summary_ranks(file: &str, text: &str) -> PyResult<Vec<String>> {
    summary::read_ranks(file, text)
        .map_err(|d| err(d.to_string()))?
        .iter()
        .map(json)
        .collect()
}

/// The module `memlens._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MemlensError", m.py().get_type::<MemlensError>())?;
    m.add(
        "NothingToAnalyseError",
        m.py().get_type::<NothingToAnalyseError>(),
    )?;
    m.add("InputNotFoundError", input_not_found_type(m.py())?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The Python tool's twelve columns, from the core's own list (the package re-exports it).
    m.add(
        "EVENT_CONTRACT_COLUMNS",
        pyo3::types::PyTuple::new(m.py(), &exp::MEMORY_EVENTS_COLUMNS[..exp::CONTRACT_COLUMNS])?,
    )?;
    m.add_class::<NativeJob>()?;
    m.add_class::<NativeSomas>()?;
    m.add_class::<NativeSnapshot>()?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(somas, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(discover, m)?)?;
    m.add_function(wrap_pyfunction!(summarize_group, m)?)?;
    m.add_function(wrap_pyfunction!(failed_rank, m)?)?;
    m.add_function(wrap_pyfunction!(merge_summaries, m)?)?;
    m.add_function(wrap_pyfunction!(read_summary_ranks, m)?)?;
    Ok(())
}
