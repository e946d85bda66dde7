//! A scanner of large JSON arrays of events (Chrome trace files and the like), with no knowledge of
//! what the events mean: [`lex`] finds strings, values, objects and event boundaries ([`blocks`]
//! finds where a skipped value ends, 64 bytes at a time with SIMD; [`either`] finds the first of
//! two needles in one pass);
//! [`stream`] reads a file in batches, scans pieces of each batch in parallel and hands each
//! piece's [`stream::EventSink`] back in file order. A reader (the torch_npu trace reader,
//! `crate::profiler::trace`) implements the sink: which events to keep, which fields to read.

pub mod blocks;
pub mod either;
pub mod lex;
pub mod stream;

pub use lex::Scan;
pub use stream::{
    scan_stream, EventSink, Found, Stream, StreamOptions, MAX_EVENT_BYTES, MAX_WARNINGS,
};
