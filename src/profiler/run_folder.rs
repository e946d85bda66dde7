//! Profiler run folders: how torch_npu and MindSpore lay out one rank's output, and the
//! recognizer that finds them among the inputs.
//!
//! A run folder is `{worker}_{pid}_{timestamp}_ascend_{pt|ms}`, a folder holding
//! `ASCEND_PROFILER_OUTPUT/`, or one directly holding `profiler_info*.json` or a memory file. Its
//! rank comes from `profiler_info_{rank}.json` (the file name, then its `rank_id` key), its role
//! from `profiler_metadata.json` or the folders above it, its step from a `step<N>` folder above.

use crate::input::classify::{FileView, Finding, Group, Head, Recognizer, Unit, UnitBody};
use crate::input::paths::{file_name, parent};
use crate::jsonscan::lex::{scan_object, skip_ws};
use serde::Serialize;
use std::collections::BTreeMap;

/// Largest `profiler_info*.json` / `profiler_metadata.json` read whole (real ones are a few KiB).
pub const PROFILER_JSON_LIMIT: usize = 4 << 20;

/// The torch_npu files a memory analysis reads, by file name. The first torch_npu profiler
/// analysis (Ascend/pytorch's `prof_view/memory_view_parser.py` of 2023) wrote what became
/// `operator_memory.csv` and `memory_record.csv` as `memory_view_form.csv` (`Tag,Operator,…`) and
/// `memory_view_line_chart.csv` (`Tag,Timestamp(us),Total Reserved(KB),…`); the readers take
/// their columns by name.
pub const MEMORY_FILES: [&str; 6] = [
    "operator_memory.csv",
    "memory_record.csv",
    "npu_module_mem.csv",
    "trace_view.json",
    "memory_view_form.csv",
    "memory_view_line_chart.csv",
];

/// A torch_npu / MindSpore profiler run folder (`*_ascend_pt`, `*_ascend_ms`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfilerRun {
    /// Relative path of the run folder.
    pub path: String,
    /// Rank, from `profiler_info_{rank}.json` (file name first, then its `rank_id` key); `None` = unknown.
    pub rank: Option<u32>,
    /// Where the rank came from: `file-name`, `rank_id`, `db-file-name` (the name of MindSpore's
    /// `ascend_mindspore_profiler_{rank}.db`), or `none`.
    pub rank_source: &'static str,
    /// Role: `role` key of `profiler_metadata.json`, else the nearest ancestor folder that is not a
    /// run folder and not a step; empty when there is none.
    pub role: String,
    /// Where the role came from: `metadata`, `folder`, or `none`.
    pub role_source: &'static str,
    /// Step number from a `step<N>` or numeric ancestor folder.
    pub step: Option<u32>,
    /// Worker name (host or `tensorboard_trace_handler` worker) parsed from the folder name.
    pub worker: Option<String>,
    /// Process id parsed from the folder name.
    pub pid: Option<u64>,
    /// The 17-digit local timestamp `YYYYmmddHHMMSSmmm` parsed from the folder name.
    pub timestamp: Option<String>,
    /// `pt` (torch_npu) or `ms` (MindSpore); `None` when the folder does not carry the suffix.
    pub framework: Option<&'static str>,
    /// The files memory analysis reads, by role.
    pub files: RunFiles,
    /// How many files the folder holds in all.
    pub file_count: u64,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Things the user should know (missing files, db-only export, unreadable JSON…).
    pub notes: Vec<String>,
}

/// The files of one run folder that memlens reads (relative paths).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RunFiles {
    /// `profiler_info_{rank}.json` or `profiler_info.json`.
    pub profiler_info: Option<String>,
    /// `profiler_metadata.json`.
    pub profiler_metadata: Option<String>,
    /// `ASCEND_PROFILER_OUTPUT/operator_memory.csv`.
    pub operator_memory: Option<String>,
    /// `ASCEND_PROFILER_OUTPUT/memory_record.csv`.
    pub memory_record: Option<String>,
    /// `ASCEND_PROFILER_OUTPUT/npu_module_mem.csv`.
    pub npu_module_mem: Option<String>,
    /// `ASCEND_PROFILER_OUTPUT/trace_view.json`.
    pub trace_view: Option<String>,
    /// `ascend_pytorch_profiler_*.db` files (db export).
    pub db: Vec<String>,
    /// Database exports in msprof's own layout ([`is_msprof_db_name`]): MindSpore's
    /// `ascend_mindspore_profiler[_{rank}].db` and msprof's `msprof_{timestamp}.db`.
    pub msprof_db: Vec<String>,
}

