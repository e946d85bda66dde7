//! memlens: a memory analyzer for Ascend NPU training jobs.
//!
//! It reads torch_npu / MindSpore profiler output ([`profiler`]: `*_ascend_pt` / `*_ascend_ms` run
//! folders, whole multi-rank RL jobs) and MindSpore SOMAS static-graph memory plans, and answers:
//! where is the peak, who holds memory there, which allocation came from which source line, and
//! does any tensor overwrite another.
//!
//! The crate is one core with two thin front ends:
//! - the core ([`source`], [`diag`], [`input`], [`families`] and the analysis modules) knows
//!   nothing of the browser or the terminal: it reads bytes through [`source::Source`] and
//!   returns data;
//! - the `memlens` CLI (`src/bin/memlens`), the WebAssembly API (`src/wasm`, compiled only for
//!   `wasm32`) and the Python module (`src/python`, compiled only with the `python` feature) call
//!   the same functions, so the page, the CLI and Python give the same numbers.

pub mod bulk;
pub mod bytes;
pub mod chart;
pub mod compare;
pub mod diag;
pub mod export;
pub mod families;
pub mod frames;
pub mod input;
pub mod jsonscan;
pub mod profiler;
pub mod quote;
pub mod snapshot;
pub mod somas;
pub mod source;
pub mod sqlite;
#[cfg(not(target_arch = "wasm32"))]
pub mod summaries;
pub mod table;

#[cfg(all(feature = "python", not(target_arch = "wasm32")))]
pub mod python;
#[cfg(target_arch = "wasm32")]
pub mod wasm;
