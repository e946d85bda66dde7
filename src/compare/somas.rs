//! Comparing two SOMAS dumps of the same graph: what the plan of the candidate does differently.
//!
//! Nodes are matched by name and, where a name repeats, by its occurrence in execution order (the
//! k-th node of a name matches the other dump's k-th). Tensors are matched through their producer:
//! (producer node's match key, output or workspace slot); tensors without a producer by the name
//! their line prints and its occurrence. A tensor's lifetime compares equal when its widened start
//! and end nodes are matched nodes of each other. "Effect on the peak" of a tensor is the bytes
//! it holds at the candidate's peak minus the bytes it held at the baseline's peak (0 when it is
//! alive at neither), so the tensors that made the peak grow come first.

use super::delta;
use crate::somas::analysis::Analysis;
use crate::somas::model::{SomasModel, NONE};
use serde::Serialize;
use std::collections::HashMap;

/// One dump's figures, side by side with the other's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DumpFigures {
    /// The file.
    pub file: String,
    /// Detected MindSpore version range.
    pub version: String,
    /// Nodes.
    pub nodes: u64,
    /// Data tensors.
    pub tensors: u64,
    /// Execution index of the peak in-use node (`null` without a peak).
    pub peak_index: Option<u32>,
    /// Its name.
    pub peak_node: String,
    /// In-use bytes at the peak.
    pub peak_in_use: u64,
    /// Sum of aligned sizes, union groups once (memory without reuse).
    pub upper_bound: u64,
    /// Total memory after reuse (the dump's figure, else the largest end offset).
    pub reused: u64,
    /// Static memory (parameters).
    pub static_bytes: u64,
    /// Stacked lifelong bytes.
    pub lifelong_stacked: u64,
    /// Reuse ratios by name (`null` when a denominator is 0).
    pub ratios: Vec<(String, Option<f64>)>,
}

/// A node of one dump (for the unmatched lists).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeRef {
    /// Execution index.
    pub index: u32,
    /// Name.
    pub name: String,
}

/// A matched node whose in-use memory differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeDiff {
    /// Name.
    pub name: String,
    /// Execution index in the baseline.
    pub base_index: u32,
    /// Execution index in the candidate.
    pub candidate_index: u32,
    /// In-use bytes there in the baseline.
    pub base_in_use: u64,
    /// In-use bytes there in the candidate.
    pub candidate_in_use: u64,
    /// `candidate_in_use − base_in_use`.
    pub delta_bytes: i64,
}

/// A tensor whose size or lifetime changed, or which exists on one side only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorDiff {
    /// Producer node name (or the name the tensor's line prints).
    pub source: String,
    /// `out<N>` or `ws<N>` (position among the producer's outputs or workspaces), or `#<k>` for a
    /// tensor without producer (its occurrence among tensors printing that name).
    pub slot: String,
    /// Tensor id in the baseline (`null`: candidate only).
    pub base_id: Option<u32>,
    /// Tensor id in the candidate (`null`: baseline only).
    pub candidate_id: Option<u32>,
    /// Aligned size in the baseline.
    pub base_size: u64,
    /// Aligned size in the candidate.
    pub candidate_size: u64,
    /// `candidate_size − base_size`.
    pub size_delta: i64,
    /// Widened lifetime `[start, end]` (execution indices) in the baseline.
    pub base_life: Option<(u32, u32)>,
    /// The same in the candidate.
    pub candidate_life: Option<(u32, u32)>,
    /// True when the lifetime's start or end node is not the matched node of the other side's.
    pub life_changed: bool,
    /// Bytes at the candidate's peak minus bytes at the baseline's peak.
    pub peak_effect_bytes: i64,
}

