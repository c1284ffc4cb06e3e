"""Translation metrics (shared/docs/METRICS.md): BLEU and chrF of the committed English, and Average Lagging.

BLEU and chrF are sacrebleu's, on text lower-cased with punctuation stripped on both sides (the references come
upper-cased without punctuation, Whisper's English with both). Average Lagging follows SimulEval for speech input:
delays are seconds of source, the oracle rate is the reference's length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_PUNCTUATION = re.compile(r"[^\w\s']|(?<!\w)'|'(?!\w)")


def normalize_for_bleu(text: str) -> str:
    """Lower-cased, punctuation removed (apostrophes inside words kept: "don't"), spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(_PUNCTUATION.sub(" ", text).split())


def bleu(references: Sequence[str], hypotheses: Sequence[str]) -> float:
    """Corpus BLEU (0–100) of ``hypotheses`` against one reference each."""
    import sacrebleu

    refs = [normalize_for_bleu(r) for r in references]
    hyps = [normalize_for_bleu(h) for h in hypotheses]
    return float(sacrebleu.corpus_bleu(hyps, [refs]).score)


def chrf(references: Sequence[str], hypotheses: Sequence[str]) -> float:
    """Corpus chrF (0–100)."""
    import sacrebleu

    refs = [normalize_for_bleu(r) for r in references]
    hyps = [normalize_for_bleu(h) for h in hypotheses]
    return float(sacrebleu.corpus_chrf(hyps, [refs]).score)


def average_lagging(delays_s: Sequence[float], source_s: float, reference_words: int) -> float | None:
    """AL (seconds): ``delays_s[i]`` is the source time consumed (or, computation-aware, the time elapsed since the
    source started) when target word i was committed; words after the first one committed once the whole source was
    read do not count. None without target words or a reference."""
    if not delays_s or reference_words <= 0 or source_s <= 0:
        return None
    rate = source_s / reference_words  # seconds of source per reference word
    tau = next((i + 1 for i, d in enumerate(delays_s) if d >= source_s), len(delays_s))
    return sum(delays_s[i] - i * rate for i in range(tau)) / tau
