//! The columnar SOMAS model: nodes, data tensors, control tensors, parameters, union groups,
//! contiguous lists, stream groups, merged blocks and the reused total.
//!
//! Every table is a struct of columns indexed by *row*. Rows are sorted by the dump's id, and when
//! the ids are dense (`0..n`, the normal case) row == id; otherwise lookups go through a binary
//! search. Cross references (a node's inputs, a union list) are stored as rows, already checked,
//! so analysis code never meets a dangling id. Names are interned once in [`Names`].

pub mod derive;

use crate::diag::Diagnostic;
use hashbrown::HashTable;
use serde::Serialize;
use std::hash::BuildHasher;

/// "No row": used in columns that may have no target (a tensor without an owner node).
pub const NONE: u32 = u32::MAX;

/// Bit set on a packed node input that refers to a parameter row instead of a tensor row.
pub const INPUT_PARAM: u32 = 1 << 31;

/// Interned names: each distinct name is stored once; ids are `u32`.
#[derive(Debug, Clone, Default)]
pub struct Names {
    arena: String,
    spans: Vec<(usize, usize)>,
    table: HashTable<u32>,
    /// Names that were not valid UTF-8 (stored with U+FFFD), counted for a warning.
    invalid_utf8: u64,
}

/// The hash function used for interning; fixed seed so parallel chunks hash alike.
pub(crate) fn name_hash(bytes: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5eed_50a5).hash_one(bytes)
}

impl Names {
    /// The name with id `id` (empty for an unknown id).
    pub fn get(&self, id: u32) -> &str {
        self.spans
            .get(id as usize)
            .and_then(|&(s, e)| self.arena.get(s..e))
            .unwrap_or("")
    }

    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when no name is stored.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The id of `name`, if it was interned.
    pub fn find(&self, name: &str) -> Option<u32> {
        let h = name_hash(name.as_bytes());
        self.table.find(h, |&id| self.get(id) == name).copied()
    }

    /// How many names interned were not valid UTF-8 (stored with U+FFFD).
    pub fn invalid_utf8(&self) -> u64 {
        self.invalid_utf8
    }

    /// Interns `bytes` (decoded as UTF-8, lossily) whose [`name_hash`] is `hash`.
    pub(crate) fn intern_hashed(&mut self, hash: u64, bytes: &[u8]) -> u32 {
        let Names {
            arena,
            spans,
            table,
            ..
        } = self;
        let found = table
            .find(hash, |&id| {
                spans
                    .get(id as usize)
                    .and_then(|&(s, e)| arena.as_bytes().get(s..e))
                    == Some(bytes)
            })
            .copied();
        if let Some(id) = found {
            return id;
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            // Stored (and so found and hashed) as its lossy text: the table's hashes must be
            // those of the stored bytes, and the same damaged name must intern once.
            self.invalid_utf8 += 1;
            let text = String::from_utf8_lossy(bytes).into_owned();
            return self.intern_hashed(name_hash(text.as_bytes()), text.as_bytes());
        };
        let start = arena.len();
        arena.push_str(text);
        let id = spans.len() as u32;
        spans.push((start, arena.len()));
        let rehash_arena = &*arena;
        let rehash_spans = &*spans;
        table.insert_unique(hash, id, |&other| {
            let bytes = rehash_spans
                .get(other as usize)
                .and_then(|&(s, e)| rehash_arena.as_bytes().get(s..e))
                .unwrap_or(b"");
            name_hash(bytes)
        });
        id
    }

    /// Makes room for `n` more names (avoids regrowing the table while interning).
    pub fn reserve(&mut self, n: usize) {
        let Names {
            arena,
            spans,
            table,
            ..
        } = self;
        spans.reserve(n);
        let (rehash_arena, rehash_spans) = (&*arena, &*spans);
        table.reserve(n, |&other| {
            let bytes = rehash_spans
                .get(other as usize)
                .and_then(|&(s, e)| rehash_arena.as_bytes().get(s..e))
                .unwrap_or(b"");
            name_hash(bytes)
        });
    }

    /// Interns `name`.
    pub fn intern(&mut self, name: &str) -> u32 {
        self.intern_hashed(name_hash(name.as_bytes()), name.as_bytes())
    }
}

/// Compressed rows: row `i` holds `items[offsets[i]..offsets[i+1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Csr {
    /// Row starts, one more than the number of rows.
    pub offsets: Vec<u32>,
    /// All items, row after row.
    pub items: Vec<u32>,
}

