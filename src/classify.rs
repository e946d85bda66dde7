//! Input classification: what did the user give us?
//!
//! Given a flat list of files (relative path and size, as a browser drop or a directory walk yields
//! them) and the first bytes of the files that need a look, this module groups the files into
//! *units*: SOMAS dumps, task-info files, torch_npu run folders, and unknown files with the reason.
//! It is a pure function of its inputs, so the CLI (`memlens inspect`) and the page give the same
//! answer by construction.
//!
//! Two phases, because a browser `File` can only be read on the worker that owns it:
//! 1. [`head_request`] says how many leading bytes of each file classification needs;
//! 2. [`classify`] takes those bytes ([`Head`]) and builds the units, in parallel over units.

use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// One input file: its path relative to what the user dropped or named (`/`-separated), and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// Relative path, `/`-separated, including the dropped folder's own name.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// The leading bytes of a file, as far as classification asked for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// Classification did not need this file's content.
    NotRead,
    /// The first bytes (possibly the whole file).
    Bytes(Vec<u8>),
    /// The file could not be read; the message says why.
    Unreadable(String),
}

/// Bytes read from a file whose content we sniff (SOMAS dumps and unknown files).
pub const SNIFF_BYTES: usize = 64 << 10;
/// Largest `profiler_info*.json` / `profiler_metadata.json` read whole (real ones are a few KiB).
pub const PROFILER_JSON_LIMIT: usize = 4 << 20;

/// The torch_npu files a memory analysis reads, by file name.
pub const ASCEND_MEMORY_FILES: [&str; 4] = [
    "operator_memory.csv",
    "memory_record.csv",
    "npu_module_mem.csv",
    "trace_view.json",
];

/// What a unit is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Unit {
    /// A MindSpore SOMAS memory dump.
    Somas(SomasFile),
    /// A MindSpore `task_info_graph_*.ir` file (final device addresses).
    TaskInfo(SomasFile),
    /// A torch_npu (or MindSpore) profiler run folder (kind `ascend-run`, its name before the
    /// module was called `profiler`, kept for the page and for scripts reading `--json`).
    #[serde(rename = "ascend-run")]
    ProfilerRun(Box<ProfilerRun>),
    /// Anything else, with the reason.
    Unknown(UnknownFile),
}

impl Unit {
    /// The unit's path (a file, or the run folder).
    pub fn path(&self) -> &str {
        match self {
            Unit::Somas(s) | Unit::TaskInfo(s) => &s.path,
            Unit::ProfilerRun(r) => &r.path,
            Unit::Unknown(u) => &u.path,
        }
    }

    /// The stable kind name used in JSON and in the page (`somas`, `task-info`, `ascend-run`, `unknown`).
    pub fn kind(&self) -> &'static str {
        match self {
            Unit::Somas(_) => "somas",
            Unit::TaskInfo(_) => "task-info",
            Unit::ProfilerRun(_) => "ascend-run",
            Unit::Unknown(_) => "unknown",
        }
    }
}

/// A SOMAS dump or task-info file and the format detected from its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SomasFile {
    /// Relative path of the file.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Dump family, detected from the header lines (not the file name).
    pub family: SomasFamily,
    /// MindSpore version range the content matches, as far as the first bytes tell.
    pub version: String,
    /// Dump stage from the file name (`tensor_offset`, `pre_processed_info`, …), if it has a standard name.
    pub stage: Option<String>,
    /// Device prefix from the file name (`Ascend`, `GPU`, `CPU`, `SOMAS`), if any.
    pub device: Option<String>,
    /// Graph id from the file name, if any.
    pub graph_id: Option<u32>,
}

/// The SOMAS dump families, told apart by their first lines (`docs/formats-somas.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SomasFamily {
    /// `SomasInfo()` of v1.10 and later (`*_somas_tensor_offset_*.ir` and the stage dumps).
    SomasInfo,
    /// `SomasInfo()` of r1.x (`somas_*_info_*.ir`, incl. `somas_allocate_info` with addresses).
    SomasInfoR1,
    /// r1.x `somas_mem_info_*.ir`.
    MemInfoR1,
    /// `*somas_offline_log_*.ir`.
    OfflineLog,
    /// `task_info_graph_*.ir`.
    TaskInfo,
}

impl SomasFamily {
    /// Stable identifier, as serialised.
    pub fn id(self) -> &'static str {
        match self {
            SomasFamily::SomasInfo => "somas-info",
            SomasFamily::SomasInfoR1 => "somas-info-r1",
            SomasFamily::MemInfoR1 => "mem-info-r1",
            SomasFamily::OfflineLog => "offline-log",
            SomasFamily::TaskInfo => "task-info",
        }
    }
}

