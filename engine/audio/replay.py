"""Stereo playback of a past session's blocks: a feeder thread reads and queues, the device callback only copies.

The queue holds at most ``QUEUE_S`` of audio, so a long session is read from its files as it plays.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from engine.audio.devices import (
    AudioDeviceError,
    device_label,
    device_stopped,
    negotiate_rate,
    opened_as,
    sounddevice_module,
    stream_stopped,
)

log = logging.getLogger(__name__)

PREFERRED_RATE = 22050  # the voice's own rate; the input (16 kHz) is resampled up to it
BLOCK_S = 0.2
QUEUE_S = 2.0
LOSS_POLL_S = 0.1  # how often ``wait`` looks at whether the device is still playing


def output_rate(device: int | str | None) -> int:
    """``PREFERRED_RATE`` when the device takes it in stereo, else its default rate."""
    return negotiate_rate(device, "output", PREFERRED_RATE, channels=2)


class Replay:
    """Plays ``blocks`` ((frames, 2) float32 at ``rate``) on ``device``; ``stop()`` ends it early."""

    def __init__(self, blocks: Iterable[np.ndarray], rate: int, device: int | str | None = None) -> None:
        self._sd = sounddevice_module()
        self.rate = rate
        self.device = device
        self._blocks = blocks
        self._queue: queue.Queue[np.ndarray | None] = queue.Queue(maxsize=max(int(QUEUE_S / BLOCK_S), 1))
        self._current = np.zeros((0, 2), np.float32)
        self._stop = threading.Event()
        self._done = threading.Event()
        self._stream: Any = None  # sounddevice's stream, once started
        self._feeder: threading.Thread | None = None
        self.error: str | None = None

    def _put(self, item: np.ndarray | None) -> bool:
        """Queue ``item``, waiting while the queue is full; False when the replay was stopped meanwhile."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _feed(self) -> None:
        try:
            for block in self._blocks:
                if not self._put(block):
                    return
        except Exception as exc:  # a file that cannot be read: the replay ends, saying why
            log.warning("replay stopped: %s", exc)
            self.error = str(exc)
        self._put(None)  # the end

    def _callback(self, outdata: np.ndarray, frames: int, time_info: object, status: object) -> None:
        filled = 0
        while filled < frames:
            if self._current.shape[0] == 0:
                try:
                    block = self._queue.get_nowait()
                except queue.Empty:
                    break
                if block is None:
                    self._done.set()
                    break
                self._current = block
            n = min(frames - filled, self._current.shape[0])
            outdata[filled : filled + n] = self._current[:n]
            self._current = self._current[n:]
            filled += n
        outdata[filled:] = 0.0

    def start(self) -> None:
        sd = self._sd
        self._feeder = threading.Thread(target=self._feed, name="replay-feeder", daemon=True)
        self._feeder.start()
        try:
            with opened_as(self.device, "output") as device:
                self._stream = sd.OutputStream(
                    samplerate=self.rate,
                    device=device,
                    channels=2,
                    dtype="float32",
                    blocksize=1024,
                    latency=0.2,
                    callback=self._callback,
                )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            self._stop.set()
            raise AudioDeviceError(f"cannot play on {device_label(self.device, 'output')}: {exc}") from exc

    def wait(self, timeout: float | None = None) -> bool:
        """Until everything played or the device stopped (True), or ``timeout``; the device's buffer is let out
        before closing."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.finished:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self._done.wait(LOSS_POLL_S if left is None else min(left, LOSS_POLL_S))
        stream = self._stream
        if stream is not None and stream.active:
            self._stop.wait(float(stream.latency) + 0.1)
        return True

    @property
    def finished(self) -> bool:
        """Everything played, or the device stopped playing (unplugged): ``error`` then says so."""
        if not self._done.is_set() and stream_stopped(self._stream) and not self._stop.is_set():
            self.error = str(device_stopped(self.device, "output"))
            log.warning("replay stopped: %s", self.error)
            self._done.set()
        return self._done.is_set()

    def stop(self) -> None:
        self._stop.set()
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.stop()
            finally:
                stream.close()
        if self._feeder is not None:
            self._feeder.join(timeout=2)
