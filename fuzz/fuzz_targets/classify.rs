//! Input classification: arbitrary file lists (paths and sizes) with arbitrary head bytes.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::families::RECOGNIZERS;
use memlens::input::classify::{classify, head_requests, Entry, Head};

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    // Records separated by 0xFF: "<path>\0<head bytes>"; the path's length sets a size.
    let mut entries = Vec::new();
    let mut bytes = Vec::new();
    for record in data.split(|&b| b == 0xFF).take(64) {
        let (path, head) = match record.iter().position(|&b| b == 0) {
            Some(i) => (&record[..i], &record[i + 1..]),
            None => (record, &[][..]),
        };
        entries.push(Entry {
            path: String::from_utf8_lossy(path).into_owned(),
            size: head.len() as u64,
        });
        bytes.push(head);
    }
    let heads: Vec<Head> = head_requests(&entries, RECOGNIZERS)
        .into_iter()
        .zip(&bytes)
        .map(|(want, head)| {
            if want == 0 {
                Head::NotRead
            } else {
                Head::Bytes(head[..head.len().min(want)].to_vec())
            }
        })
        .collect();
    let inventory = classify(&entries, &heads, RECOGNIZERS);
    // Every input file is accounted for in some unit.
    assert_eq!(inventory.files as usize, entries.len());
    let _ = serde_json::to_string(&inventory);
}
