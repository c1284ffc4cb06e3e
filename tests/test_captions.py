"""Captions of a session: cues cut at sentences, pauses and full lines; SRT and WebVTT that strict parsers read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import srt
import webvtt

from engine.pipeline.captions import (
    LINE_CHARS,
    MIN_CUE_S,
    TimedWord,
    cues,
    plain_text,
    read_transcript,
    srt_text,
    vtt_text,
    write_captions,
)


def _words(text: str, start: float = 0.0, step: float = 0.3) -> list[TimedWord]:
    return [TimedWord(w, start + i * step, start + i * step + 0.25) for i, w in enumerate(text.split())]


def test_a_cue_ends_at_a_sentence_end() -> None:
    items = cues(_words("Hello there. How are you?"))
    assert [c.text for c in items] == ["Hello there.", "How are you?"]
    assert items[0].start_s == 0.0 and items[0].end_s == pytest.approx(0.55)
    assert items[1].start_s == pytest.approx(0.6)


def test_a_pause_between_words_starts_a_new_cue() -> None:
    words = _words("and so we went") + _words("on and on", start=5.0)
    assert [c.text for c in cues(words)] == ["and so we went", "on and on"]


def test_lines_hold_at_most_42_characters_and_a_cue_two_lines() -> None:
    text = " ".join(["word"] * 60)  # one sentence, no pause: only the line length cuts it
    items = cues(_words(text, step=0.2))
    assert len(items) > 1
    for cue in items:
        assert 1 <= len(cue.lines) <= 2
        assert all(len(line) <= LINE_CHARS for line in cue.lines)
    assert " ".join(c.text.replace("\n", " ") for c in items) == text
    for a, b in zip(items, items[1:], strict=False):
        assert a.end_s <= b.start_s  # cues never overlap


def test_a_short_cue_is_shown_long_enough_but_never_over_the_next() -> None:
    words = [TimedWord("Yes.", 1.0, 1.1), TimedWord("No.", 1.3, 1.6)]
    first, second = cues(words)
    assert first.end_s == pytest.approx(1.3)  # held past its 0.1 s, cut where the next starts
    assert second.end_s == pytest.approx(1.3 + MIN_CUE_S)


def test_srt_and_webvtt_parse_with_the_cue_times() -> None:
    items = cues(_words("One two three. Four five six seven eight.", start=3661.5))
    parsed = list(srt.parse(srt_text(items), ignore_errors=False))
    assert [p.content for p in parsed] == [c.text for c in items]
    assert parsed[0].start.total_seconds() == pytest.approx(3661.5)
    vtt = webvtt.from_string(vtt_text(items))
    assert [c.text for c in vtt.captions] == [c.text for c in items]
    assert vtt.captions[0].start == "01:01:01.500"


def test_no_words_give_empty_captions_that_still_parse() -> None:
    assert list(srt.parse(srt_text([]))) == []
    assert webvtt.from_string(vtt_text([])).captions == []
    assert plain_text([]) == ""


def test_plain_text_puts_a_sentence_a_line() -> None:
    assert plain_text(_words("It rained. We stayed in and read")) == "It rained.\nWe stayed in and read\n"


def _event(kind: str, sentence: int, index: int, text: str, start: float, **extra: float) -> dict:
    return {
        "event": kind,
        "sentence": sentence,
        "index": index,
        "text": text,
        "source_start_s": start,
        "source_end_s": start + 0.3,
        **extra,
    }


def test_a_recorded_session_gets_captions_and_text_even_after_a_crash_cut_a_line(tmp_path: Path) -> None:
    lines = [
        _event("committed", 0, 0, "Good", 0.5),
        _event("committed", 0, 1, "morning.", 0.9),
        _event("spoken", 0, 0, "Good", 0.5, speak_start_s=2.0, speak_end_s=2.3),
        _event("spoken", 0, 1, "morning.", 0.9, speak_start_s=2.3, speak_end_s=2.8),
        _event("committed", 1, 0, "Bye", 4.0),  # committed, never spoken (the session was cancelled)
    ]
    text = "".join(json.dumps(e) + "\n" for e in lines) + '{"event": "spok'  # the last line cut short
    (tmp_path / "transcript.jsonl").write_text(text, encoding="utf-8")
    committed, spoken = read_transcript(tmp_path / "transcript.jsonl")
    assert [e["text"] for e in committed] == ["Good", "morning.", "Bye"]
    assert [e["text"] for e in spoken] == ["Good", "morning."]
    names = {p.name for p in write_captions(tmp_path)}
    assert names == {"heard.srt", "heard.vtt", "spoken.srt", "spoken.vtt", "transcript.txt"}
    heard = list(srt.parse((tmp_path / "heard.srt").read_text(encoding="utf-8")))
    assert [h.content for h in heard] == ["Good morning.", "Bye"]
    said = webvtt.read(str(tmp_path / "spoken.vtt")).captions
    assert [(c.start, c.end, c.text) for c in said] == [("00:00:02.000", "00:00:02.800", "Good morning.")]
    assert (tmp_path / "transcript.txt").read_text(encoding="utf-8") == "Good morning.\nBye\n"
