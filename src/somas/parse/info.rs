//! Parser of the `SomasInfo()` dumps: v1.10+ (`*_somas_tensor_offset_*.ir` and the stage dumps)
//! and r1.x (`somas_*_info_*.ir`; the r1.x field layouts are in [`crate::somas::r1`]).
//!
//! Sections are found by their header lines, never by counting lines. The two big sections
//! (tensors and nodes) are cut at line boundaries and parsed in parallel chunks; each chunk keeps
//! only numbers and the spans and hashes of names, and the names are interned afterwards in one
//! sequential pass, so the only allocations are the model's own columns.
//!
//! Why one file of ~1,070 lines: the v1.10+ and r1.x dumps are one grammar (the same sections,
//! header lines and id forms, r1.x differing in field layouts only), and its section parsers share
//! the line context, the id tables and the parallel chunking; split, each part would need the
//! others' private state.

use crate::somas::lex::{self, IdKind, Lines, ParseError, StopCheck};
use crate::somas::model::{
    name_hash, Controls, Csr, DumpFamily, Format, Lifelong, Nodes, Params, SomasModel, TensorKind,
    Tensors, INPUT_PARAM, NONE,
};
use crate::somas::r1;
use crate::source::STOP_CHECK_BYTES;
use rayon::prelude::*;

/// Which writer produced the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// v1.10 and later.
    V110,
    /// r1.x (about r1.2 to r1.8).
    R1,
}

/// The sections of a SomasInfo dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Parameters,
    Tensors,
    Nodes,
    Unions,
    OriginalContiguous,
    ProcessedContiguous,
    StreamGroups,
    MergedBlocks,
    RefNodes,
    Unknown,
}

const HEADERS: [(&[u8], Section); 9] = [
    (b"All Parameters:", Section::Parameters),
    (b"All Tensors:", Section::Tensors),
    (b"All Nodes:", Section::Nodes),
    (b"All Union Tensors Info:", Section::Unions),
    (
        b"All Original Contiguous Tensors Info:",
        Section::OriginalContiguous,
    ),
    (
        b"All Processed Contiguous Tensors Info:",
        Section::ProcessedContiguous,
    ),
    (b"All Stream Groups:", Section::StreamGroups),
    (b"All Merged Blocks:", Section::MergedBlocks),
    (b"All Ref Node Info:", Section::RefNodes),
];

const TOTAL_PREFIX: &[u8] = b"Total Memory Size after reused:";

/// Sections below this size are parsed in one piece; above, in chunks of about this size.
const CHUNK_BYTES: usize = 4 << 20;

#[derive(Debug, Clone, Copy)]
struct Span {
    section: Section,
    body: usize,
    end: usize,
}

/// Finds section headers: lines starting with `All ` and the total line.
fn find_sections(buf: &[u8]) -> (Vec<Span>, Option<(usize, usize)>) {
    let mut starts: Vec<(usize, Section)> = Vec::new();
    let mut total = None;
    let consider = |pos: usize, starts: &mut Vec<(usize, Section)>| {
        let line_end = buf
            .get(pos..)
            .and_then(|r| memchr::memchr(b'\n', r))
            .map_or(buf.len(), |i| pos + i);
        let line = lex::strip_cr(buf.get(pos..line_end).unwrap_or(b""));
        let section = HEADERS
            .iter()
            .find(|(h, _)| line.starts_with(h))
            .map_or(Section::Unknown, |(_, s)| *s);
        if section != Section::Unknown || line.ends_with(b":") {
            starts.push((pos, section));
        }
    };
    if buf.starts_with(b"All ") {
        consider(0, &mut starts);
    }
    // Header search over the whole file, in parallel pieces (a match may straddle a cut, so
    // each piece looks a few bytes past its end and keeps only matches that start inside it).
    const PAT: &[u8] = b"\nAll ";
    let pieces = rayon::current_num_threads().max(1) * 2;
    let step = buf.len() / pieces + 1;
    let hits: Vec<Vec<usize>> = (0..pieces)
        .into_par_iter()
        .map(|k| {
            let start = (k * step).min(buf.len());
            let end = ((k + 1) * step).min(buf.len());
            let look = (end + PAT.len() - 1).min(buf.len());
            let finder = memchr::memmem::Finder::new(PAT);
            finder
                .find_iter(buf.get(start..look).unwrap_or(b""))
                .map(|i| start + i)
                .filter(|&i| i < end)
                .collect()
        })
        .collect();
    for i in hits.into_iter().flatten() {
        consider(i + 1, &mut starts);
    }
    let total_at = if buf.starts_with(TOTAL_PREFIX) {
        Some(0)
    } else {
        let mut pat = Vec::with_capacity(TOTAL_PREFIX.len() + 1);
        pat.push(b'\n');
        pat.extend_from_slice(TOTAL_PREFIX);
        memchr::memmem::rfind(buf, &pat).map(|i| i + 1)
    };
    if let Some(t) = total_at {
        let line_end = buf
            .get(t..)
            .and_then(|r| memchr::memchr(b'\n', r))
            .map_or(buf.len(), |i| t + i);
        total = Some((t, line_end));
    }
    let mut spans = Vec::with_capacity(starts.len());
    for (k, &(pos, section)) in starts.iter().enumerate() {
        let body = buf
            .get(pos..)
            .and_then(|r| memchr::memchr(b'\n', r))
            .map_or(buf.len(), |i| pos + i + 1);
        let mut end = starts.get(k + 1).map_or(buf.len(), |s| s.0);
        if let Some((t, _)) = total {
            if t >= body && t < end {
                end = t;
            }
        }
        spans.push(Span { section, body, end });
    }
    (spans, total)
}

