"""The second pass: where its words differ from the committed ones, and which of those it may still rewrite."""

from __future__ import annotations

import numpy as np

from engine.asr.backend import SAMPLE_RATE
from engine.asr.second_pass import SecondPass, align
from engine.asr.stream_values import CommittedWord
from engine.asr.words import Word


def committed(texts: str, commit_s: float, start_s: float = 0.0) -> list[CommittedWord]:
    return [CommittedWord(t, start_s + i * 0.5, start_s + i * 0.5 + 0.4, commit_s) for i, t in enumerate(texts.split())]


def timed(texts: str, start_s: float = 0.0) -> list[Word]:
    return [Word(t, start_s + i * 0.5, start_s + i * 0.5 + 0.4) for i, t in enumerate(texts.split())]


class Ticks:
    """A timer that advances by ``step`` on every second reading: each decode takes ``step`` seconds."""

    def __init__(self, step: float) -> None:
        self.step, self.t, self.calls = step, 0.0, 0

    def __call__(self) -> float:
        self.calls += 1
        if self.calls % 2 == 0:
            self.t += self.step
        return self.t


def test_align_finds_the_misheard_words_and_leaves_out_those_not_committed_yet() -> None:
    words = committed("made, am you himself", 1.0)
    heard = [Word("made", 0.0, 0.4), Word("amiable", 0.5, 1.4), Word("himself.", 1.5, 1.9), Word("came", 2.0, 2.4)]
    # "came" starts after the last committed word ends: the first pass has not committed it yet
    assert align(words, heard, first=3) == [(4, 6, [Word("amiable", 0.5, 1.4)])]


def test_align_leaves_the_ends_of_the_span_alone() -> None:
    """A cut word at the buffer's start heard as a word of its own, a last word the second decode timed later or
    heard otherwise: the two decodes were given different things there, so neither end is revised."""
    words = committed("then this leaves team viewer with an average", 1.0)
    assert align(words, timed("And then this leaves team viewer with an average")) == []
    assert align(committed("Jamie is going to see him.", 1.0), timed("Jamie is going to see")) == []
    assert align(committed("is going to see him.", 1.0), timed("is going to see them")) == []


def test_align_sees_no_difference_in_punctuation_or_case() -> None:
    assert align(committed("Hello, world.", 1.0), timed("hello world")) == []


def test_a_revision_in_time_rewrites_the_words_and_one_too_late_does_not() -> None:
    audio = np.zeros(3 * SAMPLE_RATE, np.float32)
    for decode_s, expected in ((0.3, "made amiable himself"), (1.5, "made am you himself")):
        second = SecondPass(lambda _audio: timed("made amiable himself"), speak_after_s=1.0, timer=Ticks(decode_s))
        second.add(committed("made am you himself", commit_s=2.0))
        revisions = second.revise(audio, 0.0, now_s=2.0)
        assert " ".join(w.text for w in second.words) == expected
        assert len(revisions) == (1 if decode_s < 1.0 else 0)
        assert second.late == (0 if decode_s < 1.0 else 1)
        assert second.words_revised == (2 if decode_s < 1.0 else 0)
        if revisions:
            assert revisions[0].start == 1 and revisions[0].stop == 3
            assert all(w.commit_s == 2.0 for w in second.words)  # a revised word takes the place of those it replaced


def test_words_the_voice_has_spoken_stay_as_they_were() -> None:
    second = SecondPass(lambda _audio: timed("the sick corpus I have a cold and"), timer=Ticks(0.1))
    second.add(committed("this is", commit_s=0.0) + committed("the sic form", commit_s=0.0, start_s=1.0))
    second.add(committed("I have implies and", commit_s=3.0, start_s=2.5))
    # the whole buffer decoded again at 3 s: "the sic form" was committed 3 s ago and spoken; the rest was not
    second.revise(np.zeros(5 * SAMPLE_RATE, np.float32), 0.0, now_s=3.0)
    assert " ".join(w.text for w in second.words) == "this is the sic form I have a cold and"
    assert second.late == 1


def test_a_request_while_the_last_decode_runs_is_skipped() -> None:
    calls = []

    def decode(audio: np.ndarray) -> list[Word]:
        calls.append(audio.size)
        return timed("a b c")

    second = SecondPass(decode, timer=Ticks(0.8))
    second.add(committed("a b x", commit_s=1.0))
    audio = np.zeros(2 * SAMPLE_RATE, np.float32)
    second.revise(audio, 0.0, now_s=1.0)
    second.add(committed("d", commit_s=1.5, start_s=1.5))
    assert second.revise(audio, 0.0, now_s=1.5) == []  # busy until 1.8 s
    assert len(calls) == 1 and second.busy_until_s == 1.8
