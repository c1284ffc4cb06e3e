"""End-to-end shadowing figures (METRICS.md): ear-voice lag, chunk delay and the drift of the lag."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def ear_voice_lag_s(speak_end_s: float, source_end_s: float) -> float:
    """When the word's synthesized audio finishes playing minus when the speaker finished saying it."""
    return speak_end_s - source_end_s


def chunk_delay_s(chunks: Sequence[tuple[float, float]]) -> float | None:
    """Mean over TTS chunks of (end of the chunk's audio playing − source end of the chunk's last word).

    ``chunks``: ``(play_end_s, last_word_source_end_s)`` per chunk that carried at least one word.
    """
    if not chunks:
        return None
    return float(np.mean([end - source for end, source in chunks]))


def lag_drift_s(source_end_s: Sequence[float], lags_s: Sequence[float], min_span_s: float = 10.0) -> float | None:
    """Least-squares slope of ear-voice lag over the session, in seconds of lag per minute of source.

    None with fewer than 3 words or when the words span less than ``min_span_s`` (a slope would mean nothing).
    """
    x = np.asarray(source_end_s, np.float64)
    y = np.asarray(lags_s, np.float64)
    if x.size < 3 or x.size != y.size or float(x.max() - x.min()) < min_span_s:
        return None
    slope = np.polyfit(x / 60.0, y, 1)[0]
    return float(slope)
