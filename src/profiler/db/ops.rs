//! The op spans: `PYTORCH_API` rows of type `op` (`ENUM_API_TYPE`) with the call stacks of
//! `PYTORCH_CALLCHAINS`, as the trace reader's ops and steps.

use super::columns::{int, Cols};
use super::{Reader, Strings};
use crate::diag::Diagnostic;
use crate::profiler::csv_common::Warnings;
use crate::profiler::trace::{Ops, StepSpan, Trace};
use crate::profiler::Interner;
use crate::sqlite::Value;
use std::collections::HashMap;

/// Frames kept of one call chain (real stacks have tens).
pub const MAX_FRAMES: usize = 4096;

/// Bytes kept of one call stack's text (the text trace bounds an event the same way).
pub const MAX_STACK_BYTES: usize = 1 << 20;

/// Call chains by id: their frames' string ids, innermost first; `None` when the table is
/// absent or unreadable (said once, not per op).
fn read_callchains(r: &mut Reader<'_, '_, '_>) -> Option<HashMap<i64, Vec<i64>>> {
    let mut rows: Vec<(i64, i64, i64)> = Vec::new();
    let t = r.table("PYTORCH_CALLCHAINS", "ops have no call stacks")?;
    let c = match Cols::new(&t, &["id", "stack", "stackDepth"], 3) {
        Ok(c) => c,
        Err(e) => {
            r.failed(e);
            return None;
        }
    };
    let res = r.scan(&t, &mut |row| {
        if let (Ok(Some(id)), Ok(Some(s)), Ok(Some(d))) = (
            int(c.value(row, 0)),
            int(c.value(row, 1)),
            int(c.value(row, 2)),
        ) {
            rows.push((id, d, s));
        }
        Ok(())
    });
    if let Err(e) = res {
        r.failed(e);
        return None;
    }
    rows.sort_unstable();
    let mut out: HashMap<i64, Vec<i64>> = HashMap::new();
    let mut cut = 0u64;
    for (id, _, s) in rows {
        let frames = out.entry(id).or_default();
        if frames.len() < MAX_FRAMES {
            frames.push(s);
        } else {
            cut += 1;
        }
    }
    if cut > 0 {
        r.export.warnings.push(Diagnostic::warning(
            &r.file,
            format!(
                "PYTORCH_CALLCHAINS: {cut} frame(s) beyond the first {MAX_FRAMES} of a call chain \
                 left out"
            ),
        ));
    }
    Some(out)
}

/// The id of the `op` type in `ENUM_API_TYPE`.
fn op_type(r: &mut Reader<'_, '_, '_>) -> Option<i64> {
    let t = r.table(
        "ENUM_API_TYPE",
        "op spans cannot be told from other PYTORCH_API rows; allocations get no call stack",
    )?;
    let c = match Cols::new(&t, &["id", "name"], 2) {
        Ok(c) => c,
        Err(e) => {
            r.failed(e);
            return None;
        }
    };
    let mut found = None;
    let res = r.scan(&t, &mut |row| {
        if c.value(row, 1) == Value::Text(b"op") {
            found = int(c.value(row, 0)).ok().flatten();
        }
        Ok(())
    });
    if let Err(e) = res {
        r.failed(e);
        return None;
    }
    if found.is_none() {
        r.export.warnings.push(Diagnostic::warning(
            &r.file,
            "ENUM_API_TYPE names no type \"op\": op spans cannot be told from other PYTORCH_API \
             rows; allocations get no call stack",
        ));
    }
    found
}

const API_COLS: &[&str] = &[
    "startNs",
    "endNs",
    "name",
    "type",
    "globalTid",
    "sequenceNumber",
    "fwdThreadId",
    "callchainId",
];

