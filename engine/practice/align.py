"""A person's words against the source's, in order and in time: which source word each attempt word says.

A shadower says a source word after hearing it, never long before and rarely more than a few seconds after, so a
source word and an attempt word may be paired only when the attempt's end falls between ``EARLIEST_S`` before and
``LATEST_S`` after the source word's end. Within that window the pairing is an edit-distance alignment (as a WER's)
on the words' keys: a pair with equal keys is said, a pair with different keys substituted, a source word paired
with nothing missed, an attempt word paired with nothing added. The time window keeps a common word ("the") from
being paired with its namesake a sentence away.

Words are compared normalized (``units``). Languages written without spaces (Chinese, Japanese) are compared
character by character: the recognizer's word pieces for the same speech differ from one decode to the next, its
characters much less.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from engine.asr.words import Word, normalize_token
from engine.metrics.wer import normalize_for_wer

EARLIEST_S = 0.5  # an attempt word may end this much before its source word (a shadower anticipating)
LATEST_S = 10.0  # ... and this much after (interpreting-school EVS is 2-5 s; a lost shadower may lag more)
UNSPACED = ("zh", "ja", "th", "lo", "km", "my", "yue")
_APOSTROPHES = re.compile("['’ʼ]")


class Mark(StrEnum):
    SAID = "said"
    SUBSTITUTED = "substituted"
    MISSED = "missed"
    ADDED = "added"


@dataclass(frozen=True, slots=True)
class Pair:
    """One step of the alignment: a source word, an attempt word, or both (indices into the aligned lists)."""

    mark: Mark
    source: int | None
    attempt: int | None


@dataclass(frozen=True, slots=True)
class Unit:
    """What is aligned: a word as written (``text``), the form it is compared in (``key``), and its time."""

    text: str
    key: str
    start_s: float
    end_s: float


@cache
def _basic_normalizer() -> Callable[[str], str]:
    from whisper_normalizer.basic import BasicTextNormalizer

    return BasicTextNormalizer()


def _basic(text: str) -> str:
    """Whisper's basic normalizer, apostrophes dropped first: "j'ai" and a transcript's "jai" compare equal (the
    normalizer would split the one into "j ai")."""
    return _basic_normalizer()(_APOSTROPHES.sub("", text))


def units(words: Sequence[Word], language: str | None) -> list[Unit]:
    """The units two transcripts are aligned in. English words go through the WER's normalizer ("forty" and "40",
    "Mr." and "mister", "cold-hearted" and "cold hearted" compare equal), other languages through Whisper's basic
    one (case, punctuation, hyphens, apostrophes); an unspaced language's words are split into characters. A word
    that gives several units shares its time among them evenly."""
    normalize = normalize_for_wer if language in (None, "en") else _basic
    out: list[Unit] = []
    for word in words:
        keys = [normalize_token(t) for t in normalize(word.text).split()]
        if language in UNSPACED:
            keys = [c for k in keys for c in k]
        keys = [k for k in keys if k]
        if not keys:
            continue
        step = (word.end_s - word.start_s) / len(keys)
        text = word.text if len(keys) == 1 else None
        out.extend(
            Unit(text or k, k, word.start_s + i * step, word.start_s + (i + 1) * step) for i, k in enumerate(keys)
        )
    return out


def align(source: Sequence[Unit], attempt: Sequence[Unit]) -> list[Pair]:
    """The least-cost alignment of ``attempt`` to ``source`` (both on one clock, in order), in order.

    Cost: 1 for each missed, added or substituted word, 0 for a word said; a pair is allowed only within the time
    window. Ties prefer a said pair, then a substitution, so a misheard word counts once, not as missed and added.
    """
    n, m = len(source), len(attempt)
    inf = n + m + 1
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    step = [[0] * (m + 1) for _ in range(n + 1)]  # 1 pair, 2 missed (source only), 3 added (attempt only)
    cost[0][0] = 0
    for i in range(n + 1):
        row, prev = cost[i], cost[i - 1] if i else None
        for j in range(m + 1):
            best, move = row[j], step[i][j]
            if i and j and _pairable(source[i - 1], attempt[j - 1]):
                c = prev[j - 1] + (source[i - 1].key != attempt[j - 1].key)  # type: ignore[index]
                if c < best:
                    best, move = c, 1
            if i and prev[j] + 1 < best:  # type: ignore[index]
                best, move = prev[j] + 1, 2  # type: ignore[index]
            if j and row[j - 1] + 1 < best:
                best, move = row[j - 1] + 1, 3
            row[j], step[i][j] = best, move
    pairs: list[Pair] = []
    i, j = n, m
    while i or j:
        move = step[i][j]
        if move == 1:
            mark = Mark.SAID if source[i - 1].key == attempt[j - 1].key else Mark.SUBSTITUTED
            pairs.append(Pair(mark, i - 1, j - 1))
            i, j = i - 1, j - 1
        elif move == 2:
            pairs.append(Pair(Mark.MISSED, i - 1, None))
            i -= 1
        else:
            pairs.append(Pair(Mark.ADDED, None, j - 1))
            j -= 1
    pairs.reverse()
    return pairs


def _pairable(source: Unit, attempt: Unit) -> bool:
    lag = attempt.end_s - source.end_s
    return -EARLIEST_S <= lag <= LATEST_S
