"""``bench echo --ablate``: what the canceller's output costs the recognizer, apart from the session around it.

For every recording of the ``cancel`` route, the recognizer is run again (la2 on the compute-aware clock, as
``bench asr`` runs it, and the stock decode of the whole recording) on three signals of the same room: the speaker
alone (what headphones give), the microphone (the speaker, the room's echo of the voice as it played, fresh noise at
the room's level) and the canceller's output (what the session's recognizer heard). The speaker against the
canceller's output is what its residual and its changes to the speaker cost the words; the route's own
``wer_committed`` against la2 on the canceller's output is what the session around it costs (the voice's timing,
the intake blocks, the echo words).

Two figures of each signal say where its words go: ``speaker_kept_db``, the speaker's speech against everything in
the signal that is not the speaker, over the frames where the speaker talks (what double talk leaves of them), and
``echo_left_db``, what the signal holds where the speaker is silent, against the speaker's speech (the voice's words
there are what the recognizer takes for the speaker's). Each is given per recording and as a mean over them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.asr.backend import AsrBackend
from engine.asr.run import run_policy
from engine.asr.vad import SileroVad
from engine.audio.levels import frame_power
from engine.audio.room import RoomMicrophone
from engine.metrics.wer import corpus_wer

log = logging.getLogger(__name__)

SIGNALS = ("speaker", "microphone", "cancelled")
FRAME = 320  # 20 ms
FIGURES = ("speaker_kept_db", "echo_left_db")
TALKING_DB = 30.0  # a frame within this of the speaker's loud frames (their 90th percentile) is the speaker talking


@dataclass(frozen=True)
class HeardSignals:
    """One recording's three signals (16 kHz, aligned with the speaker's recording, its tail included)."""

    recording: str
    text: str
    speaker: np.ndarray
    microphone: np.ndarray
    cancelled: np.ndarray

    def signal(self, name: str) -> np.ndarray:
        return {"speaker": self.speaker, "microphone": self.microphone, "cancelled": self.cancelled}[name]


def heard_signals(recording: str, text: str, room: RoomMicrophone, cancelled: np.ndarray, seed: int) -> HeardSignals:
    """The signals of one recording from its room (speaker and echo as heard) and the canceller's aligned output."""
    n = room.speaker.size
    noise = np.random.default_rng(seed).standard_normal(n).astype(np.float32) * room.noise_level
    out = np.zeros(n, np.float32)
    out[: min(n, cancelled.size)] = cancelled[:n]
    return HeardSignals(recording, text, room.speaker.copy(), room.speaker + room.echo + noise, out)


def signal_figures(heard: HeardSignals, name: str) -> tuple[float, float]:
    """``speaker_kept_db`` and ``echo_left_db`` of one signal (module docstring)."""
    n = min(heard.speaker.size, heard.signal(name).size) // FRAME * FRAME
    speaker = frame_power(heard.speaker[:n], FRAME)
    left = frame_power(heard.signal(name)[:n].astype(np.float64) - heard.speaker[:n], FRAME)
    if not speaker.size or not np.any(speaker > 0):
        return float("nan"), float("nan")
    talking = speaker > np.percentile(speaker, 90) * 10 ** (-TALKING_DB / 10)
    speech = float(np.mean(speaker[talking]))
    kept = 10 * np.log10(speech / max(float(np.mean(left[talking])), 1e-20))
    silent = left[~talking]
    echo_left = 10 * np.log10(max(float(np.mean(silent)), 1e-20) / speech) if silent.size else float("nan")
    return float(kept), float(echo_left)


def run_echo_ablation(
    kept: list[HeardSignals],
    backend: AsrBackend,
    vad: SileroVad,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Per signal, la2's and the stock decode's corpus WER over the recordings (and their texts)."""
    refs = [k.text for k in kept]
    rows: dict[str, dict] = {}
    for name in SIGNALS:
        if progress:
            progress(f"ablation: {name}")
        streamed, stock = [], []
        for k in kept:
            run = run_policy(k.signal(name), backend, vad)
            streamed.append(" ".join(w.text for w in run.committed))
            stock.append(backend.transcribe_stock(k.signal(name)))  # type: ignore[attr-defined]
        rows[name] = {
            "la2": corpus_wer(refs, streamed),
            "stock_offline": corpus_wer(refs, stock),
            "texts": dict(zip([k.recording for k in kept], streamed, strict=True)),
        }
        if name != "speaker":  # the speaker alone holds nothing else
            rows[name].update(_figures(kept, name))
    return {"signals": rows, "recordings": len(kept)}


def _figures(kept: list[HeardSignals], name: str) -> dict:
    """``speaker_kept_db`` and ``echo_left_db`` of one signal: their means over the recordings, and each one's."""
    each = {k.recording: signal_figures(k, name) for k in kept}

    def mean(i: int) -> float | None:
        values = [f[i] for f in each.values() if np.isfinite(f[i])]
        return round(float(np.mean(values)), 2) if values else None

    return {
        **{key: mean(i) for i, key in enumerate(FIGURES)},
        "per_recording": {
            r: {key: round(v, 2) if np.isfinite(v) else None for key, v in zip(FIGURES, f, strict=True)}
            for r, f in each.items()
        },
    }


def format_echo_ablation(ablation: dict) -> str:
    lines = [f"{'signal':<11} {'la2':>6} {'stock_offline':>13} {'speaker_kept_db':>15} {'echo_left_db':>12}"]
    for name, row in ablation["signals"].items():
        kept, left = row.get("speaker_kept_db"), row.get("echo_left_db")
        kept_text = "-" if kept is None else f"{kept:.1f}"
        left_text = "-" if left is None else f"{left:.1f}"
        lines.append(f"{name:<11} {row['la2']:>6.3f} {row['stock_offline']:>13.3f} {kept_text:>15} {left_text:>12}")
    return "\n".join(lines)
