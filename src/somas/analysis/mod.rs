//! Everything derived from a model (and an optional task-info file): in-use and total curves,
//! the peak, the overview figures of somas_tool, reuse ratios, memory frames, the overwrite check
//! and the task-info address check.
//!
//! In-use memory follows MindSpore's own convention (the one its planner uses for its lower bound
//! and its profiler for the memory curve): inclusive lifetimes, lifelong widening, each union
//! group counted once (its largest member over the union of the members' lifetimes), control and
//! zero-size tensors skipped.

pub mod conflicts;
pub mod queries;
pub mod summary;

use crate::somas::model::{Lifelong, SomasModel, INPUT_PARAM, NONE};
use crate::somas::task_info::TaskInfo;
use conflicts::Conflicts;
use serde::Serialize;

/// The node with the largest in-use memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Peak {
    /// Execution index.
    pub index: u32,
    /// Node row, or [`NONE`] when no node has that index (formats without node lists).
    pub node_row: u32,
    /// In-use bytes there (tensors only, without static memory).
    pub in_use: u64,
    /// Number of tensors (union groups once) alive there.
    pub alive: u32,
}

/// The highest end offset among tensors that are not stacked lifelong tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MaxAddress {
    /// End offset (exclusive).
    pub end: u64,
    /// Tensor row reaching it.
    pub tensor_row: u32,
    /// Its owner node row, or [`NONE`].
    pub node_row: u32,
}

/// A named reuse ratio with its formula.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratio {
    /// Stable name (JSON key).
    pub name: &'static str,
    /// How it is computed, in the names of the JSON figures.
    pub formula: &'static str,
    /// The value in `[0, 1]` (or beyond for odd inputs); `None` when a denominator is 0.
    pub value: Option<f64>,
}

/// Sums of aligned sizes by lifelong kind (union groups once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LifelongBytes {
    /// Non-contiguous GraphAll tensors: excluded from reuse and stacked on top of the block.
    pub stacked: u64,
    /// All GraphAll tensors.
    pub graph_all: u64,
    /// GraphStart tensors.
    pub graph_start: u64,
    /// GraphEnd tensors.
    pub graph_end: u64,
}

/// What a task-info file says about the plan.
#[derive(Debug, Clone, Default)]
pub struct TaskMatch {
    /// Task record of each node row, or [`NONE`].
    pub record_of_node: Vec<u32>,
    /// Task address of each tensor row (0 when unknown).
    pub tensor_addr: Vec<u64>,
    /// Task size of each tensor row (0 when unknown).
    pub tensor_size: Vec<u64>,
    /// SOMAS base address: the most common `task address − offset`.
    pub base: Option<u64>,
    /// Tensor rows whose task address is not `base + offset`.
    pub mismatches: Vec<u32>,
    /// Records that match no node.
    pub unmatched_records: u64,
    /// Smallest and largest task address (`address + size`).
    pub address_range: Option<(u64, u64)>,
}

/// Everything derived from a model.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Last execution index of the time axis.
    pub max_index: u32,
    /// Widened lifetime start of each tensor row.
    pub lo: Vec<u32>,
    /// Widened lifetime end of each tensor row (inclusive).
    pub hi: Vec<u32>,
    /// Tensor rows counted in the curves: occupying tensors outside unions, and union heads.
    pub counted: Vec<bool>,
    /// In-use bytes at each index `0..=max_index` (static memory excluded).
    pub in_use: Vec<u64>,
    /// Bytes allocated up to each index without reuse (static memory excluded).
    pub total: Vec<u64>,
    /// Tensors (union groups once) alive at each index.
    pub alive: Vec<u32>,
    /// Static input memory: the sum of the parameters' sizes.
    pub static_bytes: u64,
    /// The peak in-use node.
    pub peak: Option<Peak>,
    /// Sum of aligned sizes of data tensors, union groups once (memory without reuse).
    pub upper_bound: u64,
    /// The dump's "Total Memory Size after reused", else the largest end offset.
    pub reused: u64,
    /// True when `reused` comes from the dump's total line.
    pub reused_from_dump: bool,
    /// Lifelong sums.
    pub lifelong: LifelongBytes,
    /// Max address without stacked lifelong tensors.
    pub max_address_without_lifelong: Option<MaxAddress>,
    /// Smallest effective start and largest effective end offset of SOMAS tensors.
    pub somas_range: Option<(u64, u64)>,
    /// Address base added to offsets (task-info base, else r1.x address column, else 0).
    pub base: u64,
    /// Where `base` comes from: `task-info`, `dump` or `none`.
    pub base_source: &'static str,
    /// Parameter addresses (0 when unknown): r1.x `start_addr`, or task-info inputs.
    pub param_addr: Vec<u64>,
    /// Reuse ratios.
    pub ratios: Vec<Ratio>,
    /// Overwrite conflicts.
    pub conflicts: Conflicts,
    /// Task-info comparison, when a task-info file was given.
    pub task: Option<TaskMatch>,
}

