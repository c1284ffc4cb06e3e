"""Give the memory freed by large temporary buffers back to the system, now and then, during a long session.

The recognizer's encoder windows and the voice's frames are large buffers made and freed at every step. glibc's
allocator keeps the freed pages inside its heaps (a small block allocated later pins them), so without this a
session holds on to its high-water mark. ``malloc_trim(0)`` returns every whole free page of every heap: in a
20-minute soak the resident memory fell back to ~610 MB after each trim instead of staying near 700 MB. (The slow
rise of the high-water mark was onnxruntime's per-shape memory pattern, turned off in ``engine/tts/voice.py``.)
Elsewhere (no glibc) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

TRIM_EVERY_S = 10.0


def _load_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _load_trim()


class MemoryTrimmer:
    """``maybe_trim()`` from any worker thread: trims at most once every ``every_s`` seconds of wall time."""

    def __init__(self, every_s: float = TRIM_EVERY_S, timer: Callable[[], float] = time.monotonic) -> None:
        self.every_s = every_s
        self._timer = timer
        self._last = timer()
        self._lock = threading.Lock()
        self.trims = 0

    @property
    def available(self) -> bool:
        return _TRIM is not None

    def maybe_trim(self) -> bool:
        """Trim if it is time (and the platform can); returns whether it trimmed."""
        if _TRIM is None:
            return False
        with self._lock:
            now = self._timer()
            if now - self._last < self.every_s:
                return False
            self._last = now
        _TRIM(0)
        self.trims += 1
        return True
