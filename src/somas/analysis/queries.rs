//! The queries of somas_tool (`-cn`, `-ct`, `-ca`, `-car`): a node, a tensor, an address, an
//! address range. Each is a function over the model and its analysis returning rows, so the CLI,
//! the CSV export and the page show the same answer.

use crate::somas::analysis::Analysis;
use crate::somas::model::{SomasModel, INPUT_PARAM, NONE};
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

/// One thing the search box (or a query argument) can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SearchTarget {
    /// A node row.
    Node {
        /// Node row.
        row: u32,
    },
    /// A data tensor row.
    Tensor {
        /// Tensor row.
        row: u32,
    },
    /// One address.
    Address {
        /// The address.
        address: u64,
    },
    /// The half-open address range `[start, end)`.
    Range {
        /// First address.
        start: u64,
        /// End address (exclusive).
        end: u64,
    },
}

/// What a search text names, most likely first: `0x…-0x…` an address range, `0x…` an address,
/// `%12T` a tensor id, `$12` a node index, a bare number a tensor id and a node index (both
/// returned when both exist, the tensor first, as somas_tool's `-ct` takes bare ids), anything
/// else a node name (full, or the text after the last `/`).
///
/// The error says why nothing matched, in words for the user.
pub fn search(model: &SomasModel, text: &str) -> Result<Vec<SearchTarget>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(
            "type a node name or index, a tensor id (%12T or 12), an address (0x…) or a range (0x…-0x…)"
                .into(),
        );
    }
    let is_hex = |s: &str| {
        let s = s.trim();
        s.len() > 2 && (s.starts_with("0x") || s.starts_with("0X"))
    };
    if let Some((a, b)) = t.split_once('-') {
        if is_hex(a) && is_hex(b) {
            let parsed = (
                crate::somas::lex::parse_user_address(a),
                crate::somas::lex::parse_user_address(b),
            );
            return match parsed {
                (Some(start), Some(end)) if end >= start => {
                    Ok(vec![SearchTarget::Range { start, end }])
                }
                (Some(_), Some(_)) => Err(format!("{t}: the end of the range is below its start")),
                _ => Err(format!(
                    "{t}: expected two hex addresses such as 0x108830de2a20-0x108830de4a20"
                )),
            };
        }
    }
    if is_hex(t) {
        return crate::somas::lex::parse_user_address(t)
            .map(|address| vec![SearchTarget::Address { address }])
            .ok_or_else(|| format!("{t}: not a hex address (at most 16 hex digits after 0x)"));
    }
    if let Some(id) = t
        .strip_prefix('%')
        .and_then(|s| s.strip_suffix('T').or_else(|| s.strip_suffix('t')))
    {
        let id: u32 = id
            .parse()
            .map_err(|_| format!("{t}: expected a tensor id such as %12T"))?;
        return model
            .tensor_row(id)
            .map(|row| vec![SearchTarget::Tensor { row }])
            .ok_or_else(|| format!("{t}: no data tensor %{id}T in this dump"));
    }
    if let Some(i) = t.strip_prefix('$') {
        let index: u32 = i
            .parse()
            .map_err(|_| format!("{t}: expected a node index such as $12"))?;
        return model
            .nodes
            .row_of_index(index)
            .map(|row| vec![SearchTarget::Node { row }])
            .ok_or_else(|| format!("{t}: no node with execution index {index}"));
    }
    if let Ok(n) = t.parse::<u32>() {
        let mut out = Vec::new();
        if let Some(row) = model.tensor_row(n) {
            out.push(SearchTarget::Tensor { row });
        }
        if let Some(row) = model.nodes.row_of_index(n) {
            out.push(SearchTarget::Node { row });
        }
        // A node may also be named by digits only.
        if let Some(row) = model.find_node(t) {
            if !out.contains(&SearchTarget::Node { row }) {
                out.push(SearchTarget::Node { row });
            }
        }
        return if out.is_empty() {
            Err(format!(
                "{t}: no data tensor %{n}T and no node with index {n}"
            ))
        } else {
            Ok(out)
        };
    }
    model
        .find_node(t)
        .map(|row| vec![SearchTarget::Node { row }])
        .ok_or_else(|| {
            format!("{t}: no node of that name (full name, or the part after the last /)")
        })
}

/// Everything the views show about one data tensor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorInfo {
    /// Dump id (`%<id>T`).
    pub id: u32,
    /// Source node name.
    pub node_name: String,
    /// Source node execution index, when known.
    pub node_index: Option<u32>,
    /// Output (or workspace) index in the source node, when known.
    pub output_index: Option<u32>,
    /// Type string (`Common`, `Workspace`, …).
    pub kind: &'static str,
    /// Lifelong kind string.
    pub lifelong: &'static str,
    /// Original size.
    pub size: u64,
    /// Aligned size.
    pub aligned: u64,
    /// Offset from the SOMAS base.
    pub offset: u64,
    /// Effective byte range `[start, end)` as offsets (the Ascend gap removed from list heads).
    pub range: [u64; 2],
    /// Address: base + offset.
    pub address: u64,
    /// `life_start`, `life_end` as printed.
    pub life: [u32; 2],
    /// Widened inclusive lifetime.
    pub alive: [u32; 2],
    /// Task address and size from task-info, when known.
    pub task: Option<[u64; 2]>,
    /// Member of a union group (shares memory with its members by design).
    pub union_group: bool,
    /// Member of an original contiguous list.
    pub contiguous: bool,
    /// Ids of the tensors it conflicts with.
    pub conflicts_with: Vec<u32>,
    /// True when the task address is not base + offset.
    pub task_mismatch: bool,
}

