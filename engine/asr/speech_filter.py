"""Words nobody said: what the recognizer writes where the voice-activity detector heard no speech.

Whisper fills silence with text from its training subtitles ("Thank you.", "Thanks for watching!") and aligns it to
the quiet end of a buffer. Two rules, both on the voice-activity flags of the buffer:

- a phrase from ``SILENCE_PHRASES`` at the end of the hypothesis is dropped unless most of its span is speech
  (a speaker who really says "thank you" is heard saying it);
- a word with no speech frame within ``PAD_S`` of its aligned span is dropped (alignment is off by a frame or two,
  never by a whole word).

And one on the alignment alone, for transcripts: two or more words in a row timed to the buffer's first instant,
with no duration, are dropped. Whisper gives a word no frames when nothing in the audio matches it. After the buffer
is cut in a pause it may write a phrase there ("And else..." on a buffer that starts with the silence after "He was
not", inside the detector's hangover): text it wrote, not speech it heard. Elsewhere such runs are often real words
squeezed together ("words words" said fast), and a translation's words are often timed that way (they match no
source word), so those are left alone. A translation loses only longer runs, ``UNALIGNED_RUN_WORDS`` or more words
at one instant anywhere in it: Whisper base "translating" speech it cannot (Japanese) writes whole clauses there
("the evening of the day of the Liberals, ..."). The Whisper backend cuts
each decode at its third word in a row with no duration (``whisper_backend.ZERO_RUN``), also in a decode it cut at
a loop, so no such run of Whisper's reaches this rule any more; it stays for a decoder that
does not cut them (the sweep's ``zrN``).
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.asr.vad import FRAME_S
from engine.asr.words import Word
from engine.audio.levels import frame_power

PAD_S = 0.15
INSTANT_S = 1e-6  # a word this short was timed to no frame of the audio
TIMESTAMP_STEP_S = 0.02  # Whisper's word times come in these steps
UNALIGNED_RUN_WORDS = 4  # a translation's words timed to one instant, this many in a row, were not heard
MIN_PHRASE_SPEECH = 0.5  # of a trailing silence phrase's span, to count as said
# A word at the end of a hypothesis whose loudest 40 ms is this far below the buffer's speech is not speech: Whisper
# writes a word ("of", "Peace.") on the quiet after a speaker's last one, timed into the detector's hangover, where
# the room's (or a recording's) noise floor lies 22-30 dB under the speech (live captures, 2026-11-29).
QUIET_TAIL_DB = 20.0
LEVEL_FRAME_S = 0.04
SPEECH_LEVEL_PERCENTILE = 95
# Normalized as ``Word.key`` gives them, longest first: the longest match at the end of a hypothesis is checked.
SILENCE_PHRASES: tuple[tuple[str, ...], ...] = tuple(
    sorted(
        (
            tuple(p.split())
            for p in (
                "thank you",
                "thank you very much",
                "thank you so much",
                "thank you for watching",
                "thanks for watching",
                "thank you for listening",
                "thanks for listening",
                "please subscribe",
                "subscribe to my channel",
                "bye",
                "bye bye",
                "thanks",
                "you",
            )
        ),
        key=len,
        reverse=True,
    )
)


@dataclass(frozen=True)
class SpeechFrames:
    """Voice-activity flags, one per ``FRAME_S``, the first starting at ``origin_s`` on the source clock."""

    flags: np.ndarray
    origin_s: float

    def _index(self, t_s: float) -> int:
        return max(int(np.floor((t_s - self.origin_s) / FRAME_S)), 0)

    def _slice(self, start_s: float, end_s: float) -> np.ndarray:
        lo = self._index(start_s)
        hi = max(int(np.ceil((end_s - self.origin_s) / FRAME_S)), lo)
        return self.flags[lo:hi]

    def any_speech(self, start_s: float, end_s: float) -> bool:
        return bool(self._slice(start_s, end_s).any())

    def speech_fraction(self, start_s: float, end_s: float) -> float:
        part = self._slice(start_s, end_s)
        return float(part.mean()) if part.size else 0.0

    def quiet_from(self, t_s: float, end_s: float) -> float:
        """Seconds without speech from ``t_s`` until speech resumes (or until ``end_s``, the audio heard so far)."""
        first = max(int(np.ceil((t_s - self.origin_s) / FRAME_S)), 0)  # the frame holding ``t_s`` is the word's
        speech = np.flatnonzero(self._slice(self.origin_s + first * FRAME_S, end_s))
        if speech.size:
            return max(self.origin_s + (first + int(speech[0])) * FRAME_S - t_s, 0.0)
        return max(end_s - t_s, 0.0)

    @property
    def end_s(self) -> float:
        return self.origin_s + self.flags.size * FRAME_S


def drop_unspoken(words: Sequence[Word], frames: SpeechFrames, buffer_start_s: float | None = None) -> list[Word]:
    """``words`` without a trailing silence phrase that was not spoken, and without words aligned outside speech;
    with ``buffer_start_s`` (a transcript's, not a translation's), also without a run of words timed to that instant."""
    kept = list(words) if buffer_start_s is None else without_unaligned_start(words, buffer_start_s)
    keys = [w.key for w in kept]
    for phrase in SILENCE_PHRASES:
        n = len(phrase)
        if n <= len(keys) and tuple(keys[-n:]) == phrase:
            if frames.speech_fraction(kept[-n].start_s, kept[-1].end_s) < MIN_PHRASE_SPEECH:
                kept = kept[:-n]
            break
    return [w for w in kept if w.start_s >= frames.end_s or frames.any_speech(w.start_s - PAD_S, w.end_s + PAD_S)]


def frame_levels_db(audio: np.ndarray, rate: int = 16000) -> np.ndarray:
    """The level of every whole ``LEVEL_FRAME_S`` of ``audio``, in dBFS."""
    return 10 * np.log10(frame_power(audio, int(LEVEL_FRAME_S * rate)) + 1e-12)


class SpeechLevel:
    """How loud the speech has been over the last ``memory_s`` of audio heard (a high percentile of its frames): a
    buffer cut after a sentence may hold nothing but the quiet after it, on which the level is read."""

    def __init__(self, memory_s: float = 30.0, rate: int = 16000) -> None:
        self._levels: collections.deque[float] = collections.deque(maxlen=int(memory_s / LEVEL_FRAME_S))
        self._rest = np.zeros(0, np.float32)
        self._rate = rate

    def add(self, samples: np.ndarray) -> None:
        data = np.concatenate([self._rest, samples])
        frame = int(LEVEL_FRAME_S * self._rate)
        whole = data.size // frame * frame
        self._levels.extend(frame_levels_db(data[:whole], self._rate).tolist())
        self._rest = data[whole:]

    def db(self) -> float | None:
        return float(np.percentile(self._levels, SPEECH_LEVEL_PERCENTILE)) if self._levels else None


def without_quiet_tail(
    words: Sequence[Word], audio: np.ndarray, buffer_start_s: float, speech_db: float | None = None, rate: int = 16000
) -> list[Word]:
    """``words`` less those at their end whose span (on the clock of ``audio``'s first sample at ``buffer_start_s``)
    is ``QUIET_TAIL_DB`` or more below the speech at its loudest: ``speech_db`` (``SpeechLevel``), else the buffer's
    own."""
    levels = frame_levels_db(audio, rate)
    n = levels.size
    if not words or n < 2:
        return list(words)
    reference = speech_db if speech_db is not None else float(np.percentile(levels, SPEECH_LEVEL_PERCENTILE))
    floor = reference - QUIET_TAIL_DB
    kept = list(words)
    while kept:
        lo = int((kept[-1].start_s - buffer_start_s) / LEVEL_FRAME_S)
        hi = int(np.ceil((kept[-1].end_s - buffer_start_s) / LEVEL_FRAME_S))
        span = levels[max(lo, 0) : min(max(hi, lo + 1), n)]
        if span.size == 0 or float(span.max()) >= floor:
            break
        kept.pop()
    return kept


def without_unaligned_start(words: Sequence[Word], buffer_start_s: float) -> list[Word]:
    """``words`` less a run of two or more at their start that have no duration at ``buffer_start_s``."""
    run = _unaligned_run_end(words, 0, buffer_start_s)
    return list(words[run:] if run >= 2 else words)


def without_unaligned_runs(words: Sequence[Word]) -> list[Word]:
    """``words`` less every run of ``UNALIGNED_RUN_WORDS`` or more in a row that have no duration at one instant."""
    kept: list[Word] = []
    i = 0
    while i < len(words):
        end = max(_unaligned_run_end(words, i, words[i].start_s), i + 1)
        if end - i < UNALIGNED_RUN_WORDS:
            kept.extend(words[i:end])
        i = end
    return kept


def _unaligned_run_end(words: Sequence[Word], start: int, t_s: float) -> int:
    """The index after the run of words from ``start`` on that have no duration at ``t_s`` (``start``: none)."""
    end = start
    while end < len(words) and _unaligned_at(words[end], t_s):
        end += 1
    return end


def _unaligned_at(word: Word, t_s: float) -> bool:
    return word.end_s - word.start_s <= INSTANT_S and abs(word.start_s - t_s) <= TIMESTAMP_STEP_S
