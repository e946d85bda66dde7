//! Injecting exactly one known change into a copy of a torch_npu run folder's text files, so a
//! comparison has a candidate whose difference from the baseline is known in advance.
//!
//! Works on any run folder's `operator_memory.csv`, `memory_record.csv` and `trace_view.json`
//! (generated or real): it adds one op with its own call stack to the trace, one allocation row
//! inside that op, and moves the allocator's totals in `memory_record.csv` by the block's size
//! over the block's lifetime (the framework component — `PTA` or `MindSpore` — and `PTA+GE`).
//! Nothing else changes, and [`Injected`] says, from the text alone, what the block is and what
//! the framework peak was before and after. Two changes:
//!
//! - [`Change::GrowAtPeak`]: a block allocated 1 ns before the first time the framework's
//!   allocated total peaks and released 1 ns after, so the peak grows by the block at the same
//!   time and the live set at the peak gains it under the new op's frame;
//! - [`Change::Unreleased`]: a block allocated 1 µs after the last allocator record and never
//!   released (the peak moves only when the final total plus the block exceeds it).

use super::{bytes_to_unit_text, ns_to_us_text};

/// The change to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// One block of this many bytes alive exactly across the framework peak.
    GrowAtPeak(u64),
    /// One block of this many bytes allocated after the last record, never released.
    Unreleased(u64),
}

/// The text files of one run folder (what the injection edits).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunTexts {
    /// `operator_memory.csv`.
    pub operator_memory: String,
    /// `memory_record.csv`.
    pub memory_record: String,
    /// `trace_view.json`.
    pub trace_view: String,
}

impl RunTexts {
    /// The paths of the three files under run folder `run_dir` (operator_memory, memory_record,
    /// trace_view), in the order of the fields.
    pub fn paths(run_dir: &str) -> [String; 3] {
        let d = run_dir.trim_end_matches('/');
        [
            format!("{d}/ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
            format!("{d}/ASCEND_PROFILER_OUTPUT/memory_record.csv"),
            format!("{d}/ASCEND_PROFILER_OUTPUT/trace_view.json"),
        ]
    }

    /// Takes the three files of `run_dir` from `files` (path, bytes) as text.
    pub fn take(files: &[(String, Vec<u8>)], run_dir: &str) -> Result<RunTexts, String> {
        let [om, mr, tv] = Self::paths(run_dir);
        let text = |p: &str| -> Result<String, String> {
            let b = files
                .iter()
                .find(|(q, _)| q == p)
                .map(|(_, b)| b)
                .ok_or_else(|| format!("{p}: missing (the injection needs it)"))?;
            String::from_utf8(b.clone()).map_err(|e| format!("{p}: not UTF-8: {e}"))
        };
        Ok(RunTexts {
            operator_memory: text(&om)?,
            memory_record: text(&mr)?,
            trace_view: text(&tv)?,
        })
    }

    /// Puts the three files back into `files`, replacing those of `run_dir`.
    pub fn put(self, files: &mut [(String, Vec<u8>)], run_dir: &str) {
        let [om, mr, tv] = Self::paths(run_dir);
        for (p, b) in files.iter_mut() {
            if *p == om {
                *b = self.operator_memory.as_bytes().to_vec();
            } else if *p == mr {
                *b = self.memory_record.as_bytes().to_vec();
            } else if *p == tv {
                *b = self.trace_view.as_bytes().to_vec();
            }
        }
    }
}

/// What was injected, and the framework figures before and after, read from the text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Injected {
    /// Op name of the new op and its allocation row.
    pub op_name: String,
    /// The user frame of the new op's call stack (its top user frame).
    pub frame: String,
    /// Block size in bytes.
    pub bytes: u64,
    /// Allocation time (ns).
    pub alloc_ns: i64,
    /// Release time (ns); `None` = never released.
    pub release_ns: Option<i64>,
    /// Framework component edited (`PTA` or `MindSpore`).
    pub component: String,
    /// Peak allocated before (bytes) and when it was first reached (ns).
    pub peak_before: (u64, i64),
    /// Peak allocated after, and when.
    pub peak_after: (u64, i64),
    /// Peak reserved before.
    pub reserved_peak_before: u64,
    /// Peak reserved after.
    pub reserved_peak_after: u64,
}

