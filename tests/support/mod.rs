//! A test source wrapper shared by the tests that watch how readers use their source: it states
//! a read size (as a browser `File` does) and runs a test's [`Hook`] at each read and each stop
//! question — `tests/read_size.rs` logs the reads, `tests/stop.rs` counts down to a stop.

use memlens::diag::Diagnostic;
use memlens::input::FileOpener;
use memlens::source::{BytesSource, Source, SourceError};

/// What a test does when its sources are read or asked about a stop. Every hook does nothing by
/// default: a source that cannot be stopped, reads passed through.
pub trait Hook {
    /// Before a read of `len` bytes of `name` at `offset`; an error fails the read.
    fn read(&self, name: &str, offset: u64, len: usize) -> Result<(), SourceError> {
        let _ = (name, offset, len);
        Ok(())
    }
    /// Whether the sources may be stopped ([`Source::may_stop`]).
    fn may_stop(&self) -> bool {
        false
    }
    /// A source's stop question ([`Source::check_stop`]) for `name` at `offset`.
    fn check_stop(&self, name: &str, offset: u64) -> Result<(), SourceError> {
        let _ = (name, offset);
        Ok(())
    }
    /// The opener's stop question ([`FileOpener::stopped`]).
    fn stopped(&self) -> bool {
        false
    }
}

/// A source that states a read size and runs `hook`.
pub struct Hooked<'a, H: Hook> {
    /// The bytes read.
    pub inner: Box<dyn Source + 'a>,
    /// The read size it states ([`Source::preferred_read`]).
    pub read: usize,
    /// The test's hooks.
    pub hook: &'a H,
}

/// `bytes` under `name`, stating `read`, running `hook`.
pub fn hooked<'a, H: Hook>(name: &str, bytes: &[u8], read: usize, hook: &'a H) -> Hooked<'a, H> {
    Hooked {
        inner: Box::new(BytesSource::new(name, bytes.to_vec())),
        read,
        hook,
    }
}

impl<H: Hook> Source for Hooked<'_, H> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn preferred_read(&self) -> usize {
        self.read
    }
    fn check_stop(&self, offset: u64) -> Result<(), SourceError> {
        self.hook.check_stop(self.inner.name(), offset)
    }
    fn may_stop(&self) -> bool {
        self.hook.may_stop()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, SourceError> {
        self.hook.read(self.inner.name(), offset, buf.len())?;
        self.inner.read_at(offset, buf)
    }
}

/// Opens the files of `inner` as [`Hooked`] sources; its own stop answer is the hook's.
pub struct HookedOpener<'a, H: Hook> {
    /// The files.
    pub inner: &'a dyn FileOpener,
    /// The read size each source states.
    pub read: usize,
    /// The test's hooks.
    pub hook: &'a H,
}

impl<H: Hook> FileOpener for HookedOpener<'_, H> {
    fn open(&self, path: &str) -> Result<Box<dyn Source + '_>, Diagnostic> {
        Ok(Box::new(Hooked {
            inner: self.inner.open(path)?,
            read: self.read,
            hook: self.hook,
        }))
    }
    fn stopped(&self) -> bool {
        self.hook.stopped()
    }
}
