//! Deterministic generator of large memory snapshots for tests and benchmarks:
//! `memlens generate snapshot` and [`generate`] on any writer.
//!
//! Each device runs a simulated training loop through a small caching allocator: parameters and
//! optimizer state allocated before the trace starts, then iterations of forward (activations
//! kept, workspaces freed at once), backward (activations freed in reverse, gradient temporaries
//! from the autograd thread, communication buckets on a second stream) and optimizer step.
//! Segments are reserved on demand (`segment_alloc`, or `segment_map` on expandable segments),
//! OOMs are injected on request (an `oom` entry, then the empty segments are released as
//! `empty_cache` would), and a few allocations made before the trace are freed in it (frees
//! without their alloc, as in a real ring buffer). Stacks are deep (C++ allocator frames, op
//! frames, nested module frames with CPython frames between them) and heavily repeated; frame
//! dicts are memoized once and frame lists are either shared or written afresh, as torch does.
//!
//! The file is written in two passes with the same seed: the first counts how many entries reach
//! the target size and leaves the allocator in its final state (which the `segments` part, written
//! first, describes); the second writes that many entries. Same config, same bytes.
//!
//! Why one file of ~1,160 lines: the simulated allocator and the writer of its entries share the
//! simulation's state (segments, live blocks, stacks); the pickle encoding itself is in
//! `writer.rs`.

mod writer;

pub use writer::PickleWriter;

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

/// Top-level layout to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenLayout {
    /// torch ≥ 2.1: `segments`, `device_traces`, `allocator_settings`, `external_annotations`;
    /// entries with `time_us`, `compile_context`, `user_metadata`.
    Current,
    /// torch 2.0: `segments` and `device_traces` only; blocks without `address` but with a
    /// `history`; segments without `frames`, `is_expandable`, `segment_pool_id`; no `time_us`.
    Torch20,
    /// `torch.cuda.memory_snapshot()`: a bare list of segments, no trace.
    SegmentList,
}

impl GenLayout {
    /// Parses `current`, `torch2.0` (or `old`), `segment-list`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "current" | "new" => GenLayout::Current,
            "torch2.0" | "old" | "2.0" => GenLayout::Torch20,
            "segment-list" | "list" => GenLayout::SegmentList,
            _ => return None,
        })
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenConfig {
    /// Approximate size of the file in bytes (the trace grows until it is reached).
    pub target_bytes: u64,
    /// Devices (each with its own trace and segments).
    pub devices: u32,
    /// PRNG seed.
    pub seed: u64,
    /// Layout.
    pub layout: GenLayout,
    /// Pickle protocol, 2 to 5.
    pub protocol: u8,
    /// Use expandable segments for large allocations (`segment_map`/`segment_unmap`; current
    /// layout only).
    pub expandable: bool,
    /// OOM events per device.
    pub ooms: u32,
    /// Deepest stack, in frames (at least 40).
    pub max_depth: u32,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            target_bytes: 8 << 20,
            devices: 1,
            seed: 1,
            layout: GenLayout::Current,
            protocol: 4,
            expandable: false,
            ooms: 0,
            max_depth: 300,
        }
    }
}

/// What was written for one device: the truth a reader must find.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// Device id.
    pub device: u32,
    /// Trace entries.
    pub entries: u64,
    /// Entries per action, in the order of `ACTIONS`.
    pub actions: [u64; 9],
    /// Segments at the snapshot.
    pub segments: u64,
    /// Blocks at the snapshot.
    pub blocks: u64,
    /// Σ segment sizes.
    pub reserved_bytes: u64,
    /// Σ sizes of allocated blocks.
    pub allocated_bytes: u64,
    /// Expandable segments.
    pub expandable_segments: u64,
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GenStats {
    /// Bytes of the file.
    pub bytes: u64,
    /// Per device.
    pub devices: Vec<DeviceStats>,
    /// Distinct stacks the workload uses.
    pub stacks: usize,
}

/// The action words, in the order of [`DeviceStats::actions`].
pub const ACTIONS: [&str; 9] = [
    "alloc",
    "free_requested",
    "free_completed",
    "segment_alloc",
    "segment_free",
    "segment_map",
    "segment_unmap",
    "oom",
    "snapshot",
];
const ALLOC: u8 = 0;
const FREE_REQUESTED: u8 = 1;
const FREE_COMPLETED: u8 = 2;
const SEGMENT_ALLOC: u8 = 3;
const SEGMENT_FREE: u8 = 4;
const SEGMENT_MAP: u8 = 5;
const SEGMENT_UNMAP: u8 = 6;
const OOM: u8 = 7;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const SMALL_LIMIT: u64 = MIB;
const SMALL_SEGMENT: u64 = 2 * MIB;
const LARGE_SEGMENT: u64 = 20 * MIB;
const STREAMS: [u64; 2] = [0, 0x5555_0000_1a40];