impl Default for Csr {
    fn default() -> Self {
        Csr {
            offsets: vec![0],
            items: Vec::new(),
        }
    }
}

impl Csr {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items of row `i` (empty for a row out of range).
    pub fn row(&self, i: usize) -> &[u32] {
        let s = self.offsets.get(i).copied().unwrap_or(0) as usize;
        let e = self.offsets.get(i + 1).copied().unwrap_or(0) as usize;
        self.items.get(s..e).unwrap_or(&[])
    }

    /// Closes the current row (items pushed since the last call belong to it).
    pub fn end_row(&mut self) {
        self.offsets.push(self.items.len() as u32);
    }

    /// Appends all rows of `other`.
    pub fn append(&mut self, other: &Csr) {
        let base = self.items.len() as u32;
        self.items.extend_from_slice(&other.items);
        self.offsets
            .extend(other.offsets.iter().skip(1).map(|o| o + base));
    }

    /// Iterates over the rows.
    pub fn rows(&self) -> impl Iterator<Item = &[u32]> {
        (0..self.len()).map(move |i| self.row(i))
    }

    /// Builds the reverse index: for each target in `0..targets`, the rows that list it (each row
    /// once per mention, in row order).
    pub fn reverse(&self, targets: usize, mut map: impl FnMut(u32) -> Option<u32>) -> Csr {
        let mut counts = vec![0u32; targets + 1];
        for row in self.rows() {
            for &it in row {
                if let Some(t) = map(it) {
                    if let Some(c) = counts.get_mut(t as usize + 1) {
                        *c += 1;
                    }
                }
            }
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut items = vec![0u32; counts.last().copied().unwrap_or(0) as usize];
        let mut fill = counts.clone();
        for (r, row) in self.rows().enumerate() {
            for &it in row {
                if let Some(t) = map(it) {
                    if let Some(pos) = fill.get_mut(t as usize) {
                        if let Some(slot) = items.get_mut(*pos as usize) {
                            *slot = r as u32;
                        }
                        *pos += 1;
                    }
                }
            }
        }
        Csr {
            offsets: counts,
            items,
        }
    }
}

/// Tensor type as printed in the dump (`TypeString`), covering the r1.x and v1.10+ enums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[repr(u8)]
pub enum TensorKind {
    /// `Common`: an output with consumers.
    Common,
    /// `Workspace`.
    Workspace,
    /// `OutputOnly`: an output nobody consumes.
    OutputOnly,
    /// `GraphOutput` (aligned 0 unless the device reuses graph outputs).
    GraphOutput,
    /// `GraphInput`: a ref output whose origin is a Parameter (aligned 0).
    GraphInput,
    /// `SummaryInput`.
    SummaryInput,
    /// `Union`: shares memory with the other members of its union group.
    Union,
    /// `Control` (only control tensors).
    Control,
    /// `Unknown`.
    Unknown,
    /// r1.x `GetNextOutput`.
    GetNextOutput,
    /// r1.x `RefNodeInput`.
    RefNodeInput,
    /// r1.x `RefNodeOutput`.
    RefNodeOutput,
    /// r1.0/1.1 `kGap`, printed as an empty string.
    Gap,
}

impl TensorKind {
    /// Parses a `TypeString`; `None` for a string no version prints.
    pub fn parse(b: &[u8]) -> Option<Self> {
        Some(match b {
            b"Common" => TensorKind::Common,
            b"Workspace" => TensorKind::Workspace,
            b"OutputOnly" => TensorKind::OutputOnly,
            b"GraphOutput" => TensorKind::GraphOutput,
            b"GraphInput" => TensorKind::GraphInput,
            b"SummaryInput" => TensorKind::SummaryInput,
            b"Union" => TensorKind::Union,
            b"Control" => TensorKind::Control,
            b"Unknown" => TensorKind::Unknown,
            b"GetNextOutput" => TensorKind::GetNextOutput,
            b"RefNodeInput" => TensorKind::RefNodeInput,
            b"RefNodeOutput" => TensorKind::RefNodeOutput,
            b"" => TensorKind::Gap,
            _ => return None,
        })
    }

