"""BLEU, chrF and Average Lagging as METRICS.md defines them."""

from __future__ import annotations

import pytest

from engine.metrics.translation import average_lagging, bleu, bleu_difference_interval, chrf, normalize_for_bleu


def test_case_and_punctuation_do_not_count() -> None:
    reference = "EACH ONE OF THEM IS AN EXCLUSIVE RIGHT SUBJECT TO CERTAIN LIMITATIONS AND EXCEPTIONS"
    hypothesis = "Each one of them is an exclusive right, subject to certain limitations and exceptions."
    assert normalize_for_bleu(hypothesis) == reference.lower()
    assert bleu([reference], [hypothesis]) == pytest.approx(100.0)
    assert chrf([reference], [hypothesis]) == pytest.approx(100.0)
    assert normalize_for_bleu("Don't stop — 'quoted'") == "don't stop quoted"


def test_a_worse_translation_scores_lower() -> None:
    reference = ["this experience represents a transcendental step in the spatial history of the country"]
    close = ["this experience represents a major step in the space history of the country"]
    far = ["the country has a history"]
    assert 0 < bleu(reference, far) < bleu(reference, close) < 100
    assert 0 < chrf(reference, far) < chrf(reference, close) < 100
    assert bleu(reference, [""]) == 0.0


REFERENCES = [
    "this experience represents a transcendental step in the spatial history of the country",
    "each one of them is an exclusive right subject to certain limitations and exceptions",
    "the night was cold and the streets were empty",
    "he lost control of his car and ended the race soon after the start",
    "the dam stopped the seasonal floods that spread sediment along the river",
    "the ruling party kept its majority in the elections",
]


def test_the_bootstrap_interval_of_a_bleu_difference_brackets_it() -> None:
    """Paired bootstrap over sentences: a better system's lead lies inside its interval; two identical systems differ
    by nothing in every resample; resampled as one group, every sample is the corpus, so the interval is the
    difference sacrebleu gives the whole corpus (the per-sentence statistics add up to its corpus BLEU)."""
    close = [r.replace("the", "a", 1) for r in REFERENCES]
    far = ["the country has a history", "it is a right", "it was cold", "he lost the race", "the river", "a party"]
    lead = bleu(REFERENCES, close) - bleu(REFERENCES, far)
    low, high = bleu_difference_interval(REFERENCES, close, far)
    assert 0 < low <= lead <= high < 100
    assert bleu_difference_interval(REFERENCES, close, close) == (0.0, 0.0)
    whole = bleu_difference_interval(REFERENCES, close, far, groups=["one"] * len(REFERENCES))
    assert whole == pytest.approx((lead, lead))
    # grouped in pairs, a resample draws three pairs: the interval is another, still around the lead
    paired = bleu_difference_interval(REFERENCES, close, far, groups=[0, 0, 1, 1, 2, 2])
    assert paired != (low, high) and paired[0] <= lead <= paired[1]
    with pytest.raises(ValueError, match="one reference per sentence"):
        bleu_difference_interval(REFERENCES, close, far[:-1])


def test_average_lagging_follows_simuleval() -> None:
    # one reference word per second of a 3 s source, each word committed one second after its oracle time
    assert average_lagging([1.0, 2.0, 3.0], 3.0, 3) == pytest.approx(1.0)
    # words after the first one committed once the source was over do not count
    assert average_lagging([1.0, 2.0, 3.0, 9.0, 9.0], 3.0, 3) == pytest.approx(1.0)
    # a first word after the end: its delay
    assert average_lagging([4.0, 4.5], 3.0, 3) == pytest.approx(4.0)
    # a shorter reference spreads the oracle over fewer words: rate 1.5 s per word
    assert average_lagging([2.0, 3.0], 3.0, 2) == pytest.approx(((2.0 - 0) + (3.0 - 1.5)) / 2)
    assert average_lagging([], 3.0, 3) is None and average_lagging([1.0], 3.0, 0) is None
