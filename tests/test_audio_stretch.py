"""The source slowed or sped up with its pitch kept (FFmpeg's atempo), for real."""

from __future__ import annotations

import numpy as np
import pytest

from engine.audio.stretch import SpeedError, check_speed, stretch

RATE = 16000


def _peak_hz(audio: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(audio.size)))
    return float(np.fft.rfftfreq(audio.size, 1 / RATE)[int(np.argmax(spectrum))])


@pytest.mark.parametrize("speed", [0.5, 0.75, 1.25])
def test_a_tone_stretched_is_longer_or_shorter_and_keeps_its_pitch(speed: float) -> None:
    t = np.arange(2 * RATE) / RATE
    tone = (0.3 * np.sin(2 * np.pi * 220.0 * t)).astype(np.float32)
    played = stretch(tone, RATE, speed)
    assert played.dtype == np.float32 and played.size == round(tone.size / speed)
    assert _peak_hz(played[RATE // 4 : -RATE // 4]) == pytest.approx(220.0, abs=3.0)


def test_a_click_lands_where_its_time_over_the_speed_says() -> None:
    audio = np.zeros(3 * RATE, np.float32)
    audio[int(1.5 * RATE) : int(1.6 * RATE)] = 0.5 * np.sin(np.arange(int(0.1 * RATE)) * 0.3)
    played = stretch(audio, RATE, 0.6)
    loud = np.flatnonzero(np.abs(played) > 0.05)
    assert loud[0] / RATE == pytest.approx(1.5 / 0.6, abs=0.05)


def test_one_times_is_the_recording_itself_and_a_speed_out_of_range_is_refused() -> None:
    audio = np.ones(100, np.float32)
    assert stretch(audio, RATE, 1.0) is audio
    for bad in (0.4, 1.3, 0.0):
        with pytest.raises(SpeedError, match="between 0.5x and 1.25x"):
            check_speed(bad)
