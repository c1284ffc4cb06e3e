"""BLEU, chrF and Average Lagging as METRICS.md defines them."""

from __future__ import annotations

import pytest

from engine.metrics import names as m
from engine.metrics.translation import average_lagging, bleu, chrf, normalize_for_bleu


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


def test_bench_interpret_sums_the_gaps_of_its_underruns() -> None:
    """How long the voice was silent for want of compute, beside how often: 3 underruns of 0.42 s in all."""
    from engine.pipeline.bench_interpret import format_table, interpret_results

    entries = [{"lang": "es", "translation": "each of them is an exclusive right"},
               {"lang": "fr", "translation": "the night was cold"}]  # fmt: skip
    reports = [
        {"committed_text": text, m.UNDERRUNS: underruns, m.GAP_S: gap_s, m.FIRST_AUDIO_S: {"n": 1, "median": 0.2},
         m.EAR_VOICE_LAG_S: {"n": 4, "median": 3.0}, "underruns_short_notice": underruns, "underruns_forced": 0}
        for text, underruns, gap_s in (("each of them is a right", 1, 0.12), ("the night was cold", 2, 0.30))
    ]  # fmt: skip
    results = interpret_results(entries, reports, [e["translation"] for e in entries])
    assert results[m.UNDERRUNS] == 3 and results[m.GAP_S] == pytest.approx(0.42)
    report = {"results": {"la2": results}, "machine": {"cores": 2}, "config": {"recordings": 2}}
    assert "la2: underruns 3 (0.42 s of gaps) (of them 3 with less notice" in format_table(report)
