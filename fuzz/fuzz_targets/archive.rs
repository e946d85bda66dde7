//! Archives (`.zip`, `.tar`, `.tar.gz`): arbitrary bytes expanded with small limits. Nothing may
//! panic; every member path stays under the archive's own path (no `..`, no absolute path, no
//! empty component); kept bytes never exceed a member's declared size nor the total limit;
//! diagnostics name the archive or one of its members.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::input::archive::{expand, Limits};
use memlens::source::BytesSource;

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let Some((&ctl, body)) = data.split_first() else {
        return;
    };
    let name = match ctl % 4 {
        0 => "job.zip",
        1 => "job.tar",
        2 => "job.tar.gz",
        _ => "job.bin", // kind from the magic bytes only
    };
    let limits = Limits {
        max_kept: 1 << 20,
        max_entries: 64,
        max_ratio: 100,
    };
    let (members, diags) = expand(&BytesSource::new(name, body.to_vec()), limits, &|_, _| true);
    let mut kept = 0u64;
    assert!(members.len() <= limits.max_entries);
    for m in &members {
        let rel = m
            .path
            .strip_prefix(name)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or_else(|| panic!("member {:?} outside {name}", m.path));
        assert!(!rel.starts_with('/'), "{rel:?}");
        for c in rel.split('/') {
            assert!(!c.is_empty() && c != "." && c != "..", "{rel:?}");
        }
        if let Some(b) = &m.bytes {
            assert!(
                b.len() as u64 <= m.size,
                "{} kept {} > {}",
                m.path,
                b.len(),
                m.size
            );
            kept += b.len() as u64;
        }
    }
    assert!(kept <= limits.max_kept);
    for d in &diags {
        common::names_file(d, name);
    }
}
