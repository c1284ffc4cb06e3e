"""Recognized words with their times on the source clock, and the token form two hypotheses are compared in.

(WER has its own normalizer: ``engine.metrics.wer``.)
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

_PUNCTUATION = re.compile(r"[^\w'\s]|_")


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    start_s: float
    end_s: float

    @property
    def key(self) -> str:
        """The form two hypotheses are compared in (case and punctuation ignored)."""
        return normalize_token(self.text)


def normalize_token(token: str) -> str:
    text = unicodedata.normalize("NFKC", token).lower().replace("’", "'")
    return _PUNCTUATION.sub("", text).strip("'")


def match_times(tokens: Sequence[str], timed: Sequence[Word]) -> list[Word | None]:
    """The timed word matched to each token of a text (an equal word, or one of a substitution of as many words),
    None where none was: a reference transcript's words timed by a recognizer's."""
    ref = [normalize_token(t) for t in tokens]
    hyp = [w.key for w in timed]
    out: list[Word | None] = [None] * len(tokens)
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ref, hyp, autojunk=False).get_opcodes():
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            for k in range(i2 - i1):
                out[i1 + k] = timed[j1 + k]
    return out