/// Parses `ranges` of `buf` with `f`, in parallel, results in order; the first error in order
/// wins. With a stop question, the ranges go a round at a time (one per thread) with a question
/// before each round on the calling thread (the source's thread: a browser `File` answers there
/// only); without one, all at once as before.
fn par_ranges<T: Send>(
    ranges: &[(usize, usize)],
    stop: Option<StopCheck<'_>>,
    f: impl Fn(usize, usize) -> Result<T, ParseError> + Sync,
) -> Result<Vec<T>, ParseError> {
    let Some(check) = stop else {
        let all: Vec<Result<T, ParseError>> = ranges.par_iter().map(|&(s, e)| f(s, e)).collect();
        return all.into_iter().collect();
    };
    let mut out = Vec::with_capacity(ranges.len());
    for round in ranges.chunks(rayon::current_num_threads().max(1)) {
        check(round[0].0 as u64)?;
        let got: Vec<Result<T, ParseError>> = round.par_iter().map(|&(s, e)| f(s, e)).collect();
        for r in got {
            out.push(r?);
        }
    }
    Ok(out)
}

/// The ranges a section is parsed in: a few per thread; with a stop question, about
/// [`STOP_CHECK_BYTES`] each, so a question comes every MiB per thread.
fn section_ranges(
    buf: &[u8],
    start: usize,
    end: usize,
    stop: Option<StopCheck<'_>>,
) -> Vec<(usize, usize)> {
    match stop {
        None => lex::split_at_lines(
            buf,
            start,
            end,
            rayon::current_num_threads() * 4,
            CHUNK_BYTES,
        ),
        Some(_) => lex::split_at_lines(buf, start, end, usize::MAX, STOP_CHECK_BYTES as usize),
    }
}

