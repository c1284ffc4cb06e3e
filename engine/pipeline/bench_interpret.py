"""``liveshadow bench interpret``: every recording of a translation manifest interpreted into English (simulated
clock), once per commit policy, with the offline translation of each whole recording as the quality reference.

The recordings are translated with the language the manifest names (``lang``); ``bleu``, ``chrf`` and
``bleu_offline`` are corpus-level over the manifest, the delays are medians over recordings. ``bleu_offline - bleu``
comes with its 95 % paired bootstrap interval over the recordings, which on 30 of them spans about four points.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from engine.asr.bench import load_manifest
from engine.asr.offline import transcribe_long
from engine.audio.io import load_audio
from engine.metrics import describe_machine, machine_info
from engine.metrics import names as m
from engine.metrics.repeats import Figure, format_summary, repeated_report, run_progress, summarize
from engine.metrics.translation import bleu, bleu_difference_interval, chrf
from engine.pipeline.bench import SIMULEVAL, SessionScorer, simuleval_lines
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.shadow import shadow_file
from engine.pipeline.speed_probe import probe_after, probe_text, run_probed
from engine.pipeline.summary import underrun_causes, underrun_causes_text

log = logging.getLogger(__name__)

POLICIES = ("la2", "hold2", "offline")
# the 95 % paired bootstrap interval of ``bleu_offline - bleu`` (METRICS.md: the cost of streaming) over the recordings:
# on 30 recordings corpus BLEU moves by points with chance
BLEU_COST_CI = "bleu_cost_ci95"
MEDIANS = (m.AL_S, m.AL_CA_S, m.END_OFFSET_S, "behind_s", m.RTF_ASR)


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def interpret_results(entries: list[dict], reports: list[dict], offline: list[str]) -> dict:
    """One configuration's figures over a translation manifest: corpus BLEU and chrF of the committed English (and of
    the offline translations), medians of the delays over recordings, sums of the counts, BLEU by language."""
    references = [e["translation"] for e in entries]
    committed = [r["committed_text"] for r in reports]

    def by_language(texts: list[str]) -> dict[str, float]:
        return {
            lang: bleu(
                *zip(
                    *[(e["translation"], t) for e, t in zip(entries, texts, strict=True) if e["lang"] == lang],
                    strict=True,
                )
            )
            for lang in sorted({e["lang"] for e in entries})
        }

    mine, reference = by_language(committed), by_language(offline)
    return {
        m.BLEU: bleu(references, committed),
        m.CHRF: chrf(references, committed),
        m.BLEU_OFFLINE: bleu(references, offline),
        BLEU_COST_CI: list(bleu_difference_interval(references, offline, committed)),
        **{name: _median([r.get(name) for r in reports]) for name in MEDIANS},
        m.UNDERRUNS: sum(r[m.UNDERRUNS] for r in reports),
        m.GAP_S: sum(r[m.GAP_S] for r in reports),
        **underrun_causes(reports),
        m.FIRST_AUDIO_S: _median([r[m.FIRST_AUDIO_S]["median"] for r in reports if r[m.FIRST_AUDIO_S]["n"]]),
        m.EAR_VOICE_LAG_S: _median([r[m.EAR_VOICE_LAG_S]["median"] for r in reports if r[m.EAR_VOICE_LAG_S]["n"]]),
        "non_english_words": sum(r.get("non_english_words", 0) for r in reports),
        **{name: sum(r.get(name) or 0 for r in reports) for name in ("forced_words", "pause_words")},
        "by_language": {lang: {m.BLEU: mine[lang], m.BLEU_OFFLINE: reference[lang]} for lang in mine},
    }


def offline_translations(
    backend,
    entries: list[dict],
    progress: Callable[[str], None] | None = None,
) -> list[str]:
    """Each whole recording translated by ``backend`` in its manifest language (cut as for ``wer_offline``)."""
    texts = []
    for number, entry in enumerate(entries, 1):
        if progress:
            progress(f"offline {number}/{len(entries)} {entry['id']}")
        backend.set_language(entry["lang"])
        texts.append(" ".join(w.text for w in transcribe_long(backend, load_audio(entry["path"]))))
    return texts


def translation_entries(manifest: Path) -> list[dict]:
    """The recordings of ``manifest`` that name their language and carry a reference translation."""
    entries = [e for e in load_manifest(manifest) if e.get("translation") and e.get("lang")]
    if not entries:
        raise ValueError(f"{manifest} lists no recordings with a language and a reference translation")
    return entries


def run_bench(
    manifest: Path,
    policies: tuple[str, ...] = POLICIES,
    config: ShadowConfig | None = None,
    progress: Callable[[str], None] | None = None,
    repeat: int = 1,
    scorer: SessionScorer | None = None,
) -> dict:
    """Each policy on every recording, ``repeat`` times with the models loaded and the offline translations made once;
    a single run's report when ``repeat`` is 1, else every run's report and each policy's figures over the runs.
    ``scorer`` adds its figures of each policy's reports (against the reference translations) as ``simuleval``."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    entries = translation_entries(manifest)
    base = config or ShadowConfig(translate_from=entries[0]["lang"])
    models = Models.load(base)
    offline = offline_translations(models.backend, entries, progress)
    reports: list[dict] = []
    for run in range(1, repeat + 1):
        said = run_progress(progress, run, repeat)
        # each run meets the speech at another phase of the recognizer's steps: run k's first step comes (k - 1) /
        # repeat of a step later. A speaker sets the phase at random, and it moves BLEU by several points, so runs that
        # all take one phase repeat its luck
        phased = replace(base, step_phase_s=(run - 1) / repeat * base.step_s)
        run_once = partial(_one_run, manifest, entries, policies, phased, models, offline, said, scorer)
        # the probe after a run is the next one's before: nothing runs between them
        reports.append(run_probed(models, run_once, said, before=probe_after(reports[-1] if reports else None)))
    if repeat == 1:
        return reports[0]
    over = {policy: summarize([r["results"][policy] for r in reports], INTERPRET_FIGURES) for policy in policies}
    for policy in policies:
        over[policy]["bleu_cost_pooled"] = pooled_bleu_cost(reports, policy)
    return repeated_report(reports, over)