/// The op name of an injected block (no real op has it, so its group is new).
pub fn op_name(change: Change) -> &'static str {
    match change {
        Change::GrowAtPeak(_) => "memlens::injected_at_peak",
        Change::Unreleased(_) => "memlens::injected_unreleased",
    }
}

/// The user frame of an injected block's call stack.
pub fn frame(change: Change) -> &'static str {
    match change {
        Change::GrowAtPeak(_) => "/home/user/project/injected.py(7): grow_at_peak",
        Change::Unreleased(_) => "/home/user/project/injected.py(19): keep_unreleased",
    }
}

/// Parses microseconds text (`1736405443871259.720`, optional trailing tab) into ns, exactly.
fn us_to_ns(s: &str) -> Option<i64> {
    let s = s.trim();
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let neg = int.starts_with('-');
    let int: i64 = int.trim_start_matches('-').parse().ok()?;
    let mut f = frac.as_bytes().iter().take(3).try_fold(0i64, |a, &c| {
        c.is_ascii_digit().then(|| a * 10 + i64::from(c - b'0'))
    })?;
    for _ in frac.len().min(3)..3 {
        f *= 10;
    }
    let v = int.checked_mul(1000)?.checked_add(f)?;
    Some(if neg { -v } else { v })
}

/// Parses an MB decimal into bytes (rounded to the nearest byte when not exact).
fn mb_to_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let int: u128 = int.parse().ok()?;
    let digits = frac.len().min(30) as u32;
    let f: u128 = if digits == 0 {
        0
    } else {
        frac.get(..digits as usize)?.parse().ok()?
    };
    let scale = 10u128.checked_pow(digits)?;
    let bytes = int.checked_mul(1 << 20)? + (f * (1 << 20) + scale / 2) / scale;
    u64::try_from(bytes).ok()
}

fn mb(bytes: u64) -> String {
    bytes_to_unit_text(i128::from(bytes), 1 << 20)
}

/// One `memory_record.csv` data line, split.
struct Rec {
    fields: Vec<String>,
    ts: Option<i64>,
}

struct Columns {
    component: usize,
    ts: usize,
    allocated: usize,
    reserved: Option<usize>,
    active: Option<usize>,
}

fn column(header: &[&str], name: &str) -> Option<usize> {
    header.iter().position(|h| h.trim() == name)
}

fn field(fields: &[String], i: usize) -> &str {
    fields.get(i).map_or("", |s| s.as_str())
}

fn set(fields: &mut [String], i: usize, v: String) {
    if let Some(f) = fields.get_mut(i) {
        *f = v;
    }
}