/// Parses a whole SomasInfo dump held in `buf`, asking `stop` (when given) about every MiB of
/// lines and between the steps, and ending with its error once the load was stopped.
pub fn parse(
    buf: &[u8],
    file: &str,
    dialect: Dialect,
    stop: Option<StopCheck<'_>>,
) -> Result<SomasModel, ParseError> {
    let (spans, total) = find_sections(buf);
    let find = |s: Section| spans.iter().find(|sp| sp.section == s).copied();
    let family = match dialect {
        Dialect::V110 => DumpFamily::SomasInfo,
        Dialect::R1 => DumpFamily::SomasInfoR1,
    };
    let last_line = last_line_start(buf);
    let truncated = |what: &str| {
        ParseError::new(
            last_line as u64,
            "",
            format!("truncated file: it ends before {what}"),
        )
    };
    let tensors_span =
        find(Section::Tensors).ok_or_else(|| truncated("the \"All Tensors:\" section"))?;
    let nodes_span = find(Section::Nodes).ok_or_else(|| truncated("the \"All Nodes:\" section"))?;
    match dialect {
        Dialect::V110 if total.is_none() => return Err(truncated(
            "the \"Total Memory Size after reused:\" line that closes every v1.10+ SomasInfo dump",
        )),
        Dialect::R1 if find(Section::StreamGroups).is_none() => {
            return Err(truncated(
                "the \"All Stream Groups:\" section that every r1.x SomasInfo dump has",
            ))
        }
        _ => {}
    }

    let mut model = SomasModel::empty(
        file,
        Format {
            family,
            version: String::new(),
        },
    );

    // Parameters (small: sequential).
    if let Some(sp) = find(Section::Parameters) {
        lex::ask(stop, sp.body)?;
        let (params, spans, bytes) = parse_params(buf, sp, dialect)?;
        model.params = params;
        for (i, (s, e)) in spans.into_iter().enumerate() {
            let bytes = buf.get(s..e).unwrap_or(b"");
            let id = model.names.intern_hashed(name_hash(bytes), bytes);
            if let Some(slot) = model.params.name.get_mut(i) {
                *slot = id;
            }
        }
        sort_params(&mut model.params, &bytes, buf)?;
    }

    // Tensors (parallel chunks).
    let ranges = section_ranges(buf, tensors_span.body, tensors_span.end, stop);
    let chunks: Vec<TensorChunk> =
        par_ranges(&ranges, stop, |s, e| parse_tensor_chunk(buf, s, e, dialect))?;
    let nt: usize = chunks.iter().map(|c| c.tensors.id.len()).sum();
    let nc: usize = chunks.iter().map(|c| c.controls.id.len()).sum();
    let mut tensors = Tensors::default();
    let mut controls = Controls::default();
    reserve_tensors(&mut tensors, nt, dialect == Dialect::R1);
    controls.id.reserve(nc);
    controls.start.reserve(nc);
    controls.end.reserve(nc);
    controls.name.reserve(nc);
    // Until names are resolved, the name column holds the position of the row's name span.
    let mut t_spans: Vec<(usize, usize)> = Vec::with_capacity(nt);
    let mut c_spans: Vec<(usize, usize)> = Vec::with_capacity(nc);
    let mut saw_ct = false;
    let mut saw_t_control = false;
    let mut slash = false;
    for c in chunks {
        saw_ct |= c.saw_ct;
        saw_t_control |= c.saw_t_control;
        slash |= c.slash;
        let base = t_spans.len() as u32;
        tensors
            .name
            .extend((0..c.t_spans.len() as u32).map(|i| base + i));
        t_spans.extend_from_slice(&c.t_spans);
        let base = c_spans.len() as u32;
        controls
            .name
            .extend((0..c.c_spans.len() as u32).map(|i| base + i));
        c_spans.extend_from_slice(&c.c_spans);
        let t = c.tensors;
        tensors.id.extend_from_slice(&t.id);
        tensors.aligned.extend_from_slice(&t.aligned);
        tensors.original.extend_from_slice(&t.original);
        tensors.offset.extend_from_slice(&t.offset);
        tensors.addr.extend_from_slice(&t.addr);
        tensors.kind.extend_from_slice(&t.kind);
        tensors.lifelong.extend_from_slice(&t.lifelong);
        tensors.start.extend_from_slice(&t.start);
        tensors.end.extend_from_slice(&t.end);
        tensors.byte.extend_from_slice(&t.byte);
        controls.id.extend_from_slice(&c.controls.id);
        controls.start.extend_from_slice(&c.controls.start);
        controls.end.extend_from_slice(&c.controls.end);
    }
    lex::ask(stop, tensors_span.end)?;
    sort_tensors(&mut tensors, buf)?;
    sort_controls(&mut controls);
    model.tensors = tensors;
    model.controls = controls;

    // Nodes (parallel chunks), resolving ids to rows as they are read.
    let ranges = section_ranges(buf, nodes_span.body, nodes_span.end, stop);
    let ctx = NodeCtx {
        tensor_ids: &model.tensors.id,
        param_ids: &model.params.id,
        control_ids: &model.controls.id,
        dialect,
    };
    let chunks: Vec<NodeChunk> =
        par_ranges(&ranges, stop, |s, e| parse_node_chunk(buf, s, e, &ctx))?;
    let nn: usize = chunks.iter().map(|c| c.nodes.index.len()).sum();
    let mut nodes = Nodes::default();
    nodes.name.reserve(nn);
    nodes.index.reserve(nn);
    nodes.kind.reserve(nn);
    nodes.stream.reserve(nn);
    nodes.byte.reserve(nn);
    let mut node_spans: Vec<(usize, usize)> = Vec::with_capacity(nn);
    model.names.reserve(nn);
    for c in chunks {
        slash |= c.slash;
        for (h, (s, e)) in c.names.iter().zip(c.spans.iter()) {
            let bytes = buf.get(*s..*e).unwrap_or(b"");
            nodes.name.push(model.names.intern_hashed(*h, bytes));
        }
        node_spans.extend_from_slice(&c.spans);
        nodes.index.extend_from_slice(&c.nodes.index);
        nodes.kind.extend_from_slice(&c.nodes.kind);
        nodes.stream.extend_from_slice(&c.nodes.stream);
        nodes.byte.extend_from_slice(&c.nodes.byte);
        nodes.inputs.append(&c.nodes.inputs);
        nodes.outputs.append(&c.nodes.outputs);
        nodes.workspace.append(&c.nodes.workspace);
        nodes.ctrl_inputs.append(&c.nodes.ctrl_inputs);
        nodes.ctrl_outputs.append(&c.nodes.ctrl_outputs);
    }
    lex::ask(stop, nodes_span.end)?;
    check_node_order(&nodes, buf)?;
    model.nodes = nodes;

    // Tensor and control names are their producer's name in practice: compare bytes with the
    // node at life_start (in parallel) and intern only the ones that differ.
    let names = producer_names(
        buf,
        &t_spans,
        &model.tensors.name,
        &model.tensors.start,
        &model.nodes,
        &node_spans,
    );
    model.tensors.name = intern_rest(&mut model.names, buf, &t_spans, &model.tensors.name, names);
    let names = producer_names(
        buf,
        &c_spans,
        &model.controls.name,
        &model.controls.start,
        &model.nodes,
        &node_spans,
    );
    model.controls.name = intern_rest(&mut model.names, buf, &c_spans, &model.controls.name, names);

    // Trailer sections (small: sequential).
    for sp in &spans {
        lex::ask(stop, sp.body)?;
        match sp.section {
            Section::Unions => model.unions = parse_id_lists(buf, *sp, &model.tensors.id)?,
            Section::RefNodes => {
                let lists = parse_id_lists(buf, *sp, &model.tensors.id)?;
                model.unions.append(&lists);
            }
            Section::OriginalContiguous => {
                model.contiguous = parse_id_lists(buf, *sp, &model.tensors.id)?
            }
            Section::ProcessedContiguous => {
                model.contiguous_processed = parse_id_lists(buf, *sp, &model.tensors.id)?
            }
            Section::StreamGroups => model.stream_groups = parse_stream_groups(buf, *sp)?,
            Section::MergedBlocks => model.merged_blocks = parse_merged_blocks(buf, *sp)?,
            _ => {}
        }
    }
    if let Some((t, e)) = total {
        let line = lex::strip_cr(buf.get(t..e).unwrap_or(b""));
        let value = line.get(TOTAL_PREFIX.len()..).unwrap_or(b"");
        let v = lex::parse_u64(value.trim_ascii()).ok_or_else(|| {
            ParseError::new(
                t as u64,
                "Total Memory Size after reused",
                format!(
                    "expected a byte count after the colon, found {}",
                    crate::quote::quote(value, crate::quote::SHORT)
                ),
            )
        })?;
        model.reused_total = Some(v);
    }

    match dialect {
        Dialect::V110 => {
            model.format.version = if slash {
                "v2.4+"
            } else if saw_ct {
                "v2.0-2.3"
            } else if saw_t_control {
                "v1.10"
            } else {
                "v1.10-2.3"
            }
            .to_string();
            model.placed = model.reused_total.unwrap_or(0) > 0;
            if !model.placed {
                model.notes.push(
                    "offsets are not solved yet in this stage dump (Total Memory Size after reused is 0): \
                     curves are computed, the overwrite check is skipped; open the *_somas_tensor_offset_* dump"
                        .to_string(),
                );
            }
        }
        Dialect::R1 => {
            model.format.version = "r1.x".to_string();
            r1::finish(&mut model);
        }
    }
    Ok(model)
}