pub(super) fn read_ops(
    r: &mut Reader<'_, '_, '_>,
    strings: &Strings,
    names: &mut Interner,
    stacks: &mut Interner,
) {
    let Some(t) = r.table(
        "PYTORCH_API",
        "no op spans (profile with with_stack=True); allocations get no call stack",
    ) else {
        return;
    };
    let c = match Cols::new(&t, API_COLS, 4) {
        Ok(c) => c,
        Err(e) => return r.failed(e),
    };
    let Some(op) = op_type(r) else { return };
    let chains = read_callchains(r);
    let file = r.file.clone();
    let mut w = Warnings::default();
    let mut trace = Trace::default();
    let mut chain_stack: HashMap<i64, u32> = HashMap::new();
    let mut name_ids: HashMap<i64, u32> = HashMap::new();
    let mut joined = String::new();
    let before = r.db.bytes_read();
    let res = r.scan(&t, &mut |row| {
        trace.events += 1;
        if int(c.value(row, 3)) != Ok(Some(op)) {
            return Ok(());
        }
        let (Some(start), Some(end)) = (c.int(row, 0, &mut w, &file), c.int(row, 1, &mut w, &file))
        else {
            w.add_keyed_at_byte(
                &file,
                row.offset(),
                &c.field(0),
                "no time",
                &format!(
                    "rowid {}: an op without start or end time; op skipped",
                    row.rowid()
                ),
            );
            return Ok(());
        };
        let name = c.string(row, 2, strings, &mut w, &file);
        let name_id = *name_ids
            .entry(name.map_or(i64::MIN, |(id, _)| id))
            .or_insert_with(|| names.intern(name.map_or("", |(_, s)| s)));
        let name = name.map_or("", |(_, s)| s);
        let gtid = c.int(row, 4, &mut w, &file).unwrap_or(0);
        let stack = match c.int(row, 7, &mut w, &file) {
            None => 0,
            Some(chain) => match chain_stack.get(&chain) {
                Some(&s) => s,
                None => {
                    let s = match chains.as_ref().map(|m| m.get(&chain)) {
                        // No chain table: already said once.
                        None => 0,
                        Some(Some(frames)) => {
                            joined.clear();
                            for (i, f) in frames.iter().enumerate() {
                                let frame = strings.get(*f).unwrap_or("");
                                if joined.len() + frame.len() + 3 > MAX_STACK_BYTES {
                                    w.add_keyed_at_byte(
                                        &file,
                                        row.offset(),
                                        &c.field(7),
                                        "long call stack",
                                        &format!(
                                            "rowid {}: call chain {chain} is longer than \
                                             {MAX_STACK_BYTES} bytes; its outer frames are left \
                                             out",
                                            row.rowid()
                                        ),
                                    );
                                    break;
                                }
                                if i > 0 {
                                    joined.push_str(";\r\n");
                                }
                                joined.push_str(frame);
                            }
                            stacks.intern(&joined)
                        }
                        Some(None) => {
                            w.add_keyed_at_byte(
                                &file,
                                row.offset(),
                                &c.field(7),
                                "unknown call chain",
                                &format!(
                                    "rowid {}: call chain {chain} is not in PYTORCH_CALLCHAINS; \
                                     the op has no call stack",
                                    row.rowid()
                                ),
                            );
                            0
                        }
                    };
                    chain_stack.insert(chain, s);
                    s
                }
            },
        };
        let dur = end.saturating_sub(start).max(0);
        let ops: &mut Ops = &mut trace.ops;
        ops.name.push(name_id);
        ops.pid.push(gtid >> 32);
        ops.tid.push(gtid & 0xffff_ffff);
        ops.ts.push(start);
        ops.dur.push(dur);
        ops.seq.push(c.int(row, 5, &mut w, &file).unwrap_or(-1));
        ops.fwd_tid.push(c.int(row, 6, &mut w, &file).unwrap_or(0));
        ops.stack.push(stack);
        if let Some(n) = name.strip_prefix("ProfilerStep#") {
            if let Ok(step) = n.trim().parse::<u64>() {
                trace.steps.push(StepSpan {
                    step,
                    ts: start,
                    end: start.saturating_add(dur),
                });
            }
        }
        Ok(())
    });
    match res {
        Ok(()) => {
            trace.bytes = r.db.bytes_read().saturating_sub(before);
            trace.warnings = w.into_vec();
            r.export.trace = Some(trace);
        }
        Err(e) => r.failed(e),
    }
}
