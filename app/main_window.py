"""The main window. Widgets show state and forward user intent; engine work lives in engine/ behind adapters."""

from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path

import psutil
from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QIcon, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gui_gc import MainThreadCollector
from app.practice_mode import SCORING, PracticeMode
from app.session_controller import PREPARING, SessionController, sessions_dir
from app.settings import app_settings
from app.widgets.meters_panel import MetersPanel, level_bar_value
from app.widgets.models_dialog import ModelsDialog
from app.widgets.sessions_dialog import SessionsDialog
from app.widgets.settings_panel import SettingsPanel
from app.widgets.transcript_view import DEFAULT_POINT_SIZE, TranscriptView
from engine import __version__, paths
from engine.audio.device_check import LevelMonitor
from engine.audio.device_menu import MenuDevice, menu_devices
from engine.audio.devices import AudioDeviceError, Direction, rescan
from engine.audio.io import AudioFileError
from engine.audio.replay import Replay, output_rate
from engine.audio.sound_server import restore_leftover_duck
from engine.metrics.wer import wer
from engine.modelstore.store import ModelStore
from engine.pipeline.captions import read_transcript
from engine.pipeline.history import LEAD_IN_S, TOGETHER, replay_blocks
from engine.pipeline.recorder import REPORT, TRANSCRIPT
from engine.pipeline.records import State, WordRecord
from engine.pipeline.sources import plan_source

log = logging.getLogger(__name__)

KEY_GEOMETRY = "window/geometry"
KEY_INPUT_DEVICE = "audio/input_device"
KEY_OUTPUT_DEVICE = "audio/output_device"
EXPORT_SESSION_TIP = "Copy the last session's folder: audio, captions, transcript, metrics (Ctrl+E)"
KEY_WINDOW_STATE = "window/state"  # the settings panel shown or folded away
KEY_TRANSCRIPT_PT = "view/transcript_point_size"
DEFAULT_SIZE = (1100, 760)
MIN_SIZE = (400, 300)  # a remembered geometry smaller than this (e.g. from a window never shown) is ignored
METER_INTERVAL_MS = 100  # 10 Hz
HOTPLUG_INTERVAL_MS = 4000
MIC_RETRY_S = 4.0
HEARING_DB = -45  # an idle microphone level above this is someone speaking into it
HEADPHONES = (
    "Use headphones. With speakers the voice reaches the microphone and is recognized and spoken again: on "
    "speakers, use echo cancellation (Echo guard “cancel”), which removes the voice's own sound from the microphone."
)
ON_SPEAKERS = (
    "{output} plays on speakers: the voice will reach the microphone and be spoken again. Use echo cancellation "
    "(Echo guard “cancel”), which removes the voice's own sound from the microphone, or headphones."
)
LOOP_COLOUR, ROUTE_COLOUR = "#b36b00", "#555555"
ACTIVE_STATES = (PREPARING, State.RUNNING.value, State.STOPPING.value, SCORING)
PRACTISE_ROUTE = (
    "Practising: the recording plays on {output} (wear headphones: without them it reaches the "
    "microphone and is scored as you); you are heard on {mic}; liveshadow's voice stays silent."
)
PRACTISE_HEARD_ROUTE = (
    "Practising on this computer's sound: play a talk or a video in another application and shadow it (wear "
    "headphones); you are heard on {mic}; Stop ends the practice and scores it."
)


