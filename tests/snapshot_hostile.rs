//! Hostile and broken snapshot pickles: each is refused with the exact message the user sees
//! (file, byte offset, what was found and expected) or read with counted warnings — never a
//! panic, never an import or a call, never unbounded memory or time.

use memlens::snapshot::generate::PickleWriter;
use memlens::snapshot::{self, analysis};
use memlens::source::BytesSource;

const NAME: &str = "drop/snap.pickle";

fn read(bytes: &[u8]) -> Result<snapshot::Snapshot, String> {
    snapshot::read(&BytesSource::new(NAME, bytes.to_vec())).map_err(|d| d.to_string())
}

fn refused(bytes: &[u8]) -> String {
    match read(bytes) {
        Ok(s) => panic!(
            "accepted: {} segments, warnings {:?}",
            s.segments.len(),
            s.warnings
        ),
        Err(e) => e,
    }
}

fn tiny() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/snapshots/cs336_tiny_mem_snapshot.pickle"
    ))
    .unwrap()
}

const CLASS: &str = "this pickle refers to a Python class or calls code; a memory snapshot holds only dicts, lists, tuples, strings and numbers, and memlens never imports or calls anything";

#[test]
fn opcodes_that_name_a_class_or_call_code_are_refused_with_their_offset() {
    // pickle.dumps(os.system('ls')) in protocol 2 style: GLOBAL names the function.
    let global = b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.";
    assert_eq!(
        refused(global),
        format!("{NAME} (byte 2): error: opcode GLOBAL (0x63) naming \"os.system\": {CLASS}")
    );
    // Protocol 4: the module and name are strings on the stack, STACK_GLOBAL pops them.
    let stack_global =
        b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94.";
    assert_eq!(
        refused(stack_global),
        format!("{NAME} (byte 25): error: opcode STACK_GLOBAL (0x93) naming a class: {CLASS}")
    );
    // Inside an otherwise valid snapshot dict: REDUCE after a value.
    let reduce = b"\x80\x04}\x94(\x8c\x08segments\x94]\x94)R.";
    assert_eq!(
        refused(reduce),
        format!("{NAME} (byte 19): error: opcode REDUCE (0x52): {CLASS}")
    );
    for (bytes, name, at) in [
        (&b"\x80\x02(iposix\nsystem\n."[..], "INST", 3),
        (b"\x80\x02(o.", "OBJ", 3),
        (b"\x80\x02}b.", "BUILD", 3),
        (b"\x80\x02)\x81.", "NEWOBJ", 3),
        (b"\x80\x04)}\x92.", "NEWOBJ_EX", 4),
        (b"\x80\x02\x82\x01.", "EXT1", 2),
        (b"\x80\x02\x83\x01\x00.", "EXT2", 2),
        (b"\x80\x02\x84\x01\x00\x00\x00.", "EXT4", 2),
        (b"\x80\x02Pid\n.", "PERSID", 2),
        (b"\x80\x02K\x01Q.", "BINPERSID", 4),
        (b"\x80\x05\x97.", "NEXT_BUFFER", 2),
        (b"\x80\x05K\x01\x98.", "READONLY_BUFFER", 4),
    ] {
        let e = refused(bytes);
        assert!(
            e.starts_with(&format!("{NAME} (byte {at}): error: opcode {name} (0x")),
            "{name}: {e}"
        );
        assert!(e.ends_with(CLASS), "{name}: {e}");
    }
}

#[test]
fn not_a_pickle_or_another_protocol_is_named() {
    // 15 of its 16 bytes are shown: the closing brace is counted, not silently dropped. (Text
    // that opens a JSON object or array is read as a snapshot's JSON form: tests/snapshot_shapes.rs.)
    assert_eq!(
        refused(b"segments: [], x}"),
        format!("{NAME} (byte 0): error: expected a pickle of protocol 2 to 5 (starting with the PROTO opcode 0x80), found \"segments: [], x\"… (1 more byte)")
    );
    assert_eq!(
        refused(b"(lp0\n."),
        format!("{NAME} (byte 0): error: expected a pickle of protocol 2 to 5 (starting with the PROTO opcode 0x80), found \"(lp0\\n.\"")
    );
    assert_eq!(
        refused(b"\x80\x06}."),
        format!("{NAME} (byte 1): error: pickle protocol 6 is not supported (2 to 5 are)")
    );
    assert_eq!(
        refused(b""),
        format!("{NAME} (byte 0): error: the file is empty; expected a pickle (protocol 2 to 5)")
    );
    assert_eq!(
        refused(b"\x80\x02I1\n."),
        format!("{NAME} (byte 2): error: text opcode INT (0x49) belongs to pickle protocols 0 and 1; a snapshot is written with protocol 2 or newer")
    );
    assert_eq!(
        refused(b"\x80\x04\xff"),
        format!(
            "{NAME} (byte 2): error: byte 0xff is not a pickle opcode (corrupt or not a pickle): \
             expected an opcode, found \"\\xff\""
        )
    );
}

