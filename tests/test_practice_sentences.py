"""Sentence by sentence: the source cut in sentences between words, the program of sentences and pauses, and each
sentence scored on what was said in its own pause (fakes: timed words; the real session is in
test_practice_sentences_live)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.asr.words import Word
from engine.practice.sentences import (
    MAX_SENTENCE_S,
    REPEAT_MARGIN_S,
    played_sentences,
    program_audio,
    program_words,
    score_sentences,
    split_sentences,
)

RATE = 100  # samples per second: the tiling is checked to the sample


def _words(*spec: tuple[str, float, float]) -> list[Word]:
    return [Word(t, a, b) for t, a, b in spec]


SOURCE = _words(
    ("The", 0.5, 0.7), ("cat", 0.8, 1.1), ("sat.", 1.2, 1.6), ("Then", 2.4, 2.6), ("it", 2.7, 2.8), ("slept?", 2.9, 3.4)
)


def test_sentences_end_at_their_punctuation_and_tile_the_recording_cut_between_words() -> None:
    sentences = split_sentences(SOURCE, 4.0)
    assert [s.text for s in sentences] == ["The cat sat.", "Then it slept?"]
    assert sentences[0].start_s == 0.0 and sentences[-1].end_s == 4.0
    assert sentences[0].end_s == sentences[1].start_s == pytest.approx(2.0)  # halfway through the pause


def test_a_long_piece_without_punctuation_is_cut_at_its_longest_pause() -> None:
    words = [Word(f"w{i}", i * 0.5, i * 0.5 + 0.4) for i in range(12)]  # 6 s of words
    words += [Word(f"v{i}", 7.0 + i * 0.5, 7.0 + i * 0.5 + 0.4) for i in range(12)]  # a 1.1 s pause, 6 s more
    sentences = split_sentences(words, 13.5)
    assert [len(s.words) for s in sentences] == [12, 12]
    assert all(s.words[-1].end_s - s.words[0].start_s <= MAX_SENTENCE_S for s in sentences)
    assert split_sentences([], 3.0) == []


def test_the_program_plays_each_sentence_then_a_pause_as_long_as_it_and_its_words_move_with_it() -> None:
    sentences = split_sentences(SOURCE, 4.0)
    audio = np.arange(400, dtype=np.float32) + 1.0  # every sample its own value
    played = played_sentences(sentences, RATE)
    out = program_audio(audio, RATE, sentences)
    assert out.size == round(played[-1].end_s * RATE)
    first, second = played
    assert first.end_s == pytest.approx(2.0 + 2.0 + REPEAT_MARGIN_S)  # 2 s of audio, a pause of 2 s + the margin
    assert np.all(out[:200] == audio[:200]) and np.all(out[200 : round(first.end_s * RATE)] == 0)
    start = round(second.start_s * RATE)
    assert np.all(out[start : start + 200] == audio[200:400])
    assert second.words[0].start_s == pytest.approx(second.start_s + 0.4)  # "Then" 0.4 s into its sentence's audio
    assert [w.text for w in program_words(played)] == [w.text for w in SOURCE]


def test_each_sentence_is_scored_on_what_was_said_in_its_pause() -> None:
    played = played_sentences(split_sentences(SOURCE, 4.0), RATE)
    first, second = played
    # the first sentence repeated whole 0.5 s after it ended; of the second only "Then" and "slept"
    said = [
        Word(
            w.text,
            w.start_s - first.words[0].start_s + first.speech_end_s + 0.5,
            w.end_s - first.words[0].start_s + first.speech_end_s + 0.5,
        )
        for w in first.words
    ]
    said += [
        Word("then", second.speech_end_s + 0.3, second.speech_end_s + 0.5),
        Word("slept", second.speech_end_s + 0.8, second.speech_end_s + 1.2),
    ]
    report = score_sentences(played, said)
    one, two = report["sentences"]
    assert one["accuracy"] == 1.0 and one["started_after_s"] == pytest.approx(0.5) and one["missed"] == []
    assert two["missed"] == ["it"] and two["accuracy"] == pytest.approx(2 / 3)
    assert two["started_after_s"] == pytest.approx(0.3)
    assert report["sentences_said"] == 2 and report["started_after_s"]["median"] == pytest.approx(0.4)
    nothing = score_sentences(played, [])
    assert nothing["sentences_said"] == 0 and nothing["sentences"][0]["started_after_s"] is None
