"""Interpreting practice's sentences: where each ends on the source, and which of the person's words are for it."""

from __future__ import annotations

import pytest

from engine.asr.words import Word
from engine.practice.interpreting import EnglishTarget, score_interpretation, sentence_ends, sentence_lags
from engine.practice.score import score


def _timed(text: str, start_s: float, step_s: float = 0.5) -> list[Word]:
    return [Word(t, start_s + k * step_s, start_s + (k + 1) * step_s) for k, t in enumerate(text.split())]


def test_the_last_sentence_lasts_until_the_speech_ends_when_the_translation_stops_short() -> None:
    translated = _timed("the cat sat. the dog ran", 0.0)  # "sat." ends at 1.5 s, "ran" at 3.0 s
    assert sentence_ends(translated) == [1.5, 3.0]
    assert sentence_ends(translated, speech_end_s=4.2) == [1.5, 4.2]  # the source went on: its words left out
    assert sentence_ends(translated, speech_end_s=2.8) == [1.5, 3.0]  # Whisper's end past the detector's: kept
    assert sentence_ends([], speech_end_s=4.2) == []


def test_the_persons_words_after_the_last_match_are_theirs_for_the_last_sentence() -> None:
    """The translation dropped "on the mat"; the person said it, and their lag runs to its end."""
    translated = _timed("the cat sat.", 0.0)  # ends at 1.5 s; the speech went on until 4.0 s
    said = _timed("the cat sat on the mat", 5.0)  # "sat" ends at 6.5 s, "mat" at 8.0 s
    result = score(translated, said)
    lags = sentence_lags(result, sentence_ends(translated, speech_end_s=4.0))
    assert lags == [{"source_end_s": 4.0, "rendered_end_s": 8.0, "lag_s": 4.0}]
    # with two sentences, the first keeps only its own words
    two = _timed("the dog ran. the cat sat.", 0.0)  # "ran." ends at 1.5 s, "sat." at 3.0 s
    result = score(two, _timed("the dog ran the cat sat on the mat", 2.0))  # "ran" ends at 3.5 s
    assert [s["rendered_end_s"] for s in sentence_lags(result, sentence_ends(two, speech_end_s=4.0))] == [3.5, 6.5]


def test_a_sentence_nothing_was_said_for_has_no_lag() -> None:
    two = _timed("the dog ran. the cat sat.", 0.0)
    result = score(two, _timed("the dog ran", 2.0))  # "ran" ends at 3.5 s; nothing after it
    assert sentence_lags(result, sentence_ends(two, speech_end_s=4.0))[-1] == {
        "source_end_s": 4.0,
        "rendered_end_s": None,
        "lag_s": None,
    }
    assert sentence_lags(score(two, []), sentence_ends(two))[-1]["lag_s"] is None


def test_a_target_moves_onto_the_clock_it_was_heard_or_played_on() -> None:
    target = EnglishTarget(_timed("the cat", 1.0), _timed("the cat", 1.0), "liveshadow's own translation", None, 2.5)
    later = target.moved(offset_s=3.0)
    assert [(w.start_s, w.end_s) for w in later.words] == [(4.0, 4.5), (4.5, 5.0)] and later.speech_end_s == 5.5
    slowed = target.moved(speed=0.5)
    assert slowed.translated[-1].end_s == 4.0 and slowed.speech_end_s == 5.0
    assert EnglishTarget([], [], "x", None).moved(1.0).speech_end_s is None


def test_the_report_takes_the_speech_end_into_the_last_sentence() -> None:
    translated = _timed("the cat sat.", 0.0)
    target = EnglishTarget(list(translated), translated, "liveshadow's own translation", None, speech_end_s=4.0)
    report = score_interpretation(target, _timed("the cat sat on the mat", 5.0))
    assert report["sentence_lag_s"]["per_sentence"][-1]["lag_s"] == pytest.approx(4.0)
    assert report["sentences"] == report["sentences_said"] == 1
