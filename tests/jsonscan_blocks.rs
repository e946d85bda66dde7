//! The block scan (`jsonscan::blocks`, SIMD where the build has it) against the scalar scan it
//! replaces (`jsonscan::lex::skip_nested_scalar`, the reference): the same end, cut or not, from
//! every bracket of the real and generated traces, from every offset of generated JSON full of
//! escapes and brackets inside strings, of damaged text, and with the buffer cut at every length;
//! and the scan that keeps a block's masks between calls (`blocks::Cursor`) from the same offsets,
//! one cursor per buffer, called in file order (as the event scanner does) and in a random order;
//! and the end of a string found by blocks (`lex::scan_string`) against the byte-by-byte walk
//! (`lex::scan_string_scalar`) from the same offsets.

use memlens::jsonscan::blocks::{skip_nested_blocks, Cursor};
use memlens::jsonscan::lex::{
    scan_string, scan_string_scalar, skip_nested, skip_nested_scalar, Scan,
};
use std::path::{Path, PathBuf};

/// Both scans from `i`, compared.
fn same(b: &[u8], i: usize, what: &str) {
    let want = skip_nested_scalar(b, i);
    assert_eq!(
        skip_nested_blocks(b, i),
        want,
        "{what}: from offset {i} of {} bytes",
        b.len()
    );
    assert_eq!(skip_nested(b, i), want, "{what}: skip_nested from {i}");
    // A string taken to start at `i`: the block search of long strings against the byte walk.
    assert_eq!(
        scan_string(b, i),
        scan_string_scalar(b, i),
        "{what}: string from {i}"
    );
    assert_eq!(
        Cursor::default().skip_nested(b, i),
        want,
        "{what}: a new cursor from {i}"
    );
}

/// One cursor over `b` from each of `starts` in their order, then a new one in a random order,
/// against the scalar scan.
fn walk(b: &[u8], starts: &[usize], what: &str) {
    let mut cur = Cursor::default();
    for &i in starts {
        let want = skip_nested_scalar(b, i);
        assert_eq!(cur.skip_nested(b, i), want, "{what}: kept cursor from {i}");
    }
    let mut shuffled = starts.to_vec();
    fastrand::Rng::with_seed(b.len() as u64).shuffle(&mut shuffled);
    let mut cur = Cursor::default();
    for &i in &shuffled {
        let want = skip_nested_scalar(b, i);
        assert_eq!(
            cur.skip_nested(b, i),
            want,
            "{what}: kept cursor, random order, from {i}"
        );
    }
}

/// Every offset of `b`.
fn every(b: &[u8]) -> Vec<usize> {
    (0..b.len()).collect()
}

fn traces(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("fixtures readable").flatten() {
        let p = e.path();
        if p.is_dir() {
            traces(&p, out);
        } else if p.file_name().is_some_and(|n| n == "trace_view.json") {
            out.push(p);
        }
    }
}

#[test]
fn every_bracket_of_the_fixture_traces() {
    let mut files = Vec::new();
    traces(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &mut files,
    );
    assert!(files.len() >= 5, "fixture traces found: {files:?}");
    let mut done = 0;
    for f in &files {
        let b = std::fs::read(f).expect("trace readable");
        let starts: Vec<usize> = (0..b.len())
            .filter(|&i| matches!(b[i], b'{' | b'['))
            .collect();
        for &i in &starts {
            same(&b, i, &f.display().to_string());
        }
        walk(&b, &starts, &f.display().to_string());
        done += starts.len();
    }
    assert!(done > 10_000, "{done} brackets compared");
}

/// A generated rank's trace (the generator's text export), with every event cut at every length.
#[test]
fn generated_trace_every_bracket_and_every_cut() {
    let trace = memlens::profiler::generate::one_trace(64 << 10, 3).expect("generated");
    assert!(trace.len() > 60_000);
    let starts: Vec<usize> = (0..trace.len())
        .filter(|&i| matches!(trace[i], b'{' | b'['))
        .collect();
    for &i in &starts {
        same(&trace, i, "generated trace");
    }
    walk(&trace, &starts, "generated trace");
    // Cuts: every length from each of the first events to past its end.
    let mut events = 0;
    for &i in &starts {
        let end = match skip_nested_scalar(&trace, i) {
            Scan::Done(e) => e,
            other => panic!("event at {i} not whole: {other:?}"),
        };
        if trace[i] != b'{' || end - i > 2000 {
            continue; // the whole array
        }
        events += 1;
        if events > 40 {
            break;
        }
        for k in i..(end + 70).min(trace.len()) {
            same(&trace[..k], i, "generated trace, cut");
        }
    }
}

/// Random JSON values whose strings hold brackets, quotes and runs of backslashes.
fn random_json(rng: &mut fastrand::Rng, depth: u32, out: &mut Vec<u8>) {
    let kind = if depth > 4 {
        rng.u8(0..3)
    } else {
        rng.u8(0..6)
    };
    match kind {
        0 => out.extend_from_slice(rng.i64(..).to_string().as_bytes()),
        1 | 2 => {
            out.push(b'"');
            for _ in 0..rng.usize(0..90) {
                match rng.u8(0..12) {
                    0 => out.extend_from_slice(b"\\\""),
                    1 => out.extend_from_slice(b"\\\\"),
                    2 => out.extend_from_slice(b"\\\\\\\""),
                    3 => out.extend_from_slice(b"\\n"),
                    4 => out.push(b"{}[]"[rng.usize(0..4)]),
                    5 => out.extend_from_slice(b"}, {"),
                    6 => out.extend_from_slice("é→".as_bytes()),
                    _ => out.push(rng.alphanumeric() as u8),
                }
            }
            out.push(b'"');
        }
        3 | 4 => {
            out.push(b'{');
            for m in 0..rng.usize(0..6) {
                if m > 0 {
                    out.extend_from_slice(b", ");
                }
                random_json(rng, 9, out); // a string or number as the name
                out.extend_from_slice(b": ");
                random_json(rng, depth + 1, out);
            }
            out.push(b'}');
        }
        _ => {
            out.push(b'[');
            for m in 0..rng.usize(0..6) {
                if m > 0 {
                    out.push(b',');
                }
                random_json(rng, depth + 1, out);
            }
            out.push(b']');
        }
    }
}

