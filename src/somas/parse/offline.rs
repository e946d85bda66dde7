//! Parser of the offline log `*somas_offline_log_<G>.ir`: one `Somas EDGE` line
//! per (tensor, destination node), then `Somas CONTIGUOUS` and `Somas GROUP` lines.
//!
//! The log is written before solving: it has no offsets and only original sizes, and tensors with
//! no consumer (workspaces, graph outputs) have no line. It is the only r1.x file with the numeric
//! lifelong kind (GraphStart/GraphEnd). The model built from it uses original sizes in place of
//! aligned ones and is marked unplaced, so the overwrite check is skipped.

use crate::somas::lex::{self, Lines, ParseError};
use crate::somas::model::{name_hash, Csr, DumpFamily, Format, Lifelong, SomasModel, TensorKind};

struct Edge {
    src: u32,
    srcstm: u32,
    dst: Option<(u32, u32)>,
    size: u64,
    lifelong: Lifelong,
    tid: u32,
    start: u32,
    end: u32,
    byte: u64,
}

const LAYOUT: &str =
    "Somas EDGE [ERROR ]src=n<i>, srcstm=<s>, dst=n<i>|nc, dststm=<s>|nc, workspace=0|1, \
                      size=<bytes>, lifelong=<0-3>, tid=<t>, start=<i>, end=<i>";

/// Parses an offline log held in `buf`, asking `stop` (when given) about every MiB of lines and
/// ending with its error once the load was stopped.
pub fn parse(
    buf: &[u8],
    file: &str,
    stop: Option<lex::StopCheck<'_>>,
) -> Result<SomasModel, ParseError> {
    let mut model = SomasModel::empty(
        file,
        Format {
            family: DumpFamily::OfflineLog,
            version: "r1.x-2.x".to_string(),
        },
    );
    let mut edges: Vec<Edge> = Vec::new();
    let mut contiguous_ids: Vec<Vec<u32>> = Vec::new();
    let mut asker = lex::Asker::new(stop, 0);
    for (at, line) in Lines::new(buf, 0, buf.len()) {
        asker.at(at)?;
        if lex::is_blank(line) {
            continue;
        }
        if let Some(rest) = line.strip_prefix(b"Somas EDGE ") {
            let rest = rest.strip_prefix(b"ERROR ").unwrap_or(rest);
            edges.push(parse_edge(rest, at).ok_or_else(|| {
                ParseError::new(
                    at as u64,
                    "",
                    format!(
                        "expected \"{LAYOUT}\", found {}",
                        crate::quote::quote(line, crate::quote::SHORT)
                    ),
                )
            })?);
        } else if let Some(rest) = line.strip_prefix(b"Somas CONTIGUOUS") {
            contiguous_ids.push(numbers(rest, at, "CONTIGUOUS")?);
        } else if let Some(rest) = line.strip_prefix(b"Somas GROUP") {
            let ids = numbers(rest, at, "GROUP")?;
            model.stream_groups.items.extend_from_slice(&ids);
            model.stream_groups.end_row();
        } else {
            return Err(ParseError::new(
                at as u64,
                "",
                format!(
                    "expected a \"Somas EDGE\", \"Somas CONTIGUOUS\" or \"Somas GROUP\" line, found {}",
                    crate::quote::quote(line, crate::quote::SHORT)
                ),
            ));
        }
    }
    edges.sort_by_key(|e| (e.tid, e.dst.map_or(0, |d| d.0)));
    // One tensor per tid (the first line's fields), destinations from every line.
    let mut dests: Vec<(u32, u32, u32)> = Vec::new(); // (dst node, dst stream, tensor row)
    let mut producers: Vec<(u32, u32, u32)> = Vec::new(); // (src node, src stream, tensor row)
    let mut src_of_row: Vec<u32> = Vec::new();
    let t = &mut model.tensors;
    for group in edges.chunk_by(|a, b| a.tid == b.tid) {
        let Some(e) = group.first() else { continue };
        let row = t.id.len() as u32;
        t.id.push(e.tid);
        t.aligned.push(e.size);
        t.original.push(e.size);
        t.offset.push(0);
        t.kind.push(if e.dst.is_some() {
            TensorKind::Common
        } else {
            TensorKind::OutputOnly
        });
        t.lifelong.push(e.lifelong);
        t.start.push(e.start);
        t.end.push(e.end);
        t.byte.push(e.byte);
        producers.push((e.src, e.srcstm, row));
        src_of_row.push(e.src);
        for g in group {
            if let Some((d, s)) = g.dst {
                dests.push((d, s, row));
            }
        }
    }
    // Pseudo nodes: every src and dst index, named n<i> as the log writes them.
    // A node's stream comes from its `srcstm` when it produces something: v1.10 prints the
    // source stream as `dststm` (a MindSpore bug), so destination streams are only a fallback.
    let mut idx: Vec<(u32, u8, u32)> = producers
        .iter()
        .map(|p| (p.0, 0, p.1))
        .chain(dests.iter().map(|d| (d.0, 1, d.1)))
        .collect();
    idx.sort_unstable();
    idx.dedup_by_key(|p| p.0);
    let idx: Vec<(u32, u32)> = idx.into_iter().map(|(n, _, s)| (n, s)).collect();
    producers.sort_unstable();
    dests.sort_unstable();
    let (mut pi, mut di) = (0usize, 0usize);
    for &(node, stream) in &idx {
        let name = format!("n{node}");
        let nid = model
            .names
            .intern_hashed(name_hash(name.as_bytes()), name.as_bytes());
        let n = &mut model.nodes;
        n.index.push(node);
        n.name.push(nid);
        n.kind.push(0);
        n.stream.push(stream);
        n.byte.push(0);
        while let Some(p) = producers.get(pi).filter(|p| p.0 == node) {
            n.outputs.items.push(p.2);
            pi += 1;
        }
        while let Some(d) = dests.get(di).filter(|d| d.0 == node) {
            n.inputs.items.push(d.2);
            di += 1;
        }
        n.outputs.end_row();
        n.inputs.end_row();
        n.workspace.end_row();
        n.ctrl_inputs.end_row();
        n.ctrl_outputs.end_row();
    }
    let src_names: Vec<u32> = src_of_row
        .iter()
        .map(|src| model.names.find(&format!("n{src}")).unwrap_or(0))
        .collect();
    model.tensors.name = src_names;
    let mut contiguous = Csr::default();
    for list in contiguous_ids {
        for tid in list {
            if let Some(r) = model.tensor_row(tid) {
                contiguous.items.push(r);
            }
        }
        contiguous.end_row();
    }
    model.contiguous = contiguous;
    model.placed = false;
    model.sizes_are_original = true;
    model.notes.push(
        "the offline log has no offsets and only original sizes; tensors without consumers \
         (workspaces, graph outputs) have no line: curves use original sizes, the overwrite check \
         is skipped"
            .to_string(),
    );
    Ok(model)
}

