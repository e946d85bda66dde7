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

use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Bytes plus frame ids (4 bytes each) the cache may hold: a few hundred distinct stacks of up
/// to a few hundred frames take well under a MiB; a file whose batches never repeat stops adding
/// at this bound instead of growing.
const MAX_BYTES: usize = 16 << 20;

fn hash(bytes: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x0ba7_c4e5).hash_one(bytes)
}

/// One cached run: its opcode bytes and the frame ids they resolved to, as spans of the arenas.
#[derive(Clone, Copy)]
struct Entry {
    bytes: (u32, u32),
    ids: (u32, u32),
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
        }
    }

    fn span<T>(arena: &[T], (a, b): (u32, u32)) -> &[T] {
        arena.get(a as usize..b as usize).unwrap_or(&[])
    }

    /// The frame ids of the run `run` (hashed as `h`), if it was cached.
    #[inline]
    pub fn find(&self, h: u64, run: &[u8]) -> Option<&[u32]> {
        let &i = self.table.find(h, |&i| {
            Self::span(&self.bytes, self.entries[i as usize].bytes) == run
        })?;
        Some(Self::span(&self.ids, self.entries[i as usize].ids))
    }

    /// The hash under which a run is cached.
    #[inline]
    pub fn hash(run: &[u8]) -> u64 {
        hash(run)
    }

    /// Caches `run` (hashed as `h`) as resolving to `ids`, unless the cache is full.
    pub fn insert(&mut self, h: u64, run: &[u8], ids: &[u32]) {
        if self.full {
            return;
        }
        if self.bytes.len() + run.len() + 4 * (self.ids.len() + ids.len()) > MAX_BYTES {
            self.full = true;
            return;
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_found_by_their_bytes_until_the_memo_changes() {
        let mut c = Batches::default();
        c.check(0);
        let run = b"h\x01j\x00\x01\x00\x00";
        assert_eq!(c.find(Batches::hash(run), run), None);
        c.insert(Batches::hash(run), run, &[7, 9]);
        assert_eq!(c.find(Batches::hash(run), run), Some(&[7, 9][..]));
        // A run that is a prefix of a cached one is another run.
        assert_eq!(c.find(Batches::hash(&run[..2]), &run[..2]), None);
        c.check(0);
        assert_eq!(c.find(Batches::hash(run), run), Some(&[7, 9][..]));
        c.check(1);
        assert_eq!(c.find(Batches::hash(run), run), None);
    }

    #[test]
    fn a_full_cache_adds_nothing() {
        let mut c = Batches::default();
        let ids = vec![1u32; MAX_BYTES / 8];
        c.insert(Batches::hash(b"a"), b"a", &ids);
        c.insert(Batches::hash(b"b"), b"b", &ids);
        assert!(c.find(Batches::hash(b"a"), b"a").is_some());
        assert_eq!(c.find(Batches::hash(b"b"), b"b"), None);
        assert!(c.bytes.len() + 4 * c.ids.len() <= MAX_BYTES);
    }
}
