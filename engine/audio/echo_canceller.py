"""Acoustic echo cancellation: the voice's own played samples removed from what the microphone hears.

The WebRTC audio processing module's AEC3 (``pywebrtc-audio``) does the work on 10 ms frames of 16 kHz mono. The far
end (the reference) is the voice exactly as it was played, on the same clock as the microphone: AEC3 then has to
find only the acoustic path and what is left of the device delays, and it converges within a second when that
delay is small (a reference 60 ms early took two seconds). ``hint_s`` takes a known delay out of the reference
before AEC3 sees it.

Input of any length is framed here: what does not fill a frame waits for the next call, so the output trails the
input by less than one frame (10 ms) and every frame AEC3 sees is whole.
"""

from __future__ import annotations

import logging
import time
from types import ModuleType

import numpy as np

log = logging.getLogger(__name__)

RATE = 16000
FRAME = RATE // 100  # AEC3 works on 10 ms frames


class EchoCancellerError(RuntimeError):
    """The canceller cannot run here (its library is missing): the message says what to do."""


def _webrtc() -> ModuleType:
    try:
        import pywebrtc_audio
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise EchoCancellerError(
            "echo cancellation needs the 'pywebrtc-audio' package (pip install pywebrtc-audio); "
            "use the echo guard 'gate' or headphones meanwhile"
        ) from exc
    return pywebrtc_audio


class EchoCanceller:
    """``process(near, far)`` → the near signal with the far signal's echo removed (16 kHz mono float32).

    ``compute_s`` and ``audio_s`` add up the canceller's own work and the audio it took, so its cost per second of
    audio (``aec_compute_ratio``) is known. Not thread-safe: one capture path owns it."""

    def __init__(self, noise_suppression: bool = False, hint_s: float = 0.0) -> None:
        webrtc = _webrtc()
        self._apm = webrtc.AudioProcessor(
            sample_rate=RATE, num_channels=1, echo_cancellation=True, noise_suppression=noise_suppression
        )
        self.noise_suppression = noise_suppression
        self.hint_s = hint_s
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
        whole = near.size // FRAME * FRAME
        self._near_rest, self._far_rest = near[whole:].copy(), far[whole:].copy()
        if not whole:
            return np.zeros(0, np.float32)
        t0 = time.perf_counter()
        out = np.asarray(self._apm.process(np.ascontiguousarray(near[:whole]), np.ascontiguousarray(far[:whole])),
                         np.float32)  # fmt: skip
        self.compute_s += time.perf_counter() - t0
        self.audio_s += whole / RATE
        return out

    def flush(self) -> np.ndarray:
        """The last partial frame, padded with silence for AEC3 and cut back to its length."""
        rest = self._near_rest.size
        if not rest:
            return np.zeros(0, np.float32)
        pad = FRAME - rest
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
