"""A voice whose two stages remember what they computed, and what it cost: training replays the same words many times.

Training the learned policy replays each episode hundreds of times into the real synthesizer. Most of the Stage I
windows and Stage II slices repeat (the same sentence cut at the same chunk boundaries with the same noise), so the
outputs are kept, keyed by exactly what the stage reads, with the compute they took the first time. The synthesizer
is given ``CachedVoice.timer``, a clock that advances by each call's cost (measured on a miss, or modelled with
``modelled``; remembered on a hit), so pieces are charged the compute a live run would spend on them while replays
cost almost nothing.

The cache is bounded (least recently used entries go first); it lives in one process and is never written out.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from engine.tts import voice_cost
from engine.tts.voice import TwoStageVoice
from engine.tts.voice_split import flow_window

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


class VoiceWrapper:
    """What a wrapper of a voice passes through unchanged (its config, sample rate, hop and speaking rate), and
    Stage I whole as the wrapper's own ``stage1_prior`` and ``latent_frames``, so their accounting covers it."""

    def __init__(self, voice: TwoStageVoice | VoiceWrapper) -> None:
        self.voice = voice

    @property
    def config(self):
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

    stage1 = TwoStageVoice.stage1  # the voice's own: the prior, then the flow on its frames, each the wrapper's

    def stage1_prior(
        self, ids: np.ndarray, phoneme_offset: int = 0, frame_offset: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def latent_frames(self, prior: np.ndarray, start: int, stop: int) -> np.ndarray:
        raise NotImplementedError


class CachedVoice(VoiceWrapper):
    """``TwoStageVoice``'s interface over a voice, with both stages memoized and their cost charged to ``timer``."""

    def __init__(self, voice: TwoStageVoice, budget_bytes: int = DEFAULT_BUDGET_BYTES, modelled: bool = False) -> None:
        """``modelled``: charge each call its modelled compute (``engine.tts.voice_cost``) instead of the time it took,
        so a replay does not depend on how busy the machine is (training compares policies on exact returns)."""
        super().__init__(voice)
        self.modelled = modelled
        self.voice: TwoStageVoice = voice
        self._stage1 = _Lru(budget_bytes // 2)
        self._stage2 = _Lru(budget_bytes // 2)
        self.charged_s = 0.0  # the compute charged so far (measured or remembered)
        self.hits = 0
        self.misses = 0

    # what the synthesizer reads of a voice
    def timer(self) -> float:
        """The synthesizer's clock: compute charged so far."""
        return self.charged_s

    def stage1_prior(
        self, ids: np.ndarray, phoneme_offset: int = 0, frame_offset: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        ids = np.asarray(ids, np.int64)
        read = f"|{phoneme_offset}|{frame_offset}|{self.voice.rate}".encode()
        key = hashlib.blake2b(ids.tobytes() + read, digest_size=16).digest()
        return self._cached(  # type: ignore[return-value]
            self._stage1,
            key,
            lambda: self.voice.stage1_prior(ids, phoneme_offset, frame_offset),
            voice_cost.stage1_s(len(ids)),
        )

    def latent_frames(self, prior: np.ndarray, start: int, stop: int) -> np.ndarray:
        total = prior.shape[-1]
        first, last = flow_window(total, start, stop)  # what the flow reads
        region = np.ascontiguousarray(prior[:, first:last], dtype=np.float32)
        read = f"|{start - first}|{min(stop, total) - first}".encode()
        key = hashlib.blake2b(region.tobytes() + read, digest_size=16).digest()
        compute = lambda: self.voice.latent_frames(prior, start, stop)  # noqa: E731
        return self._cached(self._stage1, key, compute, voice_cost.flow_s(total, start, stop))  # type: ignore[return-value]

    def stage2(self, latent: np.ndarray) -> np.ndarray:
        latent = np.ascontiguousarray(latent, dtype=np.float32)
        key = hashlib.blake2b(latent.tobytes() + str(latent.shape).encode(), digest_size=16).digest()
        cost = voice_cost.stage2_s(latent.shape[-1])
        return self._cached(self._stage2, key, lambda: self.voice.stage2(latent), cost)  # type: ignore[return-value]

    def _cached(self, lru: _Lru, key: bytes, compute: Callable[[], object], modelled_s: float) -> object:
        """The value kept under ``key``, else computed now (read-only: every replay shares it); its cost charged."""
        found = lru.get(key)
        if found is not None:
            value, cost = found
            self.hits += 1
        else:
            t0 = time.perf_counter()
            value = compute()
            cost = modelled_s if self.modelled else time.perf_counter() - t0
            arrays = value if isinstance(value, tuple) else (value,)
            for array in arrays:
                array.setflags(write=False)
            lru.put(key, value, cost, sum(a.nbytes for a in arrays) + 200)
            self.misses += 1
        self.charged_s += cost
        return value

    @property
    def cached_bytes(self) -> int:
        return self._stage1.bytes + self._stage2.bytes

    @property
    def hit_rate(self) -> float:
        calls = self.hits + self.misses
        return self.hits / calls if calls else 0.0
