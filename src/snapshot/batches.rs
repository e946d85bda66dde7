//! Frame-list batches seen before, by their bytes.
//!
//! Most of a snapshot's bytes are the batches of its frame lists: `MARK`, a run of `BINGET` /
//! `LONG_BINGET` references to frame dicts memoized earlier, `APPENDS`. Torch writes a fresh list
//! for each trace entry, so the same few hundred stacks come back as the same bytes millions of
//! times. Resolving each reference through the memo costs a dependent load per frame; hashing the
//! run's bytes and finding them here costs a pass over the bytes, about a third of that.
//!
//! A cached run is valid while none of the memo entries it resolved through has changed. Those
//! entries all held frames, so the pickle machine's memo counts every overwrite of a frame entry
//! ([`Batches::check`] is given that count) and any change empties the cache. Python's pickler
//! never overwrites a memo entry; a hand-made pickle that does only loses the cache.
//!
//! A frame list is nearly always one batch, so a run also remembers the stack its frame ids make
//! once a list made of that run alone was interned ([`Batches::set_stack`]): the next such list
//! takes the stack id from here instead of hashing and comparing its ids again (a kilobyte for a
//! stack of 250 frames, compared a byte at a time by wasm32's `memcmp`).

use crate::bytes::same_bytes;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Bytes plus frame ids (4 bytes each) the cache may hold: a few hundred distinct stacks of up
/// to a few hundred frames take well under a MiB; a file whose batches never repeat stops adding
/// at this bound instead of growing.
const MAX_BYTES: usize = 16 << 20;

fn hash(bytes: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x0ba7_c4e5).hash_one(bytes)
}

/// One cached run: its opcode bytes and the frame ids they resolved to, as spans of the arenas,
/// and the stack those ids make ([`NO_STACK`] until a list of this run alone was interned).
#[derive(Clone, Copy)]
struct Entry {
    bytes: (u32, u32),
    ids: (u32, u32),
    stack: u32,
}

const NO_STACK: u32 = u32::MAX;

/// A cached run as a frame list holds it: the run's index and the cache's generation, so that a
/// reference made before the cache was emptied finds nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunRef {
    entry: u32,
    generation: u32,
}

/// The cache: runs of memo references (their bytes without `MARK` and `APPENDS`) → frame ids.
#[derive(Default)]
pub(crate) struct Batches {
    table: HashTable<u32>,
    entries: Vec<Entry>,
    bytes: Vec<u8>,
    ids: Vec<u32>,
    /// The memo's count of frame overwrites when the entries were made.
    overwrites: u64,
    /// How often the cache was emptied (what a [`RunRef`] is checked against).
    generation: u32,
    full: bool,
}

impl Batches {
    /// Empties the cache when the memo's frame entries changed since it was filled.
    #[inline]
    pub fn check(&mut self, overwrites: u64) {
        if overwrites != self.overwrites {
            self.table.clear();
            self.entries.clear();
            self.bytes.clear();
            self.ids.clear();
            self.full = false;
            self.overwrites = overwrites;
            self.generation = self.generation.wrapping_add(1);
        }
    }

    fn span<T>(arena: &[T], (a, b): (u32, u32)) -> &[T] {
        arena.get(a as usize..b as usize).unwrap_or(&[])
    }

    /// The run `run` (hashed as `h`), if it was cached.
    #[inline]
    pub fn find(&self, h: u64, run: &[u8]) -> Option<RunRef> {
        let &i = self.table.find(h, |&i| {
            same_bytes(Self::span(&self.bytes, self.entries[i as usize].bytes), run)
        })?;
        Some(self.reference(i))
    }

    fn reference(&self, entry: u32) -> RunRef {
        RunRef {
            entry,
            generation: self.generation,
        }
    }

    fn entry(&self, r: RunRef) -> Option<&Entry> {
        (r.generation == self.generation)
            .then(|| self.entries.get(r.entry as usize))
            .flatten()
    }

    /// The frame ids of the run `r` (empty when the cache was emptied since).
    pub fn ids(&self, r: RunRef) -> &[u32] {
        self.entry(r)
            .map_or(&[][..], |e| Self::span(&self.ids, e.ids))
    }

