"""The window's adapter to a live practice session (``engine.practice.live``, or ``.heard`` on this computer's sound):
prepares it off the GUI thread, reports its state and end as signals, keeps the attempt in the history. The window reads
``snapshot()`` on its timer."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from engine.asr.backend import AsrError
from engine.audio.devices import AudioDeviceError
from engine.audio.io import AudioFileError
from engine.practice import history
from engine.practice.heard import HeardPracticeSession
from engine.practice.live import PracticeSession
from engine.practice.live_common import PracticeSnapshot, PracticeState

log = logging.getLogger(__name__)

PREPARING = "preparing"
LiveSession = PracticeSession | HeardPracticeSession


class PracticeController(QObject):
    state_changed = Signal(str)  # PREPARING, then PracticeState values
    error = Signal(str)
    finished = Signal(object)  # the report (None when cancelled or failed)
    progress = Signal(str)  # while preparing: the step ("reading the recording: 40%")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session: LiveSession | None = None
        self.folder: Path | None = None
        self._thread: threading.Thread | None = None
        self._cancelled = threading.Event()

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, session: LiveSession) -> None:
        """Prepare and start ``session`` (its ``record_dir`` is where the attempt is kept)."""
        if self.busy:
            return
        self.folder = session.record_dir
        self.session = session
        self._cancelled.clear()
        self.state_changed.emit(PREPARING)
        self._thread = threading.Thread(target=self._run, args=(session,), name="practice-window", daemon=True)
        self._thread.start()

    def _run(self, session: LiveSession) -> None:
        try:
            if isinstance(session, PracticeSession):
                session.prepare(self.progress.emit)
            else:
                session.prepare()
            if self._cancelled.is_set():
                self.state_changed.emit(PracticeState.CANCELLED.value)
                self.finished.emit(None)
                return
            session.start()
        except Exception as exc:
            expected = isinstance(exc, (AsrError, AudioFileError, AudioDeviceError, OSError, ValueError))
            if not expected:
                log.exception("the practice could not start")
            self.error.emit(f"Cannot practise: {exc if expected else f'{type(exc).__name__}: {exc}'}")
            self.state_changed.emit(PracticeState.FAILED.value)
            self.finished.emit(None)
            return
        self.state_changed.emit(PracticeState.RUNNING.value)
        while not session.wait(0.1):
            if session.state is PracticeState.SCORING:
                self.state_changed.emit(PracticeState.SCORING.value)
                session.wait()
        if session.error:
            self.error.emit(f"The practice stopped: {session.error}")
        report, source = session.report, session.source_recording
        if report is not None and source is not None:
            try:
                history.record(report, source)
            except OSError as exc:
                self.error.emit(f"The attempt was not kept in the history: {exc}")
        self.finished.emit(report)  # before the end state: a window that reads "done" has the summary
        self.state_changed.emit(session.state.value)

    def snapshot(self) -> PracticeSnapshot | None:
        session = self.session
        return session.snapshot() if session is not None and session.state is not PracticeState.IDLE else None

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()

    def cancel(self) -> None:
        self._cancelled.set()
        if self.session is not None:
            self.session.cancel()

    def shutdown(self, timeout: float = 5.0) -> None:
        self.cancel()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
