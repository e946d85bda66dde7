//! The JSON form of a snapshot: the same dict (or bare segment list) that `_dump_snapshot`
//! pickles, saved with Python's `json.dump` by tools that feed web viewers.
//!
//! serde_json parses the text as it streams from the [`Source`]; every container and value it
//! meets is handed to the same [`Builder`] the pickle machine drives, so both forms become one
//! model through one schema. A pickle's tuple (a segment's `segment_pool_id`) is a JSON list; the
//! schema takes either.

use super::build::Builder;
use super::pickle::{Fail, Memo, Val, MAX_STRING};
use crate::diag::Diagnostic;
use crate::source::{read_size, Source, DEFAULT_CHUNK, STOP_CHECK_BYTES};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::io;

/// The keys a snapshot's dict may start with: torch writes `segments` first; a dict saved with
/// `json.dump(sort_keys=True)` starts with `allocator_settings` (torch 2.1+) or `device_traces`.
const ROOT_KEYS: [&[u8]; 4] = [
    b"segments",
    b"device_traces",
    b"allocator_settings",
    b"external_annotations",
];

/// The text after a UTF-8 byte order mark, if any.
fn text(head: &[u8]) -> &[u8] {
    head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head)
}

/// True when `head` opens a JSON object or array (after white space).
pub fn opens(head: &[u8]) -> bool {
    matches!(
        text(head).iter().find(|c| !c.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

/// Recognises the JSON form from its first bytes: `{` and a first key of a snapshot's dict, or
/// `[` and a first item that is a dict whose first key is a segment's. Returns whether the top
/// level is the dict (else a bare segment list).
pub fn sniff(head: &[u8]) -> Option<bool> {
    let mut p = text(head);
    let token = |p: &mut &[u8]| -> Option<u8> {
        let i = p.iter().position(|c| !c.is_ascii_whitespace())?;
        let c = p[i];
        *p = &p[i + 1..];
        Some(c)
    };
    let key = |p: &mut &[u8]| -> Option<Vec<u8>> {
        let end = p.iter().position(|&c| c == b'"' || c == b'\\')?;
        let k = p[..end].to_vec();
        (p[end] == b'"').then(|| {
            *p = &p[end + 1..];
            k
        })
    };
    match token(&mut p)? {
        b'{' => {
            if token(&mut p)? != b'"' {
                return None;
            }
            let k = key(&mut p)?;
            ROOT_KEYS.contains(&k.as_slice()).then_some(true)
        }
        b'[' => {
            if token(&mut p)? != b'{' || token(&mut p)? != b'"' {
                return None;
            }
            let k = key(&mut p)?;
            super::SEGMENT_KEYS.contains(&k.as_slice()).then_some(false)
        }
        _ => None,
    }
}

/// Reads the JSON text of `source` into `b`; returns the top-level value.
pub(crate) fn run(source: &dyn Source, b: &mut Builder) -> Result<Val, Fail> {
    // serde_json does not take a byte order mark: the text starts after it.
    let head = source
        .read_range(0, 3)
        .map_err(|e| Box::new(Diagnostic::from(e)))?;
    let start = (head.len() - text(&head).len()) as u64;
    let offset = Cell::new(start);
    let failed = RefCell::new(None);
    let reader = Reader {
        src: source,
        buf: Vec::new(),
        pos: 0,
        end: 0,
        offset: &offset,
        next_stop: if source.may_stop() {
            STOP_CHECK_BYTES
        } else {
            u64::MAX
        },
        failed: &failed,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut cx = Cx {
        b,
        memo: Memo::default(),
        offset: &offset,
        failed: &failed,
    };
    let top = Node {
        cx: &mut cx,
        parent: None,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    top.map_err(|e| {
        if let Some(f) = failed.borrow_mut().take() {
            return f;
        }
        let at = offset.get().saturating_sub(1);
        let msg = if e.is_eof() {
            format!("the file ends inside its JSON (truncated file?): {e}")
        } else {
            format!("not valid JSON: {e}")
        };
        Box::new(Diagnostic::error(source.name(), msg).at_byte(at))
    })
}

/// The source as `io::Read`, counting the bytes handed out (serde_json reads one at a time, so
/// the count is where the parse stands) and asking about stops as the pickle machine does.
struct Reader<'a> {
    src: &'a dyn Source,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    offset: &'a Cell<u64>,
    next_stop: u64,
    failed: &'a RefCell<Option<Fail>>,
}

impl Reader<'_> {
    fn fail(&self, d: Diagnostic) -> io::Error {
        let msg = d.message.clone();
        *self.failed.borrow_mut() = Some(Box::new(d));
        io::Error::other(msg)
    }
}

impl io::Read for Reader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let at = self.offset.get();
        if self.pos == self.end {
            if at >= self.next_stop {
                self.src
                    .check_stop(at)
                    .map_err(|e| self.fail(Diagnostic::from(e)))?;
                self.next_stop = at + STOP_CHECK_BYTES;
            }
            let left = usize::try_from(self.src.len().saturating_sub(at)).unwrap_or(usize::MAX);
            let want = read_size(self.src, DEFAULT_CHUNK).min(left);
            if want == 0 {
                return Ok(0);
            }
            if self.buf.len() < want {
                self.buf.resize(want, 0);
            }
            let got = self
                .src
                .read_at(at, &mut self.buf[..want])
                .map_err(|e| self.fail(Diagnostic::from(e)))?;
            self.pos = 0;
            self.end = got;
        }
        let n = out.len().min(self.end - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        self.offset.set(at + n as u64);
        Ok(n)
    }
}

/// What the visitors share: the builder, and where a failure of its own is kept (serde's error
/// type cannot carry a [`Diagnostic`]).
struct Cx<'a> {
    b: &'a mut Builder,
    memo: Memo,
    offset: &'a Cell<u64>,
    failed: &'a RefCell<Option<Fail>>,
}

impl Cx<'_> {
    fn at(&self) -> u64 {
        self.offset.get().saturating_sub(1)
    }

    fn keep<T, E: de::Error>(&self, r: Result<T, Fail>) -> Result<T, E> {
        r.map_err(|f| {
            let msg = f.message.clone();
            *self.failed.borrow_mut() = Some(f);
            E::custom(msg)
        })
    }

    fn string<E: de::Error>(&mut self, s: &str) -> Result<Val, E> {
        if s.len() > MAX_STRING {
            self.b.note_long_string(self.at());
            return Ok(Val::LongStr);
        }
        let r = self.b.intern_bytes(s.as_bytes(), self.at());
        self.keep(r).map(Val::Str)
    }

    /// A container starts as the item of `parent` (slot and, in a dict, key): the builder
    /// predicts its kind from a pickle stack of the same shape (parent, mark, key).
    fn create<E: de::Error>(
        &mut self,
        parent: Option<(u32, Option<Val>)>,
        dict: bool,
    ) -> Result<u32, E> {
        let at = self.at();
        let r = match parent {
            None => self.b.create(&[], None, dict, at),
            Some((p, None)) => self.b.create(&[Val::Obj(p), Val::Mark], Some(1), dict, at),
            Some((p, Some(k))) => self
                .b
                .create(&[Val::Obj(p), Val::Mark, k], Some(1), dict, at),
        };
        self.keep(r)
    }

    fn attach<E: de::Error>(&mut self, parent: u32, key: Option<Val>, child: Val) -> Result<(), E> {
        let at = self.at();
        let r = self.b.attach(parent, key, child, at, &mut self.memo);
        self.keep(r)
    }
}

