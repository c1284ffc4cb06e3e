"""What the incremental synthesizer keeps of the sentence it is speaking: its words, the chunks already made, and
their latent frames (``synthesizer``, ``chunk_plan`` and ``speculation`` share it)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.tts.frontend import Unit
from engine.tts.voice import LATENT_CHANNELS


@dataclass
class SentenceState:
    index: int
    words: list[str] = field(default_factory=list)
    complete: bool = False
    next_chunk: int = 0
    unit_frames: dict[int, tuple[int, int]] = field(default_factory=dict)  # first word → absolute frames
    unit_rates: dict[int, float] = field(default_factory=dict)  # first word → the speaking rate it was made at
    latent: list[np.ndarray] = field(default_factory=list)
    frames_total: int = 0
    emitted_frames: int = 0
    hint: list[str] = field(default_factory=list)  # words likely to come next (e.g. ASR tentative words)
    units: list[Unit] = field(default_factory=list)
    units_for: tuple = ()  # (words, hint) the units were computed for
    done: list[list[Unit]] = field(default_factory=list)  # the chunks already synthesized, as they were

    @property
    def frozen(self) -> list[Unit]:
        """Units of the chunks already synthesized."""
        return [u for chunk in self.done for u in chunk]

    @property
    def spoken_words(self) -> int:
        """How many of the sentence's words the chunks already synthesized hold."""
        return sum(len(u.words) for chunk in self.done for u in chunk)

    def latent_slice(self, start: int, stop: int) -> np.ndarray:
        return np.concatenate(self.latent, axis=1)[:, start:stop] if self.latent else np.zeros((LATENT_CHANNELS, 0))
