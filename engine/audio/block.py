"""The unit of audio every stage passes on: samples, their rate, and where they start on the source clock."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Blocks that follow each other may disagree on start time by this much before ``concat`` calls them a gap.
CONTIGUITY_TOLERANCE_S = 1e-6


@dataclass(frozen=True, slots=True)
class AudioBlock:
    """float32 samples, shape ``(frames,)`` for mono or ``(frames, channels)``; ``start_s`` on the source clock."""

    samples: np.ndarray
    sample_rate: int
    start_s: float = 0.0

    def __post_init__(self) -> None:
        samples = self.samples
        if not isinstance(samples, np.ndarray):
            raise TypeError(f"samples must be a numpy array, not {type(samples).__name__}")
        if samples.dtype != np.float32:
            raise TypeError(f"samples must be float32, not {samples.dtype} (use AudioBlock.from_array)")
        if samples.ndim not in (1, 2) or (samples.ndim == 2 and samples.shape[1] < 1):
            raise ValueError(f"samples must have shape (frames,) or (frames, channels), not {samples.shape}")
        if isinstance(self.sample_rate, bool) or not isinstance(self.sample_rate, int | np.integer):
            raise TypeError(f"sample_rate must be an int, not {self.sample_rate!r}")
        if self.sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, not {self.sample_rate}")
        if not math.isfinite(self.start_s):
            raise ValueError(f"start_s must be finite, not {self.start_s}")
        object.__setattr__(self, "sample_rate", int(self.sample_rate))
        object.__setattr__(self, "start_s", float(self.start_s))

    @classmethod
    def from_array(cls, data: np.ndarray | Sequence[float], sample_rate: int, start_s: float = 0.0) -> AudioBlock:
        """Build a block from any numeric array: integer PCM is scaled to [-1, 1), floats are cast to float32."""
        array = np.asarray(data)
        if np.issubdtype(array.dtype, np.integer):
            info = np.iinfo(array.dtype)
            if info.min == 0:  # unsigned PCM (8-bit WAV) is offset binary
                scaled = (array.astype(np.float64) - (info.max + 1) / 2) / ((info.max + 1) / 2)
            else:
                scaled = array.astype(np.float64) / -float(info.min)
            array = scaled.astype(np.float32)
        elif array.dtype != np.float32:
            array = array.astype(np.float32)
        return cls(np.ascontiguousarray(array), sample_rate, start_s)

    @property
    def n_frames(self) -> int:
        return int(self.samples.shape[0])

    @property
    def channels(self) -> int:
        return 1 if self.samples.ndim == 1 else int(self.samples.shape[1])

    @property
    def duration_s(self) -> float:
        return self.n_frames / self.sample_rate

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s

    def mono(self) -> AudioBlock:
        """The channel average as a 1-D block (the block itself when it is already mono)."""
        if self.samples.ndim == 1:
            return self
        return AudioBlock(self.samples.mean(axis=1, dtype=np.float32), self.sample_rate, self.start_s)

    def time_to_frame(self, t_s: float) -> int:
        """Index of the frame at source time ``t_s``, clipped to the block."""
        return min(max(round((t_s - self.start_s) * self.sample_rate), 0), self.n_frames)

    def slice_time(self, t0_s: float, t1_s: float) -> AudioBlock:
        """The part of the block between two source times (clipped to the block)."""
        i0 = self.time_to_frame(t0_s)
        i1 = max(self.time_to_frame(t1_s), i0)
        return AudioBlock(self.samples[i0:i1], self.sample_rate, self.start_s + i0 / self.sample_rate)

    @staticmethod
    def concat(blocks: Sequence[AudioBlock]) -> AudioBlock:
        """Join contiguous blocks of one rate and channel count; a gap or overlap between them is an error."""
        if not blocks:
            raise ValueError("concat needs at least one block")
        first = blocks[0]
        expected = first.start_s
        for block in blocks:
            if block.sample_rate != first.sample_rate or block.channels != first.channels:
                raise ValueError(
                    f"cannot join {block.sample_rate} Hz × {block.channels} ch to "
                    f"{first.sample_rate} Hz × {first.channels} ch"
                )
            tolerance = CONTIGUITY_TOLERANCE_S + 0.5 / first.sample_rate
            if abs(block.start_s - expected) > tolerance:
                raise ValueError(
                    f"blocks are not contiguous: expected start {expected:.6f} s, got {block.start_s:.6f} s"
                )
            expected = block.end_s
        return AudioBlock(np.concatenate([b.samples for b in blocks]), first.sample_rate, first.start_s)
