"""``liveshadow transcribe``: one recording through the streaming recognizer, with its report."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from engine.asr.backend import AsrBackend
from engine.asr.commit import make_commit_policy
from engine.asr.offline import offline_text, transcribe_long
from engine.asr.report import transcription_report
from engine.asr.run import DEFAULT_MIN_STEP_S, run_stream
from engine.asr.streaming import StreamingRecognizer
from engine.asr.vad import SileroVad
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.clock import RealClock, SimulatedClock
from engine.metrics import machine_info

log = logging.getLogger(__name__)


def manifest_entry(wav: Path) -> dict | None:
    """The entry of a ``manifest.jsonl`` beside the recording's folder (or in it) that names this file."""
    wav = wav.resolve()
    for manifest in (wav.parent / "manifest.jsonl", wav.parent.parent / "manifest.jsonl"):
        if not manifest.is_file():
            continue
        for line in manifest.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            if (manifest.parent / entry.get("wav", "")).resolve() == wav:
                return entry
    return None


def transcribe_file(
    path: Path,
    backend: AsrBackend,
    commit: str = "la2",
    realtime: bool = False,
    min_step_s: float = DEFAULT_MIN_STEP_S,
    vad: SileroVad | None = None,
    entry: dict | None = None,
) -> dict:
    audio = load_audio(path)
    entry = entry if entry is not None else manifest_entry(path)
    recognizer = StreamingRecognizer(backend, make_commit_policy(commit), vad if vad is not None else SileroVad())
    clock = RealClock() if realtime else SimulatedClock()
    run = run_stream(audio, recognizer, clock, min_step_s)
    offline_words = transcribe_long(backend, audio)
    if entry and entry.get("word_times"):
        reference = [Word(t, float(s), float(e)) for t, s, e in entry["word_times"]]
        source = "manifest word_times (forced alignment)"
    else:
        reference = offline_words
        source = "offline ASR word timestamps"
    text = entry.get("text") if entry else None
    report = transcription_report(run, text, reference, source, offline_text(backend, audio) if text else None)
    report.update(
        {
            "command": "transcribe",
            "file": str(path),
            "config": {
                "backend": backend.name,
                "commit": commit,
                "mode": "realtime" if realtime else "simulate",
                "min_step_s": min_step_s,
            },
            "machine": machine_info(),
        }
    )
    return report
