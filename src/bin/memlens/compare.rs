//! `memlens compare`: a baseline and a candidate of one family side by side — two profiler runs
//! or jobs (folders, archives), two steps, or two SOMAS dumps — printing what grew and where.
//!
//! Exit codes: 0 success (differences are results), 1 a side holds nothing to compare, 2 bad
//! input (with `--fail-if-peak-grows` also a paired rank's file that a side could not use), 3 with
//! `--fail-if-peak-grows` when a peak grew by more than the given percentage.

use crate::ui::{self, Ui};
use memlens::compare::load::{compare_sides, load_side, LoadError, Side};
use memlens::compare::profiler::describe;
use memlens::compare::{CompareOptions, Comparison};
use memlens::export::compare as exp;
use memlens::families;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `memlens compare`.
#[derive(clap::Args)]
pub struct Args {
    /// The baseline: a profiler run folder, job folder or archive, or a SOMAS dump.
    pub base: PathBuf,
    /// The candidate, of the same family (may be the same path as the baseline with steps).
    pub candidate: PathBuf,
    /// Write the comparison's CSV tables and summary.json to this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Exit with code 3 when a peak (a rank's peak allocated, a dump's peak in-use) grew by more
    /// than PCT percent (a CI gate).
    #[arg(long, value_name = "PCT")]
    pub fail_if_peak_grows: Option<f64>,
    /// Profiler: compare the baseline's ProfilerStep#N instead of the whole capture.
    #[arg(long, value_name = "N")]
    pub base_step: Option<u64>,
    /// Profiler: compare the candidate's ProfilerStep#N instead of the whole capture.
    #[arg(long, value_name = "N")]
    pub candidate_step: Option<u64>,
}

/// Loads one side from `path` (the paths were checked before).
fn load(path: &Path, which: &str) -> Result<Side, LoadError> {
    let mut set = families::input_set_from_paths(&[path.to_path_buf()]);
    load_side(&mut set, &format!("{which} {}", path.display()))
}

fn mib(b: u64) -> f64 {
    b as f64 / (1u64 << 20) as f64
}

fn signed_mib(b: i64) -> String {
    format!("{:+.1}", b as f64 / (1u64 << 20) as f64)
}

/// The growth gate's message, when the gate trips.
fn gate(c: &Comparison, pct: f64) -> Option<String> {
    match c {
        Comparison::Profiler(p) => {
            let grown = p.grown_beyond(pct);
            if grown.is_empty() {
                return None;
            }
            let mut lines = vec![format!(
                "peak allocated grew by more than {pct}% on {} rank pair(s):",
                grown.len()
            )];
            for g in grown {
                let top: Vec<String> = g
                    .live_at_peak
                    .iter()
                    .filter(|f| f.delta_bytes > 0)
                    .take(3)
                    .map(|f| format!("{} ({} MiB)", f.frame, signed_mib(f.delta_bytes)))
                    .collect();
                lines.push(format!(
                    "  {}: {:.1} → {:.1} MiB ({}); top frames that grew at the peak: {}",
                    describe(&g.key),
                    mib(g.base.peak_allocated_bytes),
                    mib(g.candidate.peak_allocated_bytes),
                    g.peak_allocated_growth_percent
                        .map_or("from 0".to_string(), |x| format!("{x:+.2}%")),
                    if top.is_empty() {
                        "none".to_string()
                    } else {
                        top.join(", ")
                    }
                ));
            }
            Some(lines.join("\n"))
        }
        Comparison::Somas(s) => {
            let grew =
                match memlens::compare::growth_percent(s.base.peak_in_use, s.candidate.peak_in_use)
                {
                    Some(g) => g > pct,
                    None => s.peak_in_use_delta_bytes > 0,
                };
            if !grew {
                return None;
            }
            let top: Vec<String> = s
                .changed_tensors
                .iter()
                .chain(&s.one_side_tensors)
                .filter(|t| t.peak_effect_bytes > 0)
                .take(3)
                .map(|t| {
                    format!(
                        "{} {} ({} MiB)",
                        t.source,
                        t.slot,
                        signed_mib(t.peak_effect_bytes)
                    )
                })
                .collect();
            Some(format!(
                "peak in-use grew by more than {pct}%: {:.1} MiB at node {} → {:.1} MiB at node {}; \
                 top tensors: {}",
                mib(s.base.peak_in_use),
                s.base.peak_node,
                mib(s.candidate.peak_in_use),
                s.candidate.peak_node,
                if top.is_empty() {
                    "none".to_string()
                } else {
                    top.join(", ")
                }
            ))
        }
    }
}

