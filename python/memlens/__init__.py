"""memlens: memory analysis of Ascend NPU training jobs (torch_npu / MindSpore profiler output,
MindSpore SOMAS dumps), with the same Rust core as the memlens CLI and web page.

>>> job = memlens.analyze("job/")            # a run folder, a whole RL job, an archive
>>> job["ranks"][0]["peak_allocated_bytes"]  # the `memlens profiler --json` document
>>> df = job.events()                        # memory_events.csv as a pandas DataFrame
>>> plan = memlens.somas("dump.ir")          # `memlens somas --json`, tables as DataFrames
>>> plan = memlens.somas("graph/")           # the one dump of a folder, with its task-info file
>>> snap = memlens.snapshot("snap.pickle")   # `memlens snapshot --json`, tables as DataFrames

This module only converts: every figure comes from the compiled core (`memlens._native`).
"""
from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from typing import Any, Iterator, List, Optional, Sequence, Union

from . import _native
from ._native import InputNotFoundError, MemlensError, NothingToAnalyseError
from ._words import plural as _plural

__all__ = [
    "analyze",
    "somas",
    "Job",
    "Somas",
    "snapshot",
    "Snapshot",
    "MemlensError",
    "InputNotFoundError",
    "NothingToAnalyseError",
    "EVENT_CONTRACT_COLUMNS",
]
__version__ = _native.__version__

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

#: The first twelve columns of `events()`: RL-Insight's MemoryEventRow, in its order (the core's
#: list, as `memory_events.csv` writes it).
EVENT_CONTRACT_COLUMNS = _native.EVENT_CONTRACT_COLUMNS


def _paths(paths: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    # bytes are one path (as for open()), not a sequence of ints.
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [os.fsdecode(paths)]
    return [os.fsdecode(p) for p in paths]


def _arrow_table(columns):
    """Builds a pyarrow.Table from the core's column buffers without a Python object per cell."""
    import numpy as np
    import pyarrow as pa

    arrays, names = [], []
    for name, kind, values, valid, offsets in columns:
        mask = None if valid is None else ~np.frombuffer(valid, dtype=np.bool_)
        if kind == "str":
            n = len(offsets) // 8 - 1
            arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(values))
        elif kind == "int":
            arr = pa.array(np.frombuffer(values, dtype="<i8"), type=pa.int64(), mask=mask)
        elif kind == "float":
            arr = pa.array(np.frombuffer(values, dtype="<f8"), type=pa.float64(), mask=mask)
        elif kind == "bool":
            arr = pa.array(np.frombuffer(values, dtype=np.bool_), type=pa.bool_())
        else:  # pragma: no cover - the core names only these four kinds
            raise MemlensError(f"column {name}: unknown kind {kind!r}")
        arrays.append(arr)
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


class Job(Mapping):
    """An analysed profiler job. As a mapping it is the `memlens profiler --json` document."""

    def __init__(self, native: "_native.NativeJob") -> None:
        self._native = native
        self._report = json.loads(native.report_json())

    def __getitem__(self, key: str) -> Any:
        return self._report[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._report)

    def __len__(self) -> int:
        return len(self._report)

    def __repr__(self) -> str:
        # The core's counts by level in words ("1 error, 2 warnings"), as the CLI and the page
        # show them: an error (a file that could not be used) is not a warning.
        # Ranks without figures (files refused, or holding no memory data) are counted as the
        # page's panel heads them; why, in the core's words, is each rank's `no_data["says"]`.
        levels = self._report.get("totals", {}).get("levels", "")
        ranks = self._report.get("ranks", [])
        without = sum(1 for r in ranks if r.get("no_data"))
        counted = f" ({without:,} without figures)" if without else ""
        return f"<memlens.Job: {_plural(len(ranks), 'rank')}{counted}, {levels}>"

    @property
    def report(self) -> dict:
        """The `memlens profiler --json` document as Python data."""
        return self._report

    @property
    def warnings(self) -> List[str]:
        """Diagnostics of discovery and of every rank's files, as the CLI prints them."""
        return list(self._native.warnings())

    def to_arrow(self):
        """memory_events.csv's rows and columns as a pyarrow.Table (typed, no per-cell objects)."""
        return _arrow_table(self._native.event_columns())

    def events(self):
        """memory_events.csv as a pandas.DataFrame: RL-Insight's twelve MemoryEventRow columns
        first (str, int64 rank_id, float64 numbers without NaN), then memlens's extras."""
        df = self.to_arrow().to_pandas()
        return df

    def memory_events_csv(self) -> bytes:
        """memory_events.csv, byte for byte what `memlens profiler --out` writes."""
        return self._native.memory_events_csv()

    def summary_json(self) -> str:
        """The job summary file's text, byte for byte what `memlens profiler --summary` writes."""
        return self._native.summary_json()

    def summary(self) -> dict:
        """The job summary (compact rank summaries, matrix, outliers) as Python data."""
        return json.loads(self._native.summary_json())