fn reserve_tensors(t: &mut Tensors, n: usize, with_addr: bool) {
    t.id.reserve(n);
    t.aligned.reserve(n);
    t.original.reserve(n);
    t.offset.reserve(n);
    if with_addr {
        t.addr.reserve(n);
    }
    t.kind.reserve(n);
    t.lifelong.reserve(n);
    t.start.reserve(n);
    t.end.reserve(n);
    t.name.reserve(n);
    t.byte.reserve(n);
}

/// For each row (name span at `pos[row]`), the name id of the node at execution index
/// `start[row]` when the bytes are equal, else [`NONE`].
fn producer_names(
    buf: &[u8],
    spans: &[(usize, usize)],
    pos: &[u32],
    start: &[u32],
    nodes: &Nodes,
    node_spans: &[(usize, usize)],
) -> Vec<u32> {
    pos.par_iter()
        .zip(start.par_iter())
        .map(|(&p, &s)| {
            let Some(&(a, b)) = spans.get(p as usize) else {
                return NONE;
            };
            let Some(nr) = nodes.row_of_index(s) else {
                return NONE;
            };
            let Some(&(c, d)) = node_spans.get(nr as usize) else {
                return NONE;
            };
            if buf.get(a..b) == buf.get(c..d) {
                nodes.name.get(nr as usize).copied().unwrap_or(NONE)
            } else {
                NONE
            }
        })
        .collect()
}

/// Completes [`producer_names`] by interning the names that matched no producer.
fn intern_rest(
    names: &mut crate::somas::model::Names,
    buf: &[u8],
    spans: &[(usize, usize)],
    pos: &[u32],
    mut ids: Vec<u32>,
) -> Vec<u32> {
    for (id, &p) in ids.iter_mut().zip(pos.iter()) {
        if *id == NONE {
            let bytes = spans
                .get(p as usize)
                .and_then(|&(a, b)| buf.get(a..b))
                .unwrap_or(b"");
            *id = names.intern_hashed(name_hash(bytes), bytes);
        }
    }
    ids
}

fn last_line_start(buf: &[u8]) -> usize {
    let trimmed = buf
        .iter()
        .rposition(|b| *b != b'\n' && *b != b'\r')
        .map_or(0, |i| i + 1);
    buf.get(..trimmed)
        .and_then(|b| memchr::memrchr(b'\n', b))
        .map_or(0, |i| i + 1)
}

fn is_column_header(line: &[u8]) -> bool {
    line.starts_with(b"index:") || line.starts_with(b"start_offset:")
}

fn wrong_count(
    at: usize,
    what: &str,
    expected: usize,
    layout: &str,
    found: usize,
    line: &[u8],
) -> ParseError {
    ParseError::new(
        at as u64,
        "",
        format!(
            "expected {expected} TAB-separated fields in a {what} line ({layout}), found {found}: {}",
            crate::quote::quote(line, crate::quote::SHORT)
        ),
    )
}

fn bad(at: usize, field: &str, expected: &str, found: &[u8]) -> ParseError {
    ParseError::new(
        at as u64,
        field,
        format!(
            "expected {expected}, found {}",
            crate::quote::quote(found, crate::quote::SHORT)
        ),
    )
}

/// Parameters, the byte spans of their names, and the byte offsets of their lines.
type ParamsRead = (Params, Vec<(usize, usize)>, Vec<u64>);