def pooled_bleu_cost(reports: list[dict], policy: str) -> dict:
    """``bleu_offline - bleu`` of ``policy`` over every run's sentences at once, with its 95 % interval: each
    resample takes a recording with all its runs, since a recording's runs are not independent of each other."""
    rows = [(recording_id, r) for report in reports for recording_id, r in report["per_recording"].items()]
    references = [r["reference"] for _, r in rows]
    offline = [r["offline_translation"] for _, r in rows]
    committed = [r[policy]["committed"] for _, r in rows]
    low, high = bleu_difference_interval(references, offline, committed, groups=[i for i, _ in rows])
    return {"cost": bleu(references, offline) - bleu(references, committed), "ci95": [low, high]}


def _one_run(
    manifest: Path,
    entries: list[dict],
    policies: tuple[str, ...],
    base: ShadowConfig,
    models: Models,
    offline: list[str],
    progress: Callable[[str], None] | None,
    scorer: SessionScorer | None = None,
) -> dict:
    results: dict[str, dict] = {}
    per_recording: dict[str, dict] = {}
    for policy in policies:
        reports = []
        for number, entry in enumerate(entries, 1):
            if progress:
                progress(f"{policy} {number}/{len(entries)} {entry['id']}")
            config = replace(base, commit=policy, translate_from=entry["lang"])
            reports.append(shadow_file(entry["path"], config, models, entry=entry, speech_chain=False))
        results[policy] = interpret_results(entries, reports, offline)
        if scorer is not None:
            results[policy][SIMULEVAL] = scorer(reports, [e["translation"] for e in entries])
        for entry, report, text in zip(entries, reports, offline, strict=True):
            per_recording.setdefault(
                entry["id"], {"lang": entry["lang"], "reference": entry["translation"], "offline_translation": text}
            )[policy] = {
                "committed": report["committed_text"],
                **{name: report.get(name) for name in (m.BLEU, m.AL_S, m.AL_CA_S, m.END_OFFSET_S, m.UNDERRUNS)},
            }
    return {
        "bench": "interpret",
        "machine": machine_info(),
        "config": {
            "manifest": str(manifest),
            "recordings": len(entries),
            "model": "whisper base (translate)",
            "policies": list(policies),
            "step_s": base.step_s,
            "step_phase_s": base.step_phase_s,
            "cpu_slowdown": base.cpu_slowdown,
        },
        "results": results,
        "per_recording": per_recording,
    }


