//! Recognising SOMAS inputs: memory-plan dumps of every family and `task_info_graph_*.ir` files,
//! by their first bytes (names vary by version and device; the headers do not lie).

use crate::input::classify::{FileView, Inventory, Recognizer, Unit, UnitBody};
use crate::somas::parse::cache_json;
use serde::Serialize;

/// Bytes read from a file whose content is sniffed.
pub const SNIFF_BYTES: usize = 64 << 10;

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
    /// The compile cache `somas_meta/somas_graph_*.json`: solved tensors without nodes or names.
    CacheJson,
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
            SomasFamily::CacheJson => "cache-json",
        }
    }
}

impl UnitBody for SomasFile {
    /// `somas` for a memory plan, `task-info` for a task-info file.
    fn kind(&self) -> &'static str {
        if self.family == SomasFamily::TaskInfo {
            "task-info"
        } else {
            "somas"
        }
    }
    fn path(&self) -> &str {
        &self.path
    }
    fn summary(&self) -> String {
        format!("{} {}", self.family.id(), self.version)
    }
    /// A task-info file is read with its dump, not on its own.
    fn analysable(&self) -> bool {
        self.family != SomasFamily::TaskInfo
    }
    fn alone(&self) -> Option<String> {
        if self.family != SomasFamily::TaskInfo {
            return None;
        }
        let graph = match self.graph_id {
            Some(g) => format!("graph {g}, such as Ascend_somas_tensor_offset_{g}.ir"),
            None => "its graph".to_string(),
        };
        Some(format!(
            "SOMAS task-info file without its memory-plan dump: it is read only with the dump of \
             {graph}; give the two together"
        ))
    }
}

/// The task-info file of the same graph as `dump` among `files`: the first `task_info_graph_<N>`
/// whose graph id is the dump's (none when the dump's name carries no graph id).
pub fn task_info_for<'a>(dump: &SomasFile, files: &[&'a SomasFile]) -> Option<&'a SomasFile> {
    let graph = dump.graph_id?;
    files
        .iter()
        .copied()
        .find(|f| f.family == SomasFamily::TaskInfo && f.graph_id == Some(graph))
}

/// The task-info file the classification of `inventory` paired with `dump` ([`Dumps`]'s
/// [`Recognizer::used_with`], from [`task_info_for`]): what is read with the dump, so that what
/// is read and what is listed as not analysed agree.
pub fn task_info_in<'a>(inventory: &'a Inventory, dump: &SomasFile) -> Option<&'a SomasFile> {
    let path = inventory.used_beside(&dump.path).next()?;
    inventory.units_of::<SomasFile>().find(|f| f.path == path)
}

/// The recognizer of SOMAS dumps and task-info files (loose files, by their first bytes).
pub struct Dumps;

impl Recognizer for Dumps {
    fn describes(&self) -> &'static [&'static str] {
        &["a SOMAS dump", "a task-info file"]
    }

    fn looks_for(&self) -> &'static [&'static str] {
        &["MindSpore SOMAS dumps (`*somas*.ir`, told by their first lines)"]
    }

    fn loose_head(&self, _path: &str, _size: u64) -> usize {
        SNIFF_BYTES
    }

    /// Each dump's task-info file ([`task_info_for`]): what `memlens PATH...` and the page's
    /// SOMAS tab read with it.
    fn used_with(&self, units: &[Unit]) -> Vec<(usize, usize)> {
        let files: Vec<(usize, &SomasFile)> = units
            .iter()
            .enumerate()
            .filter_map(|(i, u)| Some((i, u.get::<SomasFile>()?)))
            .collect();
        let refs: Vec<&SomasFile> = files.iter().map(|(_, f)| *f).collect();
        files
            .iter()
            .filter(|(_, f)| f.family != SomasFamily::TaskInfo)
            .filter_map(|(main, dump)| {
                let task = task_info_for(dump, &refs)?;
                let (used, _) = files.iter().find(|(_, f)| std::ptr::eq(*f, task))?;
                Some((*used, *main))
            })
            .collect()
    }

    fn recognize(&self, file: &FileView) -> Option<Unit> {
        let bytes = file.head.bytes()?;
        if bytes.contains(&0) {
            return None;
        }
        let name = file.name();
        // The cache JSON is read (tensors and offsets, no nodes): a dump, so the Inputs tab and
        // the SOMAS tab agree about it. Its version is what the parse tells (`reused_memory_size`
        // may come after the head), so the head leaves it open.
        let (family, version) = if is_cache_name(name) && cache_json::looks_like(bytes) {
            (SomasFamily::CacheJson, String::new())
        } else {
            sniff_somas(bytes)?
        };
        let (device, stage, graph_id) = if family == SomasFamily::TaskInfo {
            (None, None, task_info_graph_id(name))
        } else if family == SomasFamily::CacheJson {
            (None, Some("cache".to_string()), cache_graph_id(name))
        } else {
            somas_name_parts(name)
        };
        Some(Unit::new(SomasFile {
            path: file.path.to_string(),
            size: file.size,
            family,
            version,
            stage,
            device,
            graph_id,
        }))
    }

    fn explain(&self, file: &FileView) -> Option<String> {
        let name = file.name();
        let head = file.head.bytes()?;
        let start = head
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(head.len());
        let rest = head.get(start..).unwrap_or(b"");
        let line = rest.split(|b| *b == b'\n').next().unwrap_or(b"");
        // A line with no end in the head goes on in the file: the quote counts the bytes after
        // the head, so that it does not look like the whole line.
        let after = if line.len() == rest.len() {
            file.size.saturating_sub(head.len() as u64)
        } else {
            0
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if name.contains("somas_solver")
            || name.contains("somas_tensor_relation")
            || line.starts_with(b"T ")
        {
            return Some(
                "SOMAS solver log: not a memory plan; open the *_somas_tensor_offset_*.ir dump"
                    .to_string(),
            );
        }
        if is_cache_name(name) {
            return Some(
                "a somas_graph_*.json file that is not a SOMAS cache (expected a JSON object with \"hash_id\" and \"tensors\")"
                    .to_string(),
            );
        }
        if name.ends_with(".ir") {
            return Some(format!(
                "a .ir file without a SOMAS or task-info header (first line: {})",
                crate::quote::quote_part(line, crate::quote::SHORT, after)
            ));
        }
        None
    }
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

/// True for a SOMAS compile-cache file name: `somas_graph_<G>_<hash>.json` (r1.2 wrote
/// `somas_graph<G>_<hash>.json`).
fn is_cache_name(name: &str) -> bool {
    name.starts_with("somas_graph") && name.ends_with(".json")
}

/// The graph id of a cache file name (`somas_graph_1_123.json` and `somas_graph1_123.json` → 1).
fn cache_graph_id(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("somas_graph")?;
    let rest = rest.strip_prefix('_').unwrap_or(rest);
    let digits: &str = rest.split('_').next()?;
    digits.parse().ok()
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(cache_graph_id("somas_graph_1_1234567890.json"), Some(1));
        assert_eq!(cache_graph_id("somas_graph12_99.json"), Some(12));
        assert_eq!(cache_graph_id("somas_graph_x.json"), None);
    }
}
