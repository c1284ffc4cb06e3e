"""Translation metrics (shared/docs/METRICS.md): BLEU and chrF of the committed English, and Average Lagging.

BLEU and chrF are sacrebleu's, on text lower-cased with punctuation stripped on both sides (the references come
upper-cased without punctuation, Whisper's English with both). Average Lagging follows SimulEval for speech input:
delays are seconds of source, the oracle rate is the reference's length.

On a few dozen sentences corpus BLEU moves by points with chance, so a difference between two systems comes with a
paired bootstrap interval (Koehn 2004; sacrebleu's own paired test gives each system's interval and a p-value, not
the difference's).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable, Sequence

import numpy as np

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 12345  # sacrebleu's default: the same texts give the same interval

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


def bleu_difference_interval(
    references: Sequence[str],
    first: Sequence[str],
    second: Sequence[str],
    groups: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
    samples: int = BOOTSTRAP_SAMPLES,
) -> tuple[float, float]:
    """The ``confidence`` interval of ``bleu(references, first) - bleu(references, second)`` by paired bootstrap:
    both systems scored on the same resampled sentences. ``groups`` (one label per sentence) resamples whole groups
    instead, for several runs over the same recordings (a recording's sentences from every run go together)."""
    from sacrebleu.metrics import BLEU

    if not len(references) == len(first) == len(second) or not references:
        raise ValueError("the bootstrap needs one reference per sentence of each system, and at least one sentence")
    metric = BLEU()
    refs = [normalize_for_bleu(r) for r in references]

    def statistics(hypotheses: Sequence[str]) -> np.ndarray:
        """Per sentence: n-gram matches (4), n-gram totals (4), hypothesis and reference lengths."""
        scores = [metric.corpus_score([normalize_for_bleu(h)], [[r]]) for h, r in zip(hypotheses, refs, strict=True)]
        return np.array([[*s.counts, *s.totals, s.sys_len, s.ref_len] for s in scores], np.int64)

    def score(stats: np.ndarray) -> float:
        total = [int(x) for x in stats.sum(axis=0)]
        return float(
            metric.compute_bleu(
                total[:4],
                total[4:8],
                total[8],
                total[9],
                smooth_method=metric.smooth_method,
                smooth_value=metric.smooth_value,
            ).score
        )

    labels = list(groups) if groups is not None else list(range(len(refs)))
    members: dict[Hashable, list[int]] = {}
    for index, label in enumerate(labels):
        members.setdefault(label, []).append(index)
    clusters = list(members.values())
    a, b = statistics(first), statistics(second)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    differences = []
    for _ in range(samples):
        chosen = rng.integers(0, len(clusters), len(clusters))
        rows = [i for c in chosen for i in clusters[c]]
        differences.append(score(a[rows]) - score(b[rows]))
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(differences, [tail, 100 - tail])
    return float(low), float(high)


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
