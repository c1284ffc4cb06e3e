"""The main window. Widgets show state and forward user intent; engine work lives in engine/ behind adapters."""

from __future__ import annotations

import logging

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QCloseEvent, QIcon
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QMainWindow,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.settings import app_settings
from engine import __version__, paths
from engine.audio.devices import AudioDeviceError, Direction, list_devices

log = logging.getLogger(__name__)

KEY_GEOMETRY = "window/geometry"
KEY_INPUT_DEVICE = "audio/input_device"
KEY_OUTPUT_DEVICE = "audio/output_device"
DEFAULT_SIZE = (640, 420)
MIN_SIZE = (400, 300)  # a remembered geometry smaller than this (e.g. from a window never shown) is ignored


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.remember_geometry = True  # off for windows that are only rendered (screenshots)
        self.setWindowTitle("liveshadow")
        icon = paths.assets_dir() / "liveshadow.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))

        self.input_combo = QComboBox()
        self.output_combo = QComboBox()
        self.refresh_button = QPushButton("Refresh devices")
        self.refresh_button.clicked.connect(self.refresh_devices)
        self.start_button = QPushButton("Start shadowing")
        self.start_button.setEnabled(False)
        self.start_button.setToolTip("The shadowing pipeline is not part of this build yet.")

        devices_box = QGroupBox("Audio devices")
        form = QFormLayout(devices_box)
        form.addRow("Microphone", self.input_combo)
        form.addRow("Speaker", self.output_combo)
        form.addRow("", self.refresh_button)

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addWidget(devices_box)
        layout.addWidget(self.start_button)
        layout.addWidget(self.message)
        layout.addStretch(1)
        self.setCentralWidget(central)
        self.statusBar().showMessage(f"liveshadow {__version__}")

        self._restore_settings()
        self.refresh_devices()
        self.input_combo.currentIndexChanged.connect(lambda _i: self._remember_device("input"))
        self.output_combo.currentIndexChanged.connect(lambda _i: self._remember_device("output"))

    def _combo(self, direction: Direction) -> QComboBox:
        return self.input_combo if direction == "input" else self.output_combo

    def _key(self, direction: Direction) -> str:
        return KEY_INPUT_DEVICE if direction == "input" else KEY_OUTPUT_DEVICE

    def show_error(self, text: str) -> None:
        """Errors are shown in the window (and logged), never only on a console."""
        log.warning("%s", text)
        self.message.setText(text)
        self.message.setStyleSheet("color: #b00020;")

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

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        if self.remember_geometry:
            settings = app_settings()
            settings.setValue(KEY_GEOMETRY, self.saveGeometry())
            settings.sync()
        super().closeEvent(event)
