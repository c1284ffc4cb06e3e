"""``liveshadow eval``: every recording of a manifest through the pipeline for each TTS × commit policy.

Writes ``report.json`` (per recording and aggregated per configuration, METRICS.md names), ``report.csv`` (one row
per recording and configuration) and the plots (``engine/eval/plots.py``). Word times of the reference come from the
manifest's forced alignment where it has them, else from an offline recognition of the recording; the report
says which for every recording.
"""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from types import ModuleType

from engine.asr.bench import load_manifest
from engine.asr.offline import offline_text, transcribe_long
from engine.audio.io import load_audio
from engine.metrics import machine_info
from engine.metrics import names as m
from engine.metrics.jsonsafe import json_safe
from engine.metrics.wer import wer
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.shadow import shadow_file
from engine.pipeline.summary import aggregate_reports
from engine.tts.learned.agent import LEARNED
from engine.tts.learned.driver import wait_steps_k

log = logging.getLogger(__name__)

TTS_POLICIES = ("full", "naive", "lookahead-0", "lookahead-1", "lookahead-2")
COMMIT_POLICIES = ("la2", "hold2", "waitk", "offline")
CSV_FIELDS = (
    "id",
    "tts_policy",
    "commit",
    "duration_s",
    "reference_times",
    m.FIRST_AUDIO_S,
    m.COMPUTE_RATIO,
    "time_balance_min",
    m.UNDERRUNS,
    m.GAP_S,
    m.STARVED_S,
    "commit_latency_median_s",
    "commit_latency_p90_s",
    m.WER_COMMITTED,
    m.WER_OFFLINE,
    "ear_voice_lag_median_s",
    "ear_voice_lag_p90_s",
    m.CHUNK_DELAY_S,
    m.LAG_DRIFT_S,
    m.WER_SPOKEN,
    m.WORD_DISTANCE_DB,
)


def tts_config(name: str) -> dict:
    """``lookahead-K`` → policy and k; ``lookahead`` (k left as it is), ``full``, ``naive``, ``learned`` and
    ``wait-K-steps`` as they are."""
    if name.startswith("lookahead-") and name[10:].isdigit():
        return {"tts_policy": "lookahead", "k": int(name[10:])}
    if name in ("lookahead", "full", "naive", LEARNED) or wait_steps_k(name) is not None:
        return {"tts_policy": name}
    raise ValueError(f"unknown TTS policy {name!r} (one of {', '.join(TTS_POLICIES)}, {LEARNED}, wait-K-steps)")


def _row(entry: dict, tts: str, commit: str, report: dict, wer_offline: float, reference_times: str) -> dict:
    lag, latency = report[m.EAR_VOICE_LAG_S], report[m.COMMIT_LATENCY_S]
    return {
        "id": entry["id"],
        "tts_policy": tts,
        "commit": commit,
        "duration_s": report.get("audio_s_heard"),
        "reference_times": reference_times,
        m.FIRST_AUDIO_S: report[m.FIRST_AUDIO_S]["median"],
        m.COMPUTE_RATIO: report[m.COMPUTE_RATIO]["median"],
        "time_balance_min": report[m.TIME_BALANCE]["min"],
        m.UNDERRUNS: report[m.UNDERRUNS],
        m.GAP_S: report[m.GAP_S],
        m.STARVED_S: report[m.STARVED_S],
        "commit_latency_median_s": latency["median"],
        "commit_latency_p90_s": latency["p90"],
        m.WER_COMMITTED: report[m.WER_COMMITTED],
        m.WER_OFFLINE: wer_offline,
        "ear_voice_lag_median_s": lag["median"],
        "ear_voice_lag_p90_s": lag["p90"],
        m.CHUNK_DELAY_S: report[m.CHUNK_DELAY_S],
        m.LAG_DRIFT_S: report[m.LAG_DRIFT_S],
        m.WER_SPOKEN: report[m.WER_SPOKEN],
        m.WORD_DISTANCE_DB: (report.get(m.WORD_DISTANCE_DB) or {}).get("mean"),
    }


