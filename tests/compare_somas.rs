//! Comparing SOMAS dumps: a dump against itself finds nothing; a dump with one tensor made larger
//! (by the generator, or by editing one line of a sample) finds exactly that tensor, the node
//! where it lives, and the peak moved there.

use memlens::compare::compare_dumps;
use memlens::compare::somas::SomasComparison;
use memlens::somas::generate::{generate, generate_grown, Flavor, GenConfig};
use memlens::somas::{self, analyze};

fn compare(base: &[u8], candidate: &[u8]) -> SomasComparison {
    let bm = somas::parse_dump("base.ir", base).unwrap_or_else(|d| panic!("{d}"));
    let cm = somas::parse_dump("candidate.ir", candidate).unwrap_or_else(|d| panic!("{d}"));
    let (ba, ca) = (analyze(&bm, None), analyze(&cm, None));
    compare_dumps(&bm, &ba, &cm, &ca)
}

fn assert_equal(c: &SomasComparison) {
    assert_eq!(c.differences, 0, "{c:#?}");
    assert_eq!(c.peak_in_use_delta_bytes, 0);
    assert_eq!(c.upper_bound_delta_bytes, 0);
    assert_eq!(c.reused_delta_bytes, 0);
    assert_eq!(c.nodes_matched, c.base.nodes);
    assert_eq!(c.tensors_matched, c.base.tensors);
    assert!(c.node_differences.is_empty());
    assert!(c.changed_tensors.is_empty() && c.one_side_tensors.is_empty());
    assert!(c.only_base_nodes.is_empty() && c.only_candidate_nodes.is_empty());
}

fn config(flavor: Flavor) -> GenConfig {
    GenConfig {
        flavor,
        nodes: 1500,
        seed: 5,
        inject_conflicts: 0,
        task_info: false,
    }
}

#[test]
fn generated_dumps_against_themselves() {
    for flavor in [Flavor::V110, Flavor::V20, Flavor::V24, Flavor::R1Allocate] {
        let cfg = config(flavor);
        let c = compare(&generate(&cfg).dump, &generate(&cfg).dump);
        assert_equal(&c);
        assert!(c.nodes_matched > 1000);
    }
}

#[test]
fn samples_against_themselves() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/somas");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("task_info") {
            continue;
        }
        let b = std::fs::read(&p).unwrap();
        // Solver logs are not memory plans (the loader says so); every plan compares.
        if somas::parse_dump(&name, &b).is_err() {
            assert!(name.contains("solver"), "{name}");
            continue;
        }
        assert_equal(&compare(&b, &b));
        n += 1;
    }
    assert!(n >= 7, "{n} samples");
}

#[test]
fn one_grown_tensor_is_found_and_moves_the_peak() {
    for flavor in [Flavor::V110, Flavor::V20, Flavor::V24, Flavor::R1Allocate] {
        let cfg = config(flavor);
        let base = generate(&cfg);
        // Larger than the whole plan: the peak must move to the grown tensor's node.
        let grow = 4u64 << 30;
        let cand = generate_grown(&cfg, grow);
        let g = cand.grown.expect("a plain workspace exists");
        let d = (g.aligned_after - g.aligned_before) as i64;
        assert!(d as u64 >= grow);
        let c = compare(&base.dump, &cand.dump);
        assert_ne!(
            c.base.peak_index,
            Some(g.node_index),
            "{flavor:?}: the peak moves"
        );
        assert_eq!(c.candidate.peak_index, Some(g.node_index), "{flavor:?}");
        // Exactly one node differs, by the growth.
        assert_eq!(
            c.node_differences.len(),
            1,
            "{flavor:?}: {:#?}",
            c.node_differences
        );
        let nd = &c.node_differences[0];
        assert_eq!(
            (nd.base_index, nd.candidate_index),
            (g.node_index, g.node_index)
        );
        assert_eq!(nd.delta_bytes, d);
        assert_eq!(c.candidate.peak_in_use, nd.candidate_in_use);
        assert_eq!(
            c.peak_in_use_delta_bytes,
            nd.candidate_in_use as i64 - c.base.peak_in_use as i64
        );
        // Exactly one tensor changed, its size only, and it holds the candidate's peak.
        assert_eq!(c.changed_tensors.len(), 1, "{:#?}", c.changed_tensors);
        let t = &c.changed_tensors[0];
        assert_eq!(
            (t.base_id, t.candidate_id),
            (Some(g.tensor), Some(g.tensor))
        );
        assert_eq!(
            (t.base_size, t.candidate_size),
            (g.aligned_before, g.aligned_after)
        );
        assert_eq!(t.size_delta, d);
        assert!(!t.life_changed);
        assert_eq!(t.base_life, Some((g.node_index, g.node_index)));
        assert_eq!(t.peak_effect_bytes, g.aligned_after as i64);
        assert!(t.slot.starts_with("ws"), "{}", t.slot);
        assert!(c.one_side_tensors.is_empty());
        assert!(c.only_base_nodes.is_empty() && c.only_candidate_nodes.is_empty());
        assert_eq!(c.upper_bound_delta_bytes, d);
        assert_eq!(c.reused_delta_bytes, g.aligned_after as i64);
        assert_eq!(c.differences, 2);
    }
}

