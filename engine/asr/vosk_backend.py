"""vosk (Kaldi) as a streaming backend: audio is fed once, incrementally; the hypothesis is the final results
since the last trim plus the current partial result.

English models are not on PyPI: users download one (e.g. ``vosk-model-small-en-us-0.15``, ~40 MB) and pass its
folder. ``vosk.Model(lang=...)`` is never used: it downloads at run time and may exit the process.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from engine.asr.backend import SAMPLE_RATE, AsrError, StepDecode
from engine.asr.words import Word

log = logging.getLogger(__name__)

GET_A_MODEL = (
    "download a Vosk model (for English e.g. vosk-model-small-en-us-0.15 from the Vosk project's model list), "
    "unpack it, and pass its folder with --model"
)


def looks_like_vosk_model(path: Path) -> bool:
    return (path / "am" / "final.mdl").is_file() or (path / "final.mdl").is_file()


def _words(result: dict, key: str) -> list[Word]:
    return [Word(str(w["word"]), float(w["start"]), float(w["end"])) for w in result.get(key, []) if w.get("word")]


class VoskBackend:
    """``accept`` audio as it arrives; ``hypothesis`` is every word since the last ``forget_before``."""

    name = "vosk"
    incremental = True

    def __init__(self, model_path: Path | str | None) -> None:
        if model_path is None:
            raise AsrError(f"the vosk backend needs a model folder: {GET_A_MODEL}")
        path = Path(model_path)
        if not path.is_dir():
            raise AsrError(f"vosk model folder not found: {path}; {GET_A_MODEL}")
        if not looks_like_vosk_model(path):
            raise AsrError(f"{path} is not a Vosk model folder (no am/final.mdl); {GET_A_MODEL}")
        import vosk

        vosk.SetLogLevel(-1)
        try:
            self._model = vosk.Model(str(path))
        except Exception as exc:  # vosk raises a bare Exception("Failed to create a model")
            raise AsrError(f"cannot load the Vosk model in {path}: {exc}; {GET_A_MODEL}") from exc
        self._vosk = vosk
        self.reset()

    def _recognizer(self):
        recognizer = self._vosk.KaldiRecognizer(self._model, SAMPLE_RATE)
        recognizer.SetWords(True)
        recognizer.SetPartialWords(True)
        return recognizer

    def reset(self) -> None:
        self._stream = self._recognizer()
        self._finals: list[Word] = []
        self._partial: list[Word] = []
        self.endpoints = 0

    @staticmethod
    def _pcm(samples: np.ndarray) -> bytes:
        return (np.clip(np.asarray(samples, np.float32), -1.0, 1.0) * 32767).astype("<i2").tobytes()

    def accept(self, samples: np.ndarray) -> None:
        """Feed the next audio (16 kHz mono float32); times of words count from the first sample ever fed."""
        if self._stream.AcceptWaveform(self._pcm(samples)):
            self._finals.extend(_words(json.loads(self._stream.Result()), "result"))
            self._partial = []
            self.endpoints += 1
        else:
            self._partial = _words(json.loads(self._stream.PartialResult()), "partial_result")

    def flush(self) -> None:
        """The input ended: the partial result becomes final."""
        self._finals.extend(_words(json.loads(self._stream.FinalResult()), "result"))
        self._partial = []

    def hypothesis(self) -> list[Word]:
        return [*self._finals, *self._partial]

    def forget_before(self, t_s: float) -> None:
        """Drop final words that end before ``t_s`` (the caller has committed them): keeps memory bounded."""
        self._finals = [w for w in self._finals if w.end_s > t_s]

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: StepDecode | None = None) -> list[Word]:
        """A whole recording at once (the offline reference); does not touch the streaming state (``decode`` asks
        nothing vosk can do)."""
        recognizer = self._recognizer()
        words: list[Word] = []
        pcm = self._pcm(audio)
        step = SAMPLE_RATE  # 0.5 s of 16-bit samples
        for i in range(0, len(pcm), step):
            if recognizer.AcceptWaveform(pcm[i : i + step]):
                words.extend(_words(json.loads(recognizer.Result()), "result"))
        words.extend(_words(json.loads(recognizer.FinalResult()), "result"))
        return words