fn parse_params(buf: &[u8], sp: Span, dialect: Dialect) -> Result<ParamsRead, ParseError> {
    let mut p = Params::default();
    let mut spans = Vec::new();
    let mut bytes = Vec::new();
    let base = buf.as_ptr() as usize;
    let (expected, layout) = match dialect {
        Dialect::V110 => (4, "%id, #size, source node name, node out index"),
        Dialect::R1 => (5, r1::PARAM_LAYOUT),
    };
    for (at, line) in Lines::new(buf, sp.body, sp.end) {
        if lex::is_blank(line) || is_column_header(line) {
            continue;
        }
        let mut f: [&[u8]; 6] = [b""; 6];
        let n = lex::split_tabs(line, &mut f);
        if n != expected {
            return Err(wrong_count(at, "parameter", expected, layout, n, line));
        }
        let (id, kind) = lex::id_sigil(f[0]).ok_or_else(|| bad(at, "index", "%<n>P", f[0]))?;
        if kind != IdKind::Param {
            return Err(bad(at, "index", "%<n>P", f[0]));
        }
        let size = lex::size_sigil(f[1]).ok_or_else(|| bad(at, "size", "#<bytes>S", f[1]))?;
        let (name, out) = if dialect == Dialect::R1 {
            let addr = lex::addr_sigil(f[2])
                .ok_or_else(|| bad(at, "start_addr", "&0 or &0x<hex>", f[2]))?;
            p.addr.push(addr);
            (f[3], f[4])
        } else {
            (f[2], f[3])
        };
        let out = lex::parse_u32(out).ok_or_else(|| bad(at, "node out index", "a number", out))?;
        p.id.push(id);
        p.size.push(size);
        p.out_index.push(out);
        p.name.push(0);
        let s = name.as_ptr() as usize - base;
        spans.push((s, s + name.len()));
        bytes.push(at as u64);
    }
    Ok((p, spans, bytes))
}

#[derive(Default)]
struct TensorChunk {
    tensors: Tensors,
    controls: Controls,
    t_spans: Vec<(usize, usize)>,
    c_spans: Vec<(usize, usize)>,
    saw_ct: bool,
    saw_t_control: bool,
    slash: bool,
}

fn parse_tensor_chunk(
    buf: &[u8],
    start: usize,
    end: usize,
    dialect: Dialect,
) -> Result<TensorChunk, ParseError> {
    let mut c = TensorChunk::default();
    // Tensor lines are at least ~40 bytes: reserving up front avoids regrowing the columns.
    reserve_tensors(&mut c.tensors, (end - start) / 48, dialect == Dialect::R1);
    c.t_spans.reserve((end - start) / 48);
    let base = buf.as_ptr() as usize;
    let (expected, layout) = match dialect {
        Dialect::V110 => (
            9,
            "%id, #aligned_size, #original_size, &offset, type, lifelong, life_start, life_end, source node name",
        ),
        Dialect::R1 => (10, r1::TENSOR_LAYOUT),
    };
    for (at, line) in Lines::new(buf, start, end) {
        if lex::is_blank(line) || is_column_header(line) {
            continue;
        }
        let mut f: [&[u8]; 11] = [b""; 11];
        let n = lex::split_tabs(line, &mut f);
        if n != expected {
            return Err(wrong_count(at, "tensor", expected, layout, n, line));
        }
        let (id, kind) =
            lex::id_sigil(f[0]).ok_or_else(|| bad(at, "index", "%<n>T or %<n>CT", f[0]))?;
        if kind == IdKind::Param {
            return Err(bad(at, "index", "%<n>T or %<n>CT", f[0]));
        }
        let aligned =
            lex::size_sigil(f[1]).ok_or_else(|| bad(at, "aligned_size", "#<bytes>S", f[1]))?;
        let original =
            lex::size_sigil(f[2]).ok_or_else(|| bad(at, "original_size", "#<bytes>S", f[2]))?;
        let offset = lex::offset_sigil(f[3]).ok_or_else(|| bad(at, "offset", "&<bytes>", f[3]))?;
        // r1.x has one more column (the address) before the type.
        let k = if dialect == Dialect::R1 { 1 } else { 0 };
        let ty_field = f[4 + k];
        let ty = TensorKind::parse(ty_field).ok_or_else(|| {
            bad(
                at,
                "type",
                "a tensor type (Common, Workspace, OutputOnly, GraphOutput, GraphInput, SummaryInput, Union, Control, …)",
                ty_field,
            )
        })?;
        let ll_field = f[5 + k];
        let lifelong = match dialect {
            Dialect::V110 => Lifelong::parse(ll_field).ok_or_else(|| {
                bad(
                    at,
                    "lifelong",
                    "LifeLongNone, LifeLongGraphAll, LifeLongGraphStart or LifeLongGraphEnd",
                    ll_field,
                )
            })?,
            Dialect::R1 => match ll_field {
                b"1" => Lifelong::GraphAll,
                b"0" => Lifelong::None,
                _ => return Err(bad(at, "lifelong", "0 or 1", ll_field)),
            },
        };
        let s_field = f[6 + k];
        let e_field = f[7 + k];
        let life_start = lex::parse_u32(s_field)
            .ok_or_else(|| bad(at, "life_start", "a node index", s_field))?;
        let life_end =
            lex::parse_u32(e_field).ok_or_else(|| bad(at, "life_end", "a node index", e_field))?;
        let name = f[8 + k];
        if name.contains(&b'/') {
            c.slash = true;
        }
        let s = name.as_ptr() as usize - base;
        let is_control = kind == IdKind::Control || ty == TensorKind::Control;
        if is_control {
            if kind == IdKind::Control {
                c.saw_ct = true;
            } else {
                c.saw_t_control = true;
            }
            c.controls.id.push(id);
            c.controls.start.push(life_start);
            c.controls.end.push(life_end);
            c.c_spans.push((s, s + name.len()));
        } else {
            if dialect == Dialect::R1 {
                let addr =
                    lex::addr_sigil(f[4]).ok_or_else(|| bad(at, "addr", "&0 or &0x<hex>", f[4]))?;
                c.tensors.addr.push(addr);
            }
            c.tensors.id.push(id);
            c.tensors.aligned.push(aligned);
            c.tensors.original.push(original);
            c.tensors.offset.push(offset);
            c.tensors.kind.push(ty);
            c.tensors.lifelong.push(lifelong);
            c.tensors.start.push(life_start);
            c.tensors.end.push(life_end);
            c.tensors.byte.push(at as u64);
            c.t_spans.push((s, s + name.len()));
        }
    }
    Ok(c)
}