    /// The stack id of a list holding exactly the frame ids of `r`, if one was recorded.
    pub fn stack(&self, r: RunRef) -> Option<u32> {
        self.entry(r).map(|e| e.stack).filter(|&s| s != NO_STACK)
    }

    /// Records that a list holding exactly the frame ids of `r` is stack `stack`.
    pub fn set_stack(&mut self, r: RunRef, stack: u32) {
        if r.generation == self.generation {
            if let Some(e) = self.entries.get_mut(r.entry as usize) {
                e.stack = stack;
            }
        }
    }

    /// The hash under which a run is cached.
    #[inline]
    pub fn hash(run: &[u8]) -> u64 {
        hash(run)
    }

    /// Caches `run` (hashed as `h`) as resolving to `ids`, unless the cache is full.
    pub fn insert(&mut self, h: u64, run: &[u8], ids: &[u32]) -> Option<RunRef> {
        if self.full {
            return None;
        }
        if self.bytes.len() + run.len() + 4 * (self.ids.len() + ids.len()) > MAX_BYTES {
            self.full = true;
            return None;
        }
        // Both arenas stay under MAX_BYTES, so their offsets fit in u32.
        let b0 = self.bytes.len() as u32;
        self.bytes.extend_from_slice(run);
        let i0 = self.ids.len() as u32;
        self.ids.extend_from_slice(ids);
        let i = self.entries.len() as u32;
        self.entries.push(Entry {
            bytes: (b0, self.bytes.len() as u32),
            ids: (i0, self.ids.len() as u32),
            stack: NO_STACK,
        });
        let Batches {
            table,
            entries,
            bytes,
            ..
        } = self;
        table.insert_unique(h, i, |&j| {
            hash(Self::span(bytes, entries[j as usize].bytes))
        });
        Some(self.reference(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids_of(c: &Batches, run: &[u8]) -> Option<Vec<u32>> {
        c.find(Batches::hash(run), run).map(|r| c.ids(r).to_vec())
    }

    #[test]
    fn runs_are_found_by_their_bytes_until_the_memo_changes() {
        let mut c = Batches::default();
        c.check(0);
        let run = b"h\x01j\x00\x01\x00\x00";
        assert_eq!(ids_of(&c, run), None);
        c.insert(Batches::hash(run), run, &[7, 9]);
        assert_eq!(ids_of(&c, run), Some(vec![7, 9]));
        // A run that is a prefix of a cached one is another run.
        assert_eq!(ids_of(&c, &run[..2]), None);
        c.check(0);
        assert_eq!(ids_of(&c, run), Some(vec![7, 9]));
        c.check(1);
        assert_eq!(ids_of(&c, run), None);
    }

    #[test]
    fn a_runs_stack_is_kept_until_the_cache_is_emptied() {
        let mut c = Batches::default();
        let (a, b) = (&b"h\x01h\x02"[..], &b"h\x02h\x01"[..]);
        let ra = c.insert(Batches::hash(a), a, &[1, 2]).unwrap();
        let rb = c.insert(Batches::hash(b), b, &[2, 1]).unwrap();
        assert_eq!((c.stack(ra), c.stack(rb)), (None, None));
        c.set_stack(ra, 5);
        assert_eq!((c.stack(ra), c.stack(rb)), (Some(5), None));
        assert_eq!(c.find(Batches::hash(a), a), Some(ra));
        // Emptied (a memo entry of a frame changed): old references find nothing, not even when
        // the same index is filled again with another run.
        c.check(1);
        let rb2 = c.insert(Batches::hash(b), b, &[2, 1]).unwrap();
        assert_ne!(rb2, ra);
        assert_eq!((c.stack(ra), c.ids(ra)), (None, &[][..]));
        c.set_stack(ra, 6);
        assert_eq!(c.stack(rb2), None);
    }

    #[test]
    fn a_full_cache_adds_nothing() {
        let mut c = Batches::default();
        let ids = vec![1u32; MAX_BYTES / 8];
        assert!(c.insert(Batches::hash(b"a"), b"a", &ids).is_some());
        assert_eq!(c.insert(Batches::hash(b"b"), b"b", &ids), None);
        assert!(ids_of(&c, b"a").is_some());
        assert_eq!(ids_of(&c, b"b"), None);
        assert!(c.bytes.len() + 4 * c.ids.len() <= MAX_BYTES);
    }
}
