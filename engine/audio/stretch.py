"""The source played slower or faster with its pitch kept, for a learner's practice (0.5-1.25x).

The stretch is FFmpeg's ``atempo`` filter, a WSOLA (waveform-similarity overlap-add): it repeats or drops whole pitch
periods of speech, so the voice keeps its pitch and timbre. The system's FFmpeg is the package's decoder already, so
nothing is added. Rubber Band (FFmpeg's ``rubberband`` filter) was measured beside it and not adopted: the recognizer
heard fewer words of a source slowed by it (docs/RESULTS.md). The whole source is stretched once, before it plays: a
time ``t`` on the source's own clock is ``t / speed`` on the clock as played.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.audio.media import MediaError, ffmpeg_available

log = logging.getLogger(__name__)

MIN_SPEED, MAX_SPEED = 0.5, 1.25
SPEEDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0, 1.1, 1.25)  # the window's slider's steps


class SpeedError(ValueError):
    """A speed outside 0.5-1.25x, or no FFmpeg to stretch with."""


def check_speed(speed: float) -> float:
    if not MIN_SPEED <= speed <= MAX_SPEED:
        raise SpeedError(f"the speed must lie between {MIN_SPEED}x and {MAX_SPEED}x, not {speed:g}x")
    return float(speed)


def stretch(audio: np.ndarray, rate: int, speed: float) -> np.ndarray:
    """``audio`` (mono float32) as played at ``speed``: ``len(audio) / speed`` samples long, the pitch kept."""
    speed = check_speed(speed)
    if speed == 1.0 or not audio.size:
        return audio
    if not ffmpeg_available():
        raise SpeedError("playing at another speed needs FFmpeg, which is not installed (sudo apt install ffmpeg)")
    command = [
        "ffmpeg",
        "-v",
        "error",
        "-f",
        "f32le",
        "-ar",
        str(rate),
        "-ac",
        "1",
        "-i",
        "pipe:0",
        "-af",
        f"atempo={speed:.6g}",
        "-f",
        "f32le",
        "-ar",
        str(rate),
        "-ac",
        "1",
        "pipe:1",
    ]
    done = subprocess.run(
        command, input=np.ascontiguousarray(audio, np.float32).tobytes(), capture_output=True, check=False
    )
    if done.returncode != 0:
        raise MediaError(f"FFmpeg could not stretch the recording: {done.stderr.decode(errors='replace').strip()}")
    out = np.frombuffer(done.stdout, np.float32)
    want = int(round(audio.size / speed))
    log.info("stretched %.1f s to %.1f s (%.2fx)", audio.size / rate, out.size / rate, speed)
    if out.size >= want:
        return out[:want].copy()
    return np.concatenate([out, np.zeros(want - out.size, np.float32)])


def write_stretched(source: Path, speed: float, out: Path, rate: int = 16000) -> Path:
    """A WAV (16-bit, ``rate``) of the recording ``source`` as played at ``speed``."""
    from engine.audio.io import load_audio

    sf.write(str(out), stretch(load_audio(source, rate), rate, speed), rate, subtype="PCM_16")
    return out
