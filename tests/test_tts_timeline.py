from __future__ import annotations

import pytest

from engine.tts.measure import time_balance
from engine.tts.timeline import GapCounts, simulate_playback


def test_gapless_when_every_piece_is_ready_in_time() -> None:
    t = simulate_playback([0.1, 0.3, 0.5], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0])
    assert t.start_s == [0.1, 1.1, 2.1]
    assert t.time_balance == pytest.approx([0.8, 1.6])
    assert (t.underruns, t.gap_s, t.starved_s) == (0, 0.0, 0.0)


def test_time_balance_matches_the_all_input_formula() -> None:
    gen, audio = [0.1, 0.2, 0.4, 0.3], [0.5, 0.4, 0.6, 0.5]
    ready = [sum(gen[: i + 1]) for i in range(len(gen))]
    t = simulate_playback(ready, audio, [0.0] * 4)
    assert t.time_balance == pytest.approx(time_balance(gen, audio))


def test_slow_compute_is_an_underrun_and_waiting_for_words_is_starvation() -> None:
    # piece 1: words there at 0, ready at 1.5, previous ends at 1.0 -> 0.5 s underrun
    # piece 2: words arrive at 3.0 (after piece 1 ends at 2.0), ready at 3.2 -> 1.2 s starved
    t = simulate_playback([0.0, 1.5, 3.2], [1.0, 0.5, 1.0], [0.0, 0.0, 3.0])
    assert t.underruns == 1 and t.gap_s == pytest.approx(0.5)
    assert t.starved_s == pytest.approx(1.2)
    assert t.end_s[-1] == pytest.approx(4.2)


def test_gap_counts_sorts_silences_by_cause() -> None:
    gaps = GapCounts()
    gaps.add(0.2, gap_start_s=5.0, inputs_at_s=4.9)  # words were in: compute
    gaps.add(0.5, gap_start_s=6.0, inputs_at_s=6.3)  # words came after the voice ran out: the speaker
    gaps.add(0.7, gap_start_s=8.0, inputs_at_s=7.0, sentence_start=True)  # a new sentence
    assert (gaps.underruns, gaps.gap_s, gaps.starved_s, gaps.pause_s) == (1, 0.2, 0.5, 0.7)
    assert gaps.phrase_pause_s == 0.0


def test_underruns_say_whether_any_compute_could_have_avoided_them() -> None:
    gaps = GapCounts()
    gaps.add(0.1, gap_start_s=5.0, inputs_at_s=4.95, compute_s=0.2)  # 0.05 s of notice for 0.2 s of compute
    gaps.add(0.1, gap_start_s=7.0, inputs_at_s=6.5, compute_s=0.2, forced=True)  # time enough; a forced word
    gaps.add(0.1, gap_start_s=9.0, inputs_at_s=8.0)  # no compute given: counted, not classified
    gaps.add(0.3, gap_start_s=10.0, inputs_at_s=10.2, compute_s=0.5, forced=True)  # starved: not an underrun
    assert (gaps.underruns, gaps.short_notice, gaps.forced) == (3, 1, 1)


def test_a_pause_after_a_comma_is_starved_time_and_is_also_counted_apart() -> None:
    gaps = GapCounts()
    gaps.add(0.4, gap_start_s=3.0, inputs_at_s=3.2, phrase_start=True)  # waited for the phrase's words
    gaps.add(0.1, gap_start_s=5.0, inputs_at_s=4.8, phrase_start=True)  # its words were in: still compute
    assert (gaps.starved_s, gaps.phrase_pause_s) == (0.4, 0.4)
    assert (gaps.underruns, gaps.gap_s) == (1, 0.1)