fn print_text(c: &Comparison, w: &mut dyn Write) -> std::io::Result<()> {
    match c {
        Comparison::Profiler(p) => {
            writeln!(
                w,
                "{} rank pair(s) compared ({}), {} difference(s)",
                p.pairs.len(),
                p.mode,
                p.differences
            )?;
            for pair in &p.pairs {
                writeln!(
                    w,
                    "{}: peak allocated {:.1} → {:.1} MiB ({} MiB), reserved {:.1} → {:.1} MiB ({} MiB)",
                    describe(&pair.key),
                    mib(pair.base.peak_allocated_bytes),
                    mib(pair.candidate.peak_allocated_bytes),
                    signed_mib(pair.peak_allocated_delta_bytes),
                    mib(pair.base.peak_reserved_bytes),
                    mib(pair.candidate.peak_reserved_bytes),
                    signed_mib(pair.peak_reserved_delta_bytes),
                )?;
                for f in pair
                    .live_at_peak
                    .iter()
                    .filter(|f| f.delta_bytes != 0)
                    .take(5)
                {
                    writeln!(
                        w,
                        "    at peak {:>9} MiB  {}",
                        signed_mib(f.delta_bytes),
                        f.frame
                    )?;
                }
                for g in pair.only_candidate_allocations.iter().take(3) {
                    writeln!(
                        w,
                        "    only in candidate: {} × {} ({:.1} MiB)  {}",
                        g.count,
                        g.name,
                        mib(g.bytes),
                        g.frame
                    )?;
                }
                for g in pair.only_base_allocations.iter().take(3) {
                    writeln!(
                        w,
                        "    only in baseline: {} × {} ({:.1} MiB)  {}",
                        g.count,
                        g.name,
                        mib(g.bytes),
                        g.frame
                    )?;
                }
                for u in pair.new_unreleased.iter().take(3) {
                    writeln!(
                        w,
                        "    new unreleased: {} × {} B {}  {}",
                        u.new_count, u.size, u.name, u.frame
                    )?;
                }
            }
            for k in &p.only_base_ranks {
                writeln!(w, "only in baseline: {}", describe(k))?;
            }
            for k in &p.only_candidate_ranks {
                writeln!(w, "only in candidate: {}", describe(k))?;
            }
            for n in &p.notes {
                writeln!(w, "note: {n}")?;
            }
        }
        Comparison::Somas(s) => {
            writeln!(
                w,
                "{} node(s) matched ({} by order among repeated names), {} only in baseline, {} only in candidate; {} difference(s)",
                s.nodes_matched,
                s.nodes_matched_by_order,
                s.only_base_nodes.len(),
                s.only_candidate_nodes.len(),
                s.differences
            )?;
            writeln!(
                w,
                "peak in-use {:.1} MiB at {} → {:.1} MiB at {} ({} MiB)",
                mib(s.base.peak_in_use),
                s.base.peak_node,
                mib(s.candidate.peak_in_use),
                s.candidate.peak_node,
                signed_mib(s.peak_in_use_delta_bytes)
            )?;
            writeln!(
                w,
                "upper bound {:.1} → {:.1} MiB, after reuse {:.1} → {:.1} MiB",
                mib(s.base.upper_bound),
                mib(s.candidate.upper_bound),
                mib(s.base.reused),
                mib(s.candidate.reused)
            )?;
            writeln!(
                w,
                "{} node(s) with a different in-use",
                s.node_differences.len()
            )?;
            for t in s.changed_tensors.iter().take(10) {
                writeln!(
                    w,
                    "    changed tensor {} {}: {} → {} B, at peak {} MiB{}",
                    t.source,
                    t.slot,
                    t.base_size,
                    t.candidate_size,
                    signed_mib(t.peak_effect_bytes),
                    if t.life_changed {
                        ", lifetime changed"
                    } else {
                        ""
                    }
                )?;
            }
            for t in s.one_side_tensors.iter().take(10) {
                writeln!(
                    w,
                    "    only in {}: tensor {} {} ({} B)",
                    if t.base_id.is_some() {
                        "baseline"
                    } else {
                        "candidate"
                    },
                    t.source,
                    t.slot,
                    t.base_size.max(t.candidate_size)
                )?;
            }
        }
    }
    Ok(())
}

/// Runs the command.
pub fn run(args: &Args, ui: Ui) -> Result<ExitCode, String> {
    ui.check_paths(&[args.base.clone(), args.candidate.clone()])?;
    if let Some(p) = args.fail_if_peak_grows {
        if !p.is_finite() || p < 0.0 {
            return Err(format!(
                "--fail-if-peak-grows {p}: expected a percentage ≥ 0"
            ));
        }
    }
    let mut sides = Vec::new();
    for (path, which) in [(&args.base, "baseline"), (&args.candidate, "candidate")] {
        match load(path, which) {
            Ok(s) => sides.push(s),
            Err(LoadError::Nothing(m)) => {
                ui::error(&m);
                return Ok(ExitCode::from(1));
            }
            Err(LoadError::Bad(m)) => return Err(m),
        }
    }
    let (Some(candidate), Some(base)) = (sides.pop(), sides.pop()) else {
        return Err("internal: two sides expected".into());
    };
    let opts = CompareOptions {
        base_step: args.base_step,
        candidate_step: args.candidate_step,
    };
    let c = compare_sides(&base, &candidate, &opts)?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (name, bytes) in exp::files(&c)? {
            let p = dir.join(&name);
            std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))?;
        }
    }
    let mut stdout = std::io::stdout().lock();
    if ui.json {
        let text = exp::summary_json(&c).map_err(|e| e.to_string())?;
        stdout
            .write_all(text.as_bytes())
            .map_err(|e| e.to_string())?;
    } else {
        print_text(&c, &mut stdout).map_err(|e| e.to_string())?;
    }
    if let Some(pct) = args.fail_if_peak_grows {
        // A peak compared without some of its files says nothing either way: the gate fails as
        // for any input it cannot read, rather than pass a candidate whose files are broken.
        let unusable = c.unusable_files();
        if !unusable.is_empty() {
            ui::error(&format!(
                "--fail-if-peak-grows {pct}: cannot judge the peaks, {} file(s) could not be \
                 used:\n  {}",
                unusable.len(),
                unusable.join("\n  ")
            ));
            return Ok(ExitCode::from(2));
        }
        if let Some(msg) = gate(&c, pct) {
            ui::error(&msg);
            return Ok(ExitCode::from(3));
        }
    }
    // The profiler's rule (`Verdict`): a file that could not be used is exit 2, the comparison
    // of the rest printed all the same.
    let unusable = c.unusable_files();
    if !unusable.is_empty() {
        ui::error(&format!(
            "memlens: {} file(s) could not be used; the comparison is of the rest:\n  {}",
            unusable.len(),
            unusable.join("\n  ")
        ));
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