/// One frame: (name, filename, line).
type FrameSpec = (String, String, i64);

/// The workload's frames and stacks.
struct Stacks {
    frames: Vec<FrameSpec>,
    stacks: Vec<Vec<u32>>,
}

/// Sites (what allocates): stack index per (phase, layer, op).
const OPS: [&str; 6] = [
    "linear",
    "softmax",
    "layer_norm",
    "gelu",
    "dropout",
    "matmul",
];

impl Stacks {
    fn build(layers: usize, max_depth: u32) -> Stacks {
        let mut frames: Vec<FrameSpec> = Vec::new();
        let mut ids: HashMap<FrameSpec, u32> = HashMap::new();
        let mut f = |name: &str, file: &str, line: i64| -> u32 {
            let key = (name.to_string(), file.to_string(), line);
            if let Some(&i) = ids.get(&key) {
                return i;
            }
            let i = frames.len() as u32;
            frames.push(key.clone());
            ids.insert(key, i);
            i
        };
        let alloc_prefix: Vec<u32> = [
            ("torch::unwind::unwind()", "??"),
            ("torch::CapturedTraceback::gather(bool, bool, bool)", "??"),
            ("torch::npu::(anonymous namespace)::gather_with_cpp()", "memory_snapshot.cpp"),
            (
                "c10_npu::NPUCachingAllocator::DeviceCachingAllocator::malloc(int, unsigned long, aclrtStream)",
                "NPUCachingAllocator.cpp",
            ),
            ("c10_npu::NPUCachingAllocator::NpuCachingAllocator::malloc(void**, int, unsigned long, aclrtStream)", ""),
            ("c10_npu::NPUCachingAllocator::NpuCachingAllocator::allocate(unsigned long)", ""),
            ("at_npu::native::OpPreparation::apply_tensor_without_format(c10::ArrayRef<long>, c10::TensorOptions const&)", "??"),
            ("at_npu::native::empty_npu(c10::ArrayRef<long>, c10::TensorOptions const&)", "??"),
        ]
        .iter()
        .map(|(n, file)| f(n, file, 0))
        .collect();
        let python_tail: Vec<u32> = vec![
            f("train_step", "/workspace/llm/train.py", 212),
            f("_PyEval_EvalFrameDefault", "??", 0),
            f("main", "/workspace/llm/train.py", 301),
            f("_PyEval_EvalFrameDefault", "??", 0),
            f("<module>", "/workspace/llm/train.py", 330),
            f(
                "PyEval_EvalCode",
                "/usr/local/src/conda/python-3.10.14/Python/ceval.c",
                1134,
            ),
            f(
                "Py_BytesMain",
                "/usr/local/src/conda/python-3.10.14/Modules/main.c",
                1094,
            ),
            f("__libc_start_main", "??", 0),
            f("_start", "??", 0),
        ];
        let autograd_tail: Vec<u32> = vec![
            f("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)", "??", 0),
            f("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)", "??", 0),
            f("torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)", "??", 0),
            f("execute_native_thread_routine", "thread48.o", 0),
            f("clone", "??", 0),
        ];
        let module_call = [
            (
                "_call_impl",
                "/usr/local/lib/python3.10/site-packages/torch/nn/modules/module.py",
                1527,
            ),
            (
                "_wrapped_call_impl",
                "/usr/local/lib/python3.10/site-packages/torch/nn/modules/module.py",
                1518,
            ),
        ];
        let mut stacks = Vec::new();
        // Room for nesting: each level adds a user frame, two module.py frames and three CPython frames.
        let fixed = (alloc_prefix.len() + 6 + python_tail.len()) as u32;
        let max_levels = (max_depth.max(40).saturating_sub(fixed) / 6).max(1) as usize;
        for phase in 0..3 {
            for layer in 0..layers {
                for (o, op) in OPS.iter().enumerate() {
                    let mut s = alloc_prefix.clone();
                    for k in 0..6 {
                        s.push(f(
                            &format!("at_npu::native::{op}_kernel_npu_{k}(at::Tensor const&)"),
                            if k % 2 == 0 { "??" } else { "RegisterNPU.cpp" },
                            0,
                        ));
                    }
                    match phase {
                        // Forward and optimizer: Python stacks, nested module calls.
                        0 | 2 => {
                            let levels = 1 + (layer * 7 + o) % max_levels;
                            for lv in 0..levels {
                                let (name, file, line) = if phase == 0 {
                                    (
                                        "forward",
                                        "/workspace/llm/model.py",
                                        40 + (lv as i64) * 30 + o as i64,
                                    )
                                } else {
                                    (
                                        [
                                            "step",
                                            "_multi_tensor_adamw",
                                            "_foreach_step",
                                            "_group_step",
                                        ][lv % 4],
                                        "/workspace/llm/optim.py",
                                        60 + 9 * (lv as i64 % 4) + o as i64,
                                    )
                                };
                                s.push(f(
                                    name,
                                    file,
                                    line + if lv == 0 { layer as i64 % 4 } else { 0 },
                                ));
                                s.push(f("_PyEval_EvalFrameDefault", "??", 0));
                                s.push(f(
                                    "PyObject_Call",
                                    "/usr/local/src/conda/python-3.10.14/Objects/call.c",
                                    240,
                                ));
                                for (n, file, line) in module_call {
                                    s.push(f(n, file, line));
                                }
                                s.push(f("_PyObject_MakeTpCall", "??", 0));
                            }
                            s.extend(&python_tail);
                        }
                        // Backward: the autograd thread, no Python frame.
                        _ => {
                            s.push(f(
                                &format!("torch::autograd::generated::{}Backward0::apply(std::vector<at::Tensor>&&)", op),
                                "Functions.cpp",
                                0,
                            ));
                            s.extend(&autograd_tail);
                        }
                    }
                    s.truncate(max_depth.max(40) as usize);
                    stacks.push(s);
                }
            }
        }
        Stacks { frames, stacks }
    }
}

