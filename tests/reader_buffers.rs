//! The trace scan's batch buffers, counted by the allocator: a trace of many batches, read with
//! the next batch read ahead while the pool scans the current one (two threads, as the native CLI
//! reads) and on one thread (as a reader of the page), asks for no block larger than one batch
//! and the room kept for the tail of an event cut by a batch's end (256 KiB,
//! `jsonscan::stream`'s TAIL_ROOM). A buffer doubled at its second batch (round 27 found it on
//! the page: 16 MiB batches in a 32 MiB buffer) asks for two batches.
//!
//! One test in this file: the allocator's count is the process's, and tests run in parallel.

use memlens::jsonscan::blocks::Cursor;
use memlens::jsonscan::{scan_stream, EventSink, Found, Scan, StreamOptions};
use memlens::source::BytesSource;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, keeping the largest block asked for (by `alloc` or `realloc`).
struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Largest = Largest;

/// Counts the events; keeps nothing else.
#[derive(Default)]
struct Count(u64);

impl EventSink for Count {
    fn event(&mut self, b: &[u8], i: usize, skip: &mut Cursor, _found: &mut Found) -> Scan {
        let r = skip.skip_nested(b, i);
        if let Scan::Done(_) = r {
            self.0 += 1;
        }
        r
    }
}

#[test]
fn trace_batches_ask_for_one_batch_and_the_tail_room() {
    let batch = 1 << 20;
    let tail_room = 256 << 10;
    // Events of 200-odd bytes, so that every batch's end cuts one and leaves a tail.
    let mut text = b"[".to_vec();
    let mut n = 0u64;
    while text.len() < 7 * batch + 12_345 {
        if n > 0 {
            text.push(b',');
        }
        let pad = "x".repeat(150 + (n % 97) as usize);
        text.extend_from_slice(
            format!(r#"{{"ph":"X","name":"aten::add","ts":{n},"dur":3,"args":{{"s":"{pad}"}}}}"#)
                .as_bytes(),
        );
        n += 1;
    }
    text.push(b']');
    let src = BytesSource::new("t.json", text);
    for threads in [2, 1] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let opts = StreamOptions {
            batch,
            pieces: 2,
            wrapper: b"\"traceEvents\"",
            what: "trace events",
            event: "trace event",
        };
        LARGEST.store(0, Ordering::Relaxed);
        let mut events = 0;
        let stream = pool
            .install(|| scan_stream(&src, opts, None, &mut |c: Count| events += c.0))
            .unwrap();
        let largest = LARGEST.load(Ordering::Relaxed);
        assert_eq!((events, stream.events), (n, n), "{threads} threads");
        assert!(stream.warnings.is_empty(), "{:?}", stream.warnings);
        assert!(
            largest <= batch + tail_room,
            "{threads} threads: a block of {largest} bytes for batches of {batch}"
        );
    }
}
