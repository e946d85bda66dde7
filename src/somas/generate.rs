//! Deterministic generator of realistic SOMAS dumps (and their task-info files) of any size, for
//! tests and benchmarks: `memlens generate somas` and [`generate`] in memory.
//!
//! The graph looks like a training step: GetNext outputs (lifelong, stacked on top), a chain of
//! compute nodes with skip connections, parameters and workspaces, communication blocks
//! (Send/Recv events, AllReduce on a second stream with contiguous input and output lists that
//! carry the Ascend 512-byte gap and the +512 head shift), ref ops (union pairs sharing one
//! offset), atomic-clean / MemSet nodes that list tensors produced by the next node, repeated
//! nodes, GraphStart/GraphEnd tensors, a zero-size graph output and a ref to a parameter. Offsets
//! come from a best-fit allocator over inclusive widened lifetimes, so the plan is valid: every
//! trap is present and none is a conflict. `inject_conflicts` then moves that many workspaces onto
//! a tensor alive at the same node, which makes exactly those pairs conflicts.
//!
//! Why one file of ~1,060 lines: the generator builds one consistent plan — graph, lifetimes,
//! contiguous lists and unions, offsets, injected conflicts, then the dump and task-info text —
//! and every stage reads the state the previous ones built; the stages are separate functions
//! here, in the order they run.

use super::derive::{widened, GAP};
use super::lex::ascend_align;
use super::model::{Lifelong, TensorKind};
use std::collections::{BTreeMap, BTreeSet};

/// Dump flavor: which MindSpore layout the generated dump is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// v1.10: control tensors printed as `%nT … Control`.
    V110,
    /// v2.0–2.3: `%nCT` control tensors, split names.
    V20,
    /// v2.4+: full scope names, MemSet clean ops.
    V24,
    /// r1.x `somas_allocate_info`: real addresses, bool lifelong, no control lists.
    R1Allocate,
}

impl Flavor {
    /// Parses `v1.10`, `v2.0` (or `v2.3`), `v2.4`, `r1`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.trim_start_matches('v') {
            "1.10" | "1_10" => Flavor::V110,
            "2.0" | "2.1" | "2.2" | "2.3" | "2.0-2.3" => Flavor::V20,
            "2.4" | "2.4+" => Flavor::V24,
            "r1" | "r1.x" | "r1-allocate" => Flavor::R1Allocate,
            _ => return None,
        })
    }

    /// The conventional file name of the dump.
    pub fn file_name(self) -> &'static str {
        match self {
            Flavor::R1Allocate => "somas_allocate_info_1.ir",
            _ => "Ascend_somas_tensor_offset_1.ir",
        }
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenConfig {
    /// Dump flavor.
    pub flavor: Flavor,
    /// Approximate number of nodes (at least 16).
    pub nodes: u32,
    /// PRNG seed: the same config gives the same bytes.
    pub seed: u64,
    /// Number of overwrite conflicts to inject.
    pub inject_conflicts: u32,
    /// Also write the matching `task_info_graph` file.
    pub task_info: bool,
}

/// Counts of the traps the dump contains (none of which is a conflict).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traps {
    /// Contiguous lists with the Ascend gap.
    pub contiguous_lists: u32,
    /// Union (ref) pairs.
    pub union_groups: u32,
    /// Atomic-clean / MemSet nodes.
    pub clean_ops: u32,
    /// Repeated nodes.
    pub repeated_nodes: u32,
    /// Lifelong tensors (GraphAll, GraphStart, GraphEnd).
    pub lifelong: u32,
}

/// A generated dump.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The dump text.
    pub dump: Vec<u8>,
    /// The task-info text, when asked for.
    pub task_info: Option<Vec<u8>>,
    /// Injected conflicts as tensor-id pairs `(a, b)`, `a < b`, sorted.
    pub injected: Vec<(u32, u32)>,
    /// Node count.
    pub nodes: u32,
    /// Data tensor count.
    pub tensors: u32,
    /// Total Memory Size after reused.
    pub reused: u64,
    /// The traps it contains.
    pub traps: Traps,
    /// The tensor made larger ([`generate_grown`]), if any.
    pub grown: Option<Grown>,
}

/// A tensor [`generate_grown`] made larger than the plan it was placed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grown {
    /// Tensor id.
    pub tensor: u32,
    /// Execution index of its node (a workspace lives at that node only).
    pub node_index: u32,
    /// Aligned size before.
    pub aligned_before: u64,
    /// Aligned size after.
    pub aligned_after: u64,
}

struct GNode {
    op: &'static str,
    op_id: u32,
    scope: u32,
    kind: u8,
    stream: u32,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    workspace: Vec<u32>,
    ctrl_in: Vec<u32>,
    ctrl_out: Vec<u32>,
}