/// The comparison of two SOMAS dumps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SomasComparison {
    /// Baseline figures.
    pub base: DumpFigures,
    /// Candidate figures.
    pub candidate: DumpFigures,
    /// Candidate − baseline peak in-use.
    pub peak_in_use_delta_bytes: i64,
    /// Candidate − baseline upper bound.
    pub upper_bound_delta_bytes: i64,
    /// Candidate − baseline memory after reuse.
    pub reused_delta_bytes: i64,
    /// Matched node pairs.
    pub nodes_matched: u64,
    /// Of those, pairs matched by occurrence among repeated names.
    pub nodes_matched_by_order: u64,
    /// Baseline nodes without a match.
    pub only_base_nodes: Vec<NodeRef>,
    /// Candidate nodes without a match.
    pub only_candidate_nodes: Vec<NodeRef>,
    /// Matched nodes whose in-use memory differs, in the candidate's execution order.
    pub node_differences: Vec<NodeDiff>,
    /// Matched tensors whose size or lifetime changed, by effect on the peak (largest magnitude
    /// first), then by size change.
    pub changed_tensors: Vec<TensorDiff>,
    /// Tensors of one side only, in the same order.
    pub one_side_tensors: Vec<TensorDiff>,
    /// Tensors matched.
    pub tensors_matched: u64,
    /// Number of differences: one-side nodes, differing nodes, changed and one-side tensors.
    pub differences: u64,
}

fn figures(m: &SomasModel, an: &Analysis) -> DumpFigures {
    let peak_node = an
        .peak
        .map(|p| {
            if p.node_row == NONE {
                String::new()
            } else {
                m.node_name(p.node_row).to_string()
            }
        })
        .unwrap_or_default();
    DumpFigures {
        file: m.file.clone(),
        version: m.format.version.clone(),
        nodes: m.nodes.len() as u64,
        tensors: m.tensors.len() as u64,
        peak_index: an.peak.map(|p| p.index),
        peak_node,
        peak_in_use: an.peak.map_or(0, |p| p.in_use),
        upper_bound: an.upper_bound,
        reused: an.reused,
        static_bytes: an.static_bytes,
        lifelong_stacked: an.lifelong.stacked,
        ratios: an
            .ratios
            .iter()
            .map(|r| (r.name.to_string(), r.value))
            .collect(),
    }
}

/// Match keys of the nodes, by row: (name, occurrence of that name in execution order).
fn node_keys(m: &SomasModel) -> Vec<(String, u32)> {
    let mut seen: HashMap<u32, u32> = HashMap::new();
    (0..m.nodes.len())
        .map(|r| {
            let id = m.nodes.name.get(r).copied().unwrap_or(0);
            let k = seen.entry(id).or_default();
            let key = (m.names.get(id).to_string(), *k);
            *k += 1;
            key
        })
        .collect()
}

/// Match keys of the tensors, by row: (source name, slot).
fn tensor_keys(m: &SomasModel, nodes: &[(String, u32)]) -> Vec<(String, String)> {
    let mut unowned: HashMap<u32, u32> = HashMap::new();
    (0..m.tensors.len())
        .map(|t| {
            let owner = m.derived.owner.get(t).copied().unwrap_or(NONE);
            let slot = m.derived.out_index.get(t).copied().unwrap_or(NONE);
            match nodes.get(owner as usize) {
                Some((name, occ)) if slot != NONE => {
                    let ws = m.derived.is_workspace.get(t).copied().unwrap_or(false);
                    // A repeated node name gets its occurrence, so the k-th node's tensors
                    // match the other dump's k-th node's.
                    let source = if *occ == 0 {
                        name.clone()
                    } else {
                        format!("{name} [{occ}]")
                    };
                    (source, format!("{}{slot}", if ws { "ws" } else { "out" }))
                }
                _ => {
                    let id = m.tensors.name.get(t).copied().unwrap_or(0);
                    let k = unowned.entry(id).or_default();
                    let key = (m.names.get(id).to_string(), format!("#{k}"));
                    *k += 1;
                    key
                }
            }
        })
        .collect()
}

