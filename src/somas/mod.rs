//! MindSpore SOMAS static-graph memory plans, in three groups: [`parse`] (a parser for every dump
//! family and version, and the task-info parser), [`model`] (the columnar model and its derived
//! relations), [`analysis`] (curves, peaks, ratios, frames, the overwrite check, the node / tensor
//! / address queries, the summary); beside them [`recognize`] (classification by content),
//! [`folder`] (the one dump a folder holds), [`tables`] and [`view`] (what the page asks) and [`generate`] (synthetic dumps).
//!
//! Entry points: [`load_dump`] (or [`parse_dump`] on bytes) gives a [`SomasModel`];
//! [`load_task_info`] a [`TaskInfo`]; [`analysis::analyze`] everything derived from them. The
//! formats, and the rules the analysis builds on, are described in `docs/formats-somas.md`.

pub mod analysis;
pub mod folder;
pub mod generate;
pub mod model;
pub mod parse;
pub mod recognize;
pub mod tables;
pub mod view;

// The modules of the three groups by their own names as well (`somas::lex`, `somas::queries`):
// the group says what kind of code a file holds, the name what it is about.
pub use analysis::{conflicts, queries, summary};
pub use model::derive;
pub use parse::{cache_json, info, lex, mem_info, offline, r1, task_info};

pub use analysis::{analyze, Analysis};
pub use model::{DumpFamily, Format, Lifelong, SomasModel, TensorKind};
pub use task_info::TaskInfo;

use crate::diag::Diagnostic;
use crate::source::{read_size, Progress, Source, DEFAULT_CHUNK};
use lex::ParseError;
use recognize::{sniff_somas, SomasFamily, SNIFF_BYTES};

/// Largest dump read into memory (the browser's wasm32 memory tops out at 4 GiB).
#[cfg(target_arch = "wasm32")]
pub const MAX_DUMP_BYTES: u64 = 2 << 30;
/// Largest dump read into memory.
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_DUMP_BYTES: u64 = 64 << 30;

/// Reads a whole source in chunks, reporting progress after each one.
pub fn read_source(
    source: &dyn Source,
    mut progress: Option<Progress<'_>>,
) -> Result<Vec<u8>, Diagnostic> {
    let total = source.len();
    if total > MAX_DUMP_BYTES {
        return Err(Diagnostic::error(
            source.name(),
            format!("file is {total} bytes, more than the {MAX_DUMP_BYTES} bytes memlens reads"),
        ));
    }
    // Read straight into the final buffer, chunk by chunk (one copy, progress after each).
    let mut buf = vec![0u8; total as usize];
    let mut done = 0usize;
    let chunk = read_size(source, DEFAULT_CHUNK);
    while done < buf.len() {
        let end = (done + chunk).min(buf.len());
        let n = source.read_at(done as u64, buf.get_mut(done..end).unwrap_or(&mut []))?;
        if n == 0 {
            break;
        }
        done += n;
        if let Some(p) = progress.as_mut() {
            p(done as u64, total);
        }
    }
    buf.truncate(done);
    Ok(buf)
}

/// Turns a parse error at a byte offset into a diagnostic with its line number.
pub fn diagnostic(file: &str, buf: &[u8], e: ParseError) -> Diagnostic {
    let mut d = Diagnostic::error(file, e.message)
        .at_line(lex::line_of(buf, e.byte))
        .at_byte(e.byte);
    if !e.field.is_empty() {
        d = d.in_field(e.field);
    }
    d
}

/// The first line of `buf` that is not blank, among those starting in its first 200 bytes,
/// quoted. The line is taken whole, to its line end, so that the quote counts what it leaves out
/// of a long one (the quote looks only at the bytes it shows).
fn first_line(buf: &[u8]) -> String {
    let mut at = 0;
    while at < buf.len().min(200) {
        let rest = buf.get(at..).unwrap_or(b"");
        let len = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let line = lex::strip_cr(rest.get(..len).unwrap_or(b""));
        if !lex::is_blank(line) {
            return crate::quote::quote(line, crate::quote::SHORT);
        }
        at += len + 1;
    }
    crate::quote::quote(b"", crate::quote::SHORT)
}