struct GTensor {
    orig: u64,
    aligned: u64,
    kind: TensorKind,
    lifelong: Lifelong,
    start: u32,
    end: u32,
    node: u32,
    offset: u64,
    special: bool,
}

const PARAM: u32 = 1 << 31;

struct Builder {
    rng: fastrand::Rng,
    flavor: Flavor,
    nodes: Vec<GNode>,
    tensors: Vec<GTensor>,
    params: Vec<(u64, String)>,
    unions: Vec<Vec<u32>>,
    contiguous: Vec<Vec<u32>>,
    controls: Vec<(u32, u32)>,
    next_op: u32,
    traps: Traps,
}

impl Builder {
    fn node(&mut self, op: &'static str, kind: u8, stream: u32) -> u32 {
        self.next_op += 1;
        let scope = self.rng.u32(0..64);
        self.nodes.push(GNode {
            op,
            op_id: self.next_op,
            scope,
            kind,
            stream,
            inputs: Vec::new(),
            outputs: Vec::new(),
            workspace: Vec::new(),
            ctrl_in: Vec::new(),
            ctrl_out: Vec::new(),
        });
        (self.nodes.len() - 1) as u32
    }

    fn size(&mut self) -> u64 {
        let r = self.rng.u32(0..100);
        let base = match r {
            0..=39 => self.rng.u64(1..64) * 512,
            40..=79 => self.rng.u64(64..2048) * 512,
            80..=97 => self.rng.u64(2048..16384) * 512,
            _ => self.rng.u64(16384..131072) * 512,
        };
        // Device formats are not always 512-multiples.
        base - 2 * self.rng.u64(0..4)
    }

    fn tensor(&mut self, node: u32, kind: TensorKind, orig: u64) -> u32 {
        let id = self.tensors.len() as u32;
        self.tensors.push(GTensor {
            orig,
            aligned: ascend_align(orig),
            kind,
            lifelong: Lifelong::None,
            start: node,
            end: node,
            node,
            offset: 0,
            special: false,
        });
        id
    }

    fn output(&mut self, node: u32) -> u32 {
        let orig = self.size();
        let t = self.tensor(node, TensorKind::OutputOnly, orig);
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.outputs.push(t);
        }
        t
    }

    fn consume(&mut self, node: u32, t: u32) {
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.inputs.push(t);
        }
        if let Some(x) = self.tensors.get_mut(t as usize) {
            x.end = x.end.max(node);
            if x.kind == TensorKind::OutputOnly {
                x.kind = TensorKind::Common;
            }
        }
    }

    fn param(&mut self, node: u32) {
        // Weights are shared (layers reuse them, optimizers read them again): a new parameter
        // one time in eight keeps the static memory in a realistic proportion to activations.
        let p = if !self.params.is_empty() && self.rng.u32(0..8) != 0 {
            self.rng.u32(0..self.params.len() as u32)
        } else {
            let size = self.rng.u64(1..2048) * 512 - 2 * self.rng.u64(0..4);
            let id = self.params.len();
            self.params
                .push((size, format!("layer{}.weight{}", id / 2, id % 2)));
            id as u32
        };
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.inputs.push(p | PARAM);
        }
    }
}

/// Best-fit allocator with coalescing; `top` grows when nothing fits.
struct Alloc {
    by_off: BTreeMap<u64, u64>,
    by_size: BTreeSet<(u64, u64)>,
    top: u64,
}

impl Alloc {
    fn alloc(&mut self, size: u64) -> u64 {
        if let Some(&(z, off)) = self.by_size.range((size, 0)..).next() {
            self.by_size.remove(&(z, off));
            self.by_off.remove(&off);
            if z > size {
                self.insert(off + size, z - size);
            }
            return off;
        }
        // Extend a free block that touches the top.
        if let Some((&off, &z)) = self.by_off.iter().next_back() {
            if off + z == self.top {
                self.by_off.remove(&off);
                self.by_size.remove(&(z, off));
                self.top = off + size;
                return off;
            }
        }
        let off = self.top;
        self.top += size;
        off
    }

    fn insert(&mut self, off: u64, size: u64) {
        self.by_off.insert(off, size);
        self.by_size.insert((size, off));
    }

    fn free(&mut self, mut off: u64, mut size: u64) {
        if let Some((&po, &pz)) = self.by_off.range(..off).next_back() {
            if po + pz == off {
                self.by_off.remove(&po);
                self.by_size.remove(&(pz, po));
                off = po;
                size += pz;
            }
        }
        if let Some(&nz) = self.by_off.get(&(off + size)) {
            self.by_off.remove(&(off + size));
            self.by_size.remove(&(nz, off + size));
            size += nz;
        }
        self.insert(off, size);
    }
}

/// Generates a dump (deterministic for a given config).
pub fn generate(cfg: &GenConfig) -> Generated {
    generate_grown(cfg, 0)
}

