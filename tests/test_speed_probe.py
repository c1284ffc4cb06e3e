"""The speed probe every ``bench shadow`` and ``bench interpret`` run carries: fixed work timed before and after."""

from __future__ import annotations

import time

import numpy as np
import pytest

from engine.pipeline.models import Models
from engine.pipeline.speed_probe import _side_by_side, probe_figure, probe_speed, probe_text, run_probed


def test_side_by_side_times_every_round_while_the_other_work_runs() -> None:
    calls = {"fast": 0, "slow": 0}

    def fast() -> None:
        calls["fast"] += 1
        time.sleep(0.005)

    def slow() -> None:
        calls["slow"] += 1
        time.sleep(0.03)

    fast_s, slow_s = _side_by_side(fast, slow, rounds=3)
    assert 0.005 <= fast_s < 0.03 <= slow_s
    # the fast work went on (untimed) until the slow one had its three rounds, so those ran beside it
    assert calls["slow"] == 3 and calls["fast"] > 3


def test_side_by_side_raises_what_a_work_raised() -> None:
    def broken() -> None:
        raise RuntimeError("model gone")

    with pytest.raises(RuntimeError, match="model gone"):
        _side_by_side(broken, lambda: time.sleep(0.001), rounds=3)


class _SlowBackend:
    """A recognizer that takes ``delay_s`` per step and remembers the languages it was given."""

    def __init__(self, delay_s: float, language: str | None) -> None:
        self.delay_s = delay_s
        self.configured_language = language
        self.languages_set: list[str | None] = []
        self.heard_s: list[float] = []

    def set_language(self, language: str | None) -> None:
        self.languages_set.append(language)
        self.configured_language = language

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list:
        self.heard_s.append(audio.size / 16000)
        time.sleep(self.delay_s)
        return []


@pytest.mark.slow
def test_the_probe_times_the_models_it_is_given_and_puts_the_language_back(
    shadow_models: Models, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = _SlowBackend(0.05, language=None)  # a translating recognizer that detects the language
    models = Models(backend, shadow_models.vad, shadow_models.voice)  # type: ignore[arg-type]
    probe = probe_speed(models, rounds=3)
    assert backend.languages_set == ["en", None]  # English for the probe, then what it was
    assert 0.05 <= probe.recognizer_min_s <= probe.recognizer_s < 0.2
    assert probe.recognizer_beside_voice_s >= 0.05
    assert 2.0 < probe.voice_audio_s < 4.0  # the real voice saying the probe's sentence
    assert probe.recording_s == pytest.approx(2 * probe.voice_audio_s + 0.5, abs=0.01)
    assert backend.heard_s == [pytest.approx(probe.recording_s)] * len(backend.heard_s)
    assert 0 < probe.voice_min_s <= probe.voice_s < probe.voice_audio_s
    # the probe's sentence and the warm-up are made once per set of models, not again at each probe
    from engine.pipeline import speed_probe
    from engine.tts.frontend import FrontEnd

    made: list[object] = []
    monkeypatch.setattr(speed_probe, "FrontEnd", lambda config: made.append(config) or FrontEnd(config))
    probe_speed(models, rounds=1)
    assert made == []
    probe_speed(Models(backend, shadow_models.vad, shadow_models.voice), rounds=1)  # type: ignore[arg-type]
    assert len(made) == 1


@pytest.mark.slow
def test_a_probed_run_carries_the_probe_before_and_after_it(shadow_models: Models) -> None:
    order: list[str] = []
    backend = _SlowBackend(0.0, language="en")
    models = Models(backend, shadow_models.vad, shadow_models.voice)  # type: ignore[arg-type]
    real = backend.transcribe

    def transcribe(audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list:
        order.append("probe")
        return real(audio, prompt)

    backend.transcribe = transcribe  # type: ignore[method-assign]

    def run() -> dict:
        order.append("run")
        backend.delay_s = 0.1  # the machine slows down during the run
        return {"bench": "shadow"}

    said: list[str] = []
    report = run_probed(models, run, said.append, rounds=3)
    assert order.index("run") > 0 and order[-1] == "probe"
    assert said == ["timing the machine before the run (speed probe)", "timing the machine after the run (speed probe)"]
    before, after = report["speed_probe"]["before"], report["speed_probe"]["after"]
    assert before["recognizer_s"] < 0.05 <= 0.1 <= after["recognizer_s"]
    assert probe_figure("recognizer_s")(report) == before["recognizer_s"]
    assert probe_figure("recognizer_s")({"bench": "shadow"}) is None
    line = probe_text(report)
    assert line.startswith("machine speed") and f"{before['recognizer_s']:.3f} -> {after['recognizer_s']:.3f} s" in line
    assert probe_text({}) == "machine speed: not probed"
