"""Per-frame power and the speech level read from it, shared by the recognizer's quiet-tail rule and the echo bench."""

from __future__ import annotations

import numpy as np
import pytest

from engine.asr.speech_filter import LEVEL_FRAME_S, frame_levels_db
from engine.audio.levels import frame_power, speech_level


def test_frame_power_is_each_whole_frames_mean_square_and_leaves_a_partial_frame_out() -> None:
    audio = np.concatenate([np.full(320, 0.5), np.full(320, -0.1), np.full(100, 1.0)]).astype(np.float32)
    assert frame_power(audio) == pytest.approx([0.25, 0.01])
    frame = int(LEVEL_FRAME_S * 16000)
    levels = np.array([0.5**2] * frame + [0.1**2] * frame + [1.0] * (frame // 2))
    assert frame_levels_db(np.sqrt(levels).astype(np.float32)) == pytest.approx(10 * np.log10([0.25, 0.01]), abs=1e-6)


def test_speech_level_reads_the_loud_frames_and_is_zero_for_silence_or_nothing() -> None:
    speech, pause = np.full(3200, 0.1, np.float32), np.full(3200, 1e-4, np.float32)  # the pause 60 dB down
    assert speech_level(np.concatenate([speech, pause])) == pytest.approx(0.1)
    assert speech_level(np.full(100, 0.2, np.float32)) == pytest.approx(0.2)  # shorter than a frame: all of it
    assert speech_level(np.zeros(640, np.float32)) == 0.0
    assert speech_level(np.zeros(0, np.float32)) == 0.0