    /// The string the dump prints.
    pub fn as_str(self) -> &'static str {
        match self {
            TensorKind::Common => "Common",
            TensorKind::Workspace => "Workspace",
            TensorKind::OutputOnly => "OutputOnly",
            TensorKind::GraphOutput => "GraphOutput",
            TensorKind::GraphInput => "GraphInput",
            TensorKind::SummaryInput => "SummaryInput",
            TensorKind::Union => "Union",
            TensorKind::Control => "Control",
            TensorKind::Unknown => "Unknown",
            TensorKind::GetNextOutput => "GetNextOutput",
            TensorKind::RefNodeInput => "RefNodeInput",
            TensorKind::RefNodeOutput => "RefNodeOutput",
            TensorKind::Gap => "",
        }
    }
}

/// Lifelong kind (`LifeLongType`: 0 none, 1 whole graph, 2 graph start to the tensor's end, 3 the
/// tensor's start to graph end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[repr(u8)]
pub enum Lifelong {
    /// Alive from `life_start` to `life_end`.
    None = 0,
    /// Alive over the whole graph.
    GraphAll = 1,
    /// Alive from the graph start to `life_end`.
    GraphStart = 2,
    /// Alive from `life_start` to the graph end.
    GraphEnd = 3,
}

impl Lifelong {
    /// Parses the v1.10+ `LifelongString`.
    pub fn parse(b: &[u8]) -> Option<Self> {
        Some(match b {
            b"LifeLongNone" => Lifelong::None,
            b"LifeLongGraphAll" => Lifelong::GraphAll,
            b"LifeLongGraphStart" => Lifelong::GraphStart,
            b"LifeLongGraphEnd" => Lifelong::GraphEnd,
            _ => return None,
        })
    }

    /// From the numeric enum value (offline log, cache JSON).
    pub fn from_number(v: u64) -> Option<Self> {
        Some(match v {
            0 => Lifelong::None,
            1 => Lifelong::GraphAll,
            2 => Lifelong::GraphStart,
            3 => Lifelong::GraphEnd,
            _ => return None,
        })
    }

    /// The v1.10+ string.
    pub fn as_str(self) -> &'static str {
        match self {
            Lifelong::None => "LifeLongNone",
            Lifelong::GraphAll => "LifeLongGraphAll",
            Lifelong::GraphStart => "LifeLongGraphStart",
            Lifelong::GraphEnd => "LifeLongGraphEnd",
        }
    }
}

/// Which kind of file the model was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DumpFamily {
    /// v1.10+ `SomasInfo()` dumps (`*_somas_tensor_offset_*.ir` and the stage dumps).
    SomasInfo,
    /// r1.x `SomasInfo()` dumps (`somas_*_info_*.ir`, `somas_allocate_info` with addresses).
    SomasInfoR1,
    /// r1.x `somas_mem_info_*.ir`.
    MemInfoR1,
    /// `*somas_offline_log_*.ir`.
    OfflineLog,
    /// `somas_meta/somas_graph_*.json` cache.
    CacheJson,
}

impl DumpFamily {
    /// Stable identifier (matches [`crate::somas::recognize::SomasFamily::id`] where both exist).
    pub fn id(self) -> &'static str {
        match self {
            DumpFamily::SomasInfo => "somas-info",
            DumpFamily::SomasInfoR1 => "somas-info-r1",
            DumpFamily::MemInfoR1 => "mem-info-r1",
            DumpFamily::OfflineLog => "offline-log",
            DumpFamily::CacheJson => "cache-json",
        }
    }
}

/// The detected format of a dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Format {
    /// Dump family.
    pub family: DumpFamily,
    /// MindSpore version range, detected from the whole content.
    pub version: String,
}

/// Parameter table (`%<n>P`): weights, data inputs and value nodes.
#[derive(Debug, Clone, Default)]
pub struct Params {
    /// Dump id.
    pub id: Vec<u32>,
    /// Size in bytes (input size of the consuming kernel).
    pub size: Vec<u64>,
    /// Source node name (interned).
    pub name: Vec<u32>,
    /// Output index of the source node.
    pub out_index: Vec<u32>,
    /// Device address (r1.x `start_addr`); empty when the dump has none.
    pub addr: Vec<u64>,
}

