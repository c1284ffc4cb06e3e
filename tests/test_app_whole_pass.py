"""The window's controller runs the whole pass after a session in the background, and a new session stops it."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from engine.asr.words import Word
from engine.pipeline.captions import WHOLE_PASS
from tests.test_whole_pass import _folder

pytestmark = pytest.mark.gui


class _SlowBackend:
    """A window takes a while; ``started`` is set once the first one is being decoded."""

    def __init__(self) -> None:
        self.started = threading.Event()

    def transcribe_offline(self, audio: np.ndarray) -> list[Word]:
        self.started.set()
        time.sleep(0.3)
        return [Word("word", 0.5, 1.0)]

    def transcribe(self, audio: np.ndarray) -> list[Word]:
        raise AssertionError("not the windowed pass")


def test_the_pass_runs_in_the_background_and_stops_when_asked(qtbot, tmp_path: Path) -> None:
    from app.session_controller import SessionController

    controller = SessionController()
    backend = _SlowBackend()
    controller.models = SimpleNamespace(backend=backend)  # type: ignore[assignment]
    folder = _folder(tmp_path, seconds=200.0)  # ten windows: about 3 s
    messages: list[str] = []
    controller.whole_pass_done.connect(lambda _folder, text: messages.append(text))
    t0 = time.monotonic()
    assert controller.pass_again(folder) and controller.passing
    assert time.monotonic() - t0 < 1.0  # the window's thread goes on at once
    assert not controller.pass_again(folder)  # one at a time
    assert backend.started.wait(5)
    controller.stop_whole_pass()  # as a new session does before it starts
    assert not controller.passing and time.monotonic() - t0 < 2.0
    qtbot.waitUntil(lambda: bool(messages), timeout=2000)
    assert "committed live" in messages[0]
    assert not (folder / WHOLE_PASS).exists() and not (folder / "heard.srt").exists()

    progress: list[str] = []
    controller.whole_pass_progress.connect(progress.append)
    assert controller.pass_again(folder)
    qtbot.waitUntil(lambda: len(messages) == 2, timeout=20_000)
    assert "now hold the whole" in messages[1] and (folder / WHOLE_PASS).is_file()
    assert progress[0].endswith("0%") and progress[-1].endswith("100%")