/// One trace entry.
#[derive(Debug, Clone, Copy)]
struct Entry {
    action: u8,
    addr: u64,
    size: u64,
    stream: u64,
    time_us: i64,
    stack: u32,
    device_free: u64,
}

#[derive(Debug, Clone)]
struct Seg {
    addr: u64,
    size: u64,
    stream: usize,
    small: bool,
    expandable: bool,
    stack: u32,
    alive: bool,
}

#[derive(Debug, Clone, Copy)]
struct Live {
    req: u64,
    size: u64,
    stack: u32,
}

/// One operation of the workload.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// Allocate `size` bytes from `site` on `stream` into `slot`.
    Alloc {
        slot: usize,
        size: u64,
        site: u32,
        stream: usize,
    },
    /// Free the allocation in `slot`.
    Free { slot: usize, stream: usize },
    /// Free the allocations made before the trace.
    FreeOld,
    /// An OOM, then the release of empty segments.
    Oom,
    /// An external annotation (iteration start or end).
    Mark(&'static str),
}

/// One device's allocator and workload.
struct Sim {
    rng: fastrand::Rng,
    device: u32,
    expandable: bool,
    ooms_left: u32,
    layers: usize,
    act: Vec<[u64; 6]>,
    time_us: i64,
    segs: Vec<Seg>,
    /// Free ranges: address → (size, segment).
    free: BTreeMap<u64, (u64, u32)>,
    live: BTreeMap<u64, Live>,
    next_addr: u64,
    queue: std::collections::VecDeque<Entry>,
    /// Operations of the current iteration not executed yet.
    ops: std::collections::VecDeque<Op>,
    /// Addresses of the current iteration's allocations, by slot.
    slots: Vec<u64>,
    /// Allocations made before the trace, to free in the first iteration.
    old: Vec<u64>,
    iteration: u64,
    emit: bool,
    stats: DeviceStats,
    annotations: Vec<(&'static str, i64)>,
}

fn round_up(v: u64, to: u64) -> u64 {
    v.div_ceil(to) * to
}

impl Sim {
    fn new(cfg: &GenConfig, device: u32) -> Sim {
        let mut rng = fastrand::Rng::with_seed(cfg.seed ^ (u64::from(device) << 32) ^ 0x5a9);
        let layers = 24 + (cfg.seed % 9) as usize;
        let act = (0..layers)
            .map(|_| {
                let mut a = [0u64; 6];
                for x in a.iter_mut() {
                    *x = if rng.u32(0..10) < 3 {
                        rng.u64(1..SMALL_LIMIT)
                    } else {
                        rng.u64(SMALL_LIMIT..64 * MIB)
                    };
                }
                a
            })
            .collect();
        let mut sim = Sim {
            rng,
            device,
            // Expandable segments came after torch 2.0.
            expandable: cfg.expandable && cfg.layout == GenLayout::Current,
            ooms_left: cfg.ooms,
            layers,
            act,
            time_us: 1_700_000_000_000_000 + i64::from(device) * 1_000,
            segs: Vec::new(),
            free: BTreeMap::new(),
            live: BTreeMap::new(),
            next_addr: 0x7f00_0000_0000 + (u64::from(device) << 40),
            queue: Default::default(),
            ops: Default::default(),
            slots: Vec::new(),
            old: Vec::new(),
            iteration: 0,
            emit: false,
            stats: DeviceStats {
                device,
                ..Default::default()
            },
            annotations: Vec::new(),
        };
        // Before the trace: parameters, two optimizer states each, and some temporaries that the
        // first iteration frees.
        for layer in 0..layers {
            for k in 0..3 {
                let size = sim.rng.u64(MIB..48 * MIB);
                sim.alloc(
                    size,
                    (2 * layers * OPS.len() + layer * OPS.len() + k) as u32,
                    0,
                );
            }
        }
        for layer in 0..4.min(layers) {
            let size = sim.rng.u64(64 * KIB..8 * MIB);
            let a = sim.alloc(size, (layer * OPS.len()) as u32, 0);
            sim.old.push(a);
        }
        sim.emit = true;
        sim
    }

