"""Sentence by sentence ("listen and repeat"): each sentence of the source plays, then a pause long enough for the
person to say it after it; every sentence is scored on its own.

The sentences are the source's words cut where one ends a sentence (its punctuation), and a piece still longer than
``MAX_SENTENCE_S`` at its longest pause between words (a transcript without punctuation, a long sentence). The source
is cut between two words (halfway through the pause), never inside one. The program played is the sentences with
their pauses; its words are the source's, moved onto the program's clock, so the live session plays, marks and
records it as it would the source itself.

A sentence's attempt is what the person said from its start to the next sentence's start on the program's clock. Its
figures: accuracy and missed words (``score``), and how soon the person started: the start of their first word
after the sentence's end (negative: they began while it still played).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.asr.words import Word
from engine.metrics.aggregate import aggregate
from engine.practice.score import ACCURACY, MISSED_WORDS, score

SENTENCE_ENDS = (".", "?", "!", ";", "。", "？", "！")
MAX_SENTENCE_S = 8.0  # a longer piece is cut at its longest pause between words (a learner repeats 5-8 s at most)
REPEAT_MARGIN_S = 1.5  # the pause after a sentence: its own length, and this long to react and finish
STARTED_AFTER_S = "started_after_s"
SENTENCE_MODE = "sentence by sentence"  # a report's "mode"


@dataclass(frozen=True)
class Sentence:
    words: tuple[Word, ...]
    start_s: float  # where its audio starts on the source's clock (halfway through the pause before it)
    end_s: float  # ... and ends

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def speech_end_s(self) -> float:
        return self.words[-1].end_s


@dataclass(frozen=True)
class PlayedSentence:
    """A sentence as the program plays it: its words moved onto the program's clock, and its pause."""

    words: tuple[Word, ...]
    start_s: float  # the program's time its audio starts
    speech_end_s: float  # ... its last word ends
    end_s: float  # ... its pause ends (the next sentence starts)

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


def cut_at_ends(words: Sequence[Word], ends: tuple[str, ...] = SENTENCE_ENDS) -> list[list[Word]]:
    """The words in runs, each ending with a word that ends with one of ``ends`` (the last run: where they end)."""
    pieces: list[list[Word]] = [[]]
    for word in words:
        pieces[-1].append(word)
        if word.text.rstrip().endswith(ends):
            pieces.append([])
    return [piece for piece in pieces if piece]


def split_sentences(words: Sequence[Word], duration_s: float) -> list[Sentence]:
    """The source's words in sentences whose audio spans tile ``[0, duration_s]``."""
    pieces = [p for piece in cut_at_ends(words) for p in _cut_long(piece)]
    sentences = []
    for i, piece in enumerate(pieces):
        start = 0.0 if i == 0 else (pieces[i - 1][-1].end_s + piece[0].start_s) / 2
        end = duration_s if i == len(pieces) - 1 else (piece[-1].end_s + pieces[i + 1][0].start_s) / 2
        sentences.append(Sentence(tuple(piece), start, max(end, start)))
    return sentences


def _cut_long(piece: list[Word]) -> list[list[Word]]:
    if len(piece) < 2 or piece[-1].end_s - piece[0].start_s <= MAX_SENTENCE_S:
        return [piece]
    gaps = [piece[i + 1].start_s - piece[i].end_s for i in range(len(piece) - 1)]
    cut = int(np.argmax(gaps)) + 1
    return _cut_long(piece[:cut]) + _cut_long(piece[cut:])


def pause_s(sentence: Sentence) -> float:
    """The pause after a sentence: as long as it takes to say, and a margin."""
    return sentence.end_s - sentence.start_s + REPEAT_MARGIN_S


PauseOf = Callable[[Sentence], float]


def _samples(sentence: Sentence, rate: int, pause_of: PauseOf) -> tuple[int, int, int]:
    """Where a sentence's audio starts and ends in the source, and its pause's length, in samples."""
    start, end = int(round(sentence.start_s * rate)), int(round(sentence.end_s * rate))
    return start, end, int(round(pause_of(sentence) * rate))


def played_sentences(sentences: Sequence[Sentence], rate: int, pause_of: PauseOf = pause_s) -> list[PlayedSentence]:
    """The sentences on the program's clock (each sentence's audio, then its pause)."""
    played, at = [], 0
    for sentence in sentences:
        start, end, pause = _samples(sentence, rate, pause_of)
        shift = at / rate - sentence.start_s
        words = tuple(Word(w.text, w.start_s + shift, w.end_s + shift) for w in sentence.words)
        length = end - start + pause
        played.append(PlayedSentence(words, at / rate, sentence.speech_end_s + shift, (at + length) / rate))
        at += length
    return played


def program_audio(
    audio: np.ndarray, rate: int, sentences: Sequence[Sentence], pause_of: PauseOf = pause_s
) -> np.ndarray:
    """The audio played: each sentence's, then its pause's silence."""
    parts = []
    for sentence in sentences:
        start, end, pause = _samples(sentence, rate, pause_of)
        clip = audio[start:end].astype(np.float32, copy=False)
        parts += [clip, np.zeros(pause + (end - start) - clip.size, np.float32)]  # past the audio's end: silence
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def program_words(played: Sequence[PlayedSentence]) -> list[Word]:
    return [w for sentence in played for w in sentence.words]


def score_sentences(played: Sequence[PlayedSentence], said: Sequence[Word], language: str | None = "en") -> dict:
    """Each sentence scored against what was said from its start to the next one's (the program's clock), and the
    session's figures over them: ``sentences`` (one dict each) and the medians."""
    rows = []
    for number, sentence in enumerate(played, 1):
        mine = [w for w in said if sentence.start_s <= w.start_s < sentence.end_s]
        result = score(list(sentence.words), mine, 0.0, language).report()
        started = mine[0].start_s - sentence.speech_end_s if mine else None
        rows.append(
            {
                "sentence": number,
                "text": sentence.text,
                "attempt_text": " ".join(w.text for w in mine),
                "start_s": sentence.start_s,
                "speech_end_s": sentence.speech_end_s,
                "end_s": sentence.end_s,
                ACCURACY: result[ACCURACY],
                MISSED_WORDS: result[MISSED_WORDS],
                "source_words": result["source_words"],
                "missed": [w["source"] for w in result["words"] if w["mark"] == "missed"],
                STARTED_AFTER_S: started,
            }
        )
    accuracies = [r[ACCURACY] for r in rows if r[ACCURACY] is not None]
    return {
        "sentences": rows,
        "sentence_accuracy": aggregate(accuracies),
        STARTED_AFTER_S: aggregate(r[STARTED_AFTER_S] for r in rows if r[STARTED_AFTER_S] is not None),
        "sentences_said": sum(bool(r["attempt_text"]) for r in rows),
    }
