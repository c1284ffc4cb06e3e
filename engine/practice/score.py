"""A shadowing attempt scored against its source: the ear-voice span (EVS) of every word said, and what was lost.

EVS of a source word said = the end of the person's word − the end of the source word (on the source's clock), the
same measure as the machine's ``ear_voice_lag_s`` (METRICS.md), so the two can stand side by side. Accuracy is
1 − WER of the person's words against the source's, counted on the same alignment (``align``), floored at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.asr.words import Word
from engine.metrics.aggregate import aggregate
from engine.practice.align import Mark, Pair, Unit, align, units

# report keys (issue 57; METRICS.md names where one exists)
EVS_S = "evs_s"
ACCURACY = "accuracy"
MISSED_WORDS = "missed_words"
ADDED_WORDS = "added_words"
SUBSTITUTED_WORDS = "substituted_words"
RATE_RATIO = "rate_ratio"
LONGEST_LOST_S = "longest_lost_s"


@dataclass(frozen=True)
class PracticeScore:
    source: list[Unit]  # the aligned units, on the source's clock
    attempt: list[Unit]  # ... the person's, moved onto the source's clock
    pairs: list[Pair]

    def count(self, mark: Mark) -> int:
        return sum(p.mark is mark for p in self.pairs)

    def evs(self) -> list[tuple[int, float]]:
        """(source index, EVS) for every source word the person said a word for, right or misheard: a substituted
        word was still said in its place, and when."""
        return [
            (p.source, self.attempt[p.attempt].end_s - self.source[p.source].end_s)
            for p in self.pairs
            if p.source is not None and p.attempt is not None
        ]

    def accuracy(self) -> float | None:
        if not self.source:
            return None
        errors = self.count(Mark.MISSED) + self.count(Mark.ADDED) + self.count(Mark.SUBSTITUTED)
        return max(1.0 - errors / len(self.source), 0.0)

    def rate_ratio(self) -> float | None:
        """The person's words per second of their speech over the source's."""
        source, attempt = _rate(self.source), _rate(self.attempt)
        return attempt / source if source and attempt else None

    def longest_lost_s(self) -> float:
        """The longest run of source words in a row none of which was said (missed or substituted), from the first
        one's start to the last one's end."""
        longest, first = 0.0, None
        for p in self.pairs:
            if p.source is None:
                continue
            if p.mark is Mark.SAID:
                first = None
                continue
            first = p.source if first is None else first
            longest = max(longest, self.source[p.source].end_s - self.source[first].start_s)
        return longest

    def report(self) -> dict:
        said = self.evs()
        evs = [e for _, e in said]
        words = []
        for p in self.pairs:
            s = self.source[p.source] if p.source is not None else None
            a = self.attempt[p.attempt] if p.attempt is not None else None
            words.append(
                {
                    "mark": p.mark.value,
                    "source": s.text if s else None,
                    "attempt": a.text if a else None,
                    "source_start_s": s.start_s if s else None,
                    "source_end_s": s.end_s if s else None,
                    "attempt_start_s": a.start_s if a else None,
                    "attempt_end_s": a.end_s if a else None,
                    "evs_s": a.end_s - s.end_s if s and a else None,
                }
            )
        return {
            EVS_S: {
                **aggregate(evs),
                "per_word": [
                    {"word": self.source[i].text, "source_end_s": self.source[i].end_s, "evs_s": e} for i, e in said
                ],
            },
            ACCURACY: self.accuracy(),
            MISSED_WORDS: self.count(Mark.MISSED),
            ADDED_WORDS: self.count(Mark.ADDED),
            SUBSTITUTED_WORDS: self.count(Mark.SUBSTITUTED),
            RATE_RATIO: self.rate_ratio(),
            LONGEST_LOST_S: self.longest_lost_s(),
            "source_words": len(self.source),
            "attempt_words": len(self.attempt),
            "words": words,
        }


def score(
    source: Sequence[Word], attempt: Sequence[Word], offset_s: float = 0.0, language: str | None = "en"
) -> PracticeScore:
    """Score ``attempt`` (times from the start of the person's recording, which began ``offset_s`` after the source
    began) against ``source``."""
    moved = [Word(w.text, w.start_s + offset_s, w.end_s + offset_s) for w in attempt]
    s, a = units(source, language), units(moved, language)
    return PracticeScore(s, a, align(s, a))


def _rate(words: Sequence[Unit]) -> float | None:
    if len(words) < 2:
        return None
    span = words[-1].end_s - words[0].start_s
    return len(words) / span if span > 0 else None