impl UnitBody for ProfilerRun {
    /// `ascend-run`: the kind's name from before the module was called `profiler`, kept for the
    /// page and for scripts reading `--json`.
    fn kind(&self) -> &'static str {
        "ascend-run"
    }
    fn path(&self) -> &str {
        &self.path
    }
    fn summary(&self) -> String {
        let rank = self
            .rank
            .map_or("rank ?".to_string(), |r| format!("rank {r}"));
        let step = self.step.map(|s| format!(" step {s}")).unwrap_or_default();
        let role = if self.role.is_empty() {
            "-"
        } else {
            &self.role
        };
        format!("{rank} role {role}{step}")
    }
    fn notes(&self) -> &[String] {
        &self.notes
    }
    fn analysable(&self) -> bool {
        self.has_memory_files()
    }
}

impl ProfilerRun {
    /// What the run's own diagnostics are said of: its folder, or, when its files were given
    /// loose (a file, or the run folder's own contents, named directly: no folder above them in
    /// the input), those files — an empty place would print as `: warning: …`.
    pub fn place(&self) -> String {
        if !self.path.is_empty() {
            return self.path.clone();
        }
        let f = &self.files;
        let named = [
            &f.profiler_info,
            &f.profiler_metadata,
            &f.operator_memory,
            &f.memory_record,
            &f.npu_module_mem,
            &f.trace_view,
        ];
        let files: Vec<&str> = named
            .into_iter()
            .flatten()
            .chain(&f.db)
            .chain(&f.msprof_db)
            .map(String::as_str)
            .collect();
        if files.is_empty() {
            "the files given".to_string()
        } else {
            files.join(", ")
        }
    }

    /// Whether the folder holds a file the memory analysis reads: a text file or the database
    /// export (without one it is listed, not analysed: a run whose analysis never ran).
    pub fn has_memory_files(&self) -> bool {
        let f = &self.files;
        f.operator_memory.is_some()
            || f.memory_record.is_some()
            || f.trace_view.is_some()
            || !f.db.is_empty()
            || !f.msprof_db.is_empty()
    }
}

/// The name of a folder of raw CANN profiler data: `PROF_{number}_{timestamp}_{string}`.
pub fn is_raw_data_folder_name(name: &str) -> bool {
    name.starts_with("PROF_")
}

/// The call that turns raw data into the files memlens reads, by framework (`pt`, `ms`).
fn analyse_call(framework: Option<&str>, path: &str) -> String {
    match framework {
        Some("ms") => format!("mindspore.profiler.profiler.analyse(\"{path}\")"),
        _ => format!("torch_npu.profiler.profiler.analyse(\"{path}\")"),
    }
}

/// The recognizer of profiler run folders (claims them by path; reads only the small JSON files).
pub struct RunFolders;

