"""The Ray driver's own cost per rank task: `memlens.ray.summarize_ranks` scheduling N rank tasks
that do nothing (each returns one short text at once), so what is timed is the driver — submitting
the tasks, waiting for them, cancelling past a timeout — and Ray's per-task overhead, not the core.
With `--baseline FILE` (a `python/memlens/ray.py` of another revision, e.g. `git show
REV:python/memlens/ray.py > /tmp/ray_old.py`), that file's driver runs the same tasks, alternated
run by run, so the two are compared as ratios within one run.

    .venv/bin/python benches/ray_driver.py --ranks 256,1024 --runs 3 [--baseline /tmp/ray_old.py]

One local Ray node with the machine's CPUs; every task pinned to it, as the driver pins a rank to
the node that holds its files. Prints one JSON object of figures (seconds per run, per driver and
rank count; medians; the machine's load before and after).
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time


def noop_rank(root, group):
    """A rank task's stand-in: the rank's "summaries" at once, without reading anything."""
    return ['{"status":"ok"}']


def load_driver(path):
    """`path` as a module of the memlens package (its relative imports resolve there)."""
    import memlens  # noqa: F401  (the package its relative imports need)

    spec = importlib.util.spec_from_file_location("memlens._ray_baseline", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    # The workers cannot import it: its functions travel by value.
    import ray

    ray.cloudpickle.register_pickle_by_value(mod)
    return mod


def run_once(driver, node_id, ranks, timeout):
    nodes = [{
        "node_id": node_id,
        "groups": [{"role": "bench", "rank": i, "step": None, "run_dirs": [f"run{i}"]} for i in range(ranks)],
    }]
    driver._summarize = noop_rank
    t = time.perf_counter()
    out = driver.summarize_ranks("/nowhere", nodes, retries=0, timeout=timeout)
    dt = time.perf_counter() - t
    # Every task ran (a stand-in that cannot reach the workers would come back as failed ranks).
    assert out == ['{"status":"ok"}'] * ranks, out[:2]
    return dt


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", default="256,1024", help="comma-separated rank counts")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=float, default=600.0,
                   help="the driver's per-task timeout (the new driver's clock path runs only with one)")
    p.add_argument("--baseline", help="a ray.py of another revision to compare with")
    a = p.parse_args()
    import ray

    import memlens.ray as current

    drivers = {"this": current}
    if a.baseline:
        drivers["baseline"] = load_driver(a.baseline)
    load0 = os.getloadavg()
    ray.init(num_cpus=os.cpu_count(), log_to_driver=False, include_dashboard=False)
    node_id = ray.get_runtime_context().get_node_id()
    # Warm the node's worker pool so the first timed run does not pay for starting workers.
    run_once(current, node_id, 16, a.timeout)
    figures = {}
    for n in (int(x) for x in a.ranks.split(",")):
        for k in range(a.runs):
            order = list(drivers.items())
            if k % 2:
                order.reverse()
            for name, driver in order:
                figures.setdefault(f"{name} {n}", []).append(round(run_once(driver, node_id, n, a.timeout), 3))
    ray.shutdown()
    print(json.dumps({
        "cpus": os.cpu_count(),
        "load_before": [round(x, 2) for x in load0],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "seconds": figures,
        "median_seconds": {k: statistics.median(v) for k, v in figures.items()},
        "median_ms_per_rank": {k: round(1000 * statistics.median(v) / int(k.split()[-1]), 2) for k, v in figures.items()},
    }, indent=1))


if __name__ == "__main__":
    main()
