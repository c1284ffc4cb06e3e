"""A simulated room for the echo benchmark: the microphone hears the speaker and the voice played on speakers.

The voice reaches the microphone delayed (device and air), coloured by the room (a seeded synthetic impulse
response: exponentially decaying noise with the given RT60 after a direct path) and scaled to ``echo_db`` relative
to the speaker's speech, with a little noise. Everything is seeded, so a run can be repeated exactly.

``RoomMicrophone`` is a long audio source (sliced by the recognizer's driver): a slice mixes in the voice played up
to that slice's end, after ``sync()`` has let the voice's stage catch up to the same moment on the session clock.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.audio.played_track import PlayedTrack

RATE = 16000
DEFAULT_RT60_S = 0.3
DEFAULT_DELAY_S = 0.06
DEFAULT_NOISE_DB = -50.0  # relative to the speaker's speech
DIRECT_PATH = 0.5  # the direct path's share of the response's energy


def room_response(rt60_s: float = DEFAULT_RT60_S, seed: int = 0, rate: int = RATE) -> np.ndarray:
    """A synthetic room impulse response of unit energy: a direct path, then noise decaying 60 dB in ``rt60_s``."""
    if rt60_s <= 0:
        return np.ones(1, np.float32)
    rng = np.random.default_rng(seed)
    n = max(int(rt60_s * rate), 2)
    t = np.arange(n) / rate
    tail = rng.standard_normal(n) * np.exp(-3.0 * np.log(10.0) * t / rt60_s)  # -60 dB at rt60_s (amplitude)
    tail[0] = 0.0
    tail *= np.sqrt((1.0 - DIRECT_PATH) / max(float(np.sum(tail**2)), 1e-12))
    tail[0] = np.sqrt(DIRECT_PATH)
    return tail.astype(np.float32)


class RoomMicrophone:
    """The speaker's recording plus the room's echo of the played voice (``track``), read by slices in order.

    ``echo_gain`` scales the voice (after the unit-energy response): the benchmark sets it so that the voice's
    speech level lands ``echo_db`` from the speaker's. ``echo_only`` keeps, for the same slices, the echo alone
    (the canceller's ERLE is measured on it)."""

    def __init__(
        self,
        speaker: np.ndarray,
        track: PlayedTrack,
        echo_gain: float,
        delay_s: float = DEFAULT_DELAY_S,
        response: np.ndarray | None = None,
        noise_level: float = 0.0,
        sync: Callable[[], None] | None = None,
        seed: int = 0,
    ) -> None:
        self.speaker = np.asarray(speaker, np.float32).reshape(-1)
        self.track = track
        self.echo_gain = echo_gain
        self.delay = max(int(round(delay_s * RATE)), 0)
        self.response = room_response() if response is None else np.asarray(response, np.float32)
        self.noise_level = noise_level
        self.sync = sync
        self._rng = np.random.default_rng(seed + 1)
        self.echo = np.zeros(self.speaker.size, np.float32)  # what the room added, kept for the benchmark's ERLE
        self._next = 0

    @property
    def size(self) -> int:
        return self.speaker.size

    def __getitem__(self, index: slice) -> np.ndarray:
        start, stop, _ = index.indices(self.size)
        if start != self._next:
            raise ValueError(f"a room is heard in order: slice from {start}, expected {self._next}")
        if self.sync is not None:
            self.sync()
        self._next = stop
        n = stop - start
        echo = self._echo(start, n) * self.echo_gain
        self.echo[start:stop] = echo
        noise = self._rng.standard_normal(n).astype(np.float32) * self.noise_level
        return self.speaker[start:stop] + echo + noise

    def _echo(self, start: int, n: int) -> np.ndarray:
        """The room's output over ``[start, start + n)``: the voice played ``delay`` earlier, convolved."""
        taps = self.response.size
        first = start - self.delay - (taps - 1)  # the oldest played sample still ringing at ``start``
        played = self.track.read(first / RATE, n + taps - 1)
        if not np.any(played):
            return np.zeros(n, np.float32)
        size = 1 << int(np.ceil(np.log2(played.size + taps - 1)))
        full = np.fft.irfft(np.fft.rfft(played, size) * np.fft.rfft(self.response, size), size)
        return full[taps - 1 : taps - 1 + n].astype(np.float32)
