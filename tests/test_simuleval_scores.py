"""SimulEval's scorers on session reports (engine/research/simuleval_scores.py): the same delays as the project's own
figures where both define them, and the played times for the voice."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("simuleval", reason="SimulEval is the research install (scripts/setup --research; CI has it)")

from engine.metrics.translation import average_lagging  # noqa: E402
from engine.research import simuleval_scores  # noqa: E402
from engine.research.simuleval_scores import session_scores, speech_values, text_values  # noqa: E402

REPORT = {
    "audio_s_heard": 5.0,
    "commits": [
        {"heard_s": 1.0, "commit_s": 1.2},
        {"heard_s": 1.0, "commit_s": 1.2},
        {"heard_s": 2.5, "commit_s": 2.8},
        {"heard_s": 5.3, "commit_s": 5.4},  # the last step heard past the end (its padding)
    ],
    "words": [
        {"heard_s": 2.5, "ready_s": 3.0, "speak_start_s": 3.1, "speak_end_s": 3.5},
        {"heard_s": 1.0, "ready_s": 1.5, "speak_start_s": 1.6, "speak_end_s": 2.0},
        {"heard_s": 5.3, "ready_s": 5.6, "speak_start_s": 5.7, "speak_end_s": 6.2},
        {"heard_s": 5.3, "ready_s": None, "speak_start_s": None, "speak_end_s": None},  # never played
    ],
}
REFERENCE = "one two three four five"


def test_text_al_is_the_projects_al_and_al_ca() -> None:
    figures = session_scores([REPORT], [REFERENCE])
    assert figures is not None and figures["unit"] == "ms"
    text = figures["text"]
    heard = [min(c["heard_s"], 5.0) for c in REPORT["commits"]]
    assert text["AL"] == pytest.approx(1000 * average_lagging(heard, 5.0, 5))
    assert text["AL_CA"] == pytest.approx(1000 * average_lagging([c["commit_s"] for c in REPORT["commits"]], 5.0, 5))
    assert text["StartOffset"] == pytest.approx(1000.0) and text["StartOffset_CA"] == pytest.approx(1200.0)
    assert text["EndOffset"] == pytest.approx(0.0) and text["EndOffset_CA"] == pytest.approx(400.0)
    assert text["LAAL"] <= text["LAAL_CA"] and text["ATD"] <= text["ATD_CA"]


def test_speech_is_scored_on_the_played_words_in_play_order() -> None:
    values = speech_values(REPORT, REFERENCE)
    assert values is not None
    assert values["intervals"] == [
        pytest.approx([1600.0, 400.0]),
        pytest.approx([3100.0, 400.0]),
        pytest.approx([5700.0, 500.0]),
    ]
    assert values["delays"] == pytest.approx([1000.0, 2500.0, 5000.0])  # heard past the end counts as the end
    speech = simuleval_scores.score(simuleval_scores.SPEECH, [values])
    assert speech["EndOffset"] == pytest.approx(6200.0 - 5000.0)  # the voice's last sound after the source's end
    assert speech["StartOffset"] == pytest.approx(1000.0) and speech["StartOffset_CA"] == pytest.approx(1500.0)


def test_a_spoken_word_counts_from_the_last_step_before_its_audio() -> None:
    """A word waits for its lookahead (made after the next commit), or is made ahead from tentative words: its delay
    is the source heard at the last step before its audio was made."""
    words = [
        {"heard_s": 1.0, "ready_s": 3.0, "speak_start_s": 3.1, "speak_end_s": 3.4},  # made after the 2.8 s commit
        {"heard_s": 5.3, "ready_s": 4.0, "speak_start_s": 4.1, "speak_end_s": 4.4},  # made before its own commit
    ]
    values = speech_values({**REPORT, "words": words}, REFERENCE)
    assert values is not None and values["delays"] == pytest.approx([2500.0, 2500.0])


def test_nothing_committed_or_spoken_is_left_out() -> None:
    silent = {"audio_s_heard": 3.0, "commits": [], "words": []}
    assert text_values(silent, REFERENCE) is None and speech_values(silent, REFERENCE) is None
    figures = session_scores([silent, REPORT], [REFERENCE, REFERENCE])
    assert figures is not None and figures["text"] == session_scores([REPORT], [REFERENCE])["text"]
    assert session_scores([silent], [REFERENCE])["text"] == {}  # type: ignore[index]


def test_without_simuleval_there_are_no_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "simuleval", None)  # the app's own install
    assert simuleval_scores.simuleval_version() is None
    assert session_scores([REPORT], [REFERENCE]) is None


class _Recognizer:
    """Records what the agent's listener hands the recognizer."""

    def __init__(self) -> None:
        self.samples = 0
        self.steps: list[str] = []

    def insert_audio(self, audio: object) -> None:
        self.samples += len(audio)  # type: ignore[arg-type]

    def step(self, now_s: float) -> object:
        self.steps.append("step")
        return type("Result", (), {"committed": []})()

    def finish(self, now_s: float) -> object:
        self.steps.append("finish")
        word = type("Word", (), {"text": "end."})()
        return type("Result", (), {"committed": [word]})()


def test_the_agents_listener_steps_every_step_of_source_at_16_khz() -> None:
    from engine.pipeline.config import ShadowConfig
    from engine.research.simuleval_agents import _Listener

    recognizer = _Recognizer()
    models = type("Models", (), {"recognizer": lambda self, config: recognizer})()
    listener = _Listener(models, ShadowConfig(min_step_s=0.3))  # type: ignore[arg-type]
    rate, source = 44_100, []
    said = []
    for _ in range(10):  # ten 100 ms segments of a 44.1 kHz source
        source += [0.0] * 4410
        said.append(listener.words(source, rate, finished=False))
    assert said == [None, None, [], None, None, [], None, None, [], None]  # a step per 0.3 s of source
    assert listener.words(source, rate, finished=True) == ["end."] and recognizer.steps[-1] == "finish"
    assert recognizer.samples == pytest.approx(16_000, abs=2)  # one second, resampled
