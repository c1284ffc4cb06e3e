"""Microphone capture: the callback copies each block into a bounded queue and returns; the consumer resamples.

Block start times are counted in frames on the capture clock (0 = the stream's first frame), so they stay exact
however late the consumer reads them.
"""

from __future__ import annotations

import logging
import queue
from typing import Any

import numpy as np

from engine.audio.block import AudioBlock
from engine.audio.devices import (
    AudioDeviceError,
    device_label,
    device_stopped,
    negotiate_rate,
    opened_as,
    sounddevice_module,
    stream_stopped,
)
from engine.audio.resample import StreamResampler

log = logging.getLogger(__name__)

DEFAULT_RATE = 16000
DEFAULT_BLOCK_S = 0.1
DEFAULT_QUEUE_S = 60.0  # what may wait unread before blocks are dropped (and counted)


class BlockQueue:
    """The consumer side of a capture: blocks a producer copied into a bounded queue, handed out as ``AudioBlock``s
    at ``rate`` with start times counted in frames (``_convert`` turns a raw block into samples at ``rate``)."""

    def __init__(self, rate: int, block_s: float, queue_s: float) -> None:
        self.rate = rate
        self._queue: queue.Queue[np.ndarray] = queue.Queue(maxsize=max(int(queue_s / block_s), 1))
        self._frames_out = 0
        self.dropped_blocks = 0

    def _enqueue(self, raw: np.ndarray) -> None:
        """The producer's one step: copy in, or count the block dropped when the consumer is far behind."""
        try:
            self._queue.put_nowait(raw)
        except queue.Full:
            self.dropped_blocks += 1

    def _convert(self, raw: np.ndarray) -> np.ndarray:
        return raw

    def read(self, timeout: float | None = None) -> AudioBlock | None:
        """The next block at ``rate`` (None when nothing arrived within ``timeout``)."""
        try:
            raw = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        samples = self._convert(raw)
        block = AudioBlock(samples, self.rate, self._frames_out / self.rate)
        self._frames_out += samples.size
        return block

    def read_available(self) -> list[AudioBlock]:
        blocks = []
        while (block := self.read(timeout=0)) is not None:
            blocks.append(block)
        return blocks


class Capture(BlockQueue):
    """Records one channel from an input device and hands out ``AudioBlock``s at ``rate``."""

    def __init__(
        self,
        device: int | str | None = None,
        rate: int = DEFAULT_RATE,
        block_s: float = DEFAULT_BLOCK_S,
        queue_s: float = DEFAULT_QUEUE_S,
    ) -> None:
        super().__init__(rate, block_s, queue_s)
        self._sd = sounddevice_module()
        self.device = device
        self.device_rate = negotiate_rate(device, "input", rate)
        self.blocksize = max(int(block_s * self.device_rate), 1)
        self._resampler = StreamResampler(self.device_rate, rate)
        self._stream: Any = None  # sounddevice's stream, once started

    def _callback(self, indata: np.ndarray, frames: int, time_info: object, status: object) -> None:
        self._enqueue(indata[:, 0].copy())

    def _convert(self, raw: np.ndarray) -> np.ndarray:
        return self._resampler.process(raw)

    def start(self) -> None:
        sd = self._sd
        try:
            with opened_as(self.device, "input") as device:
                self._stream = sd.InputStream(
                    samplerate=self.device_rate,
                    blocksize=self.blocksize,
                    device=device,
                    channels=1,
                    dtype="float32",
                    callback=self._callback,
                )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            raise AudioDeviceError(f"cannot open {device_label(self.device, 'input')}: {exc}") from exc

    def check(self) -> None:
        """Raise ``AudioDeviceError`` when the stream stopped by itself (the device went away)."""
        if stream_stopped(self._stream):
            raise device_stopped(self.device, "input")

    def stop(self) -> None:
        if self._stream is not None:
            self._stream.stop()
            self._stream.close()
            self._stream = None

    def __enter__(self) -> Capture:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
