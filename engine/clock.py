"""Clocks: the same code runs live on wall time or from a file on a compute-aware simulated clock.

On the simulated clock, waiting costs nothing (time jumps to the moment waited for) but computing costs what it
really took: ``with clock.compute():`` measures the work and advances the clock by that much. A file run is then
as fast as the machine allows while every latency it reports is the one a live run on this machine would see.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(slots=True)
class ComputeSpan:
    """One measured piece of work: when it started on the clock, and the compute time it was charged."""

    start_s: float
    elapsed_s: float = 0.0
    _so_far: Callable[[], float] | None = None

    @property
    def end_s(self) -> float:
        return self.start_s + self.elapsed_s

    def now_s(self) -> float:
        """The clock's time at this moment of the work (on a simulated clock: start + compute so far)."""
        return self._so_far() if self._so_far is not None else self.end_s


@runtime_checkable
class Clock(Protocol):
    """Seconds since the clock's origin."""

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...

    def sleep_until(self, t_s: float) -> None: ...

    def compute(self) -> AbstractContextManager[ComputeSpan]: ...


class RealClock:
    """Wall time (monotonic) since construction, or since ``origin`` (a reading of ``timer``); ``compute`` only
    measures, since real time passes by itself."""

    def __init__(self, timer: Callable[[], float] = time.monotonic, origin: float | None = None) -> None:
        self._timer = timer
        self._origin = timer() if origin is None else origin

    def now(self) -> float:
        return self._timer() - self._origin

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def sleep_until(self, t_s: float) -> None:
        self.sleep(t_s - self.now())

    @contextmanager
    def compute(self) -> Iterator[ComputeSpan]:
        span = ComputeSpan(self.now(), _so_far=self.now)
        try:
            yield span
        finally:
            span.elapsed_s = self.now() - span.start_s


class SimulatedClock:
    """Virtual time that moves only when told: by waits (free) and by measured compute (charged).

    ``compute_scale`` multiplies measured compute, e.g. 2.0 to ask how a machine half as fast would fare.
    Thread-safe; parallel stages that should not charge each other keep one clock each.
    """

    def __init__(
        self,
        start_s: float = 0.0,
        compute_scale: float = 1.0,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        if compute_scale <= 0:
            raise ValueError(f"compute_scale must be positive, not {compute_scale}")
        self._now = float(start_s)
        self._scale = float(compute_scale)
        self._timer = timer
        self._lock = threading.Lock()
        self.compute_total_s = 0.0

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move the clock forward; returns the new time."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go back ({seconds} s)")
        with self._lock:
            self._now += seconds
            return self._now

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.advance(seconds)

    def sleep_until(self, t_s: float) -> None:
        """Jump to ``t_s`` if it lies ahead; a moment already passed leaves the clock as it is."""
        with self._lock:
            self._now = max(self._now, t_s)

    def charge(self, compute_s: float) -> float:
        """Advance by a compute time measured elsewhere (scaled); returns the new time."""
        if compute_s < 0:
            raise ValueError(f"compute time cannot be negative ({compute_s} s)")
        scaled = compute_s * self._scale
        with self._lock:
            self.compute_total_s += scaled
            self._now += scaled
            return self._now

    @contextmanager
    def compute(self) -> Iterator[ComputeSpan]:
        """Measure the enclosed work with the wall timer and advance the clock by it (scaled)."""
        t0 = self._timer()
        span = ComputeSpan(self.now(), _so_far=lambda: span.start_s + (self._timer() - t0) * self._scale)
        try:
            yield span
        finally:
            measured = self._timer() - t0
            span.elapsed_s = measured * self._scale
            self.charge(measured)
