//! Generated snapshots: the reader finds exactly what the generator's simulation wrote (entries
//! per action, segments, blocks, reserved and allocated bytes), in every layout and protocol;
//! Python's own `pickle` loads them (when `python3` is installed) with the same counts.

use memlens::snapshot::generate::{generate, GenConfig, GenLayout, GenStats, ACTIONS};
use memlens::snapshot::model::Layout;
use memlens::snapshot::{self, analysis};
use memlens::source::BytesSource;

fn make(cfg: &GenConfig) -> (Vec<u8>, GenStats) {
    let mut out = Vec::new();
    let stats = generate(cfg, &mut out).expect("generates");
    (out, stats)
}

fn check(cfg: &GenConfig) -> Vec<u8> {
    let (bytes, stats) = make(cfg);
    assert_eq!(stats.bytes, bytes.len() as u64);
    let snap = snapshot::read(&BytesSource::new("gen.pickle", bytes.clone()))
        .unwrap_or_else(|d| panic!("{cfg:?}: {d}"));
    assert!(snap.warnings.is_empty(), "{cfg:?}: {:?}", snap.warnings);
    assert_eq!(snap.protocol, cfg.protocol);
    let a = analysis::analyse(&snap);
    assert_eq!(a.devices.len(), cfg.devices as usize, "{cfg:?}");
    for (d, s) in a.devices.iter().zip(&stats.devices) {
        assert_eq!(d.device, i64::from(s.device));
        assert_eq!(d.segments.len() as u64, s.segments, "{cfg:?} segments");
        assert_eq!(d.blocks, s.blocks, "{cfg:?} blocks");
        assert_eq!(d.reserved_bytes, s.reserved_bytes, "{cfg:?} reserved");
        assert_eq!(d.allocated_bytes, s.allocated_bytes, "{cfg:?} allocated");
        assert_eq!(d.trace_entries, s.entries, "{cfg:?} entries");
        for (k, name) in ACTIONS.iter().enumerate() {
            let got = d.actions.iter().find(|(a, _)| a == name).map_or(0, |x| x.1);
            assert_eq!(got, s.actions[k], "{cfg:?} {name}");
        }
        let expandable = d
            .segments
            .iter()
            .filter(|&&i| snap.segments[i as usize].is_expandable == Some(true))
            .count() as u64;
        assert_eq!(expandable, s.expandable_segments, "{cfg:?}");
        assert_eq!(d.ooms.len() as u64, s.actions[7]);
        // The trace and the snapshot agree: replaying the trace back from the snapshot never
        // goes below zero (the allocations made before the trace are still there), and the
        // curve ends at the snapshot's figure.
        assert!(
            d.baseline_bytes >= 0,
            "{cfg:?}: baseline {}",
            d.baseline_bytes
        );
        if let Some(t) = d.trace {
            let curve = analysis::allocated_curve(&snap.traces[t], d.baseline_bytes);
            assert!(curve.iter().all(|&v| v >= 0), "{cfg:?}");
            assert_eq!(curve.last().copied(), Some(d.allocated_bytes as i64));
        }
        assert!(d.peak_allocated_bytes >= d.allocated_bytes as i64);
    }
    match cfg.layout {
        GenLayout::SegmentList => assert_eq!(snap.layout, Layout::SegmentList),
        GenLayout::Torch20 => {
            assert_eq!(
                snap.layout,
                Layout::Dict(vec!["segments".into(), "device_traces".into()])
            );
            assert!(snap
                .segments
                .iter()
                .all(|s| s.pool_id.is_none() && s.is_expandable.is_none()));
            assert!(snap
                .traces
                .iter()
                .all(|t| t.time_us.iter().all(|&x| x == i64::MIN)));
            // Blocks have no address: it comes from the segment and the sizes before it.
            for s in &snap.segments {
                let mut at = s.address;
                for b in snap.blocks_of(s) {
                    assert_eq!(b.address, at);
                    at += b.size;
                }
                assert_eq!(at, s.address + s.total_size);
            }
            // Allocated blocks take their stack and requested size from their history.
            assert!(snap
                .blocks
                .iter()
                .filter(|b| b.state == snapshot::model::BlockState::ActiveAllocated)
                .all(|b| b.stack != 0 && b.requested_size > 0));
        }
        GenLayout::Current => assert_eq!(
            snap.layout,
            Layout::Dict(vec![
                "segments".into(),
                "device_traces".into(),
                "allocator_settings".into(),
                "external_annotations".into()
            ])
        ),
    }
    bytes
}

