//! The files of a comparison (`memlens compare --out`, and the same bytes for any other front
//! end): CSV tables of the differences plus `summary.json`, which is what `--json` prints.

use super::write_csv;
use crate::compare::profiler::{ProfilerComparison, RankKey};
use crate::compare::somas::{SomasComparison, TensorDiff};
use crate::compare::Comparison;
use crate::profiler::ns_to_ms_text;

/// The `--json` text of a comparison (pretty, with a final newline).
pub fn summary_json(c: &Comparison) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(c)?;
    text.push('\n');
    Ok(text)
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn key_cells(k: &RankKey) -> [String; 3] {
    [k.role.clone(), opt(k.rank), opt(k.step)]
}

fn percent(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_default()
}

fn csv(header: &[&str], rows: Vec<Vec<String>>) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    write_csv(&mut out, header, rows)?;
    Ok(out)
}

fn profiler_files(c: &ProfilerComparison) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let pairs = c
        .pairs
        .iter()
        .map(|p| {
            let mut r: Vec<String> = key_cells(&p.key).into();
            r.extend([
                opt(p.base.step),
                opt(p.candidate.step),
                p.base.peak_allocated_bytes.to_string(),
                p.candidate.peak_allocated_bytes.to_string(),
                p.peak_allocated_delta_bytes.to_string(),
                percent(p.peak_allocated_growth_percent),
                ns_to_ms_text(p.base.peak_allocated_offset_ns),
                ns_to_ms_text(p.candidate.peak_allocated_offset_ns),
                p.base.peak_reserved_bytes.to_string(),
                p.candidate.peak_reserved_bytes.to_string(),
                p.peak_reserved_delta_bytes.to_string(),
                percent(p.peak_reserved_growth_percent),
                p.base.unreleased_blocks.to_string(),
                p.candidate.unreleased_blocks.to_string(),
                p.base.unreleased_bytes.to_string(),
                p.candidate.unreleased_bytes.to_string(),
                p.differences.to_string(),
            ]);
            r
        })
        .collect();
    let mut live = Vec::new();
    let mut only = Vec::new();
    let mut unreleased = Vec::new();
    for p in &c.pairs {
        for f in &p.live_at_peak {
            let mut r: Vec<String> = key_cells(&p.key).into();
            r.extend([
                f.frame.clone(),
                f.base_bytes.to_string(),
                f.candidate_bytes.to_string(),
                f.delta_bytes.to_string(),
                f.base_count.to_string(),
                f.candidate_count.to_string(),
            ]);
            live.push(r);
        }
        for (side, groups) in [
            ("baseline", &p.only_base_allocations),
            ("candidate", &p.only_candidate_allocations),
        ] {
            for g in groups {
                let mut r: Vec<String> = key_cells(&p.key).into();
                r.extend([
                    side.to_string(),
                    g.name.clone(),
                    g.frame.clone(),
                    g.count.to_string(),
                    g.bytes.to_string(),
                ]);
                only.push(r);
            }
        }
        for u in &p.new_unreleased {
            let mut r: Vec<String> = key_cells(&p.key).into();
            r.extend([
                u.name.clone(),
                u.frame.clone(),
                u.size.to_string(),
                u.base_count.to_string(),
                u.candidate_count.to_string(),
                u.new_count.to_string(),
                u.new_bytes.to_string(),
            ]);
            unreleased.push(r);
        }
    }
    Ok(vec![
        (
            "compare_ranks.csv".into(),
            csv(
                &[
                    "role",
                    "rank",
                    "step_folder",
                    "base_step",
                    "candidate_step",
                    "base_peak_allocated_bytes",
                    "candidate_peak_allocated_bytes",
                    "peak_allocated_delta_bytes",
                    "peak_allocated_growth_percent",
                    "base_peak_offset_ms",
                    "candidate_peak_offset_ms",
                    "base_peak_reserved_bytes",
                    "candidate_peak_reserved_bytes",
                    "peak_reserved_delta_bytes",
                    "peak_reserved_growth_percent",
                    "base_unreleased_blocks",
                    "candidate_unreleased_blocks",
                    "base_unreleased_bytes",
                    "candidate_unreleased_bytes",
                    "differences",
                ],
                pairs,
            )?,
        ),
        (
            "compare_live_at_peak.csv".into(),
            csv(
                &[
                    "role",
                    "rank",
                    "step_folder",
                    "frame",
                    "base_bytes",
                    "candidate_bytes",
                    "delta_bytes",
                    "base_count",
                    "candidate_count",
                ],
                live,
            )?,
        ),
        (
            "compare_one_side_allocations.csv".into(),
            csv(
                &[
                    "role",
                    "rank",
                    "step_folder",
                    "only_in",
                    "name",
                    "frame",
                    "count",
                    "bytes",
                ],
                only,
            )?,
        ),
        (
            "compare_new_unreleased.csv".into(),
            csv(
                &[
                    "role",
                    "rank",
                    "step_folder",
                    "name",
                    "frame",
                    "size",
                    "base_count",
                    "candidate_count",
                    "new_count",
                    "new_bytes",
                ],
                unreleased,
            )?,
        ),
    ])
}

fn life(v: Option<(u32, u32)>) -> String {
    v.map(|(a, b)| format!("{a}-{b}")).unwrap_or_default()
}

fn tensor_row(change: &str, t: &TensorDiff) -> Vec<String> {
    vec![
        change.to_string(),
        t.source.clone(),
        t.slot.clone(),
        opt(t.base_id),
        opt(t.candidate_id),
        t.base_size.to_string(),
        t.candidate_size.to_string(),
        t.size_delta.to_string(),
        life(t.base_life),
        life(t.candidate_life),
        t.life_changed.to_string(),
        t.peak_effect_bytes.to_string(),
    ]
}

fn somas_files(c: &SomasComparison) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let nodes = c
        .node_differences
        .iter()
        .map(|n| {
            vec![
                n.name.clone(),
                n.base_index.to_string(),
                n.candidate_index.to_string(),
                n.base_in_use.to_string(),
                n.candidate_in_use.to_string(),
                n.delta_bytes.to_string(),
            ]
        })
        .collect();
    let tensors = c
        .changed_tensors
        .iter()
        .map(|t| tensor_row("changed", t))
        .chain(c.one_side_tensors.iter().map(|t| {
            tensor_row(
                if t.base_id.is_some() {
                    "baseline_only"
                } else {
                    "candidate_only"
                },
                t,
            )
        }))
        .collect();
    Ok(vec![
        (
            "compare_nodes.csv".into(),
            csv(
                &[
                    "name",
                    "base_index",
                    "candidate_index",
                    "base_in_use",
                    "candidate_in_use",
                    "delta_bytes",
                ],
                nodes,
            )?,
        ),
        (
            "compare_tensors.csv".into(),
            csv(
                &[
                    "change",
                    "source",
                    "slot",
                    "base_id",
                    "candidate_id",
                    "base_size",
                    "candidate_size",
                    "size_delta",
                    "base_life",
                    "candidate_life",
                    "life_changed",
                    "peak_effect_bytes",
                ],
                tensors,
            )?,
        ),
    ])
}

/// Every file of the comparison, by name: the family's CSV tables, then `summary.json`.
pub fn files(c: &Comparison) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = match c {
        Comparison::Profiler(p) => profiler_files(p),
        Comparison::Somas(s) => somas_files(s),
    }
    .map_err(|e| e.to_string())?;
    out.push((
        "summary.json".into(),
        summary_json(c).map_err(|e| e.to_string())?.into_bytes(),
    ));
    Ok(out)
}
