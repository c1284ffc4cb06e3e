"""Echo guards for speakers: what the recognizer hears of the microphone while the voice plays on speakers.

With speakers the voice reaches the microphone and would be recognized and spoken again. Two guards:

- **gate**: the captured audio is replaced with silence while the voice plays and for a short tail after it (the
  room's echo and the device's latency). The cost: what the speaker says while the voice plays is not heard.
- **cancel**: the voice's own played samples (``PlayedTrack``, on the session clock) are the reference of an
  acoustic echo canceller (``engine.audio.echo_canceller``), which removes their echo and keeps the speaker.

Headphones need no guard.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.audio.block import AudioBlock
from engine.audio.echo_canceller import EchoCanceller
from engine.audio.played_track import PlayedTrack

DEFAULT_TAIL_S = 0.4
GATE_BLOCK_S = 0.1  # a recording's intake is gated in blocks of this length, as a microphone delivers them


class EchoGate:
    def __init__(self, voice_active: Callable[[float], bool], tail_s: float = DEFAULT_TAIL_S) -> None:
        self._voice_active = voice_active
        self.tail_s = tail_s
        self._last_active: float | None = None
        self.gated_s = 0.0  # microphone time replaced by silence

    def apply(self, block: AudioBlock, now_s: float) -> AudioBlock:
        if self._voice_active(now_s):
            self._last_active = now_s
        if self._last_active is None or now_s - self._last_active > self.tail_s:
            return block
        self.gated_s += block.duration_s
        return AudioBlock(np.zeros_like(block.samples), block.sample_rate, block.start_s)


class EchoPath:
    """The chosen guard between the microphone and the recognizer.

    ``process(samples, start_s)`` takes the microphone's next samples (16 kHz) with the session time of the first,
    and returns what the recognizer hears. The gate's output is as long as its input; the canceller's trails it by
    less than 10 ms (``EchoCanceller``). ``voice_active`` (live: voice still queued on the device) replaces the
    track for the gate, whose question is only whether the voice is playing now."""

    def __init__(
        self,
        guard: str,
        track: PlayedTrack,
        hint_s: float = 0.0,
        noise_suppression: bool = False,
        voice_active: Callable[[float], bool] | None = None,
    ) -> None:
        if guard not in ("gate", "cancel"):
            raise ValueError(f"an echo path guards with 'gate' or 'cancel', not {guard!r}")
        self.guard = guard
        self.track = track
        self.hint_s = hint_s
        self.gate = EchoGate(voice_active or self._track_active) if guard == "gate" else None
        self.canceller = EchoCanceller(noise_suppression, hint_s) if guard == "cancel" else None
        self.cleaned: list[np.ndarray] | None = None  # a list here keeps what the recognizer heard (the benchmark)

    def _track_active(self, now_s: float) -> bool:
        return self.track.active(now_s - GATE_BLOCK_S, now_s)

    @property
    def gated_s(self) -> float:
        return self.gate.gated_s if self.gate is not None else 0.0

    def process(self, samples: np.ndarray, start_s: float, rate: int = 16000) -> np.ndarray:
        if self.canceller is not None:
            far = self.track.read(start_s - self.hint_s, samples.size)
            out = self.canceller.process(samples, far)
        else:
            assert self.gate is not None
            step = max(int(GATE_BLOCK_S * rate), 1)
            parts = []
            for first in range(0, samples.size, step):
                block = AudioBlock(samples[first : first + step], rate, start_s + first / rate)
                parts.append(self.gate.apply(block, block.end_s).samples)
            out = np.concatenate(parts) if parts else samples[:0]
        if self.cleaned is not None:
            self.cleaned.append(out)
        return out

    def report(self) -> dict:
        """The guard's figures for the session's report."""
        figures: dict = {"guard": self.guard, "gated_s": self.gated_s}
        if self.canceller is not None:
            figures.update(aec_compute_ratio=self.canceller.compute_ratio, aec_audio_s=self.canceller.audio_s,
                           hint_ms=self.hint_s * 1000, noise_suppression=self.canceller.noise_suppression)  # fmt: skip
        return figures
