"""SimulEval's own latency scorers on liveshadow's session reports, beside the project's figures.

A session gives two systems' outputs, each scored as SimulEval scores that kind of system:

- ``text``: the committed words, a speech-to-text system's. Word i's delay is the source heard when it was committed
  (``heard_s``), its computation-aware delay (``_CA``) the compute-aware clock's time of that commit (``commit_s``):
  the delays ``al_s`` and ``al_ca_s`` take (METRICS.md).
- ``speech``: the voice, a speech-to-speech system's. Each spoken word is one output segment as played: its delay
  the source heard at the last recognizer step before its audio was made (the voice's lookahead waits for the words
  after it), its ``_CA`` delay when its audio was ready, its duration and interval the times it played
  (SimulEval's ``intervals``, from which ``EndOffset`` is measured). The played word times stand in for the forced
  alignment (MFA) SimulEval's ``_SpeechAlign`` scorers need: the voice knows them.

SimulEval's ``_CA`` in its own harness adds the agent's cumulative compute to the source read so far (it feeds the
source as fast as the agent takes it); here the times are the session's, on a clock on which compute overlaps the
arriving speech as it does live. Figures are SimulEval's: milliseconds, the mean over recordings.
"""

from __future__ import annotations

import logging
import tempfile
from argparse import Namespace
from collections.abc import Sequence
from importlib import metadata
from typing import Any

log = logging.getLogger(__name__)

METRICS = ("AL", "LAAL", "ATD", "StartOffset", "EndOffset")
TEXT = "text"
SPEECH = "speech"


def simuleval_version() -> str | None:
    """The installed SimulEval's version, None without it (the app's own install)."""
    try:
        import simuleval  # noqa: F401
    except ImportError:
        return None
    return metadata.version("simuleval")


def text_values(report: dict[str, Any], reference: str) -> dict[str, Any] | None:
    """One recording's committed words as SimulEval logs a speech-to-text instance (times in ms); None without a
    committed word."""
    source_s = report["audio_s_heard"]
    commits = [c for c in report.get("commits", []) if c.get("heard_s") is not None]
    if not commits or source_s <= 0:
        return None
    return {
        "reference": reference,
        "source_length": 1000.0 * source_s,
        "delays": [1000.0 * min(c["heard_s"], source_s) for c in commits],
        "elapsed": [1000.0 * c["commit_s"] for c in commits],
    }


def speech_values(report: dict[str, Any], reference: str) -> dict[str, Any] | None:
    """One recording's spoken words as SimulEval keeps a speech-to-speech instance, each word a segment as it played
    (times in ms); None when nothing was spoken."""
    source_s = report["audio_s_heard"]
    words = sorted(
        (w for w in report.get("words", []) if w.get("speak_start_s") is not None and w.get("heard_s") is not None),
        key=lambda w: w["speak_start_s"],
    )
    if not words or source_s <= 0:
        return None
    commits = sorted(
        (c["commit_s"], min(c["heard_s"], source_s)) for c in report.get("commits", []) if c.get("heard_s") is not None
    )
    delays, elapsed = [], []
    for w in words:
        ready = w.get("ready_s") if w.get("ready_s") is not None else w["speak_start_s"]
        # the source heard at the last step before its audio was made: the voice's lookahead waits for later words
        heard = [h for at, h in commits if at <= ready]
        delays.append(1000.0 * (max(heard) if heard else min(w["heard_s"], source_s, ready)))
        elapsed.append(1000.0 * ready)
    durations = [1000.0 * (w["speak_end_s"] - w["speak_start_s"]) for w in words]
    return {
        "reference": reference,
        "source_length": 1000.0 * source_s,
        "delays": delays,
        "elapsed": elapsed,
        "durations": durations,
        "intervals": [[1000.0 * w["speak_start_s"], d] for w, d in zip(words, durations, strict=True)],
    }


def _instance(kind: str, index: int, values: dict[str, Any]) -> Any:
    """A SimulEval instance of ``kind`` holding ``values``, as its scorers take one."""
    from simuleval.evaluator.instance import SpeechOutputInstance, TextOutputInstance

    base = TextOutputInstance if kind == TEXT else SpeechOutputInstance

    class Scored(base):  # type: ignore[misc, valid-type]
        source_length = 0.0  # a number here, not the source audio's property

    # a speech instance wants an output folder for the wave it would write; scoring writes none
    instance = Scored(index, None, Namespace(eval_latency_unit="word", output=tempfile.gettempdir()))
    for name, value in values.items():
        setattr(instance, name, value)
    instance.prediction_list = values["delays"]  # one entry per output segment, as the scorers count them
    instance.silences = []
    return instance


def score(kind: str, recordings: Sequence[dict[str, Any] | None]) -> dict[str, float]:
    """SimulEval's ``METRICS`` and their ``_CA`` forms over ``recordings`` (``text_values`` or ``speech_values``,
    None ones left out), each the mean over recordings in ms as SimulEval's scores give it; {} without any."""
    from simuleval.evaluator.scorers import get_scorer_class

    instances = {i: _instance(kind, i, v) for i, v in enumerate(r for r in recordings if r is not None)}
    if not instances:
        return {}
    figures = {}
    for name in METRICS:
        scorer_class = get_scorer_class("latency", name)
        for aware, suffix in ((False, ""), (True, "_CA")):
            figures[name + suffix] = float(scorer_class(computation_aware=aware, use_ref_len=True)(instances))
    return figures


def session_scores(reports: Sequence[dict[str, Any]], references: Sequence[str]) -> dict[str, Any] | None:
    """Both systems' SimulEval figures over one configuration's recordings, with the version that scored them; None
    without SimulEval installed."""
    version = simuleval_version()
    if version is None:
        return None
    logging.getLogger("simuleval").setLevel(logging.ERROR)  # it warns of every instance without a delay
    pairs = list(zip(reports, references, strict=True))
    return {
        "simuleval_version": version,
        "unit": "ms",
        TEXT: score(TEXT, [text_values(r, ref) for r, ref in pairs]),
        SPEECH: score(SPEECH, [speech_values(r, ref) for r, ref in pairs]),
    }
