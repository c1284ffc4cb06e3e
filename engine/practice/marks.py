"""The marks a live practice session shows on the source's words: said (with its EVS), missed, or still ahead.

The person's words come in as the streaming recognizer commits them, a second or two after they were said, so a
source word not yet paired is not missed until the person has gone past it (a later source word was said) or it lies
further back than any pairing reaches (``align.LATEST_S``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from engine.asr.words import Word
from engine.practice.align import LATEST_S, Mark, Unit, align, units


class WordState(StrEnum):
    SAID = "said"
    SUBSTITUTED = "substituted"  # said in its place, but another word
    MISSED = "missed"
    AHEAD = "ahead"  # not said yet: still to come, or just heard and not yet repeated


@dataclass(frozen=True, slots=True)
class MarkedWord:
    text: str
    start_s: float  # on the source's clock
    end_s: float
    state: WordState
    evs_s: float | None = None  # said or substituted: the person's word end − this word's end
    heard_as: str | None = None  # substituted: what the person said


def mark_words(source: Sequence[Unit], attempt: Sequence[Unit], position_s: float) -> list[MarkedWord]:
    """``source`` and ``attempt`` on the source's clock; ``position_s``: how much of the source has played."""
    return _mark(source, attempt, position_s)[0]


def _mark(source: Sequence[Unit], attempt: Sequence[Unit], position_s: float) -> tuple[list[MarkedWord], list[int]]:
    """The marks, and for each source unit the index of the attempt unit paired with it (-1: none)."""
    paired: dict[int, tuple[Mark, int]] = {}
    for pair in align(source, attempt):
        if pair.source is not None and pair.attempt is not None:
            paired[pair.source] = (pair.mark, pair.attempt)
    last_said = max(paired, default=-1)
    marked, partners = [], []
    for i, unit in enumerate(source):
        if i in paired:
            mark, j = paired[i]
            said = attempt[j]
            state = WordState.SAID if mark is Mark.SAID else WordState.SUBSTITUTED
            heard = said.text if state is WordState.SUBSTITUTED else None
            marked.append(MarkedWord(unit.text, unit.start_s, unit.end_s, state, said.end_s - unit.end_s, heard))
            partners.append(j)
            continue
        gone = i < last_said or position_s - unit.end_s > LATEST_S
        marked.append(MarkedWord(unit.text, unit.start_s, unit.end_s, WordState.MISSED if gone else WordState.AHEAD))
        partners.append(-1)
    return marked, partners


class GrowingUnits:
    """``align.units`` of a word list that only grows at its end (committed words), each word's units made once: a
    live session asks ten times a second, and the normalizer costs about 0.05 ms a word."""

    def __init__(self, language: str | None) -> None:
        self.language = language
        self._units: list[Unit] = []
        self._words = 0

    def of(self, words: Sequence[Word]) -> list[Unit]:
        if len(words) > self._words:
            self._units.extend(units(words[self._words :], self.language))
            self._words = len(words)
        return self._units


class LiveMarker:
    """``mark_words`` ten times a second over a session that grows (an open-ended one lasts up to half an hour), in
    bounded time: the alignment costs source words × attempt words, so the source words that ended ``FREEZE_S``
    before the position keep the marks they had, the attempt words paired with them are set aside, and only the
    rest is aligned again. Both lists must grow only at their ends (committed words do)."""

    FREEZE_S = 3 * LATEST_S  # three times as far back as a word may still be paired: its mark no longer moves

    def __init__(self) -> None:
        self._frozen: list[MarkedWord] = []
        self._source_from = 0
        self._attempt_from = 0

    def mark(self, source: Sequence[Unit], attempt: Sequence[Unit], position_s: float) -> list[MarkedWord]:
        marked, partners = _mark(source[self._source_from :], attempt[self._attempt_from :], position_s)
        settled = 0
        while settled < len(marked) and marked[settled].end_s < position_s - self.FREEZE_S:
            settled += 1
        if settled:
            paired = [j for j in partners[:settled] if j >= 0]
            self._frozen.extend(marked[:settled])
            self._source_from += settled
            self._attempt_from += max(paired) + 1 if paired else 0
        return self._frozen + marked[settled:]


def evs_points(marked: Sequence[MarkedWord]) -> list[tuple[float, float]]:
    """(source word end, EVS) of every word said, in source order: the EVS-over-time plot."""
    return [(w.end_s, w.evs_s) for w in marked if w.evs_s is not None]


def running_median(points: Sequence[tuple[float, float]]) -> float | None:
    return float(np.median([e for _, e in points])) if points else None