/// Order of rows by id: `Ok(None)` when already strictly ascending, `Ok(Some(perm))` otherwise,
/// `Err((first, second))` (positions) on a duplicate id.
fn order_by_id(ids: &[u32]) -> Result<Option<Vec<u32>>, (usize, usize)> {
    if ids.windows(2).all(|w| w[0] < w[1]) {
        return Ok(None);
    }
    let mut perm: Vec<u32> = (0..ids.len() as u32).collect();
    perm.sort_by_key(|&i| (ids.get(i as usize).copied().unwrap_or(0), i));
    for w in perm.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if ids.get(a) == ids.get(b) {
            return Err((a.min(b), a.max(b)));
        }
    }
    Ok(Some(perm))
}

/// Reorders `v` by `perm` (`v'[i] = v[perm[i]]`); a column of another length is left alone.
pub(crate) fn permute<T: Copy>(v: &mut Vec<T>, perm: &[u32]) {
    if v.len() != perm.len() {
        return;
    }
    let out: Vec<T> = perm
        .iter()
        .filter_map(|&i| v.get(i as usize).copied())
        .collect();
    *v = out;
}

fn duplicate(buf: &[u8], what: &str, sigil: &str, id: u32, first: u64, second: u64) -> ParseError {
    ParseError::new(
        second,
        "index",
        format!(
            "duplicate {what} id %{id}{sigil}: already defined at line {}",
            lex::line_of(buf, first)
        ),
    )
}

/// Sorts the tensor rows by id (a no-op for the usual dense, ordered ids); returns the permutation
/// applied, so callers can reorder columns of their own. A duplicate id is an error.
pub(crate) fn sort_tensors(t: &mut Tensors, buf: &[u8]) -> Result<Option<Vec<u32>>, ParseError> {
    match order_by_id(&t.id) {
        Ok(None) => Ok(None),
        Ok(Some(perm)) => {
            permute(&mut t.id, &perm);
            permute(&mut t.aligned, &perm);
            permute(&mut t.original, &perm);
            permute(&mut t.offset, &perm);
            permute(&mut t.addr, &perm);
            permute(&mut t.kind, &perm);
            permute(&mut t.lifelong, &perm);
            permute(&mut t.start, &perm);
            permute(&mut t.end, &perm);
            permute(&mut t.name, &perm);
            permute(&mut t.byte, &perm);
            Ok(Some(perm))
        }
        Err((a, b)) => {
            let id = t.id.get(a).copied().unwrap_or(0);
            let fa = t.byte.get(a).copied().unwrap_or(0);
            let fb = t.byte.get(b).copied().unwrap_or(0);
            Err(duplicate(buf, "tensor", "T", id, fa.min(fb), fa.max(fb)))
        }
    }
}

fn sort_controls(c: &mut Controls) {
    // Control ids only name the edges; a duplicate is harmless for memory analysis, so the first
    // definition is kept.
    if c.id.windows(2).all(|w| w[0] < w[1]) {
        return;
    }
    let mut perm: Vec<u32> = (0..c.id.len() as u32).collect();
    perm.sort_by_key(|&i| (c.id.get(i as usize).copied().unwrap_or(0), i));
    perm.dedup_by_key(|i| c.id.get(*i as usize).copied().unwrap_or(0));
    let pick = |v: &Vec<u32>| -> Vec<u32> {
        perm.iter()
            .filter_map(|&i| v.get(i as usize).copied())
            .collect()
    };
    c.id = pick(&c.id);
    c.start = pick(&c.start);
    c.end = pick(&c.end);
    c.name = pick(&c.name);
}

fn sort_params(p: &mut Params, bytes: &[u64], buf: &[u8]) -> Result<(), ParseError> {
    match order_by_id(&p.id) {
        Ok(None) => Ok(()),
        Ok(Some(perm)) => {
            permute(&mut p.id, &perm);
            permute(&mut p.size, &perm);
            permute(&mut p.name, &perm);
            permute(&mut p.out_index, &perm);
            permute(&mut p.addr, &perm);
            Ok(())
        }
        Err((a, b)) => {
            let id = p.id.get(a).copied().unwrap_or(0);
            let fa = bytes.get(a).copied().unwrap_or(0);
            let fb = bytes.get(b).copied().unwrap_or(0);
            Err(duplicate(buf, "parameter", "P", id, fa.min(fb), fa.max(fb)))
        }
    }
}

