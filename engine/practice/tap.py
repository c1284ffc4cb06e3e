"""A capture as ``asr.run.run_capture`` reads it, recording every block on the way: a practice session keeps what it
heard (to score it whole afterwards) and places it on one clock with what played or what else it heard.

The capture's zero is placed on the monotonic clock from when its blocks arrive: the earliest arrival less the
block's end (a block is delivered once it is whole, so the earliest is the one delivered with the least delay), as
the shadowing session places its capture.
"""

from __future__ import annotations

import time

import numpy as np

from engine.audio.block import AudioBlock
from engine.audio.capture import BlockQueue
from engine.audio.device_check import level_db

SAMPLE_RATE = 16000
SPEAKING_DB = -45.0  # a block louder than this is someone speaking


class RecordingTap:
    """Reads ``capture`` (``Capture`` or ``ServerCapture``) and keeps up to ``max_s`` of what it delivered."""

    def __init__(self, capture: BlockQueue, max_s: float) -> None:
        self.capture = capture
        self.origin: float | None = None  # the monotonic time of the capture's zero
        self.level_db = -120.0  # the last block's level
        self.last_loud: float | None = None  # when a block was last louder than ``SPEAKING_DB`` (monotonic)
        self._recorded = np.zeros(int(max_s * SAMPLE_RATE), np.float32)
        self._n = 0

    @property
    def full(self) -> bool:
        return self._n >= self._recorded.size

    @property
    def recorded(self) -> np.ndarray:
        """What was heard, from the capture's zero on (a view: copy to keep)."""
        return self._recorded[: self._n]

    def read(self, timeout: float | None = None) -> AudioBlock | None:
        block = self.capture.read(timeout)
        if block is not None:
            self._keep(block)
        return block

    def read_available(self) -> list[AudioBlock]:
        blocks = self.capture.read_available()
        for block in blocks:
            self._keep(block)
        return blocks

    def check(self) -> None:
        self.capture.check()  # type: ignore[attr-defined]

    def _keep(self, block: AudioBlock) -> None:
        arrived = time.monotonic()
        origin = arrived - block.end_s
        if self.origin is None or origin < self.origin:
            self.origin = origin
        samples = block.samples
        take = samples[: self._recorded.size - self._n]
        self._recorded[self._n : self._n + take.size] = take
        self._n += take.size
        if samples.size:
            self.level_db = level_db(samples)
            if self.level_db > SPEAKING_DB:
                self.last_loud = arrived