#[test]
fn one_edited_line_of_a_sample_is_found() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/somas");
    let base = std::fs::read_to_string(dir.join("Ascend_somas_tensor_offset_1.ir")).unwrap();
    // Tensor 5, MaxPool-op4's workspace at node 3 (4608 bytes aligned): 16 MiB more.
    let line = "%5T\t#4608S\t#4096S\t&263680\tWorkspace\tLifeLongNone\t3\t3\tMaxPool-op4";
    assert!(base.contains(line));
    let grown = 4608 + (16u64 << 20);
    let cand = base.replace(
        line,
        &format!(
            "%5T\t#{grown}S\t#{}S\t&263680\tWorkspace\tLifeLongNone\t3\t3\tMaxPool-op4",
            4096 + (16u64 << 20)
        ),
    );
    let c = compare(base.as_bytes(), cand.as_bytes());
    assert_eq!(c.candidate.peak_index, Some(3));
    assert_ne!(c.base.peak_index, Some(3));
    assert_eq!(c.node_differences.len(), 1);
    assert_eq!(c.node_differences[0].candidate_index, 3);
    assert_eq!(c.node_differences[0].delta_bytes, 16 << 20);
    assert_eq!(c.changed_tensors.len(), 1);
    assert_eq!(c.changed_tensors[0].candidate_id, Some(5));
    assert_eq!(c.changed_tensors[0].source, "MaxPool-op4");
    assert_eq!(c.changed_tensors[0].size_delta, 16 << 20);
    assert_eq!(c.changed_tensors[0].peak_effect_bytes, grown as i64);
    assert_eq!(c.differences, 2);
}

/// The overlaid in-use curves: a dump against itself differs nowhere; with one workspace grown
/// (alive at its node only, by the generator's record) the difference is the growth at exactly
/// that node and 0 at every other.
#[test]
fn overlaid_in_use_differs_at_the_grown_node_only() {
    use memlens::compare::curves::somas_overlay;
    let cfg = config(Flavor::V20);
    let base = generate(&cfg);
    let cand = generate_grown(&cfg, 1 << 20);
    let g = cand.grown.expect("a plain workspace exists");
    let d = (g.aligned_after - g.aligned_before) as i64;
    let bm = somas::parse_dump("base.ir", &base.dump).unwrap();
    let cm = somas::parse_dump("candidate.ir", &cand.dump).unwrap();
    let (ba, ca) = (analyze(&bm, None), analyze(&cm, None));
    let same = somas_overlay(&bm, &ba, &bm, &ba, 1 << 20);
    assert_eq!(same.x.len(), bm.nodes.len());
    assert!(same.delta.iter().all(|x| *x == Some(0)));
    let o = somas_overlay(&bm, &ba, &cm, &ca, 1 << 20);
    assert_eq!(o.x_kind, "index");
    assert!(!o.reduced && o.notes.is_empty());
    for (k, &x) in o.x.iter().enumerate() {
        let expect = if x == i64::from(g.node_index) { d } else { 0 };
        assert_eq!(o.delta[k], Some(expect), "node {x}");
    }
    assert_eq!(o.delta.iter().filter(|x| **x == Some(d)).count(), 1);
    let r = somas_overlay(&bm, &ba, &cm, &ca, 16);
    assert!(r.reduced && r.x.len() <= 17);
    assert_eq!(r.delta.iter().flatten().max(), Some(&d));
}
