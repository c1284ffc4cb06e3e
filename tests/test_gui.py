"""Qt offscreen: a window renders, the main window lists real devices and remembers its settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel, QMainWindow

from tests import virtual_audio as va

pytestmark = pytest.mark.gui


def test_minimal_main_window_renders_offscreen(qtbot, tmp_path: Path) -> None:
    window = QMainWindow()
    window.setCentralWidget(QLabel("liveshadow"))
    window.resize(320, 200)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    png = tmp_path / "window.png"
    assert window.grab().save(str(png), "PNG")
    assert png.stat().st_size > 0
    image = QImage(str(png))
    assert (image.width(), image.height()) == (320, 200)
    colours = {image.pixel(x, y) for x in range(0, 320, 8) for y in range(0, 200, 8)}
    assert len(colours) > 1, "the grabbed image is blank"


def test_main_window_lists_virtual_devices(qtbot, virtual_audio: va.VirtualAudio, artifacts_dir: Path) -> None:
    from app.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    assert window.input_combo.count() >= 1 and window.output_combo.count() >= 1
    assert window.message.text() == ""
    assert window.grab().save(str(artifacts_dir / "main_window.png"), "PNG")


def test_main_window_shows_missing_devices_in_the_window(qtbot, monkeypatch) -> None:
    from app import main_window
    from engine.audio.devices import AudioDeviceError

    def no_audio(direction=None):
        raise AudioDeviceError("the PortAudio library was not found")

    monkeypatch.setattr(main_window, "list_devices", no_audio)
    window = main_window.MainWindow()
    qtbot.addWidget(window)
    assert "PortAudio" in window.message.text()
    assert window.input_combo.count() == 0


def test_settings_persist_between_windows(qtbot, virtual_audio: va.VirtualAudio) -> None:
    from app.main_window import KEY_OUTPUT_DEVICE, MainWindow
    from app.settings import app_settings, settings_path

    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(701, 433)
    assert first.output_combo.count() >= 2  # PortAudio shows the server as "pulse" and "default"
    other = (first.output_combo.currentIndex() + 1) % first.output_combo.count()
    chosen = first.output_combo.itemData(other)
    first.output_combo.setCurrentIndex(other)
    first.settings_panel.phrase_chunk.setValue(17)
    first.close()
    assert settings_path().exists()
    assert app_settings().value(KEY_OUTPUT_DEVICE) == chosen

    second = MainWindow()
    qtbot.addWidget(second)
    assert second.output_combo.currentData() == chosen
    assert second.settings_panel.phrase_chunk.value() == 17
    assert second.settings_panel.config(None, None).phrase_chunk == 17
    assert (second.width(), second.height()) == (701, 433)


def test_gui_command_writes_a_screenshot(tmp_path: Path) -> None:
    png = tmp_path / "shot.png"
    result = subprocess.run(
        [sys.executable, "-m", "engine", "gui", "--screenshot", str(png)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert QImage(str(png)).width() > 100


def test_a_tiny_remembered_geometry_is_ignored(qtbot) -> None:
    from app.main_window import DEFAULT_SIZE, MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(120, 90)
    first.close()
    second = MainWindow()
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == DEFAULT_SIZE
