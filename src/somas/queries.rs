//! The queries of somas_tool (`-cn`, `-ct`, `-ca`, `-car`): a node, a tensor, an address, an
//! address range. Each is a function over the model and its analysis returning rows, so the CLI,
//! the CSV export and the page show the same answer.

use super::analysis::Analysis;
use super::model::{SomasModel, INPUT_PARAM, NONE};
use serde::Serialize;

/// How a node uses a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Listed in `inputs[]`.
    Input,
    /// Listed in `outputs[]`.
    Output,
    /// Listed in `workspace[]`.
    Workspace,
}

/// A tensor whose effective byte range intersects the one asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Overlap {
    /// Tensor row.
    pub tensor_row: u32,
    /// Their widened lifetimes intersect too.
    pub lifetime_overlap: bool,
    /// Lifetimes intersect and they are not in one union group: an overwrite conflict.
    pub conflict: bool,
}

/// What a node input or output refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "row", rename_all = "lowercase")]
pub enum Target {
    /// A tensor row.
    Tensor(u32),
    /// A parameter row.
    Parameter(u32),
}

/// One input or output of a queried node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Io {
    /// Input, output or workspace.
    pub role: Role,
    /// Position in the node's list.
    pub position: u32,
    /// The tensor or parameter.
    pub target: Target,
    /// Nodes using it (producer, consumers), as `(node row, role)`.
    pub related_nodes: Vec<(u32, Role)>,
    /// Tensors overlapping it in memory (empty for parameters).
    pub overlapping: Vec<Overlap>,
}

/// Answer to a node query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeReport {
    /// Node row.
    pub node_row: u32,
    /// Tensors alive when the node runs, sorted by offset (its memory frame).
    pub frame: Vec<u32>,
    /// Inputs, outputs and workspaces in list order.
    pub io: Vec<Io>,
}

/// Answer to a tensor query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorReport {
    /// Tensor row.
    pub tensor_row: u32,
    /// Nodes using it, as `(node row, role)`, in execution order.
    pub nodes: Vec<(u32, Role)>,
    /// Tensors overlapping it in memory.
    pub overlapping: Vec<Overlap>,
}

/// Nodes that list tensor row `t`, in execution order, with their role.
pub fn tensor_nodes(model: &SomasModel, t: u32) -> Vec<(u32, Role)> {
    let n = &model.nodes;
    let mut out = Vec::new();
    for r in 0..n.len() {
        let roles = [
            (Role::Input, n.inputs.row(r)),
            (Role::Output, n.outputs.row(r)),
            (Role::Workspace, n.workspace.row(r)),
        ];
        for (role, list) in roles {
            if list.iter().any(|&v| v & INPUT_PARAM == 0 && v == t) {
                out.push((r as u32, role));
            }
        }
    }
    out
}

/// Tensors whose effective range intersects `[start, end)` (offsets), except `skip`.
fn overlapping_range(
    model: &SomasModel,
    an: &Analysis,
    t: Option<u32>,
    start: u64,
    end: u64,
) -> Vec<Overlap> {
    let group = &model.derived.union_group;
    let mut out = Vec::new();
    for u in 0..model.tensors.len() as u32 {
        if Some(u) == t || !model.occupies(u) {
            continue;
        }
        let (s, e) = model.effective_range(u);
        if s >= end || e <= start {
            continue;
        }
        let (lifetime_overlap, conflict) = match t {
            Some(t) => {
                let lt = (an.lo.get(t as usize), an.hi.get(t as usize));
                let lu = (an.lo.get(u as usize), an.hi.get(u as usize));
                let time = lt.0 <= lu.1 && lu.0 <= lt.1;
                let g = group.get(t as usize).copied().unwrap_or(NONE);
                let same = g != NONE && group.get(u as usize) == Some(&g);
                (time, time && !same && model.occupies(t))
            }
            None => (false, false),
        };
        out.push(Overlap {
            tensor_row: u,
            lifetime_overlap,
            conflict,
        });
    }
    out
}

/// Tensors overlapping tensor row `t` in memory (any time), flagged by lifetime overlap.
pub fn overlapping(model: &SomasModel, an: &Analysis, t: u32) -> Vec<Overlap> {
    if !model.occupies(t) {
        return Vec::new();
    }
    let (s, e) = model.effective_range(t);
    overlapping_range(model, an, Some(t), s, e)
}

/// The tensor query (`-ct`).
pub fn tensor_query(model: &SomasModel, an: &Analysis, t: u32) -> TensorReport {
    TensorReport {
        tensor_row: t,
        nodes: tensor_nodes(model, t),
        overlapping: overlapping(model, an, t),
    }
}

/// The node query (`-cn`).
pub fn node_query(model: &SomasModel, an: &Analysis, node_row: u32) -> NodeReport {
    let r = node_row as usize;
    let index = model.nodes.index.get(r).copied().unwrap_or(0);
    let mut io = Vec::new();
    let n = &model.nodes;
    for (role, list) in [
        (Role::Input, n.inputs.row(r)),
        (Role::Output, n.outputs.row(r)),
        (Role::Workspace, n.workspace.row(r)),
    ] {
        for (k, &v) in list.iter().enumerate() {
            let item = if v & INPUT_PARAM != 0 {
                let p = v & !INPUT_PARAM;
                Io {
                    role,
                    position: k as u32,
                    target: Target::Parameter(p),
                    related_nodes: model
                        .derived
                        .param_consumers
                        .row(p as usize)
                        .iter()
                        .map(|&c| (c, Role::Input))
                        .collect(),
                    overlapping: Vec::new(),
                }
            } else {
                Io {
                    role,
                    position: k as u32,
                    target: Target::Tensor(v),
                    related_nodes: tensor_nodes(model, v),
                    overlapping: overlapping(model, an, v),
                }
            };
            io.push(item);
        }
    }
    NodeReport {
        node_row,
        frame: an.frame(model, index),
        io,
    }
}

/// Tensors whose address range `[base + start, base + end)` contains `addr` (`-ca`).
pub fn address_query(model: &SomasModel, an: &Analysis, addr: u64) -> Vec<u32> {
    range_query(model, an, addr, addr.saturating_add(1))
}

/// Tensors whose address range intersects `[lo, hi)` (`-car`; a single address when `hi <= lo`).
pub fn range_query(model: &SomasModel, an: &Analysis, lo: u64, hi: u64) -> Vec<u32> {
    let hi = hi.max(lo.saturating_add(1));
    let (Some(s), Some(e)) = (lo.checked_sub(an.base), hi.checked_sub(an.base)) else {
        // The range starts below the base: clip it.
        if hi <= an.base {
            return Vec::new();
        }
        return overlapping_range(model, an, None, 0, hi - an.base)
            .into_iter()
            .map(|o| o.tensor_row)
            .collect();
    };
    overlapping_range(model, an, None, s, e)
        .into_iter()
        .map(|o| o.tensor_row)
        .collect()
}
