"""The live marks on the source's words: said with its EVS, substituted, missed once passed, ahead otherwise."""

from __future__ import annotations

import pytest

from engine.asr.words import Word
from engine.practice.align import units
from engine.practice.marks import WordState, evs_points, mark_words, running_median

SOURCE = units([Word("the", 0.0, 0.3), Word("cat", 0.3, 0.6), Word("sat", 0.6, 1.0), Word("on", 1.0, 1.2),
                Word("mats", 1.2, 1.6)], "en")  # fmt: skip


def test_words_said_carry_their_evs_and_words_not_yet_said_are_ahead() -> None:
    said = units([Word("the", 1.0, 1.3), Word("cat", 1.3, 1.7)], "en")
    marked = mark_words(SOURCE, said, position_s=1.6)
    assert [w.state for w in marked] == [WordState.SAID, WordState.SAID] + [WordState.AHEAD] * 3
    assert [w.evs_s for w in marked[:2]] == pytest.approx([1.0, 1.1])
    assert [p for p, _ in evs_points(marked)] == [0.3, 0.6]
    assert [e for _, e in evs_points(marked)] == pytest.approx([1.0, 1.1])
    assert running_median(evs_points(marked)) == pytest.approx(1.05)
    assert running_median([]) is None


def test_a_word_passed_over_is_missed_and_a_wrong_word_is_substituted() -> None:
    said = units([Word("the", 1.0, 1.3), Word("bat", 1.3, 1.7), Word("sat", 1.7, 2.0), Word("mats", 2.2, 2.6)],
                 "en")  # fmt: skip
    marked = mark_words(SOURCE, said, position_s=1.6)
    assert [w.state for w in marked] == [WordState.SAID, WordState.SUBSTITUTED, WordState.SAID, WordState.MISSED,
                                         WordState.SAID]  # fmt: skip
    assert marked[1].heard_as == "bat" and marked[1].evs_s == pytest.approx(1.1) and marked[3].evs_s is None


def test_a_word_never_said_is_missed_once_no_pairing_could_reach_it() -> None:
    assert {w.state for w in mark_words(SOURCE, [], position_s=5.0)} == {WordState.AHEAD}
    assert {w.state for w in mark_words(SOURCE, [], position_s=20.0)} == {WordState.MISSED}