struct NodeCtx<'a> {
    tensor_ids: &'a [u32],
    param_ids: &'a [u32],
    control_ids: &'a [u32],
    dialect: Dialect,
}

#[derive(Default)]
struct NodeChunk {
    nodes: Nodes,
    names: Vec<u64>,
    spans: Vec<(usize, usize)>,
    slash: bool,
}

fn parse_node_chunk(
    buf: &[u8],
    start: usize,
    end: usize,
    ctx: &NodeCtx<'_>,
) -> Result<NodeChunk, ParseError> {
    let mut c = NodeChunk::default();
    let base = buf.as_ptr() as usize;
    let (expected, layout) = match ctx.dialect {
        Dialect::V110 => (
            9,
            "$id, name, type, inputs[…], outputs[…], workspace[…], ctrl_inputs[…], ctrl_outputs[…], streamID[@…]",
        ),
        Dialect::R1 => (7, r1::NODE_LAYOUT),
    };
    for (at, line) in Lines::new(buf, start, end) {
        if lex::is_blank(line) {
            continue;
        }
        let mut f: [&[u8]; 10] = [b""; 10];
        let n = lex::split_tabs(line, &mut f);
        if n != expected {
            return Err(wrong_count(at, "node", expected, layout, n, line));
        }
        let index = f[0]
            .strip_prefix(b"$")
            .and_then(lex::parse_u32)
            .ok_or_else(|| bad(at, "node id", "$<n>", f[0]))?;
        let name = f[1];
        if name.contains(&b'/') {
            c.slash = true;
        }
        let kind = lex::parse_u32(f[2])
            .and_then(|k| u8::try_from(k).ok())
            .ok_or_else(|| bad(at, "type", "0 (common) or 1 (communication)", f[2]))?;
        let who = || format!("node ${index}");
        // inputs: tensors and parameters.
        let body =
            lex::list_body(f[3], b"inputs").ok_or_else(|| bad(at, "inputs", "inputs[…]", f[3]))?;
        for item in lex::list_items(body) {
            let (id, k) = lex::id_sigil(item)
                .ok_or_else(|| bad(at, "inputs", "%<n>T or %<n>P items", item))?;
            let v = match k {
                IdKind::Tensor => tensor_ref(ctx, id, at, "inputs", &who)?,
                IdKind::Param => {
                    let r = crate::somas::model::row_of(ctx.param_ids, id).ok_or_else(|| {
                        ParseError::new(
                            at as u64,
                            "inputs",
                            format!(
                                "{}: parameter %{id}P is not defined in All Parameters",
                                who()
                            ),
                        )
                    })?;
                    r | INPUT_PARAM
                }
                IdKind::Control => return Err(bad(at, "inputs", "%<n>T or %<n>P items", item)),
            };
            c.nodes.inputs.items.push(v);
        }
        c.nodes.inputs.end_row();
        for (fi, label) in [(4usize, "outputs"), (5, "workspace")] {
            let field = f[fi];
            let body = lex::list_body(field, label.as_bytes())
                .ok_or_else(|| bad(at, label, &format!("{label}[…]"), field))?;
            let list = if fi == 4 {
                &mut c.nodes.outputs
            } else {
                &mut c.nodes.workspace
            };
            for item in lex::list_items(body) {
                match lex::id_sigil(item) {
                    Some((id, IdKind::Tensor)) => {
                        list.items.push(tensor_ref(ctx, id, at, label, &who)?)
                    }
                    _ => return Err(bad(at, label, "%<n>T items", item)),
                }
            }
            list.end_row();
        }
        let stream_field = if ctx.dialect == Dialect::V110 {
            for (fi, label) in [(6usize, "ctrl_inputs"), (7, "ctrl_outputs")] {
                let field = f[fi];
                let body = lex::list_body(field, label.as_bytes())
                    .ok_or_else(|| bad(at, label, &format!("{label}[…]"), field))?;
                let list = if fi == 6 {
                    &mut c.nodes.ctrl_inputs
                } else {
                    &mut c.nodes.ctrl_outputs
                };
                for item in lex::list_items(body) {
                    match lex::id_sigil(item) {
                        Some((id, IdKind::Control)) => {
                            let r = crate::somas::model::row_of(ctx.control_ids, id).ok_or_else(
                                || {
                                    ParseError::new(
                                        at as u64,
                                        label,
                                        format!(
                                        "{}: control tensor %{id}CT is not defined in All Tensors",
                                        who()
                                    ),
                                    )
                                },
                            )?;
                            list.items.push(r);
                        }
                        _ => return Err(bad(at, label, "%<n>CT items", item)),
                    }
                }
                list.end_row();
            }
            f[8]
        } else {
            c.nodes.ctrl_inputs.end_row();
            c.nodes.ctrl_outputs.end_row();
            f[6]
        };
        let stream = lex::list_body(stream_field, b"streamID")
            .and_then(|b| b.strip_prefix(b"@"))
            .and_then(lex::parse_u32)
            .ok_or_else(|| bad(at, "streamID", "streamID[@<n>]", stream_field))?;
        c.nodes.index.push(index);
        c.nodes.kind.push(kind);
        c.nodes.stream.push(stream);
        c.nodes.byte.push(at as u64);
        c.names.push(name_hash(name));
        let s = name.as_ptr() as usize - base;
        c.spans.push((s, s + name.len()));
    }
    Ok(c)
}

