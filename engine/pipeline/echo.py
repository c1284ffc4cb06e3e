"""A simple echo guard for speakers: while the voice plays, the microphone is not listened to.

With speakers the voice reaches the microphone and would be recognized and spoken again. The gate replaces the
captured audio with silence while the voice is playing and for a short tail after it (the room's echo and the
device's latency). The cost: what the speaker says while the voice plays is not heard. Headphones need no guard.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.audio.block import AudioBlock

DEFAULT_TAIL_S = 0.4


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
