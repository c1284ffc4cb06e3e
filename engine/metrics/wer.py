"""Word error rate through one English normalizer, for every WER the project reports (METRICS.md).

The normalizer is Whisper's English text normalizer (the ``whisper-normalizer`` package): lower case, punctuation
removed, numbers written as digits ("fourteen sixty-two" and "1462" both become "1462"), British spellings and
contractions mapped to one form, fillers ("uh", "um", "hmm") removed. Whisper's normalizer also deletes everything in
parentheses; here words in parentheses are spoken words of the reference (a book's parenthesised clause) and are
kept. Square and angle brackets hold tags that nobody said ("[noise]", "<unk>") and are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import jiwer

_TAGS = re.compile(r"\[[^\]]*\]|<[^>]*>")
_PARENTHESES = re.compile(r"[()]")


@cache
def _english() -> object:
    from whisper_normalizer.english import EnglishTextNormalizer

    return EnglishTextNormalizer()


def normalize_for_wer(text: str) -> str:
    """The form both sides of a WER are compared in. Whisper's normalizer leaves a trailing ellipsis as a token of its
    own ("Slow..." gives "slow ."; "Wait…" gives "wait .."), which scored as a word nobody said: a token without a
    letter or a digit is not a word."""
    text = _PARENTHESES.sub(" ", _TAGS.sub(" ", text or ""))
    tokens = _english()(text).split()  # type: ignore[operator]
    return " ".join(t for t in tokens if any(ch.isalnum() for ch in t))


def wer(reference: str, hypothesis: str) -> float:
    """WER of one hypothesis against its reference (an empty reference: 0 if nothing was said, else 1)."""
    return corpus_wer([reference], [hypothesis])


def corpus_wer(references: Sequence[str], hypotheses: Sequence[str]) -> float:
    """Errors over all references / words in all references (recordings with an empty reference add insertions)."""
    counts = word_errors(references, hypotheses)
    if counts.reference_words == 0:
        return 0.0 if counts.insertions == 0 else 1.0
    return counts.errors / counts.reference_words


@dataclass(frozen=True, slots=True)
class WordErrors:
    reference_words: int
    hypothesis_words: int
    substitutions: int
    deletions: int
    insertions: int

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions


def word_errors(references: Sequence[str], hypotheses: Sequence[str]) -> WordErrors:
    """Error counts after normalization; a pair whose reference is empty counts its hypothesis words as insertions."""
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    refs = [normalize_for_wer(r) for r in references]
    hyps = [normalize_for_wer(h) for h in hypotheses]
    subs = dels = ins = 0
    pairs = [(r, h) for r, h in zip(refs, hyps, strict=True) if r]
    if pairs:
        out = jiwer.process_words([r for r, _ in pairs], [h for _, h in pairs])
        subs, dels, ins = out.substitutions, out.deletions, out.insertions
    ins += sum(len(h.split()) for r, h in zip(refs, hyps, strict=True) if not r)
    return WordErrors(
        reference_words=sum(len(r.split()) for r in refs),
        hypothesis_words=sum(len(h.split()) for h in hyps),
        substitutions=subs,
        deletions=dels,
        insertions=ins,
    )
