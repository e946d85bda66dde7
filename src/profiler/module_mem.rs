//! `npu_module_mem.csv`: reserved memory per CANN module over time.
//!
//! Three header variants are accepted:
//! `Component,Timestamp(us),Total Reserved(MB),Device` (torch_npu ≤ 2.5.1),
//! `Device_id,Component,Timestamp(us),Total Reserved(MB),Device` (≥ 2.6.0), and CANN's raw
//! `…,Total Reserved(KB),…`. A reserved value of -1 KB means "only frees observed" and is kept as
//! unknown.

use super::csv_common::{
    component_and_time, parse_scaled_bytes, read_table, show_field, HeaderMap, Row, Warnings,
};
use crate::diag::Diagnostic;
use crate::source::Source;

/// One module's reserved memory over time.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ModuleSeries {
    /// Module name (`APP`, `GE`, `HCCL`, `SLOG`, …).
    pub module: String,
    /// Device (`NPU:0`), as written.
    pub device: String,
    /// Timestamps (ns), in file order.
    pub ts: Vec<i64>,
    /// Reserved bytes; `None` = unknown (empty, or the "only frees observed" marker).
    pub reserved: Vec<Option<u64>>,
}

impl ModuleSeries {
    /// Largest reserved value and its first time.
    pub fn peak(&self) -> Option<(u64, i64)> {
        let mut best: Option<(u64, i64)> = None;
        for (&t, v) in self.ts.iter().zip(&self.reserved) {
            if let Some(v) = *v {
                if best.is_none_or(|b| v > b.0) {
                    best = Some((v, t));
                }
            }
        }
        best
    }
}

/// A parsed `npu_module_mem.csv`.
#[derive(Debug, Clone, Default)]
pub struct ModuleMem {
    /// One series per (module, device), in order of first appearance.
    pub modules: Vec<ModuleSeries>,
    /// True when the file had a `Device_id` column (torch_npu ≥ 2.6.0 layout).
    pub has_device_id: bool,
    /// True when sizes were in KB (CANN raw layout) rather than MB.
    pub kb: bool,
    /// Skipped rows and bad values, counted.
    pub warnings: Vec<Diagnostic>,
}

const COMPONENT: usize = 0;
const TIMESTAMP: usize = 1;
const RESERVED: usize = 2;
const DEVICE: usize = 3;
const DEVICE_ID: usize = 4;
/// The columns read; `Total Reserved` in MB or KB (csv_common's `SIZE_UNITS`).
const COLUMNS: [&[&str]; 5] = [
    &["Component"],
    &["Timestamp(us)"],
    &["Total Reserved(MB)"],
    &["Device", "Device Type"],
    &["Device_id"],
];

/// Reads `npu_module_mem.csv` from `src`.
pub fn read_module_mem(
    src: &dyn Source,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<ModuleMem, Diagnostic> {
    let file = src.name().to_string();
    let mut out = ModuleMem::default();
    let mut warnings = Warnings::default();
    let locate = |h: &HeaderMap| {
        let has = |c: usize| h.index.get(c).copied().flatten().is_some();
        if has(COMPONENT) && has(TIMESTAMP) && has(RESERVED) {
            Ok(())
        } else {
            Err(format!(
                "not an npu_module_mem.csv header: expected [Device_id,]Component,Timestamp(us),\
                 Total Reserved(MB),Device (found: {})",
                h.shown()
            ))
        }
    };
    // Module → (device, series) pairs: looked up by `&str`, so a row allocates nothing; a fast
    // fixed hasher (the key count is capped at MAX_SERIES).
    let mut index: std::collections::HashMap<
        String,
        Vec<(String, usize)>,
        foldhash::fast::FixedState,
    > = Default::default();
    let on_row = |h: &HeaderMap, _: &(), row: &Row<'_>, w: &mut Warnings| {
        let col = |c: usize| h.index.get(c).copied().flatten();
        let Some((module, ts)) =
            component_and_time(row, h, (col(COMPONENT), col(TIMESTAMP)), w, &file)
        else {
            return;
        };
        let unit = h.units.get(RESERVED).copied().flatten().unwrap_or(1 << 20);
        let reserved = match row.get_bytes(col(RESERVED)) {
            None => None,
            Some(t) => {
                let v = parse_scaled_bytes(t, 0, unit);
                match v {
                    Some(v) if v >= 0 => Some(v.unsigned_abs()),
                    // -1 KB (-0.0009765625 MB): only frees were observed.
                    Some(_) => None,
                    None => {
                        w.add_keyed(
                            &file,
                            row.line,
                            row.byte,
                            "Total Reserved",
                            "bad size",
                            &format!("expected a number, found {}; read as empty", show_field(t)),
                        );
                        None
                    }
                }
            }
        };
        let device = row
            .text(col(DEVICE), w, &file, "Device")
            .unwrap_or_default();
        let found = index
            .get(module.as_ref())
            .and_then(|ds| ds.iter().find(|(d, _)| *d == device))
            .map(|&(_, i)| i);
        let at = match found {
            Some(i) => i,
            None if out.modules.len() >= super::memory_record::MAX_SERIES => {
                w.add_keyed(
                    &file,
                    row.line,
                    row.byte,
                    "Component",
                    "too many modules",
                    &format!(
                        "more than {} different (module, device) pairs (real files have about \
                         ten); rows of further modules skipped",
                        super::memory_record::MAX_SERIES
                    ),
                );
                return;
            }
            None => {
                let i = out.modules.len();
                out.modules.push(ModuleSeries {
                    module: module.to_string(),
                    device: device.to_string(),
                    ..ModuleSeries::default()
                });
                index
                    .entry(module.to_string())
                    .or_default()
                    .push((device.to_string(), i));
                i
            }
        };
        if let Some(m) = out.modules.get_mut(at) {
            m.ts.push(ts);
            m.reserved.push(reserved);
        }
    };
    let h = read_table(
        src,
        &COLUMNS,
        locate,
        on_row,
        |_, _| false,
        &mut warnings,
        progress,
    )?;
    out.has_device_id = h.index.get(DEVICE_ID).copied().flatten().is_some();
    out.kb = h.units.get(RESERVED).copied().flatten() == Some(1 << 10);
    out.warnings = warnings.into_vec();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::BytesSource;

    #[test]
    fn both_headers() {
        let old = "Component,Timestamp(us),Total Reserved(MB),Device\nSLOG,1736405443839379.660\t,0.0,NPU:0\nGE,1736405443839379.660\t,2.5,NPU:0\n";
        let new = "Device_id,Component,Timestamp(us),Total Reserved(MB),Device\n6,SLOG,1752042775768900.000\t,158.140625,NPU:6\n6,HCCL,1752042775768900.000\t,-0.0009765625,NPU:6\n";
        let a = read_module_mem(&BytesSource::new("a", old.as_bytes().to_vec()), None).unwrap();
        assert_eq!(a.modules.len(), 2);
        assert!(!a.has_device_id);
        assert_eq!(
            a.modules[1].peak(),
            Some((5 << 19, 1_736_405_443_839_379_660))
        );
        let b = read_module_mem(&BytesSource::new("b", new.as_bytes().to_vec()), None).unwrap();
        assert!(b.has_device_id);
        assert_eq!(b.modules[0].reserved[0], Some(158 * 1048576 + 147456));
        assert_eq!(b.modules[1].reserved[0], None);
    }
}
