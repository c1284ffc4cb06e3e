"""Past sessions: the recorded folders listed with their figures, and their input and voice replayed together.

A session folder (``recorder.py``) holds ``input.wav`` (what was heard, from session time 0) and ``output.wav`` (the
voice placed at its play times, also from 0), so both are on one clock and can be mixed, or put on the left and
right channels, from any moment, e.g. a word clicked in the transcript.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.audio.io import AudioFileError
from engine.audio.resample import StreamResampler
from engine.metrics import names as m
from engine.pipeline.recorder import INPUT_WAV, OUTPUT_WAV, REPORT, TRANSCRIPT

log = logging.getLogger(__name__)

FOLDER_TIME = "%Y-%m-%d_%H-%M-%S"  # how the app names a session's folder
TOGETHER = "together"
SIDE_BY_SIDE = "side by side"
REPLAY_MODES = (TOGETHER, SIDE_BY_SIDE)
LEAD_IN_S = 0.5  # a replay from a word starts this much before it


@dataclass(frozen=True)
class PastSession:
    folder: Path
    started: datetime | None
    duration_s: float | None
    words: int | None
    lag_median_s: float | None
    problem: str | None = None  # why its figures could not be read (the folder is still listed)
    error: str | None = None  # why the session stopped early (its report says)

    @property
    def title(self) -> str:
        when = self.started.strftime("%Y-%m-%d %H:%M:%S") if self.started else self.folder.name
        if self.problem:
            return f"{when} · {self.problem}"
        parts = [when]
        if self.duration_s is not None:
            parts.append(f"{self.duration_s:.0f} s")
        if self.words is not None:
            parts.append(f"{self.words} words")
        if self.lag_median_s is not None:
            parts.append(f"lag median {self.lag_median_s:.2f} s")
        if self.error:
            parts.append(f"stopped by an error: {self.error}")
        return " · ".join(parts)


def read_session(folder: Path) -> PastSession:
    """One folder's figures from its ``report.json`` (a session cut short by a crash has none: said, not hidden)."""
    try:
        started = datetime.strptime(folder.name, FOLDER_TIME)
    except ValueError:
        started = None
    try:
        report = json.loads((folder / REPORT).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return PastSession(folder, started, None, None, None, "no report (the session did not end normally)")
    except (OSError, ValueError) as exc:
        return PastSession(folder, started, None, None, None, f"unreadable report: {exc}")
    words = report.get("words") or []
    ends = [w.get("speak_end_s") or 0.0 for w in words]
    duration = max([report.get("audio_s_heard") or 0.0, *ends])
    lag = (report.get(m.EAR_VOICE_LAG_S) or {}).get("median")
    return PastSession(folder, started, duration, len(words), lag, error=report.get("error"))


def list_sessions(root: Path) -> list[PastSession]:
    """The session folders under ``root`` that hold a recording, newest first."""
    if not root.is_dir():
        return []
    folders = [p for p in root.iterdir() if p.is_dir() and (p / TRANSCRIPT).is_file()]
    return [read_session(f) for f in sorted(folders, key=lambda p: p.name, reverse=True)]


def _compose(heard: np.ndarray, voice: np.ndarray, mode: str) -> np.ndarray:
    if mode == TOGETHER:
        mix = np.clip(0.5 * heard + voice, -1.0, 1.0)
        return np.stack([mix, mix], axis=1).astype(np.float32)
    return np.stack([heard, voice], axis=1).astype(np.float32)


def replay_blocks(
    folder: Path,
    mode: str,
    rate: int,
    start_s: float = 0.0,
    block_s: float = 0.2,
    recordings: tuple[Path, Path] | None = None,
) -> Iterator[np.ndarray]:
    """(frames, 2) float32 blocks at ``rate``: the input and the voice from ``start_s`` on the session clock, mixed
    on both channels (``together``) or the input left and the voice right (``side by side``). Read from the files a
    block at a time, so an hour-long session is never held in memory. ``recordings``: two other recordings on one clock
    in their place (a practice: the source and the person's attempt)."""
    if mode not in REPLAY_MODES:
        raise ValueError(f"replay mode must be one of {', '.join(REPLAY_MODES)}, not {mode!r}")
    try:
        paths = recordings or (folder / INPUT_WAV, folder / OUTPUT_WAV)
        files = [sf.SoundFile(str(path)) for path in paths]
    except (OSError, RuntimeError) as exc:  # soundfile raises LibsndfileError (a RuntimeError) for a broken file
        raise AudioFileError(f"cannot replay the session in {folder}: {exc}") from exc
    try:
        resamplers = [StreamResampler(f.samplerate, rate) for f in files]
        pending = [np.zeros(0, np.float32), np.zeros(0, np.float32)]
        ended = [False, False]
        for f in files:
            f.seek(min(max(int(start_s * f.samplerate), 0), f.frames))
        while not all(ended):
            for i, f in enumerate(files):
                if ended[i]:
                    continue
                data = f.read(max(int(block_s * f.samplerate), 1), dtype="float32", always_2d=True).mean(axis=1)
                out = resamplers[i].process(data) if data.size else resamplers[i].flush()
                ended[i] = data.size == 0
                pending[i] = np.concatenate([pending[i], out])
            if all(ended):
                n = max(p.size for p in pending)
            elif any(ended):  # one file is over: the other goes on against silence
                n = max(p.size for p, e in zip(pending, ended, strict=True) if not e)
            else:
                n = min(p.size for p in pending)
            pending = [np.pad(p, (0, max(n - p.size, 0))) for p in pending]
            if n:
                yield _compose(pending[0][:n], pending[1][:n], mode)
                pending = [p[n:] for p in pending]
    finally:
        for f in files:
            f.close()
