//! Input classification: arbitrary file lists (paths and sizes) with arbitrary head bytes.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::classify::{classify, head_request, Entry, Head};

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    // Records separated by 0xFF: "<path>\0<head bytes>"; the path's length sets a size.
    let mut entries = Vec::new();
    let mut heads = Vec::new();
    for record in data.split(|&b| b == 0xFF).take(64) {
        let (path, head) = match record.iter().position(|&b| b == 0) {
            Some(i) => (&record[..i], &record[i + 1..]),
            None => (record, &[][..]),
        };
        let entry = Entry {
            path: String::from_utf8_lossy(path).into_owned(),
            size: head.len() as u64,
        };
        let want = head_request(&entry);
        heads.push(if want == 0 {
            Head::NotRead
        } else {
            Head::Bytes(head[..head.len().min(want)].to_vec())
        });
        entries.push(entry);
    }
    let inventory = classify(&entries, &heads);
    // Every input file is accounted for in some unit.
    assert_eq!(inventory.files as usize, entries.len());
    let _ = serde_json::to_string(&inventory);
}
