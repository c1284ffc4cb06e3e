"""Text → words → phoneme units, with an exact map from words to phonemes and phoneme ids.

espeak-ng phonemizes in context: it merges words ("out of" → one group), expands tokens ("10:30" → several
groups) and lets later words change earlier stress. Splitting the sentence's phonemes on spaces therefore does
not say which phonemes belong to which word. Instead, each word prefix is phonemized and its space-separated
groups counted: the count after word i is where word i ends. A word that adds no group is merged with the one
before into a single unit (a unit is the smallest piece whose phonemes are exactly known).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from engine.tts import espeak
from engine.tts.voice import VoiceConfig

log = logging.getLogger(__name__)

BOS, EOS, PAD = "^", "$", "_"
SPACE = " "
MAX_TOKEN_CHARS = 48  # longer tokens are cut: espeak would spell them out letter by letter for a minute


@dataclass(frozen=True, slots=True)
class Unit:
    """One or more words and the phonemes (and ids) that are exactly theirs."""

    words: tuple[str, ...]
    first_word: int  # index of words[0] in the sentence's word list
    phonemes: tuple[str, ...]  # symbols, including the trailing space and punctuation
    ids: tuple[int, ...]  # each phoneme's id followed by the pad id, as the voice was trained

    @property
    def n_phonemes(self) -> int:
        """Phoneme symbols that are not spaces (what chunk sizes count)."""
        return sum(1 for p in self.phonemes if p != SPACE)

    @property
    def word_indices(self) -> range:
        return range(self.first_word, self.first_word + len(self.words))


def _keep(ch: str) -> bool:
    """Control characters and pictographic symbols (emoji, ™) are not speech: espeak would read their names."""
    category = unicodedata.category(ch)
    return not (category.startswith("C") or category in ("So", "Sk"))


def split_words(text: str) -> list[str]:
    """Whitespace-separated tokens without control characters and emoji; over-long tokens are cut."""
    cleaned = "".join(ch if _keep(ch) else " " for ch in text)
    words = []
    for token in cleaned.split():
        if len(token) > MAX_TOKEN_CHARS:
            log.warning("cutting a %d-character token to %d characters", len(token), MAX_TOKEN_CHARS)
            token = token[:MAX_TOKEN_CHARS]
        words.append(token)
    return words


PHONEMIZE_CACHE = 512


class FrontEnd:
    """Phonemizes word lists into units for one voice (espeak-ng as bundled with piper-tts)."""

    def __init__(self, config: VoiceConfig) -> None:
        self.config = config
        self._id_map = config.phoneme_id_map
        for symbol in (BOS, EOS, PAD, SPACE):
            if symbol not in self._id_map:
                raise ValueError(f"the voice's phoneme map has no {symbol!r}")
        # a sentence's prefixes are phonemized again as its words arrive; older sentences are never asked for again,
        # and a long session filled 4096 entries with them (tracemalloc: ~0.4 MB a minute until full)
        self._phonemize_cached = lru_cache(maxsize=PHONEMIZE_CACHE)(self._phonemize_uncached)

    def _phonemize_uncached(self, text: str) -> tuple[str, ...]:
        sentences = espeak.phonemize(self.config.espeak_voice, text)
        flat: list[str] = []
        for sentence in sentences:
            if flat and flat[-1] != SPACE and sentence:
                flat.append(SPACE)
            flat.extend(sentence)
        while flat and flat[-1] == SPACE:
            flat.pop()
        # symbols the voice does not know would be dropped by the id map: drop them here so counts agree
        return tuple(p for p in flat if p in self._id_map)

    def phonemize(self, text: str) -> tuple[str, ...]:
        """The flat phoneme symbols of a text (sentences joined by a space)."""
        return self._phonemize_cached(text)

    @staticmethod
    def _group_starts(phonemes: Sequence[str]) -> list[int]:
        """Indices where a space-separated group of phonemes starts."""
        return [i for i, p in enumerate(phonemes) if p != SPACE and (i == 0 or phonemes[i - 1] == SPACE)]

    def ids_of(self, phonemes: Sequence[str]) -> tuple[int, ...]:
        pad = self._id_map[PAD]
        ids: list[int] = []
        for p in phonemes:
            ids.extend(self._id_map[p])
            ids.extend(pad)
        return tuple(ids)

    def sentence_ids(self, units: Sequence[Unit]) -> tuple[int, ...]:
        """BOS, pad, every unit's ids, EOS: what the voice takes for a sentence."""
        ids = [*self._id_map[BOS], *self._id_map[PAD]]
        for unit in units:
            ids.extend(unit.ids)
        ids.extend(self._id_map[EOS])
        return tuple(ids)

    def text_ids(self, text: str) -> tuple[int, ...]:
        """``sentence_ids`` of a whole text at once (a fixed sentence: the self-test's, the speed probe's)."""
        return self.sentence_ids(self.units(split_words(text)))

    @property
    def prefix_ids(self) -> tuple[int, ...]:
        return (*self._id_map[BOS], *self._id_map[PAD])

    @property
    def suffix_ids(self) -> tuple[int, ...]:
        return tuple(self._id_map[EOS])

    def units(self, words: Sequence[str]) -> list[Unit]:
        """Units for a sentence's words; words that phonemize to nothing (emoji, stray symbols) join a neighbour."""
        words = [w for w in words if w]
        if not words:
            return []
        said = _silence_leading_punctuation(words)
        full = self.phonemize(" ".join(said))
        starts = self._group_starts(full)
        total = len(starts)
        if total == 0:
            return []
        # boundaries[i] = groups in the prefix ending at word i (non-decreasing, at most total)
        boundaries = []
        previous = 0
        for i in range(len(words)):
            count = len(self._group_starts(self.phonemize(" ".join(said[: i + 1])))) if i < len(words) - 1 else total
            previous = min(max(count, previous), total)
            boundaries.append(previous)

        units: list[Unit] = []
        pending_first = 0  # first word not yet in a unit (leading words without phonemes wait for the next)
        group_done = 0
        for i, groups in enumerate(boundaries):
            if groups > group_done:
                begin = starts[group_done] if group_done else 0
                end = starts[groups] if groups < total else len(full)
                units.append(self._make(words, pending_first, i + 1, full[begin:end]))
                group_done = groups
            elif units:  # the word added no group: espeak merged it into the previous word's group
                last = units.pop()
                units.append(self._make(words, last.first_word, i + 1, last.phonemes))
            else:
                continue
            pending_first = i + 1
        return units

    def _make(self, words: Sequence[str], first: int, stop: int, phonemes: Sequence[str]) -> Unit:
        return Unit(tuple(words[first:stop]), first, tuple(phonemes), self.ids_of(phonemes))


def _silence_leading_punctuation(words: Sequence[str]) -> list[str]:
    """``words`` as espeak is given them: punctuation alone before a sentence's first word is read aloud ("!" is
    "exclamation", "***" three asterisks), so it is given as "-", which espeak leaves silent there. The unit keeps the
    word as it was."""
    said = list(words)
    for i, word in enumerate(said):
        if not all(unicodedata.category(ch).startswith("P") for ch in word):
            break
        said[i] = "-"
    return said


_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*$")
_PHRASE_END = re.compile(r"[,;:]+[\"')\]]*$")


def ends_phrase(word: str) -> bool:
    """True for a word that closes a phrase inside a sentence ("brow,", "so;", "this:")."""
    return bool(_PHRASE_END.search(word))


def ends_sentence(word: str) -> bool:
    """True for a word that closes a sentence ("end.", "why?!", "so.)")."""
    return bool(_SENTENCE_END.search(word))


def with_pause(word: str) -> str:
    """A word the speaker paused after is a phrase's end for the voice, where the recognizer wrote no comma."""
    return word if ends_phrase(word) or ends_sentence(word) else f"{word},"