    fn push(
        &mut self,
        action: u8,
        addr: u64,
        size: u64,
        stream: usize,
        stack: u32,
        device_free: u64,
    ) {
        if !self.emit {
            return;
        }
        self.time_us += self.rng.i64(1..40);
        self.queue.push_back(Entry {
            action,
            addr,
            size,
            stream: STREAMS[stream],
            time_us: self.time_us,
            stack,
            device_free,
        });
    }

    fn new_segment(&mut self, block: u64, stream: usize, small: bool, stack: u32) {
        if !small && self.expandable {
            // One expandable segment per stream, grown at its end.
            if let Some(i) = self
                .segs
                .iter()
                .position(|s| s.alive && s.expandable && s.stream == stream)
            {
                let end = self.segs[i].addr + self.segs[i].size;
                let grow = round_up(block, LARGE_SEGMENT);
                self.segs[i].size += grow;
                self.add_free(end, grow, i as u32);
                self.push(SEGMENT_MAP, end, grow, stream, stack, 0);
                return;
            }
            let size = round_up(block, LARGE_SEGMENT);
            let addr = self.next_addr;
            // Room for the segment to grow: expandable segments reserve address space.
            self.next_addr += 1 << 36;
            self.add_segment(addr, size, stream, false, true, stack);
            self.push(SEGMENT_MAP, addr, size, stream, stack, 0);
            return;
        }
        let size = if small {
            SMALL_SEGMENT
        } else {
            round_up(block, 2 * MIB).max(LARGE_SEGMENT)
        };
        let addr = self.next_addr;
        self.next_addr += round_up(size, 2 * MIB) + 2 * MIB;
        self.add_segment(addr, size, stream, small, false, stack);
        self.push(SEGMENT_ALLOC, addr, size, stream, stack, 0);
    }

    fn add_segment(
        &mut self,
        addr: u64,
        size: u64,
        stream: usize,
        small: bool,
        expandable: bool,
        stack: u32,
    ) {
        let i = self.segs.len() as u32;
        self.segs.push(Seg {
            addr,
            size,
            stream,
            small,
            expandable,
            stack,
            alive: true,
        });
        self.add_free(addr, size, i);
    }

    /// Returns `[addr, addr + size)` of segment `seg` to the free ranges, merged with neighbours.
    fn add_free(&mut self, mut addr: u64, mut size: u64, seg: u32) {
        if let Some((&a, &(s, g))) = self.free.range(..addr).next_back() {
            if g == seg && a + s == addr {
                self.free.remove(&a);
                addr = a;
                size += s;
            }
        }
        if let Some(&(s, g)) = self.free.get(&(addr + size)) {
            if g == seg {
                self.free.remove(&(addr + size));
                size += s;
            }
        }
        self.free.insert(addr, (size, seg));
    }

    fn find_free(&self, block: u64, stream: usize, small: bool) -> Option<u64> {
        self.free
            .iter()
            .find(|(_, &(s, g))| {
                let seg = &self.segs[g as usize];
                s >= block && seg.stream == stream && seg.small == small
            })
            .map(|(&a, _)| a)
    }

    fn alloc(&mut self, req: u64, stack: u32, stream: usize) -> u64 {
        let block = round_up(req.max(1), 512);
        let small = block <= SMALL_LIMIT;
        let addr = match self.find_free(block, stream, small) {
            Some(a) => a,
            None => {
                self.new_segment(block, stream, small, stack);
                self.find_free(block, stream, small).unwrap_or(0)
            }
        };
        if let Some((size, seg)) = self.free.remove(&addr) {
            if size > block {
                self.free.insert(addr + block, (size - block, seg));
            }
        }
        self.live.insert(
            addr,
            Live {
                req,
                size: block,
                stack,
            },
        );
        self.push(ALLOC, addr, req, stream, stack, 0);
        addr
    }