/// The [`TensorInfo`] of tensor row `t`.
pub fn tensor_info(model: &SomasModel, an: &Analysis, t: u32) -> TensorInfo {
    let r = t as usize;
    let tn = &model.tensors;
    let id = |t: u32| tn.id.get(t as usize).copied().unwrap_or(0);
    let owner = model.derived.owner.get(r).copied().unwrap_or(NONE);
    let mut conflicts_with: Vec<u32> = an
        .conflicts
        .pairs
        .iter()
        .filter_map(|&(a, b)| {
            if a == t {
                Some(id(b))
            } else if b == t {
                Some(id(a))
            } else {
                None
            }
        })
        .collect();
    conflicts_with.sort_unstable();
    let (s, e) = model.effective_range(t);
    let task = an.task.as_ref().and_then(|m| {
        let a = *m.tensor_addr.get(r)?;
        (a != 0).then(|| [a, m.tensor_size.get(r).copied().unwrap_or(0)])
    });
    TensorInfo {
        id: id(t),
        node_name: model.tensor_source_name(t).to_string(),
        node_index: model.nodes.index.get(owner as usize).copied(),
        output_index: model
            .derived
            .out_index
            .get(r)
            .copied()
            .filter(|&k| k != NONE),
        kind: tn.kind.get(r).map_or("", |k| k.as_str()),
        lifelong: tn.lifelong.get(r).map_or("", |l| l.as_str()),
        size: tn.original.get(r).copied().unwrap_or(0),
        aligned: tn.aligned.get(r).copied().unwrap_or(0),
        offset: tn.offset.get(r).copied().unwrap_or(0),
        range: [s, e],
        address: an.address(model, t),
        life: [
            tn.start.get(r).copied().unwrap_or(0),
            tn.end.get(r).copied().unwrap_or(0),
        ],
        alive: [
            an.lo.get(r).copied().unwrap_or(0),
            an.hi.get(r).copied().unwrap_or(0),
        ],
        task,
        union_group: model.derived.union_group.get(r).is_some_and(|&g| g != NONE),
        contiguous: model.derived.in_contiguous.get(r) == Some(&true),
        conflicts_with,
        task_mismatch: an
            .task
            .as_ref()
            .is_some_and(|m| m.mismatches.binary_search(&t).is_ok()),
    }
}

/// The answers as JSON objects, exactly as `memlens somas --json` prints them under
/// `node_query`, `tensor_query`, `address_query` and `address_range_query` (the page shows the
/// same objects, so the two cannot disagree).
pub mod json {
    use super::*;
    use serde_json::{json, Value};

    fn tid(model: &SomasModel, t: u32) -> u32 {
        model.tensors.id.get(t as usize).copied().unwrap_or(0)
    }

    fn overlaps(model: &SomasModel, list: &[Overlap]) -> Vec<Value> {
        list.iter()
            .map(|o| {
                json!({
                    "id": tid(model, o.tensor_row),
                    "lifetime_overlap": o.lifetime_overlap,
                    "conflict": o.conflict,
                })
            })
            .collect()
    }

    /// `node_query` of node row `node`.
    pub fn node(model: &SomasModel, an: &Analysis, node: u32) -> Value {
        let rep = node_query(model, an, node);
        json!({
            "node_index": model.nodes.index.get(node as usize),
            "node_name": model.node_name(node),
            "alive_tensors": rep.frame.iter().map(|&t| tid(model, t)).collect::<Vec<_>>(),
            "io": rep.io.iter().map(|io| {
                let (kind, id) = match io.target {
                    Target::Tensor(t) => ("tensor", tid(model, t)),
                    Target::Parameter(p) => (
                        "parameter",
                        model.params.id.get(p as usize).copied().unwrap_or(0),
                    ),
                };
                json!({
                    "role": io.role,
                    "position": io.position,
                    "kind": kind,
                    "id": id,
                    "related_nodes": io
                        .related_nodes
                        .iter()
                        .map(|n| model.node_name(n.0))
                        .collect::<Vec<_>>(),
                    "overlapping_tensors": overlaps(model, &io.overlapping),
                })
            }).collect::<Vec<_>>(),
        })
    }

    /// `tensor_query` of tensor row `t`.
    pub fn tensor(model: &SomasModel, an: &Analysis, t: u32) -> Value {
        let rep = tensor_query(model, an, t);
        json!({
            "tensor_id": tid(model, t),
            "nodes": rep
                .nodes
                .iter()
                .map(|n| json!({"node": model.node_name(n.0), "role": n.1}))
                .collect::<Vec<_>>(),
            "overlapping_tensors": overlaps(model, &rep.overlapping),
        })
    }

    /// `address_query` of `addr`.
    pub fn address(model: &SomasModel, an: &Analysis, addr: u64) -> Value {
        let rows = address_query(model, an, addr);
        json!({
            "address": addr,
            "tensors": rows.iter().map(|&t| tid(model, t)).collect::<Vec<_>>(),
        })
    }

    /// `address_range_query` of `[lo, hi)`.
    pub fn range(model: &SomasModel, an: &Analysis, lo: u64, hi: u64) -> Value {
        let rows = range_query(model, an, lo, hi);
        json!({
            "start": lo,
            "end": hi,
            "tensors": rows.iter().map(|&t| tid(model, t)).collect::<Vec<_>>(),
        })
    }
}
