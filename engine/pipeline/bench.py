"""``liveshadow bench shadow``: the default configuration on every recording of a manifest (simulated clock)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.asr.bench import LONG_RECORDING, load_manifest
from engine.metrics import describe_machine, machine_info
from engine.metrics import names as m
from engine.metrics.repeats import Figure, format_summary, repeated_report, run_progress, summarize
from engine.metrics.wer import corpus_wer, word_errors
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.shadow import shadow_file, spoken_floor
from engine.pipeline.speed_probe import probe_after, probe_figure, probe_text, run_probed
from engine.pipeline.summary import aggregate_reports, underrun_causes_text

log = logging.getLogger(__name__)

# a configuration's recordings' reports and references -> figures of another scorer (``research.simuleval_scores``)
SessionScorer = Callable[[list[dict], list[str]], dict | None]
SIMULEVAL = "simuleval"


def run_bench(
    manifest: Path,
    config: ShadowConfig | None = None,
    progress: Callable[[str], None] | None = None,
    models: Models | None = None,
    scorer: SessionScorer | None = None,
    probe_before: dict | None = None,
) -> dict:
    """Every recording through ``shadow_file``; the corpus figures are the evaluation's, so the two agree. The
    report's ``speed_probe`` is fixed work timed on the same models just before and just after the recordings
    (``probe_before``: one just taken, see ``run_probed``). ``scorer`` adds its figures of the reports (against the
    transcripts) as ``simuleval``."""
    config = config or ShadowConfig()
    models = models or Models.load(config)
    entries = load_manifest(manifest)
    if not entries:
        raise ValueError(f"{manifest} lists no recordings")
    return run_probed(
        models, lambda: _run_entries(manifest, entries, config, models, progress, scorer), progress, before=probe_before
    )


def _run_entries(
    manifest: Path,
    entries: list[dict],
    config: ShadowConfig,
    models: Models,
    progress: Callable[[str], None] | None,
    scorer: SessionScorer | None = None,
) -> dict:
    reports = []
    for number, entry in enumerate(entries, 1):
        if progress:
            progress(f"{number}/{len(entries)} {entry['id']}")
        # wer_transcript, as the app writes the captions (sessions the pass is not for skip it: ``skip_reason``)
        reports.append(shadow_file(entry["path"], config, models, entry=entry, voice_quality=True, whole_pass=True))
    results = {"default": aggregate_reports(reports, entries)}
    results["default"][m.WER_SPOKEN_FLOOR] = _spoken_floor(entries, config, models, progress)
    if scorer is not None:
        references = [e.get("translation" if config.translate_from else "text") or "" for e in entries]
        results["default"][SIMULEVAL] = scorer(reports, references)
    conditions = sorted({e["condition"] for e in entries if e.get("condition")})
    by_condition = {
        c: aggregate_reports(
            *zip(*[(r, e) for r, e in zip(reports, entries, strict=True) if e.get("condition") == c], strict=True)
        )
        for c in conditions
    }
    return {
        "bench": "shadow",
        "machine": machine_info(),
        "config": {
            **reports[0]["config"],
            "manifest": str(manifest),
            "recordings": len(entries),
            "source_times": "manifest word_times where present, else recognizer word timestamps",
        },
        "results": results,
        "by_condition": by_condition,
        "per_recording": {e["id"]: _recording_figures(e, r) for e, r in zip(entries, reports, strict=True)},
    }


def _spoken_floor(
    entries: list[dict], config: ShadowConfig, models: Models, progress: Callable[[str], None] | None
) -> float | None:
    """``wer_spoken_floor`` over the recordings with a transcript (None when interpreting: the voice speaks a
    translation, not the transcript)."""
    scored = [e for e in entries if e.get("text")]
    if config.translate_from is not None or not scored:
        return None
    if progress:
        progress("the transcripts spoken whole and heard back (wer_spoken_floor)")
    heard = [spoken_floor(models, e["text"], config.voice_rate)[1] for e in scored]
    return corpus_wer([e["text"] for e in scored], heard)


def run_repeated(
    manifest: Path,
    repeat: int,
    config: ShadowConfig | None = None,
    progress: Callable[[str], None] | None = None,
    scorer: SessionScorer | None = None,
    models: Models | None = None,
    probe_before: dict | None = None,
) -> dict:
    """``run_bench`` ``repeat`` times with the models loaded once (``models``: loaded for ``config`` already); a
    single run's report when ``repeat`` is 1. ``probe_before``: see ``run_bench``."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    config = config or ShadowConfig()
    models = models or Models.load(config)
    if repeat == 1:
        return run_bench(manifest, config, progress, models, scorer, probe_before)
    reports: list[dict] = []
    for run in range(1, repeat + 1):  # each run's probe after it is the next one's before
        said = run_progress(progress, run, repeat)
        before = probe_after(reports[-1]) if reports else probe_before
        reports.append(run_bench(manifest, config, said, models, scorer, before))
    return repeated_report(reports, summarize(reports, SHADOW_FIGURES))


