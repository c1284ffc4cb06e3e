"""The machine's pace: the hurry threshold, the degradation ladder and its order, the catch-up rate, the speaker's
tempo."""

from __future__ import annotations

import pytest

from engine.pipeline import pace as p
from engine.pipeline.pace import DEGRADE_ORDER, ONE_BEAM, MachinePace, SpeakerTempo, catch_up_rate


def steps(pace: MachinePace, cost_s: float, seconds: float, start_s: float = 0.0, every_s: float = 0.5) -> float:
    t = start_s
    while t < start_s + seconds:
        t += every_s
        pace.step(cost_s, t)
    return t


def test_a_fast_machine_keeps_the_configured_settings() -> None:
    pace = MachinePace(min_step_s=0.3, hurry_below_s=1.0)
    steps(pace, 0.15, 60)
    for _ in range(20):
        pace.piece(0.05, 0.5)
    assert pace.level == 0 and pace.trim_s is None and pace.left_context is None
    assert pace.hurry_below_s() == pytest.approx(1.0)  # 2 x (0.3 + 0.15 + 0.05) = 1.0
    assert pace.status().message is None


def test_the_hurry_threshold_grows_with_the_step_cost_and_the_piece_compute() -> None:
    pace = MachinePace(min_step_s=0.3, hurry_below_s=1.0, adapt=True)
    assert pace.hurry_below_s() == 1.0  # before enough steps: the configured value
    steps(pace, 0.4, 3)
    for _ in range(5):
        pace.piece(0.2, 0.6)
    assert pace.hurry_below_s() == pytest.approx(2 * (0.4 + 0.4 + 0.2))
    assert MachinePace(0.3, 1.0, adapt=False).hurry_below_s() == 1.0


def test_before_any_measurement_the_step_period_sets_the_hurry_threshold() -> None:
    """Interpreting steps once a second: the voice must hold two periods before a step has been measured, or its
    first piece (about a second) does not hurry and the next batch of words comes just as it runs out."""
    assert MachinePace(min_step_s=1.0, hurry_below_s=1.0).hurry_below_s() == pytest.approx(2.0)
    assert MachinePace(min_step_s=0.3, hurry_below_s=1.0).hurry_below_s() == pytest.approx(1.0)  # shadowing
    assert MachinePace(min_step_s=1.0, hurry_below_s=1.0, adapt=False).hurry_below_s() == 1.0


def test_a_piece_restarting_the_voice_should_bring_two_pieces_compute() -> None:
    pace = MachinePace(min_step_s=0.3, hurry_below_s=1.0)
    assert pace.restart_min_s() == 0.0  # nothing measured: no piece waits
    for compute in (0.1, 0.3, 0.2):
        pace.piece(compute, 0.6)
    assert pace.restart_min_s() == pytest.approx(p.RESTART_PIECES * 0.2)
    fixed = MachinePace(0.3, 1.0, adapt=False)
    fixed.piece(0.2, 0.6)
    assert fixed.restart_min_s() == 0.0


def test_a_slow_machine_degrades_in_the_stated_order_one_level_per_dwell() -> None:
    pace = MachinePace(min_step_s=0.3, hurry_below_s=1.0)
    t = steps(pace, 0.6, p.DWELL_S + 1)
    assert pace.level == 1 and pace.trim_s == p.SHORT_TRIM_S and pace.left_context is None
    t = steps(pace, 0.6, p.DWELL_S + 1, t)
    assert pace.level == 2 and pace.left_context == p.SHORT_LEFT_CONTEXT
    t = steps(pace, 0.6, 3 * p.DWELL_S, t)
    assert pace.level == 2  # 0.6 s steps are slow, not hopeless: no warning, and nothing more is given up
    assert pace.status().message is None
    t = steps(pace, 1.5, p.DWELL_S + 1, t)
    assert pace.level == pace.cannot_keep_up == 3
    assert "too slow" in (pace.status().message or "")
    t = steps(pace, 0.1, 5 * p.DWELL_S, t)
    assert pace.level == 0  # recovered, one level at a time
    report = pace.report()
    assert [c["level"] for c in report["changes"]] == [1, 2, 3, 2, 1, 0]
    assert report["highest_level"] == pace.cannot_keep_up and report["cannot_keep_up_s"] > 0
    assert report["degrade_order"] == [name for name in DEGRADE_ORDER if name != ONE_BEAM]


