#!/usr/bin/env python3
"""A faithful RE-IMPLEMENTATION (not the original code) of RL-Insight's Memory Parser, written from
its developer guide (the memory parser's data discovery, call-stack index, matching and output
sections) so that memlens can be compared with it on one machine at one time (`cargo bench --bench profiler` runs it).

Algorithm as documented:
- allocate_prof_data: os.walk the input for `*_ascend_pt` folders; rank_id from
  `profiler_info_(\\d+).json`; role from `profiler_metadata.json` "role", else the parent folder name;
  folders of one (role, rank) sorted by a timestamp key from the folder name.
- mapper_func: one task per rank folder, in a multiprocessing pool (多进程并行调度).
- _build_call_stack_index: `ijson.items(f, "item")`, keep `cat == "cpu_op"` events that have
  `args["Call stack"]`, group by name, sort by ts, keep a parallel `ts_list` (floats).
- _parse_operator_memory: csv.DictReader over operator_memory.csv; per row a MemoryEventRow with
  times converted us -> ms, duration 0 when empty, call stack by _match_call_stack
  (bisect_right(ts_list, alloc_time) - 1), call_stack_top = first line of the stack.
- reducer_func: concatenate and sort by start_time_ms into a pandas DataFrame (when pandas is
  installed); written as CSV unless `--no-write` (the original returns the DataFrame).

Prints one JSON line: {"seconds": …, "rows": …, "maxrss_self_kb": …, "maxrss_children_kb": …}.
"""
import bisect
import csv
import json
import os
import re
import resource
import sys
import time
from multiprocessing import Pool

import ijson

# ijson picks its fastest backend (yajl2_c when the wheel has it); MEMLENS_IJSON_BACKEND=python
# forces the pure-Python one, as on installs without the C extension.
if os.environ.get("MEMLENS_IJSON_BACKEND"):
    ijson = ijson.get_backend(os.environ["MEMLENS_IJSON_BACKEND"])

try:
    import pandas as pd
except ImportError:  # the original needs pandas; without it the CSV is written by the csv module
    pd = None

COLUMNS = ["name", "role", "rank_id", "call_stack", "call_stack_top", "size_kb", "start_time_ms",
           "duration_ms", "total_allocated_mb", "total_reserved_mb", "total_active_mb", "device_type"]


def _get_rank_id(run_dir):
    for f in os.listdir(run_dir):
        m = re.match(r"profiler_info_(\d+)\.json$", f)
        if m:
            return int(m.group(1))
    return -1


def _get_task_role(run_dir):
    meta = os.path.join(run_dir, "profiler_metadata.json")
    if os.path.exists(meta):
        with open(meta) as f:
            role = json.load(f).get("role")
        if role:
            return role
    return os.path.basename(os.path.dirname(run_dir))


def _extract_timestamp_key(run_dir):
    parts = os.path.basename(run_dir).split("_")
    return "_".join(parts[-4:-2])


def allocate_prof_data(input_path):
    data_map = {}
    for root, dirs, _files in os.walk(input_path):
        for d in dirs:
            if d.endswith("_ascend_pt"):
                run_dir = os.path.join(root, d)
                rank = _get_rank_id(run_dir)
                if rank < 0:
                    continue
                data_map.setdefault((_get_task_role(run_dir), rank), []).append(run_dir)
    out = []
    for (role, rank), dirs in data_map.items():
        for d in sorted(dirs, key=_extract_timestamp_key):
            out.append({"role": role, "rank_id": rank,
                        "profiler_data_path": os.path.join(d, "ASCEND_PROFILER_OUTPUT")})
    return out


def _build_call_stack_index(trace_view_path):
    index = {}
    with open(trace_view_path, "rb") as f:
        for event in ijson.items(f, "item"):
            if event.get("cat") != "cpu_op":
                continue
            args = event.get("args") or {}
            stack = args.get("Call stack")
            if not stack:
                continue
            index.setdefault(event["name"], []).append(
                {"ts": float(event["ts"]), "dur": float(event.get("dur", 0)), "call_stack": stack})
    result = {}
    for name, entries in index.items():
        entries.sort(key=lambda e: e["ts"])
        result[name] = {"entries": entries, "ts_list": [e["ts"] for e in entries]}
    return result


def _match_call_stack(name, allocation_time_us, index):
    group = index.get(name)
    if not group:
        return "", ""
    idx = bisect.bisect_right(group["ts_list"], allocation_time_us) - 1
    if idx < 0:
        return "", ""
    stack = group["entries"][idx]["call_stack"]
    return stack, stack.split(";\r\n")[0]


def _f(v):
    v = (v or "").strip()
    return float(v) if v else 0.0


def _parse_operator_memory(csv_path, index, rank_id, role):
    rows = []
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            alloc_us = _f(row["Allocation Time(us)"])
            stack, top = _match_call_stack(row["Name"], alloc_us, index)
            dur = (row.get("Duration(us)") or "").strip()
            rows.append({
                "name": row["Name"], "role": role, "rank_id": rank_id,
                "call_stack": stack, "call_stack_top": top,
                "size_kb": _f(row["Size(KB)"]),
                "start_time_ms": alloc_us / 1000.0,
                "duration_ms": float(dur) / 1000.0 if dur else 0.0,
                "total_allocated_mb": _f(row.get("Allocation Total Allocated(MB)")),
                "total_reserved_mb": _f(row.get("Allocation Total Reserved(MB)")),
                "total_active_mb": _f(row.get("Allocation Total Active(MB)")),
                "device_type": row.get("Device Type", ""),
            })
    return rows


def parse_analysis_data(task):
    path = task["profiler_data_path"]
    index = _build_call_stack_index(os.path.join(path, "trace_view.json"))
    return _parse_operator_memory(os.path.join(path, "operator_memory.csv"), index,
                                  task["rank_id"], task["role"])


def main():
    # usage: rl_insight_memory_parser.py INPUT OUT.csv [--no-write]
    # --no-write stops at the DataFrame, which is the original tool's output.
    input_path, out_csv = sys.argv[1], sys.argv[2]
    write = "--no-write" not in sys.argv[3:]
    start = time.perf_counter()
    tasks = allocate_prof_data(input_path)
    with Pool(processes=min(len(tasks), os.cpu_count() or 1) or 1) as pool:
        parts = pool.map(parse_analysis_data, tasks)
    rows = [r for part in parts for r in part]
    rows.sort(key=lambda r: r["start_time_ms"])
    if pd is not None:
        df = pd.DataFrame(rows, columns=COLUMNS)
        if write:
            df.to_csv(out_csv, index=False)
    elif write:
        with open(out_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
    seconds = time.perf_counter() - start
    print(json.dumps({
        "seconds": seconds, "rows": len(rows), "pandas": pd is not None, "ijson": ijson.backend,
        "maxrss_self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "maxrss_children_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    }))


if __name__ == "__main__":
    main()
