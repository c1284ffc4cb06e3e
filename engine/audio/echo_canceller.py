"""Acoustic echo cancellation: the voice's own played samples removed from what the microphone hears.

The reference (the far end) is the voice exactly as it was played, on the same clock as the microphone, so the
canceller has to find only the acoustic path and what is left of the device delays. Two methods:

- ``kalman`` (the default): a linear frequency-domain Kalman filter, a gentle residual-echo suppressor and a gate
  on what is only echo (``engine.audio.kalman_echo``). It subtracts its estimate of the echo and lowers only the
  frequencies that are mostly echo, so the speaker's words survive double talk; a block left far below what the
  microphone heard is silenced. Its output is 20 ms late.
- ``webrtc``: the WebRTC audio processing module's AEC3 (``pywebrtc-audio``), the echo canceller of the browsers.
  After its linear filter it suppresses whatever may still be echo; in shadowing the speaker talks through almost
  all of the voice, and that suppressor takes the speaker's words with it (``bench echo``, docs/RESULTS.md).

Noise suppression (WebRTC's, from the same module) may follow either; it is off by default. Input of any length is
framed here: what does not fill a block waits for the next call, so the output trails the input by less than one
block (20 ms) and every block the method sees is whole.
"""

from __future__ import annotations

import logging
import time
from types import ModuleType
from typing import cast

import numpy as np

from engine.audio.echo_scale import InputScale
from engine.audio.kalman_echo import BLOCK, QUIET, KalmanEchoFilter, ResidualGate, ResidualSuppressor

log = logging.getLogger(__name__)

RATE = 16000
METHODS = ("kalman", "webrtc")
WEBRTC_FRAME = RATE // 100  # AEC3 works on 10 ms frames
# what a canceller learned of a path, at the microphone's own level: the path, its doubt, and how far the microphone
# was raised when it was learned (``EchoCanceller.state``)
LearnedPath = tuple[np.ndarray, np.ndarray, int]


class EchoCancellerError(RuntimeError):
    """The canceller cannot run here (its library is missing): the message says what to do."""


def _webrtc() -> ModuleType:
    try:
        import pywebrtc_audio
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise EchoCancellerError(
            "the WebRTC canceller and noise suppression need the 'pywebrtc-audio' package "
            "(pip install pywebrtc-audio); the default canceller (kalman) without noise suppression does not"
        ) from exc
    return pywebrtc_audio


