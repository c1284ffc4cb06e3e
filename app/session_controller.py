"""The GUI's thin adapter to the engine: loads models off the GUI thread and re-emits session callbacks as signals.

Engine callbacks arrive on engine threads; emitting a Qt signal from there queues the call to the receivers in
the GUI thread, so widgets are only touched by the GUI thread and never wait for engine work.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from engine import paths
from engine.audio.io import load_audio
from engine.pipeline.config import ShadowConfig
from engine.pipeline.history import FOLDER_TIME
from engine.pipeline.models import Models
from engine.pipeline.session import MeterSnapshot, SessionListener, ShadowSession, State, WordRecord
from engine.tts.voice import TwoStageVoice

log = logging.getLogger(__name__)


def sessions_dir() -> Path:
    return paths.data_dir() / "sessions"


def reference_text(recording: str | Path) -> str | None:
    """What a recording says, when a transcript with its name and ``.txt`` lies beside it (for ``wer_committed``)."""
    path = Path(recording).with_suffix(".txt")
    try:
        return path.read_text(encoding="utf-8").strip() or None if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        log.warning("cannot read the reference transcript %s", path)
        return None


class _Relay(SessionListener):
    def __init__(self, controller: SessionController) -> None:
        self.controller = controller

    def on_state(self, state: State) -> None:
        self.controller.state_changed.emit(state.value)

    def on_tentative(self, words: list[str]) -> None:
        self.controller.tentative.emit(words)

    def on_committed(self, words: list[WordRecord]) -> None:
        self.controller.committed.emit(words)

    def on_spoken(self, words: list[WordRecord]) -> None:
        self.controller.spoken.emit(words)

    def on_error(self, message: str) -> None:
        self.controller.error.emit(message)

    def on_warning(self, message: str) -> None:
        self.controller.warning.emit(message)


class SessionController(QObject):
    state_changed = Signal(str)  # State values, plus "loading" while models load
    tentative = Signal(list)
    committed = Signal(list)
    spoken = Signal(list)
    error = Signal(str)
    warning = Signal(str)  # the session runs, but not quite as asked (e.g. the learned policy fell back)
    speaker_tested = Signal(object)  # None when the test sentence played, else what went wrong
    _loaded = Signal(object, object, object)  # models or None, error text or None, the start request

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.models: Models | None = None
        self.session: ShadowSession | None = None
        self.session_folder: Path | None = None
        self.reference_text: str | None = None  # what the recording says (its .txt beside it), for wer_committed
        self.testing_speaker = False
        self._loading = False
        self._loaded.connect(self._on_loaded)

    @property
    def busy(self) -> bool:
        return self._loading or (self.session is not None and not self.session.wait(0))

    def start(self, config: ShadowConfig, source: str | None, record: bool = True) -> None:
        """``source``: a recording's path, or None for the microphone. Models load in the background first."""
        if self.busy:
            return
        request = (config, source, record)
        if self.models is not None and self.models.key == config.models_key():
            self._start_session(request)
            return
        self._loading = True
        self.state_changed.emit("loading")

        def load() -> None:
            try:
                models, problem = Models.load(config), None
            except Exception as exc:  # a missing or broken model: say so in the window
                log.exception("loading the models failed")
                models, problem = None, str(exc)
            self._loaded.emit(models, problem, request)

        threading.Thread(target=load, name="load-models", daemon=True).start()

    def _on_loaded(self, models: Models | None, problem: str | None, request: tuple) -> None:
        self._loading = False
        if models is None:
            self.state_changed.emit(State.FAILED.value)
            self.error.emit(f"Cannot load the models: {problem}")
            return
        self.models = models
        self._start_session(request)

    def _start_session(self, request: tuple) -> None:
        config, source, record = request
        assert self.models is not None
        folder = None
        if record:
            folder = sessions_dir() / datetime.now().strftime(FOLDER_TIME)
        session = ShadowSession(config, self.models, _Relay(self), record_dir=folder)
        self.reference_text = reference_text(source) if source else None
        try:
            if source:
                audio = load_audio(source)
                session.start_file(audio)
            else:
                from engine.audio.capture import Capture

                session.start_live(Capture(config.input_device))
        except Exception as exc:  # no device, an unreadable file: the window says so
            log.exception("the session did not start")
            self.state_changed.emit(State.FAILED.value)
            self.error.emit(f"Cannot start: {exc}")
            return
        self.session = session
        self.session_folder = folder

    def test_speaker(self, config: ShadowConfig, device: str | int) -> None:
        """Speak a test sentence on ``device`` in the background; ``speaker_tested`` says how it went."""
        if self.testing_speaker:
            return
        self.testing_speaker = True
        models = self.models if self.models is not None and self.models.key == config.models_key() else None

        def run() -> None:
            problem = None
            try:
                from engine.audio.device_check import speak_on

                voice = models.voice if models is not None else TwoStageVoice(config.voice, threads=config.tts_threads)
                speak_on(device, voice)
            except Exception as exc:  # a missing, busy or vanished device; a broken voice file
                log.warning("the speaker test failed: %s", exc)
                problem = str(exc)
            self.testing_speaker = False
            self.speaker_tested.emit(problem)

        threading.Thread(target=run, name="speaker-test", daemon=True).start()

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()

    def cancel(self) -> None:
        if self.session is not None:
            self.session.cancel()

    def snapshot(self) -> MeterSnapshot | None:
        return self.session.snapshot() if self.session is not None else None

    def shutdown(self, timeout: float = 5.0) -> None:
        """Window closing: cancel a running session and wait a little for its threads."""
        if self.session is not None and not self.session.wait(0):
            self.session.cancel()
            self.session.wait(timeout)
