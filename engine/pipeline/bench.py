"""``liveshadow bench shadow``: the default configuration on every recording of a manifest (simulated clock)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from engine.asr.bench import LONG_RECORDING, load_manifest
from engine.eval.runner import aggregate_reports
from engine.metrics import machine_info
from engine.metrics import names as m
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.shadow import shadow_file

log = logging.getLogger(__name__)


def run_bench(
    manifest: Path,
    config: ShadowConfig | None = None,
    progress: Callable[[str], None] | None = None,
    models: Models | None = None,
) -> dict:
    """Every recording through ``shadow_file``; the corpus figures are the evaluation's, so the two agree."""
    config = config or ShadowConfig()
    models = models or Models.load(config)
    entries = load_manifest(manifest)
    if not entries:
        raise ValueError(f"{manifest} lists no recordings")
    reports = []
    for number, entry in enumerate(entries, 1):
        if progress:
            progress(f"{number}/{len(entries)} {entry['id']}")
        reports.append(shadow_file(entry["path"], config, models, entry=entry))
    return {
        "bench": "shadow",
        "machine": machine_info(),
        "config": {**reports[0]["config"], "manifest": str(manifest), "recordings": len(entries),
                   "source_times": "manifest word_times where present, else recognizer word timestamps"},
        "results": {"default": aggregate_reports(reports, entries)},
        "per_recording": {e["id"]: {k: r[k] for k in (m.EAR_VOICE_LAG_S, m.UNDERRUNS, m.WER_SPOKEN, m.LAG_DRIFT_S,
                                                        m.STARVED_S, "source_times")}
                          for e, r in zip(entries, reports, strict=True)},
    }  # fmt: skip


def format_table(report: dict) -> str:
    r = report["results"]["default"]
    lag = r[m.EAR_VOICE_LAG_S]
    drift = r[m.LAG_DRIFT_S].get(LONG_RECORDING)
    lines = [
        f"ear_voice_lag_s median {lag['median']:.2f} s, p90 {lag['p90']:.2f} s, max {lag['max']:.2f} s "
        f"({lag['n']} words)",
        f"chunk_delay_s median {r[m.CHUNK_DELAY_S]['median']:.2f} s; commit_latency_s median "
        f"{r[m.COMMIT_LATENCY_S]['median']:.2f} s; first_audio_s median {r[m.FIRST_AUDIO_S]['median']:.3f} s",
        f"underruns {r[m.UNDERRUNS]} ({r[m.GAP_S]:.2f} s); starved_s {r[m.STARVED_S]:.1f} s (at commas "
        f"{r['phrase_pause_s']:.1f} s); hurried pieces "
        f"{r['hurried_pieces']}, of them made ahead {r['speculated_pieces']}; lag_drift_s on the "
        f"long passage {'-' if drift is None else f'{drift:+.3f} s/min'}",
        f"wer_committed {r[m.WER_COMMITTED]:.3f}; wer_spoken {r[m.WER_SPOKEN]:.3f}",
    ]
    machine = report["machine"]
    lines.append(f"{report['config']['recordings']} recordings; {machine['cores']} cores, {machine['cpu_model']}")
    return "\n".join(lines)
