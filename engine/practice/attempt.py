"""``liveshadow practice SOURCE --voice ATTEMPT.wav``: a recorded attempt at shadowing SOURCE, scored word by word.

Both recordings are recognized whole with word times (``transcribe_long``), in the attempt's language: English with
the bundled tiny.en, any other language Whisper knows with the multilingual base model transcribing it (no voice in
that language is needed).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from engine.asr.backend import AsrBackend, AsrError
from engine.asr.offline import transcribe_long
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.audio.stretch import check_speed
from engine.metrics import machine_info
from engine.practice.loop import Loop
from engine.practice.program import Program, make_program
from engine.practice.reference import source_words
from engine.practice.score import score

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
    loop: Loop | None = None,
) -> dict:
    """The report of one recorded attempt (``score.PracticeScore.report`` keys, and where each part came from).
    ``offset_s``: when the attempt's recording began, in seconds after the source began. ``speed``: the source was
    played at this speed (``audio.stretch``): every time is on the source's clock as played. ``sentence_by_sentence``:
    it was played a sentence at a time with a pause to repeat it (``sentences``), each sentence scored; ``loop``: a
    stretch of it was played again and again (``loop``), each pass scored. The program is made again from the source
    as the live session made it."""
    speed = check_speed(speed)
    source_audio, attempt_audio = load_audio(source), load_audio(attempt)
    if not attempt_audio.size:
        raise AsrError(f"{attempt} holds no audio")
    backend = backend if backend is not None else load_recognizer(language)
    t0 = time.perf_counter()
    words, origin = source_words(source, transcribe_long(backend, source_audio), language)
    words, played_s = as_played(words, speed), source_audio.size / SAMPLE_RATE / speed
    program = make_program(words, played_s, SAMPLE_RATE, speed, sentence_by_sentence, loop)
    if program is not None:
        words, played_s = program.words, program.duration_s
    report = score_recording(words, attempt_audio, backend, language, offset_s, program)
    report.update(
        {
            "command": "practice",
            "source": str(source),
            "attempt": str(attempt),
            "source_words_from": origin,
            "source_s": played_s,
            "speed": speed,
            "recognizer_compute_s": time.perf_counter() - t0,
        }
    )
    log.info("scored %s against %s: %d said of %d", attempt, source, report["evs_s"]["n"], len(words))
    return report


def as_played(words: list[Word], speed: float) -> list[Word]:
    """The source's words timed on its clock as played at ``speed`` (the source recognized at its own speed hears
    better than slowed)."""
    if speed == 1.0:
        return words
    return [Word(w.text, w.start_s / speed, w.end_s / speed) for w in words]


def said_per_piece(backend: AsrBackend, audio: np.ndarray, program: Program, offset_s: float = 0.0) -> list[Word]:
    """The attempt recognized a piece of the program at a time (from a piece's start to the next one's), on the
    attempt's clock. Whole, Whisper writes a phrase said again and again once: a loop's second pass came out empty."""
    said: list[Word] = []
    for number, piece in enumerate(program.played, 1):
        start = max(int(round((piece.start_s - offset_s) * SAMPLE_RATE)), 0)
        end = min(int(round((piece.end_s - offset_s) * SAMPLE_RATE)), audio.size)
        end = audio.size if number == len(program.played) else end  # the last: to the recording's end (its tail)
        if end - start < SAMPLE_RATE // 10:
            continue
        at = start / SAMPLE_RATE
        said += [Word(w.text, w.start_s + at, w.end_s + at) for w in transcribe_long(backend, audio[start:end])]
    return said


def score_recording(
    source: list[Word],
    attempt_audio: np.ndarray,
    backend: AsrBackend,
    language: str = "en",
    offset_s: float = 0.0,
    program: Program | None = None,
) -> dict:
    """An attempt's audio (16 kHz) recognized whole and scored against the source's timed words; ``program``: the
    source played sentence by sentence or in a loop (``source`` its words), each piece scored too."""
    if not attempt_audio.size:
        raise AsrError("the attempt holds no audio")
    t0 = time.perf_counter()
    said = (
        transcribe_long(backend, attempt_audio)
        if program is None
        else said_per_piece(backend, attempt_audio, program, offset_s)
    )
    report = score(source, said, offset_s, language).report()
    if program is not None:
        moved = [Word(w.text, w.start_s + offset_s, w.end_s + offset_s) for w in said]
        report.update(program.score(moved, attempt_audio.size / SAMPLE_RATE + offset_s, language))
    report.update(
        {
            "language": language,
            "offset_s": offset_s,
            "attempt_s": attempt_audio.size / SAMPLE_RATE,
            "source_text": " ".join(w.text for w in source),
            "attempt_text": " ".join(w.text for w in said),
            "recognizer_compute_s": time.perf_counter() - t0,
            "machine": machine_info(),
        }
    )
    return report