/// Generates the dump of `cfg` with one change when `grow > 0`: the first plain workspace (one
/// node's lifetime, not in a union, contiguous list or injected conflict) at or after the middle
/// of the execution order gets `grow` more bytes and moves to the top of the block, so the plan
/// stays free of overlaps and "Total Memory Size after reused" grows by its new size. Everything
/// else is byte-for-byte what [`generate`] writes for `cfg`; [`Generated::grown`] says which
/// tensor changed.
pub fn generate_grown(cfg: &GenConfig, grow: u64) -> Generated {
    let mut b = Builder {
        rng: fastrand::Rng::with_seed(cfg.seed),
        flavor: cfg.flavor,
        nodes: Vec::new(),
        tensors: Vec::new(),
        params: Vec::new(),
        unions: Vec::new(),
        contiguous: Vec::new(),
        controls: Vec::new(),
        next_op: 0,
        traps: Traps::default(),
    };
    let target = cfg.nodes.max(16);
    let r1 = cfg.flavor == Flavor::R1Allocate;
    let clean_name = if cfg.flavor == Flavor::V24 {
        "MemSet"
    } else {
        "AtomicAddrClean"
    };

    // GetNext: data and label, GraphAll.
    let getnext = b.node("GetNext", 0, 0);
    let data = b.output(getnext);
    let label = b.output(getnext);
    for t in [data, label] {
        if let Some(x) = b.tensors.get_mut(t as usize) {
            x.lifelong = Lifelong::GraphAll;
            x.special = true;
            if r1 {
                x.kind = TensorKind::GetNextOutput;
            }
        }
    }
    b.traps.lifelong += 2;
    let mut main = data;
    let mut recent: Vec<u32> = vec![data];
    let ops = [
        "Conv2D",
        "ReLU",
        "MatMul",
        "BiasAdd",
        "Add",
        "Mul",
        "LayerNorm",
        "Softmax",
        "Cast",
        "Transpose",
    ];
    let mut k: u32 = 0;
    while (b.nodes.len() as u32) < target.saturating_sub(3) {
        k += 1;
        if k % 701 == 0 {
            // Repeated node (multi-called subgraph): the same tensors again, lifetimes extended.
            if let Some(prev) = b.nodes.last() {
                if prev.op != "AllReduce"
                    && prev.kind == 0
                    && !prev.outputs.is_empty()
                    && prev.op != clean_name
                {
                    let (op, op_id, scope) = (prev.op, prev.op_id, prev.scope);
                    let (ins, outs, ws) = (
                        prev.inputs.clone(),
                        prev.outputs.clone(),
                        prev.workspace.clone(),
                    );
                    let idx = b.nodes.len() as u32;
                    b.nodes.push(GNode {
                        op,
                        op_id,
                        scope,
                        kind: 0,
                        stream: 0,
                        inputs: ins.clone(),
                        outputs: outs.clone(),
                        workspace: ws.clone(),
                        ctrl_in: Vec::new(),
                        ctrl_out: Vec::new(),
                    });
                    for t in ins.iter().chain(&outs).chain(&ws) {
                        if t & PARAM == 0 {
                            if let Some(x) = b.tensors.get_mut(*t as usize) {
                                x.end = x.end.max(idx);
                                x.special = true;
                            }
                        }
                    }
                    b.traps.repeated_nodes += 1;
                    continue;
                }
            }
        }
        if k % 50 == 0 {
            // Communication block: events around an AllReduce on stream 1 with contiguous lists.
            let send = b.node("StreamSend", 0, 0);
            let recv = b.node("StreamRecv", 0, 1);
            let ar = b.node("AllReduce", 1, 1);
            let mut ins = vec![main];
            for &c in recent.iter().rev().take(8) {
                if ins.len() > b.rng.usize(0..3) {
                    break;
                }
                let ok = b.tensors.get(c as usize).is_some_and(|x| !x.special) && !ins.contains(&c);
                if ok {
                    ins.push(c);
                }
            }
            if b.tensors.get(main as usize).is_some_and(|x| x.special) {
                ins.retain(|&t| t != main);
            }
            let mut outs = Vec::new();
            for &t in &ins {
                b.consume(ar, t);
                if let Some(x) = b.tensors.get_mut(t as usize) {
                    x.special = true;
                }
                let o = b.output(ar);
                if let Some(x) = b.tensors.get_mut(o as usize) {
                    x.special = true;
                }
                outs.push(o);
            }
            for list in [&ins, &outs] {
                if list.is_empty() {
                    continue;
                }
                // Ascend adds its 512-byte gap to the first and the last tensor of each list.
                let first = list[0];
                let last = list[list.len() - 1];
                if let Some(x) = b.tensors.get_mut(first as usize) {
                    x.aligned += GAP;
                }
                if let Some(x) = b.tensors.get_mut(last as usize) {
                    x.aligned += GAP;
                }
                b.contiguous.push(list.clone());
                b.traps.contiguous_lists += 1;
            }
            let send2 = b.node("StreamSend", 0, 1);
            let recv2 = b.node("StreamRecv", 0, 0);
            let _ = (send, recv, send2, recv2);
            if let Some(&o) = outs.first() {
                main = o;
            }
            recent.extend(outs.iter().skip(1));
            continue;
        }
        if k % 80 == 0 {
            // Ref op: output Y is a ref to input X, a union pair sharing X's memory.
            let x = main;
            let plain = b.tensors.get(x as usize).is_some_and(|t| !t.special);
            if plain {
                let n = b.node("Assign", 0, 0);
                b.consume(n, x);
                b.param(n);
                let orig = b.tensors.get(x as usize).map_or(512, |t| t.orig);
                let y = b.tensor(n, TensorKind::Union, orig);
                if let Some(nn) = b.nodes.get_mut(n as usize) {
                    nn.outputs.push(y);
                }
                for t in [x, y] {
                    if let Some(tt) = b.tensors.get_mut(t as usize) {
                        tt.kind = TensorKind::Union;
                        tt.special = true;
                    }
                }
                if r1 {
                    if let Some(tt) = b.tensors.get_mut(x as usize) {
                        tt.kind = TensorKind::RefNodeInput;
                    }
                    if let Some(tt) = b.tensors.get_mut(y as usize) {
                        tt.kind = TensorKind::RefNodeOutput;
                    }
                }
                b.unions.push(vec![x, y]);
                b.traps.union_groups += 1;
                main = y;
                continue;
            }
        }
        if k % 60 == 0 {
            // Atomic clean before the next node: it lists that node's outputs (produced later).
            let clean = b.node(clean_name, 0, 0);
            b.traps.clean_ops += 1;
            let op = ops[b.rng.usize(0..ops.len())];
            let n = b.node(op, 0, 0);
            b.consume(n, main);
            let o = b.output(n);
            if let Some(c) = b.nodes.get_mut(clean as usize) {
                c.inputs.push(o);
            }
            main = o;
            recent.push(o);
            continue;
        }
        let op = ops[b.rng.usize(0..ops.len())];
        let n = b.node(op, 0, 0);
        b.consume(n, main);
        if b.rng.u32(0..4) == 0 && recent.len() > 2 {
            let back = b.rng.usize(1..recent.len().min(64));
            let skip = recent[recent.len() - back];
            if skip != main {
                b.consume(n, skip);
            }
        }
        for _ in 0..b.rng.u32(0..3) {
            b.param(n);
        }
        let o = b.output(n);
        if b.rng.u32(0..10) == 0 {
            let o2 = b.output(n);
            recent.push(o2);
        }
        if b.rng.u32(0..10) < 3 {
            let orig = b.size();
            let w = b.tensor(n, TensorKind::Workspace, orig);
            if let Some(nn) = b.nodes.get_mut(n as usize) {
                nn.workspace.push(w);
            }
        }
        if !r1 && b.rng.u32(0..1000) == 0 {
            if let Some(x) = b.tensors.get_mut(o as usize) {
                x.lifelong = if cfg.flavor == Flavor::V24 || b.rng.bool() {
                    Lifelong::GraphEnd
                } else {
                    Lifelong::GraphStart
                };
                x.special = true;
                b.traps.lifelong += 1;
            }
        }
        main = o;
        recent.push(o);
        if recent.len() > 256 {
            recent.drain(..128);
        }
    }
    // Loss (uses the label), graph output, and a ref to a parameter.
    let loss = b.node("SoftmaxCrossEntropyWithLogits", 0, 0);
    b.consume(loss, main);
    b.consume(loss, label);
    let l = b.output(loss);
    let mean = b.node("ReduceMean", 0, 0);
    b.consume(mean, l);
    let out_orig = 4;
    let g = b.tensor(
        mean,
        if r1 {
            TensorKind::OutputOnly
        } else {
            TensorKind::GraphOutput
        },
        out_orig,
    );
    if let Some(x) = b.tensors.get_mut(g as usize) {
        x.aligned = if r1 { ascend_align(out_orig) } else { 0 };
    }
    if let Some(n) = b.nodes.get_mut(mean as usize) {
        n.outputs.push(g);
    }
    let assign = b.node("AssignAdd", 0, 0);
    b.param(assign);
    b.param(assign);
    let gi = b.tensor(
        assign,
        if r1 {
            TensorKind::RefNodeOutput
        } else {
            TensorKind::GraphInput
        },
        4,
    );
    if let Some(x) = b.tensors.get_mut(gi as usize) {
        x.aligned = 0;
    }
    if let Some(n) = b.nodes.get_mut(assign as usize) {
        n.outputs.push(gi);
    }

    let max = (b.nodes.len() as u32).saturating_sub(1);
    let reused = place(&mut b, max);
    let injected = inject(&mut b, max, cfg.inject_conflicts);
    let (grown, reused) = grow_workspace(&mut b, max, grow, reused);
    control_tensors(&mut b);
    let dump = write_dump(&b, cfg.flavor, reused);
    let task_info = cfg.task_info.then(|| write_task_info(&b, reused));
    Generated {
        dump,
        task_info,
        injected,
        nodes: b.nodes.len() as u32,
        tensors: b.tensors.len() as u32,
        reused,
        traps: b.traps,
        grown,
    }
}

