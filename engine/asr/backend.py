"""The recognizer interface: 16 kHz mono float32 audio in, words with times (seconds from the audio's start) out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from engine.asr.words import Word

SAMPLE_RATE = 16000


class AsrError(RuntimeError):
    """A recognizer cannot be used: the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class StepDecode:
    """How a streaming step asks for its buffer to be decoded (``StreamingRecognizer``); a backend that cannot do
    something asked (vosk: any of it) decodes its own way."""

    beam_size: int | None = None  # None: the backend's own
    min_window_s: float = 0.0  # the encoder hears at least this long a window (silence after the audio fills it)


class AsrBackend(Protocol):
    name: str

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: StepDecode | None = None) -> list[Word]:
        """Words of the whole buffer, times relative to its first sample."""
        ...
