"""``bench echo --ablate``: what the canceller's output costs the recognizer, apart from the session around it.

For every recording of the ``cancel`` route, the recognizer is run again (la2 on the compute-aware clock, as
``bench asr`` runs it, and the stock decode of the whole recording) on three signals of the same room: the speaker
alone (what headphones give), the microphone (the speaker, the room's echo of the voice as it played, fresh noise at
the room's level) and the canceller's output (what the session's recognizer heard). The speaker against the
canceller's output is what its residual and its changes to the speaker cost the words; the route's own
``wer_committed`` against la2 on the canceller's output is what the session around it costs (the voice's timing,
the intake blocks, the echo words).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.asr.backend import AsrBackend
from engine.asr.run import run_policy
from engine.asr.vad import SileroVad
from engine.audio.room import RoomMicrophone
from engine.metrics.wer import corpus_wer

log = logging.getLogger(__name__)

SIGNALS = ("speaker", "microphone", "cancelled")


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
    return {"signals": rows, "recordings": len(kept)}


def format_echo_ablation(ablation: dict) -> str:
    lines = [f"{'signal':<11} {'la2':>6} {'stock_offline':>13}"]
    for name, row in ablation["signals"].items():
        lines.append(f"{name:<11} {row['la2']:>6.3f} {row['stock_offline']:>13.3f}")
    return "\n".join(lines)