    fn free(&mut self, addr: u64, stream: usize) {
        let Some(l) = self.live.remove(&addr) else {
            return;
        };
        self.push(FREE_REQUESTED, addr, l.req, stream, l.stack, 0);
        self.push(FREE_COMPLETED, addr, l.req, stream, l.stack, 0);
        let seg = self
            .segs
            .iter()
            .position(|s| s.alive && s.addr <= addr && addr < s.addr + s.size)
            .unwrap_or(0) as u32;
        self.add_free(addr, l.size, seg);
    }

    fn oom(&mut self) {
        let reserved: u64 = self.segs.iter().filter(|s| s.alive).map(|s| s.size).sum();
        let want = 2 * reserved.max(GIB);
        let device_free = self.rng.u64(0..64 * MIB);
        let stack = self.rng.u32(0..(self.layers * OPS.len()) as u32);
        self.push(OOM, 0, want, 0, stack, device_free);
        // empty_cache: release the segments that hold nothing.
        for i in 0..self.segs.len() {
            let s = self.segs[i].clone();
            if !s.alive || s.expandable {
                continue;
            }
            if self.free.get(&s.addr) == Some(&(s.size, i as u32)) {
                self.free.remove(&s.addr);
                self.segs[i].alive = false;
                self.push(SEGMENT_FREE, s.addr, s.size, s.stream, s.stack, 0);
            }
        }
        // Expandable segments give back their free tail.
        for i in 0..self.segs.len() {
            let s = self.segs[i].clone();
            if !s.alive || !s.expandable {
                continue;
            }
            let tail = self
                .free
                .range(..s.addr + s.size)
                .next_back()
                .filter(|(&a, &(sz, g))| g == i as u32 && a + sz == s.addr + s.size)
                .map(|(&a, &(sz, _))| (a, sz));
            if let Some((a, sz)) = tail {
                let cut = sz / LARGE_SEGMENT * LARGE_SEGMENT;
                if cut > 0 && cut < s.size {
                    let at = s.addr + s.size - cut;
                    self.free.remove(&a);
                    if at > a {
                        self.free.insert(a, (at - a, i as u32));
                    }
                    self.segs[i].size -= cut;
                    self.push(SEGMENT_UNMAP, at, cut, s.stream, s.stack, 0);
                }
            }
        }
    }

    /// Plans one iteration of the workload as a list of operations on allocation slots, executed
    /// one at a time by [`Sim::step`]: the allocator's state then always matches the entries
    /// handed out so far (up to the one operation in progress), so a trace cut anywhere agrees
    /// with the snapshot written from that state.
    fn plan_iteration(&mut self) {
        let layers = self.layers;
        let site = |phase: usize, layer: usize, op: usize| {
            ((phase * layers + layer) * OPS.len() + op) as u32
        };
        self.iteration += 1;
        self.slots.clear();
        let mut ops = Vec::new();
        let mut slot = |ops: &mut Vec<Op>, size: u64, site: u32, stream: usize| {
            let k = self.slots.len();
            self.slots.push(0);
            ops.push(Op::Alloc {
                slot: k,
                size,
                site,
                stream,
            });
            k
        };
        ops.push(Op::Mark("START"));
        // Forward.
        let mut acts: Vec<Vec<usize>> = vec![Vec::new(); layers];
        for (layer, acts) in acts.iter_mut().enumerate() {
            for op in 0..OPS.len() {
                let a = slot(&mut ops, self.act[layer][op], site(0, layer, op), 0);
                acts.push(a);
                if op % 2 == 1 {
                    let ws = self.rng.u64(512..4 * MIB);
                    let w = slot(&mut ops, ws, site(0, layer, op), 0);
                    ops.push(Op::Free { slot: w, stream: 0 });
                }
            }
            if layer == 0 {
                ops.push(Op::FreeOld);
            }
        }
        if self.ooms_left > 0 && self.iteration % 2 == 1 {
            self.ooms_left -= 1;
            ops.push(Op::Oom);
        }
        // Backward: gradient temporaries from the autograd thread, activations freed in reverse,
        // communication buckets on the second stream.
        let mut bucket = None;
        for layer in (0..layers).rev() {
            let g = slot(&mut ops, self.act[layer][0] / 2 + 512, site(1, layer, 0), 0);
            for a in std::mem::take(&mut acts[layer]).into_iter().rev() {
                ops.push(Op::Free { slot: a, stream: 0 });
            }
            ops.push(Op::Free { slot: g, stream: 0 });
            if layer % 4 == 0 {
                if let Some(b) = bucket.take() {
                    ops.push(Op::Free { slot: b, stream: 1 });
                }
                bucket = Some(slot(&mut ops, 25 * MIB, site(1, layer, 5), 1));
            }
        }
        if let Some(b) = bucket {
            ops.push(Op::Free { slot: b, stream: 1 });
        }
        // Optimizer step.
        for layer in 0..layers {
            let size = self.rng.u64(KIB..16 * MIB);
            let t = slot(&mut ops, size, site(2, layer, layer % OPS.len()), 0);
            ops.push(Op::Free { slot: t, stream: 0 });
        }
        ops.push(Op::Mark("END"));
        self.ops.extend(ops);
    }