def analyze(paths: Union[PathLike, Sequence[PathLike]]) -> Job:
    """Analyses torch_npu / MindSpore profiler output: run folders, role or step folders, whole
    multi-rank jobs, or .zip/.tar/.tar.gz archives of them (one path, str, bytes or pathlib.Path,
    or a list of them). Raises, with the CLI's message: InputNotFoundError (a FileNotFoundError)
    for a path that does not exist; NothingToAnalyseError when the paths hold no profiler output
    (what was looked for and found, and which function reads a memory snapshot or SOMAS dump
    found instead: `snapshot()`, `somas()`) or no rank yields data (its diagnostics); MemlensError
    otherwise."""
    return Job(_native.analyze(_paths(paths)))


class _Tables(Mapping):
    """A `--json` document as a mapping, with the tables `--out` writes as CSV bytes and
    DataFrames (the shape Somas and Snapshot share)."""

    #: pandas.read_csv options for `table()`.
    _read_csv = {"keep_default_na": False, "float_precision": "round_trip"}

    def __init__(self, native) -> None:
        self._native = native
        self._summary = json.loads(native.summary_json())

    def __getitem__(self, key: str) -> Any:
        return self._summary[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._summary)

    def __len__(self) -> int:
        return len(self._summary)

    @property
    def summary(self) -> dict:
        """The `--json` document as Python data."""
        return self._summary

    @property
    def table_names(self) -> List[str]:
        """Names accepted by `table()`."""
        return list(self._native.table_names())

    def table_csv(self, name: str) -> bytes:
        """One table as the CSV bytes `--out` writes."""
        return self._native.table_csv(name)

    def table(self, name: str):
        """One table as a pandas.DataFrame, read from the same CSV bytes `--out` writes."""
        import pandas as pd

        return pd.read_csv(io.BytesIO(self.table_csv(name)), **self._read_csv)


class Somas(_Tables):
    """An analysed MindSpore SOMAS dump. As a mapping it is the `memlens somas --json` document;
    `table()` gives `tensors`, `nodes`, `parameters`, `conflicts` with somas_tool's columns (as
    `memlens somas --out` writes them), text cells kept as text."""

    def __repr__(self) -> str:
        fmt = self._summary.get("format") or {}
        return f"<memlens.Somas: {self._summary.get('file')} ({fmt.get('family')} {fmt.get('version')})>"


class Snapshot(_Tables):
    """An analysed PyTorch / torch_npu memory snapshot. As a mapping it is the
    `memlens snapshot --json` document (summary.json); `table()` gives the CSV files
    `memlens snapshot --out` writes (`segments`, `blocks`, `allocations`,
    `live_at_peak_by_frame`, `live_at_snapshot_by_frame`, `ooms`), an empty cell read as NaN."""

    _read_csv = {"keep_default_na": False, "na_values": [""], "float_precision": "round_trip"}

    def __repr__(self) -> str:
        devices = _plural(len(self._summary.get("devices") or {}), "device")
        return f"<memlens.Snapshot: {self._summary.get('file')} ({devices})>"


def somas(dump: PathLike, task_info: Optional[PathLike] = None) -> Somas:
    """Analyses a SOMAS dump file (any dump version), with its task_info_graph file when given;
    or, as `memlens somas FOLDER`, the one dump a folder holds, with the task-info file of its
    graph found beside it unless `task_info` names one. Raises, with the CLI's message:
    InputNotFoundError (a FileNotFoundError) for a path that does not exist;
    NothingToAnalyseError for a folder without a dump (what was looked for and found);
    MemlensError when a file cannot be read or parsed, or a folder holds several dumps (their
    paths: name the one meant)."""
    return Somas(_native.somas(os.fsdecode(dump), None if task_info is None else os.fsdecode(task_info)))


def snapshot(path: PathLike) -> Snapshot:
    """Analyses a memory snapshot pickle (`torch.cuda.memory._dump_snapshot`, or torch_npu's
    `torch.npu.memory._dump_snapshot`). Raises, with the CLI's message: InputNotFoundError (a
    FileNotFoundError) for a file that does not exist; MemlensError naming the byte where the
    pickle cannot be read."""
    return Snapshot(_native.snapshot(os.fsdecode(path)))