/// The change of [`generate_grown`]; returns it and the new total after reuse.
fn grow_workspace(b: &mut Builder, max: u32, grow: u64, reused: u64) -> (Option<Grown>, u64) {
    if grow == 0 {
        return (None, reused);
    }
    let in_list: BTreeSet<u32> = b
        .unions
        .iter()
        .chain(b.contiguous.iter())
        .flatten()
        .copied()
        .collect();
    let pick = (0..b.tensors.len() as u32).find(|&t| {
        !in_list.contains(&t)
            && b.tensors.get(t as usize).is_some_and(|x| {
                x.kind == TensorKind::Workspace
                    && !x.special
                    && x.start == x.end
                    && x.node >= max / 2
                    && x.lifelong == Lifelong::None
            })
    });
    let Some(t) = pick else {
        return (None, reused);
    };
    let Some(x) = b.tensors.get_mut(t as usize) else {
        return (None, reused);
    };
    let before = x.aligned;
    x.orig = x.orig.saturating_add(grow);
    x.aligned = ascend_align(x.orig);
    x.offset = reused;
    x.special = true;
    let g = Grown {
        tensor: t,
        node_index: x.node,
        aligned_before: before,
        aligned_after: x.aligned,
    };
    (Some(g), reused.saturating_add(x.aligned))
}

