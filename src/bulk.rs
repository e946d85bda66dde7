//! Answers made of number arrays: what the views ask for at every frame (curve envelopes, visible
//! rectangles, a memory frame). They cross to the page as typed arrays, not JSON, which would
//! cost more than computing them; each answer lists its fields by name here, so the wasm layer
//! converts every such answer with one function and the shapes are tested natively.

/// One named field of a bulk answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field<'a> {
    /// A number.
    Num(f64),
    /// `Float64Array`.
    F64(&'a [f64]),
    /// `Float32Array`.
    F32(&'a [f32]),
    /// `Uint32Array`.
    U32(&'a [u32]),
    /// `Uint8Array`.
    U8(&'a [u8]),
    /// A string.
    Text(&'a str),
}

/// An answer whose fields cross as typed arrays.
pub trait Bulk {
    /// Every field, by name.
    fn fields(&self) -> Vec<(&'static str, Field<'_>)>;
}

/// `u64` values as `f64` (exact below 2^53: bytes, counts and relative times stay exact).
pub fn f64s(v: &[u64]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

/// Flags as 0 / 1 bytes.
pub fn flags(v: &[bool]) -> Vec<u8> {
    v.iter().map(|&b| u8::from(b)).collect()
}

/// Bulk answers in one byte string, for a front end that receives them over HTTP (`memlens
/// serve`): a little-endian `u32` header length, the header (JSON: one list per answer of
/// `[name, kind, offset, count]` — kind `num`, `f64`, `f32`, `u32`, `u8` or `text`), zero bytes up
/// to a multiple of 8, then the data. Each field's data starts at a multiple of 8 bytes after the
/// data start (so typed arrays can view it in place): numbers as one `f64`, arrays as their
/// elements, texts as UTF-8; offsets and counts are in bytes for texts and elements otherwise.
pub fn encode(answers: &[&dyn Bulk]) -> Vec<u8> {
    let mut header: Vec<Vec<(String, &'static str, usize, usize)>> = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    let mut put = |bytes: &[u8]| -> usize {
        let at = data.len();
        data.extend_from_slice(bytes);
        data.resize(data.len().next_multiple_of(8), 0);
        at
    };
    for answer in answers {
        let mut fields = Vec::new();
        for (name, field) in answer.fields() {
            let (kind, at, count) = match field {
                Field::Num(x) => ("num", put(&x.to_le_bytes()), 1),
                Field::F64(v) => {
                    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                    ("f64", put(&b), v.len())
                }
                Field::F32(v) => {
                    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                    ("f32", put(&b), v.len())
                }
                Field::U32(v) => {
                    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                    ("u32", put(&b), v.len())
                }
                Field::U8(v) => ("u8", put(v), v.len()),
                Field::Text(t) => ("text", put(t.as_bytes()), t.len()),
            };
            fields.push((name.to_string(), kind, at, count));
        }
        header.push(fields);
    }
    // A list of tuples of strings and integers always serialises.
    let head = serde_json::to_vec(&header).unwrap_or_default();
    let start = (4 + head.len()).next_multiple_of(8);
    let mut out = Vec::with_capacity(start + data.len());
    out.extend_from_slice(&(head.len() as u32).to_le_bytes());
    out.extend_from_slice(&head);
    out.resize(start, 0);
    out.extend_from_slice(&data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Answer {
        xs: Vec<f64>,
        ys: Vec<f32>,
        ids: Vec<u32>,
        flags: Vec<u8>,
    }

    impl Bulk for Answer {
        fn fields(&self) -> Vec<(&'static str, Field<'_>)> {
            vec![
                ("visible", Field::Num(f64::NAN)),
                ("x", Field::F64(&self.xs)),
                ("y", Field::F32(&self.ys)),
                ("id", Field::U32(&self.ids)),
                ("flag", Field::U8(&self.flags)),
                ("label", Field::Text("héllo")),
            ]
        }
    }

    #[test]
    fn encoded_answers_decode_by_their_header() {
        let a = Answer {
            xs: vec![1.5, -2.0],
            ys: vec![0.25],
            ids: vec![7, 8, 9],
            flags: vec![1, 0, 1],
        };
        let bytes = encode(&[&a, &a]);
        let len = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
        let header: serde_json::Value = serde_json::from_slice(&bytes[4..4 + len]).unwrap();
        let start = (4 + len).next_multiple_of(8);
        assert_eq!(header.as_array().unwrap().len(), 2);
        let field = |i: usize| {
            let f = &header[1][i];
            let at = start + f[2].as_u64().unwrap() as usize;
            assert_eq!(at % 8, 0, "aligned");
            (
                f[0].as_str().unwrap().to_string(),
                f[1].as_str().unwrap().to_string(),
                at,
                f[3].as_u64().unwrap() as usize,
            )
        };
        let f64_at = |at: usize| f64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let (name, kind, at, n) = field(0);
        assert_eq!((name.as_str(), kind.as_str(), n), ("visible", "num", 1));
        assert!(f64_at(at).is_nan());
        let (_, kind, at, n) = field(1);
        assert_eq!(
            (kind.as_str(), n, f64_at(at), f64_at(at + 8)),
            ("f64", 2, 1.5, -2.0)
        );
        let (_, kind, at, n) = field(2);
        assert_eq!((kind.as_str(), n), ("f32", 1));
        assert_eq!(
            f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()),
            0.25
        );
        let (_, kind, at, n) = field(3);
        assert_eq!((kind.as_str(), n), ("u32", 3));
        assert_eq!(
            u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()),
            9
        );
        let (_, kind, at, n) = field(4);
        assert_eq!(
            (kind.as_str(), &bytes[at..at + n]),
            ("u8", &[1u8, 0, 1][..])
        );
        let (_, kind, at, n) = field(5);
        assert_eq!(
            (
                kind.as_str(),
                std::str::from_utf8(&bytes[at..at + n]).unwrap()
            ),
            ("text", "héllo")
        );
    }
}
