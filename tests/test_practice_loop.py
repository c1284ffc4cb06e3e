"""The A-B loop: the words from A to B cut between words, played again and again, each pass scored on what was said
in it, the best and the last named (fakes: timed words; the real loop is in test_practice_loop_live)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.asr.words import Word
from engine.practice.loop import GAP_S, Loop, LoopError, loop_stretch, score_passes
from engine.practice.program import make_program

RATE = 100
WORDS = [
    Word(t, a, a + 0.4)
    for t, a in (("one", 0.5), ("two", 1.0), ("three", 1.5), ("four", 2.0), ("five", 2.5), ("six", 3.0))
]


def test_the_stretch_holds_the_words_from_a_to_b_cut_halfway_through_the_pauses_around_it() -> None:
    stretch = loop_stretch(WORDS, 4.0, Loop(1.1, 2.4, 3))
    assert [w.text for w in stretch.words] == ["two", "three", "four"]
    assert stretch.start_s == pytest.approx(0.95) and stretch.end_s == pytest.approx(2.45)
    assert loop_stretch(WORDS, 4.0, Loop(0.0, 9.0, 1)).start_s == 0.0  # the whole source: to its ends
    for bad, message in (
        (Loop(2.0, 1.0, 2), "end after it starts"),
        (Loop(3.6, 3.9, 2), "no word"),
        (Loop(1.0, 2.0, 0), "1 to 20 times"),
    ):
        with pytest.raises(LoopError, match=message):
            loop_stretch(WORDS, 4.0, bad)


def test_the_program_repeats_the_stretch_with_a_gap_and_a_and_b_follow_the_speed() -> None:
    # A and B on the source's own clock; the words as played at 0.5x
    slowed = [Word(w.text, w.start_s / 0.5, w.end_s / 0.5) for w in WORDS]
    program = make_program(slowed, 8.0, RATE, 0.5, loop=Loop(1.1, 2.4, 3))
    assert program is not None and program.mode == "loop" and len(program.played) == 3
    length = 2 * (2.45 - 0.95) + GAP_S
    assert [p.start_s for p in program.played] == pytest.approx([0.0, length, 2 * length])
    assert [w.text for w in program.words] == ["two", "three", "four"] * 3
    audio = program.audio(np.ones(8 * RATE, np.float32), RATE)
    assert audio.size == round(program.duration_s * RATE) and audio[round((length - 0.5) * RATE)] == 0.0
    with pytest.raises(ValueError, match="not both"):
        make_program(WORDS, 4.0, RATE, sentence_by_sentence=True, loop=Loop(1.0, 2.0, 2))


def test_each_pass_is_scored_on_its_own_and_the_best_and_the_last_are_named() -> None:
    program = make_program(WORDS, 4.0, RATE, loop=Loop(1.1, 2.4, 3))
    assert program is not None
    first, second, third = program.played
    said = [Word("two", first.words[0].start_s + 0.5, first.words[0].end_s + 0.5)]  # pass 1: one word of three
    said += [Word(w.text, w.start_s + 0.6, w.end_s + 0.6) for w in second.words]  # pass 2: all, 0.6 s behind
    said += [Word(w.text, w.start_s + 0.3, w.end_s + 0.3) for w in third.words[:2]]  # pass 3: two of three
    figures = program.score(said, third.end_s, "en")
    rows = figures["passes"]
    assert [r["accuracy"] for r in rows] == pytest.approx([1 / 3, 1.0, 2 / 3])
    assert rows[1]["evs_s"] == pytest.approx(0.6) and rows[2]["missed"] == ["four"]
    assert figures["best_pass"] == 2 and figures["last_pass"] == 3 and figures["mode"] == "loop"
    assert figures["loop"] == {"a_s": 1.1, "b_s": 2.4, "passes": 3}
    stopped = score_passes(program.played, said[:1], second.start_s + 0.5)  # Stop during the second pass
    assert [r["pass"] for r in stopped["passes"]] == [1, 2] and stopped["last_pass"] == 2


def test_the_command_refuses_a_speed_a_loop_or_passes_out_of_range_in_one_line(tmp_path, capsys) -> None:
    import soundfile

    from engine import cli

    wav = tmp_path / "talk.wav"
    soundfile.write(str(wav), np.zeros(16000, np.float32), 16000)
    base = ["practice", str(wav), "--voice", str(wav), "--no-history"]
    for extra, message in (
        (["--speed", "2"], "--speed must lie between 0.5 and 1.25"),
        (["--loop", "1-3", "--passes", "99"], "--passes must lie between 0"),
        (["--loop", "1-3", "--sentences"], "not with --sentences"),
        (["--sentences", "--interpret"], "for shadowing practice"),
        (["--into", "es"], "goes with --interpret"),
    ):
        assert cli.main(base + extra) == cli.EXIT_USAGE, extra
        assert message in capsys.readouterr().err, extra
    for bad in ("5-2", "a-b", "7"):
        with pytest.raises(SystemExit):
            cli.main(base + ["--loop", bad])
        assert "a loop" in capsys.readouterr().err