/// Bytes tensor row `t` holds at execution index `at` (0 when not alive, not counted in the
/// curves — a union member other than the head — or `at` is `None`).
fn held_at(an: &Analysis, m: &SomasModel, t: usize, at: Option<u32>) -> u64 {
    let Some(at) = at else { return 0 };
    let alive = an.lo.get(t).is_some_and(|&l| l <= at) && an.hi.get(t).is_some_and(|&h| h >= at);
    if alive && an.counted.get(t).copied().unwrap_or(false) {
        m.tensors.aligned.get(t).copied().unwrap_or(0)
    } else {
        0
    }
}

fn life(an: &Analysis, t: usize) -> Option<(u32, u32)> {
    Some((*an.lo.get(t)?, *an.hi.get(t)?))
}

fn effect_order(a: &TensorDiff, b: &TensorDiff) -> std::cmp::Ordering {
    b.peak_effect_bytes
        .unsigned_abs()
        .cmp(&a.peak_effect_bytes.unsigned_abs())
        .then(
            b.size_delta
                .unsigned_abs()
                .cmp(&a.size_delta.unsigned_abs()),
        )
        .then(a.source.cmp(&b.source))
        .then(a.slot.cmp(&b.slot))
}

/// For each candidate node row, the baseline node row it matches (by name, then by occurrence
/// among repeated names), if any.
pub fn matched_nodes(bm: &SomasModel, cm: &SomasModel) -> Vec<Option<usize>> {
    let bk = node_keys(bm);
    let bpos: HashMap<&(String, u32), usize> = bk.iter().enumerate().map(|(i, k)| (k, i)).collect();
    node_keys(cm).iter().map(|k| bpos.get(k).copied()).collect()
}