impl Recognizer for RunFolders {
    fn describes(&self) -> &'static [&'static str] {
        &["a file of a torch_npu / MindSpore profiler run folder"]
    }

    fn group(&self, paths: &[Option<(&str, u64)>]) -> Vec<Group> {
        // Folders that are run roots because they directly hold profiler_info*.json or memory files.
        let mut extra_roots = BTreeMap::new();
        for (path, _) in paths.iter().flatten() {
            let name = file_name(path);
            if is_profiler_info_name(name)
                || MEMORY_FILES.contains(&name)
                || is_db_name(name)
                || is_msprof_db_name(name)
                || name == "profiler_metadata.json"
            {
                extra_roots.insert(parent(path).to_string(), ());
            }
        }
        let mut runs: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, p) in paths.iter().enumerate() {
            if let Some((path, _)) = p {
                if let Some(root) = run_root_of(path, &extra_roots) {
                    runs.entry(root).or_default().push(i);
                }
            }
        }
        runs.into_iter()
            .map(|(root, members)| Group { root, members })
            .collect()
    }

    fn member_head(&self, path: &str, _size: u64) -> usize {
        let name = file_name(path);
        if is_profiler_info_name(name) || name == "profiler_metadata.json" {
            PROFILER_JSON_LIMIT
        } else {
            0
        }
    }

    fn build(&self, group: &Group, files: &[FileView]) -> Unit {
        let members: Vec<FileView> = group
            .members
            .iter()
            .filter_map(|&i| files.get(i).copied())
            .collect();
        Unit::new(build_run(&group.root, &members))
    }

    fn keeps(&self, path: &str, _size: u64) -> bool {
        let name = file_name(path);
        MEMORY_FILES.contains(&name) || is_db_name(name) || is_msprof_db_name(name)
    }

    fn looks_for(&self) -> &'static [&'static str] {
        &["torch_npu / MindSpore profiler run folders (`*_ascend_pt`, `*_ascend_ms`, or a folder \
           holding ASCEND_PROFILER_OUTPUT, profiler_info*.json or a memory file)"]
    }

    /// `PROF_*` folders outside any run folder: raw CANN data, whose run folder was not given or
    /// whose analysis never ran; then folders of CANN's own summary tables
    /// ([`is_cann_summary_name`]) given without their `PROF_*` folder.
    fn near_misses(&self, unrecognised: &[&str]) -> Vec<Finding> {
        let mut found = raw_data_folders(unrecognised);
        found.extend(cann_summary_folders(unrecognised, &found));
        found
    }
}

/// Where CANN's own memory summaries sit: `mindstudio_profiler_output/` of a `PROF_*` folder, as
/// `msprof` (a CANN application profiled without a framework) or a run folder kept with
/// `data_simplification=False` leaves them. Their names carry device, model and time
/// (`operator_memory_0_1_20250109145043.csv`) and their sizes are in KB, not the MB of the
/// framework's export memlens reads; MindSpore's own memory tracker writes an
/// `operator_memory_<rank>.csv` of yet another shape.
pub fn is_cann_summary_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".csv") else {
        return false;
    };
    [
        "operator_memory_",
        "memory_record_",
        "npu_mem_",
        "npu_module_mem_",
        "static_op_mem_",
    ]
    .iter()
    .any(|p| stem.strip_prefix(p).is_some_and(|rest| !rest.is_empty()))
}

/// The folders holding [`is_cann_summary_name`] files outside every folder already `found`, one
/// finding each naming the files (such files given directly: one finding each).
fn cann_summary_folders(unrecognised: &[&str], found: &[Finding]) -> Vec<Finding> {
    let covered = |p: &str| {
        found
            .iter()
            .any(|f| p.starts_with(&f.path) && p.as_bytes().get(f.path.len()) == Some(&b'/'))
    };
    let mut folders: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for path in unrecognised {
        let name = file_name(path);
        if is_cann_summary_name(name) && !covered(path) {
            let folder = parent(path);
            let key = if folder.is_empty() { *path } else { folder };
            folders.entry(key).or_default().push(name);
        }
    }
    folders
        .into_iter()
        .map(|(folder, names)| {
            let what = match names.as_slice() {
                [one] if *one == folder => "a memory summary".to_string(),
                [one] => format!("a memory summary ({one})"),
                [first, rest @ ..] => {
                    format!("memory summaries ({first} and {} more)", rest.len())
                }
                [] => String::new(),
            };
            Finding {
                path: folder.to_string(),
                what: format!(
                    "{what} of CANN's own profiler (msprof) or of MindSpore's memory tracker, in \
                     columns of its own (msprof's totals are in KB), not the analysed framework \
                     output memlens reads"
                ),
                hint: Some(
                    "give the run folder (*_ascend_pt / *_ascend_ms) whose ASCEND_PROFILER_OUTPUT \
                     holds operator_memory.csv and memory_record.csv; a CANN application profiled \
                     with msprof alone has no such folder, and memlens does not read msprof's \
                     summaries"
                        .to_string(),
                ),
            }
        })
        .collect()
}

