"""Where words were lost between decodes, on scripted hypotheses: pieces of one word, a committed word Whisper
stretched over the next one, a number still being written, a sentence Whisper marked as cut off."""

from __future__ import annotations

import numpy as np

from engine.asr.backend import SAMPLE_RATE
from engine.asr.commit import make_commit_policy
from engine.asr.stream_values import StreamConfig
from engine.asr.streaming import StreamingRecognizer
from engine.asr.whisper_backend import join_pieces
from engine.asr.words import Word

STEP_S = 0.5


class Script:
    """Hypothesis ``n`` of the script at call ``n`` (the last one after that): words on the source clock, given back
    for the part of them inside the buffer, timed from its start."""

    name = "script"

    def __init__(self, hypotheses: list[list[tuple[str, float, float]]]) -> None:
        self.hypotheses = hypotheses
        self.calls = 0
        self.recognizer: StreamingRecognizer | None = None

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list[Word]:
        assert self.recognizer is not None
        said = self.hypotheses[min(self.calls, len(self.hypotheses) - 1)]
        self.calls += 1
        offset = self.recognizer._offset_s
        end = offset + audio.size / SAMPLE_RATE
        return [Word(t, a - offset, b - offset) for t, a, b in said if a >= offset - 1e-6 and b <= end + 1e-6]


def stream(hypotheses: list[list[tuple[str, float, float]]], seconds: float, config: StreamConfig | None = None):
    backend = Script(hypotheses)
    recognizer = StreamingRecognizer(backend, make_commit_policy("la2"), vad=None, config=config)  # type: ignore[arg-type]
    backend.recognizer = recognizer
    steps = []
    for n in range(int(seconds / STEP_S)):
        recognizer.insert_audio(np.zeros(int(STEP_S * SAMPLE_RATE), np.float32))
        steps.append(recognizer.step((n + 1) * STEP_S))
    return recognizer, steps


def texts(recognizer: StreamingRecognizer) -> list[str]:
    return [w.text for w in recognizer.committed]


def test_pieces_whisper_split_off_a_word_are_joined_back() -> None:
    raw = [
        (" At", 0.0, 0.2),
        (" 627", 0.3, 0.7),
        (",000", 0.7, 0.9),
        (" subscribers,", 0.9, 1.5),
        (" 7", 1.6, 1.8),
        ("%", 1.8, 2.0),
        (" cold", 2.1, 2.4),
        ("-hearted.", 2.4, 2.8),
        (" 15", 2.9, 3.1),
        (".1", 3.1, 3.3),
    ]
    words = join_pieces(raw)
    assert [w.text for w in words] == ["At", "627,000", "subscribers,", "7%", "cold-hearted.", "15.1"]
    assert (words[1].start_s, words[1].end_s) == (0.3, 0.9)
    assert join_pieces([("-", 0.0, 0.1), (" so", 0.1, 0.3)])[0].text == "-"  # nothing before it to join


def test_a_word_after_a_committed_word_stretched_over_it_is_not_lost() -> None:
    """Whisper timed "that" over the start of "next" when "next" was the last sound in the buffer; committed so, the
    next hypothesis (with "that" ending where "next" starts) lost "next" when new words were found by time."""
    early = [("I", 0.1, 0.3), ("hope", 0.3, 0.6), ("that", 0.6, 1.4)]
    later = [("I", 0.1, 0.3), ("hope", 0.3, 0.6), ("that", 0.6, 0.9), ("next", 0.95, 1.3), ("year.", 1.3, 1.8)]
    recognizer, _ = stream([early] * 5 + [later], 4.0)
    assert texts(recognizer) == ["I", "hope", "that", "next", "year."]
    starts = [w.start_s for w in recognizer.committed]
    assert starts == sorted(starts)  # in the order said, however the later decode timed them


def test_a_number_still_being_written_is_not_committed() -> None:
    """Said slowly, "twenty twenty-one": Whisper writes "20", then "20 20", then "2021"; "20" must not be committed
    while it is the end of the hypothesis."""
    start = [("in", 0.1, 0.3)]
    hypotheses = [
        start + [("20", 0.4, 0.8)],
        start + [("20", 0.4, 0.8)],
        start + [("20", 0.4, 0.8), ("20", 0.9, 1.2)],
        start + [("20", 0.4, 0.8), ("20", 0.9, 1.2)],
        start + [("2021", 0.4, 1.5), ("we", 1.6, 1.8)],
        start + [("2021", 0.4, 1.5), ("we", 1.6, 1.8), ("achieved", 1.9, 2.4)],
    ]
    recognizer, _ = stream(hypotheses, 5.0)
    assert texts(recognizer)[:3] == ["in", "2021", "we"]
    off, _ = stream(hypotheses, 5.0, StreamConfig(hold_unfinished=False))
    assert texts(off)[:2] == ["in", "20"]  # what was committed before


def test_a_word_whisper_marked_as_cut_off_waits_and_is_not_a_sentence_end() -> None:
    """A word such as "to..." is Whisper's mark of speech cut off at the buffer's end: not committed while last, and
    never the sentence end the buffer is trimmed at (the next words were decoded without the start of their
    sentence)."""
    words = [(f"w{i}", 0.1 + 0.4 * i, 0.4 + 0.4 * i) for i in range(30)]
    cut_off = [words[:3] + [("to...", 1.3, 1.6)]] * 6
    whole = [words[:3] + [("to...", 1.3, 1.6)] + words[4:]]
    recognizer, steps = stream(cut_off + whole, 12.0, StreamConfig(trim_s=4.0))
    committed_by_step = [[w.text for w in s.committed] for s in steps]
    assert all("to..." not in c for c in committed_by_step[:6])  # the last word of six hypotheses
    assert recognizer._offset_s > 0  # trimmed, but not at the end of "to..." (1.6 s)
    assert abs(recognizer._offset_s - 1.6) > 0.01
