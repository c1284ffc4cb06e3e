"""Sample-rate conversion with soxr.

Resampling each block on its own puts a filter edge at every block boundary; ``StreamResampler`` keeps the filter
state across blocks, so a stream resampled in pieces equals the stream resampled at once (up to the filter delay,
which ``flush`` releases at the end).
"""

from __future__ import annotations

import numpy as np
import soxr

from engine.audio.block import AudioBlock

QUALITIES = ("QQ", "LQ", "MQ", "HQ", "VHQ")


def _check_rate(name: str, rate: int) -> int:
    if isinstance(rate, bool) or not isinstance(rate, int | np.integer) or rate <= 0:
        raise ValueError(f"{name} must be a positive whole number of Hz, not {rate!r}")
    return int(rate)


def resample(samples: np.ndarray, in_rate: int, out_rate: int, quality: str = "HQ") -> np.ndarray:
    """Resample a whole signal at once (float32 out)."""
    in_rate = _check_rate("in_rate", in_rate)
    out_rate = _check_rate("out_rate", out_rate)
    data = np.ascontiguousarray(samples, dtype=np.float32)
    if in_rate == out_rate:
        return data.copy()
    return np.asarray(soxr.resample(data, in_rate, out_rate, quality=quality), dtype=np.float32)


class StreamResampler:
    """Resamples a stream that arrives in blocks; passes samples through unchanged when the rates agree."""

    def __init__(self, in_rate: int, out_rate: int, channels: int = 1, quality: str = "HQ") -> None:
        self.in_rate = _check_rate("in_rate", in_rate)
        self.out_rate = _check_rate("out_rate", out_rate)
        if channels <= 0:
            raise ValueError(f"channels must be positive, not {channels}")
        if quality not in QUALITIES:
            raise ValueError(f"quality must be one of {', '.join(QUALITIES)}, not {quality!r}")
        self.channels = channels
        self.quality = quality
        self._stream: soxr.ResampleStream | None = None
        if self.in_rate != self.out_rate:
            self._stream = soxr.ResampleStream(self.in_rate, self.out_rate, channels, dtype="float32", quality=quality)
        self._frames_in = 0
        self._frames_out = 0
        self._origin_s: float | None = None
        self._finished = False

    @property
    def passthrough(self) -> bool:
        return self._stream is None

    @property
    def frames_in(self) -> int:
        return self._frames_in

    @property
    def frames_out(self) -> int:
        return self._frames_out

    @property
    def finished(self) -> bool:
        """The stream was flushed (``last``): nothing more can be fed."""
        return self._finished

    def process(self, samples: np.ndarray, last: bool = False) -> np.ndarray:
        """Feed the next samples; returns what the filter can emit so far (``last=True`` flushes the tail)."""
        if self._finished:
            raise RuntimeError("this resampler was already flushed; make a new one for a new stream")
        data = np.ascontiguousarray(samples, dtype=np.float32)
        expected_ndim = 1 if self.channels == 1 else 2
        if data.ndim == 2 and self.channels == 1 and data.shape[1] == 1:
            data = np.ascontiguousarray(data[:, 0])
        if data.ndim != expected_ndim or (data.ndim == 2 and data.shape[1] != self.channels):
            raise ValueError(f"expected {self.channels} channel(s), got shape {data.shape}")
        self._frames_in += data.shape[0]
        if self._stream is None:
            out = data.copy()
        else:
            out = np.asarray(self._stream.resample_chunk(data, last=last), dtype=np.float32)
        self._frames_out += out.shape[0]
        if last:
            self._finished = True
        return out

    def flush(self) -> np.ndarray:
        """Release the samples still inside the filter; the stream ends here."""
        empty = np.zeros((0,) if self.channels == 1 else (0, self.channels), dtype=np.float32)
        return self.process(empty, last=True)

    def process_block(self, block: AudioBlock, last: bool = False) -> AudioBlock:
        """Resample a block; output blocks are contiguous on the source clock, starting at the first input block."""
        if block.sample_rate != self.in_rate:
            raise ValueError(f"block is {block.sample_rate} Hz, this resampler takes {self.in_rate} Hz")
        if self._origin_s is None:
            self._origin_s = block.start_s
        start_s = self._origin_s + self._frames_out / self.out_rate
        return AudioBlock(self.process(block.samples, last=last), self.out_rate, start_s)
