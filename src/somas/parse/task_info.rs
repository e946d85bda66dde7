//! Parser of `task_info_graph_<G>.ir`: one record per op in execution order, with
//! the final device addresses and sizes of its inputs, outputs and workspaces.

use crate::somas::lex::{self, Lines, ParseError};
use crate::somas::model::{name_hash, Names};

/// Addresses and sizes in compressed rows (one row per record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrRows {
    /// Row starts, one more than the number of rows.
    pub offsets: Vec<u32>,
    /// Device addresses (0 for null).
    pub addr: Vec<u64>,
    /// Sizes in bytes (DeviceAddress sizes, i.e. original sizes).
    pub size: Vec<u64>,
}

impl Default for AddrRows {
    fn default() -> Self {
        AddrRows {
            offsets: vec![0],
            addr: Vec::new(),
            size: Vec::new(),
        }
    }
}

impl AddrRows {
    /// `(addr, size)` pairs of row `i`.
    pub fn row(&self, i: usize) -> impl Iterator<Item = (u64, u64)> + '_ {
        let s = self.offsets.get(i).copied().unwrap_or(0) as usize;
        let e = self.offsets.get(i + 1).copied().unwrap_or(0) as usize;
        let a = self.addr.get(s..e).unwrap_or(&[]);
        let z = self.size.get(s..e).unwrap_or(&[]);
        a.iter().copied().zip(z.iter().copied())
    }

    /// The `k`-th pair of row `i`.
    pub fn get(&self, i: usize, k: usize) -> Option<(u64, u64)> {
        let s = self.offsets.get(i).copied()? as usize;
        let e = self.offsets.get(i + 1).copied()? as usize;
        let j = s + k;
        if j >= e {
            return None;
        }
        Some((*self.addr.get(j)?, *self.size.get(j)?))
    }

    fn end_row(&mut self) {
        self.offsets.push(self.addr.len() as u32);
    }
}

/// A parsed task-info file.
#[derive(Debug, Clone, Default)]
pub struct TaskInfo {
    /// The file's display name.
    pub file: String,
    /// Version range: `2.0-2.2` when NonTask records exist, else `r1.x-2.2`.
    pub version: String,
    /// Interned op names.
    pub names: Names,
    /// Op name of each record (interned).
    pub op_name: Vec<u32>,
    /// `task_index`.
    pub task_index: Vec<u32>,
    /// `task_num` (0 for NonTask records).
    pub task_num: Vec<u32>,
    /// `task0_stream_id`.
    pub stream: Vec<u32>,
    /// `task0_type`.
    pub task_type: Vec<u32>,
    /// `task0_dump_flag`.
    pub dump_flag: Vec<bool>,
    /// `input address:` items.
    pub inputs: AddrRows,
    /// `output address:` items.
    pub outputs: AddrRows,
    /// `workspace address:` items.
    pub workspaces: AddrRows,
    /// Byte offset of each record's `op_name:` line.
    pub byte: Vec<u64>,
}

impl TaskInfo {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.op_name.len()
    }

    /// True when there is no record.
    pub fn is_empty(&self) -> bool {
        self.op_name.is_empty()
    }

    /// Op name of record `i`.
    pub fn name(&self, i: usize) -> &str {
        self.op_name.get(i).map_or("", |&n| self.names.get(n))
    }

    /// Smallest address and largest `address + size` over every non-null item.
    pub fn address_range(&self) -> Option<(u64, u64)> {
        let mut lo = u64::MAX;
        let mut hi = 0u64;
        for rows in [&self.inputs, &self.outputs, &self.workspaces] {
            for (a, z) in rows.addr.iter().zip(rows.size.iter()) {
                if *a == 0 {
                    continue;
                }
                lo = lo.min(*a);
                hi = hi.max(a.saturating_add(*z));
            }
        }
        (lo <= hi).then_some((lo, hi))
    }
}

#[derive(PartialEq)]
enum Part {
    None,
    Header,
    Body,
}

