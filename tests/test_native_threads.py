"""numpy's BLAS runs on one thread in every liveshadow process: its idle threads spun on the cores the recognizer and
the voice need."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# In a fresh interpreter: import the given package, then numpy, and ask the OpenBLAS numpy loaded how many threads
# it uses (its symbols carry a prefix and suffix in numpy's own build).
PROBE = """
import ctypes, sys
import {package}
import numpy
libraries = sorted({{line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower()}})
for library in libraries:
    for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
        function = getattr(ctypes.CDLL(library), name, None)
        if function is not None:
            print(function())
            sys.exit(0)
print("unknown")
"""


def blas_threads(package: str, env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    if env_value is not None:
        env["OPENBLAS_NUM_THREADS"] = env_value
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(package=package)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def numpys_own_threads() -> str:
    """What numpy's BLAS uses without liveshadow (a fresh interpreter each time, so asked once)."""
    if not Path("/proc/self/maps").exists():
        pytest.skip("reads the loaded libraries from /proc")
    threads = blas_threads("json", None)
    if threads == "unknown":
        pytest.skip("this numpy's BLAS does not say how many threads it uses")
    return threads


@pytest.mark.parametrize("package", ["engine", "app"])
def test_numpys_blas_runs_on_one_thread_after_liveshadow_is_imported(package: str, numpys_own_threads: str) -> None:
    if (os.cpu_count() or 1) >= 2:
        assert numpys_own_threads != "1"  # what numpy does on its own: a thread per core
    assert blas_threads(package, None) == "1"


def test_a_blas_thread_count_the_user_set_stands(numpys_own_threads: str) -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two cores or more")
    assert blas_threads("engine", "2") == "2"