def last_probe(report: dict) -> dict | None:
    """The probe taken after ``report``'s last run (of a repeated report, its last repeat's)."""
    return probe_after(report["repeats"][-1] if "repeats" in report else report)


def _default(report: dict, key: str, part: str | None = None) -> Any:  # a figure, or a dict of them (per recording)
    value = report["results"]["default"][key]
    return value if part is None else value[part]


def _highest_recording_median(report: dict) -> float | None:
    medians = [v[m.EAR_VOICE_LAG_S]["median"] for v in report["per_recording"].values() if v[m.EAR_VOICE_LAG_S]["n"]]
    return max(medians, default=None)


def _spoken_ratio_max(report: dict) -> float | None:
    ratios = [v["spoken_ratio"] for v in report["per_recording"].values() if v["spoken_ratio"] is not None]
    return max(ratios, default=None)


SHADOW_FIGURES = (
    Figure("ear_voice_lag_s.median", lambda r: _default(r, m.EAR_VOICE_LAG_S, "median"), " s"),
    Figure("ear_voice_lag_s.p90", lambda r: _default(r, m.EAR_VOICE_LAG_S, "p90"), " s"),
    Figure("ear_voice_lag_s.max", lambda r: _default(r, m.EAR_VOICE_LAG_S, "max"), " s"),
    Figure("highest_recording_median_lag_s", _highest_recording_median, " s"),
    Figure(m.UNDERRUNS, lambda r: _default(r, m.UNDERRUNS), count=True),
    Figure("commit_latency_s.median", lambda r: _default(r, m.COMMIT_LATENCY_S, "median"), " s"),
    Figure(m.WER_COMMITTED, lambda r: _default(r, m.WER_COMMITTED), digits=3),
    Figure(m.WER_TRANSCRIPT, lambda r: _default(r, m.WER_TRANSCRIPT), digits=3),
    Figure(m.WER_SPOKEN, lambda r: _default(r, m.WER_SPOKEN), digits=3),
    Figure(m.WER_SPOKEN_FLOOR, lambda r: _default(r, m.WER_SPOKEN_FLOOR), digits=3),
    Figure("spoken_ratio.max", _spoken_ratio_max),
    Figure("lag_drift_s.long_passage", lambda r: _default(r, m.LAG_DRIFT_S).get(LONG_RECORDING), " s/min", 3),
    Figure("speed_probe.recognizer_s", probe_figure("recognizer_s"), " s", 3),
    Figure("speed_probe.voice_beside_recognizer_s", probe_figure("voice_beside_recognizer_s"), " s", 3),
)


def format_repeated(report: dict) -> str:
    """Every run's table, then each headline figure's median and range over the runs."""
    runs = report["repeats"]
    lines = []
    for number, run in enumerate(runs, 1):
        lines += [f"run {number}/{len(runs)}:", format_table(run)]
    lines.append(f"over {len(runs)} runs, median (min to max):")
    lines += ["  " + line for line in format_summary(report["over_runs"], SHADOW_FIGURES)]
    return "\n".join(lines)


def _recording_figures(entry: dict, report: dict) -> dict:
    """What ``per_recording`` keeps of a shadow report, with the words spoken against the words said."""
    spoken = word_errors([entry.get("text") or ""], [report.get("spoken_text") or ""])
    return {
        **{
            k: report.get(k)
            for k in (
                m.EAR_VOICE_LAG_S,
                m.UNDERRUNS,
                m.WER_COMMITTED,
                m.WER_SPOKEN,
                m.LAG_DRIFT_S,
                m.STARVED_S,
                "source_times",
                "forced_words",
                "unspoken_words",
                "failed_decodes",
                "dropped_audio_s",
            )
        },
        "condition": entry.get("condition"),
        "reference_words": spoken.reference_words,
        "spoken_words": spoken.hypothesis_words,
        "spoken_ratio": spoken.hypothesis_words / spoken.reference_words if spoken.reference_words else None,
        "insertions": spoken.insertions,
        "speaker_tempo": (report.get("catch_up") or {}).get("speaker_tempo"),
    }


def _lag_line(r: dict) -> str:
    lag = r[m.EAR_VOICE_LAG_S]
    if not lag["n"]:
        return "nothing spoken"
    return (
        f"ear_voice_lag_s median {lag['median']:.2f} s, p90 {lag['p90']:.2f} s, max {lag['max']:.2f} s "
        f"({lag['n']} words)"
    )


def simuleval_lines(figures: dict | None) -> list[str]:
    """SimulEval's figures of a configuration (``research.simuleval_scores.session_scores``), a line per system."""
    if not figures:
        return []
    lines = []
    for system in ("text", "speech"):
        values = figures.get(system) or {}
        if values:
            shown = "; ".join(f"{name} {value:.0f}" for name, value in values.items())
            lines.append(f"SimulEval {figures['simuleval_version']} {system} ({figures['unit']}): {shown}")
    return lines


