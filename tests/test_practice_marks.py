"""The live marks on the source's words: said with its EVS, substituted, missed once passed, ahead otherwise."""

from __future__ import annotations

import pytest

from engine.asr.words import Word
from engine.practice.align import units
from engine.practice.marks import WordState, evs_points, mark_words, running_median

SOURCE = units(
    [Word("the", 0.0, 0.3), Word("cat", 0.3, 0.6), Word("sat", 0.6, 1.0), Word("on", 1.0, 1.2), Word("mats", 1.2, 1.6)],
    "en",
)


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
    said = units([Word("the", 1.0, 1.3), Word("bat", 1.3, 1.7), Word("sat", 1.7, 2.0), Word("mats", 2.2, 2.6)], "en")
    marked = mark_words(SOURCE, said, position_s=1.6)
    assert [w.state for w in marked] == [
        WordState.SAID,
        WordState.SUBSTITUTED,
        WordState.SAID,
        WordState.MISSED,
        WordState.SAID,
    ]
    assert marked[1].heard_as == "bat" and marked[1].evs_s == pytest.approx(1.1) and marked[3].evs_s is None


def test_a_word_never_said_is_missed_once_no_pairing_could_reach_it() -> None:
    assert {w.state for w in mark_words(SOURCE, [], position_s=5.0)} == {WordState.AHEAD}
    assert {w.state for w in mark_words(SOURCE, [], position_s=20.0)} == {WordState.MISSED}


def test_the_live_marker_marks_a_long_session_as_the_whole_alignment_does_aligning_only_its_recent_words() -> None:
    """Five minutes of words (one every 0.4 s), the person 1.5 s behind, every 17th word left out and every 23rd said
    wrong (away from those left out): snapshot by snapshot the marker settles old words, and its marks equal the
    whole alignment's."""
    from engine.practice.marks import LiveMarker

    vocabulary = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
    source_words = [Word(vocabulary[i % 7], i * 0.4, i * 0.4 + 0.3) for i in range(750)]
    wrong = [i for i in range(750) if i % 23 == 0 and i % 17 not in (0, 1, 16)]  # not beside a word left out
    said_words = [
        Word("hotel" if i in wrong else w.text, w.start_s + 1.5, w.end_s + 1.5)
        for i, w in enumerate(source_words)
        if i % 17
    ]
    marker = LiveMarker()
    for position in range(5, 301, 5):
        source = units([w for w in source_words if w.end_s <= position], "en")  # heard so far
        said = units([w for w in said_words if w.end_s <= position], "en")
        live = marker.mark(source, said, float(position))
        assert len(live) == len(source)
        if position in (150, 300):
            assert live == mark_words(source, said, float(position))
    assert marker._source_from > 550  # the last snapshot aligned only the words of its last 30 s or so
    final = marker.mark(source, said, 1e9)
    assert final == mark_words(source, said, 1e9)
    unheard = [i for i, w in enumerate(source_words) if i % 17 == 0 or w.end_s + 1.5 > 300]  # left out, or too late
    assert [i for i, w in enumerate(final) if w.state is WordState.MISSED] == unheard
    substituted = [i for i, w in enumerate(final) if w.state is WordState.SUBSTITUTED]
    assert substituted == [i for i in wrong if i not in unheard]
