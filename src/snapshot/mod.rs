//! PyTorch / torch_npu memory snapshots: the pickles `torch.cuda.memory._dump_snapshot` and
//! `torch.npu.memory._dump_snapshot` write.
//!
//! A snapshot is the caching allocator's state (segments reserved from the device, cut into
//! blocks, each with the stack that allocated it) plus a ring buffer of its recent actions per
//! device (alloc, free, segment reserve/release, OOM) with their stacks. This module reads it
//! ([`read`], a streaming pickle machine that keeps only what the analysis needs), recognises it
//! from its first bytes ([`sniff`]), analyses it ([`analysis`]) and writes large synthetic ones
//! ([`generate`]).
//!
//! Data flow: [`Source`] → [`pickle`] machine → [`build`] schema → [`model::Snapshot`] →
//! [`analysis::analyse`] → summary JSON / views.

pub mod analysis;
mod batches;
mod build;
pub mod generate;
pub mod intern;
pub mod json;
pub mod model;
pub mod pickle;
pub mod recognize;
pub mod state;
pub mod summary;
pub mod timeline;
pub mod view;

pub use model::Snapshot;

use crate::diag::Diagnostic;
use crate::source::Source;

/// Reads the snapshot in `source`.
///
/// Errors name the file and the byte offset: not a pickle, a protocol outside 2–5, an opcode that
/// refers to a class or calls code, a truncated or corrupt file, a pickle that is not a snapshot.
/// Recoverable oddities (unknown words, fields of the wrong type, missing fields) become counted
/// warnings in [`Snapshot::warnings`].
pub fn read(source: &dyn Source) -> Result<Snapshot, Diagnostic> {
    read_timed(source, &|| 0.0).map(|(snap, _)| snap)
}

/// Where [`read_timed`] spent its time (ms, by the caller's clock).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct ReadTimings {
    /// The pickle machine: reading the source and folding each value into its record.
    pub parse_ms: f64,
    /// Building the model from the finished records.
    pub model_ms: f64,
}

/// [`read`], timing its two steps with `clock()` (ms): only the front end knows the time (a
/// wasm32 build has no clock of its own).
pub fn read_timed(
    source: &dyn Source,
    clock: &dyn Fn() -> f64,
) -> Result<(Snapshot, ReadTimings), Diagnostic> {
    let t0 = clock();
    let mut builder = build::Builder::new(source.name());
    let head = source.read_range(0, SNIFF_BYTES)?;
    // Text that opens a JSON object or array is read as JSON (a pickle of protocol 2 or later
    // starts with 0x80; 0 and 1, which memlens refuses, with '(', '}' or ']'), so that a JSON
    // file that is not a snapshot is told so in JSON's terms.
    let (top, end, protocol) = if json::opens(&head) {
        let top = json::run(source, &mut builder).map_err(|e| *e)?;
        (top, source.len(), 0)
    } else {
        let mut machine = pickle::Machine::new(source);
        // A pickle's name does not make it one: a Git LFS pointer in its place is said as such.
        let top = machine
            .run(&mut builder)
            .map_err(|e| crate::input::lfs::explain(source, *e))?;
        (top, machine.offset(), machine.protocol)
    };
    // Building the model from the parsed values is a long step of its own for a large file.
    source.check_stop(end)?;
    let t1 = clock();
    let mut snap = builder
        .finish(top, protocol, source.len())
        .map_err(|e| *e)?;
    if end < source.len() {
        snap.warnings.push(
            Diagnostic::warning(
                source.name(),
                format!(
                    "{} bytes after the end of the pickle were ignored",
                    source.len() - end
                ),
            )
            .at_byte(end),
        );
    }
    let timings = ReadTimings {
        parse_ms: t1 - t0,
        model_ms: clock() - t1,
    };
    Ok((snap, timings))
}

/// The form of a snapshot read with `protocol` ([`Snapshot::protocol`]), in words: `pickle
/// protocol 4`, or `JSON` (protocol 0).
pub fn form(protocol: u8) -> String {
    if protocol == 0 {
        "JSON".to_string()
    } else {
        format!("pickle protocol {protocol}")
    }
}

