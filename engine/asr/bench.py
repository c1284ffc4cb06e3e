"""``liveshadow bench asr``: every recording of a manifest through each commit policy on the simulated clock."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from engine.asr.ablation import format_ablation, run_ablation
from engine.asr.backend import SAMPLE_RATE
from engine.asr.offline import transcribe_long
from engine.asr.report import commit_latencies
from engine.asr.run import run_policy
from engine.asr.second_pass import SecondPass, second_decode
from engine.asr.vad import SileroVad
from engine.asr.whisper_backend import WhisperBackend
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.metrics import aggregate, describe_machine, machine_info
from engine.metrics import names as m
from engine.metrics.wer import corpus_wer

log = logging.getLogger(__name__)

POLICIES = ("la2", "hold2", "waitk", "offline")
LONG_RECORDING = "librivox_sonnet002"
SECOND_PASS_ROW = "la2_second_pass"
SECOND_PASS_BEAMS = 5


def load_manifest(path: Path) -> list[dict]:
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for entry in entries:
        entry["path"] = path.parent / entry["wav"]
    return entries


def _no_speech_commits(backend: WhisperBackend, vad: SileroVad) -> dict[str, int]:
    rng = np.random.default_rng(0)
    signals = {
        "silence_10s": np.zeros(160_000, np.float32),
        "noise_10s": (0.03 * rng.standard_normal(160_000)).astype(np.float32),
    }
    counts = {}
    for name, audio in signals.items():
        counts[name] = len(run_policy(audio, backend, vad).committed)
    return counts


def _reference_rows(
    backend: WhisperBackend,
    audio: dict[str, np.ndarray],
    refs: dict[str, str],
    windowed: dict[str, list[Word]],
    windowed_s: float,
) -> dict[str, dict]:
    """The whole recordings decoded at once: faster-whisper's own way (greedy and 5 beams), and liveshadow's own
    whole pass (``transcribe_long``, already run in ``windowed_s``: its words time the references).
    ``wer_committed`` is each one's WER."""
    ids, duration = list(audio), sum(a.size for a in audio.values()) / SAMPLE_RATE
    rows = {}
    for name, beam in ((m.STOCK_OFFLINE, 1), (m.STOCK_OFFLINE_BEAM5, 5)):
        start = time.perf_counter()
        texts = [backend.transcribe_stock(audio[i], beam_size=beam) for i in ids]
        rows[name] = {
            m.WER_COMMITTED: corpus_wer([refs[i] for i in ids], texts),
            m.RTF_ASR: (time.perf_counter() - start) / duration,
            "beam_size": beam,
            "texts": dict(zip(ids, texts, strict=True)),
        }
    rows[m.WINDOWED_OFFLINE] = {
        m.WER_COMMITTED: corpus_wer([refs[i] for i in ids], [" ".join(w.text for w in windowed[i]) for i in ids]),
        m.RTF_ASR: windowed_s / duration,
    }
    return rows


