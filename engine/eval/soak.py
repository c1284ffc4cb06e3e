"""``liveshadow eval --soak MINUTES``: one long session over real recordings played back to back, with pauses.

On the compute-aware clock it runs faster than real time while reporting what a live session of that length
would see: whether the ear-voice lag drifts, whether the recognizer's step cost grows, and the process's memory.

With ``translate_from`` (or on a translation manifest) the session interprets: the recordings of that one language
are joined, and each play of a recording is scored against its reference translation, so the report also says
whether the translation holds up over a long session (BLEU of each pass over the recordings), not only its timing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from engine.asr.bench import load_manifest
from engine.audio.io import load_audio
from engine.eval.joined import JoinedRecordings
from engine.metrics import aggregate, machine_info
from engine.metrics import names as m
from engine.metrics.jsonsafe import json_safe
from engine.metrics.shadowing import lag_drift_s
from engine.pipeline.config import AUTO_LANGUAGE, ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.records import SessionListener, WordRecord
from engine.pipeline.session import ShadowSession
from engine.pipeline.speed_probe import announced_probe
from engine.pipeline.summary import UNDERRUNS_FORCED, UNDERRUNS_SHORT_NOTICE

log = logging.getLogger(__name__)

WINDOWS = 6  # the session is summarized in this many equal parts
# Memory is sampled at the recognizer's steps, once in each slot of this much of the session's own time. A thread that
# looked at the session's clock every 50 ms of wall time missed whole seconds of it: a simulated run goes faster
# than real time (on a faster machine one of a 30 s soak's six windows had no sample) and a loaded machine runs
# the thread late (a CI run had a 5 s window with fewer than 4 samples). A sample is taken at the first step in
# each slot of this length: counted from the last sample instead, steps 0.45 s apart (an AMD EPYC VM) were sampled
# every 0.9 s, and a 3 s window had 3 samples.
RSS_EVERY_S = 0.5


def _windows(times: list[float], values: list[float], total_s: float) -> list[dict]:
    edges = np.linspace(0, total_s, WINDOWS + 1)
    t, v = np.asarray(times), np.asarray(values)
    out = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        part = v[(t >= lo) & (t < hi)]
        out.append({"from_s": float(lo), "to_s": float(hi), **aggregate(part.tolist())})
    return out


def soak_recordings(entries: list[dict], translate_from: str | None) -> tuple[list[dict], str | None]:
    """The recordings a soak joins and the language it interprets from (None: English shadowing). A translation
    manifest (every recording with ``lang`` and ``translation``, ``../shared/speech-xx``) is interpreted, from one
    language: ``translate_from``, or the only one it holds. Another manifest is interpreted only when asked."""
    from engine.eval.interpret import is_translation_manifest

    if not is_translation_manifest(entries):
        return entries, translate_from
    languages = sorted({e["lang"] for e in entries})
    if translate_from is None and len(languages) == 1:
        translate_from = languages[0]
    if translate_from is None or translate_from == AUTO_LANGUAGE:
        raise ValueError(
            f"this translation manifest holds recordings in {', '.join(languages)}; a soak interprets "
            "one language: choose it with --translate-from"
        )
    chosen = [e for e in entries if e["lang"] == translate_from]
    if not chosen:
        raise ValueError(f"no recordings in {translate_from!r} in this manifest (it has {', '.join(languages)})")
    return chosen, translate_from


class _SoakListener(SessionListener):
    """Called on the recognizer's thread, read once the session has ended. At each step it samples the process's
    memory (once per ``RSS_EVERY_S`` slot of the session's time, ``now``) and says how far the soak is; given
    ``source`` (an interpreting soak with references) it files the committed words of each play of a recording, by
    where each word ends in the joined source (the recognizer's word times)."""

    def __init__(self, minutes: float, source: JoinedRecordings | None, progress: Callable[[str], None] | None):
        self.now: Callable[[], float] = lambda: 0.0  # the session's time, set once the session exists
        self.minutes = minutes
        self.source = source
        self.progress = progress
        self.memory: list[tuple[float, float]] = []  # (session time, RSS in MB)
        self.words: dict[int, list[str]] = {}
        self._process = psutil.Process()
        self._last_slot: int | None = None  # the RSS_EVERY_S slot of the session's time last sampled
        self._last_report = -60.0

    def on_tentative(self, words: list[str]) -> None:
        at = self.now()
        slot = int(at // RSS_EVERY_S)
        if slot == self._last_slot:
            return
        self._last_slot = slot
        self.memory.append((at, self._process.memory_info().rss / 1e6))
        if self.progress and at - self._last_report >= 60:
            self.progress(f"{at / 60:.0f} of {self.minutes:g} minutes")
            self._last_report = at

    def on_committed(self, words: list[WordRecord]) -> None:
        if self.source is not None:
            for word in words:
                self.words.setdefault(self.source.played(word.source_end_s), []).append(word.text)


def translation_scores(source: JoinedRecordings, committed: dict[int, list[str]], entries: list[dict]) -> dict:
    """BLEU and chrF of every play heard to its end against its reference, over the whole soak and for each pass
    over the recordings heard whole: the same recordings each time, so a translation that degrades as the session
    goes on shows as a falling score from pass to pass (time windows would differ by their recordings). chrF is
    given beside BLEU: over a pass of one or two short recordings, BLEU is mostly its smoothing."""
    from engine.metrics.translation import bleu, chrf

    plays = source.plays()
    references = [entries[index]["translation"] for index, _, _ in plays]
    hypotheses = [" ".join(committed.get(n, [])) for n in range(len(plays))]
    per_pass = source.recordings
    passes = []
    try:
        for first in range(0, len(plays) - per_pass + 1, per_pass):
            refs, hyps = references[first : first + per_pass], hypotheses[first : first + per_pass]
            passes.append(
                {
                    "from_s": plays[first][1],
                    "to_s": plays[first + per_pass - 1][2],
                    m.BLEU: bleu(refs, hyps),
                    m.CHRF: chrf(refs, hyps),
                }
            )
        whole = {m.BLEU: bleu(references, hypotheses), m.CHRF: chrf(references, hypotheses)} if plays else {}
    except ImportError as exc:  # the packaged app leaves sacrebleu out
        log.warning("BLEU and chrF not computed (%s)", exc)
        return {}
    heard = [
        {"id": entries[index].get("id"), "from_s": start, "committed_text": hypotheses[n]}
        for n, (index, start, _) in enumerate(plays)
    ]
    return {**whole, "recordings_scored": len(plays), "bleu_by_pass": passes, "plays": heard}


def run_soak(
    minutes: float,
    manifest: Path,
    out_dir: Path,
    pause_s: float = 2.0,
    progress: Callable[[str], None] | None = None,
    models: Models | None = None,
    config: ShadowConfig | None = None,
) -> dict:
    """``config.translate_from`` (or a translation manifest, ``soak_recordings``): an interpreting soak."""
    if minutes <= 0:
        raise ValueError(f"the soak needs a positive length, not {minutes} minutes")
    config = config or ShadowConfig()
    entries, language = soak_recordings(load_manifest(manifest), config.translate_from)
    config = replace(config, translate_from=language)
    out_dir.mkdir(parents=True, exist_ok=True)
    source = JoinedRecordings([load_audio(e["path"]) for e in entries], minutes * 60.0, pause_s)
    models = models or Models.load(config)
    probe_before = announced_probe(models, "before", progress)
    scored = language is not None and all(e.get("translation") for e in entries)
    listener = _SoakListener(minutes, source if scored else None, progress)
    session = ShadowSession(config, models, listener=listener)
    listener.now = lambda: session.snapshot().session_s
    session.figures.keep_words = False
    figures = session.run_file(source)
    memory = listener.memory
    if session.error:
        raise RuntimeError(session.error)
    probe = {"before": probe_before, "after": announced_probe(models, "after", progress)}
    total = source.size / 16000
    run = session.asr_run
    steps = (run.step_at_s, run.step_compute_s) if run else ([], [])
    lags = (figures.source_ends, figures.lags)
    tenth = max(len(memory) // 10, 1)
    rss = [r for _, r in memory]
    report: dict[str, Any] = {
        "soak": "shadow" if language is None else "interpret",
        "machine": machine_info(),
        "config": {
            **config.__dict__,
            "minutes": minutes,
            "pause_s": pause_s,
            "recordings": len(entries),
            "mode": "simulate",
        },
        m.LAG_DRIFT_S: lag_drift_s(figures.source_ends, figures.lags),
        m.EAR_VOICE_LAG_S: aggregate(figures.lags),
        m.UNDERRUNS: figures.underruns(),
        m.GAP_S: figures.gaps.gap_s,
        UNDERRUNS_SHORT_NOTICE: figures.gaps.short_notice,
        UNDERRUNS_FORCED: figures.gaps.forced,
        "lag_by_window": _windows(*lags, total),
        "step_cost_by_window": _windows(*steps, total),
        "rss_mb_by_window": _windows([t for t, _ in memory], rss, total),
        "rss_mb": {
            "first_tenth_median": float(np.median(rss[:tenth])) if rss else None,
            "last_tenth_median": float(np.median(rss[-tenth:])) if rss else None,
            "peak": max(rss, default=None),
        },
        "words_spoken": len(figures.lags),
        "dropped_audio_s": run.dropped_audio_s if run else 0.0,
        "pace": figures.pace,
        "speed_probe": probe,
    }
    if language is not None:
        report["non_english_words"] = figures.non_english_words
        if scored:
            report.update(translation_scores(source, listener.words, entries))
    if report["dropped_audio_s"]:
        log.warning("the recognizer dropped %.1f s of audio in the soak", report["dropped_audio_s"])
    (out_dir / "soak.json").write_text(json.dumps(json_safe(report), indent=1), encoding="utf-8")
    try:
        from engine.eval import plots
    except ImportError as exc:  # the packaged app leaves matplotlib out: the figures are in the reports all the same
        log.warning("plots not drawn (%s); the figures are in the report", exc)
        report["plots"] = []
    else:
        lag_series, step_series = list(zip(*lags, strict=True)), list(zip(*steps, strict=True))
        report["plots"] = plots.write_soak(out_dir, lag_series, step_series, memory)
    (out_dir / "soak.json").write_text(json.dumps(json_safe(report), indent=1), encoding="utf-8")
    return report
