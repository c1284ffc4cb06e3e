"""The GUI's thin adapter to the engine: loads models off the GUI thread and re-emits session callbacks as signals.

Engine callbacks arrive on engine threads; emitting a Qt signal from there queues the call to the receivers in
the GUI thread, so widgets are only touched by the GUI thread and never wait for engine work.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal

from engine import paths
from engine.audio.io import by_percent, load_audio
from engine.audio.ports import CaptureDevice
from engine.audio.sound_server import restore_leftover_duck
from engine.pipeline.config import ShadowConfig
from engine.pipeline.history import FOLDER_TIME
from engine.pipeline.models import Models
from engine.pipeline.records import MeterSnapshot, SessionListener, State, WordRecord
from engine.pipeline.session import ShadowSession
from engine.pipeline.sources import MIC, LiveSource, ducked, open_source
from engine.pipeline.whole_pass import WholePassError, WholePassStopped, run_whole_pass
from engine.practice.reference import transcript_beside
from engine.tts.voice import TwoStageVoice

log = logging.getLogger(__name__)

PREPARING = "preparing"  # the state while the models load (the live input is already open)


def sessions_dir() -> Path:
    return paths.data_dir() / "sessions"


def reference_text(recording: str | Path) -> str | None:
    """What a recording says, when a transcript with its name lies beside it (``.txt``, ``.srt`` or ``.vtt``; for
    ``wer_committed``)."""
    beside = transcript_beside(Path(recording))
    return beside[0] if beside else None


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


@dataclass
class _Request:
    config: ShadowConfig
    source: str | None  # a recording's path, or None: the live source
    record: bool
    live: str
    heard: LiveSource | None = None  # the live source, opened before the models were ready
    opened_at: float | None = None  # when (time.monotonic()) it was opened
    audio: np.ndarray | None = None  # the recording, decoded off the GUI thread


class SessionController(QObject):
    state_changed = Signal(str)  # State values, plus PREPARING while the models load
    tentative = Signal(list)
    committed = Signal(list)
    spoken = Signal(list)
    error = Signal(str)
    warning = Signal(str)  # the session runs, but not quite as asked (e.g. the learned policy fell back)
    speaker_tested = Signal(object)  # None when the test sentence played, else what went wrong
    progress = Signal(str)  # while preparing: what is being done ("reading the recording: 40%")
    whole_pass_progress = Signal(str)  # after a recorded session, its recording recognized again ("… 40%")
    whole_pass_done = Signal(object, str)  # the session folder, what came of it (for the status bar)
    _loaded = Signal(object, object, object)  # models or None, error text or None, the start request

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.models: Models | None = None
        self.session: ShadowSession | None = None
        self.session_folder: Path | None = None
        self.reference_text: str | None = None  # what the recording says (its .txt beside it), for wer_committed
        self.testing_speaker = False
        self._loading = False
        self._abandoned = False  # cancelled while preparing
        self._load_lock = threading.Lock()  # one load at a time: Start waits for a preparation under way
        self._pass_thread: threading.Thread | None = None  # the whole pass after a recorded session
        self._pass_stop = threading.Event()
        self._loaded.connect(self._on_loaded)

    @property
    def busy(self) -> bool:
        return self._loading or (self.session is not None and not self.session.wait(0))

    def prepare(self, config: ShadowConfig) -> None:
        """Load the models ``config`` needs (the voice split into its stages the first time) in the background,
        before Start is pressed: a session then starts at once."""

        def prepare() -> None:
            try:
                self._load(config)
            except Exception:  # a missing or broken model: Start loads again and says why in the window
                log.exception("preparing the models failed")

        threading.Thread(target=prepare, name="prepare-models", daemon=True).start()

    def _load(self, config: ShadowConfig) -> Models:
        with self._load_lock:
            models = self.models
            if models is None or models.key != config.models_key():
                models = self.models = Models.load(config)
            return models

    def start(self, config: ShadowConfig, source: str | None, record: bool = True, live: str = MIC) -> None:
        """``source``: a recording's path, or None for the live source ``live`` ("mic", "system": see
        ``engine.pipeline.sources``). When the models are not ready yet, a live source is opened at once and keeps
        what it hears while they load (the state is PREPARING): no word said after Start is lost."""
        if self.busy:
            return
        self.stop_whole_pass()  # the recognizer is the next session's now
        request = _Request(config, source, record, live)
        models = self.models
        ready = models is not None and models.key == config.models_key() and not self._load_lock.locked()
        if ready and source is None:
            self._start_session(request)
            return
        if source is None:
            try:
                request.heard = self._open_live(live, config)
                _capture(request.heard).start()
                request.opened_at = time.monotonic()
            except Exception as exc:  # no device: the window says so
                log.exception("the input did not open")
                self.state_changed.emit(State.FAILED.value)
                self.error.emit(f"Cannot start: {exc}")
                return
        self._loading, self._abandoned = True, False
        self.state_changed.emit(PREPARING)

        def load() -> None:
            try:
                models, problem = self._load(config), None
            except Exception as exc:  # a missing or broken model: say so in the window
                log.exception("loading the models failed")
                models, problem = None, f"Cannot load the models: {exc}"
            if models is not None and source is not None:  # decoded here too: a long video takes a while
                try:
                    request.audio = load_audio(source, progress=by_percent(self._reading))
                except (OSError, ValueError) as exc:  # not audio, cut short, no FFmpeg: the window says so
                    models, problem = None, f"Cannot start: {exc}"
            self._loaded.emit(models, problem, request)

        threading.Thread(target=load, name="load-models", daemon=True).start()

    def _reading(self, share: float) -> None:
        self.progress.emit(f"reading the recording: {share:.0%}")

    def _on_loaded(self, models: Models | None, problem: str | None, request: _Request) -> None:
        self._loading = False
        if models is None or self._abandoned:
            if request.heard is not None:
                _capture(request.heard).stop()
            if models is None:
                self.state_changed.emit(State.FAILED.value)
                self.error.emit(str(problem))
            else:
                self.state_changed.emit(State.CANCELLED.value)
            return
        self._start_session(request)

    @staticmethod
    def _open_live(live: str, config: ShadowConfig) -> LiveSource:
        heard = open_source(live, config)
        if heard.system:
            restore_leftover_duck()
        return heard

    def _start_session(self, request: _Request) -> None:
        assert self.models is not None
        folder = None
        if request.record:
            folder = sessions_dir() / datetime.now().strftime(FOLDER_TIME)
        source = request.source
        self.reference_text = reference_text(source) if source else None
        try:
            if source:
                session = ShadowSession(request.config, self.models, _Relay(self), record_dir=folder)
                session.start_file(request.audio if request.audio is not None else load_audio(source))
            else:
                heard = request.heard or self._open_live(request.live, request.config)
                session = ShadowSession(ducked(heard), self.models, _Relay(self), record_dir=folder)
                session.start_live(_capture(heard), opened_at=request.opened_at)
        except Exception as exc:  # no device, an unreadable file: the window says so
            if request.heard is not None:
                _capture(request.heard).stop()
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
                from engine.tts.speaker_check import speak_on

                voice = models.voice if models is not None else TwoStageVoice(config.voice, threads=config.tts_threads)
                speak_on(device, voice)
            except Exception as exc:  # a missing, busy or vanished device; a broken voice file
                log.warning("the speaker test failed: %s", exc)
                problem = str(exc)
            self.testing_speaker = False
            self.speaker_tested.emit(problem)

        threading.Thread(target=run, name="speaker-test", daemon=True).start()

    @property
    def passing(self) -> bool:
        """A whole pass after a recorded session is under way."""
        return self._pass_thread is not None and self._pass_thread.is_alive()

    def pass_again(self, folder: Path) -> bool:
        """Recognize the recorded session in ``folder`` again, whole, in the background, for its captions
        (``engine.pipeline.whole_pass``); False when it is not (no models, or a pass is running)."""
        models = self.models
        if models is None or self.passing:
            return False
        self._pass_stop = stop = threading.Event()
        tell = by_percent(lambda share: self.whole_pass_progress.emit(f"Recognizing the whole recording: {share:.0%}"))

        def run() -> None:
            try:
                run_whole_pass(folder, models.backend, tell, stop.is_set)
                message = "The captions and transcript now hold the whole recording's words"
            except WholePassStopped:
                message = "The captions keep the words committed live"
            except WholePassError as exc:
                message = str(exc)
            except Exception as exc:  # a broken model file, a full disk: the live captions stay
                log.exception("the whole pass failed")
                message = f"The captions keep the words committed live: {exc}"
            self.whole_pass_done.emit(folder, message)

        self._pass_thread = threading.Thread(target=run, name="whole-pass", daemon=True)
        self._pass_thread.start()
        return True

    def stop_whole_pass(self, timeout: float = 30.0) -> None:
        """Stop a whole pass under way (at its next segment) and wait for it: nothing of it is written."""
        if self.passing:
            assert self._pass_thread is not None
            self._pass_stop.set()
            self._pass_thread.join(timeout)

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()

    def cancel(self) -> None:
        if self._loading:
            self._abandoned = True  # the input closes when the models are in
        elif self.session is not None:
            self.session.cancel()

    def snapshot(self) -> MeterSnapshot | None:
        return self.session.snapshot() if self.session is not None else None

    def shutdown(self, timeout: float = 5.0) -> None:
        """Window closing: cancel a running session and wait a little for its threads (and for models being loaded:
        the process should not end inside a native library's load)."""
        self._abandoned = True
        self.stop_whole_pass(timeout)
        if self.session is not None and not self.session.wait(0):
            self.session.cancel()
            self.session.wait(timeout)
        if self._load_lock.acquire(timeout=timeout):
            self._load_lock.release()


def _capture(source: LiveSource) -> CaptureDevice:
    """The capture ``open_source`` made for ``source``."""
    assert source.capture is not None
    return source.capture
