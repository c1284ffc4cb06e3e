"""A voice whose two stages remember what they computed, and what it cost: training replays the same words many times.

Training the READ/SPEAK policy replays each episode hundreds of times into the real synthesizer. Most of the Stage I
windows and Stage II slices repeat (the same sentence cut at the same chunk boundaries with the same noise), so the
outputs are kept, keyed by exactly what the stage reads, with the compute they took the first time. The synthesizer
is given ``CachedVoice.timer``, a clock that advances by each call's cost (measured on a miss, remembered on a hit),
so pieces are charged the compute a live run would spend on them while replays cost almost nothing.

The cache is bounded (least recently used entries go first); it lives in one process and is never written out.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict

import numpy as np

from engine.tts.voice import TwoStageVoice

DEFAULT_BUDGET_BYTES = 1_500_000_000


class _Lru:
    def __init__(self, budget_bytes: int) -> None:
        self.budget = budget_bytes
        self.bytes = 0
        self.entries: OrderedDict[bytes, tuple[object, float, int]] = OrderedDict()

    def get(self, key: bytes) -> tuple[object, float] | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        self.entries.move_to_end(key)
        return entry[0], entry[1]

    def put(self, key: bytes, value: object, cost_s: float, size: int) -> None:
        self.entries[key] = (value, cost_s, size)
        self.bytes += size
        while self.bytes > self.budget and len(self.entries) > 1:
            _, (_, _, dropped) = self.entries.popitem(last=False)
            self.bytes -= dropped


class CachedVoice:
    """``TwoStageVoice``'s interface over a voice, with both stages memoized and their cost charged to ``timer``."""

    def __init__(self, voice: TwoStageVoice, budget_bytes: int = DEFAULT_BUDGET_BYTES) -> None:
        self.voice = voice
        self._stage1 = _Lru(budget_bytes // 2)
        self._stage2 = _Lru(budget_bytes // 2)
        self.charged_s = 0.0  # the compute charged so far (measured or remembered)
        self.hits = 0
        self.misses = 0

    # what the synthesizer reads of a voice
    @property
    def config(self):  # noqa: ANN201 - VoiceConfig
        return self.voice.config

    @property
    def sample_rate(self) -> int:
        return self.voice.sample_rate

    @property
    def hop(self) -> int:
        return self.voice.hop

    @property
    def rate(self) -> float:
        return self.voice.rate

    @rate.setter
    def rate(self, value: float) -> None:
        self.voice.rate = value

    def timer(self) -> float:
        """The synthesizer's clock: compute charged so far."""
        return self.charged_s

    def stage1(self, ids: np.ndarray, phoneme_offset: int = 0, frame_offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
        ids = np.asarray(ids, np.int64)
        key = hashlib.blake2b(ids.tobytes() + f"|{phoneme_offset}|{frame_offset}|{self.voice.rate}".encode(),
                              digest_size=16).digest()  # fmt: skip
        found = self._stage1.get(key)
        if found is not None:
            (latent, durations), cost = found  # type: ignore[misc]
            self.hits += 1
        else:
            t0 = time.perf_counter()
            latent, durations = self.voice.stage1(ids, phoneme_offset, frame_offset)
            cost = time.perf_counter() - t0
            latent.setflags(write=False)  # shared by every replay: nobody may change it in place
            durations.setflags(write=False)
            self._stage1.put(key, (latent, durations), cost, latent.nbytes + durations.nbytes + 200)
            self.misses += 1
        self.charged_s += cost
        return latent, durations

    def stage2(self, latent: np.ndarray) -> np.ndarray:
        latent = np.ascontiguousarray(latent, dtype=np.float32)
        key = hashlib.blake2b(latent.tobytes() + str(latent.shape).encode(), digest_size=16).digest()
        found = self._stage2.get(key)
        if found is not None:
            wave, cost = found  # type: ignore[misc]
            self.hits += 1
        else:
            t0 = time.perf_counter()
            wave = self.voice.stage2(latent)
            cost = time.perf_counter() - t0
            wave.setflags(write=False)
            self._stage2.put(key, wave, cost, wave.nbytes + 200)
            self.misses += 1
        self.charged_s += cost
        return wave  # type: ignore[return-value]

    @property
    def cached_bytes(self) -> int:
        return self._stage1.bytes + self._stage2.bytes

    @property
    def hit_rate(self) -> float:
        calls = self.hits + self.misses
        return self.hits / calls if calls else 0.0
