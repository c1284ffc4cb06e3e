"""Reading audio files for the recognizer and the pipeline, with errors that name the problem."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from engine.audio.resample import resample


class AudioFileError(ValueError):
    """The file is missing, unreadable, or holds no audio."""


def load_audio(path: Path | str, rate: int = 16000) -> np.ndarray:
    """A file as mono float32 at ``rate`` (channels averaged, resampled with soxr when needed)."""
    path = Path(path)
    if not path.is_file():
        raise AudioFileError(f"audio file not found: {path}")
    try:
        data, file_rate = sf.read(str(path), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError) as exc:
        raise AudioFileError(f"cannot read {path} as audio: {exc}") from exc
    if data.shape[0] == 0:
        raise AudioFileError(f"{path} holds no audio samples")
    mono = data.mean(axis=1)
    if not np.isfinite(mono).all():
        raise AudioFileError(f"{path} holds invalid (non-finite) samples")
    return resample(mono, file_rate, rate) if file_rate != rate else np.ascontiguousarray(mono)