def _record(event: dict) -> WordRecord:
    """A word of a recorded ``transcript.jsonl`` as the transcript view takes it."""
    return WordRecord(int(event["sentence"]), int(event["index"]), str(event["text"]), float(event["source_start_s"]),
                      float(event["source_end_s"]), float(event.get("commit_s") or 0.0))  # fmt: skip


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
        self._outputs: dict[str, MenuDevice] = {}  # the output picker's devices by value (speakers or headphones)

        # the top bar: mode and source, then the devices with their checks
        self.settings_panel = SettingsPanel(app_settings())
        self.input_combo = QComboBox()
        self.input_combo.setAccessibleName("Microphone")
        self.output_combo = QComboBox()
        self.output_combo.setAccessibleName("Speaker")
        self.refresh_button = QPushButton("Refresh devices")
        self.refresh_button.clicked.connect(self.refresh_devices)
        self.test_speaker_button = QPushButton("Test speaker")
        self.test_speaker_button.setToolTip("Speak one sentence on the chosen speaker")
        self.test_speaker_button.clicked.connect(self.test_speaker)
        for button in (self.refresh_button, self.test_speaker_button):
            button.setAccessibleName(button.text())
        self.idle_level = QProgressBar()
        self.idle_level.setRange(-60, 0)
        self.idle_level.setFormat("%v dBFS")
        self.idle_level.setValue(-60)
        self.idle_level.setAccessibleName("Microphone level")
        self.idle_level.setToolTip("The microphone's level: it should move when you speak")
        devices_box = QGroupBox("Audio devices")
        devices = QGridLayout(devices_box)
        devices.addWidget(QLabel("Microphone"), 0, 0)
        devices.addWidget(self.input_combo, 0, 1)
        devices.addWidget(self.idle_level, 0, 2)
        devices.addWidget(QLabel("Speaker"), 1, 0)
        devices.addWidget(self.output_combo, 1, 1)
        devices.addWidget(self.test_speaker_button, 1, 2)
        devices.addWidget(self.refresh_button, 1, 3)
        devices.setColumnStretch(1, 1)
        source_box = QGroupBox("What to shadow")
        QVBoxLayout(source_box).addWidget(self.settings_panel.source_box)

        # the settings under their presets: a side panel that folds away
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.settings_panel)
        self.settings_dock = QDockWidget("Settings", self)
        self.settings_dock.setObjectName("settings")
        self.settings_dock.setWidget(scroll)
        self.settings_dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetClosable | QDockWidget.DockWidgetFeature.DockWidgetMovable
        )
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.settings_dock)
        self.settings_dock.hide()

        self.start_button = QPushButton("Start")
        self.start_button.setToolTip("Start shadowing (Space or Ctrl+Enter)")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop listening; what was already heard is still spoken (Space or Ctrl+Enter)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop at once; pending words are dropped (Esc)")
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip(EXPORT_SESSION_TIP)
        self.start_button.clicked.connect(self.start_session)
        self.stop_button.clicked.connect(self.stop_session)
        self.cancel_button.clicked.connect(self.cancel_session)
        self.export_button.clicked.connect(self.export_session)
        self.models_button = QPushButton("Models…")
        self.models_button.setToolTip("The installed voices and recognizer models: add, use, remove")
        self.models_button.clicked.connect(self.show_models)
        self.models_dialog: ModelsDialog | None = None
        self.sessions_button = QPushButton("Sessions…")
        self.sessions_button.setToolTip("Past sessions: open one again, replay its speaker and voice")
        self.sessions_button.clicked.connect(self.show_sessions)
        self.sessions_dialog: SessionsDialog | None = None
        self.replay: Replay | None = None
        self.replay_mode = TOGETHER  # a word clicked in a finished session's transcript replays from it this way
        self.shown_folder: Path | None = None  # the finished session whose transcript is shown
        self.settings_button = self.settings_dock.toggleViewAction()
        self.settings_button.setText("Settings")
        self.settings_button.setToolTip("Show or hide the settings: presets, recognizer, voice, chunk sizes")
        settings_tool = QToolButton()
        settings_tool.setDefaultAction(self.settings_button)
        settings_tool.setAccessibleName("Settings")
        self.preset_label = QLabel()
        self.preset_label.setAccessibleName("Preset")
        buttons = QHBoxLayout()
        for button in (self.start_button, self.stop_button, self.cancel_button, self.export_button,
                       self.sessions_button, self.models_button):  # fmt: skip
            button.setAccessibleName(button.text().rstrip("…"))
            buttons.addWidget(button)
        buttons.addWidget(settings_tool)
        buttons.addWidget(self.preset_label)
        buttons.addStretch(1)
        self.status_label = QLabel("Ready")
        self.status_label.setAccessibleName("Session state")
        buttons.addWidget(self.status_label)

        self.headphones = QLabel(HEADPHONES)
        self.headphones.setWordWrap(True)
        self.headphones.setStyleSheet(f"color: {LOOP_COLOUR};")
        self.headphones.setAccessibleName("Headphones or echo cancellation")
        self.use_cancel_button = QPushButton("Use echo cancellation")
        self.use_cancel_button.setAccessibleName("Use echo cancellation")
        self.use_cancel_button.setToolTip("Set Echo guard to “cancel”: the speaker is heard while the voice plays")
        self.use_cancel_button.clicked.connect(lambda: self.settings_panel.echo_guard.setCurrentText("cancel"))
        suggestion = QHBoxLayout()
        suggestion.addWidget(self.headphones, 1)
        suggestion.addWidget(self.use_cancel_button)
        self.route_label = QLabel()
        self.route_label.setWordWrap(True)
        self.route_label.setAccessibleName("Route")
        self.route_label.setToolTip("What is heard, and how the voice's own sound is kept out of it")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setAccessibleName("Message")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.transcript = TranscriptView()
        self.transcript.set_point_size(int(app_settings().value(KEY_TRANSCRIPT_PT, DEFAULT_POINT_SIZE, type=int)))
        self.transcript.point_size_changed.connect(lambda size: app_settings().setValue(KEY_TRANSCRIPT_PT, size))
        self.meters = MetersPanel()
        self.practice = PracticeMode(self, parent=self)

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
        layout.addLayout(buttons)
        layout.addWidget(self.route_label)
        layout.addLayout(suggestion)
        layout.addWidget(self.message)
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.statusBar().showMessage(f"liveshadow {__version__}")

        for keys, slot in (
            (("Space",), self._space),
            (("Ctrl+Return", "Ctrl+Enter"), self.toggle_session),
            (("Esc",), self.escape),
            (("Ctrl+E",), self.export_session),
        ):  # fmt: skip
            for key in keys:
                QShortcut(QKeySequence(key), self).activated.connect(slot)

        self.controller.state_changed.connect(self._on_state)
        self.controller.tentative.connect(self.transcript.set_tentative)
        self.controller.committed.connect(self._on_committed)
        self.controller.spoken.connect(self._on_spoken)
        self.controller.error.connect(self.show_error)
        self.controller.progress.connect(self.show_progress)
        self.controller.warning.connect(self.show_warning)
        self.settings_panel.changed.connect(self._update_warning)
        self.settings_panel.changed.connect(self._show_mode)
        self.transcript.word_clicked.connect(lambda start: self.replay_session(None, None, start - LEAD_IN_S))
        self._replay_timer = QTimer(self)
        self._replay_timer.timeout.connect(self._check_replay)

        self.level_monitor: LevelMonitor | None = None
        self._mic_retry_at: float | None = None  # a microphone that would not open is tried again from then
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
        self.input_combo.currentIndexChanged.connect(lambda _i: self._remember_device("input"))
        self.output_combo.currentIndexChanged.connect(lambda _i: self._remember_device("output"))
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
        self.export_button.setToolTip("Export the last attempt as a Praat TextGrid, an ELAN .eaf and a CSV (Ctrl+E)"
                                      if practising else EXPORT_SESSION_TIP)  # fmt: skip

    def stop_session(self) -> None:
        (self.practice if self.practice.busy else self.controller).stop()

    def cancel_session(self) -> None:
        (self.practice if self.practice.busy else self.controller).cancel()

    def start_session(self) -> None:
        self.message.clear()
        if self.settings_panel.practising():
            self._stop_level_monitor()  # the practice opens the microphone itself
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
        self.shown_folder = None
        self.meters.reset()
        self._stop_level_monitor()  # the session opens the microphone itself
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

    def _start_level_monitor(self) -> None:
        """While idle the microphone's level is shown, so a dead or wrong microphone shows before a session.

        A microphone that cannot be opened is tried again every ``MIC_RETRY_S`` (not at every meter tick), and said
        once: not over a message already shown (the error that ended a session is the one to read)."""
        device = self.input_combo.currentData()
        if self.level_monitor is not None or device is None or self.state in ACTIVE_STATES or not self.isVisible():
            return
        if self._mic_retry_at is not None and time.monotonic() < self._mic_retry_at:
            return
        monitor = LevelMonitor(device)
        try:
            monitor.start()
        except AudioDeviceError as exc:
            first = self._mic_retry_at is None
            self._mic_retry_at = time.monotonic() + MIC_RETRY_S
            if first and not self.message.text():
                self.show_error(f"The microphone cannot be opened: {exc}")
            elif first:
                log.warning("the microphone cannot be opened: %s", exc)
            return
        self._mic_retry_at = None
        self.level_monitor = monitor

    def _stop_level_monitor(self, reset: bool = True) -> None:
        monitor, self.level_monitor = self.level_monitor, None
        if monitor is not None:
            monitor.stop()
        if reset:
            self.idle_level.setValue(-60)

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
        self.status_label.setText({
            PREPARING: "Preparing…", State.IDLE.value: "Ready",
            State.RUNNING.value: "Practising" if self.practice.busy else "Shadowing", SCORING: "Scoring your attempt…",
            State.STOPPING.value: "Finishing what was heard…", State.DONE.value: "Done",
            State.CANCELLED.value: "Cancelled", State.FAILED.value: "Stopped by an error",
        }.get(state, state))  # fmt: skip
        self.test_speaker_button.setEnabled(not active)
        if active:
            self._stop_level_monitor()
        if state == State.DONE.value and self.controller.session_folder is not None and not self.practice.busy:
            self.statusBar().showMessage(f"Session recorded in {self.controller.session_folder}", 10000)
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
            self.shown_folder = self.controller.session_folder
            self.transcript.set_clickable(True)

    # ----- past sessions
    def show_sessions(self) -> SessionsDialog:
        if self.sessions_dialog is None:
            self.sessions_dialog = SessionsDialog(sessions_dir(), parent=self)
            self.sessions_dialog.opened.connect(self.open_session)
            self.sessions_dialog.replay_requested.connect(lambda folder, mode: self.replay_session(folder, mode))
        self.sessions_dialog.refresh()
        self.sessions_dialog.show()
        self.sessions_dialog.raise_()
        return self.sessions_dialog

    def open_session(self, folder: Path) -> bool:
        """Show a past session's transcript (words clickable to replay from them) and summary."""
        if self.state in ACTIVE_STATES:
            self.show_error("A session is running; stop it before opening another.")
            return False
        try:
            committed, spoken = read_transcript(folder / TRANSCRIPT)
            report = json.loads((folder / REPORT).read_text(encoding="utf-8")) if (folder / REPORT).is_file() else {}
        except (OSError, ValueError) as exc:
            self.show_error(f"Cannot open the session in {folder}: {exc}")
            return False
        self.stop_replay()
        self.transcript.clear_words()
        self.transcript.add_committed([_record(e) for e in committed])
        self.transcript.mark_spoken([_record(e) for e in spoken])
        self.transcript.set_clickable(True)
        self.meters.reset()
        self.meters.show_summary(report)
        self.shown_folder = folder
        self.statusBar().showMessage(f"Opened {folder.name}: click a word to replay from it", 10000)
        return True

    def replay_session(
        self, folder: Path | None, mode: str | None, start_s: float = 0.0, recordings: tuple[Path, Path] | None = None
    ) -> bool:
        """Play a finished session's input and voice from ``start_s`` (the shown session when ``folder`` is None);
        ``recordings``: two other files on one clock (a practice's source and attempt)."""
        folder = folder or self.shown_folder
        if folder is None or self.state in ACTIVE_STATES:
            return False
        mode = mode or self.replay_mode
        self.replay_mode = mode
        self.stop_replay()
        device = self.output_combo.currentData()
        try:
            rate = output_rate(device)
            replay = Replay(replay_blocks(folder, mode, rate, max(start_s, 0.0), recordings=recordings), rate, device)
            replay.start()
        except (AudioDeviceError, AudioFileError, ValueError) as exc:
            self.show_error(f"Cannot replay: {exc}")
            return False
        self.replay = replay
        self._replay_timer.start(200)
        self.statusBar().showMessage(f"Replaying {folder.name} {mode} from {max(start_s, 0.0):.1f} s (Esc stops)")
        return True

    def stop_replay(self) -> None:
        replay, self.replay = self.replay, None
        self._replay_timer.stop()
        if replay is not None:
            replay.stop()

    def _check_replay(self) -> None:
        replay = self.replay
        if replay is not None and replay.finished:
            replay.wait(0)
            self.stop_replay()
            if replay.error:
                self.show_error(f"The replay stopped: {replay.error}")
            self.statusBar().showMessage("Replay finished", 4000)

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
            self.idle_level.setValue(level_bar_value(snap.input_level_db))
            return
        self._start_level_monitor()
        monitor = self.level_monitor
        if monitor is not None:
            try:
                level = monitor.level()
            except AudioDeviceError as exc:  # unplugged while idle
                self._stop_level_monitor()
                self.show_error(f"{exc} Connect it again and press Refresh devices.")
                return
            self.idle_level.setValue(level_bar_value(level))
            self.meters.show_level(level)

    def _update_warning(self) -> None:
        """The route shown before Start (what is heard, how the voice is kept out of it; a loop in orange), and on
        speakers with no echo guard, the suggestion to cancel the echo."""
        self.preset_label.setText(f"Preset: {self.settings_panel.preset.currentText()}")
        panel = self.settings_panel
        live = panel.live_source()
        output = self._outputs.get(str(self.output_combo.currentData()))
        on_speakers = output is not None and output.speakers
        headphones = output is not None and output.speakers is False
        suggest = live == "mic" and panel.echo_guard.currentText() == "off" and not headphones
        self.headphones.setText(ON_SPEAKERS.format(output=output.label) if on_speakers else HEADPHONES)
        practising = panel.practising()
        self.headphones.setVisible(suggest and not practising)
        self.use_cancel_button.setVisible(suggest and not practising)
        if practising:
            output_name = output.label if output is not None else "the speaker"
            route = PRACTISE_HEARD_ROUTE if live == "system" else PRACTISE_ROUTE
            self.route_label.setText(route.format(output=output_name, mic=self.input_combo.currentText()))
            self.route_label.setStyleSheet(f"color: {LOOP_COLOUR if on_speakers else ROUTE_COLOUR};")
            return
        if live is None:
            self.route_label.setText("Hearing a recording: the voice is not heard again.")
            self.route_label.setStyleSheet(f"color: {ROUTE_COLOUR};")
            return
        try:
            config = panel.config(self.input_combo.currentData(), self.output_combo.currentData())
            plan = plan_source(live, config)
        except (ValueError, AudioDeviceError) as exc:
            self.route_label.setText(f"Cannot hear {panel.source.currentText().lower()}: {exc}")
            self.route_label.setStyleSheet(f"color: {LOOP_COLOUR};")
            return
        heard = self.input_combo.currentText() if live == "mic" else plan.label
        self.route_label.setText(f"Hearing {heard}; {plan.route}.")
        self.route_label.setStyleSheet(f"color: {LOOP_COLOUR if plan.loops else ROUTE_COLOUR};")

    # ----- devices
    def _combo(self, direction: Direction) -> QComboBox:
        return self.input_combo if direction == "input" else self.output_combo

    def _key(self, direction: Direction) -> str:
        return KEY_INPUT_DEVICE if direction == "input" else KEY_OUTPUT_DEVICE

    def show_warning(self, text: str) -> None:
        """The session goes on, but the user should know (shown in the window; the engine has logged it)."""
        self.message.setText(text)
        self.message.setStyleSheet("color: #8a5300;")

    def show_error(self, text: str) -> None:
        """Errors are shown in the window (and logged), never only on a console."""
        log.warning("%s", text)
        self.message.setText(text)
        self.message.setStyleSheet("color: #b00020;")

    def _device_names(self) -> set[tuple[str, str]]:
        names = set()
        for direction in ("input", "output"):
            combo = self._combo(direction)
            names |= {(direction, str(combo.itemData(i))) for i in range(combo.count())}
        return names

    def _check_hotplug(self) -> None:
        """Devices plugged in or out while idle show up in the pickers (PortAudio can only re-scan with no stream
        open: the level monitor is closed for it)."""
        if self.state in ACTIVE_STATES or self.controller.testing_speaker or self.replay is not None:
            return  # a re-scan would pull the device from under an open stream
        if self.idle_level.value() > HEARING_DB:
            return  # someone is checking the microphone: the re-scan (which closes it) can wait
        self._stop_level_monitor(reset=False)
        try:
            rescan()
            now = {(d, x.value) for d in ("input", "output") for x in menu_devices(d)}  # type: ignore[arg-type]
        except AudioDeviceError:
            return
        if now != self._device_names():
            log.info("audio devices changed; refreshing the pickers")
            self._stop_level_monitor()  # it opens the chosen microphone again on the next meter tick
            self.refresh_devices()

    def refresh_devices(self) -> None:
        """Fill the device pickers, keeping the remembered choice when that device is still there."""
        self._mic_retry_at = None  # the microphone is tried again at once
        settings = app_settings()
        errors = []
        for direction in ("input", "output"):
            combo = self._combo(direction)
            combo.blockSignals(True)
            combo.clear()
            try:
                devices = menu_devices(direction)  # type: ignore[arg-type]
                if not devices:
                    errors.append(f"No audio {direction} device found.")
            except AudioDeviceError as exc:
                devices = []
                errors.append(str(exc))
            for device in devices:
                combo.addItem(device.label, device.value)
            if direction == "output":
                self._outputs = {d.value: d for d in devices}
            wanted = settings.value(self._key(direction), "", type=str)
            default = next((d.value for d in devices if d.is_default), None)
            index = combo.findData(wanted) if wanted else -1
            if index < 0 and default is not None:
                index = combo.findData(default)
            combo.setCurrentIndex(max(index, 0) if combo.count() else -1)
            combo.blockSignals(False)
        if errors:
            self.show_error(" ".join(dict.fromkeys(errors)))
        else:
            self.message.clear()
        self._update_warning()

    def _remember_device(self, direction: Direction) -> None:
        if direction == "input":
            self._stop_level_monitor()  # the next meter tick listens to the new choice
            self._mic_retry_at = None
        name = self._combo(direction).currentData()
        if name:
            app_settings().setValue(self._key(direction), name)

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

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        self._meter_timer.stop()
        self._hotplug_timer.stop()
        self._stop_level_monitor()
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
