"""memlens's Python API against the CLI on the real samples (same rows, columns, values and
figures) and against the expectations RL-Insight's own conversions give
(fixtures/contract/memory_events_expected.json, written by a standalone Python script)."""
import json
import math
import os
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import memlens
from conftest import ROOT, SAMPLE, SOMAS

CONTRACT_DTYPES = {
    "name": "object",
    "role": "object",
    "rank_id": "int64",
    "call_stack": "object",
    "call_stack_top": "object",
    "size_kb": "float64",
    "start_time_ms": "float64",
    "duration_ms": "float64",
    "total_allocated_mb": "float64",
    "total_reserved_mb": "float64",
    "total_active_mb": "float64",
    "device_type": "object",
}
STR_COLUMNS = ["name", "role", "call_stack", "call_stack_top", "device_type", "stream", "source",
               "stack_source", "user_frame", "run_dir"]
NULLABLE_NUMBERS = ["release_time_ms", "active_release_time_ms", "active_duration_ms", "step"]


@pytest.fixture(scope="module")
def job():
    return memlens.analyze(SAMPLE)


@pytest.fixture(scope="module")
def cli_csv(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("cli")
    cli("profiler", SAMPLE, "--out", out)
    return out / "memory_events.csv"


def test_events_equal_the_cli_csv(job, cli_csv):
    df = job.events()
    ref = pd.read_csv(cli_csv, dtype={c: str for c in STR_COLUMNS}, keep_default_na=False,
                      na_values={c: [""] for c in NULLABLE_NUMBERS}, float_precision="round_trip")
    assert list(df.columns) == list(ref.columns)
    assert len(df) == len(ref) == 368
    pd.testing.assert_frame_equal(df, ref, check_exact=True)
    # The bytes too: the package's CSV is the CLI's file.
    assert job.memory_events_csv() == cli_csv.read_bytes()


def test_events_have_the_contract_columns_and_dtypes(job, cli_csv):
    df = job.events()
    # The contract as RL-Insight's MemoryEventRow declares it, in its order.
    assert memlens.EVENT_CONTRACT_COLUMNS == tuple(CONTRACT_DTYPES)
    assert tuple(df.columns[:12]) == memlens.EVENT_CONTRACT_COLUMNS
    assert {c: str(df[c].dtype) for c in memlens.EVENT_CONTRACT_COLUMNS} == CONTRACT_DTYPES
    # A plain pd.read_csv of the CLI's file, as a notebook would do, gives the same dtypes.
    plain = pd.read_csv(cli_csv)
    assert {c: str(plain[c].dtype) for c in memlens.EVENT_CONTRACT_COLUMNS} == CONTRACT_DTYPES
    numbers = [c for c, t in CONTRACT_DTYPES.items() if t != "object"]
    assert not df[numbers].isna().any().any()
    assert str(df["released"].dtype) == "bool"
    assert int((df.duration_ms == 0).sum()) == 48


def test_events_match_the_python_tool_expectations(job):
    expected = json.loads((ROOT / "fixtures" / "contract" / "memory_events_expected.json").read_text())
    df = job.events()
    rows = expected["events"]
    assert len(df) == expected["rows"] == len(rows)
    for col in ["name", "role", "rank_id", "size_kb", "total_allocated_mb",
                "total_reserved_mb", "total_active_mb", "device_type", "released"]:
        assert df[col].tolist() == [r[col] for r in rows], col
    # The Python tool divides float microseconds by 1000; memlens's value is the exact decimal,
    # so the two agree to the last bits of a double.
    for col in ["start_time_ms", "duration_ms"]:
        for got, want in zip(df[col], (r[col] for r in rows)):
            assert math.isclose(got, want, rel_tol=1e-14, abs_tol=1e-12), (col, got, want)
    per_rank = df[~df.released].groupby("rank_id").size().to_dict()
    assert {str(k): v for k, v in per_rank.items()} == expected["unreleased_per_rank"]


def test_to_arrow_is_typed_and_equals_the_dataframe(job):
    table = job.to_arrow()
    assert isinstance(table, pa.Table)
    assert table.schema.field("rank_id").type == pa.int64()
    assert table.schema.field("size_kb").type == pa.float64()
    assert table.schema.field("released").type == pa.bool_()
    assert pa.types.is_large_string(table.schema.field("call_stack").type)
    assert table.column("release_time_ms").null_count == 48
    assert table.num_rows == 368
    pd.testing.assert_frame_equal(table.to_pandas(), job.events(), check_exact=True)


def test_report_is_the_cli_json(job, cli):
    out = cli("profiler", SAMPLE, "--json")
    assert job.report == json.loads(out.stdout)
    assert job["ranks"][0]["rank"] == 0
    assert len(job) == len(job.report)


def test_job_summary_is_the_cli_summary_file(job, cli, tmp_path):
    cli("profiler", SAMPLE, "--summary", tmp_path / "job.memlens.json")
    assert job.summary_json() == (tmp_path / "job.memlens.json").read_text()
    s = job.summary()
    assert (s["format"], s["version"]) == ("memlens-job-summary", 2)
    assert [r["rank"] for r in s["ranks"]] == [0, 1]
    # The reduced curve keeps the peak the --json report gives.
    for r, rep in zip(s["ranks"], job["ranks"]):
        assert max(r["curve"]["allocated_bytes"]) == rep["peak_allocated_bytes"]


def test_somas_equals_the_cli(cli, tmp_path):
    dump = SOMAS / "Ascend_somas_tensor_offset_1.ir"
    task = SOMAS / "task_info_graph_1.ir"
    plan = memlens.somas(dump, task_info=task)
    ref = json.loads(cli("somas", dump, "--task-info", task, "--json").stdout)
    assert plan.summary == ref
    cli("somas", dump, "--task-info", task, "--out", tmp_path)
    for name, file in [("tensors", "graph_tensors.csv"), ("nodes", "graph_nodes.csv"),
                       ("parameters", "graph_parameters.csv")]:
        assert plan.table_csv(name) == (tmp_path / file).read_bytes(), name
        df = plan.table(name)
        cli_df = pd.read_csv(tmp_path / file, keep_default_na=False, float_precision="round_trip")
        pd.testing.assert_frame_equal(df, cli_df, check_exact=True)
        assert len(df) > 0
    assert sorted(plan.table_names) == ["conflicts", "nodes", "parameters", "tensors"]


def test_missing_path_raises_with_the_cli_message(cli, tmp_path):
    missing = tmp_path / "nothing_here"
    with pytest.raises(memlens.MemlensError) as e:
        memlens.analyze(missing)
    assert isinstance(e.value, ValueError)
    out = cli("profiler", missing, check=False)
    assert out.returncode == 2
    assert str(missing) in str(e.value)
    assert f"memlens: {e.value}" in out.stderr


def test_folder_without_profiler_output_says_what_was_looked_for(cli, tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(memlens.MemlensError) as e:
        memlens.analyze(tmp_path)
    out = cli("profiler", tmp_path, check=False)
    assert out.returncode == 1
    # The CLI's explanation (what was looked for, what was found) is the exception's message.
    for line in str(e.value).splitlines()[1:]:
        assert line in out.stderr, (line, out.stderr)
    assert str(e.value).splitlines()[0].split(": ", 1)[1] in out.stderr


def test_damaged_rank_raises_with_the_cli_diagnostics(cli, tmp_path):
    run = tmp_path / "job" / "rank0_ascend_pt"
    (run / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (run / "profiler_info_0.json").write_text("{}")
    (run / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").write_bytes(b"Name,Size(KB)\nx,\xff\xfe\n")
    with pytest.raises(memlens.MemlensError) as e:
        memlens.analyze(tmp_path / "job")
    out = cli("profiler", tmp_path / "job", check=False)
    # Its file could not be used: bad input (the README's exit-code table).
    assert out.returncode == 2
    diags = [l for l in out.stdout.splitlines() if ": error: " in l or ": warning: " in l]
    assert diags, out.stdout
    for d in diags:
        assert d in str(e.value)
    assert "operator_memory.csv" in str(e.value)


def test_damaged_somas_dump_raises_with_the_cli_diagnostic(cli, tmp_path):
    bad = tmp_path / "Ascend_somas_tensor_offset_1.ir"
    good = (SOMAS / "Ascend_somas_tensor_offset_1.ir").read_bytes()
    bad.write_bytes(good[: len(good) // 3] + b"\x00garbage ]]] {{{\n" + good[len(good) // 3:])
    out = cli("somas", bad, check=False)
    with pytest.raises(memlens.MemlensError) as e:
        memlens.somas(bad)
    assert out.returncode == 2
    assert str(e.value) in out.stderr
    with pytest.raises(memlens.MemlensError, match="no SOMAS table"):
        memlens.somas(SOMAS / "Ascend_somas_tensor_offset_1.ir").table("graph")


def _stub_signatures():
    """{name: parameter names} for every function, class and method the stub declares."""
    import ast

    tree = ast.parse((ROOT / "python" / "memlens" / "__init__.pyi").read_text())
    params = lambda f: [a.arg for a in f.args.posonlyargs + f.args.args + f.args.kwonlyargs]
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = params(node)
        elif isinstance(node, ast.ClassDef):
            out[node.name] = [ast.unparse(b).split("[")[0] for b in node.bases]
            for m in node.body:
                if isinstance(m, ast.FunctionDef):
                    out[f"{node.name}.{m.name}"] = params(m)
    return out


def test_stub_matches_the_module():
    """The stub declares every public name, method and property the package has, with the same
    parameters, and the exception classes with their real bases (a stub that lacks a method or
    names another parameter misleads type checkers and editors). Failed on the stub before this
    change: it lacked Job.__repr__, and the new error classes were not in it."""
    import inspect

    stub = _stub_signatures()
    real, classes = {}, set()
    for name in memlens.__all__:
        obj = getattr(memlens, name)
        if inspect.isclass(obj):
            # The class and the package's own classes it inherits from (their members too).
            for cls in [c for c in obj.__mro__ if c.__module__ == "memlens"]:
                classes.add(cls.__name__)
                real[cls.__name__] = [b.__name__ for b in cls.__bases__]
                for m, v in vars(cls).items():
                    if m.startswith("_") and m not in ("__getitem__", "__iter__", "__len__", "__repr__"):
                        continue
                    fn = v.fget if isinstance(v, property) else v
                    if callable(fn):
                        real[f"{cls.__name__}.{m}"] = list(inspect.signature(fn).parameters)
        elif callable(obj):
            real[name] = list(inspect.signature(obj).parameters)
    for key, want in real.items():
        assert stub.get(key) == want, (key, stub.get(key), want)
    declared = {k for k in stub if k.split(".")[0] in set(memlens.__all__) | classes}
    assert not declared - set(real), ("the stub declares what the module lacks", declared - set(real))


def _repr_want(job):
    """The repr a job should have, from its report's own diagnostics list counted by severity."""
    ranks = len(job["ranks"])
    levels = [w["severity"] for w in job["warnings"]]
    errors, warnings = levels.count("error"), len(levels) - levels.count("error")
    words = [f"{n} {noun}{'' if n == 1 else 's'}" for n, noun in ((errors, "error"), (warnings, "warning")) if n]
    without = [r for r in job["ranks"] if r["status"] == "error"]
    counted = f" ({len(without)} without figures)" if without else ""
    return f"<memlens.Job: {ranks} rank{'' if ranks == 1 else 's'}{counted}, {', '.join(words) or 'no errors or warnings'}>"


def test_job_repr_counts_ranks_and_problems_by_level(job, tmp_path):
    """An error (a file that could not be used) is counted as an error, not as a warning, as the
    CLI's first line and the page count them. The old repr said "1 warning" for the job below."""
    assert repr(job) == _repr_want(job)
    shutil.copytree(SAMPLE, tmp_path / "job")
    for f in (tmp_path / "job").rglob("operator_memory.csv"):
        f.write_bytes(b"")
        break
    damaged = memlens.analyze(tmp_path / "job")
    assert [w["severity"] for w in damaged["warnings"]].count("error") == 1
    assert repr(damaged) == _repr_want(damaged)
    assert "1 error" in repr(damaged)


def test_a_rank_whose_file_was_refused_is_said_as_the_cli_says_it(cli):
    """The classify job's rollout rank (its one db export refused): the job's repr counts it
    without figures, and its rank says why in the CLI's words (`memlens profiler --json`, which
    its table prints under the rank). Failed on the old package: the repr said "5 ranks" alone and
    the rank had no `no_data`."""
    job = memlens.analyze(ROOT / "fixtures" / "classify" / "job")
    assert repr(job) == _repr_want(job)
    assert "5 ranks (1 without figures), 1 error" in repr(job)
    out = cli("profiler", "fixtures/classify/job", "--json", "-q", check=False)
    assert out.returncode == 2, out.stderr
    theirs = {r["role"]: r for r in json.loads(out.stdout)["ranks"]}
    ours = {r["role"]: r for r in job["ranks"]}
    assert ours["rollout"]["no_data"] == theirs["rollout"]["no_data"]
    assert ours["rollout"]["no_data"]["says"].startswith("its file was refused: job/rollout/")
    text = cli("profiler", "fixtures/classify/job", check=False).stdout
    assert f"    no figures: {ours['rollout']['no_data']['says']}" in text.splitlines()


def _cli_message(out):
    """The CLI's message without its `memlens: ` prefix and hint lines (the API has no CLI)."""
    lines = [l for l in out.stderr.splitlines() if not l.lstrip().startswith("hint:")]
    return "\n".join(lines).removeprefix("memlens: ")


def test_missing_paths_raise_file_not_found_with_the_cli_message(cli, tmp_path):
    """A missing path is a FileNotFoundError (what `except FileNotFoundError` around open()
    expects), still a MemlensError and a ValueError, with the CLI's words (a close name when
    there is one). Failed on the old package: MemlensError only, and memlens.somas() said
    "cannot read at byte 0: No such file or directory (os error 2)" where the CLI says
    "no such file or directory"."""
    dump = SOMAS / "Ascend_somas_tensor_offset_1.ir"
    typo = tmp_path / "rank0_ascend_pt"
    (tmp_path / "rank0_ascend_ptt").mkdir()
    cases = [
        (lambda: memlens.analyze(typo), ["profiler", typo]),
        (lambda: memlens.analyze([SAMPLE, tmp_path / "nope"]), ["profiler", SAMPLE, tmp_path / "nope"]),
        (lambda: memlens.somas(tmp_path / "nope.ir"), ["somas", tmp_path / "nope.ir"]),
        (lambda: memlens.somas(dump, task_info=tmp_path / "t.ir"), ["somas", dump, "--task-info", tmp_path / "t.ir"]),
    ]
    for call, args in cases:
        with pytest.raises(FileNotFoundError) as e:
            call()
        assert isinstance(e.value, memlens.InputNotFoundError)
        assert isinstance(e.value, memlens.MemlensError) and isinstance(e.value, ValueError)
        out = cli(*args, check=False)
        assert out.returncode == 2, args
        assert str(e.value) == _cli_message(out), args


def test_error_class_follows_the_cli_exit_status(cli, tmp_path):
    """NothingToAnalyseError where the CLI exits with 1 (the paths hold nothing to analyse, or no
    rank yields data), a plain MemlensError where it exits with 2 (a file that cannot be parsed).
    Failed on the old package: MemlensError for all."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk.bin").write_bytes(bytes(range(256)) * 4)
    run = tmp_path / "damaged" / "rank0_ascend_pt"
    (run / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (run / "profiler_info_0.json").write_text("{}")
    (run / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").write_bytes(b"")
    solver_log = SOMAS / "somas_solver_input_1.ir"
    cases = [
        (lambda: memlens.analyze(tmp_path / "empty"), ["profiler", tmp_path / "empty"]),
        (lambda: memlens.analyze(tmp_path / "junk.bin"), ["profiler", tmp_path / "junk.bin"]),
        (lambda: memlens.analyze(tmp_path / "damaged"), ["profiler", tmp_path / "damaged"]),
        (lambda: memlens.somas(tmp_path / "junk.bin"), ["somas", tmp_path / "junk.bin"]),
        (lambda: memlens.somas(solver_log), ["somas", solver_log]),
    ]
    for call, args in cases:
        with pytest.raises(memlens.MemlensError) as e:
            call()
        status = cli(*args, check=False).returncode
        assert status in (1, 2), args
        assert isinstance(e.value, memlens.NothingToAnalyseError) == (status == 1), (args, status, type(e.value))
        assert not isinstance(e.value, FileNotFoundError), args


def test_paths_as_str_bytes_pathlib_and_lists_give_the_same_job(job):
    """bytes name one path, as for open() (the old package iterated them as ints: "expected str,
    bytes or os.PathLike object, not int"); an empty list is refused in words (the old message
    began with ": nothing to analyse")."""
    want = job.report
    assert memlens.analyze(str(SAMPLE)).report == want
    assert memlens.analyze(os.fsencode(SAMPLE)).report == want
    assert memlens.analyze([SAMPLE]).report == want
    with pytest.raises(memlens.MemlensError, match="^no paths given"):
        memlens.analyze([])


GRAPH = ROOT / "fixtures" / "classify" / "job" / "graphs" / "rank_0"
TINY_SNAPSHOT = ROOT / "fixtures" / "snapshots" / "cs336_tiny_mem_snapshot.pickle"


def _without_hints(text):
    """A message's lines without its hint lines (the CLI's and the package's hints differ)."""
    return [l for l in text.splitlines() if not l.lstrip().startswith("hint:")]


def test_somas_on_a_folder_reads_its_one_dump_as_the_cli_does(cli, tmp_path):
    """memlens.somas(folder) analyses the folder's one dump with the task-info file of its graph,
    as `memlens somas FOLDER` does; with two dumps or none it raises the CLI's message, of the
    class of the CLI's exit status. Failed on the old package: "cannot read the file: Is a
    directory (os error 21)" for each folder."""
    graph = tmp_path / "graph"
    graph.mkdir()
    for f in ["Ascend_somas_tensor_offset_7.ir", "task_info_graph_7.ir", "somas_input_graph_7.ir"]:
        shutil.copy(GRAPH / f, graph / f)
    plan = memlens.somas(graph)
    assert plan.summary == json.loads(cli("somas", graph, "--json").stdout)
    # The same figures as the dump and its task-info file named one by one.
    named = memlens.somas(graph / "Ascend_somas_tensor_offset_7.ir", task_info=graph / "task_info_graph_7.ir")
    def unnamed(summary):
        return {k: v for k, v in summary.items() if k not in ("file", "task")}

    assert unnamed(plan.summary) == unnamed(named.summary)
    assert {k: v for k, v in plan["task"].items() if k != "file"} == {
        k: v for k, v in named["task"].items() if k != "file"}
    assert plan["base_source"] == "task-info"
    assert (plan["file"], plan["task"]["file"]) == ("graph/Ascend_somas_tensor_offset_7.ir", "graph/task_info_graph_7.ir")

    # Two dumps (one under a name that says nothing): the user names one, as the CLI asks (exit 2).
    with pytest.raises(memlens.MemlensError) as e:
        memlens.somas(GRAPH)
    out = cli("somas", GRAPH, check=False)
    assert out.returncode == 2
    assert not isinstance(e.value, memlens.NothingToAnalyseError)
    assert str(e.value) == _cli_message(out)
    assert str(e.value).startswith(f"{GRAPH}: 2 SOMAS dumps; name the one to analyse:")

    # No dump: what was looked for and found, as the CLI says it (exit 1); a memory snapshot
    # there is pointed to memlens.snapshot.
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(GRAPH / "task_info_graph_7.ir", lone)
    shutil.copy(TINY_SNAPSHOT, lone)
    with pytest.raises(memlens.NothingToAnalyseError) as e:
        memlens.somas(lone)
    out = cli("somas", lone, check=False)
    assert out.returncode == 1
    assert _without_hints(str(e.value)) == _without_hints(_cli_message(out))
    assert "lone/task_info_graph_7.ir: SOMAS task-info file without its memory-plan dump" in str(e.value)
    assert str(e.value).splitlines()[-1] == (
        "hint: lone/cs336_tiny_mem_snapshot.pickle is a memory snapshot: memlens.snapshot(path) analyses it")


def test_analyze_points_a_snapshot_or_a_somas_dump_to_its_function(cli, tmp_path):
    """analyze() reads profiler output only (it returns a Job); given a memory snapshot or a SOMAS
    dump it raises, as `memlens profiler` refuses them, and names the function that reads what
    it found. Failed on the old package: the message found "snapshot (pickle protocol 4, dict)"
    and said nothing of memlens.snapshot."""
    dump = SOMAS / "Ascend_somas_tensor_offset_1.ir"
    for path, function, what in [(TINY_SNAPSHOT, "snapshot", "a memory snapshot"), (dump, "somas", "a SOMAS dump")]:
        with pytest.raises(memlens.NothingToAnalyseError) as e:
            memlens.analyze(path)
        out = cli("profiler", path, check=False)
        assert out.returncode == 1
        assert _without_hints(str(e.value)) == _without_hints(_cli_message(out))
        assert str(e.value).splitlines()[-1] == f"hint: {path.name} is {what}: memlens.{function}(path) analyses it"
    # A folder holding both, and a second dump: one hint per function, the others counted.
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for f in [TINY_SNAPSHOT, dump, SOMAS / "somas_mem_info_1.r1.ir"]:
        shutil.copy(f, mixed)
    with pytest.raises(memlens.NothingToAnalyseError) as e:
        memlens.analyze(mixed)
    assert [l for l in str(e.value).splitlines() if l.startswith("hint:")] == [
        "hint: mixed/Ascend_somas_tensor_offset_1.ir (and 1 more) is a SOMAS dump: memlens.somas(path) analyses it",
        "hint: mixed/cs336_tiny_mem_snapshot.pickle is a memory snapshot: memlens.snapshot(path) analyses it",
    ]


def test_somas_repr_names_the_file_and_its_format():
    dump = SOMAS / "Ascend_somas_tensor_offset_1.ir"
    plan = memlens.somas(dump)
    fmt = plan["format"]
    assert repr(plan) == f"<memlens.Somas: {dump} ({fmt['family']} {fmt['version']})>"


SNAPSHOT = ROOT / "fixtures" / "snapshots"


def test_snapshot_equals_the_cli(cli, tmp_path):
    """memlens.snapshot gives `memlens snapshot --json` and the CSV files of `--out`, which the
    old package could not open at all (analyze() said "nothing to analyse", and there was no
    snapshot function)."""
    pickles = sorted(SNAPSHOT.glob("*.pickle"))
    assert pickles
    for pickle in pickles:
        snap = memlens.snapshot(pickle)
        assert snap.summary == json.loads(cli("snapshot", pickle, "--json").stdout)
        assert repr(snap) == f"<memlens.Snapshot: {pickle} ({len(snap['devices'])} device{'' if len(snap['devices']) == 1 else 's'})>"
        out = tmp_path / pickle.stem
        cli("snapshot", pickle, "--out", out)
        csvs = sorted(p.stem for p in out.glob("*.csv"))
        assert sorted(snap.table_names) == csvs
        for name in csvs:
            assert snap.table_csv(name) == (out / f"{name}.csv").read_bytes(), name
            df = snap.table(name)
            ref = pd.read_csv(out / f"{name}.csv", keep_default_na=False, na_values=[""], float_precision="round_trip")
            pd.testing.assert_frame_equal(df, ref, check_exact=True)
    with pytest.raises(memlens.MemlensError, match="no snapshot table"):
        snap.table("summary")


def test_a_broken_snapshot_raises_the_cli_message(cli, tmp_path):
    pickle = next(iter(sorted(SNAPSHOT.glob("*.pickle"))))
    cut = tmp_path / "cut.pickle"
    cut.write_bytes(pickle.read_bytes()[:2000])
    out = cli("snapshot", cut, check=False)
    assert out.returncode == 2
    with pytest.raises(memlens.MemlensError) as e:
        memlens.snapshot(cut)
    assert str(e.value) == _cli_message(out)
    with pytest.raises(FileNotFoundError):
        memlens.snapshot(tmp_path / "none.pickle")
