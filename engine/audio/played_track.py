"""What the voice played, sample by sample on the session clock: the echo canceller's reference.

Pieces are written where they played (``write(samples, rate, start_s)``), resampled to 16 kHz; ``read(start_s, n)``
gives what was playing over those moments, silence where nothing was. Only the last ``keep_s`` seconds (counted
back from the latest sample written) are kept, so a long session holds a fixed amount.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np

from engine.audio.resample import resample

RATE = 16000
DEFAULT_KEEP_S = 60.0


class PlayedTrack:
    """A bounded, thread-safe record of the played voice at ``RATE`` (a piece's writer and the capture's reader)."""

    def __init__(self, keep_s: float = DEFAULT_KEEP_S, rate: int = RATE) -> None:
        self.rate = rate
        self._size = max(int(keep_s * rate), 1)
        self._buffer = np.zeros(self._size, np.float32)
        self._high = 0  # one past the latest sample index written (absolute, from the session clock's zero)
        self._lock = threading.Lock()

    @property
    def end_s(self) -> float:
        """Where the latest sample written ends."""
        return self._high / self.rate

    def write(self, samples: np.ndarray, sample_rate: int, start_s: float) -> None:
        data = np.asarray(samples, np.float32).reshape(-1)
        if sample_rate != self.rate and data.size:
            data = resample(data, sample_rate, self.rate)
        start = round(start_s * self.rate)
        if start < 0:
            data, start = data[-start:], 0
        data = data[-self._size :]
        if not data.size:
            return
        end = start + data.size
        with self._lock:
            if end > self._high:  # the slots about to be used still hold what played ``keep_s`` ago
                self._fill(max(self._high, end - self._size), end, None)
                self._high = end
            if start < self._high - self._size:  # older than what is kept
                data, start = data[self._high - self._size - start :], self._high - self._size
            self._fill(start, start + data.size, data)

    def _runs(self, start: int, end: int) -> Iterator[tuple[int, int, int]]:
        """``[start, end)`` (absolute sample indices) as runs of the circular buffer: (slot, offset from ``start``,
        count)."""
        position = start
        while position < end:
            slot = position % self._size
            count = min(end - position, self._size - slot)
            yield slot, position - start, count
            position += count

    def _fill(self, start: int, end: int, data: np.ndarray | None) -> None:
        """Zero ``[start, end)`` (``data`` None) or add ``data`` there."""
        for slot, offset, count in self._runs(start, end):
            if data is None:
                self._buffer[slot : slot + count] = 0.0
            else:
                self._buffer[slot : slot + count] += data[offset : offset + count]

    def read(self, start_s: float, n: int) -> np.ndarray:
        """The ``n`` samples played from ``start_s`` on (silence before the first piece, after the latest, and
        further back than what is kept)."""
        out = np.zeros(max(n, 0), np.float32)
        start = round(start_s * self.rate)
        with self._lock:
            low = max(start, self._high - self._size, 0)
            skip = low - start
            for slot, offset, count in self._runs(low, min(start + n, self._high)):
                out[skip + offset : skip + offset + count] = self._buffer[slot : slot + count]
        return out

    def active(self, start_s: float, end_s: float, level: float = 1e-4) -> bool:
        """Whether the voice made a sound between ``start_s`` and ``end_s``."""
        samples = self.read(start_s, max(round((end_s - start_s) * self.rate), 0))
        return bool(samples.size) and float(np.max(np.abs(samples))) > level
