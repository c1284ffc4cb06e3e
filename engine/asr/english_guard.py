"""Keep words that are not English out of the English voice while interpreting.

Whisper asked to translate sometimes writes the source language instead: it copies the speaker's words, or
"translates" into their language. Two checks on each batch of committed words:

- a word written in a script English does not use (Chinese, Japanese, Cyrillic, Arabic, ...) is not English;
- a batch of ``MIN_WORDS`` or more that a language identifier (py3langid, restricted to English and the spoken
  language) gives to the spoken language with probability ``MIN_PROBABILITY`` or more is not English.

Shorter batches pass the second check: a word or two is too little to tell Spanish "con" from English "con" and a
name from either, and dropping good English costs as much as speaking a foreign word.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any

log = logging.getLogger(__name__)

MIN_WORDS = 3
MIN_PROBABILITY = 0.9


def foreign_script(word: str) -> bool:
    """The word has a letter outside the Latin script (accents on Latin letters are fine: "café")."""
    for ch in word:
        if ch.isalpha() and not unicodedata.name(ch, "").startswith("LATIN"):
            return True
    return False


class EnglishGuard:
    """``check(words, spoken_language)`` → which words may be spoken in English (True) and which not."""

    def __init__(self) -> None:
        self._identifier: Any = None  # py3langid's LanguageIdentifier, loaded on first use
        self._languages: tuple[str, ...] = ()
        self._lock = threading.Lock()

    def _identify(self, text: str, spoken_language: str) -> tuple[str, float]:
        with self._lock:
            if self._identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                self._identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            wanted = ("en", spoken_language)
            if wanted != self._languages:
                try:
                    self._identifier.set_languages(list(wanted))
                except ValueError:  # a language the identifier does not know: only the script check applies
                    return "en", 1.0
                self._languages = wanted
            language, probability = self._identifier.classify(text)
            return str(language), float(probability)

    def check(self, words: Sequence[str], spoken_language: str | None) -> list[bool]:
        keep = [not foreign_script(w) for w in words]
        latin = [w for w, k in zip(words, keep, strict=True) if k]
        if spoken_language in (None, "en") or len(latin) < MIN_WORDS:
            return keep
        language, probability = self._identify(" ".join(latin), spoken_language)
        if language != "en" and probability >= MIN_PROBABILITY:
            log.info("not English (%s, %.2f), not spoken: %s", language, probability, " ".join(latin))
            return [False] * len(words)
        return keep
