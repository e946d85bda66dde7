//! Relations derived once after parsing (owners, consumers, union groups, contiguous gap heads)
//! and the consistency warnings that need them.
//!
//! The effective-range and widened-lifetime rules (`docs/formats-somas.md`) live here, so the
//! curves, the overwrite check, the queries and the exports all use the same definition.

use crate::diag::Diagnostic;
use crate::somas::lex;
use crate::somas::model::{DumpFamily, Lifelong, SomasModel, TensorKind, INPUT_PARAM, NONE};

/// The Ascend communication gap (`AscendSomas::GetCommunicationReservedSize`, r1.x `kGapSize`).
pub const GAP: u64 = 512;

/// Widened inclusive lifetime `(lo, hi)` (dumps print lifetimes unwidened): GraphAll → `[0, max]`,
/// GraphStart → `[0, end]`, GraphEnd → `[start, max]`. A reversed printed lifetime is taken in
/// order.
pub fn widened(lifelong: Lifelong, start: u32, end: u32, max: u32) -> (u32, u32) {
    let (s, e) = (start.min(end), start.max(end));
    match lifelong {
        Lifelong::None => (s, e),
        Lifelong::GraphAll => (0, max.max(e)),
        Lifelong::GraphStart => (0, e),
        Lifelong::GraphEnd => (s, max.max(e)),
    }
}

impl SomasModel {
    /// Widened lifetime of tensor row `row` (see [`widened`]), over the graph's `max_index()`.
    pub fn lifetime(&self, row: u32, max: u32) -> (u32, u32) {
        let r = row as usize;
        widened(
            self.tensors
                .lifelong
                .get(r)
                .copied()
                .unwrap_or(Lifelong::None),
            self.tensors.start.get(r).copied().unwrap_or(0),
            self.tensors.end.get(r).copied().unwrap_or(0),
            max,
        )
    }

    /// Effective byte range `[start, end)` (offsets) of tensor row `row`: the head of
    /// a contiguous list with the Ascend gap has its offset shifted +512 while its aligned size
    /// still includes the gap, so its range is `[offset, offset + aligned − 512)`.
    pub fn effective_range(&self, row: u32) -> (u64, u64) {
        let r = row as usize;
        let off = self.tensors.offset.get(r).copied().unwrap_or(0);
        let mut size = self.tensors.aligned.get(r).copied().unwrap_or(0);
        if self.derived.gap_head.get(r) == Some(&true) {
            size = size.saturating_sub(GAP);
        }
        (off, off.saturating_add(size))
    }

    /// True for a data tensor that occupies SOMAS memory (aligned size > 0).
    pub fn occupies(&self, row: u32) -> bool {
        self.tensors.aligned.get(row as usize).copied().unwrap_or(0) > 0
    }
}