fn tensor_ref(
    ctx: &NodeCtx<'_>,
    id: u32,
    at: usize,
    field: &str,
    who: &dyn Fn() -> String,
) -> Result<u32, ParseError> {
    crate::somas::model::row_of(ctx.tensor_ids, id).ok_or_else(|| {
        ParseError::new(
            at as u64,
            field,
            format!(
                "{}: tensor %{id}T is not defined in All Tensors (unknown tensor id)",
                who()
            ),
        )
    })
}

fn check_node_order(nodes: &Nodes, buf: &[u8]) -> Result<(), ParseError> {
    for (k, w) in nodes.index.windows(2).enumerate() {
        if w[1] <= w[0] {
            let at = nodes.byte.get(k + 1).copied().unwrap_or(0);
            if w[1] == w[0] {
                let first = nodes.byte.get(k).copied().unwrap_or(0);
                return Err(ParseError::new(
                    at,
                    "node id",
                    format!(
                        "duplicate node id ${}: already defined at line {}",
                        w[1],
                        lex::line_of(buf, first)
                    ),
                ));
            }
            return Err(ParseError::new(
                at,
                "node id",
                format!(
                    "node ids must follow the execution order: ${} comes after ${}",
                    w[1], w[0]
                ),
            ));
        }
    }
    Ok(())
}

/// Lists of `%<n>T` between `[` and the last `]` (union, contiguous), or after the first `:`
/// (r1.x `refnode input-output:%3T %7T `).
fn parse_id_lists(buf: &[u8], sp: Span, ids: &[u32]) -> Result<Csr, ParseError> {
    let mut out = Csr::default();
    for (at, line) in Lines::new(buf, sp.body, sp.end) {
        if lex::is_blank(line) {
            continue;
        }
        let body = match (memchr::memchr(b'[', line), memchr::memrchr(b']', line)) {
            (Some(o), Some(c)) if o < c => line.get(o + 1..c).unwrap_or(b""),
            _ => match memchr::memchr(b':', line) {
                Some(i) => line.get(i + 1..).unwrap_or(b""),
                None => {
                    return Err(bad(
                        at,
                        "",
                        "a list such as \"contiguous tensors: [%4T ]\"",
                        line,
                    ))
                }
            },
        };
        for item in lex::list_items(body) {
            match lex::id_sigil(item) {
                Some((id, IdKind::Tensor)) => {
                    let r = crate::somas::model::row_of(ids, id).ok_or_else(|| {
                        ParseError::new(
                            at as u64,
                            "",
                            format!(
                                "tensor %{id}T is not defined in All Tensors (unknown tensor id)"
                            ),
                        )
                    })?;
                    out.items.push(r);
                }
                _ => return Err(bad(at, "", "%<n>T items", item)),
            }
        }
        out.end_row();
    }
    Ok(out)
}

fn parse_stream_groups(buf: &[u8], sp: Span) -> Result<Csr, ParseError> {
    let mut out = Csr::default();
    for (at, line) in Lines::new(buf, sp.body, sp.end) {
        if lex::is_blank(line) {
            continue;
        }
        for item in lex::list_items(line) {
            let id = item
                .strip_prefix(b"stm")
                .and_then(lex::parse_u32)
                .ok_or_else(|| bad(at, "stream group", "stm<n> items", item))?;
            out.items.push(id);
        }
        out.end_row();
    }
    Ok(out)
}

fn parse_merged_blocks(buf: &[u8], sp: Span) -> Result<Vec<(u64, u64)>, ParseError> {
    let mut out = Vec::new();
    for (at, line) in Lines::new(buf, sp.body, sp.end) {
        if lex::is_blank(line) || is_column_header(line) {
            continue;
        }
        let mut f: [&[u8]; 3] = [b""; 3];
        let n = lex::split_tabs(line, &mut f);
        if n != 2 {
            return Err(wrong_count(
                at,
                "merged block",
                2,
                "start_offset, size",
                n,
                line,
            ));
        }
        let s = lex::parse_u64(f[0]).ok_or_else(|| bad(at, "start_offset", "a number", f[0]))?;
        let z = lex::parse_u64(f[1]).ok_or_else(|| bad(at, "size", "a number", f[1]))?;
        out.push((s, z));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_found_by_header() {
        let buf = b"All Parameters:\n\nindex:\n\n\nAll Tensors:\n\n\n\nAll Nodes:\n\nTotal Memory Size after reused:5";
        let (spans, total) = find_sections(buf);
        let kinds: Vec<_> = spans.iter().map(|s| s.section).collect();
        assert_eq!(
            kinds,
            vec![Section::Parameters, Section::Tensors, Section::Nodes]
        );
        assert!(total.is_some());
        assert!(spans[2].end <= total.unwrap().0);
    }
}
