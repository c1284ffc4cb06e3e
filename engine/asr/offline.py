"""Offline recognition of a whole recording of any length: liveshadow's own whole pass.

Whisper transcribing English takes faster-whisper's own decode, timed (``WhisperBackend.transcribe_whole``): the
windowed pass below got up to 0.06 more words wrong than it on the English development sets. Translating, other
languages and a backend without it (vosk) take the windowed pass: the recording cut at quiet moments into windows
of at most ``max_window_s`` (the streaming backend bounds its new tokens per call, so a long window would be cut
short), each cut at the quietest 100 ms in the last seconds before the limit, so words are not split. There the
stock decode did not help on every part of ``../shared/speech-xx`` (translated: BLEU 20.7 against 19.3 on the
chosen part, 24.0 against 24.8 on the held-back fifth; transcribed, German worse and Spanish better). The pass's
words time the references of commit latency where a manifest has no word times.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.asr.backend import SAMPLE_RATE, AsrBackend
from engine.asr.words import Word

FRAME = SAMPLE_RATE // 10
DEFAULT_MAX_WINDOW_S = 20.0
SEARCH_S = 5.0


def cut_points(audio: np.ndarray, max_window_s: float = DEFAULT_MAX_WINDOW_S) -> list[int]:
    """Sample indices where windows end (the last is ``audio.size``)."""
    limit = int(max_window_s * SAMPLE_RATE)
    search = int(SEARCH_S * SAMPLE_RATE)
    cuts = []
    start = 0
    while audio.size - start > limit:
        lo, hi = start + limit - search, start + limit
        frames = audio[lo:hi][: (hi - lo) // FRAME * FRAME].reshape(-1, FRAME)
        quietest = int(np.argmin(np.mean(np.square(frames, dtype=np.float64), axis=1)))
        cut = lo + quietest * FRAME + FRAME // 2
        cuts.append(cut)
        start = cut
    cuts.append(audio.size)
    return cuts


def transcribe_long(
    backend: AsrBackend,
    audio: np.ndarray,
    max_window_s: float = DEFAULT_MAX_WINDOW_S,
    progress: Callable[[float], None] | None = None,
) -> list[Word]:
    """The words of ``audio`` (16 kHz mono). ``progress`` gets the share of the audio done as the pass goes (after
    each segment or window); an exception it raises stops the pass."""
    audio = np.asarray(audio, np.float32).reshape(-1)
    whole = getattr(backend, "transcribe_whole", None)
    english = getattr(backend, "task", "transcribe") == "transcribe" and getattr(backend, "language", None) == "en"
    if whole is not None and english:
        return whole(audio, progress) if progress is not None else whole(audio)
    recognize = getattr(backend, "transcribe_offline", backend.transcribe)
    words: list[Word] = []
    start = 0
    for cut in cut_points(audio, max_window_s):
        offset = start / SAMPLE_RATE
        words.extend(Word(w.text, w.start_s + offset, w.end_s + offset) for w in recognize(audio[start:cut]))
        start = cut
        if progress is not None:
            progress(cut / audio.size)
    return words


def offline_text(backend: AsrBackend, audio: np.ndarray) -> str:
    """What ``wer_offline`` scores: the same model transcribing the whole recording at once, faster-whisper's own way
    (``WhisperBackend.transcribe_stock``) where the backend has it, else ``transcribe_long``."""
    stock = getattr(backend, "transcribe_stock", None)
    if stock is not None:
        return stock(np.asarray(audio, np.float32).reshape(-1))
    return " ".join(w.text for w in transcribe_long(backend, audio))
