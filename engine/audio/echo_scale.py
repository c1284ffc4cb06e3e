"""The microphone's level brought to the one the echo canceller's constants were set at, for quiet microphones.

The Kalman filter's prior (how large an echo path may be) and its first noise estimate are absolute numbers, set on
microphones whose speech peaks around -20 dBFS. A microphone 30-40 dB quieter (a laptop's input turned down, a
child's voice far away) hears an echo path that much smaller, so the prior is far too unsure for it: the Kalman gain
stays near one and the filter takes the speaker's own words for echo and subtracts them (FLEURS read speech at -56
dBFS: 0.06 of WER on headphones, 0.39-0.52 through the canceller; the same recording 30 dB louder, 0.15). The
microphone is raised in 6 dB steps while its loud blocks stay under ``QUIET_PEAK_DBFS``, and the filter's state is
rescaled at every step, which a linear filter allows exactly; a microphone at the usual level is never touched. Its
level is read only while the voice plays (``EchoCanceller``): the echo is then in it, and silence is not; while all
it heard is quiet the filter learns nothing before that first reading (half a second of the voice), which it would
learn at the wrong scale, and subtracts nothing: a path restored from a session at the usual level is tens of dB
too loud for it (FLEURS recordings at -56 dBFS after ones at -15 to -17: the speaker 8-12 dB under what else the
canceller's output held, against 11-16 dB over it when it waits).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

QUIET_PEAK_DBFS = -45.0  # the loud blocks of the last seconds under this: the microphone is raised
TARGET_PEAK_DBFS = -30.0  # ... until they reach about this
STEP_DB = 6.0
MAX_STEPS = 8  # 48 dB at most
WINDOW_BLOCKS = 500  # 10 s of 20 ms blocks
DECIDE_EVERY = 25  # blocks (0.5 s)
PEAK_PERCENTILE = 95.0
MIN_BLOCKS = 25  # blocks heard before a first decision


class InputScale:
    """``gain`` for the microphone's next block; ``observe(block)`` after each block the voice played in, which says
    by which factor the gain moved (1.0: it did not)."""

    def __init__(self) -> None:
        self.steps = 0
        self.decided = False  # a first level was read (the filter waits for it before it learns)
        self._powers: deque[float] = deque(maxlen=WINDOW_BLOCKS)
        self._since = 0

    @property
    def waiting(self) -> bool:
        """No level read yet, and nothing heard so far as loud as a microphone at the usual level: the filter waits
        (a microphone at the usual level is known from its first loud block, and its filter loses nothing)."""
        if self.decided:
            return False
        return not self._powers or max(self._powers) < 10 ** (QUIET_PEAK_DBFS / 10)

    @property
    def gain(self) -> float:
        return float(10 ** (self.steps * STEP_DB / 20))

    @property
    def raised_db(self) -> float:
        return self.steps * STEP_DB

    def observe(self, block: np.ndarray) -> float:
        """The block as the microphone gave it (before the gain); returns the factor the gain moved by (1.0: none)."""
        self._powers.append(float(np.mean(np.square(block, dtype=np.float64))))
        self._since += 1
        if self._since < DECIDE_EVERY or len(self._powers) < MIN_BLOCKS:
            return 1.0
        self._since = 0
        self.decided = True
        peak = float(np.percentile(np.fromiter(self._powers, float), PEAK_PERCENTILE))
        peak_db = 10 * math.log10(max(peak, 1e-12))
        wanted = 0
        if peak_db < QUIET_PEAK_DBFS:
            wanted = min(math.ceil((TARGET_PEAK_DBFS - peak_db) / STEP_DB), MAX_STEPS)
        # up at once (the words are being lost), down only by more than a step (a pause is not a new level)
        if wanted > self.steps or wanted < self.steps - 1:
            before = self.gain
            self.steps = wanted
            return self.gain / before
        return 1.0
