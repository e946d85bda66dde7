//! The SOMAS dump parsers, one per dump family, over the shared line lexer: each turns the bytes
//! of one file into the columnar [`crate::somas::model::SomasModel`] (or, for task-info files, a
//! [`task_info::TaskInfo`]).
//!
//! - [`lex`]: lines, tab-separated fields, ids (`%12T`, `$3`), addresses, exact numbers;
//! - [`info`]: `SomasInfo()` dumps of v1.10 and later, and r1.x's (field layouts in [`r1`]);
//! - [`mem_info`]: the r1.x `somas_mem_info_*.ir` files;
//! - [`offline`]: the `*somas_offline_log_*.ir` files;
//! - [`cache_json`]: the `somas_graph_*.json` cache files;
//! - [`task_info`]: the `task_info_graph_*.ir` files (final device addresses).

pub mod cache_json;
pub mod info;
pub mod lex;
pub mod mem_info;
pub mod offline;
pub mod r1;
pub mod task_info;