impl Analysis {
    /// Address of tensor row `row`: base + offset.
    pub fn address(&self, model: &SomasModel, row: u32) -> u64 {
        self.base
            .saturating_add(model.tensors.offset.get(row as usize).copied().unwrap_or(0))
    }

    /// Tensor rows alive at execution index `index` (data tensors with aligned > 0, union members
    /// each), sorted by offset then id: the memory frame of that node.
    pub fn frame(&self, model: &SomasModel, index: u32) -> Vec<u32> {
        let mut rows: Vec<u32> = (0..model.tensors.len() as u32)
            .filter(|&t| {
                model.occupies(t)
                    && self.lo.get(t as usize).is_some_and(|&l| l <= index)
                    && self.hi.get(t as usize).is_some_and(|&h| h >= index)
            })
            .collect();
        rows.sort_by_key(|&t| {
            (
                model.tensors.offset.get(t as usize).copied().unwrap_or(0),
                t,
            )
        });
        rows
    }

    /// In-use bytes at `index` (0 outside the axis).
    pub fn in_use_at(&self, index: u32) -> u64 {
        self.in_use.get(index as usize).copied().unwrap_or(0)
    }

    /// Bytes allocated without reuse up to `index`.
    pub fn total_at(&self, index: u32) -> u64 {
        self.total.get(index as usize).copied().unwrap_or(0)
    }

    /// Address range of the parameters whose address is known (r1.x dumps, task-info): the
    /// smallest address, the largest address + size, and the sum of their sizes.
    pub fn param_range(&self, model: &SomasModel) -> Option<(u64, u64, u64)> {
        let mut out: Option<(u64, u64, u64)> = None;
        for (&a, &z) in self.param_addr.iter().zip(model.params.size.iter()) {
            if a == 0 {
                continue;
            }
            let (lo, hi, sum) = out.unwrap_or((u64::MAX, 0, 0));
            out = Some((
                lo.min(a),
                hi.max(a.saturating_add(z)),
                sum.saturating_add(z),
            ));
        }
        out
    }

    /// The ratio named `name`.
    pub fn ratio(&self, name: &str) -> Option<f64> {
        self.ratios
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.value)
    }
}

/// Computes every derived figure of `model`, comparing with `task` when given.
pub fn analyze(model: &SomasModel, task: Option<&TaskInfo>) -> Analysis {
    let nt = model.tensors.len();
    let max = model.max_index();
    let mut lo = Vec::with_capacity(nt);
    let mut hi = Vec::with_capacity(nt);
    for t in 0..nt as u32 {
        let (l, h) = model.lifetime(t, max);
        lo.push(l.min(max));
        hi.push(h.min(max));
    }

    // The overwrite check is the longest step and independent of the rest: run it alongside.
    let (conflicts, mut an) = rayon::join(
        || {
            if model.placed {
                conflicts::check(model, &lo, &hi, conflicts::DEFAULT_LIMIT)
            } else {
                Conflicts::default()
            }
        },
        || figures(model, task, max, &lo, &hi),
    );
    an.conflicts = conflicts;
    an.lo = lo;
    an.hi = hi;
    an
}

