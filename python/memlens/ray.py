"""Whole cluster jobs analysed where their profiles lie, on Ray.

An RL job on many nodes writes each rank's profiler output to its node's local disk. This module
finds the run folders on every alive node (one discovery task per node, pinned with Ray's
node-affinity scheduling), analyses each rank with one task on the node that holds it, and merges
the compact rank summaries (kilobytes each) into one job summary file, the same file
`memlens profiler ROOT --summary FILE` writes on one machine (docs/job-summary.md).

    memlens.ray.analyze_job("/local/profiles/job", address="auto", out="job.memlens.json")
    python -m memlens.ray /local/profiles/job --out job.memlens.json

`root` may hold environment variables (`$LOCAL_DISK/job`), expanded on each node. A rank whose
task or node fails is in the summary with the reason (`"status": "error"`), never dropped; a rank
that several nodes see (a shared filesystem) is analysed once; with `out` naming an existing
summary, ranks already summarised there are not analysed again unless `rerun=True`, and those
whose folders are gone are dropped, each named. All analysis and merging is the compiled core's;
this module only schedules.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import _native
from ._native import InputNotFoundError, NothingToAnalyseError
from ._words import plural

__all__ = ["analyze_job", "main"]


def _key(r: Dict[str, Any]) -> Tuple:
    return (r.get("role"), r.get("rank"), r.get("step"), tuple(r.get("run_dirs") or ()))


def _node_root(root: str) -> str:
    return os.path.expanduser(os.path.expandvars(root))


def _discover(root: str) -> Dict[str, Any]:
    import ray

    found = json.loads(_native.discover(_node_root(root)))
    found["node_id"] = ray.get_runtime_context().get_node_id()
    found["address"] = ray.util.get_node_ip_address()
    return found


def _summarize(root: str, group: str) -> List[str]:
    return [json.dumps(r) for r in json.loads(_native.summarize_group(_node_root(root), group))]


def _pinned(remote, node_id: str, retries: int, **options):
    """`remote` (a Ray remote function) to run on node `node_id`, one CPU, retried `retries` times
    if its worker is lost. Make `remote` once per job: each `ray.remote(fn)` is exported to the
    cluster anew when first run, which cost the driver ~2 ms per rank task when made per task."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return remote.options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False),
        num_cpus=1,
        max_retries=retries,
        **options,
    )


def _started_then(fn, root: str, group: str):
    """A rank task as a Ray streaming generator: first a mark that it runs on its node (where the
    driver's clock for `timeout` starts: a task queued behind its node's other ranks is not yet
    running), then `fn`'s rank summaries."""
    yield None
    yield fn(root, group)


def discover_job(root: str) -> List[Dict[str, Any]]:
    """One discovery task per alive node: `[{"node_id", "address", "groups": [...], "found",
    "warnings": [...]}]`, `"problem"` (and `"missing"`) when the root cannot be looked at on the
    node, `{"node_id", "error"}` for a node whose task fails. `found` counts the ranks the node
    holds, `groups` those it is given: each rank goes to one node (see `_share_out`)."""
    import ray

    nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
    discover = ray.remote(_discover)
    refs = [(n, _pinned(discover, n, 1).remote(root)) for n in nodes]
    out = []
    for node, ref in refs:
        try:
            out.append(ray.get(ref))
        except Exception as e:  # a node lost during discovery: said, not hidden
            out.append({"node_id": node, "groups": [], "warnings": [], "error": _reason(e)})
    _share_out(out)
    return out


def _share_out(nodes: List[Dict[str, Any]]) -> None:
    """Gives each rank to one of the nodes that hold it, the one given the fewest so far: on a
    shared filesystem every node sees every rank, which would otherwise be analysed (and listed)
    once per node; the work is still spread over the nodes."""
    holders: Dict[Tuple, List[Tuple[int, Dict[str, Any]]]] = {}
    for i, n in enumerate(nodes):
        n["found"] = len(n["groups"])
        for g in n["groups"]:
            holders.setdefault(_key(g), []).append((i, g))
    given: List[List[Dict[str, Any]]] = [[] for _ in nodes]
    for held in holders.values():
        i, g = min(held, key=lambda h: (len(given[h[0]]), h[0]))
        given[i].append(g)
    for n, groups in zip(nodes, given):
        n["groups"] = groups


_COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def _reason(e: BaseException) -> str:
    """Why a task failed, for the summary file: the task's own exception rather than Ray's
    wrapper (which adds the remote traceback), without terminal colour codes."""
    import ray

    cause = getattr(e, "cause", None)
    if isinstance(e, ray.exceptions.RayTaskError) and isinstance(cause, BaseException):
        e = cause
    return _COLOURS.sub("", f"{type(e).__name__}: {e}").strip()


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while ranks were being summarised: `ranks` holds those done and, for each rank not
    done, its summary as failed with the reason (so a re-run with the same `out` does it)."""

    def __init__(self, ranks: List[str], pending: int) -> None:
        super().__init__()
        self.ranks = ranks
        self.pending = pending


def _ended(ray, gen) -> bool:
    """Whether a rank task's next item (its summaries, or its error) has come: asked of a task
    past its limit just before it would be cancelled. A cancel that meets the reply of a task
    just ending aborts the driver in Ray 2.60 (docs/hardening.md, *Ctrl-C and Ray's cancel*); a
    task that has already ended is not cancelled, which leaves that race only the instant
    between this look and the cancel."""
    ready, _ = ray.wait([gen], num_returns=1, timeout=0, fetch_local=False)
    return bool(ready)


def summarize_ranks(
    root: str,
    nodes: List[Dict[str, Any]],
    skip=frozenset(),
    retries: int = 1,
    timeout: Optional[float] = None,
) -> List[str]:
    """One task per rank group on the node that holds it; returns rank summaries (JSON texts), in
    the order of `nodes` and their groups. A failed task (after `retries` retries of a lost
    worker), or one that runs longer than `timeout` seconds (counted from its start on its node,
    not while it waits for a CPU there; then cancelled), becomes that rank's error; a task that
    has ended by the time the driver looks at it past its limit is taken as done. Ctrl-C raises
    `Interrupted` with every rank accounted for; the tasks not done are left to run out (their
    results unused), not cancelled: see the handler."""
    import time

    import ray

    rank_task = ray.remote(_started_then)
    tasks = []
    for node in nodes:
        on_node = _pinned(rank_task, node["node_id"], retries, num_returns="streaming")
        for group in node.get("groups", []):
            if _key(group) in skip:
                continue
            g = json.dumps(group)
            tasks.append((g, on_node.remote(_summarize, root, g)))
    results: List[Optional[List[str]]] = [None] * len(tasks)
    pending = {gen: i for i, (_, gen) in enumerate(tasks)}
    started: Dict[int, Tuple[float, Any]] = {}  # task -> (when its mark came, the mark's ref)

    def finish(i: int, ranks: List[str]) -> None:
        results[i] = ranks
        del pending[tasks[i][1]]

    try:
        while pending:
            running = {i: t0 for i, (t0, _) in started.items() if results[i] is None}
            wait = None
            if timeout is not None:
                now = time.monotonic()
                for i, t0 in running.items():
                    if now - t0 >= timeout and not _ended(ray, tasks[i][1]):
                        ray.cancel(tasks[i][1], force=True)
                        finish(i, [_native.failed_rank(tasks[i][0], f"not done within {timeout:g} s (cancelled)")])
                # A task past its limit that has ended is left to the wait below (it waits 0 s
                # then) and taken as done.
                left = [timeout - (now - t0) for i, t0 in running.items() if results[i] is None]
                wait = max(0.0, min(left)) if left else None
            waiting = list(pending)
            ready, _ = ray.wait(waiting, num_returns=1, timeout=wait, fetch_local=False)
            if ready and len(waiting) > 1:
                # Every task ready by now, not only the first: a wait looks at each task waited
                # on, so one wait per task made the driver's work grow with the square of the ranks.
                ready, _ = ray.wait(waiting, num_returns=len(waiting), timeout=0, fetch_local=False)
            for gen in ready:
                i = pending[gen]
                if i not in started:
                    started[i] = (time.monotonic(), next(gen, None))
                    continue
                # The summaries; a task that failed before its mark ends there, with the error.
                ref = next(gen, None)
                try:
                    finish(i, ray.get(started[i][1] if ref is None else ref))
                except Exception as e:  # the task's worker or node was lost, or the task raised
                    finish(i, [_native.failed_rank(tasks[i][0], _reason(e))])
    except KeyboardInterrupt:
        # No `ray.cancel` here. Ray 2.60 aborts the driver process (a failed check, "Tried to
        # complete task that was not pending", in TaskManager::CompletePendingTask) when a cancel
        # meets the reply of a task that is just ending, and Ctrl-C cancels many tasks at once
        # while others end: a clean-clone test run lost its whole pytest process that way
        # (docs/hardening.md, *Ctrl-C and Ray's cancel*). The job's tasks end with the driver
        # process (the CLI exits at once); in a longer session they run out, each bounded by its
        # rank's files.
        for i in pending.values():
            results[i] = [_native.failed_rank(tasks[i][0], "interrupted (Ctrl-C) before this rank was summarised")]
        raise Interrupted([r for rs in results for r in rs or ()], len(pending)) from None
    return [r for rs in results for r in rs or ()]


def _nothing_found(root: str, nodes: List[Dict[str, Any]]) -> Exception:
    """The error for a root under which no node holds a rank: each node's reason."""
    lines = [f"{root}: no rank found on any node ({plural(len(nodes), 'node')} looked)"]
    for n in nodes:
        why = n.get("error") or n.get("problem") or "nothing to analyse there (no profiler run folder)"
        lines.append(f"  node {n.get('address', '?')} ({n['node_id'][:8]}): {why}")
        lines.extend(f"    {w}" for w in n.get("warnings", []))
    everywhere_missing = bool(nodes) and all(n.get("missing") for n in nodes)
    return (InputNotFoundError if everywhere_missing else NothingToAnalyseError)("\n".join(lines))


def _writable(out: str) -> None:
    """Refuses an `out` that cannot be written before any task runs (not after the analysis)."""
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise InputNotFoundError(f"{out}: cannot write the job summary: no such folder {folder}")
    if not os.access(folder, os.W_OK):
        raise _native.MemlensError(f"{out}: cannot write the job summary: permission denied in {folder}")


def analyze_job(
    root: str,
    address: Optional[str] = None,
    out: Optional[str] = None,
    rerun: bool = False,
    retries: int = 1,
    timeout: Optional[float] = None,
) -> Dict[str, Any]:
    """Summarises the job under `root` on every node of the Ray cluster at `address` (None: the
    current one, or a new local one) and returns the job summary; writes it to `out` when given.
    With `out` naming an existing summary, its ranks with data are kept and not analysed again
    unless `rerun`; those whose folders no node holds any more are dropped and listed in
    `dropped` (unless some node's discovery failed: then every one is kept). Beside the file's
    keys the returned object says per node how many ranks it held and was given (`nodes`:
    `found`, `ranks`, with any discovery `problem`, `error` and `warnings`), and how many ranks
    were `skipped` and `analysed`. A rank task that runs longer than `timeout` seconds on its
    node (from its start there, not counting its wait for a CPU) is cancelled and the rank
    reported as not done; `retries` retries a task whose worker was lost.

    Raises before any rank task runs: InputNotFoundError when the root exists on no node (or
    `out`'s folder does not exist), NothingToAnalyseError when no node holds a rank under it,
    MemlensError when `out` exists but is not a job summary. On Ctrl-C (`Interrupted`, a
    KeyboardInterrupt) the ranks done are written to `out`, the others as interrupted; their
    tasks are not cancelled (they end with the process, or run out, their results dropped).
    ValueError: a `timeout` not above 0 or a negative `retries`."""
    import ray

    _check_limits(timeout, retries)
    if out:
        _writable(out)
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    kept: List[str] = []
    if out and os.path.exists(out) and not rerun:
        with open(out, encoding="utf-8") as f:
            old = _native.read_summary_ranks(out, f.read())
        kept = [r for r in old if json.loads(r).get("status") == "ok"]
    nodes = discover_job(root)
    kept, dropped = _still_held(kept, nodes)
    skip = frozenset(_key(json.loads(r)) for r in kept)
    if not kept and not any(n["groups"] for n in nodes):
        raise _nothing_found(root, nodes)
    try:
        fresh = summarize_ranks(root, nodes, skip=skip, retries=retries, timeout=timeout)
    except Interrupted as stop:
        if out:
            _write(out, _native.merge_summaries(kept + stop.ranks))
        raise
    text = _native.merge_summaries(kept + fresh)
    summary = json.loads(text)
    # Not part of the file (it would differ from the one-machine summary): which node held how
    # many ranks, and what discovery said on each node.
    keys = ("node_id", "address", "found", "problem", "error", "warnings")
    summary["nodes"] = [dict({k: n[k] for k in keys if n.get(k)}, ranks=len(n["groups"])) for n in nodes]
    summary["skipped"] = len(kept)
    summary["dropped"] = dropped
    summary["analysed"] = len(fresh)
    if out:
        _write(out, text)
    return summary


def _still_held(kept: List[str], nodes: List[Dict[str, Any]]) -> Tuple[List[str], List[Dict[str, Any]]]:
    """The ranks of an old summary (`kept`) that some node still holds, and the others (role,
    rank, step, run_dirs): their folders are gone, so they leave the new summary, which then
    describes the job as it is now (the file the CLI writes for the same folders). When some
    node's discovery failed, what it holds is unknown: every kept rank stays."""
    if any(n.get("error") for n in nodes):
        return kept, []
    held = {_key(g) for n in nodes for g in n["groups"]}
    still, gone = [], []
    for text in kept:
        r = json.loads(text)
        if _key(r) in held:
            still.append(text)
        else:
            gone.append({k: r.get(k) for k in ("role", "rank", "step", "run_dirs")})
    return still, gone


def _write(out: str, text: str) -> None:
    tmp = f"{out}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out)


_EXIT_CODES = """exit status: 0 every rank summarised; 1 no rank found under ROOT on any node (the
paths hold nothing to analyse); 2 bad input: ROOT exists on no node, --out cannot be written or is
not a job summary, or some rank failed (the others are in --out, each failed one with its reason);
130 interrupted (Ctrl-C): the ranks done are in --out, the same command again does the rest."""


_NOT_SECONDS = "the limit must be a number of seconds above 0"
_NOT_RETRIES = "the number of retries must be 0 or more"


def _check_limits(timeout: Optional[float] = None, retries: int = 0) -> None:
    """Refuses a `timeout` that is not a number of seconds above 0 (0 would cancel every task at
    its start) and a negative `retries`, before anything runs."""
    if timeout is not None and not 0 < timeout < float("inf"):
        raise ValueError(f"timeout {timeout!r}: {_NOT_SECONDS}")
    if retries < 0:
        raise ValueError(f"retries {retries!r}: {_NOT_RETRIES}")


def _option(limit: str, parse, noun: str, rule: str):
    """An argparse `type` for the command's `limit` option (`timeout`, `retries`): `parse`d, then
    held to `_check_limits`; argparse names the option with either refusal."""

    def value(text: str):
        try:
            v = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None
        try:
            _check_limits(**{limit: v})
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {rule}") from None
        return v

    return value


def main(argv: Optional[List[str]] = None) -> int:
    """`python -m memlens.ray ROOT --out job.memlens.json [--address ADDR] [--rerun]
    [--timeout SECONDS] [--retries N]`; returns the exit status (`_EXIT_CODES`, the memlens
    CLI's conventions)."""
    p = argparse.ArgumentParser(
        prog="python -m memlens.ray",
        description=__doc__.split("\n\n")[0],
        epilog=_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("root", help="the job's folder on every node (environment variables expanded per node)")
    p.add_argument("--out", required=True, help="the job summary file to write")
    p.add_argument("--address", default=None, help="Ray cluster address (default: the current or a new local one)")
    p.add_argument("--rerun", action="store_true", help="analyse ranks already in --out again")
    p.add_argument(
        "--timeout",
        type=_option("timeout", float, "a number of seconds", _NOT_SECONDS),
        default=None,
        metavar="SECONDS",
        help="cancel a rank task that runs longer than this on its node (its wait for a CPU not"
        " counted); the rank is reported as not done (default: no limit)",
    )
    p.add_argument(
        "--retries",
        type=_option("retries", int, "a whole number", _NOT_RETRIES),
        default=1,
        metavar="N",
        help="run a rank task again up to N times when its worker process or node is lost (default: 1)",
    )
    a = p.parse_args(argv)
    try:
        s = analyze_job(a.root, address=a.address, out=a.out, rerun=a.rerun, retries=a.retries, timeout=a.timeout)
    except Interrupted as stop:
        print(
            f"{p.prog}: interrupted: {plural(stop.pending, 'rank')} not summarised, marked so in {a.out};"
            " the same command again analyses them",
            file=sys.stderr,
        )
        return 130
    except KeyboardInterrupt:  # before any rank task (discovery, connecting): nothing to keep
        print(f"{p.prog}: interrupted before any rank was summarised; nothing written", file=sys.stderr)
        return 130
    except _native.MemlensError as e:
        print(f"{p.prog}: {e}", file=sys.stderr)
        return 1 if isinstance(e, NothingToAnalyseError) else 2
    for r in s["dropped"]:
        print(
            f"  {r['role'] or '-'} rank {r['rank']} ({', '.join(r['run_dirs'] or ())}): in {a.out} but no longer"
            f" under {a.root} on any node; dropped",
            file=sys.stderr,
        )
    t = s["totals"]
    print(f"{plural(t['ranks'], 'rank')}: {t['ok']:,} summarised, {t['failed']:,} failed; written to {a.out}")
    for n in s["nodes"]:
        where = f"node {n.get('address', '?')} ({n['node_id'][:8]})"
        if n.get("error"):
            print(f"  {where}: discovery failed: {n['error']}", file=sys.stderr)
        if n.get("problem"):
            print(f"  {where}: {n['problem']}", file=sys.stderr)
        for w in n.get("warnings", []):
            print(f"  {where}: {w}", file=sys.stderr)
    for r in s["ranks"]:
        if r["status"] != "ok":
            print(f"  {r['role'] or '-'} rank {r['rank']}: {r['error']}", file=sys.stderr)
    return 0 if t["failed"] == 0 else 2


if __name__ == "__main__":
    sys.exit(main())
