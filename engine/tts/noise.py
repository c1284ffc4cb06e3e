"""Noise fixed by absolute position: the same seed and position always give the same draw.

An incremental synthesizer runs Stage I on overlapping windows; taking each window's noise from the same
positional stream (phoneme index for durations, frame index for the latent) keeps every phoneme's noise the
same in every window and in the full-sentence synthesis, so outputs are reproducible and comparable.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

BLOCK = 1024  # positions per generated block
MAX_CACHED_BLOCKS = 8  # per stream; bounds memory on long sessions (8 × 192 × 1024 × 4 B = 6 MB at most)


class PositionalNoise:
    """Standard normal noise ``[channels, positions]`` addressed by absolute position, generated lazily."""

    def __init__(self, seed: int, channels: int, stream: int = 0) -> None:
        if channels <= 0:
            raise ValueError(f"channels must be positive, not {channels}")
        self.seed = int(seed)
        self.channels = channels
        self.stream = stream
        self._blocks: OrderedDict[int, np.ndarray] = OrderedDict()

    def _block(self, index: int) -> np.ndarray:
        block = self._blocks.get(index)
        if block is None:
            rng = np.random.default_rng([self.seed, self.stream, index])
            block = rng.standard_normal((self.channels, BLOCK), dtype=np.float32)
            self._blocks[index] = block
            while len(self._blocks) > MAX_CACHED_BLOCKS:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(index)
        return block

    def take(self, start: int, length: int) -> np.ndarray:
        """Noise for positions ``start .. start + length - 1``, shape ``[channels, length]``."""
        if start < 0 or length < 0:
            raise ValueError(f"positions must be non-negative (start {start}, length {length})")
        out = np.empty((self.channels, length), dtype=np.float32)
        pos = start
        while pos < start + length:
            index, offset = divmod(pos, BLOCK)
            n = min(BLOCK - offset, start + length - pos)
            out[:, pos - start : pos - start + n] = self._block(index)[:, offset : offset + n]
            pos += n
        return out