    /// Executes the next planned operation (planning an iteration when none is left).
    fn step(&mut self) {
        let Some(op) = self.ops.pop_front() else {
            self.plan_iteration();
            return;
        };
        match op {
            Op::Alloc {
                slot,
                size,
                site,
                stream,
            } => {
                let a = self.alloc(size, site, stream);
                self.slots[slot] = a;
            }
            Op::Free { slot, stream } => {
                let a = self.slots[slot];
                self.free(a, stream);
            }
            Op::FreeOld => {
                for a in std::mem::take(&mut self.old) {
                    self.free(a, 0);
                }
            }
            Op::Oom => self.oom(),
            Op::Mark(stage) => {
                if self.annotations.len() < 64 {
                    self.annotations.push((stage, self.time_us));
                }
            }
        }
    }

    fn next_entry(&mut self) -> Entry {
        loop {
            if let Some(e) = self.queue.pop_front() {
                self.stats.entries += 1;
                self.stats.actions[e.action as usize] += 1;
                return e;
            }
            self.step();
        }
    }

    /// True when every entry of the operations executed so far was handed out.
    fn settled(&self) -> bool {
        self.queue.is_empty()
    }

    /// Blocks of segment `i` at the snapshot: `(addr, size, requested, allocated, stack)`.
    fn blocks(&self, i: usize) -> Vec<(u64, u64, u64, bool, u32)> {
        let s = &self.segs[i];
        let mut out = Vec::new();
        let mut at = s.addr;
        let end = s.addr + s.size;
        for (&a, l) in self.live.range(s.addr..end) {
            if a > at {
                out.push((at, a - at, 0, false, 0));
            }
            out.push((a, l.size, l.req, true, l.stack));
            at = a + l.size;
        }
        if at < end {
            out.push((at, end - at, 0, false, 0));
        }
        out
    }
}

const GIB: u64 = 1024 * MIB;

/// Writes pickles of the workload.
struct Out<'a, W: Write> {
    w: PickleWriter<W>,
    stacks: &'a Stacks,
    frame_memo: Vec<Option<u32>>,
    list_memo: Vec<Option<u32>>,
    rng: fastrand::Rng,
    layout: GenLayout,
}

impl<'a, W: Write> Out<'a, W> {
    fn new(w: PickleWriter<W>, stacks: &'a Stacks, layout: GenLayout, seed: u64) -> Self {
        Out {
            w,
            stacks,
            frame_memo: vec![None; stacks.frames.len()],
            list_memo: vec![None; stacks.stacks.len()],
            rng: fastrand::Rng::with_seed(seed ^ 0xf4a3),
            layout,
        }
    }

    fn frame(&mut self, f: u32) -> io::Result<()> {
        if let Some(i) = self.frame_memo[f as usize] {
            return self.w.get(i);
        }
        let (name, file, line) = &self.stacks.frames[f as usize];
        let i = self.w.dict()?;
        self.w.mark()?;
        self.w.str("name")?;
        self.w.str(name)?;
        self.w.str("filename")?;
        self.w.str(file)?;
        self.w.str("line")?;
        self.w.int(*line)?;
        self.w.setitems()?;
        self.frame_memo[f as usize] = Some(i);
        Ok(())
    }

