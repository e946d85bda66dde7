//! `memlens generate`: deterministic synthetic inputs for tests and benchmarks.

use crate::ui::Ui;
use clap::Subcommand;
use memlens::profiler::generate::GenSpec;
use memlens::somas::generate::{generate_grown, Flavor, GenConfig};
use std::path::PathBuf;
use std::process::ExitCode;

/// What to generate.
#[derive(Subcommand)]
pub enum What {
    /// A realistic SOMAS dump (and optionally its task_info_graph file), valid by construction,
    /// with every trap of the format and, on request, known injected overwrite conflicts.
    ///
    /// Example: memlens generate somas --flavor v2.4 --nodes 200000 --seed 7 --inject-conflicts 5
    /// --out big.ir --task-info-out task_info_graph_1.ir
    Somas {
        /// v1.10, v2.0 (v2.0-2.3 layout), v2.4 (full names) or r1 (r1.x somas_allocate_info).
        #[arg(long, default_value = "v2.0")]
        flavor: String,
        /// Number of nodes (approximate).
        #[arg(long, default_value_t = 10_000)]
        nodes: u32,
        /// PRNG seed: the same arguments give the same bytes.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Overwrite conflicts to inject (printed as tensor-id pairs).
        #[arg(long, default_value_t = 0)]
        inject_conflicts: u32,
        /// Where to write the dump.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Also write the matching task_info_graph file here.
        #[arg(long, value_name = "FILE")]
        task_info_out: Option<PathBuf>,
        /// Make one plain workspace this many bytes larger (moved to the top of the block), for
        /// comparisons: the same arguments without it write the baseline.
        #[arg(long, value_name = "BYTES", default_value_t = 0)]
        grow_tensor: u64,
    },
    /// A torch_npu job: ROLES × RANKS run folders with trace_view.json, operator_memory.csv,
    /// memory_record.csv, npu_module_mem.csv and profiler_info/metadata JSON (or, with
    /// `--export db`, the database export of the same job; `ascend` is the same command under its
    /// former name).
    #[command(visible_alias = "ascend")]
    Profiler {
        /// Folder to write the job into (created).
        #[arg(long)]
        out: PathBuf,
        /// Number of roles (actor, ref, critic, rollout, …).
        #[arg(long, default_value_t = 1)]
        roles: u32,
        /// Ranks per role.
        #[arg(long, default_value_t = 2)]
        ranks: u32,
        /// Approximate trace_view.json size per rank, in MiB (fractions allowed).
        #[arg(long, default_value_t = 1.0)]
        trace_mb: f64,
        /// operator_memory.csv rows per rank.
        #[arg(long, default_value_t = 1000)]
        rows: u32,
        /// Profiler steps per run.
        #[arg(long, default_value_t = 2)]
        steps: u32,
        /// Seed of the pseudo-random choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Make the last rank of the first role an outlier (allocations three times as large).
        #[arg(long)]
        outlier: bool,
        /// Which export to write: `text` (CSV and JSON files) or `db` (the same job as
        /// ascend_pytorch_profiler_{rank}.db, one row of its PYTORCH_API per event the text
        /// trace would hold).
        #[arg(long, value_enum, default_value_t = Export::Text)]
        export: Export,
        /// Inject one block of BYTES alive exactly across the framework peak (own op and frame)
        /// into the last rank of the first role, for comparisons.
        #[arg(long, value_name = "BYTES")]
        inject_peak_bytes: Option<u64>,
        /// Inject one never-released block of BYTES after the last record into that rank.
        #[arg(long, value_name = "BYTES")]
        inject_unreleased_bytes: Option<u64>,
    },
    /// A PyTorch / torch_npu memory snapshot pickle of about the given size: a simulated
    /// training loop per device with deep repeated stacks, two streams, optional expandable
    /// segments and OOMs, in the current, torch-2.0 or bare-segment-list layout.
    ///
    /// Example: memlens generate snapshot --size-mb 1100 --devices 2 --ooms 3 --out big.pickle
    Snapshot {
        /// Where to write the pickle.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Approximate file size in MiB (fractions allowed).
        #[arg(long, default_value_t = 8.0)]
        size_mb: f64,
        /// Devices, each with its trace and segments.
        #[arg(long, default_value_t = 1)]
        devices: u32,
        /// current, torch2.0 or segment-list.
        #[arg(long, default_value = "current")]
        layout: String,
        /// Pickle protocol (2 to 5).
        #[arg(long, default_value_t = 4)]
        protocol: u8,
        /// Use expandable segments (segment_map / segment_unmap).
        #[arg(long)]
        expandable: bool,
        /// OOM events per device.
        #[arg(long, default_value_t = 0)]
        ooms: u32,
        /// Deepest stack in frames.
        #[arg(long, default_value_t = 300)]
        max_depth: u32,
        /// Seed of the pseudo-random choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// The export a generated torch_npu job is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Export {
    /// operator_memory.csv, memory_record.csv, npu_module_mem.csv, trace_view.json.
    Text,
    /// ascend_pytorch_profiler_{rank}.db.
    Db,
}

/// Runs the command. `generate somas` prints one JSON line describing what was written;
/// `generate profiler` says how many files it wrote (one JSON line with `--json`).
pub fn run(what: What, ui: Ui) -> Result<ExitCode, String> {
    match what {
        What::Somas {
            flavor,
            nodes,
            seed,
            inject_conflicts,
            out,
            task_info_out,
            grow_tensor,
        } => {
            let flavor = Flavor::parse(&flavor)
                .ok_or_else(|| format!("--flavor {flavor}: expected v1.10, v2.0, v2.4 or r1"))?;
            let g = generate_grown(
                &GenConfig {
                    flavor,
                    nodes,
                    seed,
                    inject_conflicts,
                    task_info: task_info_out.is_some(),
                },
                grow_tensor,
            );
            std::fs::write(&out, &g.dump)
                .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
            if let (Some(p), Some(t)) = (&task_info_out, &g.task_info) {
                std::fs::write(p, t).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            }
            let summary = serde_json::json!({
                "file": out.display().to_string(),
                "bytes": g.dump.len(),
                "nodes": g.nodes,
                "tensors": g.tensors,
                "reused_bytes": g.reused,
                "injected_conflicts": g.injected.iter().map(|p| [p.0, p.1]).collect::<Vec<_>>(),
                "grown_tensor": g.grown.map(|x| serde_json::json!({
                    "tensor": x.tensor,
                    "node_index": x.node_index,
                    "aligned_before": x.aligned_before,
                    "aligned_after": x.aligned_after,
                })),
                "traps": {
                    "contiguous_lists": g.traps.contiguous_lists,
                    "union_groups": g.traps.union_groups,
                    "clean_ops": g.traps.clean_ops,
                    "repeated_nodes": g.traps.repeated_nodes,
                    "lifelong": g.traps.lifelong,
                },
            });
            println!("{summary}");
            Ok(ExitCode::SUCCESS)
        }
        What::Profiler {
            out,
            roles,
            ranks,
            trace_mb,
            rows,
            steps,
            seed,
            outlier,
            export,
            inject_peak_bytes,
            inject_unreleased_bytes,
        } => {
            let spec = GenSpec {
                roles,
                ranks,
                trace_bytes: (trace_mb.max(0.0) * (1u64 << 20) as f64) as u64,
                rows,
                steps,
                seed,
                outlier,
            };
            if export == Export::Db
                && (inject_peak_bytes.is_some() || inject_unreleased_bytes.is_some())
            {
                return Err(
                    "--inject-peak-bytes and --inject-unreleased-bytes change the text \
                            export only: leave out --export db"
                        .to_string(),
                );
            }
            let n = std::cell::Cell::new(0u64);
            let total = std::cell::Cell::new(0u64);
            let mut sink = |path: &str, bytes: Vec<u8>| {
                let p = out.join(path);
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                total.set(total.get() + bytes.len() as u64);
                std::fs::write(&p, bytes)?;
                n.set(n.get() + 1);
                Ok(())
            };
            match export {
                Export::Text => memlens::profiler::generate::generate(&spec, &mut sink),
                #[cfg(feature = "db-writer")]
                Export::Db => {
                    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
                    memlens::profiler::generate::db::generate_db(&spec, &out, &mut sink)
                }
                #[cfg(not(feature = "db-writer"))]
                Export::Db => {
                    return Err(
                        "--export db needs the SQLite writer: this memlens was built \
                                without the `db-writer` feature"
                            .to_string(),
                    )
                }
            }
            .map_err(|e| e.to_string())?;
            let (n, total) = (n.get(), total.get());
            use memlens::profiler::inject::{inject, Change, RunTexts};
            let changes = [
                inject_peak_bytes.map(Change::GrowAtPeak),
                inject_unreleased_bytes.map(Change::Unreleased),
            ];
            let dir = out.join(memlens::profiler::generate::run_dir(0, ranks.max(1) - 1));
            for change in changes.into_iter().flatten() {
                let paths = RunTexts::paths(&dir.display().to_string());
                let read = |p: &String| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
                let mut texts = RunTexts {
                    operator_memory: read(&paths[0])?,
                    memory_record: read(&paths[1])?,
                    trace_view: read(&paths[2])?,
                };
                let injected = inject(&mut texts, change)?;
                for (p, t) in paths.iter().zip([
                    &texts.operator_memory,
                    &texts.memory_record,
                    &texts.trace_view,
                ]) {
                    std::fs::write(p, t).map_err(|e| format!("{p}: {e}"))?;
                }
                println!(
                    "{}",
                    serde_json::to_string(&injected).map_err(|e| e.to_string())?
                );
            }
            if ui.json {
                let summary = serde_json::json!({
                    "out": out.display().to_string(),
                    "files": n,
                    "bytes": total,
                });
                println!("{summary}");
            } else {
                ui.note(&format!("wrote {n} files under {}", out.display()));
            }
            Ok(ExitCode::SUCCESS)
        }
        What::Snapshot {
            out,
            size_mb,
            devices,
            layout,
            protocol,
            expandable,
            ooms,
            max_depth,
            seed,
        } => {
            use memlens::snapshot::generate::{generate, GenConfig, GenLayout};
            let layout = GenLayout::parse(&layout).ok_or_else(|| {
                format!("--layout {layout}: expected current, torch2.0 or segment-list")
            })?;
            if !(2..=5).contains(&protocol) {
                return Err(format!("--protocol {protocol}: expected 2 to 5"));
            }
            let cfg = GenConfig {
                target_bytes: (size_mb.max(0.0) * (1u64 << 20) as f64) as u64,
                devices: devices.max(1),
                seed,
                layout,
                protocol,
                expandable,
                ooms,
                max_depth,
            };
            let file = std::fs::File::create(&out)
                .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
            let stats = generate(&cfg, std::io::BufWriter::with_capacity(1 << 20, file))
                .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
            let devices: Vec<_> = stats
                .devices
                .iter()
                .map(|d| {
                    serde_json::json!({
                        "device": d.device,
                        "trace_entries": d.entries,
                        "actions": memlens::snapshot::generate::ACTIONS
                            .iter()
                            .zip(d.actions)
                            .map(|(a, n)| (a.to_string(), serde_json::json!(n)))
                            .collect::<serde_json::Map<_, _>>(),
                        "segments": d.segments,
                        "blocks": d.blocks,
                        "reserved_bytes": d.reserved_bytes,
                        "allocated_bytes": d.allocated_bytes,
                        "expandable_segments": d.expandable_segments,
                    })
                })
                .collect();
            println!(
                "{}",
                serde_json::json!({
                    "file": out.display().to_string(),
                    "bytes": stats.bytes,
                    "stacks": stats.stacks,
                    "devices": devices,
                })
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
