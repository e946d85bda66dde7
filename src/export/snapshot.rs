//! The files `memlens snapshot --out DIR` writes and the page offers as downloads (the same
//! bytes: both call [`write_named`]).

use super::write_csv;
use crate::snapshot::analysis::{Analysis, DeviceAnalysis, FrameGroup, Origin, NONE};
use crate::snapshot::model::Snapshot;
use crate::snapshot::summary::{group_label, summary, to_json};
use std::io::{self, Write};

/// The files of the set, in the order they are written.
pub const FILES: [&str; 7] = [
    "summary.json",
    "segments.csv",
    "blocks.csv",
    "allocations.csv",
    "live_at_peak_by_frame.csv",
    "live_at_snapshot_by_frame.csv",
    "ooms.csv",
];

/// `summary.json`: exactly what `memlens snapshot --json` prints.
pub fn summary_json(snap: &Snapshot, a: &Analysis) -> String {
    to_json(&summary(snap, a))
}

/// The text `memlens snapshot` prints: per device the reserved and allocated totals, the peak and
/// who holds it, free memory in segments and the OOMs; then the reader's warnings.
pub fn report_text(snap: &Snapshot, a: &Analysis) -> String {
    // Writing to a String cannot fail.
    use std::fmt::Write as _;
    let mut out = String::new();
    let mib = |b: i64| b as f64 / (1u64 << 20) as f64;
    let _ = writeln!(
        out,
        "{}: {}, {} segments, {} frames, {} stacks",
        snap.file,
        crate::snapshot::form(snap.protocol),
        snap.segments.len(),
        snap.frames.len(),
        snap.stacks.len().saturating_sub(1)
    );
    for d in &a.devices {
        let _ = writeln!(
            out,
            "device {}: reserved {:.1} MiB in {} segments, allocated {:.1} MiB in {} blocks; {} trace entries, {} OOMs",
            d.device,
            mib(d.reserved_bytes as i64),
            d.segments.len(),
            mib(d.allocated_bytes as i64),
            d.by_state[0].count,
            d.trace_entries,
            d.ooms.len()
        )
        ;
        let at = match (d.peak_trace_index, d.peak_time_us) {
            (Some(i), Some(t)) => format!("at entry {i} (time_us {t})"),
            (Some(i), None) => format!("at entry {i}"),
            _ => "before the first entry".to_string(),
        };
        let _ = writeln!(
            out,
            "  peak allocated {:.1} MiB {at}",
            mib(d.peak_allocated_bytes)
        );
        for g in d.live_at_peak.iter().take(5) {
            let _ = writeln!(
                out,
                "    at peak: {:>10.1} MiB in {:>6} allocations  {}",
                mib(g.bytes as i64),
                g.count,
                group_label(snap, g.frame)
            );
        }
        let _ = writeln!(
            out,
            "  free in segments {:.1} MiB, largest free block {:.1} MiB",
            mib(d.fragmentation.iter().map(|f| f.free as i64).sum()),
            mib(d.largest_free_block as i64)
        );
        for o in &d.ooms {
            let _ = writeln!(
                out,
                "  OOM at entry {}: {:.1} MiB requested, {} free",
                o.index,
                mib(o.size as i64),
                o.device_free.map_or("unknown".to_string(), |f| format!(
                    "{:.1} MiB",
                    mib(f as i64)
                ))
            );
        }
    }
    for w in &snap.warnings {
        let _ = writeln!(out, "{w}");
    }
    out
}

fn hex(v: u64) -> String {
    format!("0x{v:x}")
}

fn top(snap: &Snapshot, a: &Analysis, stack: u32) -> String {
    group_label(
        snap,
        a.top_frame.get(stack as usize).copied().unwrap_or(NONE),
    )
}

fn index(v: u32) -> String {
    if v == NONE {
        String::new()
    } else {
        v.to_string()
    }
}

/// Columns of `segments.csv`.
pub const SEGMENT_COLUMNS: [&str; 12] = [
    "device",
    "address",
    "total_size",
    "allocated_bytes",
    "free_bytes",
    "largest_free_block",
    "blocks",
    "stream",
    "segment_type",
    "is_expandable",
    "pool_id",
    "top_frame",
];

fn write_segments<W: Write>(snap: &Snapshot, a: &Analysis, out: W) -> io::Result<()> {
    let rows = a.devices.iter().flat_map(|d| {
        d.fragmentation.iter().map(move |f| {
            let s = &snap.segments[f.segment as usize];
            vec![
                d.device.to_string(),
                hex(s.address),
                s.total_size.to_string(),
                f.allocated.to_string(),
                f.free.to_string(),
                f.largest_free_block.to_string(),
                s.block_count.to_string(),
                s.stream.to_string(),
                s.segment_type.label().to_string(),
                s.is_expandable.map_or(String::new(), |b| b.to_string()),
                s.pool_id
                    .map_or(String::new(), |(x, y)| format!("({x}, {y})")),
                top(snap, a, s.stack),
            ]
        })
    });
    write_csv(out, &SEGMENT_COLUMNS, rows)
}

