"""What the synthesizer yields: typed audio pieces with the words they cover and their timing."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class PieceWord:
    """A word whose audio ends in this piece; sample offsets are relative to the piece's first sample
    (``start_sample`` is negative when the word began in an earlier piece)."""

    sentence: int
    index: int  # word index within its sentence
    text: str
    start_sample: int
    end_sample: int
    rate: float = 1.0  # the voice's speaking rate when Stage I made it: it lasts 1/rate of its own time


@dataclass(frozen=True, slots=True)
class AudioPiece:
    samples: np.ndarray  # float32 mono
    sample_rate: int
    sentence: int
    chunk: int  # index of the chunk whose synthesis produced this piece
    words: tuple[PieceWord, ...]
    stage1_s: float  # compute spent in Stage I for this piece
    stage2_s: float  # compute spent in Stage II for this piece
    sentence_end: bool  # the last piece of its sentence
    frame_start: int = 0  # first latent frame of the piece within its sentence
    needs_word: int = 0  # the last word (sentence index) Stage I read for this piece
    needs_sentence_end: bool = False  # the piece could only be made once the sentence was complete
    hurried: bool = False  # made before its lookahead was there, because the voice was about to run out
    speculated: bool = False  # made from the recognizer's tentative words before they were committed
    phrase_start: bool = False  # the first chunk after a phrase's end inside its sentence ("brow, | and dig")

    @property
    def gen_s(self) -> float:
        return self.stage1_s + self.stage2_s

    @property
    def audio_s(self) -> float:
        return self.samples.size / self.sample_rate
