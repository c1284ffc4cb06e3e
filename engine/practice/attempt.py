"""``liveshadow practice SOURCE --voice ATTEMPT.wav``: a recorded attempt at shadowing SOURCE, scored word by word.

Both recordings are recognized whole with word times (``transcribe_long``), in the attempt's language: English with
the bundled tiny.en, any other language Whisper knows with the multilingual base model transcribing it (no voice in
that language is needed).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.asr.backend import AsrBackend, AsrError
from engine.asr.offline import transcribe_long
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.audio.stretch import check_speed
from engine.metrics import machine_info
from engine.practice.reference import source_words
from engine.practice.score import score
from engine.practice.sentences import (
    SENTENCE_MODE,
    PlayedSentence,
    played_sentences,
    program_words,
    score_sentences,
    split_sentences,
)

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000
# A decode of a whole window (up to 20 s) may write this many tokens; a streaming step's bound (96) cut an attempt of
# 18.7 s ten words short. (Windows of 10 s instead lost context: the machine's sonnet scored 0.58 against 0.75.)
MAX_TOKENS = 224


def load_recognizer(language: str, threads: int = 2) -> AsrBackend:
    """tiny.en for English; the multilingual base model transcribing ``language`` for any other."""
    from engine.asr.whisper_backend import WhisperBackend

    if language == "en":
        return WhisperBackend(threads=threads, max_new_tokens=MAX_TOKENS)
    from engine.asr import whisper_base_model

    folder = str(whisper_base_model.model_dir())
    return WhisperBackend(folder, threads=threads, language=language, task="transcribe", max_new_tokens=MAX_TOKENS)


def practice_file(
    source: Path,
    attempt: Path,
    language: str = "en",
    offset_s: float = 0.0,
    backend: AsrBackend | None = None,
    speed: float = 1.0,
    sentence_by_sentence: bool = False,
) -> dict:
    """The report of one recorded attempt (``score.PracticeScore.report`` keys, and where each part came from).
    ``offset_s``: when the attempt's recording began, in seconds after the source began. ``speed``: the source was
    played at this speed (``audio.stretch``): every time is on the source's clock as played. ``sentence_by_sentence``:
    it was played a sentence at a time with a pause to repeat it (``sentences``), each sentence scored."""
    speed = check_speed(speed)
    source_audio, attempt_audio = load_audio(source), load_audio(attempt)
    if not attempt_audio.size:
        raise AsrError(f"{attempt} holds no audio")
    backend = backend if backend is not None else load_recognizer(language)
    t0 = time.perf_counter()
    words, origin = source_words(source, transcribe_long(backend, source_audio), language)
    words, played_s = as_played(words, speed), source_audio.size / SAMPLE_RATE / speed
    played = None
    if sentence_by_sentence:  # the program the attempt was recorded against, made again (it depends on the words)
        played = played_sentences(split_sentences(words, played_s), SAMPLE_RATE)
        words, played_s = program_words(played), played[-1].end_s if played else played_s
    report = score_recording(words, attempt_audio, backend, language, offset_s, played)
    report.update({
        "command": "practice", "source": str(source), "attempt": str(attempt), "source_words_from": origin,
        "source_s": played_s, "speed": speed,
        "recognizer_compute_s": time.perf_counter() - t0,
    })  # fmt: skip
    log.info("scored %s against %s: %d said of %d", attempt, source, report["evs_s"]["n"], len(words))
    return report


def as_played(words: list[Word], speed: float) -> list[Word]:
    """The source's words timed on its clock as played at ``speed`` (the source recognized at its own speed hears
    better than slowed)."""
    if speed == 1.0:
        return words
    return [Word(w.text, w.start_s / speed, w.end_s / speed) for w in words]


def score_recording(
    source: list[Word],
    attempt_audio: np.ndarray,
    backend: AsrBackend,
    language: str = "en",
    offset_s: float = 0.0,
    sentences: Sequence[PlayedSentence] | None = None,
) -> dict:
    """An attempt's audio (16 kHz) recognized whole and scored against the source's timed words; ``sentences``: the
    source played sentence by sentence (``sentences.played_sentences``; ``source`` its words), each scored too."""
    if not attempt_audio.size:
        raise AsrError("the attempt holds no audio")
    t0 = time.perf_counter()
    said = transcribe_long(backend, attempt_audio)
    report = score(source, said, offset_s, language).report()
    if sentences is not None:
        moved = [Word(w.text, w.start_s + offset_s, w.end_s + offset_s) for w in said]
        report.update(score_sentences(sentences, moved, language), mode=SENTENCE_MODE)
    report.update({
        "language": language, "offset_s": offset_s, "attempt_s": attempt_audio.size / SAMPLE_RATE,
        "source_text": " ".join(w.text for w in source), "attempt_text": " ".join(w.text for w in said),
        "recognizer_compute_s": time.perf_counter() - t0, "machine": machine_info(),
    })  # fmt: skip
    return report
