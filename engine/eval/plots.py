"""The evaluation's figures, in the style of the papers, one PNG each, axes labelled with units.

- ``latency_vs_length.png``: first-audio latency against sentence length, full sentence vs incremental
  (Ma et al. 2020, Fig. 5/7), all input available.
- ``time_balance_by_chunk.png``: time balance by chunk position (Ma et al., Fig. 6).
- ``gen_vs_audio_by_chunk.png``: generation time and audio time by chunk position (Ma et al., Fig. 8).
- ``wer_vs_latency.png``: WER against commit latency for the commit policies (Liu et al. 2020, Fig. 3).
- ``lag_over_time.png``: ear-voice lag per word over the longest recording, with its drift.
- ``lag_vs_quality.png``: ear-voice lag against word distance from the whole-sentence voice, one point per voice
  policy (the READ/SPEAK paper's latency/quality trade-off).
- ``bleu_vs_lagging.png`` (a translation manifest): BLEU against computation-aware Average Lagging per configuration.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never a window (and never Qt from the engine)
import matplotlib.pyplot as plt
import numpy as np

from engine.metrics import names as m
from engine.metrics.shadowing import lag_drift_s
from engine.tts.chunker import ChunkSizes
from engine.tts.measure import run_all_input, time_balance
from engine.tts.policies import make_policy
from engine.tts.synthesizer import IncrementalSynthesizer

log = logging.getLogger(__name__)

LENGTHS = (4, 8, 12, 16, 24, 32, 40)
DPI = 110


def _finish(fig: plt.Figure, ax: plt.Axes, path: Path, xlabel: str, ylabel: str, title: str, legend: bool) -> str:
    """Label, grid and save a one-axis figure; returns the file's name."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path.name


def _tts_runs(voice, texts: list[str]) -> dict:
    """All input available: first audio per length, and per-chunk figures of the incremental policy."""
    words = " ".join(texts).split()
    firsts: dict[str, dict[int, list[float]]] = {"full": defaultdict(list), "lookahead-1": defaultdict(list)}
    chunks: dict[str, dict[int, list[float]]] = {
        "gen": defaultdict(list),
        "audio": defaultdict(list),
        "balance": defaultdict(list),
    }
    for length in LENGTHS:
        for start in range(0, max(len(words) - length, 0) + 1, max(length * 3, 24))[:3]:
            sentence = " ".join(words[start : start + length]).rstrip(".,;:!?") + "."
            for policy in firsts:
                run = run_all_input(IncrementalSynthesizer(voice, make_policy(policy), ChunkSizes()), [sentence])
                if not run.ready_s:
                    continue
                firsts[policy][length].append(run.ready_s[0])
                if policy == "lookahead-1" and length >= 24:
                    for i, (g, a) in enumerate(zip(run.gen_s(), run.audio_s(), strict=True)):
                        chunks["gen"][i].append(g)
                        chunks["audio"][i].append(a)
                    for i, b in enumerate(time_balance(run.gen_s(), run.audio_s()), 1):
                        chunks["balance"][i].append(b)
    return {"firsts": firsts, "chunks": chunks}


def latency_vs_length(out: Path, runs: dict) -> str:
    fig, ax = plt.subplots(figsize=(6, 4))
    for policy, style in (("full", "s-"), ("lookahead-1", "o-")):
        data = runs["firsts"][policy]
        xs = sorted(data)
        ax.plot(xs, [np.median(data[x]) for x in xs], style, label=policy)
    return _finish(
        fig,
        ax,
        out / "latency_vs_length.png",
        "sentence length (words)",
        "first-audio latency (s)",
        "Latency vs input length, all input available",
        legend=True,
    )


def _by_position(ax, data: dict[int, list[float]], label: str, style: str) -> None:
    xs = sorted(data)
    if not xs:
        return
    med = [np.median(data[x]) for x in xs]
    lo = [np.min(data[x]) for x in xs]
    hi = [np.max(data[x]) for x in xs]
    ax.plot(xs, med, style, label=label)
    ax.fill_between(xs, lo, hi, alpha=0.15)


def time_balance_by_chunk(out: Path, runs: dict) -> str:
    fig, ax = plt.subplots(figsize=(6, 4))
    _by_position(ax, runs["chunks"]["balance"], "lookahead-1 (median, range)", "o-")
    ax.axhline(0, color="k", lw=0.8)
    return _finish(
        fig,
        ax,
        out / "time_balance_by_chunk.png",
        "chunk position in the sentence",
        "time balance (s)",
        "Time balance by chunk (> 0: gapless)",
        legend=True,
    )


def gen_vs_audio_by_chunk(out: Path, runs: dict) -> str:
    fig, ax = plt.subplots(figsize=(6, 4))
    _by_position(ax, runs["chunks"]["audio"], "audio time", "o-")
    _by_position(ax, runs["chunks"]["gen"], "generation time", "s-")
    return _finish(
        fig,
        ax,
        out / "gen_vs_audio_by_chunk.png",
        "chunk position in the sentence",
        "time (s)",
        "Generation vs audio time by chunk (lookahead-1)",
        legend=True,
    )


