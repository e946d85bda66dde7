//! Inputs, below every analysis family: the files of one analysis from any origin, archives
//! expanded once, classified once.
//!
//! - [`set`]: the [`InputSet`] — files by id over any [`crate::source::Source`] (disk, memory, a
//!   front end's [`HostFile`]), opened by path through [`FileOpener`];
//! - [`archive`]: `.zip` / `.tar` / `.tar.gz` expansion with bomb and path guards;
//! - [`classify`]: the family-free classification driver and the [`Recognizer`] each family
//!   implements; the families' list is `crate::families::RECOGNIZERS`;
//! - [`explain`]: what was looked for and found when the inputs hold nothing to analyse;
//! - [`roots`]: paths given on the command line that do not exist (native only);
//! - [`paths`]: the relative, `/`-separated paths every input is named by;
//! - [`lfs`]: Git LFS pointer files, which stand in for large files in clones made without LFS.
//!
//! Nothing here names a family: a new input format is one more recognizer in that list.

pub mod archive;
pub mod classify;
pub mod explain;
pub mod lfs;
pub mod paths;
#[cfg(not(target_arch = "wasm32"))]
pub mod roots;
pub mod set;

pub use classify::{
    Entry, FileView, Finding, Group, Head, Inventory, Recognizer, Unit, UnitBody, UnknownFile,
    UsedWith,
};
pub use explain::NothingToAnalyse;
pub use set::{CountingOpener, FileId, FileOpener, HostFile, InputSet, LoadStep};
