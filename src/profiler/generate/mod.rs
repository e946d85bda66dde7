//! Deterministic synthetic torch_npu jobs: N roles × M ranks, a trace of about S bytes and R
//! operator_memory rows per rank, shaped like real torch_npu output (`docs/formats-profiler.md`).
//!
//! What makes them realistic (and hard): most trace events are not `cpu_op` (python functions,
//! CANN counters, flows with ids above 2^53); forward ops carry long call stacks (innermost first,
//! `;\r\n`-separated, library frames around the user's); backward ops run on a second thread
//! without stacks under `XxxBackward0` nodes carrying the forward op's sequence number; `cann::`
//! rows come after the PTA rows; some blocks are never released; a few allocations have no
//! containing op (approximate) or sit in backward ops without an autograd node (none). Every
//! number is derived from the seed, so the same command writes the same bytes.
//!
//! The generator also knows what it planted ([`Planted`]), so tests can check the analysis.

#[cfg(all(feature = "db-writer", not(target_arch = "wasm32")))]
pub mod db;
mod text;

/// Changes whenever the generator's output for a given spec changes (caches key on it).
pub const GENERATOR_VERSION: u32 = 1;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GenSpec {
    /// Roles (parent folders of the run folders).
    pub roles: u32,
    /// Ranks per role.
    pub ranks: u32,
    /// Target size of each `trace_view.json` (filler events are added up to it).
    pub trace_bytes: u64,
    /// operator_memory rows per rank.
    pub rows: u32,
    /// `ProfilerStep#N` steps per run.
    pub steps: u32,
    /// Seed of every random choice.
    pub seed: u64,
    /// Makes the last rank of the first role an outlier: its PTA allocations are three times as
    /// large, so its peaks stand out from its role's median (row counts and attribution unchanged).
    pub outlier: bool,
}

/// What one rank's files contain by construction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Planted {
    /// operator_memory rows.
    pub rows: u64,
    /// `cann::` rows.
    pub rows_ge: u64,
    /// Rows whose containing op has a stack.
    pub direct: u64,
    /// Rows in backward ops under an autograd node.
    pub via_forward: u64,
    /// Rows with no containing op (but an earlier same-name op with a stack).
    pub approximate: u64,
    /// PTA rows in backward ops without an autograd node.
    pub none_pta: u64,
    /// Rows never released.
    pub unreleased: u64,
}

/// SplitMix64: tiny, fast, and fixed forever (a crate's generator could change between versions
/// and silently change every generated file).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v.get(self.below(v.len() as u64) as usize)
            .copied()
            .unwrap_or("")
    }
}

const ROLES: [&str; 6] = [
    "actor_update",
    "ref_compute_log_prob",
    "actor_compute_log_prob",
    "critic_update",
    "rollout",
    "reward",
];

const FWD_OPS: [(&str, &str); 8] = [
    ("aten::linear", "AddmmBackward0"),
    ("aten::conv2d", "ConvolutionBackward0"),
    ("aten::layer_norm", "NativeLayerNormBackward0"),
    ("aten::matmul", "MmBackward0"),
    ("aten::softmax", "SoftmaxBackward0"),
    ("aten::gelu", "GeluBackward0"),
    ("aten::embedding", "EmbeddingBackward0"),
    ("aten::add", "AddBackward0"),
];
const ALLOC_OPS: [&str; 5] = [
    "aten::empty_strided",
    "aten::empty",
    "npu::_npu_dtype_cast",
    "format_contiguousV2",
    "aten::zeros",
];
const BWD_ALLOC_OPS: [&str; 4] = [
    "aten::mm",
    "aten::empty_strided",
    "aten::empty",
    "aclnnMulGrad",
];
const CANN_OPS: [&str; 5] = [
    "cann::trans_TransData_0",
    "cann::ReduceSum7_in_1",
    "cann::MatMulV2_12",
    "cann::Cast_3",
    "cann::hcom_allReduce_1",
];
const LIB_INNER: [&str; 4] = [
    "/usr/local/lib/python3.10/site-packages/torch/_ops.py(692): __call__",
    "/usr/local/lib/python3.10/site-packages/torch/nn/functional.py(2573): layer_norm",
    "/usr/local/lib/python3.10/site-packages/torch_npu/utils/_tensor_str.py(41): npu_format",
    "/usr/local/lib/python3.10/site-packages/torch/nn/modules/linear.py(114): forward",
];
const LIB_MODULE: &str =
    "/usr/local/lib/python3.10/site-packages/torch/nn/modules/module.py(1527): _call_impl";
