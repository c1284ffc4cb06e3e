"""The main window. Widgets show state and forward user intent; engine work lives in engine/ behind adapters."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import psutil
from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QIcon, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QMainWindow,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.gui_gc import MainThreadCollector
from app.past_sessions import PastSessions
from app.practice_mode import SCORING, PracticeMode
from app.session_controller import PREPARING, SessionController
from app.settings import app_settings
from app.widgets.device_box import DeviceBox
from app.widgets.meters_panel import MetersPanel
from app.widgets.models_dialog import ModelsDialog
from app.widgets.route_banner import RouteBanner, message_label
from app.widgets.session_bar import EXPORT_SESSION_TIP, SessionBar
from app.widgets.sessions_dialog import SessionsDialog
from app.widgets.settings_panel import SettingsPanel, settings_dock
from app.widgets.transcript_view import DEFAULT_POINT_SIZE, TranscriptView
from engine import __version__, paths
from engine.audio.device_check import LevelMonitor
from engine.audio.replay import Replay
from engine.audio.sound_server import restore_leftover_duck
from engine.metrics.wer import wer
from engine.modelstore.store import ModelStore
from engine.pipeline.history import LEAD_IN_S
from engine.pipeline.records import State, WordRecord

log = logging.getLogger(__name__)

KEY_GEOMETRY = "window/geometry"
KEY_WINDOW_STATE = "window/state"  # the settings panel shown or folded away
KEY_TRANSCRIPT_PT = "view/transcript_point_size"
DEFAULT_SIZE = (1100, 760)
MIN_SIZE = (400, 300)  # a remembered geometry smaller than this (e.g. from a window never shown) is ignored
METER_INTERVAL_MS = 100  # 10 Hz
HOTPLUG_INTERVAL_MS = 4000
ACTIVE_STATES = (PREPARING, State.RUNNING.value, State.STOPPING.value, SCORING)
HEARING_DB = -45  # an idle microphone level above this is someone speaking into it


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.remember_geometry = True  # off for windows that are only rendered (screenshots)
        self._collector = MainThreadCollector(self)
        self._collector.start()
        self.setWindowTitle("liveshadow")
        icon = paths.assets_dir() / "liveshadow.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))
        self.controller = SessionController(self)
        self.controller.speaker_tested.connect(self._on_speaker_tested)
        self.state = State.IDLE.value
        # the top bar: mode and source, then the devices with their checks
        self.settings_panel = SettingsPanel(app_settings())
        self.devices = devices_box = DeviceBox(self._device_error)
        self._devices_said = ""  # the last message the device pickers' refresh showed
        self.input_combo, self.output_combo = devices_box.input_combo, devices_box.output_combo
        self.idle_level, self.refresh_button = devices_box.idle_level, devices_box.refresh_button
        self.test_speaker_button = devices_box.test_speaker_button
        self.refresh_button.clicked.connect(lambda: self.refresh_devices())
        self.test_speaker_button.clicked.connect(self.test_speaker)
        source_box = QGroupBox("What to shadow")
        QVBoxLayout(source_box).addWidget(self.settings_panel.source_box)

        # the settings under their presets: a side panel that folds away
        self.settings_dock = settings_dock(self.settings_panel, self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.settings_dock)
        self.settings_dock.hide()

        self.settings_button = self.settings_dock.toggleViewAction()
        self.bar = bar = SessionBar(self.settings_button)
        self.start_button, self.stop_button, self.cancel_button = bar.start_button, bar.stop_button, bar.cancel_button
        self.export_button, self.preset_label, self.status_label = bar.export_button, bar.preset_label, bar.status_label
        self.start_button.clicked.connect(self.start_session)
        self.stop_button.clicked.connect(self.stop_session)
        self.cancel_button.clicked.connect(self.cancel_session)
        self.export_button.clicked.connect(self.export_session)
        bar.models_button.clicked.connect(self.show_models)
        bar.sessions_button.clicked.connect(self.show_sessions)
        self.models_dialog: ModelsDialog | None = None

        self.banner = RouteBanner(lambda: self.settings_panel.echo_guard.setCurrentText("cancel"))
        self.route_label, self.headphones = self.banner.route_label, self.banner.headphones
        self.use_cancel_button = self.banner.use_cancel_button
        self.message = message_label()

        self.transcript = TranscriptView()
        self.transcript.set_point_size(int(str(app_settings().value(KEY_TRANSCRIPT_PT, DEFAULT_POINT_SIZE, type=int))))
        self.transcript.point_size_changed.connect(lambda size: app_settings().setValue(KEY_TRANSCRIPT_PT, size))
        self.meters = MetersPanel()
        self.practice = PracticeMode(self, parent=self)
        self.past = PastSessions(self, parent=self)

        top = QHBoxLayout()
        top.addWidget(source_box, 3)
        top.addWidget(devices_box, 2)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.transcript)
        self.splitter.addWidget(self.meters)
        self.splitter.addWidget(self.practice.view)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([480, 230])
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(top)
        layout.addWidget(bar)
        layout.addWidget(self.banner)
        layout.addWidget(self.message)
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.statusBar().showMessage(f"liveshadow {__version__}")

        for keys, slot in (
            (("Space",), self._space),
            (("Ctrl+Return", "Ctrl+Enter"), self.toggle_session),
            (("Esc",), self.escape),
            (("Ctrl+E",), self.export_session),
        ):
            for key in keys:
                QShortcut(QKeySequence(key), self).activated.connect(slot)

        self.controller.state_changed.connect(self._on_state)
        self.controller.tentative.connect(self.transcript.set_tentative)
        self.controller.committed.connect(self._on_committed)
        self.controller.spoken.connect(self._on_spoken)
        self.controller.error.connect(self.show_error)
        self.controller.progress.connect(self.show_progress)
        self.controller.whole_pass_progress.connect(lambda text: self.statusBar().showMessage(text))
        self.controller.whole_pass_done.connect(lambda _folder, text: self.statusBar().showMessage(text, 15000))
        self.controller.warning.connect(self.show_warning)
        self.settings_panel.changed.connect(self._update_warning)
        self.settings_panel.changed.connect(self._show_mode)
        self.transcript.word_clicked.connect(lambda start: self.replay_session(None, None, start - LEAD_IN_S))

        self._meter_timer = QTimer(self)
        self._meter_timer.timeout.connect(self._update_meters)
        self._meter_timer.start(METER_INTERVAL_MS)
        self._hotplug_timer = QTimer(self)
        self._hotplug_timer.timeout.connect(self._check_hotplug)
        self._hotplug_timer.start(HOTPLUG_INTERVAL_MS)
        psutil.cpu_percent(None)  # the first call only starts the measurement

        self._restore_settings()
        restore_leftover_duck()  # the other applications' sound, if a liveshadow that crashed left it lowered
        self.refresh_devices()
        self.output_combo.currentIndexChanged.connect(lambda _i: self._update_warning())
        self._on_state(State.IDLE.value)
        self._update_warning()
        self._show_mode()

    # ----- session
    def _show_mode(self) -> None:
        """Practise shows the practice view in place of the transcript and the meters."""
        practising = self.settings_panel.practising()
        self.transcript.setVisible(not practising)
        self.meters.setVisible(not practising)
        self.practice.view.setVisible(practising)
        what = "Start practising" if practising else "Start shadowing"
        self.start_button.setToolTip(f"{what} (Space or Ctrl+Enter)")
        self._update_export()

    def _update_export(self) -> None:
        """Export… takes the last session, or in Practise the last attempt (as TextGrid, ELAN and CSV)."""
        practising = self.settings_panel.practising()
        exportable = self.practice.report if practising else self.controller.session_folder
        self.export_button.setEnabled(self.state not in ACTIVE_STATES and exportable is not None)
        self.export_button.setToolTip(
            "Export the last attempt as a Praat TextGrid, an ELAN .eaf and a CSV (Ctrl+E)"
            if practising
            else EXPORT_SESSION_TIP
        )

    def stop_session(self) -> None:
        (self.practice if self.practice.busy else self.controller).stop()

    def cancel_session(self) -> None:
        (self.practice if self.practice.busy else self.controller).cancel()

    def start_session(self) -> None:
        self.message.clear()
        if self.settings_panel.practising():
            self.devices.stop_level()  # the practice opens the microphone itself
            self.practice.start()
            return
        try:
            config = self.settings_panel.config(self.input_combo.currentData(), self.output_combo.currentData())
        except ValueError as exc:
            self.show_error(f"Cannot start: {exc}")
            return
        source = self.settings_panel.source_path()
        if source == "":
            self.show_error("Cannot start: choose a recording to shadow (or the microphone as the source).")
            return
        if source and not Path(source).is_file():
            self.show_error(f"Cannot start: the recording {source} does not exist.")
            return
        if self.output_combo.currentData() is None:
            self.show_error("Cannot start: no speaker (output device) found. Connect one and press Refresh devices.")
            return
        live = self.settings_panel.live_source()
        if live == "mic" and self.input_combo.currentData() is None:
            self.show_error("Cannot start: no microphone found. Connect one and press Refresh devices.")
            return
        self.stop_replay()
        self.transcript.clear_words()
        self.transcript.set_clickable(False)
        self.past.shown_folder = None
        self.meters.reset()
        self.devices.stop_level()  # the session opens the microphone itself
        self.controller.start(config, source, live=live or "mic")

    def prepare_models(self) -> None:
        """Load the models the settings use in the background now, so Start starts at once."""
        try:
            config = self.settings_panel.config(self.input_combo.currentData(), self.output_combo.currentData())
        except ValueError:
            return  # settings the session would refuse: Start says why
        self.controller.prepare(config)

    def _space(self) -> None:
        """Space toggles the session, except while typing in a field or reading the transcript, where it keeps its
        meaning."""
        if not isinstance(self.focusWidget(), QLineEdit | QAbstractSpinBox | TranscriptView):
            self.toggle_session()

    def toggle_session(self) -> None:
        """Ctrl+Enter (and Space): start when idle, stop (finish what was heard) when running."""
        if self.state == State.RUNNING.value:
            self.stop_session()
        elif self.state not in ACTIVE_STATES:
            self.start_session()

    # ----- device check
    def test_speaker(self) -> None:
        """Speak one sentence on the chosen speaker (the voice loads in the background if it must)."""
        device = self.output_combo.currentData()
        if device is None:
            self.show_error("No speaker (output device) to test. Connect one and press Refresh devices.")
            return
        try:
            config = self.settings_panel.config(self.input_combo.currentData(), device)
        except ValueError as exc:
            self.show_error(f"Cannot test the speaker: {exc}")
            return
        self.test_speaker_button.setEnabled(False)
        self.statusBar().showMessage(f"Speaking a test sentence on {self.output_combo.currentText()}…")
        self.controller.test_speaker(config, device)

    def _on_speaker_tested(self, problem: object) -> None:
        self.test_speaker_button.setEnabled(self.state not in ACTIVE_STATES)
        if problem:
            self.show_error(f"The speaker test failed: {problem}")
        else:
            self.message.clear()
            self.statusBar().showMessage("The test sentence was played. Did you hear it?", 8000)

    @property
    def level_monitor(self) -> LevelMonitor | None:
        return self.devices.level_monitor

    def _device_error(self, text: str, always: bool) -> None:
        """A microphone that went away (``always`` said), or cannot be opened: not over a message already shown (the
        error that ended a session is the one to read)."""
        if always or not self.message.text():
            self.show_error(text)
        else:
            log.warning("%s", text)

    def export_session(self) -> None:
        if self.settings_panel.practising():
            self.practice.export()
            return
        folder = self.controller.session_folder
        if folder is None or not folder.is_dir():
            self.show_error("There is no recorded session to export yet.")
            return
        target = QFileDialog.getExistingDirectory(self, "Export the session into")
        if target:
            self.export_to(Path(target))

    def export_to(self, target: Path) -> Path | None:
        folder = self.controller.session_folder
        if folder is None:
            return None
        destination = target / folder.name
        try:
            shutil.copytree(folder, destination, dirs_exist_ok=True)
        except OSError as exc:
            self.show_error(f"Export failed: {exc}")
            return None
        self.statusBar().showMessage(f"Session exported to {destination}", 8000)
        return destination

    def show_progress(self, text: str) -> None:
        """A step of preparing (a long recording read, the source's words): beside "Preparing…"."""
        if self.state == PREPARING:
            self.status_label.setText(f"Preparing… {text}")

    def _on_state(self, state: str) -> None:
        self.state = state
        active = state in ACTIVE_STATES
        self.start_button.setEnabled(not active)
        self.stop_button.setEnabled(state == State.RUNNING.value)
        self.cancel_button.setEnabled(active)
        self._update_export()
        for widget in (self.settings_panel, self.input_combo, self.output_combo, self.refresh_button):
            widget.setEnabled(not active)
        self.preset_label.setText(f"Preset: {self.settings_panel.preset.currentText()}")
        self.status_label.setText(
            {
                PREPARING: "Preparing…",
                State.IDLE.value: "Ready",
                State.RUNNING.value: "Practising" if self.practice.busy else "Shadowing",
                SCORING: "Scoring your attempt…",
                State.STOPPING.value: "Finishing what was heard…",
                State.DONE.value: "Done",
                State.CANCELLED.value: "Cancelled",
                State.FAILED.value: "Stopped by an error",
            }.get(state, state)
        )
        self.test_speaker_button.setEnabled(not active)
        if active:
            self.devices.stop_level()
        if state == State.DONE.value and self.controller.session_folder is not None and not self.practice.busy:
            self.statusBar().showMessage(f"Session recorded in {self.controller.session_folder}", 10000)
            if self.settings_panel.whole_pass.isChecked():
                self.controller.pass_again(self.controller.session_folder)
        session = self.controller.session
        if self.practice.busy or self.settings_panel.practising():
            return  # the practice shows its own summary (``PracticeMode``)
        if state in (State.DONE.value, State.CANCELLED.value) or (
            state == State.FAILED.value and session is not None and session.state == State.FAILED
        ):  # not a session that never started (the models or the device), whose summary would be the last one's
            self._show_summary()

    def _show_summary(self) -> None:
        session = self.controller.session
        if session is None:
            return
        report = session.figures.report()
        reference = self.controller.reference_text
        score = None
        # The words committed against the transcript beside the recording: wer_committed. (wer_spoken is a recognition
        # of the voice's audio, which the benchmarks make; a transcript in the source language scores no translation.)
        if reference and session.state == State.DONE and not session.config.translate_from:
            score = wer(reference, report.get("committed_text", ""))
        self.meters.show_summary(report, score)
        if self.controller.session_folder is not None:
            self.past.shown_folder = self.controller.session_folder
            self.transcript.set_clickable(True)

    # ----- past sessions
    def show_sessions(self) -> SessionsDialog:
        return self.past.show_dialog()

    def open_session(self, folder: Path) -> bool:
        return self.past.open(folder)

    def stop_whole_pass(self) -> None:
        self.controller.stop_whole_pass()

    def pass_again(self, folder: Path) -> bool:
        """Recognize a recorded session's whole recording again, in the background (``SessionController``)."""
        return self.controller.pass_again(folder)

    def replay_session(
        self, folder: Path | None, mode: str | None, start_s: float = 0.0, recordings: tuple[Path, Path] | None = None
    ) -> bool:
        """Replay a finished session from ``start_s`` (``PastSessions.play``)."""
        return self.past.play(folder, mode, start_s, recordings)

    def stop_replay(self) -> None:
        self.past.stop()

    @property
    def replay(self) -> Replay | None:
        return self.past.replay

    @property
    def shown_folder(self) -> Path | None:
        return self.past.shown_folder

    def busy(self) -> bool:
        """A session or a practice is running (or preparing, or finishing)."""
        return self.state in ACTIVE_STATES

    def output_device(self) -> str | None:
        return self.output_combo.currentData()

    def escape(self) -> None:
        """Esc: cancel a running session, else stop a replay."""
        if self.state in ACTIVE_STATES:
            self.cancel_session()
        else:
            self.stop_replay()

    def _on_committed(self, records: list[WordRecord]) -> None:
        self.transcript.add_committed(records)

    def _on_spoken(self, records: list[WordRecord]) -> None:
        self.transcript.mark_spoken(records)

    def _update_meters(self) -> None:
        if self.practice.busy:
            self.practice.tick()
            return
        snap = self.controller.snapshot()
        if snap is not None and self.state in ACTIVE_STATES:
            self.meters.show_snapshot(snap, psutil.cpu_percent(None))
            self.devices.show_level(snap.input_level_db)
            return
        level = self.devices.watch_level(may_open=self.state not in ACTIVE_STATES and self.isVisible())
        if level is not None:
            self.meters.show_level(level)

    def _update_warning(self) -> None:
        """The route shown before Start, and on speakers with no echo guard the suggestion to cancel the echo."""
        self.preset_label.setText(f"Preset: {self.settings_panel.preset.currentText()}")
        mic, device = self.input_combo.currentText(), self.input_combo.currentData()
        self.banner.show_route(self.settings_panel, self.devices.output(), mic, device, self.output_device())

    # ----- devices
    def show_warning(self, text: str) -> None:
        """The session goes on, but the user should know (shown in the window; the engine has logged it)."""
        self.message.setText(text)
        self.message.setStyleSheet("color: #8a5300;")

    def show_error(self, text: str) -> None:
        """Errors are shown in the window (and logged), never only on a console."""
        log.warning("%s", text)
        self.message.setText(text)
        self.message.setStyleSheet("color: #b00020;")

    def _check_hotplug(self) -> None:
        """Devices plugged in or out while idle show up in the pickers (PortAudio can only re-scan with no stream
        open: the level monitor is closed for it)."""
        if self.state in ACTIVE_STATES or self.controller.testing_speaker or self.replay is not None:
            return  # a re-scan would pull the device from under an open stream
        if self.idle_level.value() > HEARING_DB:
            return  # someone is checking the microphone: the re-scan (which closes it) can wait
        if self.devices.changed():
            log.info("audio devices changed; refreshing the pickers")
            self.devices.stop_level()  # it opens the chosen microphone again on the next meter tick
            self.refresh_devices(asked=False)

    def refresh_devices(self, asked: bool = True) -> None:
        """Fill the device pickers, keeping the remembered choice when that device is still there.

        Asked for (at start, by the button), what is wrong replaces the message shown, and nothing wrong clears it.
        On a hot-plug, only a message the pickers put there is replaced or cleared: the error that ended a session
        (a headset unplugged) stays the one to read."""
        errors = " ".join(self.devices.fill())
        shown = self.message.text()
        if asked or not shown or shown == self._devices_said:
            if errors:
                self.show_error(errors)
            else:
                self.message.clear()
            self._devices_said = errors
        elif errors:
            log.warning("%s", errors)
        self._update_warning()

    def _restore_settings(self) -> None:
        geometry = app_settings().value(KEY_GEOMETRY)
        restored = isinstance(geometry, QByteArray) and not geometry.isEmpty() and self.restoreGeometry(geometry)
        if not restored or self.width() < MIN_SIZE[0] or self.height() < MIN_SIZE[1]:
            self.resize(*DEFAULT_SIZE)
        state = app_settings().value(KEY_WINDOW_STATE)
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restoreState(state)

    def show_models(self) -> ModelsDialog:
        """The Models page (one per window; shown again if open)."""
        if self.models_dialog is None:
            panel = self.settings_panel
            self.models_dialog = ModelsDialog(
                ModelStore(), panel.current_models, panel.use_model, panel.use_bundled, parent=self
            )
        self.models_dialog.refresh()
        self.models_dialog.show()
        self.models_dialog.raise_()
        return self.models_dialog

    def closeEvent(self, event: QCloseEvent) -> None:
        self._meter_timer.stop()
        self._hotplug_timer.stop()
        self.devices.stop_level()
        self.stop_replay()
        self.practice.shutdown()
        self.controller.shutdown()
        if self.models_dialog is not None:
            self.models_dialog.cancel()
        if self.remember_geometry:
            settings = app_settings()
            settings.setValue(KEY_GEOMETRY, self.saveGeometry())
            settings.setValue(KEY_WINDOW_STATE, self.saveState())
            settings.sync()
        super().closeEvent(event)
        self._collector.stop()
