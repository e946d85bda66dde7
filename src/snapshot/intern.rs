//! Interned strings, frames and call stacks of a snapshot.
//!
//! A snapshot repeats the same few thousand frames millions of times (stacks reach 300 frames and
//! most allocations share most of them), so each distinct string, each distinct
//! `(name, filename, line)` frame and each distinct frame list is stored once and named by a `u32`.
//! Ids are dense and start at 0; stack id 0 is the empty stack.

use hashbrown::HashTable;
use std::hash::BuildHasher;

fn hash_bytes(bytes: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5a9_5ab0).hash_one(bytes)
}

fn hash_ids(ids: &[u32]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x57ac_0001).hash_one(ids)
}

/// Distinct strings, each stored once in one arena.
#[derive(Debug, Clone, Default)]
pub struct Strings {
    arena: String,
    /// `(start, end)` of each string in `arena`.
    spans: Vec<(u32, u32)>,
    table: HashTable<u32>,
}

impl Strings {
    /// The string with id `id` (empty for an unknown id).
    pub fn get(&self, id: u32) -> &str {
        self.spans
            .get(id as usize)
            .and_then(|&(s, e)| self.arena.get(s as usize..e as usize))
            .unwrap_or("")
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when no string is stored.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The id of `s`, if it was interned.
    pub fn find(&self, s: &str) -> Option<u32> {
        let h = hash_bytes(s.as_bytes());
        self.table.find(h, |&id| self.get(id) == s).copied()
    }

    /// Bytes held by the arena (for memory accounting).
    pub fn arena_bytes(&self) -> usize {
        self.arena.len()
    }

    /// The id of `s`, adding it if new. `None` when the arena would pass 4 GiB (ids and spans are
    /// `u32`); the caller reports that as an input limit.
    pub fn intern(&mut self, s: &str) -> Option<u32> {
        let h = hash_bytes(s.as_bytes());
        let Strings {
            arena,
            spans,
            table,
        } = self;
        let found = table
            .find(h, |&id| {
                spans
                    .get(id as usize)
                    .and_then(|&(a, b)| arena.get(a as usize..b as usize))
                    == Some(s)
            })
            .copied();
        if let Some(id) = found {
            return Some(id);
        }
        let start = u32::try_from(arena.len()).ok()?;
        let end = u32::try_from(arena.len() + s.len()).ok()?;
        let id = u32::try_from(spans.len()).ok()?;
        arena.push_str(s);
        spans.push((start, end));
        table.insert_unique(h, id, |&i| {
            let (a, b) = spans[i as usize];
            hash_bytes(&arena.as_bytes()[a as usize..b as usize])
        });
        Some(id)
    }
}

/// One frame of a call stack, as the snapshot records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Function name (string id).
    pub name: u32,
    /// Source file (string id); native frames have `??` or an empty name.
    pub filename: u32,
    /// Line number (0 for native frames).
    pub line: i64,
}

/// Distinct frames.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    frames: Vec<Frame>,
    table: HashTable<u32>,
}

fn hash_frame(f: &Frame) -> u64 {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(&f.name.to_le_bytes());
    b[4..8].copy_from_slice(&f.filename.to_le_bytes());
    b[8..].copy_from_slice(&f.line.to_le_bytes());
    hash_bytes(&b)
}

impl Frames {
    /// The frame with id `id`.
    pub fn get(&self, id: u32) -> Option<&Frame> {
        self.frames.get(id as usize)
    }

    /// Number of distinct frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True when no frame is stored.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The id of `frame`, adding it if new (`None` past `u32::MAX` frames).
    pub fn intern(&mut self, frame: Frame) -> Option<u32> {
        let h = hash_frame(&frame);
        let Frames { frames, table } = self;
        if let Some(&id) = table.find(h, |&id| frames[id as usize] == frame) {
            return Some(id);
        }
        let id = u32::try_from(frames.len()).ok()?;
        frames.push(frame);
        table.insert_unique(h, id, |&i| hash_frame(&frames[i as usize]));
        Some(id)
    }
}

/// Distinct call stacks (lists of frame ids, innermost first). Id 0 is the empty stack.
#[derive(Debug, Clone)]
pub struct Stacks {
    flat: Vec<u32>,
    /// `starts[i]..starts[i + 1]` is stack `i` in `flat`.
    starts: Vec<u32>,
    table: HashTable<u32>,
}

impl Default for Stacks {
    fn default() -> Self {
        let mut s = Stacks {
            flat: Vec::new(),
            starts: vec![0],
            table: HashTable::new(),
        };
        // The empty stack is id 0, so "no frames" needs no special case.
        let _ = s.intern(&[]);
        s
    }
}

impl Stacks {
    /// The frame ids of stack `id`, innermost first (empty for an unknown id).
    pub fn get(&self, id: u32) -> &[u32] {
        let i = id as usize;
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => self.flat.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Number of distinct stacks (including the empty one).
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Always false: the empty stack is always present.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Frame ids held in total (for memory accounting).
    pub fn flat_len(&self) -> usize {
        self.flat.len()
    }

    /// The id of the stack `frames`, adding it if new (`None` past 4 G frame ids in total).
    pub fn intern(&mut self, frames: &[u32]) -> Option<u32> {
        let h = hash_ids(frames);
        let Stacks {
            flat,
            starts,
            table,
        } = self;
        let slice = |id: u32| -> &[u32] {
            let i = id as usize;
            &flat[starts[i] as usize..starts[i + 1] as usize]
        };
        if let Some(&id) = table.find(h, |&id| slice(id) == frames) {
            return Some(id);
        }
        let id = u32::try_from(starts.len() - 1).ok()?;
        let end = u32::try_from(flat.len() + frames.len()).ok()?;
        flat.extend_from_slice(frames);
        starts.push(end);
        table.insert_unique(h, id, |&i| {
            let i = i as usize;
            hash_ids(&flat[starts[i] as usize..starts[i + 1] as usize])
        });
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_frames_and_stacks_are_stored_once() {
        let mut s = Strings::default();
        let a = s.intern("forward").unwrap();
        let b = s.intern("model.py").unwrap();
        assert_eq!(s.intern("forward"), Some(a));
        assert_eq!((s.get(a), s.get(b), s.len()), ("forward", "model.py", 2));
        assert_eq!(s.find("model.py"), Some(b));
        assert_eq!(s.find("nope"), None);

        let mut f = Frames::default();
        let fa = f
            .intern(Frame {
                name: a,
                filename: b,
                line: 54,
            })
            .unwrap();
        let fb = f
            .intern(Frame {
                name: a,
                filename: b,
                line: 55,
            })
            .unwrap();
        assert_ne!(fa, fb);
        assert_eq!(
            f.intern(Frame {
                name: a,
                filename: b,
                line: 54
            }),
            Some(fa)
        );

        let mut st = Stacks::default();
        assert_eq!(st.get(0), &[] as &[u32]);
        let s1 = st.intern(&[fa, fb]).unwrap();
        let s2 = st.intern(&[fb, fa]).unwrap();
        assert_eq!(st.intern(&[fa, fb]), Some(s1));
        assert_eq!(st.intern(&[]), Some(0));
        assert_eq!((st.get(s1), st.get(s2)), (&[fa, fb][..], &[fb, fa][..]));
        assert_eq!(st.len(), 3);
    }
}
