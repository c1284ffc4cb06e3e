"""``bench asr --ablate``: the streaming recognizer's own segments decoded several ways, by length and position."""

from __future__ import annotations

import pytest

from engine.asr.ablation import (
    POSITIONS,
    ROWS,
    Row,
    buffer_segments,
    format_ablation,
    position_pairs,
    reference_times,
    run_ablation,
)
from engine.asr.words import Word

pytestmark = pytest.mark.untimed  # the slow tests' results do not depend on the machine's speed

SR = 16000


def test_segments_are_the_spans_between_the_places_the_buffer_started_at() -> None:
    starts = [0.0, 0.0, 2.5, 2.5, 6.0, 10.0]  # a step's buffer start; 10 s is the end of the audio
    assert buffer_segments(starts, 10 * SR) == [(0, 2.5 * SR), (2.5 * SR, 6 * SR), (6 * SR, 10 * SR)]
    assert buffer_segments([], 3 * SR) == [(0, 3 * SR)]


def test_reference_words_are_timed_by_the_words_matched_to_them_and_untimed_ones_by_the_last_before() -> None:
    timed = [Word("so", 0.0, 0.2), Word("tim", 0.3, 0.5), Word("went", 4.0, 4.4)]
    assert reference_times("SO TIM XX WENT", timed) == [("SO", 0.1), ("TIM", 0.4), ("XX", 0.4), ("WENT", 4.2)]


def test_words_are_scored_by_where_they_fall_in_their_segment() -> None:
    segments = [(0, 5 * SR), (5 * SR, 12 * SR)]
    reference = [("a", 0.5), ("b", 4.0), ("c", 5.5), ("d", 9.0)]
    words = [Word("a", 0.4, 0.6), Word("x", 3.9, 4.1), Word("c", 5.4, 5.6), Word("d", 8.9, 9.1)]
    pairs = position_pairs(reference, words, segments)
    first, later = (pairs[p] for p in POSITIONS)
    assert first == (["a", "c"], ["a", "c"])  # the first 3 s of each segment
    assert later == (["b", "d"], ["x", "d"])


def test_the_rows_cover_what_the_issue_separates() -> None:
    names = {row.name for row in ROWS}
    for beam in ("", "_beam5"):
        assert {f"segments_stock{beam}", f"segments_full{beam}", f"segments_cropped{beam}"} <= names
        assert {f"segments_context{n}s{beam}" for n in (5, 10, 20)} <= names
    assert {"stock_offline", "stock_offline_beam5", "la2"} <= names


@pytest.mark.slow
def test_the_ablation_runs_for_real_on_three_short_clips(speech_manifest, speech_dir) -> None:
    from engine.asr.vad import SileroVad
    from engine.asr.whisper_backend import WhisperBackend
    from engine.audio.io import load_audio

    entries = [e for e in speech_manifest if e["id"] in ("vctk_p225_002", "librivox_ss_0880", "ls_61-70968-0000")]
    audio = {e["id"]: load_audio(speech_dir / e["wav"]) for e in entries}
    rows = (
        Row("stock_offline", "stock", whole=True),
        Row("segments_full", "step", window="full"),
        Row("segments_cropped", "step"),
        Row("segments_context5s", "step", window="context", floor_s=5.0),
        Row("la2", "la2"),
    )
    report = run_ablation(entries, audio, WhisperBackend(), SileroVad(), rows=rows)
    assert set(report["rows"]) == {r.name for r in rows}
    words = sum(len(e["text"].split()) for e in entries)
    assert sum(report["reference_words"]["by_position"].values()) == words
    assert report["recordings"]["under 10 s"] == 3
    for name, row in report["rows"].items():
        assert 0 <= row["wer"] < 0.3, (name, row["texts"])  # clean read speech: every way hears most words
        assert row["by_length"]["under 10 s"] == pytest.approx(row["wer"])
        assert row["rtf"] > 0
    assert "segments_cropped" in format_ablation(report)
