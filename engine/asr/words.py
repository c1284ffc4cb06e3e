"""Recognized words with their times on the source clock, and the text normalization used to compare them."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_PUNCTUATION = re.compile(r"[^\w'\s]|_")
_BRACKETED = re.compile(r"\[[^\]]*\]|\([^)]*\)|<[^>]*>")
FILLERS = frozenset({"uh", "um", "uhm", "er", "erm", "ah", "eh", "hmm", "mm", "mhm"})


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


def normalize_text(text: str, drop_fillers: bool = True) -> str:
    """Lower-cased words without punctuation, bracketed tags or fillers: the form WER is computed on."""
    text = _BRACKETED.sub(" ", text)
    words = (normalize_token(t) for t in text.split())
    return " ".join(w for w in words if w and not (drop_fillers and w in FILLERS))
