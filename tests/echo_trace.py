"""What a live cancel session's canceller did, second by second, for a failing test's message: a rare live session
lets the voice through (1 in about 25), and the log of a run on another machine is all there is to read then."""

from __future__ import annotations

import numpy as np

from engine.audio.io import load_audio
from engine.pipeline.recorder import INPUT_WAV
from engine.pipeline.session import ShadowSession

RATE = 16000


def _db(samples: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.square(samples, dtype=np.float64)) + 1e-12)) if samples.size else -120.0


def echo_trace(session: ShadowSession) -> str:
    """Per second of the session: the microphone's level, what the recognizer heard after the canceller (both dBFS)
    and the voice's played level then; the session must have been started with ``keep_heard``. A canceller that
    stopped removing the voice shows as 'heard' near 'mic' where the voice plays and the speaker is silent."""
    echo = session.echo
    if echo is None or echo.cleaned is None or session.recorder is None:
        return "(no trace: the session kept no heard audio)"
    mic = load_audio(session.recorder.folder / INPUT_WAV)
    heard = np.concatenate(echo.cleaned) if echo.cleaned else np.zeros(0, np.float32)
    voice = echo.track.read(0.0, mic.size)
    rows = []
    for second in range(int(min(mic.size, heard.size) // RATE)):
        part = slice(second * RATE, (second + 1) * RATE)
        rows.append(f"{second}s mic {_db(mic[part]):.0f} heard {_db(heard[part]):.0f} voice {_db(voice[part]):.0f}")
    return "; ".join(rows)
