"""The recognizer interface: 16 kHz mono float32 audio in, words with times (seconds from the audio's start) out."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from engine.asr.words import Word

SAMPLE_RATE = 16000


class AsrError(RuntimeError):
    """A recognizer cannot be used: the message says why and what to do."""


class AsrBackend(Protocol):
    name: str

    def transcribe(self, audio: np.ndarray, prompt: str | None = None) -> list[Word]:
        """Words of the whole buffer, times relative to its first sample."""
        ...
