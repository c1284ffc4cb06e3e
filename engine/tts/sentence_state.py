"""What the incremental synthesizer keeps of the sentence it is speaking: its words, the chunks already made, and
their latent frames (``synthesizer``, ``chunk_plan`` and ``speculation`` share it)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.tts.frontend import Unit
from engine.tts.pieces import PieceWord
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

    def piece_words(
        self, chunks: list[list[Unit]], hop: int, frame_start: int, frame_stop: int
    ) -> tuple[PieceWord, ...]:
        """The words whose end falls in frames ``frame_start``..``frame_stop`` (a piece), timed in its samples."""
        words = []
        for unit in (u for c in chunks for u in c):
            frames = self.unit_frames.get(unit.first_word)
            if frames is None:
                continue
            # Words merged into one unit ("in the") share its frames, split evenly; each belongs to the piece its own
            # end falls in. A speculation delivered up to the end of the first of them leaves the second's frames to
            # the next piece, which must not list the first again.
            span = (frames[1] - frames[0]) / len(unit.words)
            for j, text in enumerate(unit.words):
                start = round(frames[0] + j * span)
                stop = round(frames[0] + (j + 1) * span)
                if frame_start < stop <= frame_stop:
                    rate = self.unit_rates.get(unit.first_word, 1.0)
                    words.append(
                        PieceWord(
                            self.index,
                            unit.first_word + j,
                            text,
                            (start - frame_start) * hop,
                            (stop - frame_start) * hop,
                            rate,
                        )
                    )
        return tuple(words)
