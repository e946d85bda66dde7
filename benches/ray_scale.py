"""Scale figures of the Ray path, measured on one machine: a generated job of ROLES x RANKS ranks,
one rank task (the core's summarize_group, in a fresh process for an honest peak RSS) timed on a
sample of ranks, the whole job through memlens.ray on a local Ray instance, the driver's merge
time and memory, and the summary size per rank.

    .venv/bin/python benches/ray_scale.py [--roles 4] [--ranks 64] [--trace-mb 1] [--rows 1000]

Build the wheel with optimisations first (`maturin build --release`), or the figures are those
of a debug build. Prints one JSON object of figures.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TASK = r"""
import json, resource, sys, time
from memlens import _native
root, group = sys.argv[1], sys.argv[2]
t = time.perf_counter()
out = _native.summarize_group(root, group)
dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "summary_bytes": len(out)}))
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--roles", type=int, default=4)
    p.add_argument("--ranks", type=int, default=64)
    p.add_argument("--trace-mb", default="1")
    p.add_argument("--rows", default="1000")
    p.add_argument("--sample", type=int, default=8)
    p.add_argument("--cli", default=str(ROOT / "target" / "release" / "memlens"))
    a = p.parse_args()
    import ray
    import memlens.ray as mray
    from memlens import _native

    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "job"
        subprocess.run([a.cli, "generate", "profiler", "--out", str(job), "--roles", str(a.roles), "--ranks",
                        str(a.ranks), "--trace-mb", a.trace_mb, "--rows", a.rows], check=True, capture_output=True)
        size = sum(f.stat().st_size for f in job.rglob("*") if f.is_file())
        found = json.loads(_native.discover(str(job)))
        groups = found["groups"]
        tasks = []
        for g in groups[: a.sample]:
            r = subprocess.run([sys.executable, "-c", TASK, str(job), json.dumps(g)], check=True,
                               capture_output=True, text=True)
            tasks.append(json.loads(r.stdout))
        ray.init(num_cpus=os.cpu_count(), log_to_driver=False, include_dashboard=False)
        t = time.perf_counter()
        s = mray.analyze_job(str(job), out=str(Path(tmp) / "job.memlens.json"), rerun=True)
        job_seconds = time.perf_counter() - t
        ranks = [json.dumps(r) for r in s["ranks"]]
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = time.perf_counter()
        text = _native.merge_summaries(ranks)
        merge_seconds = time.perf_counter() - t
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        ray.shutdown()
        print(json.dumps({
            "ranks": len(groups),
            "input_bytes": size,
            "input_bytes_per_rank": size // max(1, len(groups)),
            "task_seconds": [round(x["seconds"], 3) for x in tasks],
            "task_maxrss_mib": [round(x["maxrss_kib"] / 1024, 1) for x in tasks],
            "rank_summary_bytes": [x["summary_bytes"] for x in tasks],
            "job_seconds_ray_one_node": round(job_seconds, 2),
            "summary_file_bytes": len(text),
            "summary_bytes_per_rank": len(text) // max(1, len(groups)),
            "merge_seconds": round(merge_seconds, 4),
            "driver_maxrss_mib_before_merge": round(rss0 / 1024, 1),
            "driver_maxrss_mib_after_merge": round(rss1 / 1024, 1),
            "failed": s["totals"]["failed"],
        }, indent=1))


if __name__ == "__main__":
    main()
