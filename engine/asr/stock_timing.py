"""The words of faster-whisper's own decode of a whole recording, timed without changing what it decodes.

With ``word_timestamps=True`` faster-whisper moves each 30 s window on to the last aligned word's end instead of the
last timestamp token. A word stretched over a pause then sends the next window past the words after it: on an
accented read clip "shifted to the" ended at 12.94 s of 13.28 and "extenuating circumstances of his" was never
decoded. Here the decode runs without word timestamps (its text is exactly ``transcribe_stock``'s) and each
window's segments are aligned afterwards on that window's encoder output, with faster-whisper's own alignment.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.asr.backend import SAMPLE_RATE
from engine.asr.words import Word

RawWord = tuple[str, float, float]


def _punctuation_defaults(model: Any) -> tuple[str, str]:
    """faster-whisper's own defaults for the punctuation its word timestamps join to a neighbouring word."""
    parameters = inspect.signature(type(model).transcribe).parameters
    return parameters["prepend_punctuations"].default, parameters["append_punctuations"].default


def content_frames_of(extractor: Any, samples: int) -> int:
    """The mel frames of real audio the decode counts (its features' length less one), without computing the
    features a second time: of an hour's recording they are 115 MB."""
    return int(samples) // int(extractor.hop_length)


def stock_segments_timed(
    model: Any,
    audio: np.ndarray,
    language: str | None,
    task: str,
    beam_size: int,
    last_encoded: Callable[[], Any],
    progress: Callable[[float], None] | None = None,
) -> list[list[RawWord]]:
    """Each segment of the stock decode of ``audio`` (16 kHz mono float32) as (piece, start, end) on the audio's
    clock. ``model`` is a ``faster_whisper.WhisperModel`` whose ``encode`` keeps its last output where
    ``last_encoded`` reads it: a window's segments come before the next window is encoded, so each window is aligned
    on the encoder output its decode used, not encoded twice. ``progress`` gets the share of the audio decoded after
    each segment (an exception it raises stops the decode)."""
    from faster_whisper.tokenizer import Tokenizer

    decoded, info = model.transcribe(audio, language=language, task=task, beam_size=beam_size)
    extractor = model.feature_extractor
    content_frames = content_frames_of(extractor, audio.size)
    windows: list[tuple[int, Any, list[Any]]] = []  # (seek, encoder output, segments)
    duration_s = audio.size / SAMPLE_RATE
    for segment in decoded:
        if progress is not None and duration_s > 0:
            progress(min(segment.end / duration_s, 1.0))
        # A window that starts after one which already held the rest of the recording decoded the words Whisper's
        # timestamps had ended that one short of: they are aligned on its audio (on the few frames left after the
        # late timestamp, 8 words of a voice's attempt were squeezed into no time).
        if windows and (segment.seek == windows[-1][0] or windows[-1][0] + extractor.nb_max_frames >= content_frames):
            windows[-1][2].append(segment)
        else:
            windows.append((segment.seek, last_encoded(), [segment]))
    if not windows:
        return []
    tokenizer = Tokenizer(
        model.hf_tokenizer,
        model.model.is_multilingual,
        task=task,
        language=info.language,
    )
    prepend, append = _punctuation_defaults(model)
    last_speech_s = 0.0
    timed: list[list[RawWord]] = []
    for seek, encoded, segments in windows:
        size = min(extractor.nb_max_frames, content_frames - seek)
        pieces = [{"seek": seek, "start": s.start, "end": s.end, "tokens": list(s.tokens)} for s in segments]
        last_speech_s = model.add_word_timestamps(
            [pieces], tokenizer, encoded, size, prepend, append, last_speech_timestamp=last_speech_s
        )
        timed.extend([(w["word"], float(w["start"]), float(w["end"])) for w in p.get("words", [])] for p in pieces)
    return timed


def in_order(segments: list[list[Word]]) -> list[list[Word]]:
    """The segments' words with none starting before the word before it, and none ending after the next starts.

    faster-whisper's alignment prefers a segment's own start timestamp to a first word aligned too long, and that
    timestamp can lie before the last word of the segment before ("the" 11.02-12.94 s, then "extenuating" from
    10.96 s): the practice's spans and the commit latency's references read words in time order.
    """
    flat = [w for words in segments for w in words]
    starts: list[float] = []
    for word in flat:
        starts.append(max(word.start_s, starts[-1] if starts else 0.0))
    ends = [max(w.end_s, start) for w, start in zip(flat, starts, strict=True)]
    for i in range(len(flat) - 1):
        ends[i] = max(starts[i], min(ends[i], starts[i + 1]))
    fixed = iter(Word(w.text, s, e) for w, s, e in zip(flat, starts, ends, strict=True))
    return [[next(fixed) for _ in words] for words in segments]