/// Columns of `blocks.csv`.
pub const BLOCK_COLUMNS: [&str; 7] = [
    "device",
    "segment_address",
    "address",
    "size",
    "requested_size",
    "state",
    "top_frame",
];

fn write_blocks<W: Write>(snap: &Snapshot, a: &Analysis, out: W) -> io::Result<()> {
    let rows = a.devices.iter().flat_map(|d| {
        d.segments.iter().flat_map(move |&si| {
            let s = &snap.segments[si as usize];
            snap.blocks_of(s).iter().map(move |b| {
                vec![
                    d.device.to_string(),
                    hex(s.address),
                    hex(b.address),
                    b.size.to_string(),
                    b.requested_size.to_string(),
                    b.state.label().to_string(),
                    top(snap, a, b.stack),
                ]
            })
        })
    });
    write_csv(out, &BLOCK_COLUMNS, rows)
}

/// Columns of `allocations.csv`.
pub const ALLOCATION_COLUMNS: [&str; 8] = [
    "device",
    "address",
    "size",
    "alloc_index",
    "free_index",
    "origin",
    "top_frame",
    "stacking_order",
];

fn origin(o: Origin) -> &'static str {
    match o {
        Origin::Alloc => "trace",
        Origin::FreeOnly => "before_trace_freed_in_it",
        Origin::Block => "before_trace_still_allocated",
    }
}

fn write_allocations<W: Write>(snap: &Snapshot, a: &Analysis, out: W) -> io::Result<()> {
    let rows = a.devices.iter().flat_map(|d| {
        d.elements.iter().enumerate().map(move |(i, e)| {
            vec![
                d.device.to_string(),
                hex(e.addr),
                e.size.to_string(),
                index(e.start),
                index(e.end),
                origin(e.origin).to_string(),
                top(snap, a, e.stack),
                i.to_string(),
            ]
        })
    });
    write_csv(out, &ALLOCATION_COLUMNS, rows)
}

/// Columns of the two `*_by_frame.csv` files.
pub const GROUP_COLUMNS: [&str; 7] = [
    "device", "rank", "frame", "filename", "line", "bytes", "count",
];

fn write_groups<W: Write>(
    snap: &Snapshot,
    a: &Analysis,
    pick: fn(&DeviceAnalysis) -> &[FrameGroup],
    out: W,
) -> io::Result<()> {
    let rows = a.devices.iter().flat_map(|d| {
        pick(d).iter().enumerate().map(move |(i, g)| {
            let f = snap.frames.get(g.frame);
            vec![
                d.device.to_string(),
                (i + 1).to_string(),
                f.map_or_else(
                    || group_label(snap, g.frame),
                    |f| snap.strings.get(f.name).to_string(),
                ),
                f.map_or(String::new(), |f| snap.strings.get(f.filename).to_string()),
                f.map_or(String::new(), |f| f.line.to_string()),
                g.bytes.to_string(),
                g.count.to_string(),
            ]
        })
    });
    write_csv(out, &GROUP_COLUMNS, rows)
}

/// Columns of `ooms.csv`.
pub const OOM_COLUMNS: [&str; 6] = [
    "device",
    "trace_index",
    "time_us",
    "size",
    "device_free",
    "stream",
];

fn write_ooms<W: Write>(a: &Analysis, out: W) -> io::Result<()> {
    let rows = a.devices.iter().flat_map(|d| {
        d.ooms.iter().map(move |o| {
            vec![
                d.device.to_string(),
                o.index.to_string(),
                o.time_us.map_or(String::new(), |t| t.to_string()),
                o.size.to_string(),
                o.device_free.map_or(String::new(), |f| f.to_string()),
                o.stream.to_string(),
            ]
        })
    });
    write_csv(out, &OOM_COLUMNS, rows)
}

/// Writes the file `name` of [`FILES`]; `None` for another name.
pub fn write_named<W: Write>(
    name: &str,
    snap: &Snapshot,
    a: &Analysis,
    mut out: W,
) -> Option<io::Result<()>> {
    Some(match name {
        "summary.json" => out.write_all(summary_json(snap, a).as_bytes()),
        "segments.csv" => write_segments(snap, a, out),
        "blocks.csv" => write_blocks(snap, a, out),
        "allocations.csv" => write_allocations(snap, a, out),
        "live_at_peak_by_frame.csv" => write_groups(snap, a, |d| &d.live_at_peak, out),
        "live_at_snapshot_by_frame.csv" => write_groups(snap, a, |d| &d.live_at_snapshot, out),
        "ooms.csv" => write_ooms(a, out),
        _ => return None,
    })
}