/// Compares dump `cm` (candidate) with `bm` (baseline), each with its analysis.
pub fn compare_dumps(
    bm: &SomasModel,
    ba: &Analysis,
    cm: &SomasModel,
    ca: &Analysis,
) -> SomasComparison {
    let base = figures(bm, ba);
    let candidate = figures(cm, ca);
    // Nodes.
    let bk = node_keys(bm);
    let ck = node_keys(cm);
    let cpos: HashMap<&(String, u32), usize> = ck.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let bpos: HashMap<&(String, u32), usize> = bk.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut pairs: Vec<(usize, usize)> = bk
        .iter()
        .enumerate()
        .filter_map(|(i, k)| cpos.get(k).map(|&j| (i, j)))
        .collect();
    pairs.sort_by_key(|&(_, j)| j);
    let by_order = pairs
        .iter()
        .filter(|&&(i, _)| bk.get(i).is_some_and(|k| k.1 > 0))
        .count() as u64;
    let node_ref = |m: &SomasModel, r: usize| NodeRef {
        index: m.nodes.index.get(r).copied().unwrap_or(0),
        name: m.node_name(r as u32).to_string(),
    };
    let only_base_nodes: Vec<NodeRef> = (0..bk.len())
        .filter(|i| bk.get(*i).is_some_and(|k| !cpos.contains_key(k)))
        .map(|i| node_ref(bm, i))
        .collect();
    let only_candidate_nodes: Vec<NodeRef> = (0..ck.len())
        .filter(|j| ck.get(*j).is_some_and(|k| !bpos.contains_key(k)))
        .map(|j| node_ref(cm, j))
        .collect();
    let mut node_differences = Vec::new();
    // Execution index of the baseline → of the candidate, for lifetimes.
    let mut index_map: HashMap<u32, u32> = HashMap::new();
    for &(i, j) in &pairs {
        let bi = bm.nodes.index.get(i).copied().unwrap_or(0);
        let cj = cm.nodes.index.get(j).copied().unwrap_or(0);
        index_map.insert(bi, cj);
        let (bu, cu) = (ba.in_use_at(bi), ca.in_use_at(cj));
        if bu != cu {
            node_differences.push(NodeDiff {
                name: cm.node_name(j as u32).to_string(),
                base_index: bi,
                candidate_index: cj,
                base_in_use: bu,
                candidate_in_use: cu,
                delta_bytes: delta(bu, cu),
            });
        }
    }
    // Tensors.
    let btk = tensor_keys(bm, &bk);
    let ctk = tensor_keys(cm, &ck);
    let ct_pos: HashMap<&(String, String), usize> =
        ctk.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let bt_pos: HashMap<&(String, String), usize> =
        btk.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let bpeak = ba.peak.map(|p| p.index);
    let cpeak = ca.peak.map(|p| p.index);
    let mut changed_tensors = Vec::new();
    let mut one_side_tensors = Vec::new();
    let mut tensors_matched = 0u64;
    for (t, key) in btk.iter().enumerate() {
        let b_size = bm.tensors.aligned.get(t).copied().unwrap_or(0);
        let b_held = held_at(ba, bm, t, bpeak);
        let b_id = bm.tensors.id.get(t).copied();
        match ct_pos.get(key) {
            Some(&u) => {
                tensors_matched += 1;
                let c_size = cm.tensors.aligned.get(u).copied().unwrap_or(0);
                let (bl, cl) = (life(ba, t), life(ca, u));
                let life_changed = match (bl, cl) {
                    (Some((s0, e0)), Some((s1, e1))) => {
                        index_map.get(&s0).copied().unwrap_or(s0) != s1
                            || index_map.get(&e0).copied().unwrap_or(e0) != e1
                    }
                    (a, b) => a != b,
                };
                if c_size != b_size || life_changed {
                    changed_tensors.push(TensorDiff {
                        source: key.0.clone(),
                        slot: key.1.clone(),
                        base_id: b_id,
                        candidate_id: cm.tensors.id.get(u).copied(),
                        base_size: b_size,
                        candidate_size: c_size,
                        size_delta: delta(b_size, c_size),
                        base_life: bl,
                        candidate_life: cl,
                        life_changed,
                        peak_effect_bytes: delta(b_held, held_at(ca, cm, u, cpeak)),
                    });
                }
            }
            None => one_side_tensors.push(TensorDiff {
                source: key.0.clone(),
                slot: key.1.clone(),
                base_id: b_id,
                candidate_id: None,
                base_size: b_size,
                candidate_size: 0,
                size_delta: delta(b_size, 0),
                base_life: life(ba, t),
                candidate_life: None,
                life_changed: false,
                peak_effect_bytes: delta(b_held, 0),
            }),
        }
    }
    for (u, key) in ctk.iter().enumerate() {
        if bt_pos.contains_key(key) {
            continue;
        }
        let c_size = cm.tensors.aligned.get(u).copied().unwrap_or(0);
        one_side_tensors.push(TensorDiff {
            source: key.0.clone(),
            slot: key.1.clone(),
            base_id: None,
            candidate_id: cm.tensors.id.get(u).copied(),
            base_size: 0,
            candidate_size: c_size,
            size_delta: delta(0, c_size),
            base_life: None,
            candidate_life: life(ca, u),
            life_changed: false,
            peak_effect_bytes: delta(0, held_at(ca, cm, u, cpeak)),
        });
    }
    changed_tensors.sort_by(effect_order);
    one_side_tensors.sort_by(effect_order);
    let differences = (only_base_nodes.len()
        + only_candidate_nodes.len()
        + node_differences.len()
        + changed_tensors.len()
        + one_side_tensors.len()) as u64;
    SomasComparison {
        peak_in_use_delta_bytes: delta(base.peak_in_use, candidate.peak_in_use),
        upper_bound_delta_bytes: delta(base.upper_bound, candidate.upper_bound),
        reused_delta_bytes: delta(base.reused, candidate.reused),
        base,
        candidate,
        nodes_matched: pairs.len() as u64,
        nodes_matched_by_order: by_order,
        only_base_nodes,
        only_candidate_nodes,
        node_differences,
        changed_tensors,
        one_side_tensors,
        tensors_matched,
        differences,
    }
}