/// The `PROF_*` folders among `unrecognised` paths (see [`RunFolders::near_misses`]).
fn raw_data_folders(unrecognised: &[&str]) -> Vec<Finding> {
    let mut folders: Vec<&str> = Vec::new();
    for path in unrecognised {
        let mut end = 0;
        for comp in path.split('/') {
            let start = end + usize::from(end > 0);
            end = start + comp.len();
            if end < path.len() && is_raw_data_folder_name(comp) {
                folders.push(&path[..end]);
                break;
            }
        }
    }
    folders.dedup();
    folders
        .into_iter()
        .map(|folder| {
            let above = parent(folder);
            Finding {
                path: folder.to_string(),
                what: "raw CANN profiler data (a PROF_* folder), not the analysed output \
                       memlens reads"
                    .to_string(),
                hint: Some(format!(
                    "run {} on the run folder that holds it, then give memlens that folder",
                    analyse_call(
                        None,
                        if above.is_empty() {
                            "<run folder>"
                        } else {
                            above
                        }
                    )
                )),
            }
        })
        .collect()
}

/// True for a run folder name: `…_ascend_pt` or `…_ascend_ms`.
pub fn is_run_folder_name(name: &str) -> bool {
    name.ends_with("_ascend_pt") || name.ends_with("_ascend_ms")
}

fn is_profiler_info_name(name: &str) -> bool {
    name == "profiler_info.json" || profiler_info_rank(name).is_some()
}