/// Fills `model.derived` and adds consistency warnings (`buf` gives their line numbers).
pub fn derive(model: &mut SomasModel, buf: &[u8]) {
    let nt = model.tensors.len();
    let np = model.params.id.len();
    let nn = model.nodes.len();
    let mut d = std::mem::take(&mut model.derived);

    // Owners: the node listing the tensor in outputs[] / workspace[]; with repeated nodes the one
    // whose index is the tensor's life_start, else the first.
    d.owner = vec![NONE; nt];
    d.out_index = vec![NONE; nt];
    d.is_workspace = vec![false; nt];
    for r in 0..nn {
        let idx = model.nodes.index.get(r).copied().unwrap_or(0);
        for (ws, list) in [
            (false, model.nodes.outputs.row(r)),
            (true, model.nodes.workspace.row(r)),
        ] {
            for (k, &t) in list.iter().enumerate() {
                let t = t as usize;
                let Some(o) = d.owner.get(t).copied() else {
                    continue;
                };
                let start = model.tensors.start.get(t).copied().unwrap_or(0);
                let take = o == NONE
                    || (idx == start && model.nodes.index.get(o as usize).copied() != Some(start));
                if take {
                    d.owner[t] = r as u32;
                    d.out_index[t] = k as u32;
                    d.is_workspace[t] = ws;
                }
            }
        }
    }
    d.consumers = model
        .nodes
        .inputs
        .reverse(nt, |v| (v & INPUT_PARAM == 0).then_some(v));
    d.param_consumers = model
        .nodes
        .inputs
        .reverse(np, |v| (v & INPUT_PARAM != 0).then_some(v & !INPUT_PARAM));

    // Union groups: merge every list by union-find; the head is the first member seen.
    let mut parent: Vec<u32> = Vec::new();
    if !model.unions.is_empty() {
        parent = (0..nt as u32).collect();
        fn root(p: &mut [u32], mut x: u32) -> u32 {
            while let Some(&px) = p.get(x as usize) {
                if px == x {
                    break;
                }
                let gp = p.get(px as usize).copied().unwrap_or(px);
                if let Some(slot) = p.get_mut(x as usize) {
                    *slot = gp;
                }
                x = px;
            }
            x
        }
        for list in model.unions.rows() {
            if let Some(&first) = list.first() {
                for &t in list {
                    let a = root(&mut parent, first);
                    let b = root(&mut parent, t);
                    if a != b {
                        if let Some(slot) = parent.get_mut(b as usize) {
                            *slot = a;
                        }
                    }
                }
            }
        }
        let mut group_of_root = vec![NONE; nt];
        let mut members: Vec<Vec<u32>> = Vec::new();
        d.union_group = vec![NONE; nt];
        for list in model.unions.rows() {
            for &t in list {
                if d.union_group.get(t as usize) != Some(&NONE) {
                    continue;
                }
                let rt = root(&mut parent, t) as usize;
                let Some(g) = group_of_root.get_mut(rt) else {
                    continue;
                };
                if *g == NONE {
                    *g = members.len() as u32;
                    members.push(Vec::new());
                }
                let g = *g;
                if let Some(m) = members.get_mut(g as usize) {
                    m.push(t);
                }
                d.union_group[t as usize] = g;
            }
        }
        for m in members {
            d.groups.items.extend_from_slice(&m);
            d.groups.end_row();
        }
    } else {
        d.union_group = vec![NONE; nt];
    }
    drop(parent);

    // Contiguous lists and the Ascend gap: the head carries the gap when its aligned size is at
    // least 512 over the Ascend alignment of its original size (ACL/GPU/CPU lists have no gap).
    d.in_contiguous = vec![false; nt];
    d.gap_head = vec![false; nt];
    let carries_gap = |t: usize| {
        let a = model.tensors.aligned.get(t).copied().unwrap_or(0);
        let o = model.tensors.original.get(t).copied().unwrap_or(0);
        a >= lex::ascend_align(o).saturating_add(GAP)
    };
    for list in model.contiguous.rows() {
        for &t in list {
            if let Some(x) = d.in_contiguous.get_mut(t as usize) {
                *x = true;
            }
        }
        if let Some(&h) = list.first() {
            if carries_gap(h as usize) {
                d.gap_head[h as usize] = true;
            }
        }
    }
    let no_lists = matches!(
        model.format.family,
        DumpFamily::MemInfoR1 | DumpFamily::CacheJson
    );
    if no_lists && model.placed {
        let mut n = 0;
        for t in 0..nt {
            if carries_gap(t) {
                d.gap_head[t] = true;
                n += 1;
            }
        }
        if n > 0 {
            model.notes.push(format!(
                "this format has no contiguous lists: {n} tensors whose aligned size carries the Ascend \
                 512-byte communication gap are taken as contiguous-list heads (their last 512 bytes \
                 are not checked for overlap)"
            ));
        }
    }
    d.clean_op = (0..nn as u32)
        .map(|r| crate::somas::model::is_clean_op(model.node_name(r)))
        .collect();
    model.derived = d;
    warn(model, buf);
}

/// A counted warning: how many, and the first occurrence.
struct Tally {
    count: u64,
    first: Option<(u64, String)>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            count: 0,
            first: None,
        }
    }
    fn hit(&mut self, byte: u64, msg: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((byte, msg()));
        }
    }
    fn emit(self, model: &mut SomasModel, buf: &[u8], field: &str, what: &str) {
        if let Some((byte, msg)) = self.first {
            let mut d = Diagnostic::warning(model.file.clone(), format!("{what} (first: {msg})"))
                .times(self.count);
            if !buf.is_empty() {
                d = d.at_line(lex::line_of(buf, byte));
            }
            if !field.is_empty() {
                d = d.in_field(field);
            }
            model.warnings.push(d);
        }
    }
}

