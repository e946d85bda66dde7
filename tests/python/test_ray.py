"""memlens.ray on a local three-node Ray cluster (ray.cluster_utils.Cluster), each node given its
own folder as its "local disk" ($MEMLENS_DISK in the node's environment) holding a third of a
generated 2 roles x 12 ranks job, one rank of it damaged:

- the Ray job summary equals, byte for byte, the one `memlens profiler --summary` writes on the
  union of the three folders; the damaged rank is in it with its error, the 23 others intact, and
  each rank's peak equals the maximum pandas reads from the rank's own memory_record.csv;
- a re-run skips the ranks already summarised (and `rerun=True` does not);
- a task whose worker process dies is retried, or with no retry left reported with the reason;
- a root every node sees (a shared filesystem) gives each rank once, the work spread;
- a root on no node, an empty root, an `out` that is no job summary or cannot be written: the
  reason and exit status before any rank task runs;
- a task that raises is reported with its own exception, one past its timeout is cancelled
  (unless it has ended by the time the driver looks), Ctrl-C writes the ranks done and cancels
  nothing; the command's --timeout and --retries reach the tasks, and a bad limit is refused
  before anything runs;
- the ranks of a node lost after discovery are reported with the reason, the others intact.

Kept small (tiny traces, one CPU per node) so the file runs in about a minute on two cores."""
import json
import shutil
import sys

import pandas as pd
import pytest
import ray
from ray.cluster_utils import Cluster

import memlens
import memlens.ray as mray

ROLES, RANKS, NODES = 2, 12, 3
ROOT = "$MEMLENS_DISK/job"


@pytest.fixture(scope="module")
def spread(cli, tmp_path_factory):
    base = tmp_path_factory.mktemp("ray")
    gen = base / "generated" / "job"
    cli("generate", "profiler", "--out", gen, "--roles", ROLES, "--ranks", RANKS, "--trace-mb", "0.02",
        "--rows", "60", "--steps", "2", "--seed", "5")
    runs = sorted(gen.glob("*/*_ascend_pt"))
    assert len(runs) == ROLES * RANKS
    disks = [base / f"disk{i}" for i in range(NODES)]
    for k, run in enumerate(runs):
        shutil.copytree(run, disks[k % NODES] / "job" / run.parent.name / run.name)
    # One damaged rank on the second node: every CSV replaced by bytes that are no CSV.
    damaged = disks[1] / "job" / runs[1].parent.name / runs[1].name
    for f in (damaged / "ASCEND_PROFILER_OUTPUT").glob("*.csv"):
        f.write_bytes(b"\xff\xfe not a csv \x00\n")
    union = base / "union" / "job"
    for d in disks:
        shutil.copytree(d / "job", union, dirs_exist_ok=True)
    return {"base": base, "disks": disks, "union": union, "damaged": f"job/{runs[1].parent.name}/{runs[1].name}"}


@pytest.fixture(scope="module")
def cluster(spread):
    disks = spread["disks"]
    c = Cluster(initialize_head=True, connect=True,
                head_node_args={"num_cpus": 1, "env_vars": {"MEMLENS_DISK": str(disks[0])}})
    workers = [c.add_node(num_cpus=1, env_vars={"MEMLENS_DISK": str(d)}) for d in disks[1:]]
    c.wait_for_nodes()
    yield c, workers
    ray.shutdown()
    c.shutdown()