/// The rank in a `profiler_info_{rank}.json` file name.
pub fn profiler_info_rank(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("profiler_info_")?.strip_suffix(".json")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn is_db_name(name: &str) -> bool {
    name.starts_with("ascend_pytorch_profiler") && name.ends_with(".db")
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A database export in msprof's own layout (tables `NPU_OP_MEM`, `NPU_MEM`, `NPU_MODULE_MEM`,
/// names in `STRING_IDS`): msprof writes `msprof_{timestamp}.db` into its `PROF_*` folder, and
/// MindSpore's profiler with `export_type` Db moves that file, unchanged, to
/// `ASCEND_PROFILER_OUTPUT/ascend_mindspore_profiler_{rank}.db` (`ascend_mindspore_profiler.db`
/// when its rank id is 0 or unset: mindspore-ai/mindspore_test,
/// mindspore/python/mindspore/profiler/common/profiler_path_manager.py, `move_db_file`, commit
/// ca4bb05999144e2aeb03dbd0a3bcd5126ec24a4f).
pub fn is_msprof_db_name(name: &str) -> bool {
    if let Some(rest) = name
        .strip_prefix("ascend_mindspore_profiler")
        .and_then(|r| r.strip_suffix(".db"))
    {
        return rest.is_empty() || rest.strip_prefix('_').is_some_and(all_digits);
    }
    name.strip_prefix("msprof_")
        .and_then(|r| r.strip_suffix(".db"))
        .is_some_and(all_digits)
}

/// The rank in an `ascend_mindspore_profiler_{rank}.db` file name.
pub fn msprof_db_rank(name: &str) -> Option<u32> {
    let digits = name
        .strip_prefix("ascend_mindspore_profiler_")?
        .strip_suffix(".db")?;
    all_digits(digits).then(|| digits.parse().ok()).flatten()
}

/// A step folder name: `step<N>`, `step_<N>`, `step-<N>` or all digits.
pub fn step_number(name: &str) -> Option<u32> {
    let lower = name.to_ascii_lowercase();
    let digits = match lower.strip_prefix("step") {
        Some(rest) => rest.trim_start_matches(['_', '-']),
        None => lower.as_str(),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Parts of a run folder name `{worker}_{pid}_{timestamp}_ascend_{pt|ms}`, parsed from the right
/// because host names may contain `_`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunName {
    /// Worker / host name (may contain `_`).
    pub worker: Option<String>,
    /// Process id.
    pub pid: Option<u64>,
    /// 17-digit local timestamp.
    pub timestamp: Option<String>,
    /// `pt` or `ms`.
    pub framework: &'static str,
}

/// Parses a run folder name; `None` if it does not end in `_ascend_pt` / `_ascend_ms`.
pub fn parse_run_name(name: &str) -> Option<RunName> {
    let (stem, framework) = if let Some(s) = name.strip_suffix("_ascend_pt") {
        (s, "pt")
    } else if let Some(s) = name.strip_suffix("_ascend_ms") {
        (s, "ms")
    } else {
        return None;
    };
    let mut out = RunName {
        worker: None,
        pid: None,
        timestamp: None,
        framework,
    };
    let mut parts = stem.rsplitn(3, '_');
    let ts = parts.next().unwrap_or("");
    if ts.len() == 17 && ts.bytes().all(|b| b.is_ascii_digit()) {
        out.timestamp = Some(ts.to_string());
        let pid = parts.next();
        let worker = parts.next();
        if let (Some(pid), Some(worker)) = (pid, worker) {
            if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) && !worker.is_empty() {
                out.pid = pid.parse().ok();
                out.worker = Some(worker.to_string());
            }
        }
    }
    Some(out)
}

/// Where in the tree a file belongs to a run folder, if it does.
fn run_root_of(path: &str, extra_roots: &BTreeMap<String, ()>) -> Option<String> {
    let comps: Vec<&str> = path.split('/').collect();
    // Deepest ancestor folder named like a run folder.
    for i in (0..comps.len().saturating_sub(1)).rev() {
        if is_run_folder_name(comps[i]) {
            return Some(comps[..=i].join("/"));
        }
    }
    // A folder holding ASCEND_PROFILER_OUTPUT is a run folder whatever its name.
    for i in (0..comps.len().saturating_sub(1)).rev() {
        if comps[i] == "ASCEND_PROFILER_OUTPUT" {
            return Some(comps[..i].join("/"));
        }
    }
    // Folders that directly hold profiler_info*.json or a memory file. Nothing in their name or
    // layout says the rest of what they hold is the profiler's (a snapshot or a SOMAS dump beside
    // a copied operator_memory.csv, or the whole drop when its top holds one): they claim only
    // the files of a run folder they hold directly, and torch_npu's raw-data folders.
    let mut dir = parent(path);
    loop {
        if extra_roots.contains_key(dir) {
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(path)
                .trim_start_matches('/');
            return is_run_file_of_content_root(rel).then(|| dir.to_string());
        }
        if dir.is_empty() {
            return None;
        }
        dir = parent(dir);
    }
}

/// Whether `rel` (a path below a folder that is a run folder only by what it directly holds) is
/// one of that run's files: a file a run folder holds directly (profiler_info*.json,
/// profiler_metadata.json, a memory file, the database export and its `-wal`, `-shm` or
/// `-journal`), or one under the raw-data folders torch_npu writes beside them (`PROF_*`,
/// `FRAMEWORK`, `logs`).
fn is_run_file_of_content_root(rel: &str) -> bool {
    match rel.split_once('/') {
        Some((top, _)) => is_raw_data_folder_name(top) || top == "FRAMEWORK" || top == "logs",
        None => {
            let db = ["-wal", "-shm", "-journal"]
                .iter()
                .find_map(|s| rel.strip_suffix(s))
                .unwrap_or(rel);
            is_profiler_info_name(rel)
                || rel == "profiler_metadata.json"
                || MEMORY_FILES.contains(&rel)
                || is_db_name(db)
                || is_msprof_db_name(db)
        }
    }
}

fn build_run(root: &str, members: &[FileView]) -> ProfilerRun {
    let folder = file_name(root);
    let parsed = parse_run_name(folder);
    let mut run = ProfilerRun {
        path: root.to_string(),
        rank: None,
        rank_source: "none",
        role: String::new(),
        role_source: "none",
        step: None,
        worker: parsed.as_ref().and_then(|p| p.worker.clone()),
        pid: parsed.as_ref().and_then(|p| p.pid),
        timestamp: parsed.as_ref().and_then(|p| p.timestamp.clone()),
        framework: parsed.as_ref().map(|p| p.framework),
        files: RunFiles::default(),
        file_count: members.len() as u64,
        bytes: members.iter().map(|f| f.size).sum(),
        notes: Vec::new(),
    };
    let prefix = if root.is_empty() {
        String::new()
    } else {
        format!("{root}/")
    };
    let mut info_head: Option<(&Head, u64)> = None;
    let mut meta_head: Option<(&Head, u64)> = None;
    // Sorted so that duplicates resolve the same way whatever the input order.
    let mut sorted: Vec<&FileView> = members.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(b.path));
    for f in sorted {
        let (path, size, head) = (&f.path.to_string(), &f.size, f.head);
        let rel = path.strip_prefix(&prefix).unwrap_or(path);
        let name = file_name(rel);
        let top_level = !rel.contains('/');
        let in_output = parent(rel) == "ASCEND_PROFILER_OUTPUT";
        if top_level && is_profiler_info_name(name) {
            // Prefer profiler_info_{rank}.json over profiler_info.json.
            let better = match &run.files.profiler_info {
                None => true,
                Some(old) => {
                    profiler_info_rank(file_name(old)).is_none()
                        && profiler_info_rank(name).is_some()
                }
            };
            if better {
                run.files.profiler_info = Some(path.clone());
                info_head = Some((head, *size));
            } else {
                run.notes.push(format!(
                    "more than one profiler_info file; using {}",
                    run.files.profiler_info.as_deref().unwrap_or("")
                ));
            }
        } else if top_level && name == "profiler_metadata.json" {
            run.files.profiler_metadata = Some(path.clone());
            meta_head = Some((head, *size));
        } else if is_db_name(name) && (in_output || top_level) {
            run.files.db.push(path.clone());
        } else if is_msprof_db_name(name)
            && (in_output || top_level || is_raw_data_folder_name(parent(rel)))
        {
            // msprof leaves its own at the top of its PROF_* folder.
            run.files.msprof_db.push(path.clone());
        } else if (in_output || top_level) && MEMORY_FILES.contains(&name) {
            let slot = match name {
                "operator_memory.csv" | "memory_view_form.csv" => &mut run.files.operator_memory,
                "memory_record.csv" | "memory_view_line_chart.csv" => &mut run.files.memory_record,
                "npu_module_mem.csv" => &mut run.files.npu_module_mem,
                _ => &mut run.files.trace_view,
            };
            // ASCEND_PROFILER_OUTPUT is where torch_npu writes them; it wins over a loose copy.
            if slot.is_none() || in_output {
                if let Some(old) = slot.replace(path.clone()) {
                    run.notes
                        .push(format!("{name} found twice; using {path}, not {old}"));
                }
            } else if let Some(used) = slot.as_deref() {
                run.notes
                    .push(format!("{name} found twice; using {used}, not {path}"));
            }
        }
    }

    // Rank: the file name first, then the rank_id key, then the name of MindSpore's db export.
    let db_rank = run
        .files
        .msprof_db
        .iter()
        .find_map(|p| msprof_db_rank(file_name(p)));
    if let Some(info) = &run.files.profiler_info {
        if let Some(rank) = profiler_info_rank(file_name(info)) {
            run.rank = Some(rank);
            run.rank_source = "file-name";
        } else {
            match info_head.map(|(h, size)| json_object(h, size, info)) {
                Some(Ok((obj, bytes))) => match rank_id_value(obj.get("rank_id")) {
                    Some(Ok(rank)) => {
                        run.rank = Some(rank);
                        run.rank_source = "rank_id";
                    }
                    Some(Err(bad)) => run.notes.push(format!(
                        "{}: rank_id {bad} is not a rank number; rank unknown",
                        member_place(info, bytes, "rank_id")
                    )),
                    None => match db_rank {
                        Some(rank) => {
                            run.rank = Some(rank);
                            run.rank_source = "db-file-name";
                        }
                        None => run.notes.push(format!(
                            "{info} names no rank (single-card run); rank unknown"
                        )),
                    },
                },
                Some(Err(msg)) => run.notes.push(msg),
                None => {}
            }
        }
    } else if let Some(rank) = db_rank {
        run.rank = Some(rank);
        run.rank_source = "db-file-name";
    } else {
        run.notes
            .push("no profiler_info*.json in the run folder; rank unknown".to_string());
    }

    // Role: the metadata key first, then the folder tree.
    if let (Some(meta), Some((head, size))) = (&run.files.profiler_metadata, meta_head) {
        match json_object(head, size, meta) {
            Ok((obj, bytes)) => match obj.get("role") {
                Some(serde_json::Value::String(role)) if !role.trim().is_empty() => {
                    run.role = role.trim().to_string();
                    run.role_source = "metadata";
                }
                Some(serde_json::Value::String(_)) | None => {}
                Some(other) => run.notes.push(format!(
                    "{}: \"role\" is {}, not a string; role taken from the folder",
                    member_place(meta, bytes, "role"),
                    json_type(other)
                )),
            },
            Err(msg) => run.notes.push(msg),
        }
    }
    // Nearest ancestors above the run folder: the first step folder gives the step, the first
    // folder that is neither a run nor a step gives the role (verl: <save>/<step>/<role>/<run>).
    let ancestors: Vec<&str> = parent(root).split('/').filter(|c| !c.is_empty()).collect();
    let outer = ancestors.iter().rev().filter(|c| !is_run_folder_name(c));
    run.step = outer.clone().find_map(|c| step_number(c));
    if run.role_source == "none" {
        if let Some(role) = outer.clone().find(|c| step_number(c).is_none()) {
            run.role = role.to_string();
            run.role_source = "folder";
        }
    }

    // Raw data (PROF_*, FRAMEWORK) and no ASCEND_PROFILER_OUTPUT: the analysis never ran (verl's
    // default `analysis: False` leaves run folders like this).
    let raw = members.iter().any(|f| {
        let rel = f.path.strip_prefix(&prefix).unwrap_or(f.path);
        let top = rel.split('/').next().unwrap_or("");
        rel.contains('/') && (is_raw_data_folder_name(top) || top == "FRAMEWORK")
    });
    let analysed = members.iter().any(|f| {
        let rel = f.path.strip_prefix(&prefix).unwrap_or(f.path);
        rel.starts_with("ASCEND_PROFILER_OUTPUT/")
    });
    let framework_output = run.files.db.len()
        + usize::from(run.files.operator_memory.is_some())
        + usize::from(run.files.memory_record.is_some());
    if let (Some(db), 0) = (run.files.msprof_db.first(), framework_output) {
        run.notes.push(format!(
            "{db}: msprof's database layout (MindSpore's export_type=Db): read for CANN's GE \
             allocations and totals (NPU_OP_MEM, whose peak is the rank's), NPU_MEM and \
             NPU_MODULE_MEM; it has no framework allocator records and no call stacks (the \
             text export has them)"
        ));
    } else if !run.has_memory_files() && raw && !analysed {
        run.notes.push(format!(
            "raw profiler data only (PROF_* / FRAMEWORK, no ASCEND_PROFILER_OUTPUT): the analysis \
             never ran (verl's default `analysis: False` leaves run folders like this); run {} \
             first",
            analyse_call(run.framework, root)
        ));
    } else if run.files.db.is_empty()
        && run.files.operator_memory.is_none()
        && run.files.memory_record.is_none()
    {
        // A database export holds what the text files hold: a run with either is complete.
        run.notes.push(
            "no operator_memory.csv or memory_record.csv: profile with profile_memory=True, or run \
             torch_npu.profiler.profiler.analyse(<path>) if ASCEND_PROFILER_OUTPUT is missing"
                .to_string(),
        );
    }
    run
}

fn json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The top-level object of a profiler JSON file, with the file's bytes (to place a member in a
/// message); `Err` is the note that says why there is none.
fn json_object<'h>(
    head: &'h Head,
    size: u64,
    path: &str,
) -> Result<(serde_json::Map<String, serde_json::Value>, &'h [u8]), String> {
    if size > PROFILER_JSON_LIMIT as u64 {
        return Err(format!(
            "{path}: {size} bytes, more than the {PROFILER_JSON_LIMIT} bytes a profiler JSON file \
             may have (real ones are a few KiB); not read"
        ));
    }
    let bytes = match head {
        Head::Bytes(b) => b,
        Head::Unreadable(msg) => return Err(format!("{path}: cannot read: {msg}")),
        Head::NotRead => return Err(format!("{path}: not read")),
    };
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(map)) => Ok((map, bytes)),
        Ok(other) => Err(format!(
            "{}: expected a JSON object, found {}",
            place(path, bytes, skip_ws(bytes, 0)),
            json_type(&other)
        )),
        Err(e) => Err(format!(
            "{path}: invalid JSON at line {}, column {}: {}",
            e.line(),
            e.column(),
            e
        )),
    }
}

