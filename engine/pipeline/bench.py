"""``liveshadow bench shadow``: the default configuration on every recording of a manifest (simulated clock)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import jiwer

from engine.asr.bench import LONG_RECORDING, load_manifest
from engine.asr.words import normalize_text
from engine.metrics import aggregate, machine_info
from engine.metrics import names as m
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.shadow import shadow_file

log = logging.getLogger(__name__)


def run_bench(
    manifest: Path, config: ShadowConfig | None = None, progress: Callable[[str], None] | None = None
) -> dict:
    config = config or ShadowConfig()
    models = Models.load(config)
    entries = load_manifest(manifest)
    reports = []
    for number, entry in enumerate(entries, 1):
        if progress:
            progress(f"{number}/{len(entries)} {entry['id']}")
        report = shadow_file(entry["path"], config, models, entry=entry)
        report["id"] = entry["id"]
        reports.append(report)
    refs = [normalize_text(e["text"]) for e in entries]
    lags = [x for r in reports for x in r["ear_voice_lag_values_s"]]
    long = next((r for r in reports if r["id"] == LONG_RECORDING), None)
    result = {
        m.EAR_VOICE_LAG_S: aggregate(lags),
        m.CHUNK_DELAY_S: aggregate([r[m.CHUNK_DELAY_S] for r in reports if r[m.CHUNK_DELAY_S] is not None]),
        m.LAG_DRIFT_S: long[m.LAG_DRIFT_S] if long else None,
        m.WER_COMMITTED: float(jiwer.wer(refs, [normalize_text(r["committed_text"]) for r in reports])),
        m.WER_SPOKEN: float(jiwer.wer(refs, [normalize_text(r.get("spoken_recognized_text", "")) for r in reports])),
        m.UNDERRUNS: sum(r[m.UNDERRUNS] for r in reports),
        m.GAP_S: sum(r[m.GAP_S] for r in reports),
        m.STARVED_S: sum(r[m.STARVED_S] for r in reports),
        m.COMMIT_LATENCY_S: aggregate([x for r in reports for x in _latencies(r)]),
        m.FIRST_AUDIO_S: aggregate([r[m.FIRST_AUDIO_S]["median"] for r in reports if r[m.FIRST_AUDIO_S]["n"]]),
    }
    return {
        "bench": "shadow",
        "machine": machine_info(),
        "config": {**(reports[0]["config"] if reports else {}), "manifest": str(manifest), "recordings": len(entries),
                   "source_times": "manifest word_times where present, else recognizer word timestamps"},
        "results": {"default": result},
        "per_recording": {r["id"]: {k: r[k] for k in (m.EAR_VOICE_LAG_S, m.UNDERRUNS, m.WER_SPOKEN, m.LAG_DRIFT_S,
                                                        m.STARVED_S, "source_times")} for r in reports},
    }  # fmt: skip


def _latencies(report: dict) -> list[float]:
    return [w["commit_s"] - w["source_end_s"] for w in report["words"]]


def format_table(report: dict) -> str:
    r = report["results"]["default"]
    lag = r[m.EAR_VOICE_LAG_S]
    drift = r[m.LAG_DRIFT_S]
    lines = [
        f"ear_voice_lag_s median {lag['median']:.2f} s, p90 {lag['p90']:.2f} s, max {lag['max']:.2f} s "
        f"({lag['n']} words)",
        f"chunk_delay_s median {r[m.CHUNK_DELAY_S]['median']:.2f} s; commit_latency_s median "
        f"{r[m.COMMIT_LATENCY_S]['median']:.2f} s; first_audio_s median {r[m.FIRST_AUDIO_S]['median']:.3f} s",
        f"underruns {r[m.UNDERRUNS]} ({r[m.GAP_S]:.2f} s); starved_s {r[m.STARVED_S]:.1f} s; lag_drift_s on the "
        f"long passage {'-' if drift is None else f'{drift:+.3f} s/min'}",
        f"wer_committed {r[m.WER_COMMITTED]:.3f}; wer_spoken {r[m.WER_SPOKEN]:.3f}",
    ]
    machine = report["machine"]
    lines.append(f"{report['config']['recordings']} recordings; {machine['cores']} cores, {machine['cpu_model']}")
    return "\n".join(lines)