/// Everything but the overwrite check (left empty) and the lifetimes (left empty).
fn figures(
    model: &SomasModel,
    task: Option<&TaskInfo>,
    max: u32,
    lo: &[u32],
    hi: &[u32],
) -> Analysis {
    let nt = model.tensors.len();
    // Items counted in the curves: (lo, hi, size, lifelong of the representative, row).
    let mut counted = vec![false; nt];
    let mut items: Vec<(u32, u32, u64, u32)> = Vec::with_capacity(nt);
    for t in 0..nt {
        if model.derived.union_group.get(t).copied().unwrap_or(NONE) == NONE
            && model.occupies(t as u32)
        {
            counted[t] = true;
            items.push((lo[t], hi[t], model.tensors.aligned[t], t as u32));
        }
    }
    for group in model.derived.groups.rows() {
        let Some(&head) = group.first() else { continue };
        let size = group
            .iter()
            .map(|&m| model.tensors.aligned.get(m as usize).copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
        if size == 0 {
            continue;
        }
        let l = group
            .iter()
            .filter_map(|&m| lo.get(m as usize))
            .min()
            .copied()
            .unwrap_or(0);
        let h = group
            .iter()
            .filter_map(|&m| hi.get(m as usize))
            .max()
            .copied()
            .unwrap_or(0);
        if let Some(c) = counted.get_mut(head as usize) {
            *c = true;
        }
        items.push((l, h, size, head));
    }

    let len = max as usize + 1;
    let mut d_use = vec![0i128; len + 1];
    let mut d_total = vec![0i128; len + 1];
    let mut d_alive = vec![0i64; len + 1];
    let mut upper_bound: u64 = 0;
    let mut ll = LifelongBytes::default();
    for &(l, h, size, row) in &items {
        let (l, h) = (l as usize, h as usize);
        let s = i128::from(size);
        if let Some(x) = d_use.get_mut(l) {
            *x += s;
        }
        if let Some(x) = d_use.get_mut(h + 1) {
            *x -= s;
        }
        if let Some(x) = d_total.get_mut(l) {
            *x += s;
        }
        if let Some(x) = d_alive.get_mut(l) {
            *x += 1;
        }
        if let Some(x) = d_alive.get_mut(h + 1) {
            *x -= 1;
        }
        upper_bound = upper_bound.saturating_add(size);
        match model.tensors.lifelong.get(row as usize) {
            Some(Lifelong::GraphAll) => {
                ll.graph_all = ll.graph_all.saturating_add(size);
                if model.derived.in_contiguous.get(row as usize) != Some(&true) {
                    ll.stacked = ll.stacked.saturating_add(size);
                }
            }
            Some(Lifelong::GraphStart) => ll.graph_start = ll.graph_start.saturating_add(size),
            Some(Lifelong::GraphEnd) => ll.graph_end = ll.graph_end.saturating_add(size),
            _ => {}
        }
    }
    let clamp = |v: i128| -> u64 { v.clamp(0, i128::from(u64::MAX)) as u64 };
    let mut in_use = Vec::with_capacity(len);
    let mut total = Vec::with_capacity(len);
    let mut alive = Vec::with_capacity(len);
    let (mut u, mut tt, mut a) = (0i128, 0i128, 0i64);
    for i in 0..len {
        u += d_use[i];
        tt += d_total[i];
        a += d_alive[i];
        in_use.push(clamp(u));
        total.push(clamp(tt));
        alive.push(a.clamp(0, i64::from(u32::MAX)) as u32);
    }
    let peak = if items.is_empty() {
        None
    } else {
        let mut best = 0usize;
        for (i, &v) in in_use.iter().enumerate() {
            if v > in_use[best] {
                best = i;
            }
        }
        Some(Peak {
            index: best as u32,
            node_row: model.nodes.row_of_index(best as u32).unwrap_or(NONE),
            in_use: in_use[best],
            alive: alive[best],
        })
    };

    // Address figures over occupying tensors, by effective range.
    let mut somas_lo = u64::MAX;
    let mut somas_hi = 0u64;
    let mut max_addr: Option<MaxAddress> = None;
    for t in 0..nt as u32 {
        if !model.occupies(t) {
            continue;
        }
        let (s, e) = model.effective_range(t);
        somas_lo = somas_lo.min(s);
        somas_hi = somas_hi.max(e);
        let stacked = model.tensors.lifelong.get(t as usize) == Some(&Lifelong::GraphAll)
            && model.derived.in_contiguous.get(t as usize) != Some(&true);
        if !stacked && max_addr.is_none_or(|m| e > m.end) {
            max_addr = Some(MaxAddress {
                end: e,
                tensor_row: t,
                node_row: model.derived.owner.get(t as usize).copied().unwrap_or(NONE),
            });
        }
    }
    let somas_range = (somas_lo <= somas_hi).then_some((somas_lo, somas_hi));
    // Without a total line the block size is the largest end offset, which means nothing when
    // offsets are not solved (offline log): then it stays 0.
    let (reused, reused_from_dump) = match model.reused_total {
        Some(v) => (v, true),
        None if model.placed => (somas_range.map_or(0, |r| r.1), false),
        None => (0, false),
    };

    let static_bytes = model
        .params
        .size
        .iter()
        .fold(0u64, |a, &s| a.saturating_add(s));

    // Addresses: task-info first, else the dump's own address column.
    let task_match = task.map(|ti| match_task(model, ti));
    let (base, base_source) = match task_match.as_ref().and_then(|m| m.base) {
        Some(b) => (b, "task-info"),
        None => match dump_base(model) {
            Some(b) => (b, "dump"),
            None => (0, "none"),
        },
    };
    let mut param_addr = vec![0u64; model.params.id.len()];
    if model.params.addr.len() == param_addr.len() {
        param_addr.clone_from(&model.params.addr);
    }
    if let (Some(ti), Some(m)) = (task, task_match.as_ref()) {
        for (r, &rec) in m.record_of_node.iter().enumerate() {
            if rec == NONE {
                continue;
            }
            for (k, &v) in model.nodes.inputs.row(r).iter().enumerate() {
                if v & INPUT_PARAM == 0 {
                    continue;
                }
                let p = (v & !INPUT_PARAM) as usize;
                if let (Some(slot), Some((addr, _))) =
                    (param_addr.get_mut(p), ti.inputs.get(rec as usize, k))
                {
                    if *slot == 0 && addr != 0 {
                        *slot = addr;
                    }
                }
            }
        }
    }

    let peak_use = peak.map_or(0, |p| p.in_use);
    let div = |a: f64, b: f64| (b != 0.0).then(|| a / b);
    let (r, ub, pk, lb) = (
        reused as f64,
        upper_bound as f64,
        peak_use as f64,
        ll.stacked as f64,
    );
    let ratios = vec![
        Ratio {
            name: "somas_tool_reuse_ratio",
            formula: "1 - peak.in_use_bytes / upper_bound_bytes",
            value: div(pk, ub).map(|x| 1.0 - x),
        },
        Ratio {
            name: "reuse_ratio",
            formula: "1 - reused_bytes / upper_bound_bytes",
            value: div(r, ub).map(|x| 1.0 - x),
        },
        Ratio {
            name: "reuse_ratio_without_lifelong",
            formula: "1 - (reused_bytes - lifelong_bytes) / (upper_bound_bytes - lifelong_bytes)",
            value: div(r - lb, ub - lb).map(|x| 1.0 - x),
        },
        Ratio {
            name: "solver_efficiency",
            formula: "peak.in_use_bytes / reused_bytes",
            value: div(pk, r),
        },
    ];

    Analysis {
        max_index: max,
        lo: Vec::new(),
        hi: Vec::new(),
        counted,
        in_use,
        total,
        alive,
        static_bytes,
        peak,
        upper_bound,
        reused,
        reused_from_dump,
        lifelong: ll,
        max_address_without_lifelong: max_addr,
        somas_range,
        base,
        base_source,
        param_addr,
        ratios,
        conflicts: Conflicts::default(),
        task: task_match,
    }
}

/// The most common value of `values` (ties: the smallest).
fn mode(mut values: Vec<u64>) -> Option<u64> {
    values.sort_unstable();
    let mut best: Option<(u64, usize)> = None;
    for run in values.chunk_by(|a, b| a == b) {
        if let Some(&v) = run.first() {
            if best.is_none_or(|(_, n)| run.len() > n) {
                best = Some((v, run.len()));
            }
        }
    }
    best.map(|(v, _)| v)
}

/// Base address from the dump's own address column (r1.x `allocate_info`, `mem_info`).
fn dump_base(model: &SomasModel) -> Option<u64> {
    let t = &model.tensors;
    if t.addr.len() != t.len() || !model.placed {
        return None;
    }
    mode(
        (0..t.len())
            .filter(|&r| t.aligned[r] > 0 && t.addr[r] != 0)
            .map(|r| t.addr[r].wrapping_sub(t.offset[r]))
            .collect(),
    )
}

/// Matches task records to nodes by name (full name, else the split name of ≤ v2.3 dumps;
/// `-NonTask` records by their op name), in execution order for repeated names.
fn match_task(model: &SomasModel, ti: &TaskInfo) -> TaskMatch {
    let nn = model.nodes.len();
    let nt = model.tensors.len();
    let mut m = TaskMatch {
        record_of_node: vec![NONE; nn],
        tensor_addr: vec![0; nt],
        tensor_size: vec![0; nt],
        address_range: ti.address_range(),
        ..TaskMatch::default()
    };
    // Node rows by name id, in execution order.
    let mut by_name: Vec<(u32, u32)> = model
        .nodes
        .name
        .iter()
        .enumerate()
        .map(|(r, &n)| (n, r as u32))
        .collect();
    by_name.sort_unstable();
    let mut used = vec![false; nn];
    for rec in 0..ti.len() {
        let full = ti.name(rec);
        let name = full.strip_suffix("-NonTask").unwrap_or(full);
        let candidates = [name, crate::somas::model::split_name(name)];
        let mut found = None;
        for c in candidates {
            let Some(id) = model.names.find(c) else {
                continue;
            };
            let start = by_name.partition_point(|p| p.0 < id);
            let pick = by_name
                .get(start..)
                .unwrap_or(&[])
                .iter()
                .take_while(|p| p.0 == id)
                .find(|p| !used.get(p.1 as usize).copied().unwrap_or(true));
            if let Some(p) = pick {
                found = Some(p.1);
                break;
            }
        }
        match found {
            Some(r) => {
                used[r as usize] = true;
                m.record_of_node[r as usize] = rec as u32;
                for (k, &t) in model.nodes.outputs.row(r as usize).iter().enumerate() {
                    if let Some((a, z)) = ti.outputs.get(rec, k) {
                        set_task(&mut m, t, a, z);
                    }
                }
                for (k, &t) in model.nodes.workspace.row(r as usize).iter().enumerate() {
                    if let Some((a, z)) = ti.workspaces.get(rec, k) {
                        set_task(&mut m, t, a, z);
                    }
                }
            }
            None => m.unmatched_records += 1,
        }
    }
    let t = &model.tensors;
    m.base = mode(
        (0..nt)
            .filter(|&r| t.aligned[r] > 0 && m.tensor_addr[r] != 0)
            .map(|r| m.tensor_addr[r].wrapping_sub(t.offset[r]))
            .collect(),
    );
    if let Some(base) = m.base {
        m.mismatches = (0..nt as u32)
            .filter(|&r| {
                let r = r as usize;
                t.aligned[r] > 0
                    && m.tensor_addr[r] != 0
                    && m.tensor_addr[r] != base.wrapping_add(t.offset[r])
            })
            .collect();
    }
    m
}

fn set_task(m: &mut TaskMatch, t: u32, addr: u64, size: u64) {
    if let (Some(a), Some(z)) = (
        m.tensor_addr.get_mut(t as usize),
        m.tensor_size.get_mut(t as usize),
    ) {
        if *a == 0 {
            *a = addr;
            *z = size;
        }
    }
}

/// Rectangle classes of [`tensor_rects`], in drawing priority (higher wins in a merged pixel).
pub mod rect_class {
    /// An ordinary tensor.
    pub const PLAIN: u8 = 0;
    /// A member of a contiguous list.
    pub const CONTIGUOUS: u8 = 1;
    /// A member of a union group.
    pub const UNION: u8 = 2;
    /// A lifelong tensor (GraphAll, GraphStart, GraphEnd).
    pub const LIFELONG: u8 = 3;
    /// A tensor in an overwrite conflict.
    pub const CONFLICT: u8 = 4;
}

/// The tensor layout as rectangles for the views: x = widened lifetime `[lo, hi + 1)` in
/// execution indices, y = effective byte range (offsets), id = tensor row.
pub fn tensor_rects(model: &SomasModel, an: &Analysis) -> crate::chart::RectSet {
    rects_classed(model, an, |t, in_conflict| {
        match property_of(model, t, in_conflict) {
            Some(Property::Conflict) => rect_class::CONFLICT,
            Some(Property::Lifelong) => rect_class::LIFELONG,
            Some(Property::Union) => rect_class::UNION,
            Some(Property::Contiguous) => rect_class::CONTIGUOUS,
            None => rect_class::PLAIN,
        }
    })
}

/// One rectangle per tensor that occupies memory, in row order, classed by `class_of(row,
/// in_conflict)`: the one shape behind [`tensor_rects`] and [`layout_rects`].
fn rects_classed(
    model: &SomasModel,
    an: &Analysis,
    class_of: impl Fn(u32, bool) -> u8,
) -> crate::chart::RectSet {
    let in_conflict = conflict_rows(model, an);
    let n = model.tensors.len();
    let mut rects = crate::chart::RectSet::with_capacity(n);
    for t in 0..n as u32 {
        if !model.occupies(t) {
            continue;
        }
        let r = t as usize;
        let lo = i64::from(an.lo.get(r).copied().unwrap_or(0));
        let hi = i64::from(an.hi.get(r).copied().unwrap_or(0)) + 1;
        let class = class_of(t, in_conflict.get(r).copied().unwrap_or(false));
        rects.push((lo, hi), model.effective_range(t), class, t);
    }
    rects
}

/// The property of a tensor that outranks its type in both class schemes, highest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Property {
    Conflict,
    Lifelong,
    Union,
    Contiguous,
}