/// A torch_npu / MindSpore profiler run folder (`*_ascend_pt`, `*_ascend_ms`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfilerRun {
    /// Relative path of the run folder.
    pub path: String,
    /// Rank, from `profiler_info_{rank}.json` (file name first, then its `rank_id` key); `None` = unknown.
    pub rank: Option<u32>,
    /// Where the rank came from: `file-name`, `rank_id`, or `none`.
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
}

/// A file memlens does not use, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownFile {
    /// Relative path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Why it is not used, in words.
    pub reason: String,
}

/// The result of classification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Inventory {
    /// Units sorted by path.
    pub units: Vec<Unit>,
    /// Number of input files.
    pub files: u64,
    /// Total input bytes.
    pub bytes: u64,
}

/// Normalises a path: `\` → `/`, no leading `./` or `/`, no empty components.
pub fn normalize_path(path: &str) -> String {
    path.replace('\\', "/")
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
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

fn is_archive_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".zip", ".tar", ".tar.gz", ".tgz"]
        .iter()
        .any(|ext| lower.ends_with(ext))
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
    // Folders that directly hold profiler_info*.json or a memory file.
    let mut dir = parent(path);
    loop {
        if extra_roots.contains_key(dir) {
            return Some(dir.to_string());
        }
        if dir.is_empty() {
            return None;
        }
        dir = parent(dir);
    }
}

/// How many leading bytes of `entry` classification needs (0: none).
pub fn head_request(entry: &Entry) -> usize {
    let path = normalize_path(&entry.path);
    let name = file_name(&path);
    if is_profiler_info_name(name) || name == "profiler_metadata.json" {
        return PROFILER_JSON_LIMIT;
    }
    if in_named_run(&path) || ASCEND_MEMORY_FILES.contains(&name) || is_db_name(name) {
        return 0;
    }
    if is_archive_name(name) || path.split('/').any(|c| c == "ASCEND_PROFILER_OUTPUT") {
        return 0;
    }
    SNIFF_BYTES
}

fn in_named_run(path: &str) -> bool {
    let comps: Vec<&str> = path.split('/').collect();
    comps[..comps.len().saturating_sub(1)]
        .iter()
        .any(|c| is_run_folder_name(c))
}

/// Classifies `entries`; `heads[i]` holds what [`head_request`] asked for `entries[i]`.
///
/// Missing heads (a shorter `heads` slice) count as [`Head::NotRead`].
pub fn classify(entries: &[Entry], heads: &[Head]) -> Inventory {
    let not_read = Head::NotRead;
    let files: Vec<(String, u64, &Head)> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            (
                normalize_path(&e.path),
                e.size,
                heads.get(i).unwrap_or(&not_read),
            )
        })
        .collect();

    // Folders that are run roots because they directly hold profiler_info*.json or memory files.
    let mut extra_roots = BTreeMap::new();
    for (path, _, _) in &files {
        let name = file_name(path);
        if is_profiler_info_name(name)
            || ASCEND_MEMORY_FILES.contains(&name)
            || is_db_name(name)
            || name == "profiler_metadata.json"
        {
            extra_roots.insert(parent(path).to_string(), ());
        }
    }

    let mut runs: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut loose: Vec<usize> = Vec::new();
    for (i, (path, _, _)) in files.iter().enumerate() {
        match run_root_of(path, &extra_roots) {
            Some(root) => runs.entry(root).or_default().push(i),
            None => loose.push(i),
        }
    }

    let mut units: Vec<Unit> = runs
        .into_par_iter()
        .map(|(root, members)| Unit::ProfilerRun(Box::new(build_run(&root, &members, &files))))
        .collect();
    units.par_extend(loose.into_par_iter().map(|i| {
        let (path, size, head) = &files[i];
        classify_loose(path, *size, head)
    }));
    units.sort_by(|a, b| a.path().cmp(b.path()).then(a.kind().cmp(b.kind())));

    Inventory {
        files: files.len() as u64,
        bytes: files.iter().map(|f| f.1).sum(),
        units,
    }
}