#[test]
fn a_pickle_of_something_else_is_not_a_snapshot() {
    // pickle.dumps({'a': 1}, protocol=4)
    assert_eq!(
        refused(b"\x80\x04\x95\n\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94K\x01s."),
        format!("{NAME}: error: the pickle holds a dict without 'segments' or 'device_traces' (keys: a); not a memory snapshot")
    );
    // pickle.dumps(3, protocol=2)
    assert_eq!(
        refused(b"\x80\x02K\x03."),
        format!("{NAME}: error: the pickle holds an integer; a memory snapshot is a dict with 'segments' and 'device_traces' or a list of segments")
    );
}

#[test]
fn declared_lengths_past_the_end_are_refused_without_allocating() {
    let mut b = b"\x80\x04}\x94(\x8c\x08segments\x94\x8d".to_vec();
    b.extend_from_slice(&(1u64 << 60).to_le_bytes());
    assert_eq!(
        refused(&b),
        format!("{NAME} (byte 16): error: BINUNICODE8 declares 1152921504606846976 bytes but only 0 remain in the file (truncated or corrupt)")
    );
    let mut b = b"\x80\x04\x8e".to_vec();
    b.extend_from_slice(&u64::MAX.to_le_bytes());
    b.extend_from_slice(b"abc.");
    assert_eq!(
        refused(&b),
        format!("{NAME} (byte 2): error: BINBYTES8 declares 18446744073709551615 bytes but only 4 remain in the file (truncated or corrupt)")
    );
    assert_eq!(
        refused(b"\x80\x02X\xff\xff\xff\x7fab."),
        format!("{NAME} (byte 2): error: BINUNICODE declares 2147483647 bytes but only 3 remain in the file (truncated or corrupt)")
    );
    assert_eq!(
        refused(b"\x80\x02\x8b\xff\xff\xff\x7f."),
        format!("{NAME} (byte 2): error: LONG4 declares 2147483647 bytes but only 1 remain in the file (truncated or corrupt)")
    );
    assert_eq!(
        refused(b"\x80\x02\x8b\xff\xff\xff\xff."),
        format!("{NAME} (byte 2): error: LONG4 with a negative length (corrupt pickle)")
    );
}

#[test]
fn nesting_bombs_stop_at_the_limits() {
    // 10,000 nested MARK-batched lists: the mark limit.
    let mut b = b"\x80\x04".to_vec();
    for _ in 0..10_000 {
        b.extend_from_slice(b"](");
    }
    let e = refused(&b);
    assert_eq!(
        e,
        format!("{NAME} (byte 8195): error: more than 4096 nested MARKs: not a snapshot pickle")
    );
    // 2,000,000 values pushed without marks: the stack limit.
    let mut b = b"\x80\x04]".to_vec();
    b.extend(std::iter::repeat_n(b'N', 2_000_000));
    let e = refused(&b);
    assert_eq!(
        e,
        format!("{NAME} (byte 1048578): error: more than 1048576 values on the pickle stack at once: not a snapshot pickle")
    );
}