/// The highest-ranking [`Property`] of tensor row `t`, if any.
fn property_of(model: &SomasModel, t: u32, in_conflict: bool) -> Option<Property> {
    let r = t as usize;
    if in_conflict {
        Some(Property::Conflict)
    } else if model
        .tensors
        .lifelong
        .get(r)
        .is_some_and(|l| *l != Lifelong::None)
    {
        Some(Property::Lifelong)
    } else if model.derived.union_group.get(r).is_some_and(|&g| g != NONE) {
        Some(Property::Union)
    } else if model.derived.in_contiguous.get(r) == Some(&true) {
        Some(Property::Contiguous)
    } else {
        None
    }
}

/// Classes of [`layout_rects`]: the tensor type, then the properties that matter more than the
/// type (communication lists, unions, lifelong tensors, conflicts), in drawing priority (higher
/// wins in a merged pixel, so conflicts always show).
pub mod layout_class {
    /// `Common` outputs (and r1.x types not listed below).
    pub const OUTPUT: u8 = 0;
    /// `OutputOnly`: outputs nobody consumes.
    pub const OUTPUT_ONLY: u8 = 1;
    /// `Workspace`.
    pub const WORKSPACE: u8 = 2;
    /// Graph inputs/outputs, summary inputs, `GetNextOutput`, ref-node tensors, `Union`/`Unknown`
    /// types that occupy memory.
    pub const GRAPH_IO: u8 = 3;
    /// Members of an original contiguous list (communication operators).
    pub const CONTIGUOUS: u8 = 4;
    /// Members of a union group (share memory with the group by design).
    pub const UNION: u8 = 5;
    /// Lifelong tensors (GraphAll, GraphStart, GraphEnd).
    pub const LIFELONG: u8 = 6;
    /// Tensors in an overwrite conflict.
    pub const CONFLICT: u8 = 7;
    /// Legend text of each class, by class number.
    pub const NAMES: [&str; 8] = [
        "output",
        "output only (no consumer)",
        "workspace",
        "graph input/output, other",
        "contiguous (communication)",
        "union (shared by design)",
        "lifelong",
        "overwrite conflict",
    ];
}

