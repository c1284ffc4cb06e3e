"""The window's Practise mode: starts a practice session from the window's settings and devices, shows it live in the
``PracticeView`` and, when it ends, its summary, the progress over past attempts and a replay from any word (the
source left, the person right)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QComboBox, QFileDialog, QStatusBar

from app.practice_controller import LiveSession, PracticeController
from app.settings import app_settings
from app.widgets.practice_controls import PracticeControls
from app.widgets.practice_view import PracticeView
from app.widgets.settings_panel import SettingsPanel
from engine.pipeline.history import SIDE_BY_SIDE
from engine.practice import history
from engine.practice.export import export_attempt
from engine.practice.heard import SYSTEM, HeardPracticeSession
from engine.practice.live import PracticeSession
from engine.practice.live_common import ATTEMPT_FILE, PracticeState

log = logging.getLogger(__name__)

SCORING = PracticeState.SCORING.value


class Host(Protocol):
    """What the Practise mode uses of the window it lives in."""

    state: str
    settings_panel: SettingsPanel
    input_combo: QComboBox
    output_combo: QComboBox

    def _on_state(self, state: str) -> None: ...
    def show_error(self, text: str) -> None: ...
    def statusBar(self) -> QStatusBar: ...
    def stop_replay(self) -> None: ...
    def stop_whole_pass(self) -> None: ...
    def show_progress(self, text: str) -> None: ...
    def replay_session(
        self, folder: Path | None, mode: str | None, start_s: float = 0.0, recordings: tuple[Path, Path] | None = None
    ) -> bool: ...


class PracticeMode(QObject):
    def __init__(self, window: Host, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window = window
        self.controller = PracticeController(self)
        self.view = PracticeView()
        self.controls = PracticeControls(app_settings())
        self.view.add_controls(self.controls)
        window.settings_panel.changed.connect(self._update_controls)
        self.view.source_view.selectionChanged.connect(
            lambda: self.controls.loop_selection.setEnabled(self.view.selected_span() is not None)
        )
        self.controls.loop_selection.clicked.connect(self._loop_selection)
        self._update_controls()
        self.report: dict | None = None
        self.controller.state_changed.connect(window._on_state)
        self.controller.error.connect(window.show_error)
        self.controller.finished.connect(self._finished)
        self.controller.progress.connect(window.show_progress)
        self.view.word_clicked.connect(self.replay_from)

    @property
    def busy(self) -> bool:
        return self.controller.busy

    def start(self) -> None:
        window = self.window
        panel = window.settings_panel
        heard = panel.live_source() == SYSTEM  # this computer's sound: another application plays the source
        source = None if heard else panel.source_path()
        if not heard and not source:
            window.show_error("Cannot practise: choose a recording to shadow, or this computer's sound.")
            return
        if source and not Path(source).is_file():
            window.show_error(f"Cannot practise: the recording {source} does not exist.")
            return
        if window.input_combo.currentData() is None or (not heard and window.output_combo.currentData() is None):
            window.show_error(
                "Cannot practise: it needs a microphone and headphones. Connect them and press Refresh devices."
            )
            return
        window.stop_replay()
        window.stop_whole_pass()  # a practice times the person's voice: nothing else computes meanwhile
        self.report = None
        self.view.reset()
        self.view.show_history([] if source is None else self._history(Path(source)))
        self.view.hide_ahead = panel.practice_interpreting()  # the English text is the answer: shown once said
        folder, language, interpret = history.attempt_dir(), panel.practice_language(), panel.practice_interpreting()
        microphone = window.input_combo.currentData()
        if source is None:
            session: LiveSession = HeardPracticeSession(SYSTEM, language, microphone, folder, interpret=interpret)
        else:
            sentences = self.controls.sentence_by_sentence() and not interpret
            loop = None if interpret else self.controls.chosen_loop()
            session = PracticeSession(
                Path(source),
                language,
                microphone,
                window.output_combo.currentData(),
                folder,
                interpret=interpret,
                speed=self.controls.speed(),
                sentence_by_sentence=sentences,
                loop=loop,
                into=self.controls.interpreting_into() if interpret else None,
            )
        self.controller.start(session)

    def _update_controls(self) -> None:
        panel = self.window.settings_panel
        self.controls.for_recording(panel.live_source() != SYSTEM, panel.practice_interpreting())

    def _loop_selection(self) -> None:
        span = self.view.selected_span()
        if span is not None:
            self.controls.set_loop(*span)

    def tick(self) -> None:
        """The window's meter timer (10 Hz): the live marks and figures."""
        if self.window.state != PracticeState.RUNNING.value:
            return
        snap = self.controller.snapshot()
        if snap is not None and snap.state is PracticeState.RUNNING:
            self.view.show_snapshot(snap)

    def _finished(self, report: object) -> None:
        session = self.controller.session
        if not isinstance(report, dict) or session is None:
            return
        self.report = report
        self.view.show_summary(report)
        source = session.source_recording
        self.view.show_history(self._history(source) if source is not None else [])
        self.window.statusBar().showMessage(
            f"Practice recorded in {self.controller.folder}: click a word to replay "
            "from it (the source left, you right)",
            10000,
        )

    def _history(self, source: Path) -> list[dict]:
        try:
            return history.attempts(source)
        except OSError as exc:
            log.warning("cannot read the practice history: %s", exc)
            return []

    def replay_from(self, start_s: float) -> bool:
        folder, session = self.controller.folder, self.controller.session
        if self.report is None or folder is None or session is None:
            return False
        source = session.played_recording  # the source as it played (slowed, sentence by sentence): the attempt's clock
        if source is None:
            return False
        return self.window.replay_session(folder, SIDE_BY_SIDE, start_s, recordings=(source, folder / ATTEMPT_FILE))

    def export(self) -> None:
        """*Export…* in Practise: the last attempt as a Praat TextGrid, an ELAN .eaf and a CSV, in a folder chosen."""
        if self.report is None:
            self.window.show_error("There is no scored attempt to export yet.")
            return
        target = QFileDialog.getExistingDirectory(None, "Export the attempt (TextGrid, ELAN, CSV) into")
        if target:
            self.export_to(Path(target))

    def export_to(self, target: Path) -> list[Path]:
        session, folder = self.controller.session, self.controller.folder
        source = session.source_recording if session is not None else None
        if self.report is None or source is None:
            return []
        destination = target / (folder.name if folder is not None else "practice")
        try:
            written = export_attempt(self.report, destination, source)
        except (OSError, ValueError) as exc:
            self.window.show_error(f"Export failed: {exc}")
            return []
        self.window.statusBar().showMessage(
            f"Attempt exported to {destination}: {', '.join(p.name for p in written)}", 8000
        )
        return written

    def stop(self) -> None:
        self.controller.stop()

    def cancel(self) -> None:
        self.controller.cancel()

    def shutdown(self) -> None:
        self.controller.shutdown()