/// Data tensor table (`%<n>T` lines that are not control tensors).
#[derive(Debug, Clone, Default)]
pub struct Tensors {
    /// Dump id.
    pub id: Vec<u32>,
    /// Aligned size (what the solver places).
    pub aligned: Vec<u64>,
    /// Original size.
    pub original: Vec<u64>,
    /// Offset from the SOMAS base.
    pub offset: Vec<u64>,
    /// Real address (r1.x `addr` column, mem_info `start_addr`); empty when the dump has none.
    pub addr: Vec<u64>,
    /// Type string.
    pub kind: Vec<TensorKind>,
    /// Lifelong kind.
    pub lifelong: Vec<Lifelong>,
    /// `life_start` as printed (not widened).
    pub start: Vec<u32>,
    /// `life_end` as printed (not widened).
    pub end: Vec<u32>,
    /// Source node name as printed (interned).
    pub name: Vec<u32>,
    /// Byte offset of the tensor's line in the file.
    pub byte: Vec<u64>,
}

impl Tensors {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.id.len()
    }
    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}

/// Control tensor table (`%<n>CT`, or `%<n>T … Control` in v1.10).
#[derive(Debug, Clone, Default)]
pub struct Controls {
    /// Dump id.
    pub id: Vec<u32>,
    /// Source node index.
    pub start: Vec<u32>,
    /// Destination node index.
    pub end: Vec<u32>,
    /// Source node name (interned).
    pub name: Vec<u32>,
}

/// Node table (`$<n>` lines), sorted by execution index.
#[derive(Debug, Clone, Default)]
pub struct Nodes {
    /// Execution index (`$<n>`), the time axis of lifetimes.
    pub index: Vec<u32>,
    /// Name as printed (interned).
    pub name: Vec<u32>,
    /// Node type: 0 common, 1 communication.
    pub kind: Vec<u8>,
    /// Stream id.
    pub stream: Vec<u32>,
    /// Inputs in kernel order: tensor rows, or parameter rows with [`INPUT_PARAM`] set.
    pub inputs: Csr,
    /// Output tensor rows.
    pub outputs: Csr,
    /// Workspace tensor rows.
    pub workspace: Csr,
    /// Control input rows.
    pub ctrl_inputs: Csr,
    /// Control output rows.
    pub ctrl_outputs: Csr,
    /// Byte offset of the node's line in the file.
    pub byte: Vec<u64>,
}

impl Nodes {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.index.len()
    }
    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
    /// The row of the node with execution index `index`.
    pub fn row_of_index(&self, index: u32) -> Option<u32> {
        if let Some(&i) = self.index.get(index as usize) {
            if i == index {
                return Some(index);
            }
        }
        self.index.binary_search(&index).ok().map(|r| r as u32)
    }
}

/// Relations derived from the tables once, at load.
#[derive(Debug, Clone, Default)]
pub struct Derived {
    /// Owner node row of each tensor (the producer), or [`NONE`].
    pub owner: Vec<u32>,
    /// Position in the owner's `outputs[]` (or `workspace[]` for workspaces), or [`NONE`].
    pub out_index: Vec<u32>,
    /// True when the tensor is in its owner's `workspace[]`.
    pub is_workspace: Vec<bool>,
    /// For each tensor, the node rows that list it in `inputs[]`.
    pub consumers: Csr,
    /// For each parameter, the node rows that list it in `inputs[]`.
    pub param_consumers: Csr,
    /// Union group of each tensor (index into `groups`), or [`NONE`].
    pub union_group: Vec<u32>,
    /// Union groups after merging every union list (and r1.x ref-node list) by union-find; the
    /// first member is the head, the tensor the solver places.
    pub groups: Csr,
    /// Tensor is the first of an original contiguous list that carries the Ascend 512-byte gap.
    pub gap_head: Vec<bool>,
    /// Tensor is in some original contiguous list.
    pub in_contiguous: Vec<bool>,
    /// Node is an atomic-clean op (`AtomicAddrClean`, `MemSet`).
    pub clean_op: Vec<bool>,
}