fn is_solver_log(buf: &[u8]) -> bool {
    let head = buf.get(..buf.len().min(256)).unwrap_or(b"");
    let trimmed = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .and_then(|i| head.get(i..))
        .unwrap_or(b"");
    trimmed.starts_with(b"tensor_id=")
        || (trimmed.starts_with(b"T ") && trimmed.get(2).is_some_and(u8::is_ascii_digit))
        || (trimmed.starts_with(b"t")
            && memchr::memchr(b'H', trimmed.get(..40).unwrap_or(b"")).is_some()
            && trimmed.get(1).is_some_and(u8::is_ascii_digit))
}

/// Parses a SOMAS dump of any family held in `buf` (the family and version come from the content).
pub fn parse_dump(file: &str, buf: &[u8]) -> Result<SomasModel, Diagnostic> {
    parse_dump_with(file, buf, None)
}

/// [`parse_dump`] for a load that may be stopped: the parsers ask `stop` (when given) every MiB
/// of lines and between their steps, and it is asked again before the derived relations are
/// built; its error ends the parse, never a partial model. A cache JSON file is parsed whole by
/// serde and asked only after it.
pub fn parse_dump_with(
    file: &str,
    buf: &[u8],
    stop: Option<lex::StopCheck<'_>>,
) -> Result<SomasModel, Diagnostic> {
    if buf.is_empty() {
        return Err(Diagnostic::error(
            file,
            "empty file (0 bytes): expected a SOMAS dump such as *_somas_tensor_offset_*.ir",
        ));
    }
    let head = buf.get(..buf.len().min(SNIFF_BYTES)).unwrap_or(buf);
    if head.contains(&0) {
        return Err(Diagnostic::error(
            file,
            "wrong file type: binary content, expected a SOMAS text dump such as *_somas_tensor_offset_*.ir",
        ));
    }
    if buf.len() as u64 <= crate::input::lfs::MAX_POINTER_BYTES {
        if let Some(size) = crate::input::lfs::pointer(buf) {
            return Err(Diagnostic::error(file, crate::input::lfs::said(size)));
        }
    }
    let parsed = if cache_json::looks_like(head) {
        cache_json::parse(buf, file)
    } else {
        check_lines(file, buf)?;
        match sniff_somas(head) {
            Some((SomasFamily::SomasInfo, _)) => {
                info::parse(buf, file, info::Dialect::V110, stop)
            }
            Some((SomasFamily::SomasInfoR1, _)) => {
                info::parse(buf, file, info::Dialect::R1, stop)
            }
            Some((SomasFamily::MemInfoR1, _)) => mem_info::parse(buf, file, stop),
            Some((SomasFamily::OfflineLog, _)) => offline::parse(buf, file, stop),
            // The sniffer never says cache (that is `looks_like` above); kept for completeness.
            Some((SomasFamily::CacheJson, _)) => cache_json::parse(buf, file),
            Some((SomasFamily::TaskInfo, _)) => {
                return Err(Diagnostic::error(
                    file,
                    "wrong file type: this is a task_info_graph file; give it with --task-info next to the SOMAS dump",
                )
                .at_line(1))
            }
            None if is_solver_log(buf) => {
                return Err(Diagnostic::error(
                    file,
                    "wrong file type: this is a SOMAS solver log (somas_solver_input/output or somas_tensor_relation), \
                     not a memory plan; open the *_somas_tensor_offset_*.ir dump",
                )
                .at_line(1))
            }
            None => {
                return Err(Diagnostic::error(
                    file,
                    format!(
                        "wrong file type: not a SOMAS dump (first line: {}); expected a *_somas_tensor_offset_*.ir dump \
                         or another SOMAS dump (somas_*_info, somas_mem_info, offline log, somas_graph_*.json)",
                        first_line(buf)
                    ),
                )
                .at_line(1))
            }
        }
    };
    finish_parse(file, buf, parsed, stop)
}

/// Parses `buf` as a dump of the given `family` without sniffing (fuzzing, callers that already
/// know the family); checks and derives exactly as [`parse_dump`] does.
pub fn parse_family(file: &str, buf: &[u8], family: SomasFamily) -> Result<SomasModel, Diagnostic> {
    check_lines(file, buf)?;
    let parsed = match family {
        SomasFamily::SomasInfo => info::parse(buf, file, info::Dialect::V110, None),
        SomasFamily::SomasInfoR1 => info::parse(buf, file, info::Dialect::R1, None),
        SomasFamily::MemInfoR1 => mem_info::parse(buf, file, None),
        SomasFamily::OfflineLog => offline::parse(buf, file, None),
        SomasFamily::TaskInfo => {
            return Err(Diagnostic::error(
                file,
                "wrong file type: a task_info_graph file is not a SOMAS dump",
            ))
        }
        SomasFamily::CacheJson => return parse_cache_json(file, buf),
    };
    finish_parse(file, buf, parsed, None)
}