def test_a_recognizer_with_a_start_beam_gives_it_up_first() -> None:
    pace = MachinePace(min_step_s=0.3, hurry_below_s=1.0, start_beam=True)
    assert pace.start_beam and pace.levels == DEGRADE_ORDER
    t = steps(pace, 0.6, p.DWELL_S + 1)
    assert pace.level == 1 and not pace.start_beam and pace.trim_s is None  # the beam goes before the buffer
    t = steps(pace, 0.6, p.DWELL_S + 1, t)
    assert pace.level == 2 and not pace.start_beam and pace.trim_s == p.SHORT_TRIM_S and pace.left_context is None
    steps(pace, 0.1, 3 * p.DWELL_S, t)
    assert pace.level == 0 and pace.start_beam


def test_a_step_counts_as_slow_against_its_period() -> None:
    """Interpreting's steps come every 0.75 s: 0.65 s each fits the period, and the shorter buffer would cost the
    translation for nothing; past 0.9 of the period they degrade it. Shadowing's 0.3 s steps keep the fixed costs."""
    shadowing, interpreting = MachinePace(0.3, 1.0), MachinePace(0.75, 1.0)
    steps(shadowing, 0.6, p.DWELL_S + 1, every_s=1.0)
    t = steps(interpreting, 0.65, 3 * p.DWELL_S, every_s=0.75)
    assert shadowing.level == 1 and interpreting.level == 0
    assert interpreting.report()["slow_step_s"] == pytest.approx(p.HIGH_SHARE * 0.75)
    assert shadowing.report()["slow_step_s"] == p.STEP_COST_HIGH_S
    t = steps(interpreting, 0.72, 6.0, t, every_s=0.75)  # the median of the last steps passes 0.675 s
    assert interpreting.level == 1 and interpreting.trim_s == p.SHORT_TRIM_S
    t = steps(interpreting, 0.6, p.DWELL_S + 1, t, every_s=0.75)
    assert interpreting.level == 1  # above half the period: not fast enough to go back
    steps(interpreting, 0.3, p.DWELL_S + 1, t, every_s=0.75)
    assert interpreting.level == 0


def test_the_log_names_no_voice_compute_before_the_voice_has_made_a_piece(caplog: pytest.LogCaptureFixture) -> None:
    pace = MachinePace(min_step_s=0.3, hurry_below_s=1.0)
    with caplog.at_level("INFO", logger="engine.pipeline.pace"):
        steps(pace, 0.6, p.DWELL_S + 1)
        pace.piece(0.2, 1.0)
        steps(pace, 0.6, p.DWELL_S + 1, start_s=p.DWELL_S + 1)
    changes = [r.getMessage() for r in caplog.records if "machine pace" in r.getMessage()]
    assert len(changes) == 2
    assert "voice compute/audio -:" in changes[0] and "voice compute/audio 0.20:" in changes[1]


def test_a_slow_voice_degrades_too() -> None:
    pace = MachinePace(min_step_s=0.3, hurry_below_s=1.0)
    for _ in range(12):
        pace.piece(0.7, 1.0)
    steps(pace, 0.1, p.DWELL_S + 1)
    assert pace.level == 1


def test_catch_up_rate() -> None:
    rule = p.SHADOW_CATCH_UP
    queued = rule.in_hand_s + 0.5
    assert catch_up_rate(None, 1.3, queued) == 1.0
    assert catch_up_rate(rule.from_s - 0.1, 1.3, queued) == 1.0
    assert catch_up_rate(rule.from_s + 0.5, 1.3, queued) == pytest.approx(1.0 + 0.5 * rule.per_s)
    assert catch_up_rate(20.0, 1.3, queued) == 1.3
    assert catch_up_rate(20.0, 1.0, queued) == 1.0