fn numbers(rest: &[u8], at: usize, what: &str) -> Result<Vec<u32>, ParseError> {
    rest.split(|b| *b == b' ')
        .filter(|s| !s.is_empty())
        .map(|s| {
            lex::parse_u32(s).ok_or_else(|| {
                ParseError::new(
                    at as u64,
                    what,
                    format!(
                        "expected space-separated numbers, found {}",
                        crate::quote::quote(s, crate::quote::SHORT)
                    ),
                )
            })
        })
        .collect()
}

fn parse_edge(rest: &[u8], at: usize) -> Option<Edge> {
    let mut f: [&[u8]; 11] = [b""; 11];
    let mut n = 0;
    for part in rest.split(|b| *b == b',') {
        let part = part.strip_prefix(b" ").unwrap_or(part);
        *f.get_mut(n)? = part;
        n += 1;
    }
    if n != 10 {
        return None;
    }
    let val = |i: usize, key: &[u8]| -> Option<&[u8]> { f.get(i)?.strip_prefix(key) };
    let src = lex::parse_u32(val(0, b"src=n")?)?;
    let srcstm = lex::parse_u32(val(1, b"srcstm=")?)?;
    let dst_raw = val(2, b"dst=")?;
    let dststm_raw = val(3, b"dststm=")?;
    let dst = if dst_raw == b"nc" {
        None
    } else {
        let d = lex::parse_u32(dst_raw.strip_prefix(b"n")?)?;
        let s = lex::parse_u32(dststm_raw)?;
        Some((d, s))
    };
    let ws = val(4, b"workspace=")?;
    if ws != b"0" && ws != b"1" {
        return None;
    }
    Some(Edge {
        src,
        srcstm,
        dst,
        size: lex::parse_u64(val(5, b"size=")?)?,
        lifelong: Lifelong::from_number(lex::parse_u64(val(6, b"lifelong=")?)?)?,
        tid: lex::parse_u32(val(7, b"tid=")?)?,
        start: lex::parse_u32(val(8, b"start=")?)?,
        end: lex::parse_u32(val(9, b"end=")?)?,
        byte: at as u64,
    })
}
