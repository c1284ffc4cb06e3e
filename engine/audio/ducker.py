"""Ducking: the other applications' streams lowered while the voice speaks, in small steps, and a capture of them
raised back step by step.

A duck made in one step lands in a capture of the lowered streams within a few tens of milliseconds of when it was
made, early or late (through the test server: −35 to +60 ms, moving as the capture's clock is estimated). A capture
raised back by the whole duck from a fixed moment is therefore 15 dB too quiet or too loud somewhere around every
change; undone only 0.3 s after each lowering, it was 15 dB too quiet for 0.3 s at the start of every duck, over the
words said as the voice began ("antecedents" heard as "antecedence" in 9 of 10 sessions of the window's test, words
lost twice). Lowered and restored in ``FADE_STEPS`` steps ``FADE_STEP_S`` apart, each change is a few dB, and the
capture is raised by each step from the moment it was made: where the timing is off, it is one step off, for those
milliseconds. People hear a fade of a fifth of a second instead of a cut.

The steps are made by a thread of the ducker's own, so ``set`` returns at once (the playback monitor calls it).
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from engine.audio.sound_server import (
    DEFAULT_DUCK_DB,
    pulse_client,
    restore_volumes,
    save_duck_state,
    set_volume,
    state_file_path,
    volume_factor,
)

log = logging.getLogger(__name__)

FADE_STEPS = 5  # 3 dB a step for the default 15 dB
FADE_STEP_S = 0.05
CHANGES_KEPT = 1024  # (time, level) pairs: a hundred ducks, far more than a capture lags behind


class Ducker:
    """Lowers every other application's stream by ``db`` while ``set(True)``; ``set(False)`` restores them, each
    as a fade of ``steps`` steps ``step_s`` apart. Thread-safe; ``close()`` restores at once and stops.

    Streams that start while lowered are left alone until the next lowering from full volume. With a ``clock``,
    ``gain_at(t)`` tells how much the other streams were lowered at time ``t`` on it, and ``raise_back`` undoes that
    in a capture of them. ``background=False`` makes the steps in ``set`` itself (tests)."""

    def __init__(
        self,
        db: float = DEFAULT_DUCK_DB,
        state_file: Path | None = None,
        clock: Callable[[], float] | None = None,
        steps: int = FADE_STEPS,
        step_s: float = FADE_STEP_S,
        background: bool = True,
    ) -> None:
        if not 0 < db <= 60:
            raise ValueError(f"ducking lowers by 1 to 60 dB, not {db}")
        if steps < 1:
            raise ValueError(f"a duck takes at least one step, not {steps}")
        self.db = db
        self.steps = steps
        self.step_s = step_s
        self.state_file = state_file or state_file_path()
        self.times_ducked = 0  # lowerings from full volume
        self._clock = clock
        self._saved: dict[int, list[float]] = {}  # sink input → its volumes before the duck
        self._level = 0  # steps lowered now
        self._target = 0
        self._closed = False
        self._changes: collections.deque[tuple[float, int]] = collections.deque(maxlen=CHANGES_KEPT)
        self._changes_lock = threading.Lock()
        self._wake = threading.Condition()
        self._settled = threading.Event()
        self._settled.set()
        self._background = background
        self._thread: threading.Thread | None = None

    @property
    def ducked(self) -> bool:
        """The other streams are (at least partly) lowered now."""
        return self._level > 0

    def set(self, duck: bool) -> None:
        """Fade the other streams down (``True``) or back up; returns at once unless ``background`` is off."""
        with self._wake:
            target = self.steps if duck else 0
            if self._closed or target == self._target:
                return
            self._target = target
            self._settled.clear()
            if self._background and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ducker", daemon=True)
                self._thread.start()
            self._wake.notify()
        if not self._background:
            while self._level != target and self._step(1 if target > self._level else -1):
                if self._level != target and self.step_s > 0:
                    time.sleep(self.step_s)
            self._settled.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the fade asked for last is done; False when ``timeout`` came first."""
        return self._settled.wait(timeout)

    def close(self) -> None:
        """Restore the other streams at once (no fade) and stop the ducker's thread."""
        with self._wake:
            self._closed = True
            self._target = 0
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        if self._level > 0:
            self._step(-self._level)
        self._settled.set()

    def gain_at(self, t_s: float) -> float:
        """The gain the other streams had at ``t_s`` on the clock (1 when not lowered), as a capture hears it: a
        lowering step from when it was made, a raising step from before it was made (what is no longer lowered is
        never raised)."""
        return float(self._gains(np.array([t_s]))[0])

    def raise_back(self, samples: np.ndarray, start_s: float, rate: int) -> np.ndarray:
        """A capture block of the other streams (its first sample at ``start_s`` on the clock) with the duck
        undone sample by sample, each step from when it was made; the block itself when nothing was lowered."""
        times = start_s + np.arange(samples.size) / rate
        gains = self._gains(times)
        if np.all(gains == 1.0):
            return samples
        return (samples / gains).astype(samples.dtype, copy=False)

    # ----- the steps
    def _gains(self, times: np.ndarray) -> np.ndarray:
        with self._changes_lock:
            changes = list(self._changes)
        if not changes:
            return np.ones(times.size)
        at = np.array([c[0] for c in changes])
        levels = np.array([0] + [c[1] for c in changes])
        level = levels[np.searchsorted(at, times, side="right")]
        return np.power(10.0, -self.db * level / self.steps / 20)

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._level == self._target and not self._closed:
                    self._settled.set()
                    self._wake.wait()
                if self._closed:
                    return
                direction = 1 if self._target > self._level else -1
            if not self._step(direction):
                with self._wake:  # the server refused: the fade stops where it is (said once, in the log)
                    self._target = self._level
                continue
            if self._level != self._target and self.step_s > 0:
                time.sleep(self.step_s)

    def _step(self, by: int) -> bool:
        """Lower (``by`` > 0) or raise the other streams by ``by`` steps; a raise to full volume restores exactly
        the volumes they had. A lowering counts from after it is made, a raising from before (see ``gain_at``).
        False when the sound server could not be reached."""
        level = self._level + by
        before = self._clock() if self._clock is not None else 0.0
        try:
            with pulse_client() as pulse:
                if self._level == 0:  # from full volume: the streams playing now, saved first
                    own = str(os.getpid())
                    inputs = [
                        i
                        for i in pulse.sink_input_list()  # type: ignore[attr-defined]
                        if i.proplist.get("application.process.id") != own
                    ]
                    self._saved = {i.index: list(i.volume.values) for i in inputs}
                    save_duck_state(self.state_file, self._saved)
                    self.times_ducked += 1
                if level == 0:
                    restore_volumes(pulse, self._saved)
                else:
                    self._lower_to(pulse, level)
        except Exception as exc:  # no server (AudioDeviceError), or it went away mid-call (pulsectl's errors)
            log.warning("ducking: %s", exc)
            return False
        if level == 0:
            self._saved = {}
            self.state_file.unlink(missing_ok=True)
        self._level = level
        if self._clock is not None:
            with self._changes_lock:
                self._changes.append((self._clock() if by > 0 else before, level))
        return True

    def _lower_to(self, pulse: object, level: int) -> None:
        factor = volume_factor(self.db * level / self.steps)
        present = {i.index: i for i in pulse.sink_input_list()}  # type: ignore[attr-defined]
        for index, values in self._saved.items():
            item = present.get(index)
            if item is None or len(item.volume.values) != len(values):  # the stream ended meanwhile
                continue
            volume = item.volume
            volume.values = [v * factor for v in values]
            set_volume(pulse, item, volume)
