//! The summary of a model and its analysis as one serialisable object: what `memlens somas
//! --json` prints and what the page shows first. Keys are stable (documented in `docs/somas.md`).

use crate::diag::Diagnostic;
use crate::somas::analysis::{Analysis, LifelongBytes, Ratio};
use crate::somas::model::{Format, SomasModel, NONE};
use serde::Serialize;

/// The peak in-use node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeakSummary {
    /// Execution index.
    pub node_index: u32,
    /// Node name (empty when the format has no node there).
    pub node_name: String,
    /// In-use bytes of tensors (the lower bound of any plan).
    pub in_use_bytes: u64,
    /// The same plus static input memory (somas_tool's "In Use Memory size").
    pub in_use_with_static_bytes: u64,
    /// Tensors alive there (union groups once).
    pub alive_tensors: u32,
}

/// The max address without stacked lifelong tensors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaxAddressSummary {
    /// End offset (exclusive), relative to the SOMAS base.
    pub end_bytes: u64,
    /// The same as an address (base + end offset).
    pub end_address: u64,
    /// Tensor id reaching it.
    pub tensor_id: u32,
    /// Its source node name.
    pub node_name: String,
    /// Its source node's execution index, when known.
    pub node_index: Option<u32>,
    /// Its output index in the source node, when known.
    pub output_index: Option<u32>,
}

/// Task-info figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskSummary {
    /// Task-info file.
    pub file: String,
    /// Its version range.
    pub version: String,
    /// Records read.
    pub records: usize,
    /// Records that match no node.
    pub unmatched_records: u64,
    /// SOMAS base address derived from it.
    pub base_address: Option<u64>,
    /// Smallest task address.
    pub address_min: Option<u64>,
    /// Largest task address + size.
    pub address_max: Option<u64>,
}

/// The summary object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Dump file.
    pub file: String,
    /// Detected family and version.
    pub format: Format,
    /// Node count.
    pub nodes: usize,
    /// Data tensor count.
    pub tensors: usize,
    /// Control tensor count.
    pub control_tensors: usize,
    /// Parameter count.
    pub parameters: usize,
    /// Union groups after merging.
    pub union_groups: usize,
    /// Original contiguous lists.
    pub contiguous_lists: usize,
    /// Merged blocks.
    pub merged_blocks: usize,
    /// Peak in-use node.
    pub peak: Option<PeakSummary>,
    /// "Total Memory Size after reused" (or the largest end offset when the dump has no total).
    pub reused_bytes: u64,
    /// `dump` or `max-end-offset`.
    pub reused_bytes_source: &'static str,
    /// Sum of aligned sizes of data tensors, union groups once.
    pub upper_bound_bytes: u64,
    /// Non-contiguous GraphAll tensors (stacked above the reused block).
    pub lifelong_bytes: u64,
    /// Lifelong sums by kind.
    pub lifelong: LifelongBytes,
    /// Static input memory (sum of parameter sizes).
    pub static_bytes: u64,
    /// Max address without stacked lifelong tensors.
    pub max_address_without_lifelong: Option<MaxAddressSummary>,
    /// Address base added to offsets.
    pub base_address: u64,
    /// `task-info`, `dump` or `none`.
    pub base_source: &'static str,
    /// Reuse ratios with formulas.
    pub ratios: Vec<Ratio>,
    /// Conflicting data-tensor id pairs `[a, b]`, `a < b`, sorted.
    pub conflicts: Vec<[u32; 2]>,
    /// False when the check was skipped (offsets not solved).
    pub conflicts_checked: bool,
    /// True when the conflict list hit its limit.
    pub conflicts_truncated: bool,
    /// Tensor ids whose task address is not base + offset.
    pub task_mismatches: Vec<u32>,
    /// Task-info figures.
    pub task: Option<TaskSummary>,
    /// What the format lacks and what was inferred.
    pub notes: Vec<String>,
    /// Warnings found while reading.
    pub warnings: Vec<Diagnostic>,
}

/// Builds the summary.
pub fn summary(
    model: &SomasModel,
    an: &Analysis,
    task: Option<&crate::somas::task_info::TaskInfo>,
) -> Summary {
    let id = |t: u32| model.tensors.id.get(t as usize).copied().unwrap_or(0);
    let peak = an.peak.map(|p| PeakSummary {
        node_index: p.index,
        node_name: if p.node_row == NONE {
            String::new()
        } else {
            model.node_name(p.node_row).to_string()
        },
        in_use_bytes: p.in_use,
        in_use_with_static_bytes: p.in_use.saturating_add(an.static_bytes),
        alive_tensors: p.alive,
    });
    let max_addr = an.max_address_without_lifelong.map(|m| MaxAddressSummary {
        end_bytes: m.end,
        end_address: an.base.saturating_add(m.end),
        tensor_id: id(m.tensor_row),
        node_name: model.tensor_source_name(m.tensor_row).to_string(),
        node_index: model.nodes.index.get(m.node_row as usize).copied(),
        output_index: model
            .derived
            .out_index
            .get(m.tensor_row as usize)
            .copied()
            .filter(|&k| k != NONE),
    });
    let task_summary = match (task, an.task.as_ref()) {
        (Some(ti), Some(m)) => Some(TaskSummary {
            file: ti.file.clone(),
            version: ti.version.clone(),
            records: ti.len(),
            unmatched_records: m.unmatched_records,
            base_address: m.base,
            address_min: m.address_range.map(|r| r.0),
            address_max: m.address_range.map(|r| r.1),
        }),
        _ => None,
    };
    Summary {
        file: model.file.clone(),
        format: model.format.clone(),
        nodes: model.nodes.len(),
        tensors: model.tensors.len(),
        control_tensors: model.controls.id.len(),
        parameters: model.params.id.len(),
        union_groups: model.derived.groups.len(),
        contiguous_lists: model.contiguous.len(),
        merged_blocks: model.merged_blocks.len(),
        peak,
        reused_bytes: an.reused,
        reused_bytes_source: if an.reused_from_dump {
            "dump"
        } else {
            "max-end-offset"
        },
        upper_bound_bytes: an.upper_bound,
        lifelong_bytes: an.lifelong.stacked,
        lifelong: an.lifelong,
        static_bytes: an.static_bytes,
        max_address_without_lifelong: max_addr,
        base_address: an.base,
        base_source: an.base_source,
        ratios: an.ratios.clone(),
        conflicts: an
            .conflicts
            .pairs
            .iter()
            .map(|&(a, b)| {
                let (x, y) = (id(a), id(b));
                [x.min(y), x.max(y)]
            })
            .collect(),
        conflicts_checked: an.conflicts.checked,
        conflicts_truncated: an.conflicts.truncated,
        task_mismatches: an
            .task
            .as_ref()
            .map(|m| m.mismatches.iter().map(|&t| id(t)).collect())
            .unwrap_or_default(),
        task: task_summary,
        notes: model.notes.clone(),
        warnings: model.warnings.clone(),
    }
}
