//! Reader of the SOMAS cache `somas_meta/somas_graph_<G>_<hash>.json` (compact JSON, sorted keys):
//! the solved tensors (sizes, lifetimes, lifelong kinds, offsets) without nodes, names or types.

use crate::somas::lex::ParseError;
use crate::somas::model::{DumpFamily, Format, Lifelong, SomasModel, TensorKind};
use serde::Deserialize;

#[derive(Deserialize)]
struct CacheFile {
    tensors: Vec<CacheTensor>,
    #[serde(default)]
    reused_memory_size: Option<u64>,
    #[serde(default)]
    mem_offset: Option<u64>,
}

#[derive(Deserialize)]
struct CacheTensor {
    tensor_id: u32,
    size: u64,
    ori_size: u64,
    lifelong_value: u64,
    life_start: u32,
    life_end: u32,
    offset: u64,
}

/// True when `head` looks like the cache JSON (an object with `tensors` and `hash_id`).
pub fn looks_like(head: &[u8]) -> bool {
    let first = head.iter().find(|b| !b.is_ascii_whitespace());
    first == Some(&b'{')
        && memchr::memmem::find(head, b"\"hash_id\"").is_some()
        && memchr::memmem::find(head, b"\"tensors\"").is_some()
}

/// Parses the cache JSON held in `buf`; errors carry the byte offset of the failing line.
pub fn parse(buf: &[u8], file: &str) -> Result<SomasModel, ParseError> {
    let cache: CacheFile = serde_json::from_slice(buf).map_err(|e| {
        // serde_json reports a line: turn it back into the byte offset of that line.
        let line = e.line().max(1);
        let byte = if line <= 1 {
            0
        } else {
            memchr::memchr_iter(b'\n', buf)
                .nth(line - 2)
                .map_or(0, |i| i as u64 + 1)
        };
        ParseError::new(
            byte,
            "",
            format!("not a SOMAS cache JSON file: {e} (expected tensors[] with tensor_id, size, ori_size, lifelong_value, life_start, life_end, offset)"),
        )
    })?;
    let version = if cache.reused_memory_size.is_some() {
        "v1.10+"
    } else {
        "r1.x"
    };
    let mut model = SomasModel::empty(
        file,
        Format {
            family: DumpFamily::CacheJson,
            version: version.to_string(),
        },
    );
    let mut rows: Vec<CacheTensor> = cache.tensors;
    rows.sort_by_key(|t| t.tensor_id);
    if let Some(w) = rows.windows(2).find(|w| w[0].tensor_id == w[1].tensor_id) {
        return Err(ParseError::new(
            0,
            "tensor_id",
            format!("duplicate tensor id {} in tensors[]", w[0].tensor_id),
        ));
    }
    let t = &mut model.tensors;
    for c in &rows {
        let ll = Lifelong::from_number(c.lifelong_value).ok_or_else(|| {
            ParseError::new(
                0,
                "lifelong_value",
                format!(
                    "expected 0, 1, 2 or 3 for tensor {}, found {}",
                    c.tensor_id, c.lifelong_value
                ),
            )
        })?;
        t.id.push(c.tensor_id);
        t.aligned.push(c.size);
        t.original.push(c.ori_size);
        t.offset.push(c.offset);
        t.kind.push(TensorKind::Common);
        t.lifelong.push(ll);
        t.start.push(c.life_start);
        t.end.push(c.life_end);
        t.name.push(0);
        t.byte.push(0);
    }
    model.names.intern("");
    model.reused_total = cache.reused_memory_size.or(cache.mem_offset);
    model.placed = model.reused_total.unwrap_or(0) > 0;
    model.notes.push(
        "the SOMAS cache JSON has no nodes, names or tensor types: tensors are shown as Common and \
         the time axis is the lifetimes alone"
            .to_string(),
    );
    Ok(model)
}
