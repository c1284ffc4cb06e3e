"""The values the streaming recognizer is configured with and hands out: its settings (``StreamConfig``), each
step's result (``StepResult``) and the words it commits (``CommittedWord``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.asr.words import Word


@dataclass(frozen=True, slots=True)
class CommittedWord:
    text: str
    start_s: float  # source clock
    end_s: float
    commit_s: float  # when it was committed (clock of the caller)
    pause_after: bool = False  # the speaker paused after this word (``PAUSE_S`` or more before the next)
    heard_s: float = 0.0  # source audio heard when it was committed (the end of the step's buffer, source clock)
    forced: bool = False  # committed by the hold bound, not by the policy (no earlier hypothesis had to agree)


@dataclass
class StepResult:
    committed: list[CommittedWord] = field(default_factory=list)
    tentative: list[Word] = field(default_factory=list)
    recognized: bool = False  # the recognizer ran (the buffer held speech)
    at_s: float | None = None  # when the step ended, on the driver's clock (set by the driver)
    compute_s: float = 0.0  # the step's compute, on the driver's clock (set by the driver)
    forced: int = 0  # words committed because they were held longer than ``max_hold_s``
    at_pause: int = 0  # words committed at a pause in the speech (``endpoint_s``) before the policy agreed on them
    unspoken: int = 0  # hypothesis words dropped as not said (outside speech, or a phrase Whisper writes on silence)
    failed_decode: bool = False  # the recognizer's decode (or part of it) was too unsure to use (``WhisperBackend``)
    # the speaker has been quiet for ``PHRASE_END_QUIET_S`` and nothing they said is still tentative: no word is
    # coming soon after the last committed one (its ``pause_after`` is read when it is committed, often too early)
    paused: bool = False
    buffer_start_s: float = 0.0  # where the buffer starts after the step, source clock (a cut moves it on)


@dataclass(frozen=True)
class StreamConfig:
    trim_s: float = 12.0
    max_buffer_s: float = 25.0
    max_hold_s: float = 3.0  # a word that ended this long before the audio's end is committed, agreed or not
    # the speaker quiet this long at the buffer's end ends an utterance: its words are committed as the hypothesis
    # has them (decoded up to the speech's end) and the buffer is cut there (None: never; ``_endpoint``)
    endpoint_s: float | None = None
    quiet_keep_s: float = 0.5  # audio kept before speech starts when a quiet buffer is dropped
    # the hold bound commits held words as the previous hypothesis had them (the tentative words a voice made ahead
    # when it ran low) instead of as this one has them, which nothing made ahead can match
    force_previous: bool = False
    use_prompt: bool = False
    prompt_chars: int = 200
    # the last word of a hypothesis is not committed while it may still grow: a number ("20" of "2021") or a word
    # Whisper marked as cut off ("pleasant...")
    hold_unfinished: bool = True
    # The decoder hears at least this long a window: Whisper was trained on 30 s windows, and an encoder cropped to a
    # few seconds mishears a buffer's first words (``StepDecode.min_window_s``; docs/RESULTS.md: the short window)
    min_window_s: float = 0.0
    # a buffer no longer than ``start_s`` (a sentence's first words) is decoded with this many beams (0: the
    # backend's own) and a window of at least ``start_window_s``; its decode is short, so both cost little
    start_beam_size: int = 0
    start_window_s: float = 0.0
    start_s: float = 0.0
    # the last decode (the input ended) hears at least this long a window: its words are heard once, and a short
    # clip's last words are what a cropped window loses; 12 s heard 0.013 more of clips-en and equal on three long
    # sets but one word less on speech-hard, so it is off (docs/RESULTS.md: the short window)
    finish_window_s: float = 0.0
