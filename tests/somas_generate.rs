//! Generator round trips: every flavor parses back, injected conflicts are found exactly, the
//! traps the generator plants are never reported, and the sweep line agrees with a brute-force
//! all-pairs check written here from the definition of a conflict (docs/formats-somas.md).

use memlens::somas::generate::{generate, Flavor, GenConfig};
use memlens::somas::{self, analyze, summary::summary, SomasModel};

fn cfg(flavor: Flavor, nodes: u32, inject: u32) -> GenConfig {
    GenConfig {
        flavor,
        nodes,
        seed: 11,
        inject_conflicts: inject,
        task_info: true,
    }
}

/// All pairs, straight from the definition: data tensors with aligned > 0, effective byte
/// ranges intersect, widened inclusive lifetimes intersect, not in one union group.
fn brute_force(m: &SomasModel) -> Vec<[u32; 2]> {
    let max = m.max_index();
    let n = m.tensors.len() as u32;
    let mut out = Vec::new();
    for a in 0..n {
        if !m.occupies(a) {
            continue;
        }
        let (sa, ea) = m.effective_range(a);
        let (la, ha) = m.lifetime(a, max);
        for b in a + 1..n {
            if !m.occupies(b) {
                continue;
            }
            let (sb, eb) = m.effective_range(b);
            let (lb, hb) = m.lifetime(b, max);
            let ga = m.derived.union_group[a as usize];
            let same = ga != u32::MAX && ga == m.derived.union_group[b as usize];
            if sa < eb && sb < ea && la <= hb && lb <= ha && !same {
                out.push([m.tensors.id[a as usize], m.tensors.id[b as usize]]);
            }
        }
    }
    out
}

#[test]
fn every_flavor_round_trips_with_exactly_the_injected_conflicts() {
    for flavor in [Flavor::V110, Flavor::V20, Flavor::V24, Flavor::R1Allocate] {
        let g = generate(&cfg(flavor, 3000, 6));
        assert_eq!(g.injected.len(), 6, "{flavor:?}");
        assert!(g.traps.contiguous_lists > 0 && g.traps.union_groups > 0 && g.traps.clean_ops > 0);
        assert!(
            g.traps.repeated_nodes > 0 && g.traps.lifelong >= 2,
            "{flavor:?} {:?}",
            g.traps
        );
        let m = somas::parse_dump("g.ir", &g.dump).unwrap_or_else(|d| panic!("{flavor:?}: {d}"));
        assert!(m.warnings.is_empty(), "{flavor:?}: {:?}", m.warnings);
        assert_eq!(m.nodes.len() as u32, g.nodes);
        assert_eq!(m.tensors.len() as u32, g.tensors);
        let ti = somas::parse_task_info("t.ir", g.task_info.as_deref().unwrap()).unwrap();
        let a = analyze(&m, Some(&ti));
        let s = summary(&m, &a, Some(&ti));
        let expected: Vec<[u32; 2]> = g.injected.iter().map(|p| [p.0, p.1]).collect();
        assert_eq!(s.conflicts, expected, "{flavor:?}");
        assert!(
            s.task_mismatches.is_empty(),
            "{flavor:?}: {:?}",
            s.task_mismatches
        );
        assert_eq!(s.task.unwrap().unmatched_records, 0);
        assert_eq!(s.reused_bytes, g.reused);
        let version = match flavor {
            Flavor::V110 => "v1.10",
            Flavor::V20 => "v2.0-2.3",
            Flavor::V24 => "v2.4+",
            Flavor::R1Allocate => "r1.x",
        };
        assert_eq!(m.format.version, version);
    }
}

#[test]
fn traps_alone_are_clean_and_the_sweep_matches_brute_force() {
    let g = generate(&cfg(Flavor::V20, 1500, 0));
    let m = somas::parse_dump("g.ir", &g.dump).unwrap();
    assert!(analyze(&m, None).conflicts.pairs.is_empty());
    assert!(brute_force(&m).is_empty());
    let g = generate(&cfg(Flavor::V24, 1500, 25));
    let m = somas::parse_dump("g.ir", &g.dump).unwrap();
    let s = summary(&m, &analyze(&m, None), None);
    assert_eq!(s.conflicts, brute_force(&m));
    assert_eq!(s.conflicts.len(), 25);
}

#[test]
fn generation_is_deterministic() {
    let a = generate(&cfg(Flavor::V24, 500, 3));
    let b = generate(&cfg(Flavor::V24, 500, 3));
    assert_eq!(a.dump, b.dump);
    assert_eq!(a.task_info, b.task_info);
    let c = generate(&GenConfig {
        seed: 12,
        ..cfg(Flavor::V24, 500, 3)
    });
    assert_ne!(a.dump, c.dump);
}

#[test]
fn large_dump_parses_in_parallel_chunks_like_in_one_piece() {
    // ~12 MB: several 4 MiB chunks per section. The same text with every chunk boundary moved
    // (one extra blank line at the top of each section) must give the same model.
    let g = generate(&cfg(Flavor::V24, 30_000, 4));
    assert!(g.dump.len() > 9 << 20, "{}", g.dump.len());
    let m = somas::parse_dump("g.ir", &g.dump).unwrap();
    let text = String::from_utf8(g.dump.clone()).unwrap();
    let shifted = text
        .replace("All Tensors:\n\n", "All Tensors:\n\n\n")
        .replace("All Nodes:\n\n", "All Nodes:\n\n\n");
    let m2 = somas::parse_dump("g2.ir", shifted.as_bytes()).unwrap();
    assert_eq!(m.tensors.offset, m2.tensors.offset);
    assert_eq!(m.tensors.name, m2.tensors.name);
    assert_eq!(m.nodes.inputs, m2.nodes.inputs);
    assert_eq!(m.names.len(), m2.names.len());
    let s = summary(&m, &analyze(&m, None), None);
    let expected: Vec<[u32; 2]> = g.injected.iter().map(|p| [p.0, p.1]).collect();
    assert_eq!(s.conflicts, expected);
    // Names: each tensor's name is its producer's name.
    for t in (0..m.tensors.len()).step_by(997) {
        let owner = m.derived.owner[t];
        assert_eq!(m.names.get(m.tensors.name[t]), m.node_name(owner));
    }
}
