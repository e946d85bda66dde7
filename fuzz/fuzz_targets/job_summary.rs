//! The job summary file (`job.memlens.json`): arbitrary bytes read as one. Nothing may panic; a
//! refusal names the file; what is read merges and writes back to a file that reads the same
//! ranks (in the merged order); the page's view of it answers its overview and every rank.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::profiler::summary::{read_ranks, JobSummary};
use memlens::profiler::summary_view::{Request, SummaryView};

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let name = "job.memlens.json";
    let text = String::from_utf8_lossy(data);
    match read_ranks(name, &text) {
        Ok(ranks) => {
            let merged = JobSummary::merge(ranks);
            let again = merged.to_json().expect("a merged summary serialises");
            let back = read_ranks(name, &again).expect("a written summary reads back");
            assert_eq!(back, merged.ranks);
            let mut view = SummaryView::from_text(name, &text).expect("read_ranks accepted it");
            view.answer(&Request::Overview)
                .expect("the overview serialises");
            for rank in 0..view.job().ranks.len() {
                view.answer(&Request::Rank { rank })
                    .expect("a rank serialises");
            }
        }
        Err(d) => common::names_file(&d, name),
    }
}