def _db(figures: dict | None, key: str) -> str:
    return "-" if not figures or figures.get(key) is None else f"{figures[key]:.2f} dB"


def _transcript_text(r: dict) -> str:
    """The captions' words after the whole pass, beside the words committed live."""
    return "" if r.get(m.WER_TRANSCRIPT) is None else f" (the captions after the whole pass {r[m.WER_TRANSCRIPT]:.3f})"


def _floor_text(r: dict) -> str:
    floor = r.get(m.WER_SPOKEN_FLOOR)
    if floor is None or r.get(m.WER_SPOKEN) is None:
        return ""
    return f" (wer_spoken_floor {floor:.3f}: streaming's own cost {r[m.WER_SPOKEN] - floor:+.3f})"


def format_table(report: dict) -> str:
    r = report["results"]["default"]
    drift = r[m.LAG_DRIFT_S].get(LONG_RECORDING)
    lines = [
        _lag_line(r),
        f"chunk_delay_s median {r[m.CHUNK_DELAY_S]['median'] or 0:.2f} s; commit_latency_s median "
        f"{r[m.COMMIT_LATENCY_S]['median'] or 0:.2f} s; first_audio_s median {r[m.FIRST_AUDIO_S]['median'] or 0:.3f} s",
        f"underruns {r[m.UNDERRUNS]} ({r[m.GAP_S]:.2f} s){underrun_causes_text(r)}; starved_s "
        f"{r[m.STARVED_S]:.1f} s (at commas "
        f"{r['phrase_pause_s']:.1f} s); hurried pieces "
        f"{r['hurried_pieces']}, of them made ahead {r['speculated_pieces']}; lag_drift_s on the "
        f"long passage {'-' if drift is None else f'{drift:+.3f} s/min'}",
        f"wer_committed {r[m.WER_COMMITTED]:.3f}{_transcript_text(r)}; wer_spoken {r[m.WER_SPOKEN]:.3f}"
        f"{_floor_text(r)}; "
        f"word_distance_db mean "
        f"{_db(r.get(m.WORD_DISTANCE_DB), 'mean')} (max {_db(r.get(m.WORD_DISTANCE_DB), 'max')})",
    ]
    recordings = report["per_recording"]
    medians = {k: v[m.EAR_VOICE_LAG_S]["median"] for k, v in recordings.items() if v[m.EAR_VOICE_LAG_S]["n"]}
    if medians:
        worst = max(medians, key=medians.__getitem__)
        lines.append(f"highest median lag of a recording {medians[worst]:.2f} s ({worst})")
    ratios = {k: v["spoken_ratio"] for k, v in recordings.items() if v["spoken_ratio"] is not None}
    if ratios:
        top = max(ratios, key=ratios.__getitem__)
        lines.append(
            f"spoken/reference words at most {ratios[top]:.2f} ({top}); insertions "
            f"{sum(v['insertions'] for v in recordings.values())}; words spoken where nothing was said "
            f"{sum(v['spoken_words'] for v in recordings.values() if not v['reference_words'])}"
        )
    tempos = {k: v["speaker_tempo"] for k, v in recordings.items() if v.get("speaker_tempo") is not None}
    if tempos:
        fastest = max(tempos, key=tempos.__getitem__)
        lines.append(
            f"speaker's tempo against the voice's {min(tempos.values()):.2f}-{tempos[fastest]:.2f} (fastest {fastest})"
        )
    dropped = sum(v.get("dropped_audio_s") or 0.0 for v in recordings.values())
    forced = sum(v.get("forced_words") or 0 for v in recordings.values())
    lines.append(f"audio dropped by the recognizer {dropped:.1f} s; words committed by the hold bound {forced}")
    for condition, c in report.get("by_condition", {}).items():
        drift_values = [d for d in c[m.LAG_DRIFT_S].values() if d is not None]
        drift_text = f"; lag_drift_s {drift_values[0]:+.3f} s/min" if len(drift_values) == 1 else ""
        lines.append(
            f"  {condition}: {_lag_line(c)}; underruns {c[m.UNDERRUNS]}; wer_committed "
            f"{c[m.WER_COMMITTED]:.3f}{drift_text}"
        )
    lines.extend(simuleval_lines(r.get(SIMULEVAL)))
    lines.append(probe_text(report))
    machine = report["machine"]
    slowdown = report["config"].get("cpu_slowdown", 1.0)
    lines.append(
        f"{report['config']['recordings']} recordings; {describe_machine(machine)}"
        f"{f', compute charged x{slowdown:g}' if slowdown != 1.0 else ''}"
    )
    return "\n".join(lines)
