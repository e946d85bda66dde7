//! The text export of a generated rank: operator_memory.csv, memory_record.csv,
//! npu_module_mem.csv, trace_view.json (filled with events that are not ops up to the size asked
//! for) and the profiler JSON files.

use super::{dur_us, json_str, mb, us, RankJob, Row, MODULES};
use std::fmt::Write as _;

/// Writes one rank's text export (`dir` is its run folder) through `sink(relative path, bytes)`.
pub(super) fn write_text(
    job: &RankJob,
    dir: &str,
    sink: &mut dyn FnMut(&str, Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (rank, stream, t0, rows) = (job.rank, job.stream, job.t0, &job.rows);
    let mut mr = String::from("Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\r\n");
    for r in &job.records {
        let opt = |v: Option<u64>| v.map(mb).unwrap_or_default();
        let stream = if r.active.is_some() {
            stream.to_string()
        } else {
            String::new()
        };
        let _ = write!(
            mr,
            "{},{}\t,{},{},{},{stream},NPU:{rank}\r\n",
            r.component,
            us(r.ts),
            opt(r.allocated),
            mb(r.reserved),
            opt(r.active)
        );
    }
    // operator_memory.csv: PTA rows by allocation time, then the cann:: rows unsorted.
    let mut om = String::from("Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type\r\n");
    let mut pta_rows: Vec<&Row> = rows.iter().filter(|r| !r.ge).collect();
    pta_rows.sort_by_key(|r| r.alloc);
    for r in pta_rows {
        let kb = crate::profiler::bytes_to_unit_text(i128::from(r.size), 1024);
        match r.release {
            Some(rel) => {
                let _ = write!(
                    om,
                    "{},{kb},{}\t,{}\t,{}\t,{}\t,{}\t,{},{},{},{},{},{},{stream},NPU:{rank}\r\n",
                    r.name,
                    us(r.alloc),
                    us(rel),
                    us(rel + 400),
                    us(rel - r.alloc),
                    us(rel + 400 - r.alloc),
                    mb(r.at_alloc.0),
                    mb(r.at_alloc.1),
                    mb(r.at_alloc.0),
                    mb(r.at_release.0),
                    mb(r.at_release.1),
                    mb(r.at_release.0)
                );
            }
            None => {
                let _ = write!(
                    om,
                    "{},{kb},{}\t,,,,,{},{},{},,,,{stream},NPU:{rank}\r\n",
                    r.name,
                    us(r.alloc),
                    mb(r.at_alloc.0),
                    mb(r.at_alloc.1),
                    mb(r.at_alloc.0)
                );
            }
        }
    }
    for r in rows.iter().filter(|r| r.ge) {
        let rel = r.release.unwrap_or(r.alloc);
        let d = rel - r.alloc;
        let _ = write!(
            om,
            "{},{}.0,{}\t,{}\t,,{}.{:02},,{},{},,{},{},,,NPU:{rank}\r\n",
            r.name,
            r.size / 1024,
            us(r.alloc),
            us(rel),
            d / 1000,
            (d % 1000) / 10,
            mb(r.at_alloc.0),
            mb(r.at_alloc.1),
            mb(r.at_release.0),
            mb(r.at_release.1)
        );
    }
    // npu_module_mem.csv (the ≤ 2.5.1 header on even ranks, the newer one on odd ranks).
    let mut mm = if rank % 2 == 0 {
        String::from("Component,Timestamp(us),Total Reserved(MB),Device\n")
    } else {
        String::from("Device_id,Component,Timestamp(us),Total Reserved(MB),Device\n")
    };
    for &(k, mt, v) in &job.modules {
        let m = MODULES.get(k).copied().unwrap_or("");
        let v = mb(v);
        if rank % 2 == 0 {
            let _ = writeln!(mm, "{m},{}\t,{v},NPU:{rank}", us(mt));
        } else {
            let _ = writeln!(mm, "{rank},{m},{}\t,{v},NPU:{rank}", us(mt));
        }
    }
    let (mut tv, pyid) = trace_head(job);
    tv.reserve((job.trace_bytes as usize).saturating_sub(tv.len()) + (1 << 20));
    let mut ct = t0;
    let mut k = 0u64;
    while (tv.len() as u64) < job.trace_bytes {
        tv.push_str(", ");
        tv.push_str(&filler_event(job, k, ct, pyid));
        ct += 20_000;
        k += 1;
    }
    tv.push(']');
    write_info(job, dir, "text", sink)?;
    sink(
        &format!("{dir}/ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
        om.into_bytes(),
    )?;
    sink(
        &format!("{dir}/ASCEND_PROFILER_OUTPUT/memory_record.csv"),
        mr.into_bytes(),
    )?;
    sink(
        &format!("{dir}/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv"),
        mm.into_bytes(),
    )?;
    sink(
        &format!("{dir}/ASCEND_PROFILER_OUTPUT/trace_view.json"),
        tv.into_bytes(),
    )?;
    Ok(())
}

/// Writes `profiler_info_{rank}.json` (naming `export` as the export type) and
/// `profiler_metadata.json` of one rank.
pub(super) fn write_info(
    job: &RankJob,
    dir: &str,
    export: &str,
    sink: &mut dyn FnMut(&str, Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (rank, end_t) = (job.rank, job.end_t);
    let info = format!(
        "{{\n    \"config\": {{\n        \"common_config\": {{\n            \"activities\": [\n                \"ProfilerActivity.CPU\",\n                \"ProfilerActivity.NPU\"\n            ],\n            \"record_shapes\": true,\n            \"profile_memory\": true,\n            \"with_stack\": true\n        }},\n        \"experimental_config\": {{\n            \"_profiler_level\": \"Level0\",\n            \"_export_type\": [\"{export}\"]\n        }}\n    }},\n    \"end_info\": {{\n        \"collectionTimeEnd\": {end_t}\n    }},\n    \"rank_id\": {}\n}}\n",
        if rank % 2 == 0 { format!("{rank}") } else { format!("\"{rank}\"") }
    );
    let meta = format!("{{\"ENV_VARIABLES\": {{\"PYTORCH_NPU_ALLOC_CONF\": \"expandable_segments:False\", \"TASK_QUEUE_ENABLE\": \"1\"}}, \"parallel_group_info\": {{\"group_name_0\": {{\"group_name\": \"default_group\", \"group_rank\": {rank}, \"global_ranks\": [0, 1]}}}}}}");
    sink(
        &format!("{dir}/profiler_info_{rank}.json"),
        info.into_bytes(),
    )?;
    sink(&format!("{dir}/profiler_metadata.json"), meta.into_bytes())?;
    Ok(())
}

/// The text trace up to its filler events — `[`, then the ops each followed by two python
/// functions, the task-queue pairs and the process-name event — and the python id the filler
/// continues from.
fn trace_head(job: &RankJob) -> (String, u64) {
    let pid = job.pid;
    let deq_tid = job.deq_tid;
    let mut tv = String::from("[");
    let mut first = true;
    let mut push = |tv: &mut String, ev: &str| {
        if !first {
            tv.push_str(", ");
        }
        first = false;
        tv.push_str(ev);
    };
    let mut pyid = 1u64;
    for o in &job.ops {
        let mut args = format!(
            "\"Sequence number\": {}, \"Fwd thread id\": {}",
            o.seq, o.fwd
        );
        if let Some(s) = o.stack.and_then(|s| job.stacks.get(s)) {
            let _ = write!(args, ", \"Input Dims\": \"[4096, 1024];\\r\\n[1024]\", \"Input type\": \"float16;\\r\\nfloat16\", \"Call stack\": {}", json_str(s));
        }
        push(&mut tv, &format!(
            "{{\"ph\": \"X\", \"name\": {}, \"pid\": {pid}, \"tid\": {}, \"ts\": \"{}\", \"dur\": {}, \"cat\": \"cpu_op\", \"args\": {{{args}}}}}",
            json_str(&o.name), o.tid, us(o.ts), dur_us(o.dur)
        ));
        // The Python tracer dwarfs the ops (with_stack=True).
        for _ in 0..2 {
            push(&mut tv, &format!(
                "{{\"ph\": \"X\", \"name\": \"nn.Module: Linear_{}\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": \"{}\", \"dur\": 3.2, \"cat\": \"python_function\", \"args\": {{\"Python id\": {pyid}, \"Python parent id\": {}}}}}",
                pyid % 97, us(o.ts), pyid / 2
            ));
            pyid += 1;
        }
    }
    for q in &job.queue {
        push(&mut tv, &format!(
            "{{\"ph\": \"X\", \"name\": \"Enqueue@{name}\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": \"{}\", \"dur\": 1.2, \"cat\": \"enqueue\", \"args\": {{\"correlation_id\": {corr}}}}}, {{\"ph\": \"X\", \"name\": \"Dequeue@{name}\", \"pid\": {pid}, \"tid\": {deq_tid}, \"ts\": \"{}\", \"dur\": 3.5, \"cat\": \"dequeue\", \"args\": {{\"correlation_id\": {corr}}}}}",
            us(q.ts),
            us(q.deq_ts),
            name = q.name,
            corr = q.corr
        ));
    }
    push(&mut tv, &format!("{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {pid}, \"tid\": 0, \"args\": {{\"name\": \"Python\"}}}}"));
    (tv, pyid)
}

/// Filler event `k` of the text trace (CANN counters, flows, device tasks, python functions),
/// at time `ct`.
fn filler_event(job: &RankJob, k: u64, ct: i64, pyid: u64) -> String {
    let pid = job.pid;
    let hw_pid = (pid << 10) | (3 << 5) | u64::from(job.rank % 8);
    match k % 5 {
        0 => format!("{{\"name\": \"APP/HBM\", \"ts\": \"{}\", \"pid\": {hw_pid}, \"tid\": 0, \"args\": {{\"KB\": {}.25}}, \"ph\": \"C\"}}", us(ct), 1_000_000 + k % 777),
        1 => format!("{{\"ph\": \"s\", \"bp\": \"e\", \"name\": \"torch_to_npu\", \"id\": {}, \"pid\": {pid}, \"tid\": {pid}, \"ts\": \"{}\", \"cat\": \"async_npu\"}}", 1_736_405_443_996_246_554u64 + k, us(ct)),
        2 => format!("{{\"ph\": \"f\", \"bp\": \"e\", \"name\": \"HostToDevice\", \"id\": \"{}\", \"pid\": {hw_pid}, \"tid\": 2, \"ts\": \"{}\", \"cat\": \"HostToDevice\"}}", 38_654_705_663u64 + k, us(ct)),
        3 => format!("{{\"name\": \"MEMCPY_ASYNC\", \"pid\": {hw_pid}, \"tid\": 2, \"ts\": \"{}\", \"dur\": 996.9599375, \"args\": {{\"Model Id\": 4294967295, \"Task Type\": \"MEMCPY_ASYNC\", \"Physic Stream Id\": 2, \"Task Id\": {}, \"connection_id\": {k}}}, \"ph\": \"X\"}}", us(ct), k % 65536),
        _ => format!("{{\"ph\": \"X\", \"name\": \"torch/nn/modules/module.py(1527): _call_impl\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": \"{}\", \"dur\": 1.5, \"cat\": \"python_function\", \"args\": {{\"Python id\": {}, \"Python parent id\": {}}}}}", us(ct), pyid + k, pyid),
    }
}

/// How many filler events the text trace of `job` gets (the db export writes as many rows).
#[cfg(all(feature = "db-writer", not(target_arch = "wasm32")))]
pub(super) fn filler_events(job: &RankJob) -> u64 {
    let (head, pyid) = trace_head(job);
    let mut len = head.len() as u64;
    let (mut k, mut ct) = (0u64, job.t0);
    while len < job.trace_bytes {
        len += 2 + filler_event(job, k, ct, pyid).len() as u64;
        ct += 20_000;
        k += 1;
    }
    k
}
