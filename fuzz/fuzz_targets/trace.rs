//! `trace_view.json`: the streaming reader with tiny batches (1–64 bytes on inputs up to 16 KiB, so
//! events, strings, numbers and escapes are cut at every position) and several parallel pieces, against one
//! whole-buffer read of the same bytes. Nothing may panic; warnings name the file and a byte
//! inside it; any file, damaged or not, gives exactly the same warnings, ops, steps, queue events
//! and event count whatever the chunking. The block skip (SIMD), the block skip that
//! keeps a block's masks between calls (one cursor over the input, as the event scanner uses it)
//! and the scalar skip they replaced find the same end from the first brackets of the input. The
//! reader that ends most events from the masks alone and the member walk it replaced
//! (`EventWalk::Members`) give the same warnings and keep the same values, byte for byte.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use memlens::jsonscan::blocks::{skip_nested_blocks, Cursor};
use memlens::jsonscan::lex::skip_nested_scalar;
use memlens::profiler::trace::{read_trace, use_event_walk, EventWalk, Trace, TraceOptions};
use memlens::profiler::Interner;
use memlens::source::BytesSource;

const NAME: &str = "run/ASCEND_PROFILER_OUTPUT/trace_view.json";

fn read(data: &[u8], batch: usize, pieces: usize) -> Option<(Trace, Interner, Interner)> {
    let src = BytesSource::new(NAME, data.to_vec());
    let (mut names, mut stacks) = (Interner::new(), Interner::new());
    match read_trace(
        &src,
        &mut names,
        &mut stacks,
        TraceOptions { batch, pieces },
        None,
    ) {
        Ok(t) => {
            for w in &t.warnings {
                common::names_file(w, NAME);
                assert!(w.byte.is_some_and(|b| b <= data.len() as u64), "{w}");
            }
            assert!(t.events >= (t.ops.len() + t.queue.len()) as u64);
            assert!(t.steps.len() <= t.ops.len());
            assert!(t.bytes <= data.len() as u64);
            Some((t, names, stacks))
        }
        Err(d) => {
            common::names_file(&d, NAME);
            None
        }
    }
}

/// Everything kept, with interned ids replaced by their strings.
fn kept(t: &Trace, names: &Interner, stacks: &Interner) -> impl PartialEq + std::fmt::Debug {
    let ops: Vec<_> = (0..t.ops.len())
        .map(|i| {
            (
                names.get(t.ops.name[i]).to_string(),
                stacks.get(t.ops.stack[i]).to_string(),
                t.ops.pid[i],
                t.ops.tid[i],
                t.ops.ts[i],
                t.ops.dur[i],
                t.ops.seq[i],
                t.ops.fwd_tid[i],
            )
        })
        .collect();
    let queue: Vec<_> = t
        .queue
        .iter()
        .map(|q| {
            (
                q.enqueue,
                names.get(q.name).to_string(),
                q.tid,
                q.ts,
                q.dur,
                q.correlation_id,
            )
        })
        .collect();
    (ops, t.steps.clone(), queue, t.events)
}

fuzz_target!(|data: &[u8]| common::in_pool(|| run(data)));

fn run(data: &[u8]) {
    let Some((&ctl, body)) = data.split_first() else {
        return;
    };
    // Tiny batches on small inputs; at most ~256 batches on large ones (each batch costs a pass
    // of the thread pool, and cut events are scanned again from their start).
    let batch = (usize::from(ctl & 0x3F) + 1).max(body.len() / 256);
    let pieces = usize::from(ctl >> 6) * 2 + 1;
    // The skips agree (from the first brackets only: each skip may run to the end).
    let mut cursor = Cursor::default();
    for (i, _) in body
        .iter()
        .enumerate()
        .filter(|(_, &c)| matches!(c, b'{' | b'['))
        .take(32)
    {
        let want = skip_nested_scalar(body, i);
        assert_eq!(skip_nested_blocks(body, i), want, "from {i}");
        assert_eq!(cursor.skip_nested(body, i), want, "cursor from {i}");
    }
    let whole = read(body, 1 << 30, 1);
    // The member walk on every event, against the masks' decision (the default) above.
    use_event_walk(EventWalk::Members);
    let walked = read(body, 1 << 30, 1);
    use_event_walk(EventWalk::Masks);
    match (&whole, &walked) {
        (Some((a, na, sa)), Some((b, nb, sb))) => {
            assert_eq!(format!("{:?}", a.warnings), format!("{:?}", b.warnings));
            assert_eq!(kept(a, na, sa), kept(b, nb, sb));
        }
        (None, None) => {}
        (a, b) => panic!("masks ok: {}, member walk ok: {}", a.is_some(), b.is_some()),
    }
    let small = read(body, batch, pieces);
    match (whole, small) {
        (Some((a, na, sa)), Some((b, nb, sb))) => {
            // Damaged or not, the file reads the same: the same warnings, at the same bytes,
            // quoting the same bytes, and the same events kept.
            assert_eq!(format!("{:?}", a.warnings), format!("{:?}", b.warnings));
            assert_eq!(kept(&a, &na, &sa), kept(&b, &nb, &sb));
        }
        (None, None) => {}
        (a, b) => panic!(
            "whole read ok: {}, chunked read ok: {}",
            a.is_some(),
            b.is_some()
        ),
    }
}
