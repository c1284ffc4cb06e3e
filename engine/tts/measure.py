"""Run text through the synthesizer with timing, and turn the run into METRICS.md figures."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.metrics import aggregate
from engine.metrics import names as m
from engine.tts.pieces import AudioPiece
from engine.tts.quality import snr_db, word_distances_db
from engine.tts.synthesizer import IncrementalSynthesizer


@dataclass
class TtsRun:
    """Pieces of one run with the compute time at which each was ready (0 = all words needed were held)."""

    pieces: list[AudioPiece] = field(default_factory=list)
    ready_s: list[float] = field(default_factory=list)
    latents: list[np.ndarray] = field(default_factory=list)  # per sentence, for seam checks

    @property
    def audio(self) -> np.ndarray:
        return np.concatenate([p.samples for p in self.pieces]) if self.pieces else np.zeros(0, np.float32)

    def gen_s(self) -> list[float]:
        """Compute spent on each piece (all input available, so nothing was waited for)."""
        return gen_times(self.ready_s, [0.0] * len(self.ready_s))

    def audio_s(self) -> list[float]:
        return [p.audio_s for p in self.pieces]


def run_all_input(
    synthesizer: IncrementalSynthesizer,
    sentences: Iterable[str],
    timer: Callable[[], float] = time.perf_counter,
) -> TtsRun:
    """All input available: each sentence is fed whole and ended; times are compute since its start."""
    run = TtsRun()
    elapsed = 0.0
    for text in sentences:
        t0 = timer()
        base = elapsed

        def collect(piece: AudioPiece, t0: float = t0, base: float = base) -> None:
            run.pieces.append(piece)
            run.ready_s.append(base + timer() - t0)

        synthesizer.on_piece = collect
        synthesizer.feed(text)
        synthesizer.end_sentence()
        elapsed = base + timer() - t0
        if synthesizer.last_sentence_latent is not None:
            run.latents.append(synthesizer.last_sentence_latent)
        synthesizer.on_piece = None
    return run


def gen_times(ready_s: Sequence[float], inputs_at_s: Sequence[float]) -> list[float]:
    """``gen_s[i]``: compute from when the engine could start on piece i (the previous piece was done and the
    words it needs had arrived) until it was ready. Includes the front end and everything else on that path."""
    times = []
    previous = 0.0
    for ready, inputs_at in zip(ready_s, inputs_at_s, strict=True):
        times.append(max(ready - max(previous, inputs_at), 0.0))
        previous = ready
    return times


def time_balance(gen_s: Sequence[float], audio_s: Sequence[float]) -> list[float]:
    """``time_balance[i] = sum(audio_s[0..i-1]) - sum(gen_s[1..i])`` for i ≥ 1 (all input available)."""
    return [float(np.sum(audio_s[:i]) - np.sum(gen_s[1 : i + 1])) for i in range(1, len(gen_s))]


def sentence_metrics(run: TtsRun, reference: TtsRun | None, sample_rate: int, decode: Callable) -> dict:
    """Figures for one sentence's run (``run`` holds exactly one sentence)."""
    gen, audio = run.gen_s(), run.audio_s()
    ratios = [g / a for g, a in zip(gen, audio, strict=True) if a > 0]
    figures: dict = {
        m.FIRST_AUDIO_S: run.ready_s[0] if run.ready_s else None,
        m.GEN_S: gen,
        m.AUDIO_S: audio,
        m.COMPUTE_RATIO: aggregate(ratios),
        m.TIME_BALANCE: time_balance(gen, audio),
    }
    if reference is not None:
        figures[m.WORD_DISTANCE_DB] = word_distances_db(
            run.audio, run.pieces, reference.audio, reference.pieces, sample_rate
        )
    if run.latents:
        one_shot = decode(run.latents[0])
        incremental = run.audio
        figures[m.SEAM_SNR_DB] = snr_db(incremental, one_shot) if incremental.shape == one_shot.shape else None
    return figures