/// The line ending of a text (`\r\n` when its first line ends so).
fn eol(text: &str) -> &'static str {
    match text.split_once('\n') {
        Some((first, _)) if first.ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// Peak allocated (first time reached) and peak reserved of `comp`'s records.
fn peaks(recs: &[Rec], c: &Columns, comp: &str) -> ((u64, i64), u64) {
    let mut best: Option<(u64, i64)> = None;
    let mut reserved = 0;
    let mut ordered: Vec<&Rec> = recs
        .iter()
        .filter(|r| field(&r.fields, c.component) == comp && r.ts.is_some())
        .collect();
    ordered.sort_by_key(|r| r.ts);
    for r in ordered {
        let t = r.ts.unwrap_or(0);
        if let Some(v) = mb_to_bytes(field(&r.fields, c.allocated)) {
            if best.is_none_or(|b| v > b.0) {
                best = Some((v, t));
            }
        }
        if let Some(v) = c.reserved.and_then(|i| mb_to_bytes(field(&r.fields, i))) {
            reserved = reserved.max(v);
        }
    }
    (best.unwrap_or((0, 0)), reserved)
}

/// Adds `bytes` to `comp`'s totals over `[t_a, t_r)` (`t_r = None`: to the end): records inside
/// move, and a record at `t_a` (and at `t_r`) marks the block's allocation (and release). Returns
/// the totals (allocated, reserved, active) right after the allocation and right after the
/// release, for the operator_memory row.
type Totals = (Option<u64>, Option<u64>, Option<u64>);

fn shift(
    recs: &mut Vec<Rec>,
    c: &Columns,
    comp: &str,
    bytes: u64,
    t_a: i64,
    t_r: Option<i64>,
) -> Result<(Totals, Totals), String> {
    let idx: Vec<usize> = (0..recs.len())
        .filter(|&i| {
            recs.get(i)
                .is_some_and(|r| field(&r.fields, c.component) == comp && r.ts.is_some())
        })
        .collect();
    if idx.is_empty() {
        return Ok(((None, None, None), (None, None, None)));
    }
    let times: Vec<i64> = recs.iter().map(|r| r.ts.unwrap_or(i64::MIN)).collect();
    let ts = |i: usize| times.get(i).copied().unwrap_or(i64::MIN);
    if idx.iter().any(|&i| ts(i) == t_a || Some(ts(i)) == t_r) {
        return Err(format!(
            "memory_record.csv: a {comp} record already sits at the injection's own nanosecond"
        ));
    }
    // Records in time order (stable: file order among equal times).
    let mut ordered = idx.clone();
    ordered.sort_by_key(|&i| ts(i));
    let before = |t: i64| ordered.iter().rev().find(|&&i| ts(i) < t).copied();
    let Some(prev) = before(t_a) else {
        return Err(format!(
            "memory_record.csv: no {comp} record before the injection time (the peak is the first record)"
        ));
    };
    let totals = |r: &Rec| -> Totals {
        (
            mb_to_bytes(field(&r.fields, c.allocated)),
            c.reserved.and_then(|i| mb_to_bytes(field(&r.fields, i))),
            c.active.and_then(|i| mb_to_bytes(field(&r.fields, i))),
        )
    };
    let release_base = t_r.and_then(&before).and_then(|i| recs.get(i)).map(totals);
    let grow = |fields: &mut Vec<String>| {
        let a = mb_to_bytes(field(fields, c.allocated)).map(|v| v.saturating_add(bytes));
        if let Some(a) = a {
            set(fields, c.allocated, mb(a));
        }
        if let Some(i) = c.active {
            if let Some(v) = mb_to_bytes(field(fields, i)) {
                set(fields, i, mb(v.saturating_add(bytes)));
            }
        }
        if let (Some(i), Some(a)) = (c.reserved, a) {
            // The allocator reserves at least what it hands out.
            if let Some(v) = mb_to_bytes(field(fields, i)) {
                set(fields, i, mb(v.max(a)));
            }
        }
    };
    let with_ts = |fields: &[String], t: i64| -> Vec<String> {
        let mut f = fields.to_vec();
        let tab = if field(fields, c.ts).ends_with('\t') {
            "\t"
        } else {
            ""
        };
        set(&mut f, c.ts, format!("{}{tab}", ns_to_us_text(t)));
        f
    };
    for &i in &idx {
        let t = ts(i);
        if t >= t_a && t_r.is_none_or(|r| t < r) {
            if let Some(r) = recs.get_mut(i) {
                grow(&mut r.fields);
            }
        }
    }
    let mut alloc_rec = with_ts(
        &recs.get(prev).map_or_else(Vec::new, |r| r.fields.clone()),
        t_a,
    );
    grow(&mut alloc_rec);
    let at_alloc = totals(&Rec {
        fields: alloc_rec.clone(),
        ts: Some(t_a),
    });
    let mut new = vec![Rec {
        fields: alloc_rec,
        ts: Some(t_a),
    }];
    let mut at_release = (None, None, None);
    if let Some(t) = t_r {
        // The release record carries the totals in force before the block existed, as they were.
        if let Some(i) = before(t) {
            let mut f = with_ts(&recs.get(i).map_or_else(Vec::new, |r| r.fields.clone()), t);
            if let Some(base) = release_base {
                if let Some(v) = base.0 {
                    set(&mut f, c.allocated, mb(v));
                }
                if let (Some(k), Some(v)) = (c.active, base.2) {
                    set(&mut f, k, mb(v));
                }
                if let (Some(k), Some(v)) = (c.reserved, base.1) {
                    set(&mut f, k, mb(v));
                }
                at_release = base;
            }
            new.push(Rec {
                fields: f,
                ts: Some(t),
            });
        }
    }
    for r in new {
        let t = r.ts.unwrap_or(i64::MAX);
        let pos = recs
            .iter()
            .position(|x| x.ts.is_some_and(|xt| xt > t))
            .unwrap_or(recs.len());
        recs.insert(pos, r);
    }
    Ok((at_alloc, at_release))
}

fn opt_mb(v: Option<u64>) -> String {
    v.map(mb).unwrap_or_default()
}

/// Injects `change` into `run`; returns what was injected.
pub fn inject(run: &mut RunTexts, change: Change) -> Result<Injected, String> {
    let (bytes, op) = match change {
        Change::GrowAtPeak(b) | Change::Unreleased(b) => (b, op_name(change)),
    };
    if bytes == 0 {
        return Err("the injected block must have at least 1 byte".into());
    }
    // memory_record.csv
    let nl = eol(&run.memory_record);
    let mut lines = run.memory_record.lines();
    let header_line = lines.next().ok_or("memory_record.csv is empty")?;
    let header: Vec<&str> = header_line.split(',').collect();
    let need = |n: &str| column(&header, n).ok_or(format!("memory_record.csv: no column {n}"));
    let c = Columns {
        component: need("Component")?,
        ts: need("Timestamp(us)")?,
        allocated: need("Total Allocated(MB)")?,
        reserved: column(&header, "Total Reserved(MB)"),
        active: column(&header, "Total Active(MB)"),
    };
    let mut recs: Vec<Rec> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let fields: Vec<String> = l.split(',').map(str::to_string).collect();
            let ts = us_to_ns(field(&fields, c.ts));
            Rec { fields, ts }
        })
        .collect();
    let comp = ["PTA", "MindSpore"]
        .into_iter()
        .find(|k| recs.iter().any(|r| field(&r.fields, c.component) == *k))
        .ok_or("memory_record.csv: no PTA or MindSpore records")?;
    let (peak_before, reserved_peak_before) = peaks(&recs, &c, comp);
    let (t_a, t_r) = match change {
        Change::GrowAtPeak(_) => (peak_before.1 - 1, Some(peak_before.1 + 1)),
        Change::Unreleased(_) => {
            let last = recs.iter().filter_map(|r| r.ts).max().unwrap_or(0);
            (last + 1000, None)
        }
    };
    let (at_alloc, at_release) = shift(&mut recs, &c, comp, bytes, t_a, t_r)?;
    if recs
        .iter()
        .any(|r| field(&r.fields, c.component) == "PTA+GE")
    {
        shift(&mut recs, &c, "PTA+GE", bytes, t_a, t_r)?;
    }
    let (peak_after, reserved_peak_after) = peaks(&recs, &c, comp);
    let mut mr = String::with_capacity(run.memory_record.len() + 512);
    mr.push_str(header_line);
    mr.push_str(nl);
    for r in &recs {
        mr.push_str(&r.fields.join(","));
        mr.push_str(nl);
    }
    run.memory_record = mr;

    // operator_memory.csv: one row, its cells by header name.
    let nl = eol(&run.operator_memory);
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(run.operator_memory.as_bytes());
    let oheader: Vec<String> = rd
        .headers()
        .map_err(|e| format!("operator_memory.csv: {e}"))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let first = rd
        .records()
        .next()
        .and_then(Result::ok)
        .ok_or("operator_memory.csv has no data row")?;
    let copy = |name: &str| {
        oheader
            .iter()
            .position(|h| h == name)
            .and_then(|i| first.get(i))
            .unwrap_or("")
            .to_string()
    };
    let (stream, device) = (copy("Stream Ptr"), copy("Device Type"));
    let dur = t_r.map(|r| ns_to_us_text(r - t_a));
    let cells: Vec<String> = oheader
        .iter()
        .map(|h| match h.as_str() {
            "Name" => op.to_string(),
            "Size(KB)" => bytes_to_unit_text(i128::from(bytes), 1024),
            "Allocation Time(us)" => format!("{}\t", ns_to_us_text(t_a)),
            "Release Time(us)" | "Active Release Time(us)" => t_r
                .map(|r| format!("{}\t", ns_to_us_text(r)))
                .unwrap_or_default(),
            "Duration(us)" | "Active Duration(us)" => {
                dur.clone().map(|d| format!("{d}\t")).unwrap_or_default()
            }
            "Allocation Total Allocated(MB)" => opt_mb(at_alloc.0),
            "Allocation Total Reserved(MB)" => opt_mb(at_alloc.1),
            "Allocation Total Active(MB)" => opt_mb(at_alloc.2),
            "Release Total Allocated(MB)" => opt_mb(at_release.0),
            "Release Total Reserved(MB)" => opt_mb(at_release.1),
            "Release Total Active(MB)" => opt_mb(at_release.2),
            "Stream Ptr" => stream.clone(),
            "Device Type" => device.clone(),
            _ => String::new(),
        })
        .collect();
    if !run.operator_memory.ends_with('\n') {
        run.operator_memory.push_str(nl);
    }
    run.operator_memory.push_str(&cells.join(","));
    run.operator_memory.push_str(nl);

    // trace_view.json: the op, with a stack whose user frame is the injected one, spanning the
    // block's allocation (1 ns either side).
    let open = run
        .trace_view
        .find('[')
        .ok_or("trace_view.json: no JSON array")?;
    let pid = run
        .trace_view
        .find("\"pid\":")
        .and_then(|i| run.trace_view.get(i + 6..))
        .map(|s| {
            s.trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "1".to_string());
    let stack = format!(
        "{};\r\n/usr/lib/python3.9/site-packages/torch/nn/modules/module.py(1527): _call_impl;\r\n<string>(1): <module>",
        frame(change)
    );
    let end = t_r.unwrap_or(t_a) + 1;
    let event = format!(
        "{{\"ph\": \"X\", \"name\": {}, \"pid\": {pid}, \"tid\": {pid}, \"ts\": \"{}\", \"dur\": {}, \"cat\": \"cpu_op\", \"args\": {{\"Sequence number\": -1, \"Fwd thread id\": 0, \"Call stack\": {}}}}}",
        serde_json::to_string(op).map_err(|e| e.to_string())?,
        ns_to_us_text(t_a - 1),
        ns_to_us_text(end - (t_a - 1)),
        serde_json::to_string(&stack).map_err(|e| e.to_string())?,
    );
    let empty = run
        .trace_view
        .get(open + 1..)
        .is_some_and(|rest| rest.trim_start().starts_with(']'));
    let sep = if empty { "" } else { ", " };
    run.trace_view
        .insert_str(open + 1, &format!("{event}{sep}"));

    Ok(Injected {
        op_name: op.to_string(),
        frame: frame(change).to_string(),
        bytes,
        alloc_ns: t_a,
        release_ns: t_r,
        component: comp.to_string(),
        peak_before,
        peak_after,
        reserved_peak_before,
        reserved_peak_after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_text_conversions() {
        assert_eq!(
            us_to_ns("1736405443871259.720\t"),
            Some(1_736_405_443_871_259_720)
        );
        assert_eq!(us_to_ns("12.5"), Some(12_500));
        assert_eq!(mb_to_bytes("954.3701171875"), Some(1_000_729_600));
        assert_eq!(mb_to_bytes("1452.0"), Some(1452 << 20));
        assert_eq!(mb_to_bytes(""), None);
    }
}