/// Parses `buf` as a `somas_graph_*.json` cache file without sniffing (see [`parse_family`]).
pub fn parse_cache_json(file: &str, buf: &[u8]) -> Result<SomasModel, Diagnostic> {
    finish_parse(file, buf, cache_json::parse(buf, file), None)
}

fn finish_parse(
    file: &str,
    buf: &[u8],
    parsed: Result<SomasModel, ParseError>,
    stop: Option<lex::StopCheck<'_>>,
) -> Result<SomasModel, Diagnostic> {
    let mut model = parsed.map_err(|e| diagnostic(file, buf, e))?;
    lex::ask(stop, buf.len().saturating_sub(1)).map_err(|e| diagnostic(file, buf, e))?;
    // Curves have one entry per execution index: refuse indices that cannot be execution
    // indices of this graph rather than allocate for them.
    let max = u64::from(model.max_index());
    let bound = 4 * (model.nodes.len() as u64 + model.tensors.len() as u64) + 4096;
    if max > bound {
        return Err(Diagnostic::error(
            file,
            format!(
                "execution index {max} is far beyond the {} nodes and {} tensors of this dump: \
                 node ids and lifetimes must be execution indices",
                model.nodes.len(),
                model.tensors.len()
            ),
        ));
    }
    derive::derive(&mut model, buf);
    Ok(model)
}

/// Reads and parses a SOMAS dump from `source`.
pub fn load_dump(
    source: &dyn Source,
    progress: Option<Progress<'_>>,
) -> Result<SomasModel, Diagnostic> {
    let buf = read_source(source, progress)?;
    parse_dump(source.name(), &buf)
}

/// Parses a `task_info_graph_*.ir` file held in `buf`.
pub fn parse_task_info(file: &str, buf: &[u8]) -> Result<TaskInfo, Diagnostic> {
    parse_task_info_with(file, buf, None)
}

/// [`parse_task_info`] for a load that may be stopped (see [`parse_dump_with`]).
pub fn parse_task_info_with(
    file: &str,
    buf: &[u8],
    stop: Option<lex::StopCheck<'_>>,
) -> Result<TaskInfo, Diagnostic> {
    if buf.is_empty() {
        return Err(Diagnostic::error(
            file,
            "empty file (0 bytes): expected a task_info_graph_*.ir file",
        ));
    }
    let head = buf.get(..buf.len().min(SNIFF_BYTES)).unwrap_or(buf);
    match sniff_somas(head) {
        Some((SomasFamily::TaskInfo, _)) => {}
        _ => {
            return Err(Diagnostic::error(
                file,
                format!(
                    "wrong file type: expected a task_info_graph_*.ir file (records starting with op_name:), \
                     first line: {}",
                    first_line(buf)
                ),
            )
            .at_line(1))
        }
    }
    check_lines(file, buf)?;
    task_info::parse(buf, file, stop).map_err(|e| diagnostic(file, buf, e))
}

/// Refuses a text dump with a line longer than [`lex::MAX_LINE_BYTES`].
fn check_lines(file: &str, buf: &[u8]) -> Result<(), Diagnostic> {
    match lex::find_long_line(buf, lex::MAX_LINE_BYTES) {
        None => Ok(()),
        Some((at, len)) => Err(Diagnostic::error(
            file,
            format!(
                "line of {len} bytes, more than the {} bytes a line of a SOMAS dump or task-info \
                 file may have: not such a file, or a damaged one",
                lex::MAX_LINE_BYTES
            ),
        )
        .at_line(lex::line_of(buf, at as u64))
        .at_byte(at as u64)),
    }
}

/// Reads and parses a task-info file from `source`.
pub fn load_task_info(
    source: &dyn Source,
    progress: Option<Progress<'_>>,
) -> Result<TaskInfo, Diagnostic> {
    let buf = read_source(source, progress)?;
    parse_task_info(source.name(), &buf)
}