/// A placement block: (lo, hi, size, members with their offset in the block, is a union).
type Block = (u32, u32, u64, Vec<(u32, u64)>, bool);

/// Places every tensor; returns the total (max end offset). Mirrors SOMAS: contiguous lists and
/// union groups are one block each, non-contiguous GraphAll tensors are stacked on top.
fn place(b: &mut Builder, max: u32) -> u64 {
    let nt = b.tensors.len();
    let life = |t: &GTensor| widened(t.lifelong, t.start, t.end, max);
    // Blocks: (lo, hi, size, members with their offset within the block, union block).
    let mut blocks: Vec<Block> = Vec::new();
    let mut grouped = vec![false; nt];
    for list in &b.contiguous {
        let mut members = Vec::new();
        let mut at = 0u64;
        let (mut lo, mut hi) = (u32::MAX, 0u32);
        for (i, &t) in list.iter().enumerate() {
            let Some(x) = b.tensors.get(t as usize) else {
                continue;
            };
            let (l, h) = life(x);
            lo = lo.min(l);
            hi = hi.max(h);
            // The head's offset is shifted +512 after solving ("for allocator").
            members.push((t, at + if i == 0 { GAP } else { 0 }));
            at += x.aligned;
            grouped[t as usize] = true;
        }
        blocks.push((lo, hi, at, members, false));
    }
    for list in &b.unions {
        let (mut lo, mut hi, mut size) = (u32::MAX, 0u32, 0u64);
        for &t in list {
            let Some(x) = b.tensors.get(t as usize) else {
                continue;
            };
            let (l, h) = life(x);
            lo = lo.min(l);
            hi = hi.max(h);
            size = size.max(x.aligned);
            grouped[t as usize] = true;
        }
        blocks.push((lo, hi, size, list.iter().map(|&t| (t, 0)).collect(), true));
    }
    let mut stacked = Vec::new();
    for (t, x) in b.tensors.iter().enumerate() {
        if grouped[t] || x.aligned == 0 {
            continue;
        }
        if x.lifelong == Lifelong::GraphAll {
            stacked.push(t as u32);
            continue;
        }
        let (l, h) = life(x);
        blocks.push((l, h, x.aligned, vec![(t as u32, 0)], false));
    }
    // Sweep: free what ended before t, then allocate what starts at t.
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    order.sort_by_key(|&i| (blocks[i].0, i));
    let mut ends: Vec<usize> = (0..blocks.len()).collect();
    ends.sort_by_key(|&i| (blocks[i].1, i));
    let mut alloc = Alloc {
        by_off: BTreeMap::new(),
        by_size: BTreeSet::new(),
        top: 0,
    };
    let mut offset = vec![0u64; blocks.len()];
    let mut e = 0;
    for &i in &order {
        let lo = blocks[i].0;
        while e < ends.len() && blocks[ends[e]].1 < lo {
            let j = ends[e];
            alloc.free(offset[j], blocks[j].2);
            e += 1;
        }
        offset[i] = alloc.alloc(blocks[i].2);
    }
    for (i, blk) in blocks.iter().enumerate() {
        for (k, &(t, within)) in blk.3.iter().enumerate() {
            if let Some(x) = b.tensors.get_mut(t as usize) {
                x.offset = offset[i] + within;
                if blk.4 && k > 0 {
                    // Non-head union members get the head's size back after solving.
                    x.aligned = blk.2;
                }
            }
        }
    }
    let mut top = alloc.top;
    for t in stacked {
        if let Some(x) = b.tensors.get_mut(t as usize) {
            x.offset = top;
            top += x.aligned;
        }
    }
    top
}