/// `path:line:column (byte N)` for the value of the top-level member `key` of the valid JSON
/// object `bytes` (the last such member, the one serde_json keeps), else `path` alone (a name
/// written with escapes is not looked for). The walk is the trace reader's lexer: real files are
/// a few KiB, and this runs only for a message.
fn member_place(path: &str, bytes: &[u8], key: &str) -> String {
    let mut at = None;
    let i = skip_ws(bytes, 0);
    if bytes.get(i) == Some(&b'{') {
        scan_object(bytes, i, &mut |k, s, _| {
            if k == key.as_bytes() {
                at = Some(s);
            }
        });
    }
    match at {
        Some(at) => place(path, bytes, at),
        None => path.to_string(),
    }
}

/// `path:line:column (byte N)` for byte `at` of `bytes`; the column counts bytes from 1, as
/// serde_json's messages do.
fn place(path: &str, bytes: &[u8], at: usize) -> String {
    let before = bytes.get(..at).unwrap_or(bytes);
    let line = 1 + memchr::memchr_iter(b'\n', before).count();
    let column = 1 + before.len()
        - before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
    format!("{path}:{line}:{column} (byte {at})")
}

fn rank_id_value(v: Option<&serde_json::Value>) -> Option<Result<u32, String>> {
    let v = v?;
    Some(match v {
        serde_json::Value::Number(n) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| n.to_string()),
        serde_json::Value::String(s) => s.trim().parse::<u32>().map_err(|_| format!("\"{s}\"")),
        serde_json::Value::Null => return None,
        other => Err(json_type(other).to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cann_summaries_are_told_by_their_names() {
        for name in [
            "operator_memory_0_1_20250109145043.csv",
            "memory_record_0.csv",
            "npu_mem_0_1.csv",
            "npu_module_mem_0_1.csv",
            "static_op_mem_0_1.csv",
        ] {
            assert!(is_cann_summary_name(name), "{name}");
        }
        // The framework's export (read, not named a summary) and names that only start alike.
        for name in [
            "operator_memory.csv",
            "operator_memory_.csv",
            "operator_memory_0.json",
            "npu_module_mem.csv",
        ] {
            assert!(!is_cann_summary_name(name), "{name}");
        }
    }

    #[test]
    fn msprof_layout_db_names() {
        for name in [
            "ascend_mindspore_profiler.db",
            "ascend_mindspore_profiler_0.db",
            "ascend_mindspore_profiler_15.db",
            "msprof_20250109145043.db",
        ] {
            assert!(is_msprof_db_name(name), "{name}");
        }
        for name in [
            "ascend_mindspore_profiler_.db",
            "ascend_mindspore_profiler_1x.db",
            "ascend_pytorch_profiler_0.db",
            "msprof_.db",
            "msprof_1.db-wal",
            "msprof.db",
        ] {
            assert!(!is_msprof_db_name(name), "{name}");
        }
        assert_eq!(msprof_db_rank("ascend_mindspore_profiler_15.db"), Some(15));
        assert_eq!(msprof_db_rank("ascend_mindspore_profiler.db"), None);
        assert_eq!(msprof_db_rank("msprof_20250109145043.db"), None);
    }

    #[test]
    fn run_names_parse_from_the_right() {
        let p =
            parse_run_name("localhost.local_domain_139247_20230628101435123_ascend_pt").unwrap();
        assert_eq!(p.worker.as_deref(), Some("localhost.local_domain"));
        assert_eq!(p.pid, Some(139247));
        assert_eq!(p.timestamp.as_deref(), Some("20230628101435123"));
        assert_eq!(p.framework, "pt");
        let legacy = parse_run_name("20260526_085155_ascend_pt").unwrap();
        assert_eq!(legacy.timestamp, None);
        assert_eq!(legacy.pid, None);
        assert!(parse_run_name("rank0_ascend").is_none());
        assert_eq!(parse_run_name("rank0_ascend_ms").unwrap().framework, "ms");
    }

    #[test]
    fn steps_and_profiler_info_names() {
        assert_eq!(step_number("step3"), Some(3));
        assert_eq!(step_number("Step_12"), Some(12));
        assert_eq!(step_number("7"), Some(7));
        assert_eq!(step_number("actor"), None);
        assert_eq!(step_number("step"), None);
        assert_eq!(profiler_info_rank("profiler_info_15.json"), Some(15));
        assert_eq!(profiler_info_rank("profiler_info.json"), None);
        assert_eq!(profiler_info_rank("profiler_info_x.json"), None);
    }
}
