//! The database export of a generated job: the same ranks as [`super`] writes as text,
//! written as torch_npu writes `ascend_pytorch_profiler_{rank}.db` (native builds only: the file
//! is written by the SQLite library, through `rusqlite`, so the reader is tested on files real
//! SQLite wrote).
//!
//! What goes where mirrors the real export: allocations in `OP_MEMORY` (PTA rows first, then the
//! GE rows with the CANN side's bare kernel names, whose allocations and frees are also in
//! `NPU_OP_MEM`), allocator totals in `MEMORY_RECORD` (GE rows with `totalActive` 0), the `APP`
//! series in `NPU_MEM`, module memory in `NPU_MODULE_MEM` + `ENUM_MODULE`, and one `PYTORCH_API`
//! row per event of the text twin's trace: ops (type `op`, stacks in `PYTORCH_CALLCHAINS`),
//! task-queue events (`queue`) and everything else as python-function rows (`trace`) — the
//! counters, flows and device tasks of the text trace live in device tables in a real db, but
//! one row per text event keeps the two twins' event counts equal. Strings are interned in
//! `STRING_IDS` in the real export's id ranges: CANN names from 0, PyTorch API strings from
//! 2^28, memory strings from 2^29 (reusing an id already given, as the real interner does).

use super::text::{filler_events, write_info};
use super::{build_rank, run_dir, GenSpec, Planted, RankJob, MODULES};
use rusqlite::{params, Connection};
use std::collections::HashMap;
use std::path::Path;

/// `ENUM_API_TYPE` ids of the real export.
const API_OP: i64 = 50_001;
const API_QUEUE: i64 = 50_002;
const API_TRACE: i64 = 50_003;

/// Interns strings into `STRING_IDS`' id ranges.
struct Ids {
    cann: HashMap<String, i64>,
    fwk: HashMap<String, i64>,
    next_cann: i64,
    next_api: i64,
    next_mem: i64,
}

impl Ids {
    fn new() -> Self {
        Ids {
            cann: HashMap::new(),
            fwk: HashMap::new(),
            next_cann: 1,
            next_api: 1 << 28,
            next_mem: 2 << 28,
        }
    }
    /// A CANN-side string (kernel names, `app`, `GE` of NPU_OP_MEM).
    fn cann(&mut self, s: &str) -> i64 {
        if let Some(&id) = self.cann.get(s) {
            return id;
        }
        let id = self.next_cann;
        self.next_cann += 1;
        self.cann.insert(s.to_string(), id);
        id
    }
    /// A framework string: PyTorch API strings from 2^28, memory strings from 2^29; a text
    /// already interned keeps its id (one interner, two starting points).
    fn fwk(&mut self, s: &str, memory: bool) -> i64 {
        if let Some(&id) = self.fwk.get(s) {
            return id;
        }
        let next = if memory {
            &mut self.next_mem
        } else {
            &mut self.next_api
        };
        let id = *next;
        *next += 1;
        self.fwk.insert(s.to_string(), id);
        id
    }
}

const SCHEMA: &str = "
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT);
CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY,name TEXT);
CREATE TABLE ENUM_MODULE (id INTEGER PRIMARY KEY,name TEXT);
CREATE TABLE META_DATA (name TEXT,value TEXT);
CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER,endTimeNs INTEGER);
CREATE TABLE NPU_MEM (type INTEGER,ddr NUMERIC,hbm NUMERIC,timestampNs INTEGER,deviceId INTEGER);
CREATE TABLE NPU_MODULE_MEM (moduleId INTEGER,timestampNs INTEGER,totalReserved NUMERIC,deviceId INTEGER);
CREATE TABLE NPU_OP_MEM (operatorName INTEGER,addr INTEGER,type INTEGER,size INTEGER,timestampNs INTEGER,globalTid INTEGER,totalAllocate NUMERIC,totalReserve NUMERIC,component INTEGER,deviceId INTEGER);
CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);
CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
CREATE TABLE MEMORY_RECORD (component INTEGER, timestamp INTEGER, totalAllocated INTEGER, totalReserved INTEGER, totalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);
CREATE TABLE OP_MEMORY (name INTEGER, size INTEGER, allocationTime INTEGER, releaseTime INTEGER, activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER, allocationTotalAllocated INTEGER, allocationTotalReserved INTEGER, allocationTotalActive INTEGER, releaseTotalAllocated INTEGER, releaseTotalReserved INTEGER, releaseTotalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);
CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, type INTEGER);
CREATE TABLE PYTORCH_CALLCHAINS (id INTEGER, stack INTEGER, stackDepth INTEGER);
";

fn db_err(e: rusqlite::Error) -> std::io::Error {
    std::io::Error::other(format!("writing the generated database: {e}"))
}

