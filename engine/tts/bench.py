"""``liveshadow bench tts``: every policy on fixed short, medium and long sentences, all input available."""

from __future__ import annotations

import logging
import resource
from collections.abc import Callable
from pathlib import Path

import numpy as np

from engine.metrics import aggregate, machine_info
from engine.metrics import names as m
from engine.tts.chunker import ChunkSizes
from engine.tts.measure import run_all_input, sentence_metrics
from engine.tts.policies import DEFAULT_LEFT_CONTEXT_PHONEMES, make_policy
from engine.tts.synthesizer import IncrementalSynthesizer
from engine.tts.voice import TwoStageVoice

log = logging.getLogger(__name__)

SENTENCES: dict[str, tuple[str, ...]] = {
    "short": (
        "Please close the door.",
        "The train leaves at noon.",
        "She smiled and waved back.",
    ),
    "medium": (
        "After the meeting ended, the committee agreed to publish the full report next week.",
        "Most of the volunteers arrived early and started sorting the donations by size.",
        "The old bridge over the river was closed for repairs during the whole summer.",
    ),
    "long": (
        "When the interpreters finally reached the conference hall, the first speaker had already begun, so they "
        "took their seats in the booth, adjusted their headphones, and started shadowing his words while quietly "
        "checking the glossary they had prepared the night before.",
        "Researchers who study simultaneous speech processing care about latency as much as accuracy, because a "
        "translation that arrives several seconds late is hard to follow, even when every single word in it is "
        "perfectly correct and clearly spoken.",
        "The small coastal town depends on fishing and tourism, and every spring the harbour fills with visitors "
        "who come to watch the boats return in the evening, buy fresh fish at the market, and walk along the cliffs.",
    ),
}
POLICIES = ("full", "naive", "lookahead-0", "lookahead-1", "lookahead-2")


def peak_rss_mb() -> float:
    """Peak resident memory of this process since start, or since the last ``reset_peak_rss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (Linux), so each policy's peak is measured on its own."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _summary(figures: list[tuple[str, dict]], full_long: float | None, peak: float | None) -> dict:
    """Aggregate one policy's per-sentence figures (``(length, figures)`` pairs)."""
    firsts = [f[m.FIRST_AUDIO_S] for _, f in figures]
    first_long = float(np.median([f[m.FIRST_AUDIO_S] for length, f in figures if length == "long"]))
    ratios = [g / a for _, f in figures for g, a in zip(f[m.GEN_S], f[m.AUDIO_S], strict=True) if a > 0]
    balances = [b for _, f in figures for b in f[m.TIME_BALANCE]]
    words = [d for _, f in figures for d in f.get(m.WORD_DISTANCE_DB, [])]
    seams = [f[m.SEAM_SNR_DB] for _, f in figures if f.get(m.SEAM_SNR_DB) is not None]
    finite_seams = [x for x in seams if np.isfinite(x)]
    return {
        m.FIRST_AUDIO_S: aggregate(firsts),
        m.COMPUTE_RATIO: aggregate(ratios),
        m.TIME_BALANCE: aggregate(balances),
        "time_balance_nonpositive": int(sum(b <= 0 for b in balances)),
        m.WORD_DISTANCE_DB: aggregate(words),
        m.SEAM_SNR_DB: {
            "min": min(seams) if seams else None,
            "median": aggregate(finite_seams)["median"],
            "exact_seams": len(seams) - len(finite_seams),
            "n": len(seams),
        },
        "first_audio_long_s": first_long,
        "full_over_this_first_audio_long": (full_long / first_long) if full_long and first_long else None,
        "peak_rss_mb": peak,
    }


