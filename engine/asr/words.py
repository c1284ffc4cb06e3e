"""Recognized words with their times on the source clock, and the token form two hypotheses are compared in.

(WER has its own normalizer: ``engine.metrics.wer``.)
"""

from __future__ import annotations

import re
import unicodedata
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