const LIB_OUTER: [&str; 4] = [
    "/usr/local/lib/python3.10/site-packages/verl/workers/fsdp_workers.py(612): update_actor",
    "/usr/local/lib/python3.10/site-packages/verl/single_controller/base/decorator.py(430): inner",
    "/usr/local/lib/python3.10/site-packages/ray/_private/worker.py(876): main_loop",
    "/usr/local/lib/python3.10/site-packages/ray/_private/workers/default_worker.py(282): <module>",
];

/// A `cpu_op` about to be written.
pub(super) struct Op {
    pub(super) name: String,
    pub(super) tid: u64,
    pub(super) ts: i64,
    pub(super) dur: i64,
    pub(super) seq: i64,
    pub(super) fwd: i64,
    pub(super) stack: Option<usize>,
}

/// An operator_memory row about to be written.
pub(super) struct Row {
    pub(super) name: String,
    pub(super) size: u64,
    pub(super) alloc: i64,
    pub(super) release: Option<i64>,
    pub(super) ge: bool,
    // filled by the accounting sweep
    pub(super) at_alloc: (u64, u64),
    pub(super) at_release: (u64, u64),
}

/// A task-queue pair: an enqueue on the main thread, a dequeue on the worker thread.
pub(super) struct QueueEv {
    /// The op's name (the events are `Enqueue@<name>` and `Dequeue@<name>`).
    pub(super) name: String,
    pub(super) ts: i64,
    pub(super) deq_ts: i64,
    pub(super) corr: u64,
}

/// A memory_record row: `APP` (reserved only), `GE` (no active, no stream), `PTA`, `PTA+GE`.
pub(super) struct Record {
    pub(super) component: &'static str,
    pub(super) ts: i64,
    pub(super) allocated: Option<u64>,
    pub(super) reserved: u64,
    pub(super) active: Option<u64>,
}

/// The CANN modules of npu_module_mem; the first three reserve memory.
pub(super) const MODULES: [&str; 10] = [
    "APP", "GE", "HCCL", "RUNTIME", "SLOG", "FE", "DRV", "AICPU", "ASCENDCL", "TBE",
];

/// One rank of a generated job before it is written: what both exports (text and db) hold.
pub(super) struct RankJob {
    pub(super) rank: u32,
    pub(super) pid: u64,
    pub(super) deq_tid: u64,
    pub(super) t0: i64,
    pub(super) end_t: i64,
    pub(super) stream: u64,
    /// Call stacks (innermost frame first, `;\r\n`-separated).
    pub(super) stacks: Vec<String>,
    /// Ops in the trace's order (children before parents).
    pub(super) ops: Vec<Op>,
    pub(super) queue: Vec<QueueEv>,
    /// Rows in generation order (PTA rows, then GE rows).
    pub(super) rows: Vec<Row>,
    /// memory_record rows in file order.
    pub(super) records: Vec<Record>,
    /// npu_module_mem rows: (index into [`MODULES`], time, reserved bytes).
    pub(super) modules: Vec<(usize, i64, u64)>,
    /// Target size of the text trace (filler events are added up to it).
    pub(super) trace_bytes: u64,
    pub(super) planted: Planted,
}

fn us(ns: i64) -> String {
    format!("{}.{:03}", ns / 1000, (ns % 1000).abs())
}

fn dur_us(ns: i64) -> String {
    let s = format!("{}.{:03}", ns / 1000, ns % 1000);
    let t = s.trim_end_matches('0');
    if t.ends_with('.') {
        format!("{t}0")
    } else {
        t.to_string()
    }
}

fn mb(bytes: u64) -> String {
    super::bytes_to_unit_text(i128::from(bytes), 1 << 20)
}

