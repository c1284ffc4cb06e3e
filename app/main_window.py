"""The main window. Widgets show state and forward user intent; engine work lives in engine/ behind adapters."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import psutil
from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QIcon
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.session_controller import SessionController
from app.settings import app_settings
from app.widgets.meters_panel import MetersPanel
from app.widgets.models_dialog import ModelsDialog
from app.widgets.settings_panel import SOURCE_MIC, SettingsPanel
from app.widgets.transcript_view import TranscriptView
from engine import __version__, paths
from engine.audio.devices import AudioDeviceError, Direction, list_devices, rescan
from engine.modelstore.store import ModelStore
from engine.pipeline.session import State, WordRecord

log = logging.getLogger(__name__)

KEY_GEOMETRY = "window/geometry"
KEY_INPUT_DEVICE = "audio/input_device"
KEY_OUTPUT_DEVICE = "audio/output_device"
DEFAULT_SIZE = (1100, 760)
MIN_SIZE = (400, 300)  # a remembered geometry smaller than this (e.g. from a window never shown) is ignored
METER_INTERVAL_MS = 100  # 10 Hz
HOTPLUG_INTERVAL_MS = 4000
HEADPHONES = (
    "Use headphones. With speakers the voice reaches the microphone and is recognized and spoken again. "
    "If you must use speakers, set Echo guard to “gate”: the microphone is ignored while the voice plays."
)
ACTIVE_STATES = ("loading", State.RUNNING.value, State.STOPPING.value)


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.remember_geometry = True  # off for windows that are only rendered (screenshots)
        self.setWindowTitle("liveshadow")
        icon = paths.assets_dir() / "liveshadow.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))
        self.controller = SessionController(self)
        self.state = State.IDLE.value

        self.input_combo = QComboBox()
        self.output_combo = QComboBox()
        self.refresh_button = QPushButton("Refresh devices")
        self.refresh_button.clicked.connect(self.refresh_devices)
        devices_box = QGroupBox("Audio devices")
        form = QFormLayout(devices_box)
        form.addRow("Microphone", self.input_combo)
        form.addRow("Speaker", self.output_combo)
        form.addRow("", self.refresh_button)

        self.settings_panel = SettingsPanel(app_settings())
        settings_box = QGroupBox("Session")
        QVBoxLayout(settings_box).addWidget(self.settings_panel)

        self.start_button = QPushButton("Start shadowing")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop listening; what was already heard is still spoken")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop at once; pending words are dropped")
        self.export_button = QPushButton("Export session…")
        self.export_button.setToolTip("Copy the last session's recording folder (audio, transcript, metrics)")
        self.start_button.clicked.connect(self.start_session)
        self.stop_button.clicked.connect(self.controller.stop)
        self.cancel_button.clicked.connect(self.controller.cancel)
        self.export_button.clicked.connect(self.export_session)
        self.models_button = QPushButton("Models…")
        self.models_button.setToolTip("The installed voices and recognizer models: add, use, remove")
        self.models_button.clicked.connect(self.show_models)
        self.models_dialog: ModelsDialog | None = None
        buttons = QHBoxLayout()
        for button in (self.start_button, self.stop_button, self.cancel_button, self.export_button, self.models_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.status_label = QLabel("Ready")
        buttons.addWidget(self.status_label)

        self.headphones = QLabel(HEADPHONES)
        self.headphones.setWordWrap(True)
        self.headphones.setStyleSheet("color: #8a5a00;")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.transcript = TranscriptView()
        self.meters = MetersPanel()

        top = QHBoxLayout()
        top.addWidget(devices_box, 1)
        top.addWidget(settings_box, 2)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.transcript)
        splitter.addWidget(self.meters)
        splitter.setSizes([260, 320])
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(top)
        layout.addLayout(buttons)
        layout.addWidget(self.headphones)
        layout.addWidget(self.message)
        layout.addWidget(splitter, 1)
        self.setCentralWidget(central)
        self.statusBar().showMessage(f"liveshadow {__version__}")

        self.controller.state_changed.connect(self._on_state)
        self.controller.tentative.connect(self.transcript.set_tentative)
        self.controller.committed.connect(self._on_committed)
        self.controller.spoken.connect(self._on_spoken)
        self.controller.error.connect(self.show_error)
        self.settings_panel.changed.connect(self._update_warning)

        self._meter_timer = QTimer(self)
        self._meter_timer.timeout.connect(self._update_meters)
        self._meter_timer.start(METER_INTERVAL_MS)
        self._hotplug_timer = QTimer(self)
        self._hotplug_timer.timeout.connect(self._check_hotplug)
        self._hotplug_timer.start(HOTPLUG_INTERVAL_MS)
        psutil.cpu_percent(None)  # the first call only starts the measurement

        self._restore_settings()
        self.refresh_devices()
        self.input_combo.currentIndexChanged.connect(lambda _i: self._remember_device("input"))
        self.output_combo.currentIndexChanged.connect(lambda _i: self._remember_device("output"))
        self._on_state(State.IDLE.value)
        self._update_warning()

    # ----- session
    def start_session(self) -> None:
        self.message.clear()
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
        if source is None and self.input_combo.currentData() is None:
            self.show_error("Cannot start: no microphone found. Connect one and press Refresh devices.")
            return
        self.transcript.clear_words()
        self.meters.reset()
        self.controller.start(config, source)

    def export_session(self) -> None:
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

    def _on_state(self, state: str) -> None:
        self.state = state
        active = state in ACTIVE_STATES
        self.start_button.setEnabled(not active)
        self.stop_button.setEnabled(state == State.RUNNING.value)
        self.cancel_button.setEnabled(active and state != "loading")
        self.export_button.setEnabled(not active and self.controller.session_folder is not None)
        for widget in (self.settings_panel, self.input_combo, self.output_combo, self.refresh_button):
            widget.setEnabled(not active)
        self.status_label.setText({
            "loading": "Loading models…", State.IDLE.value: "Ready", State.RUNNING.value: "Shadowing",
            State.STOPPING.value: "Finishing what was heard…", State.DONE.value: "Done",
            State.CANCELLED.value: "Cancelled", State.FAILED.value: "Stopped by an error",
        }.get(state, state))  # fmt: skip
        if state == State.DONE.value and self.controller.session_folder is not None:
            self.statusBar().showMessage(f"Session recorded in {self.controller.session_folder}", 10000)

    def _on_committed(self, records: list[WordRecord]) -> None:
        self.transcript.add_committed(records)

    def _on_spoken(self, records: list[WordRecord]) -> None:
        self.transcript.mark_spoken(records)

    def _update_meters(self) -> None:
        snap = self.controller.snapshot()
        if snap is not None and self.state in ACTIVE_STATES:
            self.meters.show_snapshot(snap, psutil.cpu_percent(None))

    def _update_warning(self) -> None:
        mic = self.settings_panel.source.currentText() == SOURCE_MIC
        self.headphones.setVisible(mic and self.settings_panel.echo_guard.currentText() == "off")

    # ----- devices
    def _combo(self, direction: Direction) -> QComboBox:
        return self.input_combo if direction == "input" else self.output_combo

    def _key(self, direction: Direction) -> str:
        return KEY_INPUT_DEVICE if direction == "input" else KEY_OUTPUT_DEVICE

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
        """Devices plugged in or out while idle show up in the pickers (PortAudio can only re-scan when idle)."""
        if self.state in ACTIVE_STATES:
            return
        try:
            rescan()
            now = {(d, x.name) for d in ("input", "output") for x in list_devices(d)}  # type: ignore[arg-type]
        except AudioDeviceError:
            return
        if now != self._device_names():
            log.info("audio devices changed; refreshing the pickers")
            self.refresh_devices()

    def refresh_devices(self) -> None:
        """Fill the device pickers, keeping the remembered choice when that device is still there."""
        settings = app_settings()
        errors = []
        for direction in ("input", "output"):
            combo = self._combo(direction)
            combo.blockSignals(True)
            combo.clear()
            try:
                devices = list_devices(direction)
                if not devices:
                    errors.append(f"No audio {direction} device found.")
            except AudioDeviceError as exc:
                devices = []
                errors.append(str(exc))
            for device in devices:
                combo.addItem(device.label, device.name)
            wanted = settings.value(self._key(direction), "", type=str)
            default = next((d.name for d in devices if d.is_default_input or d.is_default_output), None)
            index = combo.findData(wanted) if wanted else -1
            if index < 0 and default is not None:
                index = combo.findData(default)
            combo.setCurrentIndex(max(index, 0) if combo.count() else -1)
            combo.blockSignals(False)
        if errors:
            self.show_error(" ".join(dict.fromkeys(errors)))
        else:
            self.message.clear()

    def _remember_device(self, direction: Direction) -> None:
        name = self._combo(direction).currentData()
        if name:
            app_settings().setValue(self._key(direction), name)

    def _restore_settings(self) -> None:
        geometry = app_settings().value(KEY_GEOMETRY)
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        if self.width() < MIN_SIZE[0] or self.height() < MIN_SIZE[1]:
            self.resize(*DEFAULT_SIZE)

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
        self.controller.shutdown()
        if self.models_dialog is not None:
            self.models_dialog.cancel()
        if self.remember_geometry:
            settings = app_settings()
            settings.setValue(KEY_GEOMETRY, self.saveGeometry())
            settings.sync()
        super().closeEvent(event)
