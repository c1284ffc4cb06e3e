"""How late the voice's echo reaches the microphone, measured from the two signals (GCC-PHAT).

The canceller's filter models a few hundred milliseconds of room; the devices and the sound server can add more
than that between the moment the session says a piece played and the moment the capture hears it (a monitor
captured through the server, an output with deep buffers). The estimator keeps the last seconds of the microphone
and of the reference, and once enough voice has played, finds the lag at which they agree best (phase-transform
weighted cross-correlation: the speaker, uncorrelated with the voice, does not move the peak). A lag is taken when
its peak stands out and two measurements in a row agree.

Once the delay is known it is followed to the sample: every quarter second the last second is measured again (the
peak refined between samples), and two such measurements in a row that agree give ``tracked_s``. The canceller's filter
is sure of the path to the sample: a playback that slipped by 0.5 ms (8 samples) under it left 12 dB of the echo
removed at the end of a session where 50 dB had been, and 5 ms left 3 dB (a recorded live session, replayed), so
the voice's last words were heard again. A sound server that plays a late block's silence, or skips a few
milliseconds, moves the echo that much against what the session says played.
"""

from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)

RATE = 16000
WINDOW_S = 4.0  # what each measurement looks at
EVERY_S = 1.0  # how often it measures
MAX_LAG_S = 1.0  # the longest delay it looks for
MAX_LEAD_S = 0.3  # and the most the echo may come before the reference says the voice played (a live output's
# latency is only estimated: a session may put the voice's play times later than they were)
MIN_VOICE_S = 1.0  # the reference must hold this much voice in the window
PEAK_RATIO = 6.0  # the peak against the mean of the correlation's magnitude
AGREE_S = 0.02  # two measurements agree within this
VOICE_LEVEL = 1e-3
SURE_RATIO = 30.0  # a peak this clear is taken at once (a digital copy of the voice)
DIGITAL_MIN_VOICE_S = 0.3
DIGITAL_EVERY_S = 0.25
TRACK_WINDOW_S = 1.0  # what each following measurement looks at, once the delay is known
TRACK_EVERY_S = 0.25
TRACK_AGREE_SAMPLES = 0.5  # two following measurements agree within this
TRACK_MIN_VOICE_S = 0.6  # the voice in such a window (a digital copy: ``DIGITAL_MIN_VOICE_S``)


class EchoDelayEstimator:
    """``add(near, far)`` the microphone and the reference as they come (same length); ``delay_s`` is the lag of
    the echo behind the reference once it is known (None before; negative when the echo comes first). ``digital``:
    the echo is an exact copy (a monitor), so a short stretch of voice tells the delay and one clear measurement is
    taken."""

    def __init__(self, rate: int = RATE, digital: bool = False) -> None:
        self.rate = rate
        self.digital = digital
        self.min_voice_s = DIGITAL_MIN_VOICE_S if digital else MIN_VOICE_S
        self.every_s = DIGITAL_EVERY_S if digital else EVERY_S
        self._size = int(WINDOW_S * rate)
        self._near = np.zeros(self._size, np.float32)
        self._far = np.zeros(self._size, np.float32)
        self._filled = 0
        self._since = 0
        self._candidate: float | None = None
        self.delay_s: float | None = None
        self.measurements = 0
        self.tracked_s: float | None = None  # the delay as followed to the sample (between samples), once known
        self._track_since = 0
        self._track_candidate: float | None = None

    def add(self, near: np.ndarray, far: np.ndarray) -> float | None:
        """Take the next samples; returns a newly settled delay (None when nothing changed)."""
        n = min(near.size, self._size)
        self._near = np.roll(self._near, -n)
        self._far = np.roll(self._far, -n)
        self._near[-n:] = near[-n:]
        self._far[-n:] = far[-n:]
        self._filled = min(self._filled + n, self._size)
        self._since += near.size
        self._track_since += near.size
        if self.delay_s is not None and self._track_since >= TRACK_EVERY_S * self.rate:
            self._track_since = 0
            self._track()
        if self._since < self.every_s * self.rate:
            return None
        self._since = 0
        measured = self._measure()
        if measured is None:
            return None
        lag, ratio = measured
        settled = ratio >= SURE_RATIO or (self._candidate is not None and abs(lag - self._candidate) <= AGREE_S)
        self._candidate = lag
        if not settled or (self.delay_s is not None and abs(lag - self.delay_s) <= AGREE_S):
            return None
        self.delay_s = lag
        log.info("the voice's echo arrives %.0f ms after it played", lag * 1000)
        return lag

    def _track(self) -> None:
        """Measure the last ``TRACK_WINDOW_S`` between samples; two measurements in a row that agree are the delay
        followed (``tracked_s``)."""
        min_voice_s = DIGITAL_MIN_VOICE_S if self.digital else TRACK_MIN_VOICE_S
        measured = self._measure(min(int(TRACK_WINDOW_S * self.rate), self._filled), min_voice_s, refine=True)
        if measured is None:
            self._track_candidate = None
            return
        lag = measured[0]
        candidate, self._track_candidate = self._track_candidate, lag
        if candidate is not None and abs(lag - candidate) * self.rate <= TRACK_AGREE_SAMPLES:
            self.tracked_s = (lag + candidate) / 2

    def _measure(
        self, span: int | None = None, min_voice_s: float | None = None, refine: bool = False
    ) -> tuple[float, float] | None:
        """The lag of the clearest peak in the last ``span`` samples (all that is held when None) and how clear it is
        (peak over the mean magnitude), when clear enough; ``refine``: the lag between samples (a parabola through the
        peak and its neighbours)."""
        span = self._filled if span is None else span
        far, near = self._far[-span:], self._near[-span:]
        voiced = np.count_nonzero(np.abs(far) > VOICE_LEVEL) / self.rate
        if voiced < (self.min_voice_s if min_voice_s is None else min_voice_s):
            return None
        self.measurements += 1
        size = 1 << int(np.ceil(np.log2(2 * far.size)))
        cross = np.fft.rfft(near, size) * np.conj(np.fft.rfft(far, size))
        cross /= np.maximum(np.abs(cross), 1e-12)
        full = np.abs(np.fft.irfft(cross, size))
        lead = int(MAX_LEAD_S * self.rate)
        correlation = np.concatenate([full[size - lead :], full[: int(MAX_LAG_S * self.rate)]])  # from −lead on
        peak = int(np.argmax(correlation))
        ratio = float(correlation[peak]) / max(float(np.mean(correlation)), 1e-12)
        if ratio < PEAK_RATIO:
            return None
        offset = 0.0
        if refine and 0 < peak < correlation.size - 1:
            before, at, after = correlation[peak - 1 : peak + 2]
            curve = before - 2 * at + after
            offset = 0.5 * (before - after) / curve if curve < 0 else 0.0
        return (peak + offset - lead) / self.rate, ratio
