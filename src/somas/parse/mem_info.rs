//! Parser of the r1.x `somas_mem_info_<G>.ir` dump: one line per tensor, sorted by
//! offset, with real addresses, but no node lists, no parameters and no lifelong kinds.
//!
//! Nodes are reconstructed from each tensor's `src_node` at its `life_start` (the producer's
//! index), so per-node curves and frames still work. r1.x marks GetNext outputs as GraphAll and
//! types them `GetNextOutput`, which is the only lifelong information this file carries.

use crate::somas::lex::{self, IdKind, Lines, ParseError};
use crate::somas::model::{
    name_hash, DumpFamily, Format, Lifelong, SomasModel, TensorKind, Tensors,
};

const LAYOUT: &str = "#mem_id, start_offset, end_offset, %tensor_id, origin_size, align_size, \
                      &start_addr, &end_addr, type, src_node, stm<src_stm_id>, lifetime_start, lifetime_end";

/// Parses a `somas_mem_info` dump held in `buf`, asking `stop` (when given) about every MiB of
/// lines and ending with its error once the load was stopped.
pub fn parse(
    buf: &[u8],
    file: &str,
    stop: Option<lex::StopCheck<'_>>,
) -> Result<SomasModel, ParseError> {
    let mut model = SomasModel::empty(
        file,
        Format {
            family: DumpFamily::MemInfoR1,
            version: "r1.x".to_string(),
        },
    );
    let mut t = Tensors::default();
    let mut streams: Vec<u32> = Vec::new();
    let mut asker = lex::Asker::new(stop, 0);
    for (at, line) in Lines::new(buf, 0, buf.len()) {
        asker.at(at)?;
        if lex::is_blank(line) || line.starts_with(b"mem_id:") {
            continue;
        }
        let mut f: [&[u8]; 14] = [b""; 14];
        let n = lex::split_tabs(line, &mut f);
        if n != 13 {
            return Err(ParseError::new(
                at as u64,
                "",
                format!(
                    "expected 13 TAB-separated fields in a mem_info line ({LAYOUT}), found {n}: {}",
                    crate::quote::quote(line, crate::quote::SHORT)
                ),
            ));
        }
        let bad = |field: &str, expected: &str, found: &[u8]| {
            ParseError::new(
                at as u64,
                field,
                format!(
                    "expected {expected}, found {}",
                    crate::quote::quote(found, crate::quote::SHORT)
                ),
            )
        };
        f[0].strip_prefix(b"#")
            .and_then(lex::parse_u64)
            .ok_or_else(|| bad("mem_id", "#<n>", f[0]))?;
        let start_off =
            lex::parse_u64(f[1]).ok_or_else(|| bad("start_offset", "a number", f[1]))?;
        lex::parse_u64(f[2]).ok_or_else(|| bad("end_offset", "a number", f[2]))?;
        let id = match lex::id_sigil(f[3]) {
            Some((id, IdKind::Tensor)) => id,
            _ => return Err(bad("tensor_id", "%<n>T", f[3])),
        };
        let orig = lex::parse_u64(f[4]).ok_or_else(|| bad("origin_size", "a number", f[4]))?;
        let aligned = lex::parse_u64(f[5]).ok_or_else(|| bad("align_size", "a number", f[5]))?;
        let addr =
            lex::addr_sigil(f[6]).ok_or_else(|| bad("start_addr", "&0 or &0x<hex>", f[6]))?;
        lex::addr_sigil(f[7]).ok_or_else(|| bad("end_addr", "&0 or &0x<hex>", f[7]))?;
        let kind = TensorKind::parse(f[8]).ok_or_else(|| bad("type", "a tensor type", f[8]))?;
        let stm = f[10]
            .strip_prefix(b"stm")
            .and_then(lex::parse_u32)
            .ok_or_else(|| bad("src_stm_id", "stm<n>", f[10]))?;
        let s =
            lex::parse_u32(f[11]).ok_or_else(|| bad("lifetime_start", "a node index", f[11]))?;
        let e = lex::parse_u32(f[12]).ok_or_else(|| bad("lifetime_end", "a node index", f[12]))?;
        let name = model.names.intern_hashed(name_hash(f[9]), f[9]);
        t.id.push(id);
        t.aligned.push(aligned);
        t.original.push(orig);
        t.offset.push(start_off);
        t.addr.push(addr);
        t.kind.push(kind);
        t.lifelong.push(if kind == TensorKind::GetNextOutput {
            Lifelong::GraphAll
        } else {
            Lifelong::None
        });
        t.start.push(s);
        t.end.push(e);
        t.name.push(name);
        t.byte.push(at as u64);
        streams.push(stm);
    }
    if t.id.is_empty() {
        return Err(ParseError::new(
            0,
            "",
            "truncated file: no tensor line after the mem_id: header",
        ));
    }
    // The file is sorted by offset: order the rows by tensor id, keeping streams aligned.
    if let Some(perm) = crate::somas::info::sort_tensors(&mut t, buf)? {
        crate::somas::info::permute(&mut streams, &perm);
    }
    // Pseudo nodes: the producer of each tensor sits at its life_start.
    let mut producers: Vec<(u32, u32, u32, u32, bool)> = (0..t.id.len())
        .map(|r| {
            (
                t.start.get(r).copied().unwrap_or(0),
                t.name.get(r).copied().unwrap_or(0),
                streams.get(r).copied().unwrap_or(0),
                r as u32,
                t.kind.get(r) == Some(&TensorKind::Workspace),
            )
        })
        .collect();
    producers.sort_unstable();
    let nodes = &mut model.nodes;
    for group in producers.chunk_by(|a, b| a.0 == b.0) {
        let Some(first) = group.first() else { continue };
        nodes.index.push(first.0);
        nodes.name.push(first.1);
        nodes.kind.push(0);
        nodes.stream.push(first.2);
        nodes.byte.push(0);
        for p in group {
            if p.4 {
                nodes.workspace.items.push(p.3);
            } else {
                nodes.outputs.items.push(p.3);
            }
        }
        nodes.outputs.end_row();
        nodes.workspace.end_row();
        nodes.inputs.end_row();
        nodes.ctrl_inputs.end_row();
        nodes.ctrl_outputs.end_row();
    }
    model.tensors = t;
    model.notes.push(
        "somas_mem_info has no node lists and no parameters: nodes are rebuilt from each tensor's \
         src_node at its lifetime_start (nodes that produce nothing are missing), and GetNextOutput \
         tensors are taken as LifeLongGraphAll"
            .to_string(),
    );
    Ok(model)
}