class EchoCanceller:
    """``process(near, far)`` → the near signal with the far signal's echo removed (16 kHz mono float32).

    ``compute_s`` and ``audio_s`` add up the canceller's own work and the audio it took, so its cost per second of
    audio (``aec_compute_ratio``) is known. Not thread-safe: one capture path owns it."""

    def __init__(self, method: str = "kalman", noise_suppression: bool = False, path: str = "room") -> None:
        """``path``: "room" (speakers heard by a microphone) or "digital" (the monitor of the voice's own output)."""
        if method not in METHODS:
            raise ValueError(f"the echo canceller is one of {', '.join(METHODS)}, not {method!r}")
        self.method = method
        self.noise_suppression = noise_suppression
        self.path = path
        self._filter = KalmanEchoFilter.for_path(path, RATE) if method == "kalman" else None
        self._suppressor = ResidualSuppressor() if method == "kalman" else None
        self._gate = ResidualGate() if method == "kalman" else None
        # a quiet microphone raised to the level the filter's constants expect (``echo_scale``); a digital copy of
        # the voice is at full level whatever the microphone
        self._scale = InputScale() if method == "kalman" and path == "room" else None
        # how far the session whose path this one started from had raised its microphone (None: started cold)
        self._restored_steps: int | None = None
        self._apm = None
        self._ns = None
        if method == "webrtc":
            self._apm = _webrtc().AudioProcessor(
                sample_rate=RATE, num_channels=1, echo_cancellation=True, noise_suppression=noise_suppression
            )
        elif noise_suppression:
            self._ns = _webrtc().NoiseSuppressor(sample_rate=RATE, num_channels=1)
        self.frame = BLOCK if method == "kalman" else WEBRTC_FRAME
        self.delay_samples = BLOCK if method == "kalman" else 0  # how late the output is against the input
        self._near_rest = np.zeros(0, np.float32)
        self._far_rest = np.zeros(0, np.float32)
        self.compute_s = 0.0
        self.audio_s = 0.0

    @property
    def pending(self) -> int:
        """Samples taken in but not yet given back (always fewer than one frame)."""
        return self._near_rest.size

    def process(self, near: np.ndarray, far: np.ndarray) -> np.ndarray:
        """Feed the microphone's next samples with what was played at the same moments (same length); returns the
        cleaned samples of every whole frame so far."""
        near = np.asarray(near, np.float32).reshape(-1)
        far = np.asarray(far, np.float32).reshape(-1)
        if near.size != far.size:
            raise ValueError(f"near and far must be the same length ({near.size} != {far.size})")
        near = np.concatenate([self._near_rest, near]) if self._near_rest.size else near
        far = np.concatenate([self._far_rest, far]) if self._far_rest.size else far
        whole = near.size // self.frame * self.frame
        self._near_rest, self._far_rest = near[whole:].copy(), far[whole:].copy()
        if not whole:
            return np.zeros(0, np.float32)
        t0 = time.perf_counter()
        out = self._cancel(np.ascontiguousarray(near[:whole]), np.ascontiguousarray(far[:whole]))
        self.compute_s += time.perf_counter() - t0
        self.audio_s += whole / RATE
        return out

    def carry(self, old: EchoCanceller) -> None:
        """Take over what ``old`` held back (less than a block), so that a canceller started again loses no input;
        the 20 ms ``old``'s suppressor still held are given as silence."""
        self._near_rest, self._far_rest = old._near_rest, old._far_rest
        if self._gate is not None and old._gate is not None:
            self._gate.gated_blocks += old._gate.gated_blocks

    @property
    def echo_only_s(self) -> float:
        """How much of the output was silenced as nothing but the echo's remains."""
        return self._gate.gated_blocks * BLOCK / RATE if self._gate is not None else 0.0

    @property
    def raised_db(self) -> float:
        """How much a quiet microphone is raised before the filter (``echo_scale``), now."""
        return self._scale.raised_db if self._scale is not None else 0.0

    def state(self) -> object | None:
        """What the canceller learned of the echo path at the microphone's own level (None for the WebRTC
        canceller, which keeps its own)."""
        if self._filter is None:
            return None
        w, uncertainty = self._filter.state()
        scale = self._scale
        gain = scale.gain if scale is not None else 1.0
        return w / gain, uncertainty / gain**2, scale.steps if scale is not None else 0

    def restore(self, state: object | None, lag_s: float = 0.0) -> None:
        """Start from what an earlier session learned of the same path, its echo ``lag_s`` later in this one."""
        if self._filter is not None and state is not None:
            w, uncertainty, steps = cast(LearnedPath, state)
            self._restored_steps = steps
            lag = round(lag_s * RATE)
            self._filter.restore(self._filter.shifted((w, uncertainty), lag) if lag else (w, uncertainty))

    def seed_delay(self, lag_s: float) -> None:
        """A digital path's measured delay: the linear filter starts from it (the WebRTC canceller finds its own)."""
        if self._filter is not None:
            self._filter.seed_delay(round(lag_s * RATE))

    def _cancel(self, near: np.ndarray, far: np.ndarray) -> np.ndarray:
        if self._apm is not None:
            return np.asarray(self._apm.process(near, far), np.float32)
        kalman, suppressor, gate = self._filter, self._suppressor, self._gate
        assert kalman is not None and suppressor is not None and gate is not None
        size, scale = self.frame, self._scale
        blocks = []
        for i in range(0, near.size, size):
            heard = near[i : i + size]
            gain = scale.gain if scale is not None else 1.0
            raised = heard * np.float32(gain) if gain != 1.0 else heard
            hold = scale is not None and scale.waiting
            done = gate.block(
                raised, suppressor.block(kalman.block(raised, far[i : i + size], hold), kalman.residual_power)
            )
            blocks.append(done / np.float32(gain) if gain != 1.0 else done)
            # the microphone's level is followed only while the voice plays (its reference above silence): the
            # silence before the speaker starts and their pauses while the voice is quiet do not count
            if scale is not None and float(np.mean(np.square(far[i : i + size], dtype=np.float64))) > QUIET:
                kalman = self._follow_level(scale, heard)
        out = np.concatenate(blocks)
        return np.asarray(self._ns.process(out), np.float32) if self._ns is not None else out

    def _follow_level(self, scale: InputScale, heard: np.ndarray) -> KalmanEchoFilter:
        """The microphone's block heard while the voice played: at a new level the filter and what follows it are
        rescaled (``echo_scale``); at the first level read, a path learned in a session whose microphone was at
        another level is not this one's, and is learned anew. Returns the filter to go on with."""
        kalman, suppressor, gate = self._filter, self._suppressor, self._gate
        assert kalman is not None and suppressor is not None and gate is not None
        first = not scale.decided
        factor = scale.observe(heard)
        if factor != 1.0:
            log.info("echo canceller: the microphone is raised %.0f dB before the filter", scale.raised_db)
            suppressor.rescale(factor)
            gate.rescale(factor)
        if first and scale.decided:
            restored, self._restored_steps = self._restored_steps, None
            if restored is not None and restored != scale.steps:
                log.info("echo canceller: the learned path was heard at another microphone level; learning it anew")
                kalman = self._filter = KalmanEchoFilter.for_path(self.path, RATE)
                return kalman
        if factor != 1.0:
            kalman.rescale(factor)
        return kalman

    def flush(self) -> np.ndarray:
        """The last partial frame, padded with silence for AEC3 and cut back to its length."""
        rest = self._near_rest.size
        if not rest:
            return np.zeros(0, np.float32)
        pad = self.frame - rest
        out = self.process(np.zeros(pad, np.float32), np.zeros(pad, np.float32))
        return out[:rest]

    @property
    def compute_ratio(self) -> float | None:
        """Compute per second of audio (``aec_compute_ratio``); None before any audio."""
        return self.compute_s / self.audio_s if self.audio_s else None


def erle_db(near: np.ndarray, cleaned: np.ndarray, floor: float = 1e-12) -> float | None:
    """Echo return loss enhancement: how much quieter the echo is after the canceller (energy ratio in dB), measured
    where the microphone heard only the echo. None when there is no echo to measure."""
    near_energy = float(np.mean(np.square(near, dtype=np.float64))) if near.size else 0.0
    if near_energy <= floor:
        return None
    out_energy = max(float(np.mean(np.square(cleaned, dtype=np.float64))), floor)
    return 10.0 * float(np.log10(near_energy / out_energy))