fn build_run(root: &str, members: &[usize], files: &[(String, u64, &Head)]) -> ProfilerRun {
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
        bytes: members.iter().map(|&i| files[i].1).sum(),
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
    let mut sorted: Vec<usize> = members.to_vec();
    sorted.sort_by(|&a, &b| files[a].0.cmp(&files[b].0));
    for &i in &sorted {
        let (path, size, head) = &files[i];
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
        } else if (in_output || top_level) && ASCEND_MEMORY_FILES.contains(&name) {
            let slot = match name {
                "operator_memory.csv" => &mut run.files.operator_memory,
                "memory_record.csv" => &mut run.files.memory_record,
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

    // Rank: the file name first, then the rank_id key.
    if let Some(info) = &run.files.profiler_info {
        if let Some(rank) = profiler_info_rank(file_name(info)) {
            run.rank = Some(rank);
            run.rank_source = "file-name";
        } else {
            match info_head.map(|(h, size)| json_object(h, size, info)) {
                Some(Ok(obj)) => match rank_id_value(obj.get("rank_id")) {
                    Some(Ok(rank)) => {
                        run.rank = Some(rank);
                        run.rank_source = "rank_id";
                    }
                    Some(Err(bad)) => run.notes.push(format!(
                        "{info}: rank_id {bad} is not a rank number; rank unknown"
                    )),
                    None => run.notes.push(format!(
                        "{info} names no rank (single-card run); rank unknown"
                    )),
                },
                Some(Err(msg)) => run.notes.push(msg),
                None => {}
            }
        }
    } else {
        run.notes
            .push("no profiler_info*.json in the run folder; rank unknown".to_string());
    }

    // Role: the metadata key first, then the folder tree.
    if let (Some(meta), Some((head, size))) = (&run.files.profiler_metadata, meta_head) {
        match json_object(head, size, meta) {
            Ok(obj) => match obj.get("role") {
                Some(serde_json::Value::String(role)) if !role.trim().is_empty() => {
                    run.role = role.trim().to_string();
                    run.role_source = "metadata";
                }
                Some(serde_json::Value::String(_)) | None => {}
                Some(other) => run.notes.push(format!(
                    "{meta}: \"role\" is {}, not a string; role taken from the folder",
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

    // A database export holds what the text files hold: a run with either is complete.
    if run.files.db.is_empty()
        && run.files.operator_memory.is_none()
        && run.files.memory_record.is_none()
    {
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

fn json_object(
    head: &Head,
    size: u64,
    path: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
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
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "{path}: expected a JSON object, found {}",
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

/// Splits a SOMAS-style file name `[<Device>_]somas_<stage>_<graph>.ir` into its parts.
fn somas_name_parts(name: &str) -> (Option<String>, Option<String>, Option<u32>) {
    let stem = name.strip_suffix(".ir").unwrap_or(name);
    let Some(pos) = stem.find("somas_") else {
        return (None, None, None);
    };
    let device = stem[..pos]
        .strip_suffix('_')
        .map(str::to_string)
        .filter(|d| !d.is_empty());
    let rest = &stem[pos + "somas_".len()..];
    // The graph id is the last `_<digits>` group; anything after it (e.g. `.v1_10`) is a suffix.
    let main = rest.split('.').next().unwrap_or(rest);
    let (stage, graph) = match main.rfind('_') {
        Some(i) if main[i + 1..].bytes().all(|b| b.is_ascii_digit()) && i + 1 < main.len() => {
            (&main[..i], main[i + 1..].parse().ok())
        }
        _ => (main, None),
    };
    (
        device,
        Some(stage.to_string()).filter(|s| !s.is_empty()),
        graph,
    )
}

fn task_info_graph_id(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(".ir").unwrap_or(name);
    let rest = stem.strip_prefix("task_info_graph_")?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// What the first bytes of a text file say about its SOMAS family and version.
pub fn sniff_somas(head: &[u8]) -> Option<(SomasFamily, String)> {
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start_matches(['\n', '\r', ' ']);
    let first = trimmed.lines().next().unwrap_or("");
    if first.starts_with("op_name:") {
        let version = if text.contains("-NonTask\n") {
            "2.0-2.2"
        } else {
            "r1.x-2.2"
        };
        return Some((SomasFamily::TaskInfo, version.to_string()));
    }
    if first.starts_with("mem_id:\tstart_offset:") {
        return Some((SomasFamily::MemInfoR1, "r1.x".to_string()));
    }
    if first.starts_with("Somas EDGE")
        || first.starts_with("Somas CONTIGUOUS")
        || first.starts_with("Somas GROUP")
    {
        return Some((SomasFamily::OfflineLog, "r1.x-2.x".to_string()));
    }
    let mut lines = trimmed.lines().map(|l| l.trim_end_matches('\r'));
    let mut family = None;
    for line in lines.by_ref().take(8) {
        if line.starts_with("index:\tsize:\tstart_addr:")
            || line.starts_with("index:\tsize:\treal_size:")
        {
            family = Some(SomasFamily::SomasInfoR1);
            break;
        }
        if line.starts_with("index:\tsize:\tsource node name:")
            || line.starts_with("index:\taligned_size:")
        {
            family = Some(SomasFamily::SomasInfo);
            break;
        }
    }
    match family? {
        SomasFamily::SomasInfoR1 => Some((SomasFamily::SomasInfoR1, "r1.x".to_string())),
        _ => Some((SomasFamily::SomasInfo, somas_info_version(&text))),
    }
}

/// Version of a v1.10+ SomasInfo dump from what its first bytes show: a `/` in tensor source names
/// means v2.4+, `%nCT` control tensors v2.0–2.3, `%nT … Control` tensors v1.10.
fn somas_info_version(text: &str) -> String {
    let mut in_tensors = false;
    let mut slash_names = false;
    let mut ct = false;
    let mut t_control = false;
    let mut seen_tensor = false;
    for line in text.lines() {
        if line.starts_with("All Tensors:") {
            in_tensors = true;
            continue;
        }
        if line.starts_with("All Nodes:") {
            in_tensors = false;
            continue;
        }
        if !in_tensors || !line.starts_with('%') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() < 9 {
            continue; // possibly cut off at the end of the head
        }
        seen_tensor = true;
        if fields[0].ends_with("CT") {
            ct = true;
        } else if fields[4] == "Control" {
            t_control = true;
        }
        if fields[8].contains('/') {
            slash_names = true;
        }
    }
    if slash_names {
        "v2.4+".to_string()
    } else if ct {
        "v2.0-2.3".to_string()
    } else if t_control {
        "v1.10".to_string()
    } else if seen_tensor {
        "v1.10-2.3".to_string()
    } else {
        "v1.10+".to_string()
    }
}

fn classify_loose(path: &str, size: u64, head: &Head) -> Unit {
    let name = file_name(path);
    let unknown = |reason: String| {
        Unit::Unknown(UnknownFile {
            path: path.to_string(),
            size,
            reason,
        })
    };
    if is_archive_name(name) {
        return unknown(
            "archive that could not be expanded (see the warnings), or given to classify() \
             without going through profiler::InputSet, which expands archives"
                .to_string(),
        );
    }
    let bytes = match head {
        Head::Bytes(b) => b,
        Head::Unreadable(msg) => return unknown(format!("cannot be read: {msg}")),
        Head::NotRead => return unknown("not read".to_string()),
    };
    if size == 0 || bytes.is_empty() {
        return unknown("empty file (0 bytes)".to_string());
    }
    if bytes.contains(&0) {
        return unknown(
            "binary file: not a SOMAS dump, task-info file or torch_npu run file".to_string(),
        );
    }
    if let Some((family, version)) = sniff_somas(bytes) {
        let (device, stage, graph_id) = if family == SomasFamily::TaskInfo {
            (None, None, task_info_graph_id(name))
        } else {
            somas_name_parts(name)
        };
        let file = SomasFile {
            path: path.to_string(),
            size,
            family,
            version,
            stage,
            device,
            graph_id,
        };
        return if family == SomasFamily::TaskInfo {
            Unit::TaskInfo(file)
        } else {
            Unit::Somas(file)
        };
    }
    let text = String::from_utf8_lossy(bytes);
    let first_line: String = text
        .trim_start()
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(60)
        .collect();
    if name.contains("somas_solver")
        || name.contains("somas_tensor_relation")
        || first_line.starts_with("T ")
    {
        return unknown(
            "SOMAS solver log: not a memory plan; open the *_somas_tensor_offset_*.ir dump"
                .to_string(),
        );
    }
    if name.starts_with("somas_graph") && name.ends_with(".json") {
        return unknown(
            "SOMAS cache file: open the *_somas_tensor_offset_*.ir dump instead".to_string(),
        );
    }
    if name.ends_with(".ir") {
        return unknown(format!(
            "a .ir file without a SOMAS or task-info header (first line: \"{first_line}\")"
        ));
    }
    unknown("not a SOMAS dump, task-info file or file of a torch_npu run folder".to_string())
}

/// Reads what [`head_request`] asks of one file from `source`.
pub fn read_head(source: &dyn crate::source::Source, want: usize) -> Head {
    if want == 0 {
        return Head::NotRead;
    }
    match source.read_range(0, want) {
        Ok(bytes) => Head::Bytes(bytes),
        Err(e) => Head::Unreadable(e.message),
    }
}

/// Lists and classifies files and folders on disk (native front ends). Archives (`.zip`, `.tar`,
/// `.tar.gz`) are expanded: their members appear under `<archive path>/…`.
#[cfg(not(target_arch = "wasm32"))]
pub fn classify_paths(roots: &[std::path::PathBuf]) -> Inventory {
    crate::profiler::InputSet::from_paths(roots).classify()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn somas_file_names_split_into_device_stage_graph() {
        assert_eq!(
            somas_name_parts("Ascend_somas_tensor_offset_1.ir"),
            (Some("Ascend".into()), Some("tensor_offset".into()), Some(1))
        );
        assert_eq!(
            somas_name_parts("somas_allocate_info_1.r1.ir"),
            (None, Some("allocate_info".into()), Some(1))
        );
        assert_eq!(task_info_graph_id("task_info_graph_12.ir"), Some(12));
    }
}
