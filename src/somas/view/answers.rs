//! The answers to the SOMAS views: serde types sent as JSON, and the [`Bulk`] ones sent as typed
//! arrays.

use crate::bulk::{Bulk, Field};
use serde::Serialize;

/// What the views need besides the summary.
#[derive(Debug, Clone, Serialize)]
pub struct Info {
    /// Highest execution index.
    pub max_index: u32,
    /// Extent of the layout (index × offset), when anything is placed.
    pub layout: Option<Extent>,
    /// Rectangles in the layout.
    pub rects: usize,
    /// Bytes reused.
    pub reused_bytes: u64,
    /// Static bytes (lifelong tensors, parameters).
    pub static_bytes: u64,
    /// Base address of the plan.
    pub base_address: u64,
    /// Where the base address came from.
    pub base_source: &'static str,
    /// A task-info file was opened with the dump.
    pub has_task: bool,
    /// Offsets are solved (tensors placed).
    pub placed: bool,
    /// Execution index of the peak.
    pub peak_index: Option<u32>,
    /// Execution index of the node owning the highest address.
    pub max_address_node_index: Option<u32>,
    /// Names of the layout classes of [`Rects::cls`].
    pub legend: &'static [&'static str],
    /// How long reading, parsing and analysing took (ms).
    pub timings: Timings,
    /// `[first shared index, lowest shared offset, tensor a, tensor b]` per conflict (first
    /// 2000), so conflicts smaller than a pixel can be marked.
    pub conflict_marks: Vec<[u64; 4]>,
    /// The SOMAS address range.
    pub somas_range: Option<[u64; 2]>,
    /// The parameters' address range and total.
    pub param_range: Option<[u64; 3]>,
}

/// A rectangle of the layout's extent.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Extent {
    /// Left.
    pub x0: f64,
    /// Right.
    pub x1: f64,
    /// Bottom.
    pub y0: f64,
    /// Top.
    pub y1: f64,
}

/// Where opening the plan spent its time (ms, by the front end's clock).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Timings {
    /// Reading the files.
    pub read_ms: f64,
    /// Parsing them.
    pub parse_ms: f64,
    /// Analysing.
    pub analyse_ms: f64,
}

/// The node at an execution index and the curves there.
#[derive(Debug, Clone, Serialize)]
pub struct NodeAt<'a> {
    /// Execution index.
    pub index: u32,
    /// The node's name (`null` when no node has that index).
    pub name: Option<&'a str>,
    /// Its stream.
    pub stream: Option<u32>,
    /// Bytes in use there.
    pub in_use: u64,
    /// Total bytes there.
    pub total: u64,
    /// Tensors alive there.
    pub alive: u32,
    /// Static bytes.
    pub r#static: u64,
}

/// One thing a search text names.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target<'a> {
    /// A node.
    Node {
        /// Execution index.
        index: Option<u32>,
        /// Name.
        name: &'a str,
    },
    /// A data tensor.
    Tensor {
        /// Dump id.
        id: u32,
    },
    /// An address (hex).
    Address {
        /// The address.
        address: String,
    },
    /// An address range (hex).
    Range {
        /// Start.
        start: String,
        /// End.
        end: String,
    },
}

/// The answer to a search: targets, or why the text names nothing.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Search<'a> {
    /// What the text names.
    Found {
        /// The targets.
        targets: Vec<Target<'a>>,
    },
    /// Why it names nothing.
    Error {
        /// The message.
        error: String,
    },
}

/// The answer to a table query.
#[derive(Debug, Clone, Serialize)]
pub struct TableAnswer<'a> {
    /// Rows matching.
    pub total: usize,
    /// The shown columns (name and display kind), in order.
    pub columns: Vec<&'a crate::table::ColumnSpec>,
}

/// The in-use and total curves over execution indices, reduced to pixel columns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Curves {
    /// First index covered.
    pub x_start: f64,
    /// End of the indices covered.
    pub x_end: f64,
    /// Columns.
    pub columns: f64,
    /// In-use bytes: least per column.
    pub use_min: Vec<f64>,
    /// In-use bytes: most per column.
    pub use_max: Vec<f64>,
    /// Where in each column the most is reached.
    pub use_argmax: Vec<f64>,
    /// Total bytes: least per column.
    pub total_min: Vec<f64>,
    /// Total bytes: most per column.
    pub total_max: Vec<f64>,
    /// Tensors alive: most per column.
    pub alive_max: Vec<f64>,
    /// Columns holding an index.
    pub defined: Vec<u8>,
}

