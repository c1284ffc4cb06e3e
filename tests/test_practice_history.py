"""The practice history: attempts kept per source (by content), read back oldest first, a broken line skipped."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.cli.practice import history_text
from engine.practice import history


def _report(evs: float, accuracy: float) -> dict:
    return {"evs_s": {"median": evs, "p90": evs + 0.5}, "accuracy": accuracy, "missed_words": 2, "words": [{"x": 1}]}


def test_attempts_are_kept_per_source_by_content_and_read_back_in_order(data_dir: Path, tmp_path: Path) -> None:
    source, other = tmp_path / "a.wav", tmp_path / "b.wav"
    source.write_bytes(b"one recording")
    other.write_bytes(b"another recording")
    history.record(_report(2.5, 0.7), source, now=1000.0)
    history.record(_report(1.0, 0.2), other, now=1500.0)
    history.record(_report(2.0, 0.8), source, now=2000.0)
    moved = tmp_path / "moved.wav"
    shutil.move(source, moved)  # renamed: the history follows the content
    entries = history.attempts(moved)
    assert [e["evs_median_s"] for e in entries] == [2.5, 2.0] and [e["accuracy"] for e in entries] == [0.7, 0.8]
    assert "words" not in entries[0] and entries[0]["task"] == "shadow"
    assert history.history_path().parent == data_dir
    text = history_text(entries)
    assert text.count("\n") == 1 and "EVS median 2.00 s" in text and "accuracy 80%" in text


def test_a_broken_line_is_skipped(data_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "a.wav"
    source.write_bytes(b"one recording")
    history.record(_report(2.5, 0.7), source)
    with open(history.history_path(), "a", encoding="utf-8") as handle:
        handle.write('{"at": 12, "source_sha')  # a crash mid-write
    history.record(_report(2.0, 0.9), source)
    assert [e["accuracy"] for e in history.attempts(source)] == [0.7, 0.9]
    assert history_text([]) == "no attempt at this recording yet"


def test_each_attempt_is_one_line(data_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "a.wav"
    source.write_bytes(b"one recording")
    for _ in range(3):
        history.record(_report(2.5, 0.7), source)
    assert len(history.history_path().read_text().splitlines()) == 3