/// One JSON value, the item of `parent`.
struct Node<'c, 'a> {
    cx: &'c mut Cx<'a>,
    parent: Option<(u32, Option<Val>)>,
}

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = Val;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
    type Value = Val;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Val, E> {
        Ok(Val::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Val, E> {
        Ok(Val::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Val, E> {
        Ok(i64::try_from(v).map_or(Val::BigInt, Val::Int))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Val, E> {
        Ok(Val::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Val, E> {
        self.cx.string(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Val, E> {
        Ok(Val::None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Val, A::Error> {
        let slot = self.cx.create(self.parent, false)?;
        while let Some(v) = seq.next_element_seed(Node {
            cx: self.cx,
            parent: Some((slot, None)),
        })? {
            self.cx.attach(slot, None, v)?;
        }
        Ok(Val::Obj(slot))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Val, A::Error> {
        let slot = self.cx.create(self.parent, true)?;
        while let Some(k) = map.next_key_seed(Key { cx: self.cx })? {
            let v = map.next_value_seed(Node {
                cx: self.cx,
                parent: Some((slot, Some(k))),
            })?;
            self.cx.attach(slot, Some(k), v)?;
        }
        Ok(Val::Obj(slot))
    }
}

/// A dict's key: always a string in JSON.
struct Key<'c, 'a> {
    cx: &'c mut Cx<'a>,
}

impl<'de> DeserializeSeed<'de> for Key<'_, '_> {
    type Value = Val;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_, '_> {
    type Value = Val;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Val, E> {
        self.cx.string(v)
    }
}