def pta_peak_bytes(run_dir):
    rec = pd.read_csv(run_dir / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv")
    mb = rec[rec["Component"] == "PTA"]["Total Allocated(MB)"].max()
    return int(round(mb * (1 << 20)))


def test_ray_summary_equals_the_cli_summary_of_the_union(cluster, spread, cli):
    out = spread["base"] / "ray.memlens.json"
    s = mray.analyze_job(ROOT, out=str(out))
    cli_file = spread["base"] / "cli.memlens.json"
    cli("profiler", spread["union"], "--summary", cli_file, check=False)
    assert out.read_bytes() == cli_file.read_bytes()

    assert [n["ranks"] for n in s["nodes"]] == [8, 8, 8]
    assert len({n["node_id"] for n in s["nodes"]}) == NODES
    assert s["totals"] == json.loads(out.read_text())["totals"]
    assert (s["totals"]["ranks"], s["totals"]["ok"], s["totals"]["failed"]) == (24, 23, 1)
    bad = [r for r in s["ranks"] if r["status"] != "ok"]
    assert [r["run_dirs"] for r in bad] == [[spread["damaged"]]]
    assert "operator_memory.csv" in bad[0]["error"] and "memory_record.csv" in bad[0]["error"]
    for r in s["ranks"]:
        if r["status"] == "ok":
            (run,) = r["run_dirs"]
            assert r["peak_allocated_bytes"] == pta_peak_bytes(spread["union"].parent / run), run
            assert max(r["curve"]["allocated_bytes"]) == r["peak_allocated_bytes"]
            assert r["report"]["rank"] == r["rank"]
    roles = {r["role"] for r in s["ranks"]}
    assert len(roles) == ROLES


def test_rerun_skips_ranks_already_summarised(cluster, spread):
    out = spread["base"] / "ray.memlens.json"
    before = out.read_bytes()
    again = mray.analyze_job(ROOT, out=str(out))
    assert (again["skipped"], again["analysed"]) == (23, 1)
    assert out.read_bytes() == before
    full = mray.analyze_job(ROOT, out=str(out), rerun=True)
    assert (full["skipped"], full["analysed"]) == (0, 24)
    assert out.read_bytes() == before


def test_a_rerun_drops_kept_ranks_whose_folders_are_gone_and_names_them(cluster, spread, capsys, cli):
    """A rank summarised in `--out` whose run folder is no longer under ROOT on any node is
    dropped on a re-run, with a warning naming it: the file describes the job as it is, the
    one the CLI writes for the same folder. Failed on the old driver: the gone rank stayed in the
    file (3 ranks where the folder holds 2), and nothing was said."""
    root = spread["base"] / "shrinking" / "job"
    runs = [r for r in sorted(spread["union"].glob("*/*_ascend_pt"))
            if f"job/{r.parent.name}/{r.name}" != spread["damaged"]][:3]
    for r in runs:
        shutil.copytree(r, root / r.parent.name / r.name)
    out = spread["base"] / "shrinking.memlens.json"
    assert mray.main([str(root), "--out", str(out)]) == 0
    assert len(json.loads(out.read_text())["ranks"]) == 3
    gone = runs[1]
    shutil.rmtree(root / gone.parent.name / gone.name)
    capsys.readouterr()
    assert mray.main([str(root), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    (rank,) = [r for r in json.loads(cli("profiler", gone, "--json").stdout)["ranks"]]
    want = (f"  {gone.parent.name} rank {rank['rank']} (job/{gone.parent.name}/{gone.name}): in {out} but no "
            f"longer under {root} on any node; dropped")
    assert want in err.splitlines(), err
    cli_file = spread["base"] / "cli-shrinking.memlens.json"
    cli("profiler", root, "--summary", cli_file, check=False)
    assert out.read_bytes() == cli_file.read_bytes()
    assert len(json.loads(out.read_text())["ranks"]) == 2


def killed_once(root, group):
    """The rank task, except that the first task on each node kills its own worker process."""
    import os

    marker = os.path.join(os.environ["MEMLENS_DISK"], "killed-once")
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return mray._summarize(root, group)


def test_a_killed_task_is_retried_or_reported(cluster, spread, monkeypatch):
    # The replacement task travels by value (this test module is not importable on the workers).
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(mray, "_summarize", killed_once)
    nodes = mray.discover_job(ROOT)
    markers = [d / "killed-once" for d in spread["disks"]]
    for m in markers:
        m.unlink(missing_ok=True)
    retried = [json.loads(t) for t in mray.summarize_ranks(ROOT, nodes, retries=1, timeout=300)]
    assert all(m.exists() for m in markers)  # a worker died on every node…
    assert sum(r["status"] == "ok" for r in retried) == 23  # …and its task ran again
    for m in markers:
        m.unlink()
    reported = [json.loads(t) for t in mray.summarize_ranks(ROOT, nodes, retries=0, timeout=300)]
    assert len(reported) == 24
    killed = [r for r in reported if r["status"] == "error" and "Worker" in r["error"]]
    assert len(killed) == NODES, [r["error"] for r in reported if r["status"] == "error"]
    damaged = [r for r in reported if r["run_dirs"] == [spread["damaged"]]]
    others = [r for r in reported if r not in killed and r not in damaged]
    assert others and all(r["status"] == "ok" for r in others)


def test_a_root_every_node_sees_gives_each_rank_once(cluster, spread, cli):
    # The union folder is one path on this machine, so every node of the local cluster sees all
    # 24 ranks, as on a shared filesystem. The old driver analysed and listed each rank once per
    # node: 72 ranks.
    out = spread["base"] / "shared.memlens.json"
    s = mray.analyze_job(str(spread["union"]), out=str(out))
    cli_file = spread["base"] / "cli-union.memlens.json"
    cli("profiler", spread["union"], "--summary", cli_file, check=False)
    assert out.read_bytes() == cli_file.read_bytes()
    assert s["totals"]["ranks"] == ROLES * RANKS
    assert [n["found"] for n in s["nodes"]] == [ROLES * RANKS] * NODES
    assert [n["ranks"] for n in s["nodes"]] == [ROLES * RANKS // NODES] * NODES


def no_rank_task(*args, **kwargs):
    raise AssertionError("a rank task was started")


def test_a_root_on_no_node_or_an_empty_one_fails_with_each_nodes_reason(cluster, spread, capsys, monkeypatch):
    # The old driver wrote a summary of 0 ranks and exited with 0 for both.
    monkeypatch.setattr(mray, "summarize_ranks", no_rank_task)
    out = spread["base"] / "none.memlens.json"
    assert mray.main(["$MEMLENS_DISK/no-such-job", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    for d in spread["disks"]:
        assert f"{d}/no-such-job: no such file or directory" in err, err
    assert not out.exists()
    for d in spread["disks"]:
        (d / "empty-job").mkdir(exist_ok=True)
    with pytest.raises(memlens.NothingToAnalyseError, match="no rank found on any node"):
        mray.analyze_job("$MEMLENS_DISK/empty-job")
    assert mray.main(["$MEMLENS_DISK/empty-job", "--out", str(out)]) == 1
    assert "$MEMLENS_DISK/empty-job: no rank found on any node (3 nodes looked)" in capsys.readouterr().err
    assert not out.exists()


def test_an_out_that_is_no_summary_or_cannot_be_written_is_refused_first(cluster, spread, capsys, monkeypatch):
    # The old driver raised a traceback out of main for the first, and for the second analysed
    # every rank before failing to write.
    monkeypatch.setattr(mray, "summarize_ranks", no_rank_task)
    notes = spread["base"] / "notes.json"
    notes.write_text('{"hello": 1}')
    assert mray.main([ROOT, "--out", str(notes)]) == 2
    err = capsys.readouterr().err
    assert f"{notes}: error: not a job summary" in err and "Traceback" not in err
    assert notes.read_text() == '{"hello": 1}'
    nowhere = spread["base"] / "no-such-folder" / "job.memlens.json"
    assert mray.main([ROOT, "--out", str(nowhere)]) == 2
    assert f"{nowhere}: cannot write the job summary: no such folder" in capsys.readouterr().err


def raises(root, group):
    raise RuntimeError("disk on fire")


def test_a_task_that_raises_is_reported_with_its_own_exception(cluster, spread, monkeypatch):
    # The old reason was Ray's wrapper: terminal colour codes and the remote traceback.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(mray, "_summarize", raises)
    nodes = mray.discover_job(ROOT)
    ranks = [json.loads(t) for t in mray.summarize_ranks(ROOT, nodes, retries=0, timeout=120)]
    assert len(ranks) == ROLES * RANKS
    assert {(r["status"], r["error"]) for r in ranks} == {("error", "RuntimeError: disk on fire")}


def sleeps_then_marks(root, group):
    """A rank task that takes 4 s, then leaves a mark on its node's disk."""
    import os
    import time

    time.sleep(4)
    open(os.path.join(os.environ["MEMLENS_DISK"], "slow-task-finished"), "w").close()
    return mray._summarize(root, group)


def test_a_task_past_its_timeout_is_reported_and_cancelled(cluster, spread, monkeypatch):
    # The old driver reported the rank but left its task running on the node to the end.
    import time

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(mray, "_summarize", sleeps_then_marks)
    node = mray.discover_job(ROOT)[0]
    one = [dict(node, groups=node["groups"][:1])]
    marks = [d / "slow-task-finished" for d in spread["disks"]]
    for m in marks:
        m.unlink(missing_ok=True)
    (rank,) = [json.loads(t) for t in mray.summarize_ranks(ROOT, one, retries=0, timeout=1)]
    assert (rank["status"], rank["error"]) == ("error", "not done within 1 s (cancelled)")
    time.sleep(5)
    assert not any(m.exists() for m in marks)


def test_a_task_that_ended_past_its_timeout_is_taken_not_cancelled(cluster, spread, monkeypatch):
    """A task past its limit is cancelled only if it has not ended: a cancel that meets the reply
    of a task just ending aborts the driver in Ray 2.60. The driver is made late here: its wait
    bounded by the limit (1 s) returns after 4 s having seen nothing, as if the task's reply came
    just after it, while the task (a tiny rank) ended long before. The old driver cancelled it
    and reported the rank "not done within 1 s"."""
    import time

    real_wait = ray.wait
    late = []

    def late_wait(refs, *, num_returns=1, timeout=None, fetch_local=True):
        if timeout is not None and timeout > 0:
            late.append(timeout)
            time.sleep(timeout + 3)
            return [], list(refs)
        return real_wait(refs, num_returns=num_returns, timeout=timeout, fetch_local=fetch_local)

    node = mray.discover_job(ROOT)[0]
    group = next(g for g in node["groups"] if g["run_dirs"] != [spread["damaged"]])
    cancelled = []
    monkeypatch.setattr(ray, "wait", late_wait)
    monkeypatch.setattr(ray, "cancel", lambda ref, **kw: cancelled.append(ref))
    one = [dict(node, groups=[group])]
    (rank,) = [json.loads(t) for t in mray.summarize_ranks(ROOT, one, retries=0, timeout=1)]
    assert late, "the driver never waited with the limit: the test did not make it late"
    assert (rank["status"], rank.get("error"), cancelled) == ("ok", None, [])


def sleeper(seconds):
    """A rank task that sleeps `seconds[run folder]`, then summarises the rank."""

    def sleeps(root, group):
        import json
        import time

        time.sleep(seconds[json.loads(group)["run_dirs"][0]])
        return mray._summarize(root, group)

    return sleeps


def test_the_timeout_counts_a_tasks_own_run_time(cluster, spread, monkeypatch):
    """`timeout` limits how long each rank's task runs on its node, from its start: not the
    driver's wait for it, nor the time it queues behind its node's other ranks. One node (one
    CPU) runs two 2 s tasks one after the other, another one 6 s task, timeout 4 s: the 6 s task
    is cancelled, the queued 2 s one is not. Failed on the old driver, whose clock for a task
    started when it began waiting for that task (after the first node's two): the 6 s task ended
    within its wait and was reported summarised."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    first, second = [
        dict(n, groups=[g for g in n["groups"] if g["run_dirs"] != [spread["damaged"]]])
        for n in mray.discover_job(ROOT)[:2]
    ]
    two, one = first["groups"][:2], second["groups"][:1]
    seconds = {g["run_dirs"][0]: 2 for g in two} | {one[0]["run_dirs"][0]: 6}
    monkeypatch.setattr(mray, "_summarize", sleeper(seconds))
    nodes = [dict(first, groups=two), dict(second, groups=one)]
    ranks = [json.loads(t) for t in mray.summarize_ranks(ROOT, nodes, retries=0, timeout=4)]
    status = {r["run_dirs"][0]: (r["status"], r.get("error")) for r in ranks}
    assert status.pop(one[0]["run_dirs"][0]) == ("error", "not done within 4 s (cancelled)")
    assert list(status.values()) == [("ok", None)] * 2


def test_the_command_passes_its_timeout_and_retries_to_the_rank_tasks(cluster, spread, capsys, monkeypatch):
    """`python -m memlens.ray ... --timeout SECONDS --retries N` limit each rank task as
    `analyze_job(timeout=, retries=)` do. One node's two ranks: one sleeps 6 s, the other kills its
    worker once. With `--timeout 3 --retries 0` the first is cancelled and the second reported
    lost, each named on stderr and in --out (exit 2); with the default retries the second is run
    again and summarised. Failed on the old command, which had neither option (argparse:
    "unrecognized arguments")."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    node = [n for n in mray.discover_job(ROOT) if len(n["groups"]) >= 2][0]
    slow, killed = [g for g in node["groups"] if g["run_dirs"] != [spread["damaged"]]][:2]
    nodes = [dict(node, groups=[slow, killed])]
    monkeypatch.setattr(mray, "discover_job", lambda root: nodes)
    marker = [d for d in spread["disks"] if (d / killed["run_dirs"][0]).exists()][0] / "killed-once"

    def slow_or_killed(root, group):
        import json
        import os
        import time

        if json.loads(group)["run_dirs"] == slow["run_dirs"]:
            time.sleep(6)
        else:
            mark = os.path.join(os.environ["MEMLENS_DISK"], "killed-once")
            if not os.path.exists(mark):
                open(mark, "w").close()
                os._exit(1)
        return mray._summarize(root, group)

    monkeypatch.setattr(mray, "_summarize", slow_or_killed)
    out = spread["base"] / "limited.memlens.json"
    marker.unlink(missing_ok=True)
    capsys.readouterr()
    assert mray.main([ROOT, "--out", str(out), "--timeout", "3", "--retries", "0"]) == 2
    err = capsys.readouterr().err
    status = {r["run_dirs"][0]: (r["status"], r.get("error") or "") for r in json.loads(out.read_text())["ranks"]}
    assert status[slow["run_dirs"][0]] == ("error", "not done within 3 s (cancelled)")
    assert status[killed["run_dirs"][0]][0] == "error" and "Worker" in status[killed["run_dirs"][0]][1]
    assert "not done within 3 s (cancelled)" in err
    marker.unlink()
    assert mray.main([ROOT, "--out", str(out), "--rerun", "--timeout", "30"]) == 0
    assert [r["status"] for r in json.loads(out.read_text())["ranks"]] == ["ok", "ok"]
    assert marker.exists()  # the worker died once and the task ran again


@pytest.mark.parametrize("args, said", [
    (["--timeout", "0"], "argument --timeout: '0': the limit must be a number of seconds above 0"),
    (["--timeout", "-5"], "argument --timeout: '-5': the limit must be a number of seconds above 0"),
    (["--timeout", "nan"], "argument --timeout: 'nan': the limit must be a number of seconds above 0"),
    (["--timeout", "10s"], "argument --timeout: '10s' is not a number of seconds"),
    (["--retries", "-1"], "argument --retries: '-1': the number of retries must be 0 or more"),
    (["--retries", "1.5"], "argument --retries: '1.5' is not a whole number"),
])
def test_a_bad_timeout_or_retries_is_refused_before_anything_runs(tmp_path, capsys, monkeypatch, args, said):
    def must_not_run(*a, **k):
        pytest.fail("analyze_job ran with a bad option")

    monkeypatch.setattr(mray, "analyze_job", must_not_run)
    with pytest.raises(SystemExit) as stop:
        mray.main([str(tmp_path), "--out", str(tmp_path / "x.json"), *args])
    assert stop.value.code == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("limits, said", [
    ({"timeout": 0}, "timeout 0: the limit must be a number of seconds above 0"),
    ({"timeout": float("nan")}, "timeout nan: the limit must be a number of seconds above 0"),
    ({"retries": -1}, "retries -1: the number of retries must be 0 or more"),
])
def test_analyze_job_refuses_a_bad_timeout_or_retries_before_connecting(tmp_path, monkeypatch, limits, said):
    # On the old analyze_job a timeout of 0 cancelled every rank task at its start.
    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("connected with a bad limit"))
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    with pytest.raises(ValueError, match=said):
        mray.analyze_job(str(tmp_path), **limits)


def main_after_ctrl_c(argv, capsys):
    """`python -m memlens.ray ARGV` where a Ctrl-C comes: it must not escape main(), the exit
    status is 130; returns what was said on stderr."""
    try:
        status = mray.main(argv)
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped main()")
    assert status == 130
    return capsys.readouterr().err


def test_ctrl_c_writes_the_ranks_done_and_a_rerun_finishes(cluster, spread, capsys, monkeypatch, cli):
    nodes = mray.discover_job(ROOT)
    monkeypatch.setattr(mray, "discover_job", lambda root: nodes)
    real_get, calls = ray.get, []

    def get_then_ctrl_c(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real_get(*args, **kwargs)

    monkeypatch.setattr(ray, "get", get_then_ctrl_c)
    # Ctrl-C cancels no task: a cancel that meets a task's end aborts the driver in Ray 2.60
    # (python/memlens/ray.py, the Ctrl-C handler), and it once took this test's process with it.
    cancelled = []
    monkeypatch.setattr(ray, "cancel", lambda *a, **k: cancelled.append(a))
    out = spread["base"] / "interrupted.memlens.json"
    assert "20 ranks not summarised" in main_after_ctrl_c([ROOT, "--out", str(out)], capsys)
    assert cancelled == []
    ranks = json.loads(out.read_text())["ranks"]
    assert len(ranks) == ROLES * RANKS
    interrupted = [r for r in ranks if r["status"] == "error" and r["error"].startswith("interrupted")]
    assert len(interrupted) == 20
    monkeypatch.setattr(ray, "get", real_get)
    ok = sum(r["status"] == "ok" for r in ranks)
    again = mray.analyze_job(ROOT, out=str(out))
    assert (again["skipped"], again["analysed"]) == (ok, ROLES * RANKS - ok)
    cli_file = spread["base"] / "cli-again.memlens.json"
    cli("profiler", spread["union"], "--summary", cli_file, check=False)
    assert out.read_bytes() == cli_file.read_bytes()


def test_ctrl_c_during_discovery_exits_130_without_a_traceback(cluster, spread, capsys, monkeypatch):
    def ctrl_c(root):
        raise KeyboardInterrupt

    monkeypatch.setattr(mray, "discover_job", ctrl_c)
    out = spread["base"] / "early.memlens.json"
    err = main_after_ctrl_c([ROOT, "--out", str(out)], capsys)
    assert "interrupted before any rank was summarised; nothing written" in err
    assert not out.exists()


def test_ranks_of_a_lost_node_are_reported(cluster, spread):
    c, workers = cluster
    nodes = mray.discover_job(ROOT)
    lost = workers[-1]
    lost_id = lost.node_id
    c.remove_node(lost)
    ranks = [json.loads(t) for t in mray.summarize_ranks(ROOT, nodes, retries=0, timeout=120)]
    lost_dirs = {tuple(g["run_dirs"]) for n in nodes if n["node_id"] == lost_id for g in n["groups"]}
    assert len(lost_dirs) == 8
    assert len(ranks) == 24
    for r in ranks:
        if tuple(r["run_dirs"]) in lost_dirs:
            assert r["status"] == "error" and r["error"], r
        elif r["run_dirs"] != [spread["damaged"]]:
            assert r["status"] == "ok", r
