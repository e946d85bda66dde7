"""Shared fixtures of the Python package's tests: the repository's paths and the memlens CLI the
package is compared with (the debug binary `npm test` builds; MEMLENS_CLI names another)."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "torch_npu" / "msinsight-level0" / "text"
SOMAS = ROOT / "fixtures" / "somas"


@pytest.fixture(scope="session")
def cli():
    exe = Path(os.environ.get("MEMLENS_CLI", ROOT / "target" / "debug" / "memlens"))
    if not exe.exists():
        subprocess.run(["cargo", "build", "--quiet", "--bin", "memlens"], cwd=ROOT, check=True)
    assert exe.exists(), f"the memlens CLI is not at {exe}"

    def run(*args, check=True):
        return subprocess.run([str(exe), *map(str, args)], cwd=ROOT, capture_output=True, text=True, check=check)

    return run
