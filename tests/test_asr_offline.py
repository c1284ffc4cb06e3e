"""Offline recognition of long recordings: windows cut at quiet moments."""

from __future__ import annotations

import numpy as np

from engine.asr.offline import cut_points, transcribe_long
from engine.asr.words import Word


def test_cuts_fall_in_the_quiet_parts() -> None:
    rng = np.random.default_rng(0)
    audio = (0.3 * rng.standard_normal(16000 * 45)).astype(np.float32)
    for quiet_s in (17.0, 33.0):  # 300 ms of near-silence inside each search range
        audio[int(quiet_s * 16000) : int((quiet_s + 0.3) * 16000)] *= 0.001
    cuts = cut_points(audio, max_window_s=20.0)
    assert cuts[-1] == audio.size and len(cuts) == 3
    assert 17.0 <= cuts[0] / 16000 <= 17.3 and 33.0 <= cuts[1] / 16000 <= 33.3
    assert cut_points(audio[: 16000 * 5]) == [16000 * 5]


class _Echo:
    """Returns one word per call, timed at the window's start, to check the time offsets."""

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list[Word]:
        return [Word(f"w{audio.size}", 0.1, 0.2)]


def test_word_times_are_on_the_recording_clock() -> None:
    audio = np.zeros(16000 * 50, np.float32)
    audio[::7] = 0.5  # loud everywhere except where we make it quiet
    audio[16000 * 18 : 16000 * 18 + 3200] = 0.0
    words = transcribe_long(_Echo(), audio, max_window_s=20.0)
    assert len(words) == 3 and words[0].start_s == 0.1
    assert 18.0 < words[1].start_s < 18.4 and words[1].start_s < words[2].start_s
