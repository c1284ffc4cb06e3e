"""The window's audio devices: the microphone and speaker pickers (the choice remembered), the microphone's level
while no session runs, and the buttons to test the speaker and look for devices again."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtWidgets import QComboBox, QGridLayout, QGroupBox, QLabel, QProgressBar, QPushButton

from app.settings import app_settings
from app.widgets.meters_panel import level_bar_value
from engine.audio.device_check import LevelMonitor
from engine.audio.device_menu import MenuDevice, menu_devices
from engine.audio.devices import AudioDeviceError, Direction, rescan

log = logging.getLogger(__name__)

KEY_INPUT_DEVICE = "audio/input_device"
KEY_OUTPUT_DEVICE = "audio/output_device"
MIC_RETRY_S = 4.0
SILENT_LEVEL = -60


class DeviceBox(QGroupBox):
    """``fill()`` lists the devices; ``watch_level()`` at each meter tick while idle shows the microphone's level.

    ``on_error(text, always)``: a microphone went away (``always``), or cannot be opened: said once, and then not
    over a message already shown (the error that ended a session is the one to read)."""

    def __init__(self, on_error: Callable[[str, bool], None]) -> None:
        super().__init__("Audio devices")
        self._on_error = on_error
        self.input_combo = QComboBox()
        self.input_combo.setAccessibleName("Microphone")
        self.output_combo = QComboBox()
        self.output_combo.setAccessibleName("Speaker")
        self.refresh_button = QPushButton("Refresh devices")
        self.test_speaker_button = QPushButton("Test speaker")
        self.test_speaker_button.setToolTip("Speak one sentence on the chosen speaker")
        for button in (self.refresh_button, self.test_speaker_button):
            button.setAccessibleName(button.text())
        self.idle_level = QProgressBar()
        self.idle_level.setRange(SILENT_LEVEL, 0)
        self.idle_level.setFormat("%v dBFS")
        self.idle_level.setValue(SILENT_LEVEL)
        self.idle_level.setAccessibleName("Microphone level")
        self.idle_level.setToolTip("The microphone's level: it should move when you speak")
        grid = QGridLayout(self)
        grid.addWidget(QLabel("Microphone"), 0, 0)
        grid.addWidget(self.input_combo, 0, 1)
        grid.addWidget(self.idle_level, 0, 2)
        grid.addWidget(QLabel("Speaker"), 1, 0)
        grid.addWidget(self.output_combo, 1, 1)
        grid.addWidget(self.test_speaker_button, 1, 2)
        grid.addWidget(self.refresh_button, 1, 3)
        grid.setColumnStretch(1, 1)
        self.outputs: dict[str, MenuDevice] = {}  # the output picker's devices by value (speakers or headphones)
        self.level_monitor: LevelMonitor | None = None
        self._mic_retry_at: float | None = None  # a microphone that would not open is tried again from then
        self.input_combo.currentIndexChanged.connect(lambda _i: self._remember("input"))
        self.output_combo.currentIndexChanged.connect(lambda _i: self._remember("output"))

    def combo(self, direction: Direction) -> QComboBox:
        return self.input_combo if direction == "input" else self.output_combo

    def output(self) -> MenuDevice | None:
        """The chosen output, as the menu describes it (speakers or headphones)."""
        return self.outputs.get(str(self.output_combo.currentData()))

    def fill(self) -> list[str]:
        """Fill the pickers, keeping the remembered choice when that device is still there; what went wrong."""
        self._mic_retry_at = None  # the microphone is tried again at once
        settings = app_settings()
        errors = []
        for direction in ("input", "output"):
            combo = self.combo(direction)
            combo.blockSignals(True)
            combo.clear()
            try:
                devices = menu_devices(direction)
                if not devices:
                    errors.append(f"No audio {direction} device found.")
            except AudioDeviceError as exc:
                devices = []
                errors.append(str(exc))
            for device in devices:
                combo.addItem(device.label, device.value)
            if direction == "output":
                self.outputs = {d.value: d for d in devices}
            wanted = settings.value(_key(direction), "", type=str)
            default = next((d.value for d in devices if d.is_default), None)
            index = combo.findData(wanted) if wanted else -1
            if index < 0 and default is not None:
                index = combo.findData(default)
            combo.setCurrentIndex(max(index, 0) if combo.count() else -1)
            combo.blockSignals(False)
        return list(dict.fromkeys(errors))

    def changed(self) -> bool:
        """The devices plugged in differ from the pickers' (PortAudio re-scans only with no stream open: the level
        monitor is closed for it)."""
        self.stop_level(reset=False)
        try:
            rescan()
            now = {(d, x.value) for d in ("input", "output") for x in menu_devices(d)}
        except AudioDeviceError:
            return False
        shown = set()
        for direction in ("input", "output"):
            combo = self.combo(direction)
            shown |= {(direction, str(combo.itemData(i))) for i in range(combo.count())}
        return now != shown

    def watch_level(self, may_open: bool) -> float | None:
        """While idle: the microphone's level (opened now if it is not, and ``may_open``), None without one.

        A microphone that cannot be opened is tried again every ``MIC_RETRY_S`` (not at every meter tick)."""
        if self.level_monitor is None and may_open:
            self._open_level()
        monitor = self.level_monitor
        if monitor is None:
            self.idle_level.setValue(SILENT_LEVEL)  # not the level a session that ended last showed
            return None
        try:
            level = monitor.level()
        except AudioDeviceError as exc:  # unplugged while idle
            self.stop_level()
            self._on_error(f"{exc} Connect it again and press Refresh devices.", True)
            return None
        self.show_level(level)
        return level

    def show_level(self, level_db: float) -> None:
        self.idle_level.setValue(level_bar_value(level_db))

    def stop_level(self, reset: bool = True) -> None:
        monitor, self.level_monitor = self.level_monitor, None
        if monitor is not None:
            monitor.stop()
        if reset:
            self.idle_level.setValue(SILENT_LEVEL)

    def _open_level(self) -> None:
        device = self.input_combo.currentData()
        if device is None or (self._mic_retry_at is not None and time.monotonic() < self._mic_retry_at):
            return
        monitor = LevelMonitor(device)
        try:
            monitor.start()
        except AudioDeviceError as exc:
            first = self._mic_retry_at is None
            self._mic_retry_at = time.monotonic() + MIC_RETRY_S
            if first:
                self._on_error(f"The microphone cannot be opened: {exc}", False)
            return
        self._mic_retry_at = None
        self.level_monitor = monitor

    def _remember(self, direction: Direction) -> None:
        if direction == "input":
            self.stop_level()  # the next meter tick listens to the new choice
            self._mic_retry_at = None
        name = self.combo(direction).currentData()
        if name:
            app_settings().setValue(_key(direction), name)


def _key(direction: Direction) -> str:
    return KEY_INPUT_DEVICE if direction == "input" else KEY_OUTPUT_DEVICE