/// What [`sniff`] recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniffed {
    /// Pickle protocol (2 to 5); 0 for the JSON form.
    pub protocol: u8,
    /// True for the dict layout (`segments`, `device_traces`, …), false for a bare segment list.
    pub dict: bool,
}

/// How many leading bytes [`sniff`] needs.
pub const SNIFF_BYTES: usize = 64;

/// The keys a segment's dict starts with in the files seen (the first key of a bare segment list's
/// first item): `device` as torch writes it, `active_size` once `json.dump(sort_keys=True)` has
/// sorted them.
const SEGMENT_KEYS: [&[u8]; 7] = [
    b"device",
    b"active_size",
    b"address",
    b"total_size",
    b"allocated_size",
    b"stream",
    b"segment_type",
];

/// Recognises a snapshot from its first bytes (whatever the file is named: a `.json` file may be
/// a pickle): the `PROTO` opcode of protocol 2–5, then a dict whose first key is `segments` or
/// `device_traces`, or a list whose first item is a dict with a segment's key; or the same in
/// JSON ([`json::sniff`]).
pub fn sniff(head: &[u8]) -> Option<Sniffed> {
    if let Some(dict) = json::sniff(head) {
        return Some(Sniffed { protocol: 0, dict });
    }
    let mut p = Cursor { b: head, i: 0 };
    if p.u8()? != 0x80 {
        return None;
    }
    let protocol = p.u8()?;
    if !(2..=5).contains(&protocol) {
        return None;
    }
    p.frame();
    match p.u8()? {
        b'}' => {
            p.memo_and_mark();
            let k = p.string()?;
            (k == b"segments" || k == b"device_traces").then_some(Sniffed {
                protocol,
                dict: true,
            })
        }
        b']' => {
            p.memo_and_mark();
            if p.u8()? != b'}' {
                return None;
            }
            p.memo_and_mark();
            let k = p.string()?;
            SEGMENT_KEYS.contains(&k).then_some(Sniffed {
                protocol,
                dict: false,
            })
        }
        _ => None,
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn u8(&mut self) -> Option<u8> {
        let v = *self.b.get(self.i)?;
        self.i += 1;
        Some(v)
    }

    fn frame(&mut self) {
        if self.b.get(self.i) == Some(&0x95) {
            self.i += 9;
        }
    }

    fn memo_and_mark(&mut self) {
        match self.b.get(self.i) {
            Some(0x94) => self.i += 1,
            Some(b'q') => self.i += 2,
            Some(b'r') => self.i += 5,
            _ => {}
        }
        if self.b.get(self.i) == Some(&b'(') {
            self.i += 1;
        }
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let n = match self.u8()? {
            0x8c => self.u8()? as usize,
            b'X' => {
                let a = self.b.get(self.i..self.i + 4)?;
                self.i += 4;
                u32::from_le_bytes([a[0], a[1], a[2], a[3]]) as usize
            }
            _ => return None,
        };
        let s = self.b.get(self.i..self.i.checked_add(n)?)?;
        self.i += n;
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniff_needs_proto_and_a_snapshot_key() {
        let dict = b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x08segments\x94]";
        assert_eq!(
            sniff(dict),
            Some(Sniffed {
                protocol: 4,
                dict: true
            })
        );
        let list = b"\x80\x02]q\x00(}q\x01(X\x06\x00\x00\x00deviceq\x02K\x00";
        assert_eq!(
            sniff(list),
            Some(Sniffed {
                protocol: 2,
                dict: false
            })
        );
        assert_eq!(sniff(b"\x80\x04}\x94(\x8c\x05other"), None);
        assert_eq!(sniff(b"\x80\x01}\x94(\x8c\x08segments"), None);
        assert_eq!(sniff(b"{\"traceEvents\": []}"), None);
        assert_eq!(sniff(b""), None);
    }
}