fn block(n: u64) -> u64 {
    ((n + 32).div_ceil(512) * 512).max(512)
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// Call sites of the synthetic model: (file, line, function) chains, 3–5 user frames deep.
fn make_stacks(rng: &mut Rng, n: usize) -> Vec<String> {
    let files = [
        "model.py",
        "layers.py",
        "attention.py",
        "mlp.py",
        "trainer.py",
    ];
    (0..n)
        .map(|k| {
            let mut frames: Vec<String> = Vec::new();
            frames.push(LIB_INNER[k % LIB_INNER.len()].to_string());
            frames.push(LIB_MODULE.to_string());
            let depth = 3 + rng.below(3) as usize;
            for d in 0..depth {
                let f = files[(k + d) % files.len()];
                frames.push(format!(
                    "/home/user/project/{f}({}): {}",
                    20 + rng.below(600),
                    ["forward", "block", "step", "train_batch", "compute_loss"][d % 5]
                ));
                if d + 1 < depth {
                    frames.push(LIB_MODULE.to_string());
                }
            }
            frames.extend(LIB_OUTER.iter().map(|s| s.to_string()));
            frames.push("<string>(1): <module>".to_string());
            frames.join(";\r\n")
        })
        .collect()
}

/// Builds one rank: its ops, stacks, rows, allocator records and module records.
pub(super) fn build_rank(spec: &GenSpec, rank: u32, role_idx: u32) -> RankJob {
    let mut rng = Rng(spec.seed
        ^ (u64::from(role_idx) << 32)
        ^ u64::from(rank).wrapping_mul(0x1234_5678_9ABC));
    let pid: u64 = 3_000_000 + u64::from(role_idx) * 1000 + u64::from(rank) * 7;
    let bwd_tid = pid + 9_763;
    let deq_tid = pid + 12_001;
    let t0: i64 = 1_736_405_443_000_000_000
        + i64::from(rank) * 1_337_123
        + i64::from(role_idx) * 5_000_000_000;
    let stacks = make_stacks(&mut rng, 64);
    let steps = spec.steps.max(1);
    let rows_target = u64::from(spec.rows.max(4));
    let ge_target = rows_target * 3 / 10;
    let pta_target = rows_target - ge_target;
    let per_step = pta_target.div_ceil(u64::from(steps));

    let mut ops: Vec<Op> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut queue: Vec<QueueEv> = Vec::new();
    let mut planted = Planted::default();
    let mut t = t0 + 100_000_000;
    let mut seq: i64 = 1000;
    let mut pta = 0u64;
    let mut corr: u64 = 1;
    let mut step_spans = Vec::new();
    for step in 0..steps {
        let step_start = t;
        let step_quota = per_step.min(pta_target - pta);
        let mut done_step = 0u64;
        // (seq, forward op name, activation rows waiting for backward)
        let mut fwd: Vec<(i64, usize, Vec<usize>)> = Vec::new();
        let fwd_quota = step_quota * 55 / 100;
        while done_step < fwd_quota.max(1) && pta < pta_target {
            seq += 1;
            let k = rng.below(FWD_OPS.len() as u64) as usize;
            let stack = rng.below(stacks.len() as u64) as usize;
            let parent_ts = t;
            t += 2_000 + rng.below(3_000) as i64;
            let mut acts = Vec::new();
            let children = 1 + rng.below(3);
            for _ in 0..children {
                if done_step >= fwd_quota.max(1) || pta >= pta_target {
                    break;
                }
                let name = rng.pick(&ALLOC_OPS).to_string();
                let cts = t;
                let cdur = 20_000 + rng.below(80_000) as i64;
                let nalloc = 1 + rng.below(2);
                for a in 0..nalloc {
                    if done_step >= fwd_quota.max(1) || pta >= pta_target {
                        break;
                    }
                    let at = cts + 1_000 + (a as i64) * 7_000 + rng.below(5_000) as i64;
                    let size = block((1 << (12 + rng.below(12))) + rng.below(4096));
                    let activation = rng.chance(500);
                    let release = if activation {
                        None
                    } else {
                        Some(at + 1_000 + rng.below(8_000) as i64)
                    };
                    rows.push(Row {
                        name: name.clone(),
                        size,
                        alloc: at,
                        release,
                        ge: false,
                        at_alloc: (0, 0),
                        at_release: (0, 0),
                    });
                    if activation {
                        acts.push(rows.len() - 1);
                    }
                    planted.direct += 1;
                    pta += 1;
                    done_step += 1;
                }
                ops.push(Op {
                    name: name.clone(),
                    tid: pid,
                    ts: cts,
                    dur: cdur,
                    seq: -1,
                    fwd: 0,
                    stack: Some(stack),
                });
                // The task queue: an enqueue on the main thread, a dequeue on the worker thread.
                if rng.chance(300) {
                    queue.push(QueueEv {
                        name: name.clone(),
                        ts: cts + 500,
                        deq_ts: cts + 2_500,
                        corr,
                    });
                    corr += 1;
                }
                // Rarely, an allocation just after its op ended: no op contains it (approximate).
                if rng.chance(20) && pta < pta_target && done_step < fwd_quota.max(1) {
                    let at = cts + cdur + 300;
                    rows.push(Row {
                        name: name.clone(),
                        size: block(4096),
                        alloc: at,
                        release: Some(at + 500),
                        ge: false,
                        at_alloc: (0, 0),
                        at_release: (0, 0),
                    });
                    planted.approximate += 1;
                    pta += 1;
                    done_step += 1;
                }
                t = cts + cdur + 1_000 + rng.below(2_000) as i64;
            }
            t += 1_000;
            let pdur = t - parent_ts;
            ops.push(Op {
                name: FWD_OPS[k].0.to_string(),
                tid: pid,
                ts: parent_ts,
                dur: pdur,
                seq,
                fwd: 0,
                stack: Some(stack),
            });
            fwd.push((seq, k, acts));
            t += 1_000 + rng.below(5_000) as i64;
        }
        // Backward, in reverse order, on the autograd thread; the step's remaining quota is spread
        // over the autograd nodes, less ~2% left for allocations outside any node.
        t += 200_000;
        let none_quota = (step_quota / 50).max(1);
        let mut nodes_left = fwd.len() as u64;
        for (s, k, acts) in fwd.iter().rev() {
            let left = step_quota
                .saturating_sub(done_step)
                .saturating_sub(none_quota);
            let per_node = left.div_ceil(nodes_left.max(1));
            nodes_left = nodes_left.saturating_sub(1);
            if pta >= pta_target || per_node == 0 {
                // Still release the activations.
                for &r in acts {
                    if let Some(row) = rows.get_mut(r) {
                        row.release = Some(t);
                    }
                }
                t += 2_000;
                continue;
            }
            let node_ts = t;
            t += 1_500;
            let mut made = 0;
            while made < per_node && pta < pta_target {
                let name = rng.pick(&BWD_ALLOC_OPS).to_string();
                let cts = t;
                let cdur = 30_000 + rng.below(60_000) as i64;
                let nalloc = (per_node - made).min(1 + rng.below(3));
                for a in 0..nalloc {
                    let at = cts + 2_000 + (a as i64) * 9_000 + rng.below(6_000) as i64;
                    rows.push(Row {
                        name: name.clone(),
                        size: block((1 << (10 + rng.below(11))) + rng.below(4096)),
                        alloc: at,
                        release: Some(cts + cdur + 5_000),
                        ge: false,
                        at_alloc: (0, 0),
                        at_release: (0, 0),
                    });
                    planted.via_forward += 1;
                    pta += 1;
                    done_step += 1;
                    made += 1;
                }
                ops.push(Op {
                    name: name.clone(),
                    tid: bwd_tid,
                    ts: cts,
                    dur: cdur,
                    seq: -1,
                    fwd: 0,
                    stack: None,
                });
                t = cts + cdur + 1_000;
            }
            for &r in acts {
                if let Some(row) = rows.get_mut(r) {
                    row.release = Some(t);
                }
            }
            ops.push(Op {
                name: FWD_OPS[*k].1.to_string(),
                tid: bwd_tid,
                ts: node_ts,
                dur: t - node_ts,
                seq: *s,
                fwd: 1,
                stack: None,
            });
            let wrapper_name = format!("autograd::engine::evaluate_function: {}", FWD_OPS[*k].1);
            ops.push(Op {
                name: wrapper_name,
                tid: bwd_tid,
                ts: node_ts - 200,
                dur: t - node_ts + 400,
                seq: -1,
                fwd: 1,
                stack: None,
            });
            t += 3_000;
        }
        // Gradient accumulation outside any autograd node: no stack can be recovered.
        while done_step < step_quota && pta < pta_target {
            let cts = t;
            let at = cts + 1_000;
            rows.push(Row {
                name: "aten::zeros".to_string(),
                size: block(1 << (12 + rng.below(10))),
                alloc: at,
                release: if rng.chance(900) {
                    Some(at + 40_000)
                } else {
                    None
                },
                ge: false,
                at_alloc: (0, 0),
                at_release: (0, 0),
            });
            planted.none_pta += 1;
            pta += 1;
            done_step += 1;
            ops.push(Op {
                name: "aten::zeros".to_string(),
                tid: bwd_tid,
                ts: cts,
                dur: 5_000,
                seq: -1,
                fwd: 0,
                stack: None,
            });
            ops.push(Op {
                name: "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
                    .to_string(),
                tid: bwd_tid,
                ts: cts - 100,
                dur: 5_200,
                seq: -1,
                fwd: 0,
                stack: None,
            });
            t += 8_000;
        }
        t += 500_000;
        let step_stack = rng.below(stacks.len() as u64) as usize;
        ops.push(Op {
            name: format!("ProfilerStep#{}", step + 1),
            tid: pid,
            ts: step_start - 1_000,
            dur: t - step_start + 2_000,
            seq: -1,
            fwd: 0,
            stack: Some(step_stack),
        });
        step_spans.push((step_start - 1_000, t + 1_000));
        t += 2_000_000;
    }
    let end_t = t;
    // cann:: rows spread over the steps.
    for i in 0..ge_target {
        let (a, b) = step_spans
            .get((i as usize) % step_spans.len().max(1))
            .copied()
            .unwrap_or((t0, end_t));
        let at = a + rng.below((b - a).max(1) as u64) as i64;
        let d = 10_000 + (rng.below(20_000) as i64) * 10; // CANN durations have 2 decimals (10 ns)
        rows.push(Row {
            name: rng.pick(&CANN_OPS).to_string(),
            size: 1024 * (1 + rng.below(60_000)),
            alloc: at,
            release: Some(at + d),
            ge: true,
            at_alloc: (0, 0),
            at_release: (0, 0),
        });
    }
    planted.rows_ge = ge_target;
    planted.rows = rows.len() as u64;
    if spec.outlier && role_idx == 0 && rank + 1 == spec.ranks.max(1) {
        for r in rows.iter_mut().filter(|r| !r.ge) {
            r.size *= 3;
        }
    }
    // Leaks: a few activations never released (decided now so accounting sees them).
    for r in rows.iter_mut().filter(|r| !r.ge) {
        if r.release.is_none() {
            planted.unreleased += 1;
        } else if rng.chance(15) {
            r.release = None;
            planted.unreleased += 1;
        }
    }
    // Accounting: PTA allocated/reserved, GE allocated/reserved, in time order.
    let mut ev: Vec<(i64, bool, usize)> = Vec::new(); // (time, is_alloc, row)
    for (i, r) in rows.iter().enumerate() {
        ev.push((r.alloc, true, i));
        if let Some(rel) = r.release {
            ev.push((rel, false, i));
        }
    }
    ev.sort_by_key(|e| (e.0, !e.1, e.2));
    let base_alloc: u64 =
        (900 << 20) + u64::from(rank) * (3 << 20) + u64::from(role_idx) * (40 << 20);
    let (mut pa, mut pr) = (base_alloc, (base_alloc / (20 << 20) + 2) * (20 << 20));
    let (mut ga, mut gr) = (40u64 << 20, 74u64 << 20);
    let mut records: Vec<Record> = Vec::new();
    let mut app_t = t0;
    while app_t < end_t {
        records.push(Record {
            component: "APP",
            ts: app_t,
            allocated: None,
            reserved: pr + gr + (300 << 20),
            active: None,
        });
        app_t += 20_000_000;
    }
    let stream = 1_431_569_360u64 + u64::from(rank);
    for (time, is_alloc, i) in ev {
        let Some(r) = rows.get_mut(i) else { continue };
        if r.ge {
            if is_alloc {
                ga += r.size;
                if ga > gr {
                    gr = ga.div_ceil(2 << 20) * (2 << 20);
                }
                r.at_alloc = (ga, gr);
            } else {
                ga = ga.saturating_sub(r.size);
                r.at_release = (ga, gr);
            }
            records.push(Record {
                component: "GE",
                ts: time,
                allocated: Some(ga),
                reserved: gr,
                active: None,
            });
        } else {
            if is_alloc {
                pa += r.size;
                if pa > pr {
                    let seg: u64 = if r.size <= 1 << 20 {
                        2 << 20
                    } else {
                        (r.size.div_ceil(2 << 20) * (2 << 20)).max(20 << 20)
                    };
                    pr += seg;
                }
                r.at_alloc = (pa, pr);
            } else {
                pa = pa.saturating_sub(r.size);
                r.at_release = (pa, pr);
            }
            records.push(Record {
                component: "PTA",
                ts: time,
                allocated: Some(pa),
                reserved: pr,
                active: Some(pa),
            });
        }
        records.push(Record {
            component: "PTA+GE",
            ts: time,
            allocated: Some(pa + ga),
            reserved: pr + gr,
            active: Some(pa + ga),
        });
    }
    let mut modules = Vec::new();
    let mut mt = t0;
    while mt < end_t {
        for k in 0..MODULES.len() {
            let v = if k < 3 {
                (k as u64 + 1) * (37 << 20)
            } else {
                0
            };
            modules.push((k, mt, v));
        }
        mt += 20_000_000;
    }
    // The trace's order: framework events in record order (children before parents).
    ops.sort_by_key(|o| (o.ts.saturating_add(o.dur), -o.dur));
    RankJob {
        rank,
        pid,
        deq_tid,
        t0,
        end_t,
        stream,
        stacks,
        ops,
        queue,
        rows,
        records,
        modules,
        trace_bytes: spec.trace_bytes,
        planted,
    }
}

/// The run folder path of (role, rank): `<role>/<host>_<pid>_<timestamp>_ascend_pt`.
pub fn run_dir(role_idx: u32, rank: u32) -> String {
    let role = ROLES
        .get(role_idx as usize)
        .map_or_else(|| format!("role{role_idx}"), |r| r.to_string());
    format!(
        "{role}/node-{}.cluster.local_{}_2025010914{:02}{:02}{:03}_ascend_pt",
        rank / 8,
        3_000_000 + u64::from(role_idx) * 1000 + u64::from(rank) * 7,
        role_idx % 60,
        rank % 60,
        rank % 1000
    )
}

/// The `trace_view.json` of a generated job of one rank (`trace_bytes` long, from `seed`; 40
/// operator rows, two steps): for tests and benchmarks that need one real-shaped trace.
pub fn one_trace(trace_bytes: u64, seed: u64) -> std::io::Result<Vec<u8>> {
    let spec = GenSpec {
        roles: 1,
        ranks: 1,
        trace_bytes,
        rows: 40,
        steps: 2,
        seed,
        outlier: false,
    };
    let mut trace = Vec::new();
    generate(&spec, &mut |path, bytes| {
        if path.ends_with("trace_view.json") {
            trace = bytes;
        }
        Ok(())
    })?;
    Ok(trace)
}

/// Generates the job, handing every file to `sink(relative path, bytes)` one at a time (so only
/// one file is in memory). Returns what was planted, per (role, rank) in generation order.
pub fn generate(
    spec: &GenSpec,
    sink: &mut dyn FnMut(&str, Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<Vec<Planted>> {
    let mut out = Vec::new();
    for role in 0..spec.roles.max(1) {
        for rank in 0..spec.ranks.max(1) {
            let job = build_rank(spec, rank, role);
            text::write_text(&job, &run_dir(role, rank), sink)?;
            out.push(job.planted);
        }
    }
    Ok(out)
}