/// Parses a task-info file held in `buf`, asking `stop` (when given) about every MiB of lines and
/// ending with its error once the load was stopped.
pub fn parse(
    buf: &[u8],
    file: &str,
    stop: Option<lex::StopCheck<'_>>,
) -> Result<TaskInfo, ParseError> {
    let mut t = TaskInfo {
        file: file.to_string(),
        ..TaskInfo::default()
    };
    let mut state = Part::None;
    let mut lists_done = [false; 3];
    let mut nontask = false;
    let close = |t: &mut TaskInfo, lists_done: &mut [bool; 3]| {
        for (k, rows) in [&mut t.inputs, &mut t.outputs, &mut t.workspaces]
            .into_iter()
            .enumerate()
        {
            if !lists_done[k] {
                rows.end_row();
            }
        }
        *lists_done = [false; 3];
    };
    let mut last_at = 0usize;
    let mut asker = lex::Asker::new(stop, 0);
    for (at, line) in Lines::new(buf, 0, buf.len()) {
        asker.at(at)?;
        last_at = at;
        if lex::is_blank(line) {
            continue;
        }
        if let Some(name) = line.strip_prefix(b"op_name:") {
            if state == Part::Header {
                return Err(missing_index(at));
            }
            if state == Part::Body {
                close(&mut t, &mut lists_done);
            }
            if name.ends_with(b"-NonTask") {
                nontask = true;
            }
            let id = t.names.intern_hashed(name_hash(name), name);
            t.op_name.push(id);
            t.byte.push(at as u64);
            state = Part::Header;
            continue;
        }
        if line.starts_with(b"task_index:") {
            if state != Part::Header {
                return Err(ParseError::new(
                    at as u64,
                    "task_index",
                    "a task_index line must follow an op_name line",
                ));
            }
            let mut f: [&[u8]; 6] = [b""; 6];
            let n = lex::split_tabs(line, &mut f);
            if n != 5 {
                return Err(ParseError::new(
                    at as u64,
                    "",
                    format!(
                        "expected 5 TAB-separated fields in a task_index line (task_index, task_num, \
                         task0_stream_id, task0_type, task0_dump_flag), found {n}: {}",
                        crate::quote::quote(line, crate::quote::SHORT)
                    ),
                ));
            }
            let keys: [&[u8]; 5] = [
                b"task_index:",
                b"task_num:",
                b"task0_stream_id:",
                b"task0_type:",
                b"task0_dump_flag:",
            ];
            let mut vals = [0u32; 5];
            for k in 0..5 {
                let key = keys[k];
                let v = f[k]
                    .strip_prefix(key)
                    .and_then(lex::parse_u32)
                    .ok_or_else(|| {
                        let field = String::from_utf8_lossy(key.strip_suffix(b":").unwrap_or(key))
                            .into_owned();
                        ParseError::new(
                            at as u64,
                            field,
                            format!(
                                "expected {}<n>, found {}",
                                String::from_utf8_lossy(key),
                                crate::quote::quote(f[k], crate::quote::SHORT)
                            ),
                        )
                    })?;
                vals[k] = v;
            }
            t.task_index.push(vals[0]);
            t.task_num.push(vals[1]);
            t.stream.push(vals[2]);
            t.task_type.push(vals[3]);
            t.dump_flag.push(vals[4] != 0);
            state = Part::Body;
            continue;
        }
        let lists: [(&[u8], usize, &str); 3] = [
            (b"input address:", 0, "input address"),
            (b"output address:", 1, "output address"),
            (b"workspace address:", 2, "workspace address"),
        ];
        let mut matched = false;
        for (prefix, k, field) in lists {
            let Some(rest) = line.strip_prefix(prefix) else {
                continue;
            };
            matched = true;
            if state != Part::Body {
                return Err(ParseError::new(
                    at as u64,
                    field,
                    "an address line must follow the op_name and task_index lines of its record",
                ));
            }
            if lists_done[k] {
                return Err(ParseError::new(
                    at as u64,
                    field,
                    "this address line appears twice in one record",
                ));
            }
            // Lines come in the order input, output, workspace; close the ones skipped.
            for (j, done) in lists_done.iter_mut().enumerate().take(k) {
                if !*done {
                    [&mut t.inputs, &mut t.outputs, &mut t.workspaces][j].end_row();
                    *done = true;
                }
            }
            let rows = [&mut t.inputs, &mut t.outputs, &mut t.workspaces]
                .into_iter()
                .nth(k);
            let Some(rows) = rows else { continue };
            for item in rest.split(|b| *b == b'\t').filter(|i| !i.is_empty()) {
                let (a, z) = parse_item(item).ok_or_else(|| {
                    ParseError::new(
                        at as u64,
                        field,
                        format!(
                            "expected <0 or 0x…>(<bytes>) items, found {}",
                            crate::quote::quote(item, crate::quote::SHORT)
                        ),
                    )
                })?;
                rows.addr.push(a);
                rows.size.push(z);
            }
            rows.end_row();
            lists_done[k] = true;
        }
        if !matched {
            return Err(ParseError::new(
                at as u64,
                "",
                format!(
                    "expected op_name:, task_index:, input address:, output address:, workspace address: \
                     or a blank line, found {}",
                    crate::quote::quote(line, crate::quote::SHORT)
                ),
            ));
        }
    }
    match state {
        Part::Header => {
            return Err(ParseError::new(
                last_at as u64,
                "task_index",
                "truncated file: the last record has no task_index line",
            ))
        }
        Part::Body => close(&mut t, &mut lists_done),
        Part::None => {}
    }
    t.version = if nontask { "2.0-2.2" } else { "r1.x-2.2" }.to_string();
    Ok(t)
}

fn missing_index(at: usize) -> ParseError {
    ParseError::new(
        at as u64,
        "task_index",
        "the previous record has no task_index line",
    )
}

/// `(0|0x<hex>)(<bytes>)`.
fn parse_item(item: &[u8]) -> Option<(u64, u64)> {
    let open = memchr::memchr(b'(', item)?;
    let inner = item.get(open + 1..)?.strip_suffix(b")")?;
    Some((lex::parse_ptr(item.get(..open)?)?, lex::parse_u64(inner)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_with_and_without_address_lines() {
        let buf = b"op_name:A\ntask_index:0\ttask_num:1\ttask0_stream_id:0\ttask0_type:0\ttask0_dump_flag:0\n\
output address:0x10(4)\t0(8)\t\n\nop_name:B-NonTask\ntask_index:1\ttask_num:0\ttask0_stream_id:0\ttask0_type:0\ttask0_dump_flag:1\n\n\
op_name:C\ntask_index:2\ttask_num:1\ttask0_stream_id:1\ttask0_type:0\ttask0_dump_flag:0\nworkspace address:0x20(2)\t\n";
        let t = parse(buf, "t.ir", None).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(
            t.outputs.row(0).collect::<Vec<_>>(),
            vec![(0x10, 4), (0, 8)]
        );
        assert_eq!(t.outputs.row(1).count(), 0);
        assert_eq!(t.workspaces.get(2, 0), Some((0x20, 2)));
        assert_eq!(t.inputs.row(2).count(), 0);
        assert_eq!(t.version, "2.0-2.2");
        assert!(t.dump_flag[1]);
    }
}