INTERPRET_FIGURES = (
    Figure(m.BLEU, lambda r: r[m.BLEU], digits=1),
    Figure(m.BLEU_OFFLINE, lambda r: r[m.BLEU_OFFLINE], digits=1),
    Figure(m.CHRF, lambda r: r[m.CHRF], digits=1),
    Figure(m.AL_S, lambda r: r[m.AL_S], " s"),
    Figure(m.AL_CA_S, lambda r: r[m.AL_CA_S], " s"),
    Figure(m.END_OFFSET_S, lambda r: r[m.END_OFFSET_S], " s"),
    Figure(m.EAR_VOICE_LAG_S, lambda r: r[m.EAR_VOICE_LAG_S], " s"),
    Figure(m.UNDERRUNS, lambda r: r[m.UNDERRUNS], count=True),
    Figure(m.GAP_S, lambda r: r[m.GAP_S], " s"),
    Figure("behind_s", lambda r: r["behind_s"], " s"),
    Figure(m.RTF_ASR, lambda r: r[m.RTF_ASR]),
    Figure("non_english_words", lambda r: r["non_english_words"], count=True),
)


def format_repeated(report: dict) -> str:
    """Every run's table, then each policy's headline figures over the runs (median, range)."""
    runs = report["repeats"]
    lines = []
    for number, run in enumerate(runs, 1):
        lines += [f"run {number}/{len(runs)}:", format_table(run), ""]
    for policy, over in report["over_runs"].items():
        lines.append(f"{policy} over {len(runs)} runs, median (min to max):")
        lines += ["  " + line for line in format_summary(over, INTERPRET_FIGURES)]
        pooled = over.get("bleu_cost_pooled")
        if pooled:
            cost = _cost_text(pooled["cost"], pooled["ci95"])
            lines.append(
                f"  bleu_offline - bleu, every run's sentences pooled: {cost}, resampling recordings with "
                "all their runs"
            )
    return "\n".join(lines)


def _fmt(value: float | None, unit: str = "", digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}{unit}"


def _cost_text(cost: float, interval: list[float]) -> str:
    return f"{cost:.1f} (95 % interval {interval[0]:.1f} to {interval[1]:.1f})"


def format_table(report: dict) -> str:
    lines = [
        "| policy | bleu | bleu_offline | chrf | al_s | al_ca_s | end_offset_s | ear_voice_lag_s | underruns "
        "| behind_s | rtf_asr | non-English words |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for policy, r in report["results"].items():
        lines.append(
            f"| {policy} | {_fmt(r[m.BLEU], digits=1)} | {_fmt(r[m.BLEU_OFFLINE], digits=1)} | "
            f"{_fmt(r[m.CHRF], digits=1)} | {_fmt(r[m.AL_S], ' s')} | {_fmt(r[m.AL_CA_S], ' s')} | "
            f"{_fmt(r[m.END_OFFSET_S], ' s')} | {_fmt(r[m.EAR_VOICE_LAG_S], ' s')} | {r[m.UNDERRUNS]} | "
            f"{_fmt(r['behind_s'], ' s')} | {_fmt(r[m.RTF_ASR])} | {r['non_english_words']} |"
        )
    languages = next(iter(report["results"].values()))["by_language"]
    lines.append("")
    recordings = report["config"]["recordings"]
    for policy, r in report["results"].items():
        if r.get(BLEU_COST_CI):
            lines.append(
                f"{policy}: bleu_offline - bleu {_cost_text(r[m.BLEU_OFFLINE] - r[m.BLEU], r[BLEU_COST_CI])}"
                f", paired bootstrap over the {recordings} recordings"
            )
    for policy, r in report["results"].items():
        lines.extend(f"{policy}: {line}" for line in simuleval_lines(r.get(SIMULEVAL)))
    for policy, r in report["results"].items():
        if r[m.UNDERRUNS]:
            lines.append(f"{policy}: underruns {r[m.UNDERRUNS]} ({r[m.GAP_S]:.2f} s of gaps){underrun_causes_text(r)}")
        if r.get("forced_words") or r.get("pause_words"):
            lines.append(
                f"{policy}: words committed before the policy agreed on them: {r.get('forced_words', 0)} "
                f"by the hold bound, {r.get('pause_words', 0)} at a pause"
            )
    lines.append(
        "bleu by language (first policy / offline): "
        + ", ".join(
            f"{lang} {_fmt(v[m.BLEU], digits=1)} / {_fmt(v[m.BLEU_OFFLINE], digits=1)}" for lang, v in languages.items()
        )
    )
    lines.append(probe_text(report))
    machine = report["machine"]
    slowdown = report["config"].get("cpu_slowdown", 1.0)
    charged = f", compute charged x{slowdown:g}" if slowdown != 1.0 else ""
    phase = report["config"].get("step_phase_s") or 0.0
    phased = f"; the recognizer's steps {phase:.2f} s later than at phase 0" if phase else ""
    lines.append(f"{report['config']['recordings']} recordings{phased}; {describe_machine(machine)}{charged}")
    return "\n".join(lines)