#[test]
fn random_json_with_escapes_every_offset_and_every_cut() {
    let mut rng = fastrand::Rng::with_seed(16);
    let mut cuts = 0;
    for round in 0..12 {
        let mut b = b"[".to_vec();
        let mut events = Vec::new();
        for e in 0..10 {
            if e > 0 {
                b.extend_from_slice(b",\n ");
            }
            let start = b.len();
            b.push(b'{');
            random_json(&mut rng, 2, &mut b);
            b.extend_from_slice(b": 1}");
            events.push((start, b.len()));
        }
        b.push(b']');
        for i in 0..b.len() {
            same(&b, i, &format!("random JSON round {round}"));
        }
        walk(&b, &every(&b), &format!("random JSON round {round}"));
        // Every cut of the shorter events (a cut inside a long one is no different).
        for &(s, e) in events.iter().filter(|(s, e)| e - s < 700) {
            for k in s..(e + 8).min(b.len()) {
                same(&b[..k], s, &format!("random JSON round {round}, cut"));
                cuts += 1;
            }
        }
    }
    assert!(cuts > 1000, "{cuts} cuts compared");
}

#[test]
fn damaged_text_every_offset() {
    let mut rng = fastrand::Rng::with_seed(61);
    let alphabet = b"\"\\{}[]:, ax\n\xff\x00";
    for _ in 0..100 {
        let n = rng.usize(0..400);
        let b: Vec<u8> = (0..n)
            .map(|_| alphabet[rng.usize(..alphabet.len())])
            .collect();
        for i in 0..b.len() {
            same(&b, i, "damaged text");
        }
        walk(&b, &every(&b), "damaged text");
    }
}

#[test]
fn escapes_across_block_edges() {
    // A backslash run ending exactly at each offset around the 64-byte edges, escaping a quote.
    for pad in 0..140 {
        for run in 1..5 {
            let mut b = b"{\"a\": \"".to_vec();
            b.extend(std::iter::repeat_n(b'x', pad));
            b.extend(std::iter::repeat_n(b'\\', run));
            b.extend_from_slice(b"\"}{\" ]}\"}, {}");
            for i in 0..b.len() {
                same(&b, i, &format!("pad {pad}, {run} backslashes"));
            }
            walk(&b, &every(&b), &format!("pad {pad}, {run} backslashes"));
        }
    }
}

/// Every text of up to 10 bytes over `a`, `"` and `\` after an opening quote, so the quote or
/// escape that ends or interrupts a short string falls on every byte of the first word (tested
/// inline by `scan_string`) and just past it: the same end as the byte-by-byte walk.
#[test]
fn short_strings_end_where_the_byte_walk_ends() {
    let alphabet = [b'a', b'"', b'\\'];
    for len in 0..=10u32 {
        for mut code in 0..3usize.pow(len) {
            let mut b = vec![b'"'];
            for _ in 0..len {
                b.push(alphabet[code % 3]);
                code /= 3;
            }
            assert_eq!(
                scan_string(&b, 0),
                scan_string_scalar(&b, 0),
                "{}",
                String::from_utf8_lossy(&b)
            );
        }
    }
}

/// Deep nesting, so blocks are full of brackets and the depth step's counts (`count_ones` of a
/// block's opening and closing brackets, the parity of its quotes) decide: `n` opening brackets
/// (`[` and `{` in turn) after `pad` blanks, a string holding brackets of both kinds, the `n`
/// closing brackets in mirror order, and a tail of more closing brackets. The end of the value
/// opened by bracket `k` is known from the construction: after the string and `n - k` closing
/// brackets. Every scan, and one cursor kept from the outermost bracket inwards, must find it.
#[test]
fn deep_nesting_ends_where_its_construction_says() {
    let inner = br#""]]}}[[{ \" ]""#;
    for n in 1..=160usize {
        for pad in [0, 1, 31, 63] {
            let mut b = vec![b' '; pad];
            let opens: Vec<u8> = (0..n)
                .map(|k| if k % 2 == 0 { b'[' } else { b'{' })
                .collect();
            b.extend_from_slice(&opens);
            b.extend_from_slice(inner);
            b.extend(
                opens
                    .iter()
                    .rev()
                    .map(|&c| if c == b'[' { b']' } else { b'}' }),
            );
            b.extend_from_slice(b"]]}");
            let closes_at = pad + n + inner.len();
            let mut cur = Cursor::default();
            for k in 0..n {
                let want = Scan::Done(closes_at + (n - k));
                let i = pad + k;
                let what = format!("depth {n}, pad {pad}, bracket {k}");
                assert_eq!(skip_nested_blocks(&b, i), want, "{what}: blocks");
                assert_eq!(skip_nested(&b, i), want, "{what}: skip_nested");
                assert_eq!(skip_nested_scalar(&b, i), want, "{what}: scalar");
                assert_eq!(cur.skip_nested(&b, i), want, "{what}: kept cursor");
            }
        }
    }
}