/// Marks the tensor rows that take part in an overwrite conflict.
pub fn conflict_rows(model: &SomasModel, an: &Analysis) -> Vec<bool> {
    let mut in_conflict = vec![false; model.tensors.len()];
    for &(a, b) in &an.conflicts.pairs {
        for t in [a, b] {
            if let Some(x) = in_conflict.get_mut(t as usize) {
                *x = true;
            }
        }
    }
    in_conflict
}

/// The [`layout_class`] of tensor row `t` (`in_conflict` from [`conflict_rows`]).
pub fn layout_class_of(model: &SomasModel, t: u32, in_conflict: bool) -> u8 {
    use crate::somas::model::TensorKind as K;
    match property_of(model, t, in_conflict) {
        Some(Property::Conflict) => layout_class::CONFLICT,
        Some(Property::Lifelong) => layout_class::LIFELONG,
        Some(Property::Union) => layout_class::UNION,
        Some(Property::Contiguous) => layout_class::CONTIGUOUS,
        None => match model.tensors.kind.get(t as usize) {
            Some(K::Workspace) => layout_class::WORKSPACE,
            Some(K::OutputOnly) => layout_class::OUTPUT_ONLY,
            Some(K::Common) | None => layout_class::OUTPUT,
            Some(_) => layout_class::GRAPH_IO,
        },
    }
}

/// The tensor layout as [`tensor_rects`] gives it (same rectangles, same order), classed by
/// [`layout_class`] so the views can colour tensors by type.
pub fn layout_rects(model: &SomasModel, an: &Analysis) -> crate::chart::RectSet {
    rects_classed(model, an, |t, in_conflict| {
        layout_class_of(model, t, in_conflict)
    })
}
