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
        self._lengths = [len(r) for r in recordings]
        self._starts = np.cumsum([0] + [c.size for c in self._cycle])
        self._period = int(self._starts[-1])
        if self._period == 0:
            raise ValueError("the recordings to join are empty")
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

    @property
    def recordings(self) -> int:
        return len(self._cycle)

    def played(self, at_s: float) -> int:
        """Which play of a recording (counted from 0 over the repeats) holds the moment ``at_s``; the pause after a
        recording belongs to it."""
        position = int(min(max(at_s, 0.0), self.size / SAMPLE_RATE) * SAMPLE_RATE)
        cycle, within = divmod(position, self._period)
        return cycle * len(self._cycle) + int(np.searchsorted(self._starts, within, side="right") - 1)

    def plays(self) -> list[tuple[int, float, float]]:
        """(recording index, start, end in seconds, its pause included) of every play heard to the recording's end
        within ``size``: a recording cut off by the end of the input is left out."""
        out: list[tuple[int, float, float]] = []
        start = 0
        while True:
            for index, (part, length) in enumerate(zip(self._cycle, self._lengths, strict=True)):
                if start + length > self.size:
                    return out
                out.append((index, start / SAMPLE_RATE, (start + part.size) / SAMPLE_RATE))
                start += part.size