def run_eval(
    manifest: Path,
    out_dir: Path,
    tts_policies: Sequence[str] = TTS_POLICIES,
    commits: Sequence[str] = COMMIT_POLICIES,
    progress: Callable[[str], None] | None = None,
    models: Models | None = None,
    base: ShadowConfig | None = None,
) -> dict:
    """``base``: the settings every configuration starts from (the defaults when None)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    base = base or ShadowConfig()
    configs = {f"{t}+{c}": (t, c, replace(base, commit=c, **tts_config(t))) for t in tts_policies for c in commits}
    entries = load_manifest(manifest)
    if not entries:
        raise ValueError(f"{manifest} lists no recordings")
    models = models or Models.load(base)
    offline_texts, reference_times, prepared = {}, {}, []
    for entry in entries:
        audio = load_audio(entry["path"])
        words = transcribe_long(models.backend, audio)
        offline_texts[entry["id"]] = offline_text(models.backend, audio)
        if entry.get("word_times"):
            reference_times[entry["id"]] = "manifest forced alignment"
            prepared.append(entry)
        else:
            reference_times[entry["id"]] = "offline recognition word times"
            prepared.append({**entry, "word_times": [[w.text, w.start_s, w.end_s] for w in words]})
    results, recordings, rows, lags = {}, {}, [], {}
    total = len(configs) * len(entries)
    done = 0
    for name, (tts, commit, config) in configs.items():
        reports = []
        for entry in prepared:
            done += 1
            if progress:
                progress(f"{done}/{total} {name} {entry['id']}")
            report = shadow_file(entry["path"], config, models, entry=entry, voice_quality=True)
            reports.append(report)
            wer_offline = wer(entry["text"], offline_texts[entry["id"]])
            rows.append(_row(entry, tts, commit, report, wer_offline, reference_times[entry["id"]]))
        results[name] = aggregate_reports(reports, entries, offline_texts)
        recordings[name] = {e["id"]: r for e, r in zip(entries, rows[-len(entries) :], strict=True)}
        lags[name] = lag_trace(entries, reports)
    report = {
        "eval": "shadow",
        "machine": machine_info(),
        "manifest": str(manifest),
        "config": {
            "tts_policies": list(tts_policies),
            "commits": list(commits),
            "defaults": asdict(base),
            "mode": "simulate",
        },
        "reference_times": reference_times,
        "results": results,
        "recordings": recordings,
    }
    return write_report(
        out_dir, report, rows, CSV_FIELDS, lambda plots: plots.write_all(out_dir, report, lags, models, entries)
    )


def lag_trace(entries: list[dict], reports: list[dict]) -> dict:
    """The ear-voice lag over the longest recording (its id, (source end, lag) per word, and its pieces), for the
    lag-over-time plot."""
    longest = max(range(len(entries)), key=lambda i: reports[i].get("audio_s_heard") or 0)
    return {
        "id": entries[longest]["id"],
        "words": [(w["source_end_s"], w[m.EAR_VOICE_LAG_S]) for w in reports[longest]["words"]],
        "pieces": reports[longest]["pieces"],
    }


def write_report(
    out_dir: Path, report: dict, rows: list[dict], fields: Sequence[str], draw: Callable[[ModuleType], list]
) -> dict:
    """Write ``report.json`` and ``report.csv`` (``rows``), then the plots ``draw`` makes with the plots module,
    listed under ``report["plots"]`` and ``report.json`` written again; returns ``report``."""
    (out_dir / "report.json").write_text(json.dumps(json_safe(report), indent=1), encoding="utf-8")
    with open(out_dir / "report.csv", "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=fields)
        writer.writeheader()
        writer.writerows(json_safe(rows))
    try:
        from engine.eval import plots
    except ImportError as exc:  # the packaged app leaves matplotlib out: the figures are in the reports all the same
        log.warning("plots not drawn (%s); the figures are in the report", exc)
        report["plots"] = []
    else:
        report["plots"] = draw(plots)
    (out_dir / "report.json").write_text(json.dumps(json_safe(report), indent=1), encoding="utf-8")
    return report
