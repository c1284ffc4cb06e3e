"""What a practice plays when it is not the source straight through: sentence by sentence (``sentences``) or an A-B
loop (``loop``). Both are pieces of the source (as played at the practice's speed), each followed by a pause; the
program's words are the source's moved onto its clock, and its figures are scored per piece."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.asr.words import Word
from engine.practice.loop import LOOP_MODE, Loop, gap_s, loop_stretch, score_passes
from engine.practice.sentences import (
    SENTENCE_MODE,
    PauseOf,
    PlayedSentence,
    Sentence,
    pause_s,
    played_sentences,
    program_audio,
    program_words,
    score_sentences,
    split_sentences,
)


@dataclass(frozen=True)
class Program:
    mode: str  # SENTENCE_MODE or LOOP_MODE (a report's "mode")
    pieces: tuple[Sentence, ...]  # on the source's clock as played
    played: tuple[PlayedSentence, ...]  # ... and on the program's
    pause_of: PauseOf
    loop: Loop | None = None  # A and B on the source's own clock (a loop)

    @property
    def words(self) -> list[Word]:
        return program_words(self.played)

    @property
    def duration_s(self) -> float:
        return self.played[-1].end_s if self.played else 0.0

    def audio(self, source: np.ndarray, rate: int) -> np.ndarray:
        """What plays, from the source as played."""
        return program_audio(source, rate, self.pieces, self.pause_of)

    def score(self, said: Sequence[Word], heard_s: float, language: str | None) -> dict:
        """The per-piece figures, for the report (``mode`` with them)."""
        if self.mode == LOOP_MODE:
            figures = score_passes(self.played, said, heard_s, language)
            assert self.loop is not None
            figures["loop"] = {"a_s": self.loop.start_s, "b_s": self.loop.end_s, "passes": self.loop.passes}
        else:
            figures = score_sentences(self.played, said, language)
        return {**figures, "mode": self.mode}


def make_program(
    words: Sequence[Word],
    duration_s: float,
    rate: int,
    speed: float = 1.0,
    sentence_by_sentence: bool = False,
    loop: Loop | None = None,
) -> Program | None:
    """The program for the source's ``words`` as played at ``speed`` (``duration_s`` long); None: straight through.
    ``loop``'s A and B are on the source's own clock (what the person chose)."""
    if sentence_by_sentence and loop is not None:
        raise ValueError("a practice is sentence by sentence or a loop, not both")
    if loop is not None:
        stretch = loop_stretch(words, duration_s, Loop(loop.start_s / speed, loop.end_s / speed, loop.passes))
        pieces: tuple[Sentence, ...] = (stretch,) * loop.passes
        return Program(LOOP_MODE, pieces, tuple(played_sentences(pieces, rate, gap_s)), gap_s, loop)
    if sentence_by_sentence:
        pieces = tuple(split_sentences(words, duration_s))
        return Program(SENTENCE_MODE, pieces, tuple(played_sentences(pieces, rate)), pause_s)
    return None
