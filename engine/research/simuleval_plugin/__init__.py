"""SimulEval's ``--user-dir`` for liveshadow, imported before SimulEval reads its metric names: it registers
``WHISPER_BASE_ASR_BLEU`` (the agents' module, imported here, defines it) and keeps a speech output's computation-aware
times in ``instances.log``: SimulEval 1.1.4 writes them as ``[]`` there, so its ``_CA`` scorers of a speech-to-speech
run have nothing to score and stop with "mean requires at least one data point"."""

from typing import Any

from simuleval.evaluator.instance import SpeechOutputInstance

from engine.research import simuleval_agents  # noqa: F401

_summarize = SpeechOutputInstance.summarize


def _summarize_with_elapsed(self: Any) -> dict[str, Any]:
    summary: dict[str, Any] = _summarize(self)
    summary["elapsed"] = list(self.elapsed)
    return summary


SpeechOutputInstance.summarize = _summarize_with_elapsed
