//! Pages on demand: aligned blocks read through a [`Source`] and kept in a bounded cache.
//!
//! A table scan touches its pages roughly in file order (SQLite appends pages as a table grows),
//! so reading a block of many pages at once turns thousands of small reads into a few large
//! ones — what a browser `File` (one `FileReaderSync` call per read) needs. The cache holds at
//! most [`CACHE_BLOCKS`] blocks, least recently used first out, so memory stays bounded whatever
//! the file size; pages are handed out as shared references to their block, never copied.

use super::DbError;
use crate::source::{Source, STOP_CHECK_BYTES};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Bytes read from the source at once (a multiple of every page size).
pub const BLOCK_BYTES: u64 = 1 << 20;

/// Blocks kept: 16 MiB of pages at most.
pub const CACHE_BLOCKS: usize = 16;

/// One page: its block and where in the block it starts.
#[derive(Clone)]
pub struct Page {
    block: Rc<[u8]>,
    start: usize,
    len: usize,
    /// Page number (1-based).
    pub number: u32,
    /// File offset of the page's first byte.
    pub offset: u64,
}

impl Page {
    /// The page's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.block
            .get(self.start..self.start + self.len)
            .unwrap_or(&[])
    }
}

struct Slot {
    index: u64,
    data: Rc<[u8]>,
    used: u64,
}

/// Reads pages of one database file.
pub struct Pager<'s> {
    src: &'s dyn Source,
    page_size: u32,
    page_count: u32,
    slots: RefCell<Vec<Slot>>,
    tick: Cell<u64>,
    read: Cell<u64>,
    /// Bytes of pages handed out so far (a cached page counts each time: it is parsed again).
    served: Cell<u64>,
    /// When `served` reaches this, the next page asks whether the load was stopped
    /// ([`Source::check_stop`], every [`STOP_CHECK_BYTES`]); never for a source that cannot be
    /// stopped (files on disk, bytes). Pages come from blocks of 1 MiB, mostly from the cache, so
    /// a read alone would see a stop only at the next block not yet cached.
    next_check: Cell<u64>,
    /// File offset of the last page handed out (where the reader is).
    last: Cell<u64>,
}

impl<'s> Pager<'s> {
    /// A pager over `src` with pages of `page_size` bytes, `page_count` of them.
    pub fn new(src: &'s dyn Source, page_size: u32, page_count: u32) -> Self {
        Pager {
            src,
            page_size,
            page_count,
            slots: RefCell::new(Vec::new()),
            tick: Cell::new(0),
            read: Cell::new(0),
            served: Cell::new(0),
            next_check: Cell::new(if src.may_stop() {
                STOP_CHECK_BYTES
            } else {
                u64::MAX
            }),
            last: Cell::new(0),
        }
    }

    /// File offset of the last page handed out (0 before the first).
    pub fn position(&self) -> u64 {
        self.last.get()
    }

    /// Pages in the database.
    pub fn page_count(&self) -> u32 {
        self.page_count
    }

    /// Bytes read from the source so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.get()
    }

    /// Page `number` (1-based); an error names the page and why it cannot be had.
    pub fn page(&self, number: u32) -> Result<Page, DbError> {
        if number == 0 || number > self.page_count {
            return Err(DbError::new(format!(
                "page number {number} is outside the database (pages 1 to {})",
                self.page_count
            )));
        }
        let ps = u64::from(self.page_size);
        let offset = u64::from(number - 1) * ps;
        let served = self.served.get() + ps;
        self.served.set(served);
        self.last.set(offset);
        if served >= self.next_check.get() {
            self.src.check_stop(offset)?;
            self.next_check.set(served + STOP_CHECK_BYTES);
        }
        let block_bytes = BLOCK_BYTES.max(ps);
        let index = offset / block_bytes;
        let t = self.tick.get() + 1;
        self.tick.set(t);
        let data = {
            let mut slots = self.slots.borrow_mut();
            match slots.iter_mut().find(|s| s.index == index) {
                Some(s) => {
                    s.used = t;
                    s.data.clone()
                }
                None => {
                    drop(slots);
                    let data = self.read_block(index, block_bytes)?;
                    let mut slots = self.slots.borrow_mut();
                    if slots.len() >= CACHE_BLOCKS {
                        if let Some(k) = (0..slots.len()).min_by_key(|&k| slots[k].used) {
                            slots.swap_remove(k);
                        }
                    }
                    slots.push(Slot {
                        index,
                        data: data.clone(),
                        used: t,
                    });
                    data
                }
            }
        };
        let start = (offset - index * block_bytes) as usize;
        let len = ps as usize;
        if data.len() < start + len {
            return Err(DbError::at(
                offset,
                format!(
                    "page {number} (bytes {offset}..{}) is past the end of the file ({} bytes): \
                     the file is truncated",
                    offset + ps,
                    self.src.len()
                ),
            ));
        }
        Ok(Page {
            block: data,
            start,
            len,
            number,
            offset,
        })
    }

    fn read_block(&self, index: u64, block_bytes: u64) -> Result<Rc<[u8]>, DbError> {
        let at = index * block_bytes;
        let bytes = self.src.read_range(at, block_bytes as usize)?;
        self.read.set(self.read.get() + bytes.len() as u64);
        Ok(Rc::from(bytes))
    }
}
