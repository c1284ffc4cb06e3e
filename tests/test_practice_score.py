"""Scoring a shadowing attempt on words with known times: the alignment in time, EVS, and what was lost."""

from __future__ import annotations

import pytest

from engine.asr.words import Word
from engine.practice.align import Mark, align, units
from engine.practice.reference import timed_reference
from engine.practice.score import score


def _words(text: str, start_s: float = 0.0, step_s: float = 0.4) -> list[Word]:
    return [Word(t, start_s + i * step_s, start_s + i * step_s + 0.3) for i, t in enumerate(text.split())]


SOURCE = _words("the cat sat on the mat and the dog sat on the rug")


def _shifted(words: list[Word], lag_s: float) -> list[Word]:
    return [Word(w.text, w.start_s + lag_s, w.end_s + lag_s) for w in words]


def test_a_perfect_shadower_two_seconds_behind_has_an_evs_of_two_seconds_on_every_word() -> None:
    report = score(SOURCE, _shifted(SOURCE, 2.0)).report()
    assert report["evs_s"]["n"] == len(SOURCE)
    assert report["evs_s"]["median"] == pytest.approx(2.0) and report["evs_s"]["max"] == pytest.approx(2.0)
    assert report["accuracy"] == 1.0 and report["missed_words"] == report["added_words"] == 0
    assert report["rate_ratio"] == pytest.approx(1.0) and report["longest_lost_s"] == 0.0


def test_the_offset_moves_the_attempt_onto_the_source_clock() -> None:
    late = score(SOURCE, _shifted(SOURCE, 1.0), offset_s=1.0).report()
    assert late["evs_s"]["median"] == pytest.approx(2.0)


def test_missed_words_and_the_longest_stretch_lost() -> None:
    said = [w for i, w in enumerate(_shifted(SOURCE, 1.5)) if i not in (3, 4, 5, 9)]
    report = score(SOURCE, said).report()
    assert report["missed_words"] == 4 and report["added_words"] == 0
    assert report["accuracy"] == pytest.approx(1 - 4 / len(SOURCE))
    assert report["longest_lost_s"] == pytest.approx(SOURCE[5].end_s - SOURCE[3].start_s)
    assert [p["source"] for p in report["words"] if p["mark"] == "missed"] == ["on", "the", "mat", "sat"]


def test_a_common_word_is_not_paired_with_its_namesake_a_sentence_away() -> None:
    """The attempt says only the last "the", 1 s after it; without the time window it could pair with the first."""
    said = _shifted([SOURCE[11]], 1.0)
    pairs = align(SOURCE, said)
    said_pairs = [p for p in pairs if p.mark is Mark.SAID]
    assert [(p.source, p.attempt) for p in said_pairs] == [(11, 0)]


def test_a_word_said_too_early_or_far_too_late_is_added_not_said() -> None:
    early = [Word("cat", -2.0, -1.8)]
    late = [Word("cat", 30.0, 30.3)]
    for attempt in (early, late):
        report = score(SOURCE, attempt).report()
        assert report["evs_s"]["n"] == 0 and report["added_words"] == 1 and report["missed_words"] == len(SOURCE)


def test_a_misheard_word_is_one_substitution() -> None:
    said = _shifted(SOURCE, 1.0)
    said[1] = Word("hat", said[1].start_s, said[1].end_s)
    report = score(SOURCE, said).report()
    assert report["substituted_words"] == 1 and report["missed_words"] == report["added_words"] == 0


def test_an_unspaced_language_is_compared_character_by_character() -> None:
    source = [Word("今天天气", 0.0, 1.0), Word("很好。", 1.0, 1.6)]
    attempt = [Word("今天", 2.0, 2.5), Word("天气很好", 2.5, 3.6)]
    assert [u.text for u in units(source, "zh")] == list("今天天气很好")
    report = score(source, attempt, language="zh").report()
    assert report["accuracy"] == 1.0 and report["evs_s"]["n"] == 6


def test_a_reference_transcript_takes_the_recognizers_times() -> None:
    heard = [Word("He", 0.0, 0.2), Word("began", 0.3, 0.6), Word("a", 0.7, 0.75), Word("confused", 1.0, 1.4)]
    words = timed_reference("HE BEGAN THE CONFUSED COMPLAINT", heard)
    assert [w.text for w in words] == ["HE", "BEGAN", "THE", "CONFUSED", "COMPLAINT"]
    assert (words[2].start_s, words[2].end_s) == (0.7, 0.75)  # misheard: the recognized word's time
    assert words[4].start_s == pytest.approx(1.4) and words[4].end_s == pytest.approx(1.4)  # unheard, at the end


def test_nothing_said_scores_zero_and_reports_no_evs() -> None:
    report = score(SOURCE, []).report()
    assert report["accuracy"] == 0.0 and report["evs_s"]["median"] is None and report["missed_words"] == len(SOURCE)