    /// A frame list: the list written before (sometimes), or a fresh list of frame references.
    fn frames(&mut self, stack: Option<u32>) -> io::Result<()> {
        let Some(s) = stack else {
            self.w.list()?;
            return Ok(());
        };
        if let Some(i) = self.list_memo[s as usize] {
            if self.rng.u32(0..10) < 4 {
                return self.w.get(i);
            }
        }
        let i = self.w.list()?;
        let frames = &self.stacks.stacks[s as usize];
        if frames.len() == 1 {
            self.frame(frames[0])?;
            self.w.append()?;
        } else if !frames.is_empty() {
            self.w.mark()?;
            for k in 0..frames.len() {
                let f = self.stacks.stacks[s as usize][k];
                self.frame(f)?;
            }
            self.w.appends()?;
        }
        self.list_memo[s as usize] = Some(i);
        Ok(())
    }

    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        let w = &mut self.w;
        w.dict()?;
        w.mark()?;
        w.str("action")?;
        w.str(ACTIONS[e.action as usize])?;
        if e.action != OOM {
            w.str("addr")?;
            w.int(e.addr as i64)?;
        }
        w.str("size")?;
        w.int(e.size as i64)?;
        w.str("stream")?;
        w.int(e.stream as i64)?;
        if e.action == OOM {
            w.str("device_free")?;
            w.int(e.device_free as i64)?;
        }
        if self.layout == GenLayout::Current {
            w.str("time_us")?;
            w.int(e.time_us)?;
            w.str("compile_context")?;
            w.str("N/A")?;
            w.str("user_metadata")?;
            w.str("")?;
        }
        self.w.str("frames")?;
        self.frames(Some(e.stack))?;
        self.w.setitems()
    }

    /// A device's trace list of exactly `n` entries from `sim`.
    fn trace(&mut self, sim: &mut Sim, n: u64) -> io::Result<()> {
        self.w.list()?;
        let mut left = n;
        if left == 1 {
            let e = sim.next_entry();
            self.entry(&e)?;
            return self.w.append();
        }
        while left > 0 {
            let batch = left.min(1000);
            self.w.mark()?;
            for _ in 0..batch {
                let e = sim.next_entry();
                self.entry(&e)?;
            }
            self.w.appends()?;
            left -= batch;
        }
        Ok(())
    }

    fn segment(&mut self, sim: &Sim, i: usize, stats: &mut DeviceStats) -> io::Result<()> {
        let s = &sim.segs[i];
        let blocks = sim.blocks(i);
        let allocated: u64 = blocks.iter().filter(|b| b.3).map(|b| b.1).sum();
        let requested: u64 = blocks.iter().filter(|b| b.3).map(|b| b.2).sum();
        stats.segments += 1;
        stats.blocks += blocks.len() as u64;
        stats.reserved_bytes += s.size;
        stats.allocated_bytes += allocated;
        stats.expandable_segments += u64::from(s.expandable);
        let old = self.layout != GenLayout::Current;
        let w = &mut self.w;
        w.dict()?;
        w.mark()?;
        w.str("device")?;
        w.int(i64::from(sim.device))?;
        w.str("address")?;
        w.int(s.addr as i64)?;
        w.str("total_size")?;
        w.int(s.size as i64)?;
        w.str("allocated_size")?;
        w.int(allocated as i64)?;
        w.str("active_size")?;
        w.int(allocated as i64)?;
        w.str("requested_size")?;
        w.int(requested as i64)?;
        w.str("stream")?;
        w.int(STREAMS[s.stream] as i64)?;
        w.str("segment_type")?;
        w.str(if s.small { "small" } else { "large" })?;
        if !old {
            w.str("segment_pool_id")?;
            w.pair(0, 0)?;
            w.str("is_expandable")?;
            w.bool(s.expandable)?;
        }
        w.str("blocks")?;
        w.list()?;
        if !blocks.is_empty() {
            self.w.mark()?;
            for &(addr, size, req, allocated, stack) in &blocks {
                self.w.dict()?;
                self.w.mark()?;
                if !old {
                    self.w.str("address")?;
                    self.w.int(addr as i64)?;
                }
                self.w.str("size")?;
                self.w.int(size as i64)?;
                self.w.str("requested_size")?;
                self.w.int(req as i64)?;
                self.w.str("state")?;
                self.w.str(if allocated {
                    "active_allocated"
                } else {
                    "inactive"
                })?;
                if old {
                    self.w.str("history")?;
                    self.w.list()?;
                    if allocated {
                        self.w.dict()?;
                        self.w.mark()?;
                        self.w.str("addr")?;
                        self.w.int(addr as i64)?;
                        self.w.str("real_size")?;
                        self.w.int(req as i64)?;
                        self.w.str("frames")?;
                        self.frames(Some(stack))?;
                        self.w.setitems()?;
                        self.w.append()?;
                    }
                } else {
                    self.w.str("frames")?;
                    self.frames(allocated.then_some(stack))?;
                }
                self.w.setitems()?;
            }
            self.w.appends()?;
        }
        if !old {
            self.w.str("frames")?;
            self.frames(Some(s.stack))?;
        }
        self.w.setitems()
    }

    fn segments(&mut self, sims: &[Sim], stats: &mut [DeviceStats]) -> io::Result<()> {
        self.w.list()?;
        self.w.mark()?;
        for (d, sim) in sims.iter().enumerate() {
            let mut order: Vec<usize> =
                (0..sim.segs.len()).filter(|&i| sim.segs[i].alive).collect();
            order.sort_by_key(|&i| sim.segs[i].addr);
            for i in order {
                self.segment(sim, i, &mut stats[d])?;
            }
        }
        self.w.appends()
    }
}