/// Moves `n` plain workspaces onto a plain tensor alive at their node; returns the pairs (ids).
fn inject(b: &mut Builder, max: u32, n: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let mut candidates: Vec<u32> = (0..b.tensors.len() as u32)
        .filter(|&t| {
            b.tensors
                .get(t as usize)
                .is_some_and(|x| x.kind == TensorKind::Workspace && !x.special && x.start == x.end)
        })
        .collect();
    b.rng.shuffle(&mut candidates);
    let mut used_nodes = BTreeSet::new();
    let nt = b.tensors.len();
    for w in candidates {
        if out.len() as u32 >= n {
            break;
        }
        let (node, wsize) = match b.tensors.get(w as usize) {
            Some(x) => (x.node, x.aligned),
            None => continue,
        };
        if used_nodes.contains(&node) {
            continue;
        }
        let start = b.rng.usize(0..nt);
        let pick = (0..nt).map(|i| ((start + i) % nt) as u32).find(|&a| {
            a != w
                && b.tensors.get(a as usize).is_some_and(|x| {
                    let (l, h) = widened(x.lifelong, x.start, x.end, max);
                    !x.special
                        && x.aligned >= wsize
                        && l <= node
                        && node <= h
                        && x.lifelong == Lifelong::None
                })
        });
        let Some(a) = pick else { continue };
        let off = b.tensors.get(a as usize).map_or(0, |x| x.offset);
        if let Some(x) = b.tensors.get_mut(w as usize) {
            x.offset = off;
            x.special = true;
        }
        if let Some(x) = b.tensors.get_mut(a as usize) {
            x.special = true;
        }
        used_nodes.insert(node);
        out.push((a.min(w), a.max(w)));
    }
    out.sort_unstable();
    out
}

/// Exec-order control tensors per stream, plus one per Send→Recv event.
fn control_tensors(b: &mut Builder) {
    let mut ctl = Vec::new();
    if b.flavor == Flavor::R1Allocate {
        return;
    }
    for stream in 0..2u32 {
        let mut prev: Option<u32> = None;
        for i in 0..b.nodes.len() as u32 {
            if b.nodes.get(i as usize).map(|n| n.stream) != Some(stream) {
                continue;
            }
            if let Some(p) = prev {
                ctl.push((p, i));
            }
            prev = Some(i);
        }
    }
    for i in 0..b.nodes.len().saturating_sub(1) {
        let (a, c) = (&b.nodes[i], &b.nodes[i + 1]);
        if a.op == "StreamSend" && c.op == "StreamRecv" {
            ctl.push((i as u32, i as u32 + 1));
        }
    }
    for (cid, &(from, to)) in ctl.iter().enumerate() {
        if let Some(n) = b.nodes.get_mut(from as usize) {
            n.ctrl_out.push(cid as u32);
        }
        if let Some(n) = b.nodes.get_mut(to as usize) {
            n.ctrl_in.push(cid as u32);
        }
    }
    b.controls = ctl;
}

fn scope_of(n: &GNode) -> String {
    match n.op {
        "GetNext" | "StreamSend" | "StreamRecv" | "AllReduce" | "AssignAdd" | "AtomicAddrClean"
        | "MemSet" => "Default".to_string(),
        _ => format!(
            "Default/network-WithLossCell/_backbone-Net/block{}-Cell/layer{}-{}",
            n.scope / 8,
            n.scope,
            n.op
        ),
    }
}

fn split(n: &GNode, out: &mut Vec<u8>) {
    out.extend_from_slice(n.op.as_bytes());
    out.extend_from_slice(b"-op");
    num(out, u64::from(n.op_id));
}

fn full(n: &GNode, out: &mut Vec<u8>) {
    out.extend_from_slice(scope_of(n).as_bytes());
    out.push(b'/');
    split(n, out);
}