#[test]
fn shared_and_self_references_build_nothing_twice() {
    // A list that contains itself (l = []; l.append(l)): read, with a warning, in no time.
    let s = read(b"\x80\x04]\x94h\x00a.").expect("reads");
    assert!(s.segments.is_empty());
    let w: Vec<String> = s.warnings.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        w,
        [
            format!("{NAME} (byte 4): warning: the segment list is referenced again while still being read; the reference is ignored"),
            format!("{NAME} (byte 6): warning: an item of the segment list: expected a segment dict, found an unsupported value; ignored"),
        ]
    );
    // "Billion laughs": 40 levels, each a list of ten references to the level below (written
    // inline once, then by memo). Python would share the objects; a value tree would hold 10^40
    // items. Here every finished list is one memo handle.
    fn level(b: &mut Vec<u8>, k: u32, memo: u32) {
        b.extend_from_slice(b"]\x94");
        if k == 0 {
            return;
        }
        b.push(b'(');
        level(b, k - 1, memo + 1);
        for _ in 0..9 {
            b.extend_from_slice(&[b'h', (memo + 1) as u8]);
        }
        b.push(b'e');
    }
    let mut b = b"\x80\x04}\x94\x8c\x0eexternal_notes\x94".to_vec();
    level(&mut b, 40, 2);
    b.extend_from_slice(b"s.");
    let e = refused(&b);
    assert_eq!(
        e,
        format!("{NAME}: error: the pickle holds a dict without 'segments' or 'device_traces' (keys: external_notes); not a memory snapshot")
    );
}

#[test]
fn every_truncation_of_a_real_snapshot_is_an_error_with_an_offset() {
    let full = tiny();
    let mut n = 0;
    for cut in (0..full.len()).step_by(331) {
        let e = refused(&full[..cut]);
        assert!(e.starts_with(&format!("{NAME} (byte ")), "cut {cut}: {e}");
        assert!(
            e.contains("truncated") || e.contains("ends inside") || e.contains("empty"),
            "cut {cut}: {e}"
        );
        n += 1;
    }
    assert!(n > 200);
    // The last byte (STOP) missing.
    let e = refused(&full[..full.len() - 1]);
    assert!(e.contains("the file ends inside an opcode"), "{e}");
}

#[test]
fn wrong_types_and_missing_fields_become_counted_warnings() {
    // Two segments: one with total_size as a string (skipped), one good.
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.dict().unwrap();
    w.mark().unwrap();
    w.str("segments").unwrap();
    w.list().unwrap();
    w.mark().unwrap();
    for bad in [true, false] {
        w.dict().unwrap();
        w.mark().unwrap();
        w.str("device").unwrap();
        w.int(0).unwrap();
        w.str("address").unwrap();
        w.int(1 << 32).unwrap();
        w.str("total_size").unwrap();
        if bad {
            w.str("2097152").unwrap();
        } else {
            w.int(2_097_152).unwrap();
        }
        w.str("blocks").unwrap();
        w.list().unwrap();
        w.dict().unwrap();
        w.mark().unwrap();
        w.str("size").unwrap();
        w.int(2_097_152).unwrap();
        w.str("state").unwrap();
        w.str("active_allocated").unwrap();
        w.setitems().unwrap();
        w.append().unwrap();
        w.setitems().unwrap();
    }
    w.appends().unwrap();
    w.str("device_traces").unwrap();
    w.list().unwrap();
    w.setitems().unwrap();
    let bytes = w.finish().unwrap();
    let s = read(&bytes).expect("reads");
    assert_eq!(s.segments.len(), 1);
    assert_eq!(s.blocks.len(), 1);
    assert_eq!(
        s.blocks[0].address,
        1 << 32,
        "address taken from the segment"
    );
    let w: Vec<String> = s.warnings.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        w,
        [
            format!("{NAME} (byte 128): warning: field 'total_size' of a segment: expected a non-negative integer, found a string; ignored"),
            format!("{NAME} (byte 173): warning: a segment without 'address' or 'total_size' was skipped"),
        ]
    );
    let a = analysis::analyse(&s);
    assert_eq!(a.devices[0].allocated_bytes, 2_097_152);
}

#[test]
fn a_missing_memo_entry_is_named() {
    assert_eq!(
        refused(b"\x80\x04]\x94(h\x07e."),
        format!("{NAME} (byte 5): error: BINGET refers to memo entry 7, which was never stored (corrupt pickle)")
    );
}

/// Builders of protocol-2 snapshots with explicit memo indices, for the frame-list tests.
mod p2 {
    /// A short string (`SHORT_BINSTRING`).
    pub fn s(b: &mut Vec<u8>, text: &str) {
        b.push(b'U');
        b.push(text.len() as u8);
        b.extend_from_slice(text.as_bytes());
    }

    /// A frame dict stored at memo `memo` (`BINPUT`).
    pub fn frame(b: &mut Vec<u8>, name: &str, memo: u8) {
        b.extend_from_slice(&[b'}', b'q', memo, b'(']);
        s(b, "name");
        s(b, name);
        s(b, "filename");
        s(b, "x.py");
        s(b, "line");
        b.extend_from_slice(b"K\x01u");
    }