def test_catch_up_leaves_the_rate_alone_when_little_voice_is_queued() -> None:
    """Far behind with little in hand, the lag is the recognizer's: a faster voice would only run dry sooner."""
    rule = p.SHADOW_CATCH_UP
    assert catch_up_rate(20.0, 1.3, rule.in_hand_s) == 1.0
    assert catch_up_rate(20.0, 1.3, 0.0) == 1.0
    assert catch_up_rate(20.0, 1.3, rule.in_hand_s + 0.01) == 1.3


def test_interpreting_catches_up_later_and_whatever_is_queued() -> None:
    rule = p.INTERPRET_CATCH_UP
    assert rule.from_s > p.SHADOW_CATCH_UP.from_s
    assert catch_up_rate(rule.from_s, 1.3, 0.0, rule) == 1.0
    assert catch_up_rate(rule.from_s + 1.0, 1.3, 0.0, rule) == pytest.approx(1.0 + rule.per_s)


def test_the_voice_keeps_a_faster_speakers_tempo_under_the_same_gate_and_cap() -> None:
    rule = p.SHADOW_CATCH_UP
    queued = rule.in_hand_s + 0.5
    assert rule.match_tempo
    assert catch_up_rate(1.0, 1.3, queued, rule, tempo=1.12) == pytest.approx(1.12)  # not far behind: the tempo
    assert catch_up_rate(1.0, 1.3, queued, rule, tempo=None) == 1.0
    assert catch_up_rate(None, 1.3, queued, rule, tempo=1.12) == pytest.approx(1.12)
    assert catch_up_rate(1.0, 1.3, queued, rule, tempo=0.8) == 1.0  # a slower speaker never slows the voice
    assert catch_up_rate(1.0, 1.3, queued, rule, tempo=1.6) == 1.3
    assert catch_up_rate(1.0, 1.0, queued, rule, tempo=1.2) == 1.0  # catch-up off: tempo too
    assert catch_up_rate(rule.from_s + 0.5, 1.3, queued, rule, tempo=1.05) == pytest.approx(1.0 + 0.5 * rule.per_s)
    # little queued: speaking faster would only run dry sooner, whatever the speaker's tempo
    assert catch_up_rate(1.0, 1.3, rule.in_hand_s, rule, tempo=1.2) == 1.0


def test_interpreting_ignores_the_tempo() -> None:
    """The source's word times are another language's words: no tempo to keep."""
    rule = p.INTERPRET_CATCH_UP
    assert not rule.match_tempo
    assert catch_up_rate(1.0, 1.3, 5.0, rule, tempo=1.25) == 1.0


def test_speaker_tempo_is_the_voices_time_over_the_speakers_for_the_same_words() -> None:
    tempo = SpeakerTempo(words=4)
    tempo.add("the", 0.20, 0.25)
    assert tempo.ratio() is None  # half the window first
    tempo.add("quick", 0.30, 0.36)
    assert tempo.ratio() == pytest.approx(0.61 / 0.50)
    for _ in range(4):  # the window forgets older words
        tempo.add("slow", 0.50, 0.40)
    assert tempo.ratio() == pytest.approx(0.8)


def test_speaker_tempo_leaves_out_phrase_ends_and_words_without_a_length() -> None:
    tempo = SpeakerTempo(words=2)
    tempo.add("country.", 0.2, 0.6)  # a pause inside the aligned time, a lengthened word in the voice
    tempo.add("Americans,", 0.2, 0.6)
    tempo.add('country."', 0.2, 0.6)  # closing quotes too
    tempo.add("so", 0.0, 0.2)
    tempo.add("my", 0.3, 0.0)
    assert tempo.ratio() is None
    tempo.add("fellow", 0.3, 0.3)
    assert tempo.ratio() == pytest.approx(1.0)