def _labelled_points(ax, points: list[tuple[str, float | None, float | None]]) -> None:
    """A point per (label, x, y), its label beside it; one with no x or y is left out. Labels alternate above and
    below their points: configurations with similar figures sit close together."""
    for i, (label, x, y) in enumerate(points):
        if x is None or y is None:
            continue
        ax.plot(x, y, "o")
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4 if i % 2 == 0 else -11), fontsize=7)


def wer_vs_latency(out: Path, results: dict) -> str:
    fig, ax = plt.subplots(figsize=(6, 4))
    _labelled_points(ax, [(name, r[m.COMMIT_LATENCY_S]["median"], r[m.WER_COMMITTED]) for name, r in results.items()])
    return _finish(
        fig,
        ax,
        out / "wer_vs_latency.png",
        "commit latency, median (s)",
        "WER of committed words",
        "Accuracy vs latency of the commit policies",
        legend=False,
    )


def lag_vs_quality(out: Path, results: dict) -> str:
    """The voice policies' trade-off: ear-voice lag (median) against ``word_distance_db`` (mean), a point each."""
    fig, ax = plt.subplots(figsize=(6, 4))
    _labelled_points(
        ax,
        [
            (
                f"{name} ({r[m.UNDERRUNS]} underruns)",
                r[m.EAR_VOICE_LAG_S]["median"],
                (r.get(m.WORD_DISTANCE_DB) or {}).get("mean"),
            )
            for name, r in results.items()
        ],
    )
    return _finish(
        fig,
        ax,
        out / "lag_vs_quality.png",
        "ear_voice_lag_s, median (s)",
        "word_distance_db, mean (dB)",
        "Lag vs voice quality of the voice policies",
        legend=False,
    )


def bleu_vs_lagging(out: Path, results: dict) -> str:
    """Interpreting: translation quality against computation-aware Average Lagging, one point per configuration."""
    fig, ax = plt.subplots(figsize=(6, 4))
    _labelled_points(ax, [(name, r[m.AL_CA_S], r[m.BLEU]) for name, r in results.items()])
    offline = next((r[m.BLEU_OFFLINE] for r in results.values() if r[m.BLEU_OFFLINE] is not None), None)
    if offline is not None:
        ax.axhline(offline, color="grey", linestyle="--", label="whole recording (bleu_offline)")
    return _finish(
        fig,
        ax,
        out / "bleu_vs_lagging.png",
        "al_ca_s, median (s)",
        "BLEU of committed English",
        "Quality vs lagging of the interpreting configurations",
        legend=offline is not None,
    )


def lag_over_time(out: Path, words: list[tuple[float, float]], title: str, name: str = "lag_over_time.png") -> str:
    fig, ax = plt.subplots(figsize=(7, 4))
    if words:
        x, y = (np.asarray(v) for v in zip(*words, strict=True))
        ax.plot(x, y, ".", ms=4, label="ear-voice lag per word")
        drift = lag_drift_s(x.tolist(), y.tolist())
        if drift is not None:
            slope, intercept = np.polyfit(x / 60.0, y, 1)
            ax.plot(x, intercept + slope * x / 60.0, "r-", label=f"drift {drift:+.3f} s/min")
        ax.legend()
    return _finish(fig, ax, out / name, "source time (s)", "ear-voice lag (s)", title, legend=False)


def write_all(out: Path, report: dict, lags: dict, models, entries: list[dict]) -> list[str]:
    runs = _tts_runs(models.voice, [e["text"].lower() for e in entries])
    files = [
        latency_vs_length(out, runs),
        time_balance_by_chunk(out, runs),
        gen_vs_audio_by_chunk(out, runs),
        wer_vs_latency(out, report["results"]),
        lag_vs_quality(out, report["results"]),
    ]
    name = "lookahead-1+la2" if "lookahead-1+la2" in lags else next(iter(lags))
    files.append(lag_over_time(out, lags[name]["words"], f"Ear-voice lag over {lags[name]['id']} ({name})"))
    return files


def _series(out: Path, points: list[tuple[float, float]], ylabel: str, title: str, name: str) -> str:
    fig, ax = plt.subplots(figsize=(7, 4))
    if points:
        x, y = (np.asarray(v) for v in zip(*points, strict=True))
        ax.plot(x / 60.0, y, ".", ms=2)
    return _finish(fig, ax, out / name, "session time (min)", ylabel, title, legend=False)


def write_soak(
    out: Path, lags: list[tuple[float, float]], steps: list[tuple[float, float]], memory: list[tuple[float, float]]
) -> list[str]:
    return [
        lag_over_time(out, lags, "Ear-voice lag over the soak", "soak_lag.png"),
        _series(out, steps, "recognizer step cost (s)", "Recognizer step cost over the soak", "soak_step_cost.png"),
        _series(out, memory, "resident memory (MB)", "Process memory over the soak", "soak_memory.png"),
    ]