fn num(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn hexp(out: &mut Vec<u8>, v: u64) {
    if v == 0 {
        out.push(b'0');
    } else {
        out.extend_from_slice(format!("0x{v:x}").as_bytes());
    }
}

/// SOMAS base address of generated plans and the parameter area above it.
pub const BASE: u64 = 0x1080_8000_0000;

fn param_base(reused: u64) -> u64 {
    BASE + (reused / (1 << 30) + 2) * (1 << 30)
}

fn param_addr(b: &Builder, reused: u64, p: usize) -> u64 {
    let mut a = param_base(reused);
    for (z, _) in b.params.iter().take(p) {
        a += ascend_align(*z);
    }
    a
}

fn write_dump(b: &Builder, flavor: Flavor, reused: u64) -> Vec<u8> {
    let mut o: Vec<u8> = Vec::with_capacity(b.tensors.len() * 120 + b.nodes.len() * 200);
    let r1 = flavor == Flavor::R1Allocate;
    let name = |n: &GNode, o: &mut Vec<u8>| {
        if flavor == Flavor::V24 {
            full(n, o)
        } else {
            split(n, o)
        }
    };
    let pbase: Vec<u64> = {
        let mut v = Vec::with_capacity(b.params.len());
        let mut a = param_base(reused);
        for (z, _) in &b.params {
            v.push(a);
            a += ascend_align(*z);
        }
        v
    };
    o.extend_from_slice(b"All Parameters:\n\n");
    if r1 {
        o.extend_from_slice(b"index:\tsize:\tstart_addr:\tsource node name:\tnode out index:\n");
    } else {
        o.extend_from_slice(b"index:\tsize:\tsource node name:\tnode out index:\n");
    }
    for (i, (z, pname)) in b.params.iter().enumerate() {
        o.push(b'%');
        num(&mut o, i as u64);
        o.extend_from_slice(b"P\t#");
        num(&mut o, *z);
        o.extend_from_slice(b"S\t");
        if r1 {
            o.push(b'&');
            hexp(&mut o, pbase[i]);
            o.push(b'\t');
        }
        o.extend_from_slice(pname.as_bytes());
        o.extend_from_slice(b"\t0\n");
    }
    o.extend_from_slice(b"\n\nAll Tensors:\n\n");
    if r1 {
        o.extend_from_slice(b"index:\tsize:\treal_size:\toffset:\taddr:\ttype:\tlifelong:\tlife_start:\tlife_end:\tsource node name:\n");
    } else {
        o.extend_from_slice(b"index:\taligned_size:\toriginal_size:\toffset:\ttype:\tlifelong:\tlife_start:\tlife_end:\tsource node name:\n");
    }
    for (i, t) in b.tensors.iter().enumerate() {
        o.push(b'%');
        num(&mut o, i as u64);
        o.extend_from_slice(b"T\t#");
        num(&mut o, t.aligned);
        o.extend_from_slice(b"S\t#");
        num(&mut o, t.orig);
        o.extend_from_slice(b"S\t&");
        num(&mut o, t.offset);
        o.push(b'\t');
        if r1 {
            o.push(b'&');
            hexp(&mut o, BASE + t.offset);
            o.push(b'\t');
        }
        o.extend_from_slice(t.kind.as_str().as_bytes());
        o.push(b'\t');
        if r1 {
            o.push(if t.lifelong == Lifelong::GraphAll {
                b'1'
            } else {
                b'0'
            });
        } else {
            o.extend_from_slice(t.lifelong.as_str().as_bytes());
        }
        o.push(b'\t');
        num(&mut o, u64::from(t.start));
        o.push(b'\t');
        num(&mut o, u64::from(t.end));
        o.push(b'\t');
        if let Some(n) = b.nodes.get(t.node as usize) {
            name(n, &mut o);
        }
        o.push(b'\n');
    }
    if !r1 {
        let sigil: &[u8] = if flavor == Flavor::V110 { b"T" } else { b"CT" };
        for (cid, &(from, to)) in b.controls.iter().enumerate() {
            o.push(b'%');
            num(&mut o, cid as u64);
            o.extend_from_slice(sigil);
            o.extend_from_slice(b"\t#0S\t#0S\t&0\tControl\tLifeLongNone\t");
            num(&mut o, u64::from(from));
            o.push(b'\t');
            num(&mut o, u64::from(to));
            o.push(b'\t');
            if let Some(n) = b.nodes.get(from as usize) {
                name(n, &mut o);
            }
            o.push(b'\n');
        }
    }
    o.extend_from_slice(b"\n\nAll Nodes:\n\n");
    let list = |o: &mut Vec<u8>, label: &[u8], items: &[u32], sig: &[u8]| {
        o.extend_from_slice(label);
        o.push(b'[');
        for &v in items {
            o.push(b'%');
            if v & PARAM != 0 {
                num(o, u64::from(v & !PARAM));
                o.push(b'P');
            } else {
                num(o, u64::from(v));
                o.extend_from_slice(sig);
            }
            o.extend_from_slice(b", ");
        }
        o.push(b']');
    };
    for (i, n) in b.nodes.iter().enumerate() {
        o.push(b'$');
        num(&mut o, i as u64);
        o.push(b'\t');
        name(n, &mut o);
        o.push(b'\t');
        num(&mut o, u64::from(n.kind));
        o.push(b'\t');
        list(&mut o, b"inputs", &n.inputs, b"T");
        o.push(b'\t');
        list(&mut o, b"outputs", &n.outputs, b"T");
        o.push(b'\t');
        list(&mut o, b"workspace", &n.workspace, b"T");
        o.push(b'\t');
        if !r1 {
            list(&mut o, b"ctrl_inputs", &n.ctrl_in, b"CT");
            o.push(b'\t');
            list(&mut o, b"ctrl_outputs", &n.ctrl_out, b"CT");
            o.push(b'\t');
        }
        o.extend_from_slice(b"streamID[@");
        num(&mut o, u64::from(n.stream));
        o.extend_from_slice(b"]\n");
    }
    let id_lists = |o: &mut Vec<u8>, prefix: &[u8], lists: &[Vec<u32>], brackets: bool| {
        for l in lists {
            o.extend_from_slice(prefix);
            if brackets {
                o.push(b'[');
            }
            for &t in l {
                o.push(b'%');
                num(o, u64::from(t));
                o.extend_from_slice(b"T ");
            }
            if brackets {
                o.push(b']');
            }
            o.push(b'\n');
        }
    };
    if r1 {
        o.extend_from_slice(b"\n\nAll Stream Groups:\n\n");
        if !b.unions.is_empty() {
            o.extend_from_slice(b"\n\nAll Ref Node Info:\n\n");
            id_lists(&mut o, b"refnode input-output:", &b.unions, false);
        }
        return o;
    }
    o.extend_from_slice(b"\n\nAll Union Tensors Info:\n\n");
    id_lists(&mut o, b"union tensors: ", &b.unions, true);
    o.extend_from_slice(b"\n\nAll Original Contiguous Tensors Info:\n\n");
    id_lists(&mut o, b"contiguous tensors: ", &b.contiguous, true);
    o.extend_from_slice(b"\n\nAll Processed Contiguous Tensors Info:\n\n");
    id_lists(&mut o, b"contiguous tensors: ", &b.contiguous, true);
    o.extend_from_slice(b"\n\nAll Stream Groups:\n\n");
    o.extend_from_slice(b"\n\nAll Merged Blocks:\n\nstart_offset:\tsize:\n");
    // Blocks from every tensor with aligned > 0 (solver ranges), merged when they overlap.
    let mut ranges: Vec<(u64, u64)> = b
        .tensors
        .iter()
        .filter(|t| t.aligned > 0)
        .map(|t| (t.offset, t.offset + t.aligned))
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s < last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    for (s, e) in merged.iter().rev() {
        num(&mut o, *s);
        o.push(b'\t');
        num(&mut o, e - s);
        o.push(b'\n');
    }
    o.extend_from_slice(b"\nTotal Memory Size after reused:");
    num(&mut o, reused);
    o
}

fn write_task_info(b: &Builder, reused: u64) -> Vec<u8> {
    let mut o = Vec::with_capacity(b.nodes.len() * 200);
    let addr = |v: u32| -> (u64, u64) {
        if v & PARAM != 0 {
            let p = (v & !PARAM) as usize;
            (param_addr(b, reused, p), b.params.get(p).map_or(0, |x| x.0))
        } else {
            match b.tensors.get(v as usize) {
                Some(t) if t.aligned > 0 => (BASE + t.offset, t.orig),
                // Zero-size graph outputs live outside SOMAS.
                Some(t) => (param_base(reused) - (1 << 20), t.orig),
                None => (0, 0),
            }
        }
    };
    let line = |o: &mut Vec<u8>, label: &[u8], items: &[u32]| {
        if items.is_empty() {
            return;
        }
        o.extend_from_slice(label);
        for &v in items {
            let (a, z) = addr(v);
            hexp(o, a);
            o.push(b'(');
            num(o, z);
            o.extend_from_slice(b")\t");
        }
        o.push(b'\n');
    };
    for (i, n) in b.nodes.iter().enumerate() {
        o.extend_from_slice(b"op_name:");
        full(n, &mut o);
        o.extend_from_slice(b"\ntask_index:");
        num(&mut o, i as u64);
        o.extend_from_slice(b"\ttask_num:1\ttask0_stream_id:");
        num(&mut o, u64::from(n.stream));
        o.extend_from_slice(b"\ttask0_type:0\ttask0_dump_flag:0\n");
        line(&mut o, b"input address:", &n.inputs);
        line(&mut o, b"output address:", &n.outputs);
        line(&mut o, b"workspace address:", &n.workspace);
        o.push(b'\n');
    }
    o
}
