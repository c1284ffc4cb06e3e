"""Recordings played back to back with pauses, read by slices: input of any length without holding it in memory."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.asr.backend import SAMPLE_RATE


class JoinedRecordings:
    """``size`` samples of the recordings in turn (repeated as needed), each followed by ``pause_s`` of silence."""

    def __init__(self, recordings: Sequence[np.ndarray], total_s: float, pause_s: float = 2.0) -> None:
        if not recordings:
            raise ValueError("no recordings to join")
        pause = np.zeros(int(pause_s * SAMPLE_RATE), np.float32)
        self._cycle = [np.concatenate([np.asarray(r, np.float32), pause]) for r in recordings]
        self._starts = np.cumsum([0] + [c.size for c in self._cycle])
        self._period = int(self._starts[-1])
        self.size = int(total_s * SAMPLE_RATE)

    def __getitem__(self, index: slice) -> np.ndarray:
        start, stop, _ = index.indices(self.size)
        out = np.empty(max(stop - start, 0), np.float32)
        filled = 0
        while filled < out.size:
            position = (start + filled) % self._period
            which = int(np.searchsorted(self._starts, position, side="right") - 1)
            offset = position - int(self._starts[which])
            piece = self._cycle[which][offset : offset + out.size - filled]
            out[filled : filled + piece.size] = piece
            filled += piece.size
        return out