#[test]
fn every_layout_and_protocol_reads_back_what_was_written() {
    for layout in [
        GenLayout::Current,
        GenLayout::Torch20,
        GenLayout::SegmentList,
    ] {
        for protocol in [2, 4, 5] {
            for (devices, expandable, ooms) in [(1, false, 0), (3, true, 2)] {
                check(&GenConfig {
                    target_bytes: 300_000,
                    devices,
                    seed: 3,
                    layout,
                    protocol,
                    expandable,
                    ooms,
                    max_depth: 120,
                });
            }
        }
    }
}

#[test]
fn deep_stacks_and_ooms_are_there() {
    let cfg = GenConfig {
        target_bytes: 4_000_000,
        devices: 2,
        seed: 11,
        layout: GenLayout::Current,
        protocol: 4,
        expandable: true,
        ooms: 2,
        max_depth: 300,
    };
    let (bytes, stats) = make(&cfg);
    let snap = snapshot::read(&BytesSource::new("gen.pickle", bytes)).unwrap();
    let deepest = (0..snap.stacks.len() as u32)
        .map(|s| snap.stacks.get(s).len())
        .max()
        .unwrap();
    assert!((294..=300).contains(&deepest), "{deepest}");
    for d in &stats.devices {
        assert_eq!(d.actions[7], 2, "two OOMs per device");
        assert!(d.actions[5] > 0, "segment_map on expandable segments");
        assert!(d.actions[6] > 0, "segment_unmap after an OOM");
    }
    let a = analysis::analyse(&snap);
    for d in &a.devices {
        assert!(d.ooms.iter().all(|o| o.device_free.is_some()));
        // Allocations made before the trace and freed in it.
        assert!(d
            .elements
            .iter()
            .any(|e| e.origin == analysis::Origin::FreeOnly));
        assert!(d
            .elements
            .iter()
            .any(|e| e.origin == analysis::Origin::Block));
        assert!(!d.live_at_peak.is_empty());
    }
}

#[test]
fn python_pickle_loads_generated_files_with_the_same_counts() {
    let Ok(out) = std::process::Command::new("python3")
        .arg("--version")
        .output()
    else {
        eprintln!("python3 not found: skipped");
        return;
    };
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    for (i, (layout, protocol)) in [
        (GenLayout::Current, 4),
        (GenLayout::Torch20, 2),
        (GenLayout::SegmentList, 5),
    ]
    .into_iter()
    .enumerate()
    {
        let cfg = GenConfig {
            target_bytes: 400_000,
            devices: 2,
            seed: 5,
            layout,
            protocol,
            expandable: true,
            ooms: 1,
            max_depth: 200,
        };
        let bytes = check(&cfg);
        let (_, stats) = make(&cfg);
        let path = dir.path().join(format!("g{i}.pickle"));
        std::fs::write(&path, &bytes).unwrap();
        let script = r#"
import pickle, sys, json, collections
d = pickle.load(open(sys.argv[1], 'rb'))
segs = d if isinstance(d, list) else d['segments']
traces = [] if isinstance(d, list) else d['device_traces']
out = {}
for dev in sorted({s['device'] for s in segs}):
    ss = [s for s in segs if s['device'] == dev]
    t = traces[dev] if dev < len(traces) else []
    out[dev] = {
        'segments': len(ss),
        'blocks': sum(len(s['blocks']) for s in ss),
        'reserved': sum(s['total_size'] for s in ss),
        'allocated': sum(b['size'] for s in ss for b in s['blocks'] if b['state'] == 'active_allocated'),
        'actions': collections.Counter(e['action'] for e in t),
    }
print(json.dumps(out))
"#;
        let out = std::process::Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for s in &stats.devices {
            let p = &v[s.device.to_string()];
            assert_eq!(p["segments"], s.segments, "{layout:?}");
            assert_eq!(p["blocks"], s.blocks);
            assert_eq!(p["reserved"], s.reserved_bytes);
            assert_eq!(p["allocated"], s.allocated_bytes);
            for (k, name) in ACTIONS.iter().enumerate() {
                assert_eq!(
                    p["actions"][name].as_u64().unwrap_or(0),
                    s.actions[k],
                    "{name}"
                );
            }
        }
    }
}