/// Writes the db of `job` to `path`.
fn write_rank_db(job: &RankJob, path: &Path) -> rusqlite::Result<()> {
    let mut con = Connection::open(path)?;
    con.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA page_size = 4096;",
    )?;
    con.execute_batch(SCHEMA)?;
    let tx = con.transaction()?;
    let mut ids = Ids::new();
    let rank = i64::from(job.rank);
    let pid = job.pid as i64;
    let gtid = |tid: u64| (pid << 32) | (tid as i64 & 0xffff_ffff);
    for (id, name) in [
        (API_OP, "op"),
        (API_QUEUE, "queue"),
        (API_TRACE, "trace"),
        (50_004, "mstx"),
    ] {
        tx.execute(
            "INSERT INTO ENUM_API_TYPE VALUES (?1, ?2)",
            params![id, name],
        )?;
    }
    for (k, m) in MODULES.iter().enumerate() {
        tx.execute(
            "INSERT INTO ENUM_MODULE VALUES (?1, ?2)",
            params![k as i64, m],
        )?;
    }
    tx.execute(
        "INSERT INTO META_DATA VALUES ('SCHEMA_VERSION', '1.0.0')",
        [],
    )?;
    tx.execute(
        "INSERT INTO SESSION_TIME_INFO VALUES (?1, ?2)",
        params![job.t0, job.end_t],
    )?;
    tx.execute("INSERT INTO RANK_DEVICE_MAP VALUES (?1, ?1)", params![rank])?;
    // PYTORCH_API, in the text trace's event order.
    {
        let mut api = tx.prepare(
            "INSERT INTO PYTORCH_API VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, NULL, ?8, ?9)",
        )?;
        let mut chains = tx.prepare("INSERT INTO PYTORCH_CALLCHAINS VALUES (?1, ?2, ?3)")?;
        let mut steps = tx.prepare("INSERT INTO STEP_TIME VALUES (?1, ?2, ?3)")?;
        let mut chain_written = vec![false; job.stacks.len()];
        let mut pyid = 1u64;
        let python = |ids: &mut Ids, name: &str| ids.fwk(name, false);
        for o in &job.ops {
            let name = ids.fwk(&o.name, false);
            let chain = match o.stack {
                Some(k) if k < job.stacks.len() => {
                    if !chain_written[k] {
                        chain_written[k] = true;
                        for (depth, frame) in job.stacks[k].split(";\r\n").enumerate() {
                            let f = ids.fwk(frame, false);
                            chains.execute(params![k as i64, f, depth as i64])?;
                        }
                    }
                    Some(k as i64)
                }
                _ => None,
            };
            api.execute(params![
                o.ts.to_string(),
                (o.ts + o.dur).to_string(),
                gtid(o.tid),
                Option::<i64>::None,
                name,
                o.seq,
                o.fwd,
                chain,
                API_OP
            ])?;
            if let Some(n) = o.name.strip_prefix("ProfilerStep#") {
                if let Ok(step) = n.parse::<i64>() {
                    steps.execute(params![step, o.ts, o.ts + o.dur])?;
                }
            }
            for _ in 0..2 {
                let n = python(&mut ids, &format!("nn.Module: Linear_{}", pyid % 97));
                api.execute(params![
                    o.ts.to_string(),
                    (o.ts + 3_200).to_string(),
                    gtid(job.pid),
                    Option::<i64>::None,
                    n,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    API_TRACE
                ])?;
                pyid += 1;
            }
        }
        for q in &job.queue {
            let en = ids.fwk(&format!("Enqueue@{}", q.name), false);
            let de = ids.fwk(&format!("Dequeue@{}", q.name), false);
            for (ts, dur, tid, name) in [
                (q.ts, 1_200, job.pid, en),
                (q.deq_ts, 3_500, job.deq_tid, de),
            ] {
                api.execute(params![
                    ts.to_string(),
                    (ts + dur).to_string(),
                    gtid(tid),
                    q.corr as i64,
                    name,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    API_QUEUE
                ])?;
            }
        }
        // The process-name event and the filler events of the text trace, one row each.
        let filler = filler_events(job);
        let fill_name = ids.fwk("torch/nn/modules/module.py(1527): _call_impl", false);
        let meta = ids.fwk("process_name", false);
        api.execute(params![
            job.t0.to_string(),
            job.t0.to_string(),
            gtid(job.pid),
            Option::<i64>::None,
            meta,
            Option::<i64>::None,
            Option::<i64>::None,
            Option::<i64>::None,
            API_TRACE
        ])?;
        let mut ct = job.t0;
        for _ in 0..filler {
            api.execute(params![
                ct.to_string(),
                (ct + 1_500).to_string(),
                gtid(job.pid),
                Option::<i64>::None,
                fill_name,
                Option::<i64>::None,
                Option::<i64>::None,
                Option::<i64>::None,
                API_TRACE
            ])?;
            ct += 20_000;
        }
    }
    // OP_MEMORY: PTA rows by allocation time, then the GE rows (as the text export orders them).
    {
        let mut om = tx.prepare(
            "INSERT INTO OP_MEMORY VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        )?;
        let mut npu =
            tx.prepare("INSERT INTO NPU_OP_MEM VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")?;
        let stream = job.stream as i64;
        let mut pta: Vec<_> = job.rows.iter().filter(|r| !r.ge).collect();
        pta.sort_by_key(|r| r.alloc);
        for r in pta {
            let name = ids.fwk(&r.name, true);
            let (a, b) = (r.at_alloc, r.at_release);
            let sz = r.size as i64;
            match r.release {
                Some(rel) => om.execute(params![
                    name,
                    sz,
                    r.alloc,
                    rel,
                    rel + 400,
                    rel - r.alloc,
                    rel + 400 - r.alloc,
                    a.0 as i64,
                    a.1 as i64,
                    a.0 as i64,
                    b.0 as i64,
                    b.1 as i64,
                    b.0 as i64,
                    stream,
                    rank
                ])?,
                None => om.execute(params![
                    name,
                    sz,
                    r.alloc,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    a.0 as i64,
                    a.1 as i64,
                    a.0 as i64,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    stream,
                    rank
                ])?,
            };
        }
        let (malloc, free, ge) = (ids.cann("malloc"), ids.cann("free"), ids.cann("GE"));
        for (k, r) in job.rows.iter().filter(|r| r.ge).enumerate() {
            let bare = r.name.strip_prefix("cann::").unwrap_or(&r.name);
            let name = ids.cann(bare);
            let rel = r.release.unwrap_or(r.alloc);
            let (a, b) = (r.at_alloc, r.at_release);
            om.execute(params![
                name,
                r.size as i64,
                r.alloc,
                rel,
                Option::<i64>::None,
                rel - r.alloc,
                Option::<i64>::None,
                a.0 as i64,
                a.1 as i64,
                Option::<i64>::None,
                b.0 as i64,
                b.1 as i64,
                Option::<i64>::None,
                Option::<i64>::None,
                rank
            ])?;
            let addr = 20_617_629_794_304i64 + (k as i64) * 4096;
            for (ty, ts, total) in [(malloc, r.alloc, a), (free, rel, b)] {
                npu.execute(params![
                    name,
                    addr,
                    ty,
                    r.size as i64,
                    ts,
                    gtid(job.pid),
                    total.0 as i64,
                    total.1 as i64,
                    ge,
                    rank
                ])?;
            }
        }
    }
    // MEMORY_RECORD and NPU_MEM (the APP series).
    {
        let mut mr = tx.prepare("INSERT INTO MEMORY_RECORD VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?;
        let mut mem = tx.prepare("INSERT INTO NPU_MEM VALUES (?1, 0, ?2, ?3, ?4)")?;
        let app = ids.cann("app");
        for r in &job.records {
            if r.component == "APP" {
                mem.execute(params![app, r.reserved as i64, r.ts, rank])?;
                continue;
            }
            let comp = ids.fwk(r.component, true);
            let stream = r.active.map(|_| job.stream as i64);
            mr.execute(params![
                comp,
                r.ts,
                r.allocated.map(|v| v as i64),
                r.reserved as i64,
                r.active.map(|v| v as i64).unwrap_or(0),
                stream,
                rank
            ])?;
        }
        let mut mm = tx.prepare("INSERT INTO NPU_MODULE_MEM VALUES (?1, ?2, ?3, ?4)")?;
        for &(k, ts, v) in &job.modules {
            mm.execute(params![k as i64, ts, v as i64, rank])?;
        }
    }
    {
        let mut st = tx.prepare("INSERT INTO STRING_IDS VALUES (?1, ?2)")?;
        let mut all: Vec<(i64, &String)> = ids
            .cann
            .iter()
            .chain(ids.fwk.iter())
            .map(|(s, &id)| (id, s))
            .collect();
        all.sort_unstable();
        for (id, s) in all {
            st.execute(params![id, s])?;
        }
    }
    tx.commit()?;
    con.close().map_err(|(_, e)| e)
}

/// Generates the job as database exports: per rank, `profiler_info_{rank}.json`,
/// `profiler_metadata.json` and `ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db`, in the
/// run folders the text export uses. Each database is built in `scratch` (a folder on disk) and
/// handed to `sink` whole. Returns what was planted, as [`super::generate`] does.
pub fn generate_db(
    spec: &GenSpec,
    scratch: &Path,
    sink: &mut dyn FnMut(&str, Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<Vec<Planted>> {
    let mut out = Vec::new();
    for role in 0..spec.roles.max(1) {
        for rank in 0..spec.ranks.max(1) {
            let job = build_rank(spec, rank, role);
            let dir = run_dir(role, rank);
            write_info(&job, &dir, "db", sink)?;
            let tmp = scratch.join(format!(
                "memlens-generate-{}-{role}-{rank}.db",
                std::process::id()
            ));
            let _ = std::fs::remove_file(&tmp);
            write_rank_db(&job, &tmp).map_err(db_err)?;
            let bytes = std::fs::read(&tmp)?;
            let _ = std::fs::remove_file(&tmp);
            sink(
                &format!("{dir}/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db"),
                bytes,
            )?;
            out.push(job.planted);
        }
    }
    Ok(out)
}
