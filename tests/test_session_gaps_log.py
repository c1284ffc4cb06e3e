"""A session's underruns say their cause in the log (and its file), where a researcher or a bug report finds them."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from engine.pipeline.records import WordRecord
from engine.pipeline.summary import SessionFigures
from engine.tts.pieces import AudioPiece

RATE = 16000


def piece(chunk: int) -> AudioPiece:
    return AudioPiece(np.zeros(RATE // 2, np.float32), RATE, 0, chunk, (), 0.05, 0.05, False)


def word(text: str, forced: bool = False) -> list[WordRecord]:
    return [WordRecord(0, 0, text, 0.0, 0.3, 0.0, forced=forced)]


def test_an_underrun_is_logged_with_its_notice_compute_and_a_forced_word(caplog: pytest.LogCaptureFixture) -> None:
    figures = SessionFigures()
    with caplog.at_level(logging.INFO, logger="engine.pipeline.summary"):
        figures.played(piece(0), word("one"), 0.0, 1.0, 0.0, computed=True, compute_s=0.1)
        # its words came 0.05 s before the voice ran out and took 0.3 s to make: an underrun of 0.2 s
        figures.played(piece(1), word("two", forced=True), 1.2, 2.0, 0.95, computed=True, compute_s=0.3)
        # its words came after the voice ran out: the speaker's pace (starved), not an underrun
        figures.played(piece(2), word("three"), 2.5, 3.0, 2.2, computed=True, compute_s=0.1)
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("underrun")]
    assert said == [
        "underrun: 0.200 s of silence at 1.00 s before 'two', its words in 0.050 s earlier, its compute 0.300 s, "
        "a word the hold bound committed"
    ]
    assert figures.gaps.underruns == 1 and figures.gaps.starved_s == pytest.approx(0.5)
