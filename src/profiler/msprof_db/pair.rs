//! Allocation and release events of `NPU_OP_MEM` paired into allocation rows, and the allocator's
//! totals after each event as its series.

use crate::profiler::csv_common::Warnings;
use crate::profiler::memory_record::Series;
use crate::profiler::operator_memory::{MemRow, RowSource, Total};
use crate::profiler::Interner;
use std::collections::HashMap;

/// What an event of `NPU_OP_MEM` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `allocate`.
    Alloc,
    /// `release`.
    Release,
}

/// One row of `NPU_OP_MEM`, checked.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub(super) ts: i64,
    pub(super) rowid: i64,
    /// Where the row's record starts in the file, for messages.
    pub(super) offset: u64,
    pub(super) kind: Kind,
    pub(super) addr: i64,
    pub(super) device: Option<i64>,
    pub(super) size: u64,
    /// Interned `cann::` name.
    pub(super) name: u32,
    /// `totalAllocate` after the event.
    pub(super) allocated: Option<u64>,
    /// `totalReserve` after the event.
    pub(super) reserved: Option<u64>,
}

/// Pairs `events` (any order) into rows and the `component` series.
///
/// Events are taken by time, then by rowid (the writer's order). An allocation opens its address
/// on its device; the next release of that address closes it (its time, totals and, when the
/// sizes differ, a warning). A release of an address not open frees memory allocated before the
/// capture: a row marked `negative` with only a release time, as the text export's negative sizes
/// are, and a warning counting them. An allocation of an address already open means the release
/// between them is missing: the first stays unreleased, with a warning. What is open at the end
/// was never released in the capture.
pub(super) fn pair(
    mut events: Vec<Event>,
    component: String,
    names: &mut Interner,
    file: &str,
    w: &mut Warnings,
) -> (Vec<MemRow>, Series) {
    events.sort_by_key(|e| (e.ts, e.rowid));
    let mut series = Series {
        component,
        ..Series::default()
    };
    let mut rows: Vec<MemRow> = Vec::new();
    let mut open: HashMap<(Option<i64>, i64), usize> = HashMap::new();
    let mut devices: HashMap<Option<i64>, u32> = HashMap::new();
    let no_stream = names.intern("");
    for e in &events {
        series.ts.push(e.ts);
        series.allocated.push(e.allocated);
        series.reserved.push(e.reserved);
        series.active.push(None);
        let device = *devices.entry(e.device).or_insert_with(|| {
            names.intern(&e.device.map(|d| format!("NPU:{d}")).unwrap_or_default())
        });
        let key = (e.device, e.addr);
        match e.kind {
            Kind::Alloc => {
                if open.contains_key(&key) {
                    w.add_keyed_at_byte(
                        file,
                        e.offset,
                        "NPU_OP_MEM.addr",
                        "allocated twice",
                        &format!(
                            "rowid {}: address {} is allocated again before a release; the \
                             earlier allocation is kept as never released",
                            e.rowid, e.addr
                        ),
                    );
                }
                let line = u64::try_from(e.rowid).unwrap_or(0);
                let mut m = MemRow::new(e.name, RowSource::Ge, e.size, false, line);
                m.set_alloc_ns(Some(e.ts));
                m.set_total(Total::AllocAllocated, e.allocated);
                m.set_total(Total::AllocReserved, e.reserved);
                m.stream = no_stream;
                m.device = device;
                open.insert(key, rows.len());
                rows.push(m);
            }
            Kind::Release => match open.remove(&key).and_then(|k| rows.get_mut(k)) {
                Some(m) => {
                    if m.size != e.size {
                        w.add_keyed_at_byte(
                            file,
                            e.offset,
                            "NPU_OP_MEM.size",
                            "release of another size",
                            &format!(
                                "rowid {}: releases {} bytes at address {}, allocated with {} \
                                 bytes; the allocation's size is kept",
                                e.rowid, e.size, e.addr, m.size
                            ),
                        );
                    }
                    m.set_release_ns(Some(e.ts));
                    m.set_total(Total::ReleaseAllocated, e.allocated);
                    m.set_total(Total::ReleaseReserved, e.reserved);
                    m.fill_lifetime();
                }
                None => {
                    w.add_keyed_at_byte(
                        file,
                        e.offset,
                        "NPU_OP_MEM.addr",
                        "release without allocation",
                        &format!(
                            "rowid {}: address {} is released but was not allocated in the \
                             capture; read as memory allocated before it",
                            e.rowid, e.addr
                        ),
                    );
                    let line = u64::try_from(e.rowid).unwrap_or(0);
                    let mut m = MemRow::new(e.name, RowSource::Ge, e.size, true, line);
                    m.set_release_ns(Some(e.ts));
                    m.set_total(Total::ReleaseAllocated, e.allocated);
                    m.set_total(Total::ReleaseReserved, e.reserved);
                    m.stream = no_stream;
                    m.device = device;
                    rows.push(m);
                }
            },
        }
    }
    series.shrink_to_fit();
    (rows, series)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts: i64, rowid: i64, kind: Kind, addr: i64, size: u64, total: u64) -> Event {
        Event {
            ts,
            rowid,
            offset: 0,
            kind,
            addr,
            device: Some(1),
            size,
            name: 0,
            allocated: Some(total),
            reserved: None,
        }
    }

    #[test]
    fn a_second_allocation_of_an_open_address_leaves_the_first_unreleased() {
        let mut names = Interner::new();
        let mut w = Warnings::default();
        let events = vec![
            ev(10, 1, Kind::Alloc, 7, 100, 100),
            ev(20, 2, Kind::Alloc, 7, 100, 200),
            ev(30, 3, Kind::Release, 7, 100, 100),
        ];
        let (rows, series) = pair(events, "GE".into(), &mut names, "x.db", &mut w);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].release_ns(), None);
        assert_eq!(rows[1].release_ns(), Some(30));
        assert_eq!(series.ts, [10, 20, 30]);
        let w = w.into_vec();
        assert_eq!(w.len(), 1);
        assert!(w[0].message.contains("allocated again"), "{w:?}");
        assert_eq!(names.get(rows[0].device), "NPU:1");
    }

    #[test]
    fn a_release_of_another_size_keeps_the_allocation_size_and_says_so() {
        let mut names = Interner::new();
        let mut w = Warnings::default();
        // Given out of time order: paired by time, not by rowid.
        let events = vec![
            ev(30, 1, Kind::Release, 7, 64, 0),
            ev(10, 2, Kind::Alloc, 7, 100, 100),
        ];
        let (rows, _) = pair(events, "GE".into(), &mut names, "x.db", &mut w);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].size, rows[0].release_ns()), (100, Some(30)));
        assert_eq!(rows[0].release_total_allocated(), Some(0));
        let w = w.into_vec();
        assert!(
            w.len() == 1 && w[0].message.contains("allocated with 100"),
            "{w:?}"
        );
    }
}