fn warn(model: &mut SomasModel, buf: &[u8]) {
    let nt = model.tensors.len();
    let max = model.max_index();
    let has_nodes = !model.nodes.is_empty();
    let mut no_owner = Tally::new();
    let mut reversed = Tally::new();
    let mut beyond = Tally::new();
    let mut unknown_type = Tally::new();
    for t in 0..nt {
        let byte = model.tensors.byte.get(t).copied().unwrap_or(0);
        let id = model.tensors.id.get(t).copied().unwrap_or(0);
        let s = model.tensors.start.get(t).copied().unwrap_or(0);
        let e = model.tensors.end.get(t).copied().unwrap_or(0);
        if has_nodes && model.derived.owner.get(t) == Some(&NONE) {
            no_owner.hit(byte, || format!("%{id}T"));
        }
        if s > e {
            reversed.hit(byte, || format!("%{id}T lives {s}..{e}"));
        }
        if has_nodes && e > max {
            beyond.hit(byte, || {
                format!("%{id}T ends at {e}, the last node is ${max}")
            });
        }
        if matches!(
            model.tensors.kind.get(t),
            Some(TensorKind::Unknown) | Some(TensorKind::Gap)
        ) {
            unknown_type.hit(byte, || format!("%{id}T"));
        }
    }
    no_owner.emit(
        model,
        buf,
        "",
        "tensors not listed in any node's outputs[] or workspace[]",
    );
    reversed.emit(
        model,
        buf,
        "life_start",
        "tensors whose life_start is after life_end",
    );
    beyond.emit(
        model,
        buf,
        "life_end",
        "tensors that live past the last node",
    );
    unknown_type.emit(
        model,
        buf,
        "type",
        "tensors of type Unknown or empty (r1.0 gap)",
    );

    // Consumers outside the lifetime; atomic-clean ops are exempt (they list, as inputs, the
    // tensors of the next op that they clear, which that op produces later).
    let mut outside = Tally::new();
    for r in 0..model.nodes.len() {
        if model.derived.clean_op.get(r) == Some(&true) {
            continue;
        }
        let idx = model.nodes.index.get(r).copied().unwrap_or(0);
        for &v in model.nodes.inputs.row(r) {
            if v & INPUT_PARAM != 0 || !model.occupies(v) {
                continue;
            }
            let (lo, hi) = model.lifetime(v, max);
            if idx < lo || idx > hi {
                let id = model.tensors.id.get(v as usize).copied().unwrap_or(0);
                let byte = model.nodes.byte.get(r).copied().unwrap_or(0);
                outside.hit(byte, || {
                    format!("node ${idx} reads %{id}T, which lives {lo}..{hi}")
                });
            }
        }
    }
    outside.emit(
        model,
        buf,
        "inputs",
        "nodes that read a tensor outside its lifetime",
    );

    // The reused total is the solver's max end offset.
    if let (Some(total), true) = (model.reused_total, model.placed) {
        let mut max_end = 0u64;
        let mut max_row = None;
        let mut beyond = 0u64;
        for t in 0..nt as u32 {
            if !model.occupies(t) {
                continue;
            }
            let end = model.effective_range(t).1;
            if end > total {
                beyond += 1;
            }
            if max_row.is_none() || end > max_end {
                max_end = end;
                max_row = Some(t);
            }
        }
        if max_end > total {
            // Name the tensor that reaches furthest, at its line.
            let row = max_row.unwrap_or(0) as usize;
            let id = model.tensors.id.get(row).copied().unwrap_or(0);
            let byte = model.tensors.byte.get(row).copied().unwrap_or(0);
            let mut d = Diagnostic::warning(
                model.file.clone(),
                format!(
                    "tensors that end beyond Total Memory Size after reused ({total}) (furthest: \
                     %{id}T ends at offset {max_end})"
                ),
            )
            .in_field("offset")
            .times(beyond);
            if !buf.is_empty() {
                d = d.at_line(lex::line_of(buf, byte)).at_byte(byte);
            }
            model.warnings.push(d);
        } else if max_end != total {
            let mut d = Diagnostic::warning(
                model.file.clone(),
                format!(
                    "the largest tensor end offset is {max_end}, but Total Memory Size after \
                     reused is {total}"
                ),
            );
            if let Some(at) = memchr::memmem::rfind(buf, b"Total Memory Size after reused:") {
                d = d.at_line(lex::line_of(buf, at as u64)).at_byte(at as u64);
            }
            model.warnings.push(d);
        }
    }

    // Names are UTF-8 in every dump MindSpore writes; other bytes mean damage.
    let invalid = model.names.invalid_utf8();
    if invalid > 0 {
        let mut d = Diagnostic::warning(
            model.file.clone(),
            "names that are not valid UTF-8, shown with U+FFFD",
        )
        .times(invalid);
        if let Some(at) = std::str::from_utf8(buf)
            .err()
            .map(|e| e.valid_up_to() as u64)
        {
            d = d.at_line(lex::line_of(buf, at)).at_byte(at);
        }
        model.warnings.push(d);
    }
}
