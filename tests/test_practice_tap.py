"""The recording tap of a live practice (what it keeps, where it puts the capture's zero) and the move of a recording
onto the source's clock; a fake capture (the real ones: tests/test_practice_live.py, tests/test_practice_heard.py)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from engine.asr.backend import AsrError
from engine.audio.capture import BlockQueue
from engine.audio.io import load_audio
from engine.practice.live_common import ATTEMPT_FILE, SAMPLE_RATE, LiveSessionBase, as_kept, on_source_clock
from engine.practice.tap import RecordingTap


def _queue_with(*blocks: np.ndarray) -> BlockQueue:
    queue = BlockQueue(16000, 0.1, 10.0)
    for block in blocks:
        queue._enqueue(block.astype(np.float32))
    return queue


def test_the_tap_keeps_what_it_reads_up_to_its_bound_and_places_the_zero_by_the_earliest_arrival() -> None:
    tap = RecordingTap(_queue_with(np.full(1600, 0.5), np.zeros(1600), np.full(1600, 0.25)), max_s=0.25)
    before = time.monotonic()
    first = tap.read(timeout=0)
    assert first is not None and tap.origin is not None
    assert before - 0.1 <= tap.origin <= time.monotonic() - 0.1  # the block's end arrived now
    assert tap.last_loud is not None and tap.level_db > -10
    zero = tap.origin
    blocks = tap.read_available()
    assert len(blocks) == 2 and tap.full and tap.recorded.size == 4000  # 0.25 s kept, no more
    assert np.all(tap.recorded[:1600] == 0.5) and np.all(tap.recorded[3200:] == 0.25)
    assert tap.origin <= zero  # read later than the first, the next blocks do not move the zero later


def test_a_recording_moves_onto_the_source_clock() -> None:
    recorded = np.arange(1, 16001, dtype=np.float32)
    late = on_source_clock(recorded, 0.5)  # the microphone opened 0.5 s after the source began: silence first
    assert late.size == 24000 and not late[:8000].any() and late[8000] == 1
    early = on_source_clock(recorded, -0.25)  # it opened before: what it heard before the source is cut
    assert early.size == 12000 and early[0] == 4001
    with pytest.raises(AsrError, match="never heard"):
        on_source_clock(recorded, None)


def test_what_a_session_scores_is_what_its_kept_file_reads_back(tmp_path: Path) -> None:
    audio = np.random.default_rng(1).normal(0.0, 0.2, SAMPLE_RATE).astype(np.float32)
    session = LiveSessionBase(tmp_path, "en", interpret=False)
    report: dict = {}
    session._keep(report, {ATTEMPT_FILE: audio})
    scored = as_kept(audio)
    assert scored.dtype == np.float32 and np.array_equal(scored, load_audio(report["attempt"]))
    assert not np.array_equal(scored, audio)  # 16 bits: not the float the microphone gave