def run_bench(
    manifest: Path,
    policies: tuple[str, ...] = POLICIES,
    progress: Callable[[str], None] | None = None,
    ablate: bool = False,
    second_pass: bool = False,
    model: str | None = None,
) -> dict:
    """Every policy on every recording, and the reference rows (``ASR_REFERENCES``); each policy's ``wer_offline``
    is ``stock_offline``'s WER, the same model decoding the whole recordings the stock way, in the same run. With
    ``ablate``, also the rows of ``ablation`` (the report's ``ablation``). With ``second_pass``, la2 runs with a
    second decode (``asr.second_pass``, 5 beams on a backend of its own with one thread, the other core) and the
    row ``la2_second_pass`` reports its final text. ``model``: "base" for multilingual Whisper base transcribing
    English in every row (None: the bundled tiny.en)."""
    import psutil

    process = psutil.Process()
    entries = load_manifest(manifest)
    model_path = None
    if model == "base":
        from engine.asr import whisper_base_model

        model_path = whisper_base_model.model_dir()
    elif model is not None:
        raise ValueError(f"bench asr knows the models tiny.en and base, not {model!r}")
    backend = WhisperBackend(model_path)
    vad = SileroVad()
    audio = {e["id"]: load_audio(e["path"]) for e in entries}
    if progress:
        progress("the whole recordings at once (liveshadow's own pass, then faster-whisper's own decode)")
    start = time.perf_counter()
    offline = {e["id"]: transcribe_long(backend, audio[e["id"]]) for e in entries}
    windowed_s = time.perf_counter() - start
    references = {
        e["id"]: [Word(t, float(s), float(x)) for t, s, x in e["word_times"]]
        if e.get("word_times")
        else offline[e["id"]]
        for e in entries
    }
    refs = [e["text"] for e in entries]
    reference_rows = _reference_rows(backend, audio, {e["id"]: e["text"] for e in entries}, offline, windowed_s)
    wer_offline = reference_rows[m.STOCK_OFFLINE][m.WER_COMMITTED]
    results = {}
    second_backend = WhisperBackend(model_path, threads=1) if second_pass and "la2" in policies else None
    passes: dict[str, SecondPass] = {}
    for policy in policies:
        latencies, hyps, compute, duration, behind, steps_behind = [], [], 0.0, 0.0, [], []
        long_steps: list[float] = []
        long_rss: list[float] = []
        long_buffer = 0.0
        texts = {}
        for number, e in enumerate(entries, 1):
            if progress:
                progress(f"{policy}: {number}/{len(entries)} {e['id']}")
            rss: list[float] = []
            on_step = (
                (lambda _step, rss=rss: rss.append(process.memory_info().rss / 1e6))
                if e["id"] == LONG_RECORDING
                else None
            )
            revising = (
                SecondPass(second_decode(second_backend, SECOND_PASS_BEAMS))
                if second_backend is not None and policy == "la2"
                else None
            )
            run = run_policy(audio[e["id"]], backend, vad, policy, on_step=on_step, second_pass=revising)
            if revising is not None:
                passes[e["id"]] = revising
            latencies.extend(commit_latencies(run.committed, references[e["id"]]))
            hyps.append(" ".join(w.text for w in run.committed))
            texts[e["id"]] = hyps[-1]
            compute += run.compute_s
            duration += run.audio_s
            behind.append(run.behind_s)
            steps_behind.append(run.steps_behind())
            if e["id"] == LONG_RECORDING:
                long_steps, long_buffer = run.step_compute_s, max(run.step_buffer_s, default=0.0)
                long_rss = rss
        quarter = max(len(long_steps) // 4, 1)
        results[policy] = {
            m.COMMIT_LATENCY_S: aggregate(latencies),
            m.WER_COMMITTED: corpus_wer(refs, hyps),
            m.WER_OFFLINE: wer_offline,
            m.RTF_ASR: compute / duration,
            m.BEHIND_S: aggregate(behind),
            "behind_steps": aggregate(steps_behind),
            "long_step_cost_s": {
                "first_quarter_median": float(np.median(long_steps[:quarter])) if long_steps else None,
                "last_quarter_median": float(np.median(long_steps[-quarter:])) if long_steps else None,
                "max_buffer_s": long_buffer,
            },
            "long_rss_mb": {
                "first_quarter_median": float(np.median(long_rss[: max(len(long_rss) // 4, 1)])) if long_rss else None,
                "last_quarter_median": float(np.median(long_rss[-max(len(long_rss) // 4, 1) :])) if long_rss else None,
            },
            "texts": texts,
        }
    if passes:
        audio_s = sum(audio[e["id"]].size for e in entries) / SAMPLE_RATE
        results[SECOND_PASS_ROW] = _second_pass_row(passes, entries, results["la2"], references, audio_s)
    results.update(reference_rows)
    ablation = run_ablation(entries, audio, backend, vad, progress=progress) if ablate else None
    return {
        "bench": "asr",
        "machine": machine_info(),
        "config": {
            "backend": f"whisper {model or 'tiny.en'} int8, short window",
            "mode": "simulate",
            "manifest": str(manifest),
            "recordings": len(entries),
            "audio_s": sum(a.size for a in audio.values()) / SAMPLE_RATE,
            "commit_latency_reference": "manifest word_times where present, else offline ASR word timestamps",
            "wer_offline": f"{m.STOCK_OFFLINE}: faster-whisper's own transcribe of each whole recording",
        },
        "results": results,
        "no_speech_commits": _no_speech_commits(backend, vad),
        **({"ablation": ablation} if ablation is not None else {}),
    }


def _second_pass_row(
    passes: dict[str, SecondPass], entries: list[dict], la2: dict, references: dict, audio_s: float
) -> dict:
    """The final text of la2 with the second pass: its WER, the first pass's beside it, what was revised and in
    time (before the voice would speak it) and the second decode's compute per second of audio."""
    refs = [e["text"] for e in entries]
    hyps = [" ".join(w.text for w in passes[e["id"]].words) for e in entries]
    applied = sum(len(p.revisions) for p in passes.values())
    late = sum(p.late for p in passes.values())
    latencies = [x for e in entries for x in commit_latencies(passes[e["id"]].words, references[e["id"]])]
    return {
        m.WER_COMMITTED: corpus_wer(refs, hyps),
        "wer_first_pass": la2[m.WER_COMMITTED],
        m.COMMIT_LATENCY_S: aggregate(latencies),
        "first_pass_" + m.COMMIT_LATENCY_S: la2[m.COMMIT_LATENCY_S],
        "words_revised": sum(p.words_revised for p in passes.values()),
        "revisions": applied,
        "revisions_late": late,
        "second_decodes": sum(p.decodes for p in passes.values()),
        "second_rtf": sum(p.compute_s for p in passes.values()) / audio_s,
        "texts": dict(zip([e["id"] for e in entries], hyps, strict=True)),
    }


def format_table(report: dict) -> str:
    results = report["results"]
    policies = {name: r for name, r in results.items() if name not in (*m.ASR_REFERENCES, SECOND_PASS_ROW)}
    rows = [
        f"{'policy':<8} {'latency median':>14} {'p90':>6} {'wer_committed':>13} {'wer_offline':>11} "
        f"{'rtf_asr':>7} {'behind max':>10} {'in steps':>8} "
        f"{'step cost 1st/last quarter (sonnet)':>36}"
    ]
    for policy, r in policies.items():
        lat, steps = r[m.COMMIT_LATENCY_S], r["long_step_cost_s"]
        cost = (
            f"{steps['first_quarter_median']:.3f} / {steps['last_quarter_median']:.3f} s"
            if steps["first_quarter_median"] is not None
            else "-"
        )
        rows.append(
            f"{policy:<8} {lat['median']:>14.2f} {lat['p90']:>6.2f} {r[m.WER_COMMITTED]:>13.3f} "
            f"{r[m.WER_OFFLINE]:>11.3f} {r[m.RTF_ASR]:>7.2f} {r[m.BEHIND_S]['max']:>10.2f} "
            f"{r['behind_steps']['max']:>8.2f} {cost:>36}"
        )
    second = results.get(SECOND_PASS_ROW)
    if second is not None:
        lat = second[m.COMMIT_LATENCY_S]
        rows.append(
            f"{SECOND_PASS_ROW}: wer_committed {second[m.WER_COMMITTED]:.3f} (first pass "
            f"{second['wer_first_pass']:.3f}), {second['words_revised']} words revised in "
            f"{second['revisions']} revisions ({second['revisions_late']} found too late), latency "
            f"{lat['median']:.2f} / {lat['p90']:.2f} s, second rtf {second['second_rtf']:.2f}"
        )
    stock = results.get(m.STOCK_OFFLINE)
    for name in m.ASR_REFERENCES:
        r = results.get(name)
        if r is None:
            continue
        against = ", ".join(f"{p} {policies[p][m.WER_COMMITTED] - r[m.WER_COMMITTED]:+.3f}" for p in policies)
        rows.append(
            f"{name:<20} wer_committed {r[m.WER_COMMITTED]:.3f}, rtf_asr {r[m.RTF_ASR]:.3f}"
            + (f"; the policies' WER against it: {against}" if r is stock and against else "")
        )
    la = results.get("la2", {}).get("long_rss_mb", {})
    if la.get("first_quarter_median") is not None:
        rows.append(
            f"la2 on the long passage: RSS {la['first_quarter_median']:.0f} MB in the first quarter of its "
            f"steps, {la['last_quarter_median']:.0f} MB in the last"
        )
    quiet = report["no_speech_commits"]
    rows.append(f"committed words on 10 s of silence: {quiet['silence_10s']}, on 10 s of noise: {quiet['noise_10s']}")
    if "ablation" in report:
        rows += [
            "",
            "ablation (WER; per recording length and per word position in liveshadow's segments):",
            format_ablation(report["ablation"]),
        ]
    rows.append(
        f"{report['config']['recordings']} recordings, {report['config']['audio_s']:.0f} s; "
        f"{describe_machine(report['machine'])}"
    )
    return "\n".join(rows)
