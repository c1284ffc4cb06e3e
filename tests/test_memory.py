"""Giving freed memory back: a heap full of holes shrinks when trimmed, and trims are rate-limited."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.pipeline.memory import MemoryTrimmer

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")


_HOLES = """
import sys
import numpy as np
import psutil
from engine.pipeline.memory import MemoryTrimmer

trimmer = MemoryTrimmer(every_s=0.0)
assert trimmer.available
trimmer.maybe_trim()
process = psutil.Process()
buffers, pins = [], []
for _ in range(1500):  # 100 kB buffers (below the allocator's mmap threshold), each pinned by a small block
    buffers.append(np.ones(12_500))
    pins.append(np.ones(100))
del buffers
before = process.memory_info().rss
trimmed = trimmer.maybe_trim()
after = process.memory_info().rss
print(trimmed, before, after, len(pins))
"""


def test_trimming_returns_the_holes_freed_buffers_leave() -> None:
    """In a fresh interpreter: in the test process the heap's state depends on every test before this one (models
    loaded and freed, arenas grown), which once left only 34 of the 150 MB as holes to give back. The allocator's
    thresholds are set: left to glibc they move with what the imports allocated and freed, and in a clean CI
    environment (its packages' bytecode compiled at first import) ``del`` alone had given the 150 MB back."""
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(1 << 20), "MALLOC_TRIM_THRESHOLD_": str(256 << 20)}
    done = subprocess.run(
        [sys.executable, "-c", _HOLES], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True, env=env
    )
    trimmed, before, after, pins = done.stdout.split()
    assert trimmed == "True" and pins == "1500"
    assert int(before) - int(after) > 100e6, (before, after)  # of the 150 MB freed, the allocator had kept most


def test_trims_are_rate_limited() -> None:
    now = [0.0]
    trimmer = MemoryTrimmer(every_s=10.0, timer=lambda: now[0])
    assert not trimmer.maybe_trim()
    now[0] = 10.5
    assert trimmer.maybe_trim()
    now[0] = 15.0
    assert not trimmer.maybe_trim() and trimmer.trims == 1
