//! r1.x `SomasInfo()` specifics: field layouts, and what the r1.x dump does not
//! say and must be reconstructed.
//!
//! The r1.x dump has a real-address column (`somas_allocate_info`), prints `lifelong` as a bool
//! (only GraphAll is known), and has no contiguous-list section. Contiguous lists matter for the
//! overwrite check (the 512-byte gap shifts the head tensor), so they are rebuilt from the
//! communication nodes: in r1.x every communication node's inputs and outputs form lists.

use crate::somas::model::{Csr, SomasModel, INPUT_PARAM};

/// Field layout of an r1.x parameter line, for error messages.
pub const PARAM_LAYOUT: &str = "%id, #size, &start_addr, source node name, node out index";
/// Field layout of an r1.x tensor line, for error messages.
pub const TENSOR_LAYOUT: &str =
    "%id, #size, #real_size, &offset, &addr, type, lifelong, life_start, life_end, source node name";
/// Field layout of an r1.x node line, for error messages.
pub const NODE_LAYOUT: &str = "$id, name, type, inputs[…], outputs[…], workspace[…], streamID[@…]";

/// Completes an r1.x model after parsing: placement flag, contiguous lists, notes.
pub fn finish(model: &mut SomasModel) {
    let t = &model.tensors;
    // Before `MallocSomasDynamicMem` every offset and address is 0 (initial / pre-processed info).
    model.placed = t.offset.iter().any(|&o| o > 0) || t.addr.iter().any(|&a| a > 0);
    if model.contiguous.is_empty() {
        model.contiguous = communication_lists(model);
        if !model.contiguous.is_empty() {
            model.notes.push(
                "r1.x dumps have no contiguous-list section: the lists were rebuilt from the \
                 communication nodes' inputs and outputs"
                    .to_string(),
            );
        }
    }
    model.notes.push(
        "r1.x dumps print lifelong as a bool: only GraphAll is known (GraphStart/GraphEnd are \
         in the offline log) and other tensors are taken as LifeLongNone"
            .to_string(),
    );
    if !model.placed {
        model.notes.push(
            "offsets are not solved in this dump (all 0): curves are computed, the overwrite \
             check is skipped; open somas_allocate_info"
                .to_string(),
        );
    }
}

/// One contiguous list per communication node's tensor inputs and one per its outputs.
pub fn communication_lists(model: &SomasModel) -> Csr {
    let mut out = Csr::default();
    let n = &model.nodes;
    for r in 0..n.len() {
        if n.kind.get(r) != Some(&1) {
            continue;
        }
        let inputs: Vec<u32> = n
            .inputs
            .row(r)
            .iter()
            .copied()
            .filter(|v| v & INPUT_PARAM == 0)
            .collect();
        for list in [inputs.as_slice(), n.outputs.row(r)] {
            if !list.is_empty() {
                out.items.extend_from_slice(list);
                out.end_row();
            }
        }
    }
    out
}
