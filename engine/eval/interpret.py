"""``liveshadow eval`` on a translation manifest (entries with ``lang`` and ``translation``): every recording
interpreted into English for each TTS × commit policy, scored as ``bench interpret`` scores it.

Writes ``report.json`` (per configuration and per recording, METRICS.md names), ``report.csv`` (one row per recording
and configuration) and two plots: BLEU against computation-aware Average Lagging, one point per configuration, and
the ear-voice lag over the longest recording.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

from engine.eval.runner import lag_trace, tts_config, write_report
from engine.metrics import machine_info
from engine.metrics import names as m
from engine.pipeline.bench_interpret import interpret_results, offline_translations, translation_entries
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.shadow import shadow_file

log = logging.getLogger(__name__)

CSV_FIELDS = (
    "id",
    "lang",
    "tts_policy",
    "commit",
    "duration_s",
    m.BLEU,
    m.CHRF,
    m.AL_S,
    m.AL_CA_S,
    m.END_OFFSET_S,
    "ear_voice_lag_median_s",
    "ear_voice_lag_p90_s",
    m.FIRST_AUDIO_S,
    m.UNDERRUNS,
    m.GAP_S,
    "non_english_words",
    "committed_text",
    "offline_text",
)


def is_translation_manifest(entries: list[dict]) -> bool:
    """Every recording names its language and carries a reference translation (``../shared/speech-xx``)."""
    return bool(entries) and all(e.get("lang") and e.get("translation") for e in entries)


def _row(entry: dict, tts: str, commit: str, report: dict, offline: str) -> dict:
    lag = report[m.EAR_VOICE_LAG_S]
    return {
        "id": entry["id"],
        "lang": entry["lang"],
        "tts_policy": tts,
        "commit": commit,
        "duration_s": report.get("audio_s_heard"),
        m.BLEU: report.get(m.BLEU),
        m.CHRF: report.get(m.CHRF),
        m.AL_S: report.get(m.AL_S),
        m.AL_CA_S: report.get(m.AL_CA_S),
        m.END_OFFSET_S: report.get(m.END_OFFSET_S),
        "ear_voice_lag_median_s": lag["median"],
        "ear_voice_lag_p90_s": lag["p90"],
        m.FIRST_AUDIO_S: report[m.FIRST_AUDIO_S]["median"],
        m.UNDERRUNS: report[m.UNDERRUNS],
        m.GAP_S: report[m.GAP_S],
        "non_english_words": report.get("non_english_words", 0),
        "committed_text": report["committed_text"],
        "offline_text": offline,
    }


def run_interpret_eval(
    manifest: Path,
    out_dir: Path,
    tts_policies: Sequence[str],
    commits: Sequence[str],
    progress: Callable[[str], None] | None = None,
    models: Models | None = None,
    base: ShadowConfig | None = None,
) -> dict:
    """``base``: the settings every configuration starts from (its ``translate_from`` is each recording's language)."""
    entries = translation_entries(manifest)
    out_dir.mkdir(parents=True, exist_ok=True)
    base = replace(base or ShadowConfig(), translate_from=entries[0]["lang"])
    configs = {f"{t}+{c}": (t, c, replace(base, commit=c, **tts_config(t))) for t in tts_policies for c in commits}
    models = models or Models.load(base)
    offline = offline_translations(models.backend, entries, progress)
    results, rows, lags = {}, [], {}
    total, done = len(configs) * len(entries), 0
    for name, (tts, commit, config) in configs.items():
        reports = []
        for entry, text in zip(entries, offline, strict=True):
            done += 1
            if progress:
                progress(f"{done}/{total} {name} {entry['id']}")
            report = shadow_file(
                entry["path"], replace(config, translate_from=entry["lang"]), models, entry=entry, speech_chain=False
            )
            reports.append(report)
            rows.append(_row(entry, tts, commit, report, text))
        results[name] = interpret_results(entries, reports, offline)
        lags[name] = lag_trace(entries, reports)
    report = {
        "eval": "interpret",
        "machine": machine_info(),
        "manifest": str(manifest),
        "config": {
            "tts_policies": list(tts_policies),
            "commits": list(commits),
            "defaults": asdict(base),
            "model": "whisper base (translate)",
            "mode": "simulate",
        },
        "results": results,
        "recordings": rows,
    }
    shown = "lookahead-1+la2" if "lookahead-1+la2" in lags else next(iter(lags))
    return write_report(
        out_dir,
        report,
        rows,
        CSV_FIELDS,
        lambda plots: [
            plots.bleu_vs_lagging(out_dir, results),
            plots.lag_over_time(out_dir, lags[shown]["words"], f"Ear-voice lag over {lags[shown]['id']} ({shown})"),
        ],
    )