/// A SOMAS memory plan as read from one dump.
#[derive(Debug, Clone)]
pub struct SomasModel {
    /// The file's display name.
    pub file: String,
    /// Detected family and version.
    pub format: Format,
    /// Interned names.
    pub names: Names,
    /// Parameters.
    pub params: Params,
    /// Data tensors.
    pub tensors: Tensors,
    /// Control tensors.
    pub controls: Controls,
    /// Nodes.
    pub nodes: Nodes,
    /// Union lists as printed (tensor rows).
    pub unions: Csr,
    /// "All Original Contiguous Tensors Info" (tensor rows); r1.x: derived from communication nodes.
    pub contiguous: Csr,
    /// "All Processed Contiguous Tensors Info" (tensor rows).
    pub contiguous_processed: Csr,
    /// Stream groups (stream ids).
    pub stream_groups: Csr,
    /// Merged blocks `(start_offset, size)` as printed (descending start).
    pub merged_blocks: Vec<(u64, u64)>,
    /// `Total Memory Size after reused`, when the dump has it.
    pub reused_total: Option<u64>,
    /// True when offsets are solved (false for stage dumps before solving and the offline log).
    pub placed: bool,
    /// Sizes are original sizes standing in for aligned ones (offline log).
    pub sizes_are_original: bool,
    /// Relations derived at load.
    pub derived: Derived,
    /// Warnings found while reading (errors stop the load instead).
    pub warnings: Vec<Diagnostic>,
    /// Facts the user should know about this format (what is missing, what was inferred).
    pub notes: Vec<String>,
}

impl SomasModel {
    /// An empty model for `file` in `format`.
    pub fn empty(file: &str, format: Format) -> Self {
        SomasModel {
            file: file.to_string(),
            format,
            names: Names::default(),
            params: Params::default(),
            tensors: Tensors::default(),
            controls: Controls::default(),
            nodes: Nodes::default(),
            unions: Csr::default(),
            contiguous: Csr::default(),
            contiguous_processed: Csr::default(),
            stream_groups: Csr::default(),
            merged_blocks: Vec::new(),
            reused_total: None,
            placed: true,
            sizes_are_original: false,
            derived: Derived::default(),
            warnings: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The row of tensor id `id`.
    pub fn tensor_row(&self, id: u32) -> Option<u32> {
        row_of(&self.tensors.id, id)
    }

    /// The row of parameter id `id`.
    pub fn param_row(&self, id: u32) -> Option<u32> {
        row_of(&self.params.id, id)
    }

    /// Name of node row `row`.
    pub fn node_name(&self, row: u32) -> &str {
        self.nodes
            .name
            .get(row as usize)
            .map_or("", |&n| self.names.get(n))
    }

    /// Source node name of tensor row `row`: the owner's name, else the name the tensor line prints.
    pub fn tensor_source_name(&self, row: u32) -> &str {
        match self.derived.owner.get(row as usize) {
            Some(&o) if o != NONE => self.node_name(o),
            _ => self
                .tensors
                .name
                .get(row as usize)
                .map_or("", |&n| self.names.get(n)),
        }
    }

    /// Finds a node by name (full name, or the text after the last `/`) or by execution index.
    pub fn find_node(&self, key: &str) -> Option<u32> {
        if let Some(id) = self.names.find(key) {
            if let Some(r) = self.nodes.name.iter().position(|&n| n == id) {
                return Some(r as u32);
            }
        }
        if let Some(r) =
            (0..self.nodes.len() as u32).find(|&r| split_name(self.node_name(r)) == key)
        {
            return Some(r);
        }
        let idx = key.trim().trim_start_matches('$').parse::<u32>().ok()?;
        self.nodes.row_of_index(idx)
    }

    /// Largest execution index: the last node, or the largest `life_end` when there are no nodes.
    pub fn max_index(&self) -> u32 {
        let from_nodes = self.nodes.index.last().copied();
        let from_tensors = self.tensors.end.iter().copied().max();
        match (from_nodes, from_tensors) {
            (Some(n), _) => n,
            (None, Some(t)) => t,
            (None, None) => 0,
        }
    }
}

/// Text after the last `/` (≤ v2.3 dumps print these "split names"); the whole name if it ends in `/`.
pub fn split_name(name: &str) -> &str {
    match name.rfind('/') {
        Some(i) if i + 1 < name.len() => &name[i + 1..],
        _ => name,
    }
}

/// Row of `id` in an id column sorted ascending (dense fast path first).
pub fn row_of(ids: &[u32], id: u32) -> Option<u32> {
    if ids.get(id as usize) == Some(&id) {
        return Some(id);
    }
    ids.binary_search(&id).ok().map(|r| r as u32)
}

/// True for atomic-clean ops (`AtomicAddrClean`, v2.4+ `MemSet`), which list as inputs the tensors
/// a later node produces.
pub fn is_clean_op(name: &str) -> bool {
    let n = split_name(name);
    n.starts_with("AtomicAddrClean") || n.starts_with("MemSet")
}
