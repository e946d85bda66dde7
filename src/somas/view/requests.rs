//! The questions of the SOMAS views, as serde types with named fields (JSON `{"method", "params"}`).

use crate::table::Query;
use serde::Deserialize;

/// Rows a table view is restricted to.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Subset {
    /// The memory frame of the node with this execution index (tensors table).
    Frame(u32),
    /// These data tensor ids (tensors table).
    Tensors(Vec<u32>),
    /// These node execution indices (nodes table).
    Nodes(Vec<u32>),
}

/// A table query as the page sends it: the table's own [`Query`] (columns by name) and a subset
/// named in the page's terms.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TableRequest {
    /// Sort, filters and ranges.
    #[serde(flatten)]
    pub query: Query,
    /// Rows to consider (replaces `query.subset`).
    #[serde(rename = "rows")]
    pub rows: Option<Subset>,
}

/// The queries of an export (addresses as hex text, so they stay exact).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ExportRequest {
    /// A node's execution index.
    pub node: Option<u32>,
    /// A data tensor id.
    pub tensor: Option<u32>,
    /// An address.
    pub address: Option<String>,
    /// An address range `[start, end)`.
    pub range: Option<(String, String)>,
}

/// A question of the SOMAS views. Every variant has named fields (none for some), so a request
/// always carries a `params` object.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "method", content = "params", rename_all = "camelCase")]
pub enum Request {
    /// The summary `memlens somas FILE --json` prints (without query keys).
    Summary {},
    /// Axes, base address, legend, conflict marks and timings ([`Info`]).
    Info {},
    /// Everything about a data tensor.
    Tensor {
        /// Dump id.
        id: u32,
    },
    /// The tensor under a layout point, or within `dx`, `dy` of it (`null` when none).
    Hit {
        /// Execution index.
        x: f64,
        /// Offset in bytes.
        y: f64,
        /// Tolerance in x.
        dx: f64,
        /// Tolerance in y.
        dy: f64,
    },
    /// The node at an execution index and the curves there ([`NodeAt`]).
    NodeAt {
        /// Execution index.
        index: u32,
    },
    /// What a search box text names ([`Search`]).
    Search {
        /// The text typed.
        text: String,
    },
    /// The CLI's `node_query` of a node.
    NodeQuery {
        /// Execution index.
        index: u32,
    },
    /// The CLI's `tensor_query` of a data tensor.
    TensorQuery {
        /// Dump id.
        id: u32,
    },
    /// A tensor query led by its answer ([`TensorLead`](super::TensorLead)): the tensors that
    /// share its memory while it is alive, conflicts first, and how many reuse it at other times.
    TensorLead {
        /// Dump id.
        id: u32,
    },
    /// The CLI's `address_query` (hex text).
    AddressQuery {
        /// Address.
        address: String,
    },
    /// The CLI's `address_range_query` of `[start, end)` (hex text).
    RangeQuery {
        /// Start.
        start: String,
        /// End.
        end: String,
    },
    /// Sorts and filters a table (`tensors`, `nodes`, `parameters`, `conflicts`) and keeps the
    /// result under the name `view` for pages ([`TableAnswer`]).
    Table {
        /// Name of the kept view.
        view: String,
        /// Which table.
        table: String,
        /// Sort, filters, subset.
        #[serde(default)]
        request: TableRequest,
    },
    /// Rows `[offset, offset + limit)` of a kept view ([`crate::table::Page`]: cells by column).
    Page {
        /// Name of the kept view.
        view: String,
        /// First row.
        offset: usize,
        /// Rows.
        limit: usize,
    },
    /// Where the row of `key` (a tensor id, a node index, a parameter id, or a conflict's
    /// first tensor id) sits in a kept view, or -1.
    Position {
        /// Name of the kept view.
        view: String,
        /// The key.
        key: u32,
    },
    /// The paths of the export of `request`: somas_tool's file set as `--out` writes it.
    ExportList {
        /// The queries included.
        #[serde(default)]
        request: ExportRequest,
    },
    /// The summary with the queries of `request`, byte for byte what `--json` prints.
    SummaryJson {
        /// The queries included.
        #[serde(default)]
        request: ExportRequest,
    },
}