impl Bulk for Curves {
    fn fields(&self) -> Vec<(&'static str, Field<'_>)> {
        vec![
            ("x_start", Field::Num(self.x_start)),
            ("x_end", Field::Num(self.x_end)),
            ("columns", Field::Num(self.columns)),
            ("use_min", Field::F64(&self.use_min)),
            ("use_max", Field::F64(&self.use_max)),
            ("use_argmax", Field::F64(&self.use_argmax)),
            ("total_min", Field::F64(&self.total_min)),
            ("total_max", Field::F64(&self.total_max)),
            ("alive_max", Field::F64(&self.alive_max)),
            ("defined", Field::U8(&self.defined)),
        ]
    }
}

/// The tensor rectangles visible in a viewport, in pixels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rects {
    /// Left edges.
    pub x: Vec<f32>,
    /// Top edges.
    pub y: Vec<f32>,
    /// Widths.
    pub w: Vec<f32>,
    /// Heights.
    pub h: Vec<f32>,
    /// Layout classes (names in [`Info::legend`]).
    pub cls: Vec<u8>,
    /// Tensor ids; `u32::MAX` for runs merging sub-pixel tensors.
    pub id: Vec<u32>,
    /// Tensors in the viewport.
    pub visible: f64,
    /// Drawn one by one.
    pub individual: f64,
    /// Merged into runs.
    pub merged: f64,
}

impl Bulk for Rects {
    fn fields(&self) -> Vec<(&'static str, Field<'_>)> {
        vec![
            ("x", Field::F32(&self.x)),
            ("y", Field::F32(&self.y)),
            ("w", Field::F32(&self.w)),
            ("h", Field::F32(&self.h)),
            ("cls", Field::U8(&self.cls)),
            ("id", Field::U32(&self.id)),
            ("visible", Field::Num(self.visible)),
            ("individual", Field::Num(self.individual)),
            ("merged", Field::Num(self.merged)),
        ]
    }
}

/// The memory frame at an execution index: the tensors alive there, by offset.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frame {
    /// The execution index.
    pub index: f64,
    /// Tensor ids.
    pub ids: Vec<u32>,
    /// Effective start offsets.
    pub start: Vec<f64>,
    /// Effective end offsets.
    pub end: Vec<f64>,
    /// Layout classes.
    pub cls: Vec<u8>,
}

impl Bulk for Frame {
    fn fields(&self) -> Vec<(&'static str, Field<'_>)> {
        vec![
            ("index", Field::Num(self.index)),
            ("ids", Field::U32(&self.ids)),
            ("start", Field::F64(&self.start)),
            ("end", Field::F64(&self.end)),
            ("cls", Field::U8(&self.cls)),
        ]
    }
}

/// A tensor query led by its answer. A tensor's memory is shared by many tensors over the graph
/// (reuse, the point of the plan); the few that share it *while it is alive* are what a user
/// asking about the tensor looks for: an overwrite conflict, or a union-group partner by design.
#[derive(Debug, Clone, Serialize)]
pub struct TensorLead {
    /// Dump id of the tensor asked about.
    pub tensor_id: u32,
    /// Its memory, `[start, end)` offsets from the SOMAS base.
    pub range: [u64; 2],
    /// Its widened lifetime, first and last execution index.
    pub alive: [u32; 2],
    /// Tensors sharing its memory while both are alive: conflicts first, then union-group
    /// partners; by id within each.
    pub partners: Vec<Partner>,
    /// How many tensors share its memory only at other times (reuse).
    pub reuse: usize,
}

/// A tensor sharing the memory of the tensor asked about while both are alive.
#[derive(Debug, Clone, Serialize)]
pub struct Partner {
    /// Dump id.
    pub id: u32,
    /// An overwrite conflict (not in one union group with it).
    pub conflict: bool,
    /// Name of its source node.
    pub node_name: String,
    /// Its memory, `[start, end)` offsets.
    pub range: [u64; 2],
    /// Its widened lifetime.
    pub alive: [u32; 2],
    /// The bytes both hold, `[start, end)` offsets.
    pub shared: [u64; 2],
    /// The execution indices where both are alive.
    pub together: [u32; 2],
}