def run_bench(
    policies: tuple[str, ...] = POLICIES,
    sizes: ChunkSizes | None = None,
    threads: int = 1,
    progress: Callable[[str], None] | None = None,
) -> dict:
    voice = TwoStageVoice(threads=threads)
    sizes = sizes or ChunkSizes()
    texts = [(length, text) for length, group in SENTENCES.items() for text in group]

    def synth(policy: str) -> IncrementalSynthesizer:
        return IncrementalSynthesizer(voice, make_policy(policy), sizes)

    run_all_input(synth("lookahead-1"), [SENTENCES["medium"][0]])  # warm-up: first runs allocate
    references = {text: run_all_input(synth("full"), [text]) for _, text in texts}
    per_policy: dict[str, list[tuple[str, dict]]] = {}
    peaks: dict[str, float | None] = {}
    for policy in policies:
        resettable = reset_peak_rss()
        runs = []
        for number, (length, text) in enumerate(texts, 1):
            if progress:
                progress(f"{policy}: sentence {number}/{len(texts)} ({length})")
            runs.append((length, text, run_all_input(synth(policy), [text])))
        peaks[policy] = peak_rss_mb() if resettable else None
        per_policy[policy] = [
            (length, sentence_metrics(run, references[text], voice.sample_rate, voice.stage2))
            for length, text, run in runs
        ]
    # Scale for word_distance_db: the same full-sentence synthesis with another noise seed.
    other = TwoStageVoice(threads=threads, seed=1)
    seed_distances = [
        d
        for _, text in texts
        for d in sentence_metrics(
            run_all_input(IncrementalSynthesizer(other, make_policy("full"), sizes), [text]),
            references[text],
            voice.sample_rate,
            other.stage2,
        )[m.WORD_DISTANCE_DB]
    ]
    full_long = None
    if "full" in per_policy:
        full_long = float(np.median([f[m.FIRST_AUDIO_S] for length, f in per_policy["full"] if length == "long"]))
    return {
        "bench": "tts",
        "machine": machine_info(),
        "config": {
            "voice": "en_US-joe-medium",
            "threads": threads,
            "chunk_phonemes": {"first": sizes.first, "later": sizes.later},
            "delta_frames": 12,
            "left_context_phonemes": DEFAULT_LEFT_CONTEXT_PHONEMES,
            "sentences": {k: len(v) for k, v in SENTENCES.items()},
            "input": "all available",
        },
        "results": {policy: _summary(figs, full_long, peaks[policy]) for policy, figs in per_policy.items()},
        "calibration": {"full_other_seed_word_distance_db": aggregate(seed_distances)},
        "peak_rss_mb": peak_rss_mb(),
    }


def format_table(report: dict) -> str:
    rows = [
        f"{'policy':<12} {'first_audio_s':>13} {'compute_ratio':>13} {'min balance':>11} "
        f"{'word_dist_db':>12} {'seam_snr_db':>11} {'full/this (long)':>16} {'peak RSS MB':>11}"
    ]
    for policy, r in report["results"].items():
        seam = r[m.SEAM_SNR_DB]["min"]
        seam_text = (
            "exact"
            if seam == float("inf") or (seam is None and r[m.SEAM_SNR_DB]["exact_seams"])
            else (f"{seam:.1f}" if seam is not None else "-")
        )
        balance = r[m.TIME_BALANCE]["min"] if r[m.TIME_BALANCE]["n"] else float("nan")
        rows.append(
            f"{policy:<12} {r[m.FIRST_AUDIO_S]['median']:>13.3f} {r[m.COMPUTE_RATIO]['median']:>13.3f} "
            f"{balance:>11.3f} {r[m.WORD_DISTANCE_DB]['mean']:>12.2f} {seam_text:>11} "
            f"{r['full_over_this_first_audio_long'] or float('nan'):>16.2f} {r['peak_rss_mb'] or float('nan'):>11.0f}"
        )
    calibration = report["calibration"]["full_other_seed_word_distance_db"]["mean"]
    machine = report["machine"]
    rows.append(f"word_dist_db scale: the full sentence with another noise seed scores {calibration:.2f} dB")
    rows.append(f"process peak RSS {report['peak_rss_mb']:.0f} MB; {machine['cores']} cores, {machine['cpu_model']}")
    return "\n".join(rows)
