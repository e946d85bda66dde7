//! A tensor query led by its answer (`tensorLead`): the tensors sharing its memory while it is
//! alive, conflicts first. Checked against the conflicts the generator injected (known before any
//! analysis) and against a brute-force pass over every tensor's range and lifetime as the
//! `tensor` request reports them.

use memlens::somas::generate::{generate, Flavor, GenConfig};
use memlens::somas::view::{Request, SomasSession};
use serde_json::{json, Value};

const DUMP: &str = "Ascend_somas_tensor_offset_1.ir";

fn session(dump: Vec<u8>) -> SomasSession {
    let mut set = memlens::families::input_set();
    set.add_bytes(DUMP, dump);
    SomasSession::open(&set, DUMP, None, &mut |_, _, _| {}, &|| 0.0).unwrap()
}

fn ask(s: &mut SomasSession, method: &str, params: Value) -> Result<Value, String> {
    let r: Request = serde_json::from_value(json!({ "method": method, "params": params })).unwrap();
    s.answer(&r).map(|t| serde_json::from_str(&t).unwrap())
}

fn pair(v: &Value) -> [u64; 2] {
    [v[0].as_u64().unwrap(), v[1].as_u64().unwrap()]
}

#[test]
fn injected_conflicts_lead_the_answer_and_partners_match_a_brute_force_pass() {
    let g = generate(&GenConfig {
        flavor: Flavor::V24,
        nodes: 800,
        seed: 21,
        inject_conflicts: 3,
        task_info: false,
    });
    assert_eq!(g.injected.len(), 3);
    let mut s = session(g.dump);
    let ids: Vec<u32> = (0..g.tensors).collect();
    // Every tensor's range and lifetime, as the page's `tensor` request gives them.
    let mut tensors = Vec::new();
    for &id in &ids {
        let t = ask(&mut s, "tensor", json!({ "id": id })).unwrap();
        tensors.push((id, pair(&t["range"]), pair(&t["alive"])));
    }
    let expected = |a: u32| {
        let (_, r, l) = tensors.iter().find(|t| t.0 == a).copied().unwrap();
        let mut partners = Vec::new();
        let mut reuse = 0;
        for &(u, ru, lu) in &tensors {
            let memory = u != a && r[0] < r[1] && ru[0] < ru[1] && ru[0] < r[1] && r[0] < ru[1];
            if !memory {
                continue;
            }
            if lu[0] <= l[1] && l[0] <= lu[1] {
                partners.push(u);
            } else {
                reuse += 1;
            }
        }
        (partners, reuse)
    };

    for &(a, b) in &g.injected {
        for (me, other) in [(a, b), (b, a)] {
            let lead = ask(&mut s, "tensorLead", json!({ "id": me })).unwrap();
            assert_eq!(lead["tensor_id"], me);
            let partners = lead["partners"].as_array().unwrap();
            let first_other = partners.iter().position(|p| p["id"] == other);
            let Some(at) = first_other else {
                panic!("%{me}T: the injected partner %{other}T is not among {partners:?}")
            };
            assert_eq!(partners[at]["conflict"], true, "%{me}T with %{other}T");
            // Conflicts first: no union partner before a conflicting one.
            let flags: Vec<bool> = partners.iter().map(|p| p["conflict"] == true).collect();
            assert!(flags.windows(2).all(|w| w[0] || !w[1]), "%{me}T: {flags:?}");
            let (want, reuse) = expected(me);
            let mut got: Vec<u32> = partners
                .iter()
                .map(|p| p["id"].as_u64().unwrap() as u32)
                .collect();
            got.sort_unstable();
            assert_eq!(got, want, "%{me}T partners");
            assert_eq!(
                lead["reuse"].as_u64().unwrap(),
                reuse as u64,
                "%{me}T reuse"
            );
            // The shared bytes and the common lifetime lie within both tensors'.
            let p = &partners[at];
            let (sh, tg, r, l) = (
                pair(&p["shared"]),
                pair(&p["together"]),
                pair(&lead["range"]),
                pair(&lead["alive"]),
            );
            assert!(
                sh[0] < sh[1] && sh[0] >= r[0] && sh[1] <= r[1],
                "{sh:?} in {r:?}"
            );
            assert!(
                tg[0] <= tg[1] && tg[0] >= l[0] && tg[1] <= l[1],
                "{tg:?} in {l:?}"
            );
        }
    }
    // The same check on tensors without a conflict: a few spread over the dump.
    for &id in ids.iter().step_by((ids.len() / 7).max(1)) {
        let lead = ask(&mut s, "tensorLead", json!({ "id": id })).unwrap();
        let (want, reuse) = expected(id);
        let mut got: Vec<u32> = lead["partners"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_u64().unwrap() as u32)
            .collect();
        got.sort_unstable();
        assert_eq!(got, want, "%{id}T partners");
        assert_eq!(
            lead["reuse"].as_u64().unwrap(),
            reuse as u64,
            "%{id}T reuse"
        );
    }
    assert!(ask(&mut s, "tensorLead", json!({ "id": g.tensors + 10 })).is_err());
}
