"""memlens's Python API against the CLI on the real samples (same rows, columns, values and
figures) and against the expectations RL-Insight's own conversions give
(fixtures/contract/memory_events_expected.json, written by a standalone Python script)."""
import json
import math

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


def test_stub_lists_the_public_api():
    stub = (ROOT / "python" / "memlens" / "__init__.pyi").read_text()
    for name in memlens.__all__:
        assert f"def {name}(" in stub or f"class {name}(" in stub or f"{name}:" in stub, name


def test_job_repr_counts_ranks_and_warnings_in_words(job):
    ranks, warnings = len(job["ranks"]), len(job.warnings)
    want = f"<memlens.Job: {ranks} rank{'' if ranks == 1 else 's'}, {warnings} warning{'' if warnings == 1 else 's'}>"
    assert repr(job) == want