/// Counts how many entries of `sim` fill `target` bytes of trace.
fn entries_for(sim: &mut Sim, stacks: &Stacks, cfg: &GenConfig, target: u64) -> u64 {
    let Ok(w) = PickleWriter::new(io::sink(), cfg.protocol) else {
        return 0;
    };
    let mut out = Out::new(w, stacks, cfg.layout, cfg.seed);
    let mut n = 0;
    while out.w.bytes() < target || !sim.settled() {
        let e = sim.next_entry();
        if out.entry(&e).is_err() {
            break;
        }
        n += 1;
    }
    n
}

/// Writes a snapshot for `cfg` to `out`; returns what it holds.
pub fn generate<W: Write>(cfg: &GenConfig, out: W) -> io::Result<GenStats> {
    let devices = cfg.devices.max(1);
    let probe = Sim::new(cfg, 0);
    let stacks = Stacks::build(probe.layers, cfg.max_depth);
    drop(probe);
    let per_device = cfg.target_bytes / u64::from(devices);
    // Pass 1: how many entries per device, and the allocator at the end.
    let mut finals = Vec::new();
    let mut counts = Vec::new();
    for d in 0..devices {
        let mut sim = Sim::new(cfg, d);
        let n = if cfg.layout == GenLayout::SegmentList {
            // No trace: run the workload for the size's worth of segments' history anyway.
            let k = (per_device / 4096).clamp(16, 20_000);
            for _ in 0..k {
                sim.next_entry();
            }
            while !sim.settled() {
                sim.next_entry();
            }
            0
        } else {
            entries_for(&mut sim, &stacks, cfg, per_device)
        };
        counts.push(n);
        finals.push(sim);
    }
    let mut stats: Vec<DeviceStats> = (0..devices)
        .map(|d| DeviceStats {
            device: d,
            ..Default::default()
        })
        .collect();
    let w = PickleWriter::new(out, cfg.protocol)?;
    let mut o = Out::new(w, &stacks, cfg.layout, cfg.seed);
    if cfg.layout == GenLayout::SegmentList {
        o.segments(&finals, &mut stats)?;
    } else {
        o.w.dict()?;
        o.w.mark()?;
        o.w.str("segments")?;
        o.segments(&finals, &mut stats)?;
        o.w.str("device_traces")?;
        o.w.list()?;
        o.w.mark()?;
        for d in 0..devices {
            // Pass 2: the same simulation, written.
            let mut sim = Sim::new(cfg, d);
            o.trace(&mut sim, counts[d as usize])?;
            let s = &mut stats[d as usize];
            s.entries = sim.stats.entries;
            s.actions = sim.stats.actions;
        }
        o.w.appends()?;
        if cfg.layout == GenLayout::Current {
            o.w.str("allocator_settings")?;
            o.w.dict()?;
            o.w.mark()?;
            o.w.str("PYTORCH_NPU_ALLOC_CONF")?;
            o.w.str(if cfg.expandable {
                "expandable_segments:True"
            } else {
                ""
            })?;
            o.w.str("max_split_size")?;
            o.w.int(-1)?;
            o.w.str("garbage_collection_threshold")?;
            o.w.float(0.0)?;
            o.w.str("expandable_segments")?;
            o.w.bool(cfg.expandable)?;
            o.w.setitems()?;
            o.w.str("external_annotations")?;
            o.w.list()?;
            let notes: Vec<(u32, &'static str, i64)> = finals
                .iter()
                .flat_map(|s| s.annotations.iter().map(move |&(st, t)| (s.device, st, t)))
                .collect();
            if !notes.is_empty() {
                o.w.mark()?;
                for (dev, stage, t) in notes {
                    o.w.dict()?;
                    o.w.mark()?;
                    o.w.str("stage")?;
                    o.w.str(stage)?;
                    o.w.str("name")?;
                    o.w.str("iteration")?;
                    o.w.str("device")?;
                    o.w.int(i64::from(dev))?;
                    o.w.str("time_us")?;
                    o.w.int(t)?;
                    o.w.setitems()?;
                }
                o.w.appends()?;
            }
        }
        o.w.setitems()?;
    }
    let bytes = o.w.bytes() + 1;
    o.w.finish()?;
    Ok(GenStats {
        bytes,
        devices: stats,
        stacks: stacks.stacks.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_config_same_bytes() {
        let cfg = GenConfig {
            target_bytes: 200_000,
            ..Default::default()
        };
        let mut a = Vec::new();
        let mut b = Vec::new();
        let sa = generate(&cfg, &mut a).unwrap();
        let sb = generate(&cfg, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(sa, sb);
        assert_eq!(sa.bytes, a.len() as u64);
        assert!(a.len() >= 200_000, "{}", a.len());
    }
}
