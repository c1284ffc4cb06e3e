"""A bounded, thread-safe FIFO of audio frames.

Audio callbacks use the non-blocking calls (``write(..., timeout=0)``, ``read_into``); producer threads may block
on ``write`` until the consumer frees space, which is how synthesis is paced by playback without growing memory.
"""

from __future__ import annotations

import threading
import time

import numpy as np


class RingBufferClosed(Exception):
    """Raised by a blocking write on a buffer that was closed."""


class RingBuffer:
    """Fixed-capacity FIFO of ``(frames, channels)`` float32 audio (1-D in and out when ``channels == 1``)."""

    def __init__(self, capacity_frames: int, channels: int = 1, dtype: np.dtype | type = np.float32) -> None:
        if capacity_frames <= 0:
            raise ValueError(f"capacity_frames must be positive, not {capacity_frames}")
        if channels <= 0:
            raise ValueError(f"channels must be positive, not {channels}")
        self._data = np.zeros((capacity_frames, channels), dtype=dtype)
        self._capacity = capacity_frames
        self._channels = channels
        self._read = 0  # index of the oldest frame
        self._size = 0
        self._closed = False
        self._lock = threading.Lock()
        self._readable = threading.Condition(self._lock)
        self._writable = threading.Condition(self._lock)
        self.dropped_frames = 0  # frames a non-blocking write could not store
        self.underrun_frames = 0  # frames read_into had to fill with silence

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def channels(self) -> int:
        return self._channels

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        with self._lock:
            return self._size

    @property
    def free(self) -> int:
        with self._lock:
            return self._capacity - self._size

    def _as_frames(self, samples: np.ndarray) -> np.ndarray:
        array = np.asarray(samples, dtype=self._data.dtype)
        if array.ndim == 1:
            array = array.reshape(-1, 1)
        if array.ndim != 2 or array.shape[1] != self._channels:
            raise ValueError(f"expected {self._channels} channel(s), got shape {np.shape(samples)}")
        return array

    def _put(self, frames: np.ndarray) -> None:
        """Copy frames in; the caller holds the lock and has checked there is room."""
        n = frames.shape[0]
        start = (self._read + self._size) % self._capacity
        first = min(n, self._capacity - start)
        self._data[start : start + first] = frames[:first]
        if n > first:
            self._data[: n - first] = frames[first:]
        self._size += n

    def _take(self, out: np.ndarray, n: int) -> None:
        """Copy the n oldest frames out and drop them; the caller holds the lock."""
        first = min(n, self._capacity - self._read)
        out[:first] = self._data[self._read : self._read + first]
        if n > first:
            out[first:n] = self._data[: n - first]
        self._read = (self._read + n) % self._capacity
        self._size -= n

    def write(self, samples: np.ndarray, timeout: float | None = 0.0) -> int:
        """Append frames; returns how many were stored.

        ``timeout=0`` never blocks (safe in an audio callback): what does not fit is dropped and counted in
        ``dropped_frames``. A positive timeout or ``None`` (forever) waits for room until all frames are stored,
        the time runs out, or the buffer is closed (then ``RingBufferClosed``).
        """
        frames = self._as_frames(samples)
        total = frames.shape[0]
        written = 0
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._writable:
            while True:
                if self._closed:
                    if timeout == 0:
                        self.dropped_frames += total - written
                        return written
                    raise RingBufferClosed("write to a closed ring buffer")
                n = min(total - written, self._capacity - self._size)
                if n > 0:
                    self._put(frames[written : written + n])
                    written += n
                    self._readable.notify_all()
                if written == total:
                    return written
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    if timeout == 0:
                        self.dropped_frames += total - written
                    return written
                self._writable.wait(remaining)

    def read(self, max_frames: int | None = None) -> np.ndarray:
        """Remove and return up to ``max_frames`` of the oldest frames (all of them when None); never blocks."""
        with self._lock:
            n = self._size if max_frames is None else min(max_frames, self._size)
            out = np.empty((n, self._channels), dtype=self._data.dtype)
            self._take(out, n)
            if n:
                self._writable.notify_all()
        return out[:, 0] if self._channels == 1 else out

    def read_into(self, out: np.ndarray) -> int:
        """Fill ``out`` (frames × channels, or 1-D for mono) from the buffer, silence after the data runs out.

        Returns the number of real frames; the shortfall is added to ``underrun_frames``. Never blocks: this is
        the call an output stream's callback makes.
        """
        view = out.reshape(-1, 1) if out.ndim == 1 else out
        if view.shape[1] != self._channels:
            raise ValueError(f"expected {self._channels} channel(s), got shape {out.shape}")
        wanted = view.shape[0]
        with self._lock:
            n = min(wanted, self._size)
            self._take(view, n)
            if n:
                self._writable.notify_all()
            if n < wanted:
                self.underrun_frames += wanted - n
        view[n:] = 0
        return n

    def wait_readable(self, min_frames: int = 1, timeout: float | None = None) -> bool:
        """Block until at least ``min_frames`` are buffered (True), or the timeout passes / the buffer closes."""
        min_frames = min(min_frames, self._capacity)
        with self._readable:
            return self._readable.wait_for(lambda: self._size >= min_frames or self._closed, timeout) and (
                self._size >= min_frames
            )

    def clear(self) -> int:
        """Drop everything buffered; returns how many frames were dropped."""
        with self._lock:
            n = self._size
            self._read = 0
            self._size = 0
            self._writable.notify_all()
            return n

    def close(self) -> None:
        """Wake every waiter; later blocking writes raise, reads still drain what is left."""
        with self._lock:
            self._closed = True
            self._readable.notify_all()
            self._writable.notify_all()
