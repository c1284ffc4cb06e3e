"""Reading audio files for the recognizer and the pipeline, with errors that name the problem.

WAV and FLAC are read with libsndfile; every other audio or video file through FFmpeg (``audio.media``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.audio import media
from engine.audio.resample import resample

log = logging.getLogger(__name__)

# what libsndfile also reads when FFmpeg is not installed
SOUNDFILE_FALLBACK_SUFFIXES = frozenset({".mp3", ".ogg", ".oga", ".opus"})


class AudioFileError(ValueError):
    """The file is missing, unreadable, or holds no audio."""


def _read_soundfile(path: Path) -> tuple[np.ndarray, int]:
    try:
        return sf.read(str(path), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError) as exc:
        raise AudioFileError(f"cannot read {path} as audio: {exc}") from exc


def _logged(path: Path) -> Callable[[float], None]:
    """Progress in the log at every quarter of a file FFmpeg decodes (a long one takes a while)."""
    shown = [0]

    def progress(share: float) -> None:
        quarter = int(share * 4)
        if quarter > shown[0] and quarter < 4:
            shown[0] = quarter
            log.info("reading %s: %d %%", path.name, quarter * 25)

    return progress


def by_percent(tell: Callable[[float], None]) -> Callable[[float], None]:
    """A progress callback that passes a share on only when its whole percent changed (FFmpeg's output comes in
    pieces of 1.5 s: an hour-long file would tell thousands of times)."""
    last = [-1]

    def progress(share: float) -> None:
        percent = int(share * 100)
        if percent != last[0]:
            last[0] = percent
            tell(share)

    return progress


def load_audio(path: Path | str, rate: int = 16000, progress: Callable[[float], None] | None = None) -> np.ndarray:
    """A file as mono float32 at ``rate`` (channels averaged, resampled with soxr when needed). ``progress`` hears
    the share decoded so far while FFmpeg decodes a compressed file."""
    path = Path(path)
    if not path.is_file():
        raise AudioFileError(f"audio file not found: {path}")
    suffix = path.suffix.lower()
    if suffix in media.SOUNDFILE_SUFFIXES:
        data, file_rate = _read_soundfile(path)
    elif not media.ffmpeg_available() and suffix in SOUNDFILE_FALLBACK_SUFFIXES:
        log.info("FFmpeg is not installed: reading %s with libsndfile", path)
        data, file_rate = _read_soundfile(path)
    else:
        try:
            data, file_rate = media.decode(path, progress if progress is not None else _logged(path))
        except media.MediaError as exc:
            raise AudioFileError(str(exc)) from exc
    if data.shape[0] == 0:
        raise AudioFileError(f"{path} holds no audio samples")
    mono = data.mean(axis=1)
    if not np.isfinite(mono).all():
        raise AudioFileError(f"{path} holds invalid (non-finite) samples")
    return resample(mono, file_rate, rate) if file_rate != rate else np.ascontiguousarray(mono)