    /// A trace entry whose `frames` list is empty but for what `frames` writes after it.
    pub fn entry(b: &mut Vec<u8>, frames: &dyn Fn(&mut Vec<u8>)) {
        b.extend_from_slice(b"}(");
        s(b, "action");
        s(b, "alloc");
        s(b, "addr");
        b.extend_from_slice(b"K\x10");
        s(b, "size");
        b.extend_from_slice(b"K\x08");
        s(b, "frames");
        b.extend_from_slice(b"]");
        frames(b);
        b.extend_from_slice(b"u");
    }

    /// A snapshot of no segments and one device whose trace is the entries `entries` writes.
    pub fn snapshot(entries: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut b = b"\x80\x02}(".to_vec();
        s(&mut b, "segments");
        b.extend_from_slice(b"]");
        s(&mut b, "device_traces");
        b.extend_from_slice(b"]](");
        entries(&mut b);
        b.extend_from_slice(b"eau.");
        b
    }
}

/// The frame names of each trace entry's stack on the first device.
fn stack_names(snap: &snapshot::Snapshot) -> Vec<Vec<&str>> {
    snap.traces[0]
        .stack
        .iter()
        .map(|&st| {
            snap.stack_frames(st)
                .map(|f| snap.strings.get(f.name))
                .collect()
        })
        .collect()
}

#[test]
fn a_frame_memo_entry_overwritten_between_equal_frame_lists_is_read_anew() {
    // Trace entries whose frame lists are the same bytes (`MARK BINGET 11 APPENDS`) are read from
    // a cache of such runs; between them the pickle stores another frame dict at memo 11
    // (`BINPUT 11`), as Python's unpickler allows. By pickle's rules a `BINGET 11` after that
    // store is the second frame, so the entries' stacks are: fa (defines it), fa, fa, fb (defines
    // it and overwrites memo 11), fb.
    use p2::{entry, frame};
    let list = |b: &mut Vec<u8>, items: &dyn Fn(&mut Vec<u8>)| {
        b.push(b'(');
        items(b);
        b.push(b'e');
    };
    let again = |b: &mut Vec<u8>| list(b, &|b| b.extend_from_slice(b"h\x0b"));
    let b = p2::snapshot(|b| {
        entry(b, &|b| list(b, &|b| frame(b, "fa", 11)));
        entry(b, &again);
        entry(b, &again);
        entry(b, &|b| list(b, &|b| frame(b, "fb", 11)));
        entry(b, &again);
    });
    let snap = read(&b).expect("reads");
    assert_eq!(stack_names(&snap), [["fa"], ["fa"], ["fa"], ["fb"], ["fb"]]);
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
}

#[test]
fn frame_lists_made_of_a_cached_run_and_more_keep_every_frame() {
    // The first entry defines the frames fa (memo 11) and fb (memo 12); then lists whose batch is
    // the run `BINGET 11 BINGET 12`, read from the cache of runs (which also remembers the stack a
    // list of that run alone made), alone or with items before or after it: an APPEND before, a
    // second batch after, an APPEND after. Python's `pickle.loads` of these bytes gives the same
    // lists of frame names (checked when written).
    use p2::{entry, frame};
    let run = b"(h\x0bh\x0ce";
    let b = p2::snapshot(|b| {
        entry(b, &|b| {
            b.push(b'(');
            frame(b, "fa", 11);
            frame(b, "fb", 12);
            b.push(b'e');
        });
        entry(b, &|b| b.extend_from_slice(run));
        entry(b, &|b| b.extend_from_slice(run));
        entry(b, &|b| {
            b.extend_from_slice(b"h\x0ba");
            b.extend_from_slice(run);
        });
        entry(b, &|b| {
            b.extend_from_slice(run);
            b.extend_from_slice(b"(h\x0be");
        });
        entry(b, &|b| {
            b.extend_from_slice(run);
            b.extend_from_slice(b"h\x0ca");
        });
        entry(b, &|b| b.extend_from_slice(run));
    });
    let snap = read(&b).expect("reads");
    let ab = vec!["fa", "fb"];
    assert_eq!(
        stack_names(&snap),
        [
            ab.clone(),
            ab.clone(),
            ab.clone(),
            vec!["fa", "fa", "fb"],
            vec!["fa", "fb", "fa"],
            vec!["fa", "fb", "fb"],
            ab
        ]
    );
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
}
