"""How loud audio is, frame by frame: the one per-frame power every stage that reads levels shares (the
recognizer's quiet-tail rule, the echo benchmark and its ablation)."""

from __future__ import annotations

import numpy as np


def frame_power(audio: np.ndarray, frame: int = 320) -> np.ndarray:
    """Mean square of each whole frame (20 ms at 16 kHz); a last partial frame is left out."""
    n = audio.size // frame * frame
    return np.mean(np.square(audio[:n].reshape(-1, frame), dtype=np.float64), axis=1)


def speech_level(audio: np.ndarray, frame: int = 320, below_peak_db: float = 40.0) -> float:
    """RMS over the frames that hold speech (within ``below_peak_db`` of the loudest frame); 0 for silence."""
    if not audio.size:
        return 0.0
    rms = np.sqrt(frame_power(audio, min(frame, audio.size)))  # shorter than a frame: one frame of it all
    peak = float(rms.max())
    if peak <= 0:
        return 0.0
    loud = rms[rms >= peak * 10 ** (-below_peak_db / 20)]
    return float(np.sqrt(np.mean(loud**2)))
