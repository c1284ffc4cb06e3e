"""Session recording: input WAV, output WAV, transcript and metrics JSONL, written as the session goes.

Everything is written through (no audio is kept in memory) and flushed at least once a second, so a crash loses at
most about a second; the WAV headers are patched on every write, so a file cut short is still a valid WAV.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import wave
from dataclasses import asdict
from pathlib import Path
from typing import IO

import numpy as np

from engine.metrics import names as m
from engine.metrics.jsonsafe import json_safe
from engine.pipeline.records import WordRecord

log = logging.getLogger(__name__)

INPUT_WAV = "input.wav"
OUTPUT_WAV = "output.wav"
TRANSCRIPT = "transcript.jsonl"
METRICS = "metrics.jsonl"
REPORT = "report.json"
FLUSH_EVERY_S = 1.0


class RecorderError(RuntimeError):
    pass


class _WavWriter:
    """16-bit mono PCM written through; the header is patched by ``wave`` on every write."""

    def __init__(self, path: Path, rate: int) -> None:
        self._file: IO[bytes] = open(path, "wb")
        self._wav = wave.open(self._file, "wb")
        self._wav.setnchannels(1)
        self._wav.setsampwidth(2)
        self._wav.setframerate(rate)
        self.rate = rate
        self.frames = 0

    def write(self, samples: np.ndarray) -> None:
        pcm = (np.clip(np.asarray(samples, np.float32), -1.0, 1.0) * 32767.0).astype("<i2")
        self._wav.writeframes(pcm.tobytes())
        self.frames += pcm.size

    def silence(self, seconds: float) -> None:
        frames = int(round(seconds * self.rate))
        while frames > 0:
            n = min(frames, self.rate)
            self.write(np.zeros(n, np.float32))
            frames -= n

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._wav.close()
        self._file.close()


class SessionRecorder:
    """Thread-safe; the output WAV holds the voice placed at its play times (silence where it was quiet)."""

    def __init__(self, folder: Path | str, input_rate: int, output_rate: int) -> None:
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._input = _WavWriter(self.folder / INPUT_WAV, input_rate)
            self._output = _WavWriter(self.folder / OUTPUT_WAV, output_rate)
            self._transcript = open(self.folder / TRANSCRIPT, "w", encoding="utf-8")
            self._metrics = open(self.folder / METRICS, "w", encoding="utf-8")
        except OSError as exc:
            raise RecorderError(f"cannot record the session into {self.folder}: {exc}") from exc
        self._lock = threading.Lock()
        self._output_end_s = 0.0  # session time the output file has reached
        self._last_flush = time.monotonic()
        self._closed = False

    def input_audio(self, samples: np.ndarray) -> None:
        with self._lock:
            if not self._closed:
                self._input.write(samples)
                self._maybe_flush()

    def output_audio(self, samples: np.ndarray, start_s: float) -> None:
        """The voice's piece that starts playing at ``start_s`` on the session clock."""
        with self._lock:
            if self._closed:
                return
            if start_s > self._output_end_s:
                self._output.silence(start_s - self._output_end_s)
            self._output.write(samples)
            self._output_end_s = self._output.frames / self._output.rate
            self._maybe_flush()

    def transcript(self, event: dict) -> None:
        self._line(self._transcript, event)

    def words(self, event: str, records: list[WordRecord]) -> None:
        """Each word's record as it was ``event`` ("committed", "spoken") in the transcript, with its lag."""
        for record in records:
            self.transcript({"event": event, **asdict(record), m.EAR_VOICE_LAG_S: record.lag_s})

    def metrics(self, event: dict) -> None:
        self._line(self._metrics, event)

    def report(self, report: dict) -> Path:
        path = self.folder / REPORT
        path.write_text(json.dumps(json_safe(report), indent=1), encoding="utf-8")
        return path

    def _line(self, stream: IO[str], event: dict) -> None:
        with self._lock:
            if not self._closed:
                stream.write(json.dumps(json_safe(event)) + "\n")
                self._maybe_flush()

    def _maybe_flush(self) -> None:
        now = time.monotonic()
        if now - self._last_flush >= FLUSH_EVERY_S:
            self._flush()
            self._last_flush = now

    def _flush(self) -> None:
        for stream in (self._input, self._output, self._transcript, self._metrics):
            stream.flush()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for writer in (self._input, self._output):
                writer.close()
            self._transcript.close()
            self._metrics.close()
